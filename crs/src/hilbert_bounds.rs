//! Rule 4: the bounds of the two-argument `hilbert(geom, precision)`.

use crate::column_type::ColumnType;
use crate::error::CrsError;
use crate::extent::Extent;

/// The bounds `hilbert(column, precision)` clusters over when no bounds are given: WGS84
/// [-180, 180] x [-90, 90].
///
/// They fit only a column in WGS84. A column declaring any other CRS (3857, SRID 0, ...) fails
/// with `ST_DEFAULT_BOUNDS_NOT_WGS84`, naming the column, its CRS and both ways out: explicit
/// bounds `hilbert(geom, precision, minX, minY, maxX, maxY)`, or reprojecting to WGS84 first.
/// A column without a declared CRS has nothing to check and gets the WGS84 bounds, as before
/// CRS declarations existed.
///
/// ```
/// use geoberg_crs::{default_hilbert_bounds, ColumnType, Crs, Extent};
///
/// assert_eq!(default_hilbert_bounds("geom", &ColumnType::geometry(Crs::Epsg(4326)))?, Extent::WGS84);
/// let err = default_hilbert_bounds("geom", &ColumnType::geometry(Crs::Epsg(3857))).unwrap_err();
/// assert_eq!(err.code(), "ST_DEFAULT_BOUNDS_NOT_WGS84");
/// assert!(err.to_string().contains("minX, minY, maxX, maxY"));
/// # Ok::<(), geoberg_crs::CrsError>(())
/// ```
pub fn default_hilbert_bounds(column: &str, column_type: &ColumnType) -> Result<Extent, CrsError> {
    match column_type.crs() {
        Some(crs) if !crs.is_wgs84() => Err(CrsError::DefaultBoundsNotWgs84 {
            column: column.to_owned(),
            crs: crs.clone(),
        }),
        _ => Ok(Extent::WGS84),
    }
}
