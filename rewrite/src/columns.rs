//! Which geo columns a rewrite knows about: the one it clusters by, and which hold geography.

use serde::{Deserialize, Serialize};

/// The geo columns of a rewrite's inputs, as [`crate::plan_rewrite`] takes them: the column to
/// cluster by, and the columns that hold `geography` (edges are great-circle arcs).
///
/// A geography column clustered by Hilbert is keyed by the centre of each value's box on the
/// sphere (see [`crate::RowClass`] and the crate docs), and every geography column gets bounds
/// on the sphere in the output files ([`crate::OutputFile::bbox`] and
/// [`crate::OutputFile::geography_bboxes`]). A `&str` converts to a planar geometry column with
/// no geography, so `plan_rewrite(&inputs, "geom", ...)` keeps its meaning.
///
/// ```
/// use geoberg_rewrite::GeoColumns;
/// let c = GeoColumns::from("geom");
/// assert!(!c.clusters_geography());
/// let g = GeoColumns::new("geog").with_geography(["geog", "route"]);
/// assert!(g.clusters_geography());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeoColumns {
    /// The column whose values are keyed.
    pub cluster: String,
    /// Every column of the inputs that holds geography (the clustered one included when it does).
    pub geography: Vec<String>,
}

impl GeoColumns {
    /// Clusters by `column`, with no geography column.
    pub fn new(column: impl Into<String>) -> Self {
        GeoColumns {
            cluster: column.into(),
            geography: Vec::new(),
        }
    }

    /// The same columns, with `columns` marked as geography.
    pub fn with_geography(mut self, columns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        for c in columns {
            let c = c.into();
            if !self.geography.contains(&c) {
                self.geography.push(c);
            }
        }
        self
    }

    /// Whether the clustered column holds geography.
    pub fn clusters_geography(&self) -> bool {
        self.geography.contains(&self.cluster)
    }
}

impl From<&str> for GeoColumns {
    fn from(column: &str) -> Self {
        GeoColumns::new(column)
    }
}

impl From<&String> for GeoColumns {
    fn from(column: &String) -> Self {
        GeoColumns::new(column.as_str())
    }
}

impl From<String> for GeoColumns {
    fn from(column: String) -> Self {
        GeoColumns::new(column)
    }
}
