//! Geospatial column types: Iceberg v3 `geometry(C)` / `geography(C, A)` (spec "Primitive Types"
//! and Appendix C type strings) and the legacy geometry column with no declared CRS.

use std::fmt;

use crate::crs::Crs;

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
