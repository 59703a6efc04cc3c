//! `ST_S2CellIds(geom, level)`: the ids of the S2 cells of `level` that cover each value, as
//! `Array<Int64>`, Sedona's function behind seed 000's S2 partitioning recipe
//! (`array_max(ST_S2CellIds(ST_Centroid(geom), 4))`). SedonaDB 0.5 does not have it.
//!
//! The cells are `geoberg-geography`'s ([`Geography::s2_cell_ids`], checked against S2): a
//! point's cell, or every cell a line or polygon intersects, its edges read as great-circle
//! arcs as S2 and Sedona read them. Ids are S2's 64-bit ids as signed integers, as Sedona
//! returns them (Java's `long`): cells of cube faces 4 and 5 are negative. Geometry in a CRS
//! that is not longitude/latitude is refused naming `ST_Transform`; a geometry without a CRS is
//! read as longitude/latitude. Nulls give null.

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, Field};
use datafusion::common::{ScalarValue, exec_err};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{ColumnarValue, ScalarUDF, Volatility};
use geoberg_geography::Geography;
use sedona_expr::scalar_udf::{SedonaScalarKernel, SedonaScalarUDF};
use sedona_schema::crs::lnglat;
use sedona_schema::datatypes::SedonaType;
use sedona_schema::matchers::ArgMatcher;

use crate::geography_kernels::wkb_at;

/// The most cells one value may give (a continent at level 16 would need tens of millions):
/// past it the call fails naming a lower level.
pub(crate) const MAX_S2_CELLS_PER_VALUE: usize = 1_000_000;

/// The SQL function `st_s2cellids`.
pub(crate) fn s2_cell_ids_udf() -> ScalarUDF {
    ScalarUDF::new_from_impl(SedonaScalarUDF::new(
        "st_s2cellids",
        vec![Arc::new(S2CellIds)],
        Volatility::Immutable,
    ))
}

/// The kernel described in the module docs.
#[derive(Debug)]
struct S2CellIds;

fn list_type() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Int64, true)))
}

/// Whether the value's CRS is longitude/latitude (or absent, which S2 reads as such).
fn is_lon_lat(t: &SedonaType) -> bool {
    match (t.crs(), lnglat()) {
        (None, _) => true,
        (Some(c), Some(ll)) => c.crs_equals(ll.as_ref()),
        (Some(_), None) => false,
    }
}

impl SedonaScalarKernel for S2CellIds {
    fn return_type(&self, args: &[SedonaType]) -> Result<Option<SedonaType>> {
        ArgMatcher::new(
            vec![
                ArgMatcher::is_geometry_or_geography(),
                ArgMatcher::is_integer(),
            ],
            SedonaType::Arrow(list_type()),
        )
        .match_args(args)
    }

    fn invoke_batch(
        &self,
        arg_types: &[SedonaType],
        args: &[ColumnarValue],
    ) -> Result<ColumnarValue> {
        if let Some(t) = arg_types.first()
            && !is_lon_lat(t)
        {
            return exec_err!(
                "ST_S2CellIds needs longitude/latitude coordinates, and the geometry's CRS is \
                 not: ST_S2CellIds(ST_Transform(geom, 'EPSG:4326'), level)"
            );
        }
        let all_scalar = args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let [geoms, levels] = &arrays[..] else {
            return exec_err!("ST_S2CellIds takes a geometry and a level: ST_S2CellIds(geom, 4)");
        };
        let levels = arrow::compute::cast(levels, &DataType::Int64)?;
        let cells = cell_lists(geoms.as_ref(), levels.as_primitive::<Int64Type>())?;
        Ok(if all_scalar {
            ColumnarValue::Scalar(ScalarValue::try_from_array(&cells, 0)?)
        } else {
            ColumnarValue::Array(cells)
        })
    }
}

fn cell_lists(
    geoms: &dyn Array,
    levels: &arrow_array::PrimitiveArray<Int64Type>,
) -> Result<ArrayRef> {
    let mut out = ListBuilder::new(Int64Builder::new());
    for row in 0..geoms.len() {
        let Some(wkb) = wkb_at(geoms, row)? else {
            out.append_null();
            continue;
        };
        if levels.is_null(row) {
            out.append_null();
            continue;
        }
        let ids = Geography::from_wkb(wkb)
            .and_then(|g| g.s2_cell_ids(levels.value(row), MAX_S2_CELLS_PER_VALUE))
            .map_err(|e| DataFusionError::Execution(format!("ST_S2CellIds, row {row}: {e}")))?;
        // S2's unsigned ids as Java's signed long, as Sedona returns them.
        out.values()
            .extend(ids.into_iter().map(|id| Some(id as i64)));
        out.append(true);
    }
    Ok(Arc::new(out.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::BinaryArray;
    use sedona_schema::datatypes::{WKB_GEOGRAPHY, WKB_GEOMETRY};

    fn point(x: f64, y: f64) -> Vec<u8> {
        let mut v = vec![1, 1, 0, 0, 0];
        v.extend(x.to_le_bytes());
        v.extend(y.to_le_bytes());
        v
    }

    #[test]
    fn matches_geometry_and_geography_with_an_integer_level() {
        for t in [WKB_GEOMETRY, WKB_GEOGRAPHY] {
            let out = S2CellIds
                .return_type(&[t, SedonaType::Arrow(DataType::Int32)])
                .unwrap();
            assert_eq!(out, Some(SedonaType::Arrow(list_type())));
        }
        let text = SedonaType::Arrow(DataType::Utf8);
        assert!(
            S2CellIds
                .return_type(&[WKB_GEOMETRY, text])
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn rows_nulls_and_a_bad_level() {
        let geoms: ArrayRef = Arc::new(BinaryArray::from(vec![
            Some(&point(151.208889, -33.870456)[..]),
            None,
        ]));
        let out = S2CellIds
            .invoke_batch(
                &[WKB_GEOMETRY, SedonaType::Arrow(DataType::Int64)],
                &[
                    ColumnarValue::Array(geoms.clone()),
                    ColumnarValue::Scalar(ScalarValue::Int64(Some(24))),
                ],
            )
            .unwrap();
        let ColumnarValue::Array(out) = out else {
            panic!("an array for an array argument")
        };
        let lists = out.as_list::<i32>();
        // S2's token 6b12ae3fc7a1b (s2sphere), as a signed id.
        let first = lists.value(0);
        assert_eq!(
            first.as_primitive::<Int64Type>().values().to_vec(),
            vec![0x6b12ae3fc7a1b000_u64 as i64]
        );
        assert!(lists.is_null(1));
        let err = S2CellIds
            .invoke_batch(
                &[WKB_GEOMETRY, SedonaType::Arrow(DataType::Int64)],
                &[
                    ColumnarValue::Array(geoms),
                    ColumnarValue::Scalar(ScalarValue::Int64(Some(31))),
                ],
            )
            .unwrap_err();
        assert!(err.to_string().contains("from 0 to 30, got 31"), "{err}");
    }
}
