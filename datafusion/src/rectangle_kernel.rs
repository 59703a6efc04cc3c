//! A fast path for the most common spatial filter, a geometry column against a constant
//! axis-aligned rectangle (`ST_Intersects(geom, ST_MakeEnvelope(...))`, seed 004's
//! `POLYGON ((0 0, 0 2, 2 2, 2 0, 0 0))`): for a 2D point the answer is two coordinate
//! comparisons, where SedonaDB's kernels build a geometry for every row. Rows that are not 2D
//! points go to SedonaDB's own kernel, so results are the same; the rectangle is recognised
//! from the constant's coordinates alone (one ring of five vertices on the box's corners).
//!
//! Registered as an extra kernel of `st_intersects`, `st_contains`, `st_within`, `st_covers`
//! and `st_coveredby` that applies only when the rectangle argument is a constant; SedonaDB
//! tries newer kernels first and falls back to its own for everything else.

use std::sync::Arc;

use arrow_array::builder::BooleanBuilder;
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, UInt32Array};
use arrow_schema::DataType;
use datafusion::common::{ScalarValue, internal_err};
use datafusion::error::Result;
use datafusion::logical_expr::ColumnarValue;
use geo_traits::{CoordTrait, GeometryTrait, GeometryType, LineStringTrait, PolygonTrait};
use sedona_expr::scalar_udf::{ScalarKernelRef, SedonaScalarKernel};
use sedona_schema::datatypes::{Edges, SedonaType};
use sedona_schema::matchers::ArgMatcher;

/// How the rectangle must relate to the row geometry for the predicate to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Relation {
    /// They share a point (the closed rectangle holds the point).
    Intersects,
    /// The rectangle covers the geometry (the closed rectangle holds the point).
    Covers,
    /// The rectangle contains the geometry (its interior holds the point).
    Contains,
}

/// The functions the fast path serves: name, relation, and the argument that must be the
/// rectangle (`None`: either).
pub(crate) const RECTANGLE_FUNCTIONS: [(&str, Relation, Option<usize>); 5] = [
    ("st_intersects", Relation::Intersects, None),
    ("st_contains", Relation::Contains, Some(0)),
    ("st_within", Relation::Contains, Some(1)),
    ("st_covers", Relation::Covers, Some(0)),
    ("st_coveredby", Relation::Covers, Some(1)),
];

/// The kernel described in the module docs.
#[derive(Debug)]
pub(crate) struct RectanglePredicate {
    relation: Relation,
    rectangle_arg: Option<usize>,
    /// SedonaDB's kernels for the same function, for rows that are not 2D points.
    fallback: Vec<ScalarKernelRef>,
}

impl RectanglePredicate {
    pub(crate) fn new(
        relation: Relation,
        rectangle_arg: Option<usize>,
        fallback: Vec<ScalarKernelRef>,
    ) -> Self {
        RectanglePredicate {
            relation,
            rectangle_arg,
            fallback,
        }
    }

    /// Which argument is the constant rectangle, and the rectangle.
    fn rectangle(
        &self,
        args: &[SedonaType],
        scalars: &[Option<&ScalarValue>],
    ) -> Option<(usize, [f64; 4])> {
        if args.len() != 2 || scalars.len() != 2 {
            return None;
        }
        let planar = |t: &SedonaType| {
            matches!(
                t,
                SedonaType::Wkb(Edges::Planar, _) | SedonaType::WkbView(Edges::Planar, _)
            )
        };
        if !args.iter().all(planar) {
            return None;
        }
        let candidates: &[usize] = match self.rectangle_arg {
            Some(0) => &[0],
            Some(_) => &[1],
            None => &[1, 0],
        };
        candidates.iter().find_map(|&i| {
            let bytes = match scalars[i]? {
                ScalarValue::Binary(Some(b)) | ScalarValue::BinaryView(Some(b)) => b,
                _ => return None,
            };
            rectangle_of_wkb(bytes).map(|r| (i, r))
        })
    }

    fn fallback_kernel(
        &self,
        args: &[SedonaType],
        scalars: &[Option<&ScalarValue>],
    ) -> Result<&ScalarKernelRef> {
        for kernel in self.fallback.iter().rev() {
            if kernel
                .return_type_from_args_and_scalars(args, scalars)?
                .is_some()
            {
                return Ok(kernel);
            }
        }
        internal_err!("no SedonaDB kernel for the rows that are not points")
    }
}

impl SedonaScalarKernel for RectanglePredicate {
    fn return_type(&self, _args: &[SedonaType]) -> Result<Option<SedonaType>> {
        // Applies only with the rectangle known; see return_type_from_args_and_scalars.
        Ok(None)
    }

    fn return_type_from_args_and_scalars(
        &self,
        args: &[SedonaType],
        scalars: &[Option<&ScalarValue>],
    ) -> Result<Option<SedonaType>> {
        if self.rectangle(args, scalars).is_none() {
            return Ok(None);
        }
        // The same type and CRS check as SedonaDB's kernels.
        ArgMatcher::new(
            vec![ArgMatcher::is_geometry(), ArgMatcher::is_geometry()],
            SedonaType::Arrow(DataType::Boolean),
        )
        .match_args(args)
    }

    fn invoke_batch(
        &self,
        arg_types: &[SedonaType],
        args: &[ColumnarValue],
    ) -> Result<ColumnarValue> {
        let scalars: Vec<Option<&ScalarValue>> = args
            .iter()
            .map(|a| match a {
                ColumnarValue::Scalar(s) => Some(s),
                ColumnarValue::Array(_) => None,
            })
            .collect();
        let Some((rect_index, rect)) = self.rectangle(arg_types, &scalars) else {
            return internal_err!("rectangle kernel invoked without a constant rectangle");
        };
        let other = 1 - rect_index;
        let ColumnarValue::Array(values) = &args[other] else {
            // Both constant: nothing to gain.
            return self
                .fallback_kernel(arg_types, &scalars)?
                .invoke_batch(arg_types, args);
        };
        let mut out = BooleanBuilder::with_capacity(values.len());
        let mut others: Vec<u32> = Vec::new();
        let mut decide = |i: usize, value: Option<&[u8]>, out: &mut BooleanBuilder| match value {
            None => out.append_null(),
            Some(wkb) => match point_of_wkb(wkb) {
                Some((x, y)) => out.append_value(self.holds(&rect, x, y)),
                None => {
                    others.push(i as u32);
                    out.append_value(false);
                }
            },
        };
        match values.data_type() {
            DataType::Binary => {
                for (i, v) in values.as_binary::<i32>().iter().enumerate() {
                    decide(i, v, &mut out);
                }
            }
            DataType::BinaryView => {
                for (i, v) in values.as_binary_view().iter().enumerate() {
                    decide(i, v, &mut out);
                }
            }
            _ => {
                return self
                    .fallback_kernel(arg_types, &scalars)?
                    .invoke_batch(arg_types, args);
            }
        }
        let fast = out.finish();
        if others.is_empty() {
            return Ok(ColumnarValue::Array(Arc::new(fast)));
        }
        // The rows that are not 2D points, through SedonaDB's kernel, put back in place.
        let indices = UInt32Array::from(others);
        let subset = arrow::compute::take(values.as_ref(), &indices, None)?;
        let mut sub_args = args.to_vec();
        sub_args[other] = ColumnarValue::Array(subset);
        let slow = self
            .fallback_kernel(arg_types, &scalars)?
            .invoke_batch(arg_types, &sub_args)?
            .into_array(indices.len())?;
        let slow = slow.as_boolean();
        let mut merged: Vec<Option<bool>> = fast.iter().collect();
        for (k, &i) in indices.values().iter().enumerate() {
            merged[i as usize] = slow.is_valid(k).then(|| slow.value(k));
        }
        Ok(ColumnarValue::Array(
            Arc::new(BooleanArray::from(merged)) as ArrayRef
        ))
    }
}

impl RectanglePredicate {
    fn holds(&self, r: &[f64; 4], x: f64, y: f64) -> bool {
        match self.relation {
            Relation::Intersects | Relation::Covers => {
                r[0] <= x && x <= r[2] && r[1] <= y && y <= r[3]
            }
            Relation::Contains => r[0] < x && x < r[2] && r[1] < y && y < r[3],
        }
    }
}

/// `(x, y)` of a WKB 2D point (ISO, or EWKB with only the SRID flag); `None` for anything
/// else, including an empty point (NaN coordinates), which SedonaDB's kernel decides.
pub(crate) fn point_of_wkb(wkb: &[u8]) -> Option<(f64, f64)> {
    let (&order, rest) = wkb.split_first()?;
    let little = match order {
        1 => true,
        0 => false,
        _ => return None,
    };
    let u32_at = |b: &[u8]| -> Option<u32> {
        let b: [u8; 4] = b.get(..4)?.try_into().ok()?;
        Some(if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    };
    let f64_at = |b: &[u8]| -> Option<f64> {
        let b: [u8; 8] = b.get(..8)?.try_into().ok()?;
        Some(if little {
            f64::from_le_bytes(b)
        } else {
            f64::from_be_bytes(b)
        })
    };
    let coords = match u32_at(rest)? {
        1 if wkb.len() == 21 => &rest[4..],
        // EWKB point with an SRID and no Z or M.
        0x2000_0001 if wkb.len() == 25 => &rest[8..],
        _ => return None,
    };
    let (x, y) = (f64_at(coords)?, f64_at(&coords[8..])?);
    (!x.is_nan() && !y.is_nan()).then_some((x, y))
}

/// `[min_x, min_y, max_x, max_y]` of a WKB polygon that is exactly an axis-aligned rectangle
/// with a non-empty interior: one ring of five vertices, closed, each on a corner of its box
/// and each edge along an axis.
pub(crate) fn rectangle_of_wkb(wkb: &[u8]) -> Option<[f64; 4]> {
    let geometry = wkb::reader::read_wkb(wkb).ok()?;
    if geometry.dim() != geo_traits::Dimensions::Xy {
        return None;
    }
    let GeometryType::Polygon(polygon) = geometry.as_type() else {
        return None;
    };
    if polygon.num_interiors() != 0 {
        return None;
    }
    let ring = polygon.exterior()?;
    if ring.num_coords() != 5 {
        return None;
    }
    let points: Vec<(f64, f64)> = ring.coords().map(|c| (c.x(), c.y())).collect();
    if points[0] != points[4] || points.iter().any(|(x, y)| !x.is_finite() || !y.is_finite()) {
        return None;
    }
    let (mut lo, mut hi) = ((f64::MAX, f64::MAX), (f64::MIN, f64::MIN));
    for &(x, y) in &points {
        lo = (lo.0.min(x), lo.1.min(y));
        hi = (hi.0.max(x), hi.1.max(y));
    }
    if !(lo.0 < hi.0 && lo.1 < hi.1) {
        return None;
    }
    let on_corner = |&(x, y): &(f64, f64)| (x == lo.0 || x == hi.0) && (y == lo.1 || y == hi.1);
    let axis_edges = points
        .windows(2)
        .all(|w| (w[0].0 == w[1].0) != (w[0].1 == w[1].1));
    let mut corners: Vec<(u64, u64)> = points[..4]
        .iter()
        .map(|(x, y)| (x.to_bits(), y.to_bits()))
        .collect();
    corners.sort_unstable();
    corners.dedup();
    (points.iter().all(on_corner) && axis_edges && corners.len() == 4)
        .then_some([lo.0, lo.1, hi.0, hi.1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn polygon(ring: &[(f64, f64)]) -> Vec<u8> {
        let mut out = vec![1u8, 3, 0, 0, 0];
        out.extend(1u32.to_le_bytes());
        out.extend((ring.len() as u32).to_le_bytes());
        for (x, y) in ring {
            out.extend(x.to_le_bytes());
            out.extend(y.to_le_bytes());
        }
        out
    }

    #[test]
    fn rectangles_are_recognised_and_other_polygons_are_not() {
        let r = polygon(&[(0.0, 0.0), (0.0, 2.0), (2.0, 2.0), (2.0, 0.0), (0.0, 0.0)]);
        assert_eq!(rectangle_of_wkb(&r), Some([0.0, 0.0, 2.0, 2.0]));
        let ccw = polygon(&[(1.0, 1.0), (3.0, 1.0), (3.0, 5.0), (1.0, 5.0), (1.0, 1.0)]);
        assert_eq!(rectangle_of_wkb(&ccw), Some([1.0, 1.0, 3.0, 5.0]));
        for not in [
            // A triangle padded to five vertices.
            polygon(&[(0.0, 0.0), (2.0, 0.0), (0.0, 2.0), (0.0, 1.0), (0.0, 0.0)]),
            // A bow tie over the box's corners.
            polygon(&[(0.0, 0.0), (2.0, 2.0), (2.0, 0.0), (0.0, 2.0), (0.0, 0.0)]),
            // Degenerate.
            polygon(&[(0.0, 0.0), (0.0, 0.0), (2.0, 0.0), (2.0, 0.0), (0.0, 0.0)]),
            // Not closed.
            polygon(&[(0.0, 0.0), (0.0, 2.0), (2.0, 2.0), (2.0, 0.0), (0.0, 0.1)]),
            // Four vertices only.
            polygon(&[(0.0, 0.0), (0.0, 2.0), (2.0, 2.0), (0.0, 0.0)]),
        ] {
            assert_eq!(rectangle_of_wkb(&not), None, "{not:?}");
        }
        assert_eq!(rectangle_of_wkb(b"garbage"), None);
    }

    #[test]
    fn points_are_read_in_both_byte_orders() {
        let le = [
            &[1u8, 1, 0, 0, 0][..],
            &1.5f64.to_le_bytes(),
            &(-2.0f64).to_le_bytes(),
        ]
        .concat();
        assert_eq!(point_of_wkb(&le), Some((1.5, -2.0)));
        let be = [
            &[0u8, 0, 0, 0, 1][..],
            &1.5f64.to_be_bytes(),
            &(-2.0f64).to_be_bytes(),
        ]
        .concat();
        assert_eq!(point_of_wkb(&be), Some((1.5, -2.0)));
        let ewkb = [
            &[1u8, 1, 0, 0, 0x20][..],
            &4326u32.to_le_bytes(),
            &1.0f64.to_le_bytes(),
            &2.0f64.to_le_bytes(),
        ]
        .concat();
        assert_eq!(point_of_wkb(&ewkb), Some((1.0, 2.0)));
        let empty = [
            &[1u8, 1, 0, 0, 0][..],
            &f64::NAN.to_le_bytes(),
            &f64::NAN.to_le_bytes(),
        ]
        .concat();
        assert_eq!(point_of_wkb(&empty), None);
        let z = [&[1u8, 0xe9, 3, 0, 0][..], &[0u8; 24][..]].concat();
        assert_eq!(point_of_wkb(&z), None);
        assert_eq!(point_of_wkb(&le[..20]), None);
    }
}
