//! Geospatial column types: Iceberg v3 `geometry(C)` / `geography(C, A)` (spec "Primitive Types"
//! and Appendix C type strings) and the legacy geometry column with no declared CRS.

use std::fmt;
use std::str::FromStr;

use crate::crs::Crs;
use crate::error::CrsError;

/// How a geography column interpolates between two vertices (spec "Edge-Interpolation
/// Algorithm"). Only geography has one; geometry edges are always planar.
///
/// ```
/// use geoberg_crs::EdgeAlgorithm;
///
/// assert_eq!("Karney".parse::<EdgeAlgorithm>()?, EdgeAlgorithm::Karney);
/// assert_eq!(EdgeAlgorithm::default().to_string(), "spherical");
/// # Ok::<(), geoberg_crs::CrsError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EdgeAlgorithm {
    /// Great-circle arcs on a sphere (the spec's default).
    #[default]
    Spherical,
    /// Vincenty's geodesic on the ellipsoid.
    Vincenty,
    /// Thomas' approximation.
    Thomas,
    /// Andoyer-Lambert approximation.
    Andoyer,
    /// Karney's exact geodesic.
    Karney,
}

impl EdgeAlgorithm {
    /// Every algorithm, in spec order.
    pub const ALL: [EdgeAlgorithm; 5] = [
        EdgeAlgorithm::Spherical,
        EdgeAlgorithm::Vincenty,
        EdgeAlgorithm::Thomas,
        EdgeAlgorithm::Andoyer,
        EdgeAlgorithm::Karney,
    ];

    /// The lowercase name used in type strings.
    pub fn name(self) -> &'static str {
        match self {
            EdgeAlgorithm::Spherical => "spherical",
            EdgeAlgorithm::Vincenty => "vincenty",
            EdgeAlgorithm::Thomas => "thomas",
            EdgeAlgorithm::Andoyer => "andoyer",
            EdgeAlgorithm::Karney => "karney",
        }
    }
}

impl fmt::Display for EdgeAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EdgeAlgorithm {
    type Err = CrsError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let name = text.trim();
        EdgeAlgorithm::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| CrsError::InvalidType {
                input: text.to_owned(),
                reason: format!(
                    "unknown edge algorithm '{name}'; use spherical, vincenty, thomas, andoyer or karney"
                ),
            })
    }
}

/// The type of a column holding geometries, with its CRS if it declares one.
///
/// ```
/// use geoberg_crs::{ColumnType, Crs, EdgeAlgorithm};
///
/// let t = ColumnType::from_iceberg_type("geography(OGC:CRS84, karney)")?;
/// assert_eq!(t, ColumnType::Geography { crs: Crs::OgcCrs84, edges: EdgeAlgorithm::Karney });
/// assert_eq!(t.iceberg_type().as_deref(), Some("geography(OGC:CRS84, karney)"));
/// // Bare `geometry` in an Iceberg schema means the spec's default CRS, OGC:CRS84.
/// assert_eq!(ColumnType::from_iceberg_type("geometry")?, ColumnType::geometry(Crs::OgcCrs84));
/// // A legacy column without a CRS is binary in the Iceberg schema: no type string.
/// assert_eq!(ColumnType::GeometryWithoutCrs.iceberg_type(), None);
/// # Ok::<(), geoberg_crs::CrsError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ColumnType {
    /// `geometry(C)`: planar edges, every value in CRS `C`.
    Geometry {
        /// The declared CRS.
        crs: Crs,
    },
    /// A geometry column that declares no CRS: tables created before CRS declarations existed,
    /// or created from a function result. Stored as binary WKB; each value carries its own SRID
    /// and nothing is checked.
    GeometryWithoutCrs,
    /// `geography(C, A)`: coordinates on the sphere/ellipsoid, edges interpolated by `A`.
    Geography {
        /// The declared CRS (must be geographic).
        crs: Crs,
        /// How edges are interpolated.
        edges: EdgeAlgorithm,
    },
}

impl ColumnType {
    /// `geometry(crs)`.
    pub fn geometry(crs: Crs) -> Self {
        ColumnType::Geometry { crs }
    }

    /// `geography(crs, spherical)`.
    pub fn geography(crs: Crs) -> Self {
        ColumnType::Geography {
            crs,
            edges: EdgeAlgorithm::Spherical,
        }
    }

    /// The declared CRS, `None` for a column without one.
    pub fn crs(&self) -> Option<&Crs> {
        match self {
            ColumnType::Geometry { crs } | ColumnType::Geography { crs, .. } => Some(crs),
            ColumnType::GeometryWithoutCrs => None,
        }
    }

    /// `"geometry"` or `"geography"`, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            ColumnType::Geometry { .. } | ColumnType::GeometryWithoutCrs => "geometry",
            ColumnType::Geography { .. } => "geography",
        }
    }

    /// The canonical Iceberg type string (spec Appendix C), always with the CRS written out.
    /// `None` for a column without a declared CRS, which Iceberg stores as `binary`.
    pub fn iceberg_type(&self) -> Option<String> {
        match self {
            ColumnType::Geometry { crs } => Some(format!("geometry({crs})")),
            ColumnType::Geography { crs, edges } => Some(format!("geography({crs}, {edges})")),
            ColumnType::GeometryWithoutCrs => None,
        }
    }

    /// Parses an Iceberg type string as the writers in the wild emit it: any case, optional
    /// whitespace, the CRS and algorithm optional (defaults `OGC:CRS84` and `spherical`), and
    /// pyiceberg's single-quoted parameters.
    pub fn from_iceberg_type(input: &str) -> Result<Self, CrsError> {
        let invalid = |reason: String| CrsError::InvalidType {
            input: input.to_owned(),
            reason,
        };
        let text = input.trim();
        let (name, params) = match text.find('(') {
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err(invalid("the parameter list does not end with ')'".into()));
                };
                (text[..open].trim(), Some(inner))
            }
            None => (text, None),
        };
        let params: Vec<&str> = match params {
            None => Vec::new(),
            Some(inner) => inner.split(',').map(unquote).collect(),
        };
        if params.iter().any(|p| p.is_empty()) {
            return Err(invalid("a parameter is empty".into()));
        }
        let crs = |p: Option<&&str>| p.map_or(Ok(Crs::OgcCrs84), |p| p.parse::<Crs>());
        if name.eq_ignore_ascii_case("geometry") {
            if params.len() > 1 {
                return Err(invalid(format!(
                    "geometry takes one parameter (the CRS), found {}",
                    params.len()
                )));
            }
            Ok(ColumnType::Geometry {
                crs: crs(params.first())?,
            })
        } else if name.eq_ignore_ascii_case("geography") {
            if params.len() > 2 {
                return Err(invalid(format!(
                    "geography takes at most two parameters (CRS, algorithm), found {}",
                    params.len()
                )));
            }
            let edges = match params.get(1) {
                Some(a) => a.parse()?,
                None => EdgeAlgorithm::Spherical,
            };
            Ok(ColumnType::Geography {
                crs: crs(params.first())?,
                edges,
            })
        } else {
            Err(invalid(format!(
                "'{name}' is not a geospatial type (expected geometry or geography)"
            )))
        }
    }
}

fn unquote(param: &str) -> &str {
    let p = param.trim();
    p.strip_prefix('\'')
        .and_then(|q| q.strip_suffix('\''))
        .map_or(p, str::trim)
}

impl fmt::Display for ColumnType {
    /// The Iceberg type string, or `geometry (no declared CRS)` for the legacy kind.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.iceberg_type() {
            Some(t) => f.write_str(&t),
            None => f.write_str("geometry (no declared CRS)"),
        }
    }
}
