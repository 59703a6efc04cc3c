//! The null / empty / point policy, and the audit that checks a table still follows it.
//!
//! Policy: a null geometry has a null bbox; an empty geometry has a null bbox too, never zeros
//! (zeros put the row at the origin, off the coast of West Africa, where every query covering it
//! returns the row); a point has a degenerate box; a valid box has `min <= max` (non-strict, so
//! points pass). [`crate::bbox_columns`] produces exactly this; `audit` counts the rows of
//! materialized bbox columns that do not.

use arrow_array::{Array, Float64Array, RecordBatch};

use crate::batch::bbox_columns;
use crate::bbox::BBox;
use crate::bbox_column_bounds::BBoxColumnNames;
use crate::error::GeostatsError;
use crate::wkb_bbox::bbox_of_wkb;

/// Counts of policy violations in one batch. A row may count in several fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AuditReport {
    /// Rows audited.
    pub rows: usize,
    /// Geometry has a box but some bbox column is null: the row escapes every spatial filter.
    pub missing_bbox: usize,
    /// bbox is all zeros while the geometry is not exactly the point (0, 0) (including empty and
    /// null geometries): the row shows up off West Africa.
    pub zero_bbox_off_origin: usize,
    /// `min_x > max_x` or `min_y > max_y`.
    pub inverted_bbox: usize,
    /// bbox present (all four non-null) but different from the geometry's box, or present for a
    /// null or empty geometry.
    pub mismatched_bbox: usize,
    /// Geometry values that are not valid WKB (their bbox cannot be checked).
    pub invalid_geometry: usize,
}

impl AuditReport {
    /// No violation found.
    pub fn is_clean(&self) -> bool {
        self.missing_bbox == 0
            && self.zero_bbox_off_origin == 0
            && self.inverted_bbox == 0
            && self.mismatched_bbox == 0
            && self.invalid_geometry == 0
    }

    /// Adds the counts of another batch.
    pub fn merge(&mut self, o: &AuditReport) {
        self.rows += o.rows;
        self.missing_bbox += o.missing_bbox;
        self.zero_bbox_off_origin += o.zero_bbox_off_origin;
        self.inverted_bbox += o.inverted_bbox;
        self.mismatched_bbox += o.mismatched_bbox;
        self.invalid_geometry += o.invalid_geometry;
    }
}

/// Audits materialized bbox columns (`[min_x, min_y, max_x, max_y]`) against a WKB geometry
/// column of the same batch.
///
/// ```
/// use arrow_array::{BinaryArray, Float64Array};
/// use geoberg_geostats::audit;
/// let mut point = vec![1, 1, 0, 0, 0];
/// point.extend(3f64.to_le_bytes());
/// point.extend(4f64.to_le_bytes());
/// let geom = BinaryArray::from(vec![Some(&point[..]), Some(&point[..])]);
/// let min_x = Float64Array::from(vec![Some(3.0), Some(0.0)]);
/// let min_y = Float64Array::from(vec![Some(4.0), Some(0.0)]);
/// let max_x = Float64Array::from(vec![Some(3.0), Some(0.0)]);
/// let max_y = Float64Array::from(vec![Some(4.0), Some(0.0)]);
/// let report = audit(&geom, [&min_x, &min_y, &max_x, &max_y]).unwrap();
/// assert_eq!(report.zero_bbox_off_origin, 1);
/// assert_eq!(report.mismatched_bbox, 1);
/// ```
pub fn audit(geometry: &dyn Array, bbox: [&Float64Array; 4]) -> Result<AuditReport, GeostatsError> {
    let rows = geometry.len();
    for (column, c) in ["min_x", "min_y", "max_x", "max_y"].into_iter().zip(bbox) {
        if c.len() != rows {
            return Err(GeostatsError::LengthMismatch {
                column: column.into(),
                expected: rows,
                found: c.len(),
            });
        }
    }
    let mut report = AuditReport {
        rows,
        ..AuditReport::default()
    };
    // Fast path: the whole column decodes; otherwise decode row by row to count bad values.
    let expected: Vec<Result<Option<BBox>, ()>> = match bbox_columns(geometry) {
        Ok(cols) => (0..rows)
            .map(|i| {
                Ok(cols.min_x.is_valid(i).then(|| {
                    BBox::new(
                        cols.min_x.value(i),
                        cols.min_y.value(i),
                        cols.max_x.value(i),
                        cols.max_y.value(i),
                    )
                }))
            })
            .collect(),
        Err(GeostatsError::UnsupportedArray { data_type }) => {
            return Err(GeostatsError::UnsupportedArray { data_type });
        }
        Err(_) => {
            let mut out = vec![Ok(None); rows];
            crate::batch::for_each_wkb(geometry, |row, wkb| {
                out[row] = bbox_of_wkb(wkb).map_err(|_| ());
                Ok(())
            })?;
            out
        }
    };
    let [min_x, min_y, max_x, max_y] = bbox;
    for (row, expected) in expected.into_iter().enumerate() {
        let Ok(expected) = expected else {
            report.invalid_geometry += 1;
            continue;
        };
        let present = [min_x, min_y, max_x, max_y].map(|c| c.is_valid(row));
        let actual = present.iter().all(|p| *p).then(|| {
            BBox::new(
                min_x.value(row),
                min_y.value(row),
                max_x.value(row),
                max_y.value(row),
            )
        });
        if expected.is_some() && actual.is_none() {
            report.missing_bbox += 1;
        }
        let Some(actual) = actual else { continue };
        let zeros = [actual.min_x, actual.min_y, actual.max_x, actual.max_y]
            .iter()
            .all(|v| *v == 0.0);
        if zeros && expected != Some(BBox::point(0.0, 0.0)) {
            report.zero_bbox_off_origin += 1;
        }
        if actual.min_x > actual.max_x || actual.min_y > actual.max_y {
            report.inverted_bbox += 1;
        }
        if expected != Some(actual) {
            report.mismatched_bbox += 1;
        }
    }
    Ok(report)
}

/// [`audit`] on a record batch, finding the geometry and bbox columns by name.
pub fn audit_batch(
    batch: &RecordBatch,
    geometry_column: &str,
    names: &BBoxColumnNames,
) -> Result<AuditReport, GeostatsError> {
    let column = |name: &str| {
        batch
            .column_by_name(name)
            .ok_or_else(|| GeostatsError::MissingColumn {
                column: name.into(),
            })
    };
    let double = |name: &str| -> Result<&Float64Array, GeostatsError> {
        let c = column(name)?;
        c.as_any()
            .downcast_ref::<Float64Array>()
            .ok_or_else(|| GeostatsError::ColumnType {
                column: name.into(),
                data_type: format!("{:?}", c.data_type()),
                expected: "Float64",
            })
    };
    audit(
        column(geometry_column)?.as_ref(),
        [
            double(&names.min_x)?,
            double(&names.min_y)?,
            double(&names.max_x)?,
            double(&names.max_y)?,
        ],
    )
}
