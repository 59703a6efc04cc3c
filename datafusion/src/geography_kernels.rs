//! Spherical kernels for SedonaDB's spatial predicates on geography arguments, so that
//! `ST_Intersects(geog, ST_GeogFromText('POLYGON (...)'))` on a `geography` column means what
//! it means in S2-based engines: edges are great-circle arcs, distances are metres on the sphere.
//!
//! SedonaDB 0.5 has geography kernels only with its C++ `s2geography` feature, which is not
//! built here, so `ST_Intersects(geography, geography)` and friends had no kernel at all. These
//! kernels are `geoberg-geography`'s (checked against spherely, S2, in its oracle), registered
//! as extra kernels of `st_intersects`, `st_contains`, `st_within`, `st_covers`,
//! `st_coveredby`, `st_dwithin` (a third argument in metres) and `st_distance` (metres,
//! `Float64`). They apply when at least one geometry argument is a geography; planar
//! arguments on both sides go to SedonaDB's own kernels as before. Either side may be a
//! constant or a column; a column against a constant is the crate's batch kernel (the constant
//! prepared once, rows outside its bounds decided without a full parse).
//!
//! A *constant* geometry against a geography (`ST_MakeEnvelope`, `ST_GeomFromText`) is read as
//! a geography with the same coordinates, as the table crate reads a window on a geography
//! column (`Scan::with_window`, `table/src/geography_window.rs`): a polygon's edges become
//! great-circle arcs through its vertices, and an `ST_MakeEnvelope(min_x, min_y, max_x,
//! max_y)` is the polygon through its corners, running east from `min_x` to `max_x`, so that
//! `min_x > max_x` crosses the antimeridian (170 .. -170 is the 20 degrees around ±180). The
//! table crate splits an envelope 180 degrees wide or wider into pieces; one polygon through
//! its corners would mean the other, shorter way round, so such an envelope is refused here
//! with an error naming the fix. A geometry *column* against a geography is refused too (the
//! two models disagree on every edge): convert it with `ST_GeomToGeography` (`ST_ToGeography`).

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, Float64Builder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;
use datafusion::common::{ScalarValue, exec_err};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ColumnarValue;
use geo_traits::{CoordTrait, GeometryTrait, GeometryType, LineStringTrait, PolygonTrait};
use geoberg_geography::{Geography, GeographyError, PreparedGeography};
use sedona_expr::scalar_udf::SedonaScalarKernel;
use sedona_schema::datatypes::{Edges, SedonaType};
use sedona_schema::matchers::ArgMatcher;

/// One of the spatial functions served on geography arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SphericalFunction {
    /// `ST_Intersects(a, b)`: they share a point.
    Intersects,
    /// `ST_Contains(a, b)`: `b` lies in `a` and their interiors meet.
    Contains,
    /// `ST_Within(a, b)`: `ST_Contains(b, a)`.
    Within,
    /// `ST_Covers(a, b)`: every point of `b` lies in `a`.
    Covers,
    /// `ST_CoveredBy(a, b)`: `ST_Covers(b, a)`.
    CoveredBy,
    /// `ST_DWithin(a, b, metres)`: the great-circle distance is at most `metres`.
    DWithin,
    /// `ST_Distance(a, b)` in metres.
    Distance,
}

/// The SQL functions that get a geography kernel, by SedonaDB's name.
pub(crate) const GEOGRAPHY_FUNCTIONS: [(&str, SphericalFunction); 7] = [
    ("st_intersects", SphericalFunction::Intersects),
    ("st_contains", SphericalFunction::Contains),
    ("st_within", SphericalFunction::Within),
    ("st_covers", SphericalFunction::Covers),
    ("st_coveredby", SphericalFunction::CoveredBy),
    ("st_dwithin", SphericalFunction::DWithin),
    ("st_distance", SphericalFunction::Distance),
];

impl SphericalFunction {
    /// The name in messages.
    fn sql_name(self) -> &'static str {
        match self {
            SphericalFunction::Intersects => "ST_Intersects",
            SphericalFunction::Contains => "ST_Contains",
            SphericalFunction::Within => "ST_Within",
            SphericalFunction::Covers => "ST_Covers",
            SphericalFunction::CoveredBy => "ST_CoveredBy",
            SphericalFunction::DWithin => "ST_DWithin",
            SphericalFunction::Distance => "ST_Distance",
        }
    }

    /// The function `g` with `f(a, b) == g(b, a)`.
    fn swapped(self) -> SphericalFunction {
        match self {
            SphericalFunction::Contains => SphericalFunction::Within,
            SphericalFunction::Within => SphericalFunction::Contains,
            SphericalFunction::Covers => SphericalFunction::CoveredBy,
            SphericalFunction::CoveredBy => SphericalFunction::Covers,
            other => other,
        }
    }

    fn returns_distance(self) -> bool {
        self == SphericalFunction::Distance
    }

    /// One pair of values (`metres` only read by `DWithin`).
    fn pair(self, a: &Geography, b: &Geography, metres: f64) -> Value {
        match self {
            SphericalFunction::Intersects => Value::Bool(a.intersects(b)),
            SphericalFunction::Contains => Value::Bool(a.contains(b)),
            SphericalFunction::Within => Value::Bool(a.within(b)),
            SphericalFunction::Covers => Value::Bool(a.covers(b)),
            SphericalFunction::CoveredBy => Value::Bool(b.covers(a)),
            SphericalFunction::DWithin => Value::Bool(a.dwithin(b, metres)),
            SphericalFunction::Distance => Value::Float(a.distance(b)),
        }
    }

    /// A column against a prepared constant, through `geoberg-geography`'s batch kernels.
    fn column_kernel(
        self,
        column: &dyn Array,
        query: &PreparedGeography,
        metres: f64,
    ) -> std::result::Result<ArrayRef, GeographyError> {
        use geoberg_geography as g;
        Ok(match self {
            SphericalFunction::Intersects => Arc::new(g::intersects(column, query)?),
            SphericalFunction::Contains => Arc::new(g::contains(column, query)?),
            SphericalFunction::Within => Arc::new(g::within(column, query)?),
            SphericalFunction::Covers => Arc::new(g::covers(column, query)?),
            SphericalFunction::CoveredBy => Arc::new(g::covered_by(column, query)?),
            SphericalFunction::DWithin => Arc::new(g::dwithin(column, query, metres)?),
            SphericalFunction::Distance => Arc::new(g::distance(column, query)?),
        })
    }
}

/// One result value.
enum Value {
    Bool(bool),
    Float(f64),
}

/// The kernel described in the module docs, for one function.
#[derive(Debug)]
pub(crate) struct GeographyKernel {
    function: SphericalFunction,
}

impl GeographyKernel {
    pub(crate) fn new(function: SphericalFunction) -> Self {
        GeographyKernel { function }
    }

    fn error(&self, e: GeographyError) -> DataFusionError {
        DataFusionError::Execution(format!("{} on geography: {e}", self.function.sql_name()))
    }
}

/// Whether a SedonaDB type is a geography (WKB with spherical edges).
pub(crate) fn is_spherical(t: &SedonaType) -> bool {
    matches!(
        t,
        SedonaType::Wkb(Edges::Spherical, _)
            | SedonaType::WkbLarge(Edges::Spherical, _)
            | SedonaType::WkbView(Edges::Spherical, _)
    )
}

impl SedonaScalarKernel for GeographyKernel {
    fn return_type(&self, args: &[SedonaType]) -> Result<Option<SedonaType>> {
        // Only when a geography is involved: planar pairs stay with SedonaDB's kernels.
        if !args.iter().take(2).any(is_spherical) {
            return Ok(None);
        }
        let mut matchers = vec![
            ArgMatcher::is_geometry_or_geography(),
            ArgMatcher::is_geometry_or_geography(),
        ];
        if self.function == SphericalFunction::DWithin {
            matchers.push(ArgMatcher::is_numeric());
        }
        let out = if self.function.returns_distance() {
            DataType::Float64
        } else {
            DataType::Boolean
        };
        // Also checks that both arguments have the same CRS, as SedonaDB's kernels do.
        ArgMatcher::new(matchers, SedonaType::Arrow(out)).match_args(args)
    }

    fn invoke_batch(
        &self,
        arg_types: &[SedonaType],
        args: &[ColumnarValue],
    ) -> Result<ColumnarValue> {
        let rows = args
            .iter()
            .find_map(|a| match a {
                ColumnarValue::Array(a) => Some(a.len()),
                ColumnarValue::Scalar(_) => None,
            })
            .unwrap_or(1);
        let all_scalar = args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let a = self.operand(&arg_types[0], &args[0])?;
        let b = self.operand(&arg_types[1], &args[1])?;
        let metres = match args.get(2) {
            None => Metres::Constant(Some(0.0)),
            Some(d) => match d.cast_to(&DataType::Float64, None)? {
                ColumnarValue::Scalar(ScalarValue::Float64(v)) => Metres::Constant(v),
                ColumnarValue::Scalar(other) => {
                    return exec_err!("ST_DWithin distance {other} is not a number of metres");
                }
                ColumnarValue::Array(array) => Metres::Column(array),
            },
        };
        let out = match (&a, &b, &metres) {
            // A column against a constant: the batch kernels.
            (Operand::Column(column), Operand::Constant(Some(q)), Metres::Constant(Some(m))) => {
                self.function
                    .column_kernel(column.as_ref(), q, *m)
                    .map_err(|e| self.error(e))?
            }
            (Operand::Constant(Some(q)), Operand::Column(column), Metres::Constant(Some(m))) => {
                self.function
                    .swapped()
                    .column_kernel(column.as_ref(), q, *m)
                    .map_err(|e| self.error(e))?
            }
            _ => self.pairwise(&a, &b, &metres, rows)?,
        };
        Ok(if all_scalar {
            ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?)
        } else {
            ColumnarValue::Array(out)
        })
    }
}

/// A geometry argument: a constant, parsed once (`None`: null), or a column of WKB.
enum Operand {
    Constant(Option<PreparedGeography>),
    Column(ArrayRef),
}

/// The distance argument of `ST_DWithin`.
enum Metres {
    Constant(Option<f64>),
    Column(ArrayRef),
}

impl GeographyKernel {
    fn operand(&self, arg_type: &SedonaType, arg: &ColumnarValue) -> Result<Operand> {
        let planar = !is_spherical(arg_type);
        match arg {
            ColumnarValue::Array(array) => {
                if planar && !matches!(arg_type, SedonaType::Arrow(DataType::Null)) {
                    return exec_err!(
                        "{}(geography, geometry) with a geometry column: planar and spherical \
                         edges disagree, so there is no one answer; convert the column with \
                         ST_GeomToGeography(<column>) (also ST_ToGeography: same coordinates, \
                         great-circle edges) or compare two geometries",
                        self.function.sql_name()
                    );
                }
                Ok(Operand::Column(Arc::clone(array)))
            }
            ColumnarValue::Scalar(scalar) => {
                let Some(wkb) = scalar_wkb(scalar)? else {
                    return Ok(Operand::Constant(None));
                };
                if planar {
                    check_envelope_width(self.function, wkb)?;
                }
                let query = PreparedGeography::from_wkb(wkb).map_err(|e| self.error(e))?;
                Ok(Operand::Constant(Some(query)))
            }
        }
    }

    /// The value of `operand` at `row` (a constant's for every row).
    fn value_at<'a>(&self, operand: &'a Operand, row: usize) -> Result<Option<Cow<'a, Geography>>> {
        match operand {
            Operand::Constant(c) => Ok(c.as_ref().map(|p| Cow::Borrowed(p.geography()))),
            Operand::Column(column) => match wkb_at(column.as_ref(), row)? {
                None => Ok(None),
                Some(wkb) => Geography::from_wkb(wkb)
                    .map(|g| Some(Cow::Owned(g)))
                    .map_err(|e| self.error(at_row(e, row))),
            },
        }
    }

    /// Row by row, for two columns, a column of distances, or two constants.
    fn pairwise(&self, a: &Operand, b: &Operand, metres: &Metres, rows: usize) -> Result<ArrayRef> {
        let metres_at = |row: usize| -> Result<Option<f64>> {
            let m = match metres {
                Metres::Constant(m) => *m,
                Metres::Column(column) => {
                    let c = column.as_primitive::<arrow_array::types::Float64Type>();
                    c.is_valid(row).then(|| c.value(row))
                }
            };
            match m {
                Some(d) if !(d.is_finite() && d >= 0.0) => {
                    Err(self.error(at_row(GeographyError::InvalidDistance { distance: d }, row)))
                }
                other => Ok(other),
            }
        };
        let out_type = if self.function.returns_distance() {
            DataType::Float64
        } else {
            DataType::Boolean
        };
        let null_constant = |o: &Operand| matches!(o, Operand::Constant(None));
        if null_constant(a) || null_constant(b) || matches!(metres, Metres::Constant(None)) {
            return Ok(arrow_array::new_null_array(&out_type, rows));
        }
        let mut bools = BooleanBuilder::with_capacity(rows);
        let mut floats = Float64Builder::with_capacity(rows);
        for row in 0..rows {
            let (ga, gb, m) = (
                self.value_at(a, row)?,
                self.value_at(b, row)?,
                metres_at(row)?,
            );
            match (ga, gb, m) {
                (Some(ga), Some(gb), Some(m)) => match self.function.pair(&ga, &gb, m) {
                    Value::Bool(v) => bools.append_value(v),
                    Value::Float(v) => floats.append_value(v),
                },
                _ if self.function.returns_distance() => floats.append_null(),
                _ => bools.append_null(),
            }
        }
        Ok(if self.function.returns_distance() {
            Arc::new(floats.finish())
        } else {
            Arc::new(bools.finish())
        })
    }
}

/// The error of one row, with its row, as the batch kernels report it.
fn at_row(error: GeographyError, row: usize) -> GeographyError {
    GeographyError::Row {
        row,
        source: Box::new(error),
    }
}

/// The WKB of a constant geometry argument; `None` for a null.
pub(crate) fn scalar_wkb(scalar: &ScalarValue) -> Result<Option<&[u8]>> {
    match scalar {
        ScalarValue::Binary(v) | ScalarValue::LargeBinary(v) | ScalarValue::BinaryView(v) => {
            Ok(v.as_deref())
        }
        ScalarValue::Null => Ok(None),
        other => exec_err!(
            "a geography argument must be WKB (Binary), got {}",
            other.data_type()
        ),
    }
}

/// The WKB of one row of a column; `None` for a null.
pub(crate) fn wkb_at(array: &dyn Array, row: usize) -> Result<Option<&[u8]>> {
    if array.is_null(row) {
        return Ok(None);
    }
    Ok(Some(match array.data_type() {
        DataType::Binary => array.as_binary::<i32>().value(row),
        DataType::LargeBinary => array.as_binary::<i64>().value(row),
        DataType::BinaryView => array.as_binary_view().value(row),
        DataType::Null => return Ok(None),
        other => {
            return exec_err!("a geography column must hold WKB (Binary), got Arrow type {other}");
        }
    }))
}

/// Refuses a constant `ST_MakeEnvelope` 180 degrees of longitude wide or wider against a
/// geography: the table crate reads it as the box running east from `min_x` to `max_x` (in
/// pieces), the one polygon through its corners as the other way round. The envelope is
/// recognised by the ring `ST_MakeEnvelope` writes: `(min_x min_y, min_x max_y, max_x max_y,
/// max_x min_y, min_x min_y)`.
pub(crate) fn check_envelope_width(function: SphericalFunction, wkb: &[u8]) -> Result<()> {
    let Some([min_x, min_y, max_x, max_y]) = envelope_corners(wkb) else {
        return Ok(());
    };
    let eastward = if min_x <= max_x {
        max_x - min_x
    } else {
        max_x - min_x + 360.0
    };
    if eastward >= 180.0 {
        return exec_err!(
            "{}(geography, ST_MakeEnvelope({min_x}, {min_y}, {max_x}, {max_y})): on a geography \
             the envelope is the box running east from x {min_x} to x {max_x}, {eastward} \
             degrees wide, and an envelope 180 degrees wide or wider is not one polygon with \
             great-circle edges; use envelopes narrower than 180 degrees (OR them together), or \
             write the region with ST_GeogFromText",
            function.sql_name()
        );
    }
    Ok(())
}

/// `[min_x, min_y, max_x, max_y]` of a polygon written as `ST_MakeEnvelope` writes one.
fn envelope_corners(wkb: &[u8]) -> Option<[f64; 4]> {
    let geometry = wkb::reader::read_wkb(wkb).ok()?;
    let GeometryType::Polygon(polygon) = geometry.as_type() else {
        return None;
    };
    if polygon.num_interiors() != 0 {
        return None;
    }
    let ring = polygon.exterior()?;
    let p: Vec<(f64, f64)> = ring.coords().map(|c| (c.x(), c.y())).collect();
    let [a, b, c, d, e] = p.as_slice() else {
        return None;
    };
    let shape = a.0 == b.0 && b.1 == c.1 && c.0 == d.0 && d.1 == a.1 && a == e;
    (shape && a.1 < b.1 && a.0 != c.0).then_some([a.0, a.1, c.0, c.1])
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

    fn envelope(min_x: f64, min_y: f64, max_x: f64, max_y: f64) -> Vec<u8> {
        polygon(&[
            (min_x, min_y),
            (min_x, max_y),
            (max_x, max_y),
            (max_x, min_y),
            (min_x, min_y),
        ])
    }

    #[test]
    fn envelopes_are_recognised_in_make_envelope_order() {
        assert_eq!(
            envelope_corners(&envelope(170.0, -10.0, -170.0, 10.0)),
            Some([170.0, -10.0, -170.0, 10.0])
        );
        // Counter-clockwise from the lower left is not ST_MakeEnvelope's order.
        let ccw = polygon(&[(0.0, 0.0), (2.0, 0.0), (2.0, 2.0), (0.0, 2.0), (0.0, 0.0)]);
        assert_eq!(envelope_corners(&ccw), None);
    }

    #[test]
    fn wide_envelopes_are_refused_and_narrow_ones_pass() {
        let f = SphericalFunction::Intersects;
        assert!(check_envelope_width(f, &envelope(170.0, -10.0, -170.0, 10.0)).is_ok());
        assert!(check_envelope_width(f, &envelope(-10.0, -10.0, 10.0, 10.0)).is_ok());
        let wide = check_envelope_width(f, &envelope(-100.0, 0.0, 100.0, 10.0)).unwrap_err();
        assert!(wide.to_string().contains("200 degrees wide"), "{wide}");
        // 10 .. -10 runs east the long way round: 340 degrees.
        let long = check_envelope_width(f, &envelope(10.0, 0.0, -10.0, 10.0)).unwrap_err();
        assert!(long.to_string().contains("340 degrees wide"), "{long}");
    }

    #[test]
    fn swapping_arguments_swaps_the_relation() {
        for (_, f) in GEOGRAPHY_FUNCTIONS {
            assert_eq!(f.swapped().swapped(), f);
        }
        assert_eq!(
            SphericalFunction::Contains.swapped(),
            SphericalFunction::Within
        );
        assert_eq!(
            SphericalFunction::Covers.swapped(),
            SphericalFunction::CoveredBy
        );
    }
}
