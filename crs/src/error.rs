//! The one error type of this crate. Every message says what was wrong, with the values, and
//! names every way out.

use thiserror::Error;

use crate::column_type::ColumnType;
use crate::crs::Crs;
use crate::extent::Extent;
use crate::format_version::FormatVersion;
use crate::value_srid::ValueSrid;

/// Everything that can go wrong in this crate. [`CrsError::code`] gives a stable identifier for
/// programs and tests; the message is for people and may be reworded.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum CrsError {
    /// A CRS string that is none of the accepted forms.
    #[error(
        "invalid CRS '{input}': {reason}. Write EPSG:<code>, SRID:<code>, OGC:CRS84, a bare integer SRID such as 4326, or projjson:<table-property>"
    )]
    InvalidCrs {
        /// The text as given.
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },

    /// An Iceberg geometry/geography type string that does not parse.
    #[error(
        "invalid geospatial type '{input}': {reason}. Write geometry(<crs>) or geography(<crs>, <algorithm>), e.g. geometry(srid:4326) or geography(OGC:CRS84, spherical)"
    )]
    InvalidType {
        /// The text as given.
        input: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A table `format-version` outside 1..=3.
    #[error(
        "unsupported table format-version '{value}': Iceberg defines format versions 1, 2 and 3. Set 'format-version' to 3 (or leave it out) for geometry columns with a declared CRS"
    )]
    InvalidFormatVersion {
        /// The value as given.
        value: String,
    },

    /// A column declares a CRS that geoberg columns cannot carry.
    #[error(
        "{kind} column '{column}' declares CRS {crs}{srid_note}, but a {kind} column may declare only {allowed}. \
         To keep data in another CRS: (1) reproject the values to EPSG:4326 or EPSG:3857 and declare geometry(4326) or geometry(3857); \
         (2) declare geometry(0), write every value with SRID 0 and keep track of the real CRS yourself; \
         or (3) keep a geometry column with no declared CRS in a table created at format-version 2 (each value then carries its own SRID)",
        srid_note = srid_note(.crs),
        allowed = allowed_srids(.kind)
    )]
    InvalidSridValue {
        /// The column name.
        column: String,
        /// `geometry` or `geography`.
        kind: &'static str,
        /// The declared CRS.
        crs: Crs,
    },

    /// A `CREATE TABLE` column definition says `geometry` with no CRS.
    #[error(
        "column '{column}' is declared as bare geometry, which does not declare a CRS: such a column checks no SRIDs and, in a format-version 3 table, \
         spatial filters on it read every data file. Declare the CRS, e.g. geometry(4326) for longitude/latitude, geometry(3857) for Web Mercator or geometry(0) for an unrecorded CRS"
    )]
    CrsNotDeclared {
        /// The column name.
        column: String,
    },

    /// A declared CRS in a table below format-version 3.
    #[error(
        "column '{column}' has type {column_type}, which needs table format-version 3, but the table is at format-version {format_version}. \
         Drop the 'format-version' property from the table properties (new tables default to 3) or set it to 3"
    )]
    CrsNeedsFormatV3 {
        /// The column name.
        column: String,
        /// The declared type.
        column_type: ColumnType,
        /// The table's format version.
        format_version: FormatVersion,
    },

    /// A value whose SRID differs from the column's.
    #[error(
        "cannot write a value with {value} into {kind} column '{column}' with CRS {column_crs}: the column stores one CRS for every value. \
         If the coordinates already are in {column_crs}, relabel the value (set its SRID to {target}; the coordinates stay unchanged). \
         If they are in another CRS, reproject (transform) them to {column_crs}{hint}. \
         Relabelling is not reprojecting: labelling metre coordinates as degrees (or degrees as metres) puts the data in the wrong place",
        target = relabel_target(.column_crs),
        hint = reprojection_hint(.value, .column_crs)
    )]
    SridMismatch {
        /// The column name.
        column: String,
        /// `geometry` or `geography`.
        kind: &'static str,
        /// The SRID the value carries.
        value: ValueSrid,
        /// The column's declared CRS.
        column_crs: Crs,
    },

    /// The two-argument `hilbert(geom, precision)` on a column that is not WGS84.
    #[error(
        "cannot cluster column '{column}' with the default Hilbert bounds: its CRS is {crs}, but hilbert({column}, precision) clusters over WGS84 longitude/latitude \
         [-180, 180] x [-90, 90], which do not cover this CRS's coordinates. Either pass explicit bounds, hilbert({column}, precision, minX, minY, maxX, maxY){example}, \
         or reproject the column to WGS84 (OGC:CRS84 / EPSG:4326) first"
    , example = explicit_bounds_example(.column, .crs))]
    DefaultBoundsNotWgs84 {
        /// The column name.
        column: String,
        /// The column's declared CRS.
        crs: Crs,
    },

    /// No known extent for a CRS.
    #[error(
        "no known extent for CRS {crs}: geoberg knows the extents of EPSG:4326 / OGC:CRS84 and EPSG:3857 only. Pass explicit bounds that cover your data, e.g. hilbert(geom, precision, minX, minY, maxX, maxY)"
    )]
    UnknownExtent {
        /// The CRS asked about.
        crs: Crs,
    },

    /// Bounds that are not a rectangle (NaN, infinite, or min above max).
    #[error(
        "invalid bounds {bounds}: {reason}. Give finite bounds with minX <= maxX and minY <= maxY"
    )]
    InvalidBounds {
        /// The bounds as given.
        bounds: Extent,
        /// What is wrong with them.
        reason: &'static str,
    },

    /// A Hilbert precision outside 1..=32 bits per axis.
    #[error(
        "Hilbert precision {precision} is out of range: use 1..=32 bits per axis (10 is enough to \
         cluster ~1000 files; 16 also sorts rows finely for row-group skipping)"
    )]
    InvalidPrecision {
        /// The precision as given.
        precision: u32,
    },

    /// Data that reaches outside the bounds it is clustered in.
    #[error(
        "the data bounding box {data} reaches outside the bounds {bounds}, so values outside would be clamped to the edge of the curve. \
         Widen the bounds to contain every value, e.g. hilbert(geom, precision, {}, {}, {}, {})",
        .suggested.min_x, .suggested.min_y, .suggested.max_x, .suggested.max_y
    )]
    BoundsDoNotCover {
        /// The bounds given.
        bounds: Extent,
        /// The bounding box of the data.
        data: Extent,
        /// The smallest bounds containing both.
        suggested: Extent,
    },

    /// A reprojection this crate does not implement.
    #[error(
        "cannot reproject from {from} to {to}: geoberg reprojects only between WGS84 longitude/latitude (EPSG:4326 / OGC:CRS84) and Web Mercator (EPSG:3857). \
         Reproject with PROJ (e.g. ST_Transform) instead{srid0}",
        srid0 = srid0_note(.from, .to)
    )]
    UnsupportedReprojection {
        /// The source CRS.
        from: Crs,
        /// The target CRS.
        to: Crs,
    },

    /// A latitude at or beyond a pole, where Web Mercator is infinite.
    #[error(
        "coordinate #{index} has latitude {latitude}, outside Web Mercator's domain (-90, 90): the poles map to infinity. \
         Drop or clip such values (EPSG:3857's area of use ends at latitude +-85.06), or keep them in EPSG:4326"
    )]
    LatitudeOutOfDomain {
        /// Position of the coordinate in its batch or geometry.
        index: usize,
        /// The latitude in degrees.
        latitude: f64,
    },

    /// A longitude outside [-180, 180].
    #[error(
        "coordinate #{index} has longitude {longitude}, outside [-180, 180]. geoberg does not wrap longitudes silently: \
         normalise them to [-180, 180] first if wrapping is what you mean, or check the axis order (x must be longitude, y latitude)"
    )]
    LongitudeOutOfDomain {
        /// Position of the coordinate in its batch or geometry.
        index: usize,
        /// The longitude in degrees.
        longitude: f64,
    },

    /// A Web Mercator x beyond the antimeridian.
    #[error(
        "coordinate #{index} has Web Mercator x {x}, outside [-20037508.342789244, 20037508.342789244] (longitude +-180). \
         geoberg does not wrap it silently: check that the values really are EPSG:3857 metres, or clip them to the extent"
    )]
    MercatorXOutOfDomain {
        /// Position of the coordinate in its batch or geometry.
        index: usize,
        /// The x coordinate in metres.
        x: f64,
    },

    /// NaN or infinite x or y.
    #[error(
        "coordinate #{index} is ({x}, {y}), which is not finite. Remove NaN and infinite coordinates before reprojecting (an empty WKB point, all NaN, is kept as is)"
    )]
    NonFiniteCoordinate {
        /// Position of the coordinate in its batch or geometry.
        index: usize,
        /// The x coordinate.
        x: f64,
        /// The y coordinate.
        y: f64,
    },

    /// x and y of different lengths.
    #[error(
        "x and y have different lengths ({x_len} and {y_len}): pass one x and one y per coordinate"
    )]
    LengthMismatch {
        /// Length of x.
        x_len: usize,
        /// Length of y.
        y_len: usize,
    },

    /// A WKB value that is cut short.
    #[error(
        "invalid WKB: at byte {offset} it needs {needed} more bytes for {what}, but only {available} remain. The value is truncated or its counts are wrong"
    )]
    WkbTruncated {
        /// Where reading stopped.
        offset: usize,
        /// What was being read.
        what: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Bytes left.
        available: usize,
    },

    /// A WKB byte-order marker other than 0 or 1.
    #[error(
        "invalid WKB: byte {offset} is the byte-order marker and must be 0 (big endian) or 1 (little endian), found {found}"
    )]
    WkbByteOrder {
        /// Where the marker is.
        offset: usize,
        /// The byte found.
        found: u8,
    },

    /// A WKB geometry type code that is not one of the seven OGC types in 2D/Z/M/ZM.
    #[error(
        "invalid WKB: geometry type code {code} at byte {offset} is not an OGC type 1..7 in ISO (+1000 Z, +2000 M, +3000 ZM) or EWKB (Z/M/SRID flag bits) form"
    )]
    WkbGeometryType {
        /// Where the type code is.
        offset: usize,
        /// The code found.
        code: u32,
    },

    /// A member of a multi geometry of the wrong type.
    #[error(
        "invalid WKB: the member at byte {offset} is a {found} inside a {container}, which may only hold {expected}s"
    )]
    WkbMemberType {
        /// Where the member starts.
        offset: usize,
        /// The containing type.
        container: &'static str,
        /// The allowed member type.
        expected: &'static str,
        /// The member type found.
        found: &'static str,
    },

    /// Collections nested deeper than we follow.
    #[error(
        "invalid WKB: geometry collections are nested more than {max_depth} deep at byte {offset}; flatten the collection"
    )]
    WkbTooDeep {
        /// Where the limit was hit.
        offset: usize,
        /// The deepest nesting accepted.
        max_depth: usize,
    },

    /// Bytes left over after the geometry.
    #[error(
        "invalid WKB: the geometry ends at byte {end} but the value is {len} bytes long; pass exactly one geometry per value"
    )]
    WkbTrailingBytes {
        /// Where the geometry ended.
        end: usize,
        /// Length of the value.
        len: usize,
    },

    /// An error in one row of a batch.
    #[error("row {row}: {source}")]
    AtRow {
        /// The row, counted from 0.
        row: usize,
        /// What went wrong in it.
        source: Box<CrsError>,
    },

    /// An EWKB SRID that contradicts the CRS we were asked to reproject from.
    #[error(
        "EWKB value says SRID {wkb_srid}, but it was to be reprojected from {from}. Reproject from the CRS the value carries, or relabel the value first if its SRID is wrong"
    )]
    WkbSridMismatch {
        /// The SRID in the EWKB header.
        wkb_srid: i32,
        /// The CRS the caller named.
        from: Crs,
    },
}

fn srid_note(crs: &Crs) -> String {
    crs.srid()
        .map_or_else(String::new, |srid| format!(" (SRID {srid})"))
}

fn allowed_srids(kind: &str) -> &'static str {
    if kind == "geography" {
        "SRID 4326"
    } else {
        "SRID 0, 3857 or 4326"
    }
}

fn relabel_target(column_crs: &Crs) -> String {
    column_crs
        .srid()
        .map_or_else(|| column_crs.to_string(), |srid| srid.to_string())
}

fn explicit_bounds_example(column: &str, crs: &Crs) -> String {
    match crate::extent::known_extent(crs) {
        Some(e) => format!(
            " (for {crs}: hilbert({column}, precision, {}, {}, {}, {}))",
            e.min_x, e.min_y, e.max_x, e.max_y
        ),
        None => String::new(),
    }
}

fn srid0_note(from: &Crs, to: &Crs) -> &'static str {
    if from.srid() == Some(0) || to.srid() == Some(0) {
        "; SRID 0 records no CRS, so label the values with their real SRID before reprojecting"
    } else {
        ""
    }
}

fn reprojection_hint(value: &ValueSrid, column_crs: &Crs) -> &'static str {
    match (*value, column_crs.srid()) {
        (ValueSrid::Srid(3857), Some(4326)) | (ValueSrid::Srid(4326), Some(3857)) => {
            " (geoberg can do this one: geoberg_crs::Reprojection)"
        }
        (ValueSrid::Srid(0), _) => "; SRID 0 records no CRS, so relabel with the real SRID first",
        _ => " (e.g. with ST_Transform / PROJ)",
    }
}

impl CrsError {
    /// A stable identifier of the error kind, for programs and tests (messages may be reworded).
    ///
    /// ```
    /// use geoberg_crs::{validate_declaration, ColumnType, Crs, FormatVersion};
    ///
    /// let err = validate_declaration("geom", &ColumnType::geometry(Crs::Epsg(32633)), FormatVersion::V3)
    ///     .unwrap_err();
    /// assert_eq!(err.code(), "ST_INVALID_SRID_VALUE");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            CrsError::InvalidCrs { .. } => "ST_INVALID_CRS",
            CrsError::InvalidType { .. } => "ST_INVALID_TYPE",
            CrsError::InvalidFormatVersion { .. } => "ST_INVALID_FORMAT_VERSION",
            CrsError::InvalidSridValue { .. } => "ST_INVALID_SRID_VALUE",
            CrsError::CrsNotDeclared { .. } => "ST_CRS_NOT_DECLARED",
            CrsError::CrsNeedsFormatV3 { .. } => "ST_CRS_NEEDS_FORMAT_V3",
            CrsError::SridMismatch { .. } => "ST_SRID_MISMATCH",
            CrsError::DefaultBoundsNotWgs84 { .. } => "ST_DEFAULT_BOUNDS_NOT_WGS84",
            CrsError::UnknownExtent { .. } => "ST_UNKNOWN_EXTENT",
            CrsError::InvalidBounds { .. } => "ST_INVALID_BOUNDS",
            CrsError::InvalidPrecision { .. } => "ST_INVALID_PRECISION",
            CrsError::BoundsDoNotCover { .. } => "ST_BOUNDS_DO_NOT_COVER",
            CrsError::UnsupportedReprojection { .. } => "ST_UNSUPPORTED_REPROJECTION",
            CrsError::LatitudeOutOfDomain { .. } => "ST_LATITUDE_OUT_OF_DOMAIN",
            CrsError::LongitudeOutOfDomain { .. } => "ST_LONGITUDE_OUT_OF_DOMAIN",
            CrsError::MercatorXOutOfDomain { .. } => "ST_MERCATOR_X_OUT_OF_DOMAIN",
            CrsError::NonFiniteCoordinate { .. } => "ST_NON_FINITE_COORDINATE",
            CrsError::LengthMismatch { .. } => "ST_LENGTH_MISMATCH",
            CrsError::WkbTruncated { .. } => "ST_WKB_TRUNCATED",
            CrsError::WkbByteOrder { .. } => "ST_WKB_BYTE_ORDER",
            CrsError::WkbGeometryType { .. } => "ST_WKB_GEOMETRY_TYPE",
            CrsError::WkbMemberType { .. } => "ST_WKB_MEMBER_TYPE",
            CrsError::WkbTooDeep { .. } => "ST_WKB_TOO_DEEP",
            CrsError::WkbTrailingBytes { .. } => "ST_WKB_TRAILING_BYTES",
            CrsError::WkbSridMismatch { .. } => "ST_WKB_SRID_MISMATCH",
            CrsError::AtRow { source, .. } => source.code(),
        }
    }
}
