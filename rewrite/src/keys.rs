//! Sort keys of rows: the Hilbert index of each geometry's bbox centre.

use arrow_array::Array;
use geoberg_geostats::{BBoxColumns, bbox_columns};
use geoberg_hilbert::HilbertCurve;
use serde::{Deserialize, Serialize};

use crate::RewriteError;

/// Which group of output files a row goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowClass {
    /// Ordinary rows, clustered by key.
    Regular,
    /// Rows whose bbox is large against the expected file extent: kept in files of their own so
    /// that they do not stretch the bounds of the regular files.
    Oversized,
    /// Null or empty geometries (no location): last, in their own files.
    Empty,
}

/// Bounding boxes and Hilbert keys of one batch of geometries.
pub(crate) struct KeyedRows {
    pub bboxes: BBoxColumns,
    /// Key per row; 0 for null and empty geometries (see `is_located`).
    pub keys: Vec<u64>,
}

impl KeyedRows {
    /// Whether the row has a bbox (not null, not empty).
    #[inline]
    pub fn is_located(&self, row: usize) -> bool {
        self.bboxes.min_x.is_valid(row)
    }

    /// Width and height of the row's bbox (zero for unlocated rows).
    #[inline]
    pub fn size(&self, row: usize) -> (f64, f64) {
        let b = &self.bboxes;
        (
            b.max_x.value(row) - b.min_x.value(row),
            b.max_y.value(row) - b.min_y.value(row),
        )
    }
}

/// Computes bboxes (geostats batch kernel) and centre keys (hilbert batch kernel) of a WKB
/// column. `first_row` is the file row ordinal of row 0, for error messages.
pub(crate) fn key_rows(
    geometry: &dyn Array,
    curve: &HilbertCurve,
    column: &str,
    path: &str,
    first_row: u64,
) -> Result<KeyedRows, RewriteError> {
    let bboxes = bbox_columns(geometry).map_err(|source| RewriteError::Geometry {
        column: column.to_string(),
        path: path.to_string(),
        source,
    })?;
    let n = geometry.len();
    let bounds = curve.bounds();
    let (mut xs, mut ys) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (min_x, min_y, max_x, max_y) = (
        bboxes.min_x.values(),
        bboxes.min_y.values(),
        bboxes.max_x.values(),
        bboxes.max_y.values(),
    );
    for i in 0..n {
        if bboxes.min_x.is_valid(i) {
            xs.push(min_x[i] * 0.5 + max_x[i] * 0.5);
            ys.push(min_y[i] * 0.5 + max_y[i] * 0.5);
        } else {
            // Any in-bounds value; the key is overwritten below.
            xs.push(bounds.min_x);
            ys.push(bounds.min_y);
        }
    }
    let mut keys = vec![0u64; n];
    if curve.encode_batch(&xs, &ys, &mut keys).is_err() {
        // Find the first offending row to name it; encode reports value and bounds.
        for i in 0..n {
            if let Err(source) = curve.encode(xs[i], ys[i]) {
                return Err(RewriteError::RowOutsideCurveBounds {
                    path: path.to_string(),
                    row: first_row + i as u64,
                    source,
                });
            }
        }
    }
    if bboxes.min_x.null_count() > 0 {
        for (i, k) in keys.iter_mut().enumerate() {
            if bboxes.min_x.is_null(i) {
                *k = 0;
            }
        }
    }
    Ok(KeyedRows { bboxes, keys })
}
