//! Rule 1: which CRS a column definition in `CREATE TABLE` may declare.

use crate::column_type::ColumnType;
use crate::error::CrsError;
use crate::format_version::FormatVersion;

/// SRIDs a `geometry(<srid>)` column may declare.
pub const GEOMETRY_SRIDS: [i32; 3] = [0, 3857, 4326];
/// SRIDs a `geography(<srid>)` column may declare.
pub const GEOGRAPHY_SRIDS: [i32; 1] = [4326];

/// Checks a column definition of a `CREATE TABLE` in a table of `format_version`.
///
/// - `geometry` may declare SRID 0, 3857 or 4326 (any spelling: `OGC:CRS84` is 4326), `geography`
///   only 4326; anything else is `ST_INVALID_SRID_VALUE`, whose message lists the three ways to
///   keep data in another CRS.
/// - A column definition without a CRS is rejected (`ST_CRS_NOT_DECLARED`), at every format
///   version: such columns only arise from query results and tables made before CRS
///   declarations, never from a column definition.
/// - A declared CRS needs format-version 3 (`ST_CRS_NEEDS_FORMAT_V3`). The SRID is checked
///   first, since no format version makes an unsupported SRID valid.
///
/// ```
/// use geoberg_crs::{validate_declaration, ColumnType, Crs, FormatVersion};
///
/// validate_declaration("geom", &ColumnType::geometry(Crs::Srid(4326)), FormatVersion::V3)?;
/// validate_declaration("geom", &ColumnType::geometry(Crs::Srid(0)), FormatVersion::V3)?;
///
/// let utm = validate_declaration("geom", &ColumnType::geometry(Crs::Epsg(32633)), FormatVersion::V3);
/// let err = utm.unwrap_err();
/// assert_eq!(err.code(), "ST_INVALID_SRID_VALUE");
/// assert!(err.to_string().contains("geometry(0)"));
///
/// let v2 = validate_declaration("geom", &ColumnType::geometry(Crs::Srid(4326)), FormatVersion::V2);
/// assert_eq!(v2.unwrap_err().code(), "ST_CRS_NEEDS_FORMAT_V3");
///
/// let bare = validate_declaration("geom", &ColumnType::GeometryWithoutCrs, FormatVersion::V2);
/// assert_eq!(bare.unwrap_err().code(), "ST_CRS_NOT_DECLARED");
/// # Ok::<(), geoberg_crs::CrsError>(())
/// ```
pub fn validate_declaration(
    column: &str,
    column_type: &ColumnType,
    format_version: FormatVersion,
) -> Result<(), CrsError> {
    let (crs, allowed): (_, &[i32]) = match column_type {
        ColumnType::GeometryWithoutCrs => {
            return Err(CrsError::CrsNotDeclared {
                column: column.to_owned(),
            });
        }
        ColumnType::Geometry { crs } => (crs, &GEOMETRY_SRIDS),
        ColumnType::Geography { crs, .. } => (crs, &GEOGRAPHY_SRIDS),
    };
    if !crs.srid().is_some_and(|srid| allowed.contains(&srid)) {
        return Err(CrsError::InvalidSridValue {
            column: column.to_owned(),
            kind: column_type.kind(),
            crs: crs.clone(),
        });
    }
    if !format_version.supports_declared_crs() {
        return Err(CrsError::CrsNeedsFormatV3 {
            column: column.to_owned(),
            column_type: column_type.clone(),
            format_version,
        });
    }
    Ok(())
}
