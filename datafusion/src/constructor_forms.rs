//! Argument forms of Sedona's constructors that SedonaDB 0.5 does not take, as seed 003 uses
//! them:
//! - `ST_Point(x, y)` over text, e.g. coordinates that arrived as JSON strings
//!   (`ST_Point(measure.location.lon, measure.location.lat)`): each text is parsed as a decimal
//!   number; text that is not a number is an error naming the row and the text (never a silent
//!   null), a null gives null. A number and a text mix too.
//! - `ST_GeomFromWKB(geom)` over a value that is already a geometry (a geoberg geometry column,
//!   where seed 001 and 002 write `ST_XMin(ST_GeomFromWKB(geometry))` for a binary column):
//!   the value itself.
//!
//! Both are kernels appended to SedonaDB's functions, matching only these argument types, so
//! every other form keeps SedonaDB's kernels.

use std::sync::Arc;

use arrow_array::Array;
use arrow_array::builder::BinaryBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_schema::DataType;
use datafusion::common::{ScalarValue, exec_err};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ColumnarValue;
use sedona_expr::scalar_udf::{ScalarKernelRef, SedonaScalarKernel};
use sedona_schema::datatypes::{SedonaType, WKB_GEOMETRY};
use sedona_schema::matchers::ArgMatcher;

/// `(SedonaDB's function, the kernel appended to it)`.
pub(crate) fn constructor_kernels() -> [(&'static str, ScalarKernelRef); 2] {
    [
        ("st_point", Arc::new(PointFromText)),
        ("st_geomfromwkb", Arc::new(GeometryUnchanged)),
    ]
}

fn is_text(t: &SedonaType) -> bool {
    ArgMatcher::is_string().match_type(t)
}

fn is_number(t: &SedonaType) -> bool {
    ArgMatcher::is_numeric().match_type(t)
}

/// `ST_Point(x, y)` with at least one text argument.
#[derive(Debug)]
struct PointFromText;

impl SedonaScalarKernel for PointFromText {
    fn return_type(&self, args: &[SedonaType]) -> Result<Option<SedonaType>> {
        Ok(match args {
            [x, y]
                if (is_text(x) || is_text(y))
                    && [x, y].iter().all(|t| is_text(t) || is_number(t)) =>
            {
                Some(WKB_GEOMETRY)
            }
            _ => None,
        })
    }

    fn invoke_batch(
        &self,
        _arg_types: &[SedonaType],
        args: &[ColumnarValue],
    ) -> Result<ColumnarValue> {
        let all_scalar = args.iter().all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let arrays = ColumnarValue::values_to_arrays(args)?;
        let [x, y] = &arrays[..] else {
            return exec_err!("ST_Point takes two coordinates: ST_Point(x, y)");
        };
        let (x, y) = (numbers(x, "x")?, numbers(y, "y")?);
        let (x, y) = (
            x.as_primitive::<Float64Type>(),
            y.as_primitive::<Float64Type>(),
        );
        let mut out = BinaryBuilder::new();
        for row in 0..x.len() {
            if x.is_null(row) || y.is_null(row) {
                out.append_null();
                continue;
            }
            let mut wkb = Vec::with_capacity(21);
            wkb.extend([1, 1, 0, 0, 0]);
            wkb.extend(x.value(row).to_le_bytes());
            wkb.extend(y.value(row).to_le_bytes());
            out.append_value(wkb);
        }
        let points: arrow_array::ArrayRef = Arc::new(out.finish());
        Ok(if all_scalar {
            ColumnarValue::Scalar(ScalarValue::try_from_array(&points, 0)?)
        } else {
            ColumnarValue::Array(points)
        })
    }
}

/// The coordinates as doubles: text parsed strictly (an unparsable text is an error).
fn numbers(array: &arrow_array::ArrayRef, axis: &str) -> Result<arrow_array::ArrayRef> {
    let strict = arrow::compute::CastOptions {
        safe: false,
        ..Default::default()
    };
    arrow::compute::cast_with_options(array, &DataType::Float64, &strict).map_err(|e| {
        DataFusionError::Execution(format!(
            "ST_Point: the {axis} coordinate is not a number ({e}); pass numbers or text such as \
             '13.4050'"
        ))
    })
}

/// `ST_GeomFromWKB(geom)` of a geometry: the geometry.
#[derive(Debug)]
struct GeometryUnchanged;

impl SedonaScalarKernel for GeometryUnchanged {
    fn return_type(&self, args: &[SedonaType]) -> Result<Option<SedonaType>> {
        let matcher = ArgMatcher::new(vec![ArgMatcher::is_geometry()], WKB_GEOMETRY);
        Ok(matcher.matches(args).then(|| args[0].clone()))
    }

    fn invoke_batch(
        &self,
        _arg_types: &[SedonaType],
        args: &[ColumnarValue],
    ) -> Result<ColumnarValue> {
        match args {
            [value] => Ok(value.clone()),
            _ => exec_err!("ST_GeomFromWKB takes one value"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::StringArray;

    #[test]
    fn text_coordinates_parse_or_fail_loudly() {
        let text = SedonaType::Arrow(DataType::Utf8);
        let number = SedonaType::Arrow(DataType::Float64);
        assert!(
            PointFromText
                .return_type(&[text.clone(), number.clone()])
                .unwrap()
                .is_some()
        );
        // Two numbers stay with SedonaDB's own kernel.
        assert!(
            PointFromText
                .return_type(&[number.clone(), number])
                .unwrap()
                .is_none()
        );
        let xs = ColumnarValue::Array(Arc::new(StringArray::from(vec![Some("13.405"), None])));
        let ys = ColumnarValue::Scalar(ScalarValue::Utf8(Some("52.52".into())));
        let ColumnarValue::Array(points) = PointFromText
            .invoke_batch(&[text.clone(), text.clone()], &[xs, ys])
            .unwrap()
        else {
            panic!("an array for an array argument")
        };
        let points = points.as_binary::<i32>();
        assert_eq!(&points.value(0)[5..13], &13.405f64.to_le_bytes());
        assert!(points.is_null(1));
        let bad = ColumnarValue::Scalar(ScalarValue::Utf8(Some("north".into())));
        let err = PointFromText
            .invoke_batch(&[text.clone(), text], &[bad.clone(), bad])
            .unwrap_err();
        assert!(
            err.to_string().contains("x coordinate is not a number"),
            "{err}"
        );
    }
}
