//! `ST_SubDivide(geom, max_vertices)`: a geometry cut into parts of at most `max_vertices`
//! vertices each, as `Array<Geometry>` (Sedona's form, listed by seed 003; PostGIS's
//! `ST_Subdivide` returns the same parts as rows, and `unnest(ST_SubDivide(...))` gives those
//! rows here). SedonaDB 0.5 does not have it.
//!
//! The algorithm is PostGIS's: a value with few enough vertices is one part; a collection is
//! cut part by part; otherwise its box is halved across its longer side, each half clipped
//! with GEOS's rectangle clipping (`GEOSClipByRect`, GEOS as SedonaDB's own functions link it)
//! and cut again, at most 50 times deep. Points of a multipoint are split by coordinate, so
//! none is lost or doubled on a cut line. The polygon parts tile the polygon (their areas add up
//! to its area), and line parts add up to the line. Parts are 2D (Z and M dropped) and keep the
//! argument's type and CRS; empty and null values give an empty list and null.

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, ListBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ListArray};
use arrow_schema::DataType;
use datafusion::common::{ScalarValue, exec_err};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{ColumnarValue, ScalarUDF, Volatility};
use geos::{Geom, Geometry, GeometryTypes, WKBWriter};
use sedona_expr::scalar_udf::{SedonaScalarKernel, SedonaScalarUDF};
use sedona_schema::datatypes::SedonaType;
use sedona_schema::matchers::ArgMatcher;

use crate::geography_kernels::wkb_at;

/// The fewest vertices a part may be asked to have (PostGIS's limit: a box has five).
pub(crate) const MIN_SUBDIVIDE_VERTICES: i64 = 5;

/// How many times a value is halved at most (PostGIS's limit).
const MAX_DEPTH: usize = 50;

/// The SQL function `st_subdivide`.
pub(crate) fn subdivide_udf() -> ScalarUDF {
    ScalarUDF::new_from_impl(SedonaScalarUDF::new(
        "st_subdivide",
        vec![Arc::new(SubDivide)],
        Volatility::Immutable,
    ))
}

/// The kernel described in the module docs.
#[derive(Debug)]
struct SubDivide;

/// The parts' type: the argument's geometry type (its CRS kept) stored as Binary.
fn part_type(argument: &SedonaType) -> SedonaType {
    match argument {
        SedonaType::Wkb(edges, crs)
        | SedonaType::WkbLarge(edges, crs)
        | SedonaType::WkbView(edges, crs) => SedonaType::Wkb(*edges, crs.clone()),
        other => other.clone(),
    }
}

fn item_field(argument: &SedonaType) -> Result<arrow_schema::FieldRef> {
    Ok(Arc::new(
        part_type(argument).to_storage_field("item", true)?,
    ))
}

impl SedonaScalarKernel for SubDivide {
    fn return_type(&self, args: &[SedonaType]) -> Result<Option<SedonaType>> {
        let matcher = ArgMatcher::new(
            vec![ArgMatcher::is_geometry(), ArgMatcher::is_integer()],
            SedonaType::Arrow(DataType::Null),
        );
        if !matcher.matches(args) {
            return Ok(None);
        }
        let item = item_field(&args[0])?;
        Ok(Some(SedonaType::Arrow(DataType::List(item))))
    }

    fn invoke_batch_from_args(
        &self,
        _arg_types: &[SedonaType],
        args: &[ColumnarValue],
        return_type: &SedonaType,
        _num_rows: usize,
        _config_options: Option<&datafusion::config::ConfigOptions>,
    ) -> Result<ColumnarValue> {
        // The planned type, whose items carry the geometry type and CRS (the argument types
        // passed here are their storage types).
        let SedonaType::Arrow(DataType::List(item)) = return_type else {
            return exec_err!("ST_SubDivide: unexpected return type {return_type:?}");
        };
        let all_scalar = args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let [geoms, limits] = &arrays[..] else {
            return exec_err!(
                "ST_SubDivide takes a geometry and a vertex count: ST_SubDivide(geom, 256)"
            );
        };
        let limits = arrow::compute::cast(limits, &DataType::Int64)?;
        let parts = part_lists(
            geoms.as_ref(),
            limits.as_primitive::<Int64Type>(),
            item.clone(),
        )?;
        Ok(if all_scalar {
            // Built directly: `ScalarValue::try_from_array` rebuilds the list's item field and
            // drops its geometry type.
            ColumnarValue::Scalar(ScalarValue::List(Arc::new(parts.slice(0, 1))))
        } else {
            ColumnarValue::Array(Arc::new(parts))
        })
    }

    fn invoke_batch(&self, _: &[SedonaType], _: &[ColumnarValue]) -> Result<ColumnarValue> {
        exec_err!("ST_SubDivide is invoked with its return type")
    }
}

fn part_lists(
    geoms: &dyn Array,
    limits: &arrow_array::PrimitiveArray<Int64Type>,
    item: arrow_schema::FieldRef,
) -> Result<ListArray> {
    let mut out = ListBuilder::new(BinaryBuilder::new()).with_field(item);
    let mut writer = WKBWriter::new().map_err(geos_error)?;
    for row in 0..geoms.len() {
        let (Some(wkb), false) = (wkb_at(geoms, row)?, limits.is_null(row)) else {
            out.append_null();
            continue;
        };
        let limit = limits.value(row);
        if limit < MIN_SUBDIVIDE_VERTICES {
            return exec_err!(
                "ST_SubDivide needs at least {MIN_SUBDIVIDE_VERTICES} vertices per part, got \
                 {limit}; pass e.g. 256"
            );
        }
        let geometry = Geometry::new_from_wkb(wkb).map_err(|e| {
            DataFusionError::Execution(format!("ST_SubDivide, row {row}: not valid WKB ({e})"))
        })?;
        let mut parts = Vec::new();
        subdivide(&geometry, limit as usize, 0, &mut parts).map_err(|e| {
            DataFusionError::Execution(format!("ST_SubDivide, row {row}: GEOS failed: {e}"))
        })?;
        for part in &parts {
            out.values()
                .append_value(writer.write_wkb(part).map_err(geos_error)?);
        }
        out.append(true);
    }
    Ok(out.finish())
}

fn geos_error(e: geos::Error) -> DataFusionError {
    DataFusionError::Execution(format!("ST_SubDivide: GEOS failed: {e}"))
}

/// Appends the parts of `g` with at most `limit` vertices to `parts` (PostGIS's recursion).
fn subdivide(
    g: &Geometry,
    limit: usize,
    depth: usize,
    parts: &mut Vec<Geometry>,
) -> geos::GResult<()> {
    if g.is_empty()? {
        return Ok(());
    }
    let kind = g.geometry_type()?;
    if matches!(
        kind,
        GeometryTypes::MultiPolygon
            | GeometryTypes::MultiLineString
            | GeometryTypes::GeometryCollection
    ) {
        for i in 0..g.get_num_geometries()? {
            let part = Geom::clone(&g.get_geometry_n(i)?)?;
            subdivide(&part, limit, depth, parts)?;
        }
        return Ok(());
    }
    if g.get_num_coordinates()? <= limit || depth >= MAX_DEPTH {
        parts.push(Clone::clone(g));
        return Ok(());
    }
    let (min_x, min_y, max_x, max_y) = (
        g.get_x_min()?,
        g.get_y_min()?,
        g.get_x_max()?,
        g.get_y_max()?,
    );
    let (width, height) = (max_x - min_x, max_y - min_y);
    if width == 0.0 && height == 0.0 {
        parts.push(Clone::clone(g));
        return Ok(());
    }
    let halves = if width >= height {
        let mid = min_x + width / 2.0;
        [(min_x, min_y, mid, max_y), (mid, min_y, max_x, max_y)]
    } else {
        let mid = min_y + height / 2.0;
        [(min_x, min_y, max_x, mid), (min_x, mid, max_x, max_y)]
    };
    if kind == GeometryTypes::MultiPoint {
        // Clipping would keep a point on the cut in both halves (or neither): split by value.
        let split_x = width >= height;
        let mid = if split_x { halves[0].2 } else { halves[0].3 };
        let (mut low, mut high) = (Vec::new(), Vec::new());
        for i in 0..g.get_num_geometries()? {
            let p = Geom::clone(&g.get_geometry_n(i)?)?;
            let v = if split_x { p.get_x()? } else { p.get_y()? };
            if v < mid { low.push(p) } else { high.push(p) }
        }
        for side in [low, high] {
            if !side.is_empty() {
                subdivide(&Geometry::create_multipoint(side)?, limit, depth + 1, parts)?;
            }
        }
        return Ok(());
    }
    for (x0, y0, x1, y1) in halves {
        let clipped = g.clip_by_rect(x0, y0, x1, y1)?;
        subdivide(&clipped, limit, depth + 1, parts)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sedona_schema::datatypes::{WKB_GEOGRAPHY, WKB_GEOMETRY};

    fn parts_of(wkt: &str, limit: usize) -> Vec<Geometry> {
        let mut parts = Vec::new();
        subdivide(&Geometry::new_from_wkt(wkt).unwrap(), limit, 0, &mut parts).unwrap();
        parts
    }

    #[test]
    fn geometry_only_with_an_integer_limit() {
        let int = SedonaType::Arrow(DataType::Int64);
        assert!(
            SubDivide
                .return_type(&[WKB_GEOMETRY, int.clone()])
                .unwrap()
                .is_some()
        );
        assert!(
            SubDivide
                .return_type(&[WKB_GEOGRAPHY, int])
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_small_value_is_one_part_and_a_multipoint_loses_no_point() {
        assert_eq!(parts_of("POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))", 5).len(), 1);
        // Eleven points from x = 0 to 10: the first cut is x = 5, through a point.
        let points: Vec<String> = (0..=10).map(|i| format!("({i} 0)")).collect();
        let parts = parts_of(&format!("MULTIPOINT ({})", points.join(", ")), 5);
        let total: usize = parts.iter().map(|p| p.get_num_coordinates().unwrap()).sum();
        assert_eq!(total, 11);
        assert!(parts.iter().all(|p| p.get_num_coordinates().unwrap() <= 5));
    }
}
