//! The batch kernel of [`crate::geography_bbox_of_wkb`]: four bbox columns of a geography
//! column, one bounder reused over the whole array.

use arrow_array::{Array, Float64Array};

use crate::batch::{BBoxColumns, for_each_wkb};
use crate::error::GeostatsError;
use crate::spherical_bounds::SphericalBounder;
use crate::wkb_bbox::geography_bbox_with;

/// [`BBoxColumns`] of a `Binary`, `LargeBinary` or `BinaryView` column of geography WKB: each
/// value's box on the sphere, as [`crate::geography_bbox_of_wkb`] computes it (great-circle
/// edges, poles, `min_x > max_x` where a value wraps the antimeridian). Null where the value is
/// null or empty; `srid` is always `None`. Fails on the first value that is not valid WKB,
/// naming its row.
///
/// ```
/// use arrow_array::{Array, BinaryArray};
/// use geoberg_geostats::geography_bbox_columns;
/// // LINESTRING (170 0, -170 0): the short way, across the antimeridian.
/// let mut line = vec![1, 2, 0, 0, 0, 2, 0, 0, 0];
/// for v in [170.0f64, 0.0, -170.0, 0.0] {
///     line.extend(v.to_le_bytes());
/// }
/// let b = geography_bbox_columns(&BinaryArray::from(vec![Some(&line[..]), None])).unwrap();
/// assert_eq!((b.min_x.value(0), b.max_x.value(0)), (170.0, -170.0));
/// assert!(b.min_x.is_null(1));
/// ```
pub fn geography_bbox_columns(array: &dyn Array) -> Result<BBoxColumns, GeostatsError> {
    let n = array.len();
    let mut cols: [Vec<Option<f64>>; 4] = std::array::from_fn(|_| vec![None; n]);
    let mut bounder = SphericalBounder::new();
    for_each_wkb(array, |row, wkb| {
        let b = geography_bbox_with(&mut bounder, wkb).map_err(|e| e.at_row(row))?;
        if let Some(b) = b {
            cols[0][row] = Some(b.min_x);
            cols[1][row] = Some(b.min_y);
            cols[2][row] = Some(b.max_x);
            cols[3][row] = Some(b.max_y);
        }
        Ok(())
    })?;
    let [min_x, min_y, max_x, max_y] = cols.map(Float64Array::from);
    Ok(BBoxColumns {
        min_x,
        min_y,
        max_x,
        max_y,
        srid: None,
    })
}
