//! The crate's one error type.

use thiserror::Error;

/// Everything that can go wrong in this crate: undecodable WKB (with the byte offset), a bad
/// value in a batch (with the row), and malformed Iceberg bounds.
///
/// Messages name the problem, the offending values and what to do about it, because they end up
/// in front of whoever loaded the data.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum GeostatsError {
    /// The buffer ends before the geometry does.
    #[error(
        "WKB is truncated at byte {offset}: {needed} more bytes are needed but only {available} \
         remain; the value was cut short, re-export it from its source"
    )]
    Truncated {
        /// Byte offset of the field that could not be read.
        offset: usize,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left in the buffer.
        available: usize,
    },
    /// The byte-order marker is neither 0 nor 1.
    #[error(
        "WKB byte-order marker at byte {offset} is {value:#04x}, but must be 0 (big-endian) or \
         1 (little-endian); the column probably holds WKT, GeoJSON or hex text instead of WKB"
    )]
    InvalidByteOrder {
        /// Byte offset of the marker.
        offset: usize,
        /// The marker found.
        value: u8,
    },
    /// The geometry type code is not one of the seven OGC types in ISO or EWKB form.
    #[error(
        "WKB geometry type code {code} ({code:#010x}) at byte {offset} is not supported: \
         expected 1..=7 (Point..GeometryCollection), plus 1000/2000/3000 for Z/M/ZM or the EWKB \
         flags 0x80000000/0x40000000/0x20000000; curves and surfaces must be linearized first"
    )]
    UnknownGeometryType {
        /// Byte offset of the type code.
        offset: usize,
        /// The raw type code.
        code: u32,
    },
    /// A member of a multi-geometry has the wrong type.
    #[error(
        "WKB {parent} member at byte {offset} has type code {found}, expected {expected}; the \
         multi-geometry is malformed, rebuild it or store it as a GeometryCollection"
    )]
    UnexpectedMemberType {
        /// Byte offset of the member's header.
        offset: usize,
        /// Name of the containing type.
        parent: &'static str,
        /// Expected member type code (1..=7).
        expected: u32,
        /// Member type code found (1..=7).
        found: u32,
    },
    /// A member's dimensions (XY, XYZ, XYM, XYZM) differ from its parent's.
    #[error(
        "WKB member at byte {offset} is {found} inside a {expected} geometry; all parts of a \
         geometry must have the same dimensions, force them to one (e.g. ST_Force3D) before export"
    )]
    MixedDimensions {
        /// Byte offset of the member's header.
        offset: usize,
        /// Dimensions of the parent.
        expected: &'static str,
        /// Dimensions of the member.
        found: &'static str,
    },
    /// A nested geometry carries an EWKB SRID other than the outermost geometry's (or 0).
    #[error(
        "EWKB SRID {nested} on the nested geometry at byte {offset} differs from the outermost \
         geometry's {}; every part of one value must be in one CRS, re-export the value with \
         one SRID (ST_SetSRID on the whole geometry) or as ISO WKB",
        match outer { Some(s) => format!("SRID {s}"), None => "missing SRID".to_owned() }
    )]
    NestedSridMismatch {
        /// Byte offset of the member's header.
        offset: usize,
        /// The outermost geometry's SRID, `None` when it has none.
        outer: Option<i32>,
        /// The member's SRID.
        nested: i32,
    },
    /// A curve or surface type (ISO codes 8..=17), which Iceberg and Parquet WKB do not allow.
    #[error(
        "WKB geometry type {name} (code {code}) at byte {offset} is not supported: Iceberg and \
         Parquet geometry values hold only Point, LineString, Polygon, their Multi* forms and \
         GeometryCollection; linearize the value first (e.g. ST_CurveToLine)"
    )]
    CurveType {
        /// Byte offset of the type code.
        offset: usize,
        /// The raw type code.
        code: u32,
        /// The type's name, e.g. `CircularString`.
        name: &'static str,
    },
    /// Collections nest deeper than [`crate::MAX_NESTING_DEPTH`].
    #[error(
        "WKB nests collections deeper than {limit} levels at byte {offset}; real data never does, \
         so the value is corrupt or hostile"
    )]
    NestingTooDeep {
        /// Byte offset of the geometry that exceeded the limit.
        offset: usize,
        /// The nesting limit.
        limit: usize,
    },
    /// An element count promises more bytes than the buffer holds.
    #[error(
        "WKB count {count} at byte {offset} needs at least {needed} bytes but only {available} \
         remain; the count is corrupt or the value truncated"
    )]
    CountTooLarge {
        /// Byte offset of the count.
        offset: usize,
        /// The count read.
        count: u32,
        /// Minimum bytes the count implies.
        needed: u64,
        /// Bytes left after the count.
        available: usize,
    },
    /// Bytes remain after a complete geometry.
    #[error(
        "{trailing} trailing bytes after the WKB geometry that ends at byte {offset}; each value \
         must hold exactly one geometry, check that values were not concatenated"
    )]
    TrailingBytes {
        /// Offset where the geometry ended.
        offset: usize,
        /// Number of extra bytes.
        trailing: usize,
    },
    /// A value in a batch failed; wraps the value's error.
    #[error("row {row}: {source}")]
    Row {
        /// Row index in the array.
        row: usize,
        /// What was wrong with the value.
        source: Box<GeostatsError>,
    },
    /// The Arrow array is not one of the binary types that hold WKB.
    #[error(
        "geometry column has Arrow type {data_type}, expected Binary, LargeBinary or BinaryView \
         holding WKB; cast the column or decode it from WKT first"
    )]
    UnsupportedArray {
        /// The array's data type, formatted.
        data_type: String,
    },
    /// Arrays that must line up have different lengths.
    #[error(
        "column {column} has {found} rows but the geometry column has {expected}; pass columns \
         of the same batch"
    )]
    LengthMismatch {
        /// Name of the offending column.
        column: String,
        /// Rows expected.
        expected: usize,
        /// Rows found.
        found: usize,
    },
    /// A named column is missing from a record batch.
    #[error("column {column} not found in the batch; check the configured column names")]
    MissingColumn {
        /// The name looked up.
        column: String,
    },
    /// A named column has the wrong type.
    #[error("column {column} has Arrow type {data_type}, expected {expected}")]
    ColumnType {
        /// The column name.
        column: String,
        /// Its data type, formatted.
        data_type: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A serialized bound has a length no bound encoding has.
    #[error(
        "{what} is {len} bytes, expected {expected}; the bound was written by a different type \
         or is corrupt, drop the bound so the file is read instead of pruned"
    )]
    BoundLength {
        /// Which bound.
        what: &'static str,
        /// Its length.
        len: usize,
        /// Accepted lengths.
        expected: &'static str,
    },
    /// A bound coordinate that must be a number is NaN.
    #[error("{what} is NaN; Iceberg bounds never hold NaN, drop the bound so the file is read")]
    BoundNaN {
        /// Which coordinate.
        what: &'static str,
    },
    /// Lower bound above upper bound where the spec does not allow it.
    #[error("{what}: lower bound {lower} is greater than upper bound {upper}; {hint}")]
    BoundOrder {
        /// Which dimension.
        what: &'static str,
        /// The lower value.
        lower: f64,
        /// The upper value.
        upper: f64,
        /// How to fix it.
        hint: &'static str,
    },
}

impl GeostatsError {
    /// Attaches the row index of a batch value.
    pub(crate) fn at_row(self, row: usize) -> Self {
        GeostatsError::Row {
            row,
            source: Box::new(self),
        }
    }
}
