//! Exact refinement: does a row's geometry (not just its box) intersect the window? Planar with
//! `geo` for geometry columns, on the sphere with `geoberg-geography` for geography columns.

use arrow_array::cast::AsArray;
use arrow_array::{Array, BooleanArray};
use arrow_schema::DataType;
use geo::Intersects;
use geo_traits::to_geo::ToGeoGeometry;
use geoberg_geography::PreparedGeography;
use geoberg_geostats::BBox;

use crate::error::{Error, Result};

/// Decodes the WKB at `row` and tests it against the window rectangle (planar).
pub(crate) fn intersects(array: &dyn Array, row: usize, window: &BBox) -> Result<bool> {
    let bytes = match array.data_type() {
        DataType::Binary => array.as_binary::<i32>().value(row),
        DataType::LargeBinary => array.as_binary::<i64>().value(row),
        DataType::BinaryView => array.as_binary_view().value(row),
        other => {
            return Err(Error::InvalidData(format!(
                "geometry column has Arrow type {other}; expected binary WKB"
            )));
        }
    };
    let wkb = wkb::reader::read_wkb(bytes)
        .map_err(|e| Error::InvalidData(format!("row {row}: invalid WKB: {e}")))?;
    // `None` for empty points, which intersect nothing.
    let Some(geometry): Option<geo_types::Geometry<f64>> = wkb.try_to_geometry() else {
        return Ok(false);
    };
    let rect = geo_types::Rect::new(
        geo_types::coord! { x: window.min_x, y: window.min_y },
        geo_types::coord! { x: window.max_x, y: window.max_y },
    );
    Ok(geometry.intersects(&rect))
}

/// Which rows of a geography WKB column intersect the window on the sphere (great-circle
/// edges); null rows are false.
pub(crate) fn intersects_on_sphere(
    array: &dyn Array,
    window: &PreparedGeography,
) -> Result<BooleanArray> {
    let hits = geoberg_geography::intersects(array, window)?;
    Ok(match hits.nulls() {
        None => hits,
        Some(_) => hits.iter().map(|v| Some(v == Some(true))).collect(),
    })
}
