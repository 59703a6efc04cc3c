//! `ST_Area`, `ST_Length` and `ST_Perimeter` on a geography argument: square metres and metres
//! on the sphere, as seed 004 says (no projecting first), by `geoberg-geography`'s measures
//! (great-circle edges, the sphere of `EARTH_RADIUS_METERS`, checked against spherely).
//!
//! SedonaDB 0.5 registers these functions for planar geometry only (GEOS and `geo` kernels,
//! in the CRS's units), so a geography argument found no kernel. These kernels are appended to
//! the same functions, as `geography_kernels` does for the predicates, and apply only when the
//! argument is a geography; geometry keeps SedonaDB's planar kernels. Nulls give null, empty
//! values and parts of another dimension measure 0 (a point's area, a polygon's length), and a
//! value that is not WKB is an error naming its row.

use std::sync::Arc;

use arrow_schema::DataType;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ColumnarValue;
use geoberg_geography::{Geography, GeographyError};
use sedona_expr::scalar_udf::SedonaScalarKernel;
use sedona_schema::datatypes::SedonaType;

use crate::geography_kernels::{is_spherical, scalar_wkb};

/// One of the measures served on geography arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SphericalMeasure {
    /// `ST_Area(g)` in square metres.
    Area,
    /// `ST_Length(g)` in metres: lines only.
    Length,
    /// `ST_Perimeter(g)` in metres: polygon rings only.
    Perimeter,
}

/// The SQL functions that get a geography measure kernel, by SedonaDB's name.
pub(crate) const GEOGRAPHY_MEASURES: [(&str, SphericalMeasure); 3] = [
    ("st_area", SphericalMeasure::Area),
    ("st_length", SphericalMeasure::Length),
    ("st_perimeter", SphericalMeasure::Perimeter),
];

impl SphericalMeasure {
    fn sql_name(self) -> &'static str {
        match self {
            SphericalMeasure::Area => "ST_Area",
            SphericalMeasure::Length => "ST_Length",
            SphericalMeasure::Perimeter => "ST_Perimeter",
        }
    }

    fn of(self, g: &Geography) -> f64 {
        match self {
            SphericalMeasure::Area => g.area(),
            SphericalMeasure::Length => g.length(),
            SphericalMeasure::Perimeter => g.perimeter(),
        }
    }

    fn column(self, array: &dyn arrow_array::Array) -> Result<arrow_array::Float64Array> {
        use geoberg_geography as g;
        match self {
            SphericalMeasure::Area => g::area(array),
            SphericalMeasure::Length => g::length(array),
            SphericalMeasure::Perimeter => g::perimeter(array),
        }
        .map_err(|e| self.error(e))
    }

    fn error(self, e: GeographyError) -> DataFusionError {
        DataFusionError::Execution(format!("{} on geography: {e}", self.sql_name()))
    }
}

/// The kernel described in the module docs, for one measure.
#[derive(Debug)]
pub(crate) struct GeographyMeasureKernel {
    measure: SphericalMeasure,
}

impl GeographyMeasureKernel {
    pub(crate) fn new(measure: SphericalMeasure) -> Self {
        GeographyMeasureKernel { measure }
    }
}

impl SedonaScalarKernel for GeographyMeasureKernel {
    fn return_type(&self, args: &[SedonaType]) -> Result<Option<SedonaType>> {
        Ok(match args {
            [arg] if is_spherical(arg) => Some(SedonaType::Arrow(DataType::Float64)),
            _ => None,
        })
    }

    fn invoke_batch(
        &self,
        _arg_types: &[SedonaType],
        args: &[ColumnarValue],
    ) -> Result<ColumnarValue> {
        Ok(match args.first() {
            Some(ColumnarValue::Array(array)) => {
                ColumnarValue::Array(Arc::new(self.measure.column(array.as_ref())?))
            }
            Some(ColumnarValue::Scalar(scalar)) => {
                let value = match scalar_wkb(scalar)? {
                    None => None,
                    Some(wkb) => {
                        let g = Geography::from_wkb(wkb).map_err(|e| self.measure.error(e))?;
                        Some(self.measure.of(&g))
                    }
                };
                ColumnarValue::Scalar(ScalarValue::Float64(value))
            }
            None => {
                return Err(DataFusionError::Plan(format!(
                    "{} takes one geography argument",
                    self.measure.sql_name()
                )));
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sedona_schema::datatypes::{WKB_GEOGRAPHY, WKB_GEOMETRY};

    #[test]
    fn only_geography_arguments_match() {
        let k = GeographyMeasureKernel::new(SphericalMeasure::Area);
        assert!(k.return_type(&[WKB_GEOGRAPHY]).unwrap().is_some());
        assert!(k.return_type(&[WKB_GEOMETRY]).unwrap().is_none());
        assert!(
            k.return_type(&[WKB_GEOGRAPHY, WKB_GEOGRAPHY])
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn null_and_bad_constants() {
        let k = GeographyMeasureKernel::new(SphericalMeasure::Length);
        let null = k
            .invoke_batch(
                &[WKB_GEOGRAPHY],
                &[ColumnarValue::Scalar(ScalarValue::Binary(None))],
            )
            .unwrap();
        assert!(matches!(
            null,
            ColumnarValue::Scalar(ScalarValue::Float64(None))
        ));
        let bad = k
            .invoke_batch(
                &[WKB_GEOGRAPHY],
                &[ColumnarValue::Scalar(ScalarValue::Binary(Some(vec![1, 2])))],
            )
            .unwrap_err();
        assert!(bad.to_string().contains("ST_Length on geography"), "{bad}");
    }
}
