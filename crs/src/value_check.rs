//! Rule 2: which value SRIDs a column accepts on write.

use crate::column_type::ColumnType;
use crate::error::CrsError;
use crate::value_srid::ValueSrid;

/// Checks the SRID of one value written into `column`.
///
/// - A geometry column with a declared CRS accepts exactly its own SRID: SRID 0 into a 4326
///   column is rejected, and so is a value with no SRID.
/// - A geography column accepts its own SRID and `Unset` (the value is then stored under the
///   column CRS); any other SRID is rejected.
/// - A column without a declared CRS accepts everything and checks nothing.
///
/// The `ST_SRID_MISMATCH` message names both SRIDs and both fixes: relabel (set the SRID, keep
/// the coordinates) when the coordinates already are in the column's CRS, reproject when not.
///
/// ```
/// use geoberg_crs::{check_value_srid, ColumnType, Crs, ValueSrid};
///
/// let col = ColumnType::geometry(Crs::Srid(4326));
/// check_value_srid("geom", &col, ValueSrid::Srid(4326))?;
/// let err = check_value_srid("geom", &col, ValueSrid::Srid(0)).unwrap_err();
/// assert_eq!(err.code(), "ST_SRID_MISMATCH");
/// assert!(err.to_string().contains("relabel"));
/// assert!(err.to_string().contains("reproject"));
///
/// let geog = ColumnType::geography(Crs::OgcCrs84);
/// check_value_srid("geog", &geog, ValueSrid::Unset)?;
/// check_value_srid("legacy", &ColumnType::GeometryWithoutCrs, ValueSrid::Srid(32633))?;
/// # Ok::<(), geoberg_crs::CrsError>(())
/// ```
pub fn check_value_srid(
    column: &str,
    column_type: &ColumnType,
    value: ValueSrid,
) -> Result<(), CrsError> {
    let (crs, accepts_unset) = match column_type {
        ColumnType::GeometryWithoutCrs => return Ok(()),
        ColumnType::Geometry { crs } => (crs, false),
        ColumnType::Geography { crs, .. } => (crs, true),
    };
    let accepted = match value {
        ValueSrid::Unset => accepts_unset,
        ValueSrid::Srid(srid) => crs.srid() == Some(srid),
    };
    if accepted {
        Ok(())
    } else {
        Err(CrsError::SridMismatch {
            column: column.to_owned(),
            kind: column_type.kind(),
            value,
            column_crs: crs.clone(),
        })
    }
}
