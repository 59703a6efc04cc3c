//! Sort keys of rows: the Hilbert index of each geometry's bbox centre.
//!
//! Geography values are boxed on the sphere (`geoberg_geostats::geography_bbox_columns`) and
//! keyed by the centre of that box in longitude/latitude: the midpoint of its latitude range and
//! of its longitude arc. For a box that wraps the antimeridian (`min_x > max_x`) the arc runs
//! east from `min_x` across ±180 to `max_x`, so its midpoint is next to the data (the box
//! 170..-170 is keyed at 180), not the planar mean of the two numbers (0, the far side of the
//! Earth). Boxes that do not wrap are keyed as the same values in a geometry column would be.
//! The curve itself does not wrap: values just east and just west of ±180 get keys far apart,
//! which may split a cluster that straddles the antimeridian over files at both edges of the
//! curve. That costs pruning efficiency there, never correctness: every output file's bounds are
//! computed on the sphere from its rows.

use arrow_array::Array;
use geoberg_geostats::{BBoxColumns, bbox_columns, geography_bbox_columns};
use geoberg_hilbert::{Bounds, HilbertCurve};
use serde::{Deserialize, Serialize};

use crate::RewriteError;

/// The curve a [`geoberg_crs::HilbertSpec`] describes.
pub(crate) fn hilbert_curve(spec: &geoberg_crs::HilbertSpec) -> Result<HilbertCurve, RewriteError> {
    let b = spec.bounds;
    let bounds = Bounds::new(b.min_x, b.min_y, b.max_x, b.max_y)?;
    Ok(HilbertCurve::new(spec.precision, bounds)?)
}

/// Which group of output files a row goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowClass {
    /// Ordinary rows, clustered by key.
    Regular,
    /// Rows whose bbox is large against the expected file extent: kept in files of their own so
    /// that they do not stretch the bounds of the regular files.
    Oversized,
    /// Null geometries, and empty ones in a batch without a located row (no location): last,
    /// in their own files. Other empty geometries go with the regular rows (see `key_rows`).
    Empty,
}

/// Bounding boxes and Hilbert keys of one batch of geometries.
pub(crate) struct KeyedRows {
    /// Planar boxes, or boxes on the sphere (X may wrap) for geography.
    pub bboxes: BBoxColumns,
    /// Whether the boxes are on the sphere.
    pub sphere: bool,
    /// Key per row; 0 for null and empty geometries (see `is_located`), until empty ones
    /// borrow a key (`borrow_keys_for_empty_rows`).
    pub keys: Vec<u64>,
}

impl KeyedRows {
    /// Whether the row has a bbox (not null, not empty).
    #[inline]
    pub fn is_located(&self, row: usize) -> bool {
        self.bboxes.min_x.is_valid(row)
    }

    /// Gives each empty geometry (not null, no box) of `geometry` the key of a row that
    /// `regular` accepts, picked by a hash of its row number, and marks it; returns the marks
    /// (empty when no row borrowed a key: no empties, or no regular row to borrow from).
    ///
    /// An empty geometry has no location, so any file is as good for it, but a file of empty
    /// geometries alone would have no bounds (Iceberg's bounds leave empty values out) and
    /// every window would read it. Spread over the regular files in proportion to the data
    /// (even when the input holds its empties together), empties change no file's bounds and
    /// leave no file unbounded; a key is never split between files, so each borrowed key stays
    /// in the file of the regular row it came from. Null geometries keep key 0 and files of
    /// their own, which every reader skips by their null counts.
    pub fn borrow_keys_for_empty_rows(
        &mut self,
        geometry: &dyn Array,
        regular: impl Fn(&KeyedRows, usize) -> bool,
    ) -> Vec<bool> {
        let n = self.keys.len();
        if self.bboxes.min_x.null_count() == geometry.null_count() {
            return Vec::new(); // every unlocated row is null
        }
        let donors: Vec<usize> = (0..n).filter(|&i| regular(self, i)).collect();
        if donors.is_empty() {
            return Vec::new();
        }
        let mut borrowed = vec![false; n];
        for (i, mark) in borrowed.iter_mut().enumerate() {
            if !self.is_located(i) && geometry.is_valid(i) {
                // Fibonacci hashing of the row number: consecutive empties pick far-apart rows.
                let pick = ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize;
                self.keys[i] = self.keys[donors[pick % donors.len()]];
                *mark = true;
            }
        }
        borrowed
    }

    /// Width and height of the row's bbox (zero for unlocated rows); on the sphere the width
    /// of a wrapping box is its longitude arc.
    #[inline]
    pub fn size(&self, row: usize) -> (f64, f64) {
        let b = &self.bboxes;
        let (min_x, max_x) = (b.min_x.value(row), b.max_x.value(row));
        (
            lon_width(min_x, max_x, self.sphere),
            b.max_y.value(row) - b.min_y.value(row),
        )
    }
}

/// Width of an X range; on the sphere a range with `min_x > max_x` wraps the antimeridian.
#[inline]
pub(crate) fn lon_width(min_x: f64, max_x: f64, sphere: bool) -> f64 {
    if sphere && min_x > max_x {
        max_x + 360.0 - min_x
    } else {
        max_x - min_x
    }
}

/// Centre of an X range; on the sphere the midpoint of the longitude arc, in [-180, 180].
#[inline]
pub(crate) fn lon_centre(min_x: f64, max_x: f64, sphere: bool) -> f64 {
    if sphere && min_x > max_x {
        let c = min_x * 0.5 + (max_x + 360.0) * 0.5;
        if c > 180.0 { c - 360.0 } else { c }
    } else {
        min_x * 0.5 + max_x * 0.5
    }
}

/// Computes bboxes (geostats batch kernel; on the sphere with `sphere`) and centre keys (hilbert
/// batch kernel) of a WKB column. `first_row` is the file row ordinal of row 0, for error
/// messages.
pub(crate) fn key_rows(
    geometry: &dyn Array,
    curve: &HilbertCurve,
    column: &str,
    path: &str,
    first_row: u64,
    sphere: bool,
) -> Result<KeyedRows, RewriteError> {
    let boxes = if sphere {
        geography_bbox_columns(geometry)
    } else {
        bbox_columns(geometry)
    };
    let bboxes = boxes.map_err(|source| RewriteError::Geometry {
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
            xs.push(lon_centre(min_x[i], max_x[i], sphere));
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
    Ok(KeyedRows {
        bboxes,
        sphere,
        keys,
    })
}

/// Where one row falls on a rewrite's curve: what an append needs to place the row among the
/// files a Hilbert rewrite wrote.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowKey {
    /// A located row: the Hilbert key of its bbox centre (the key a rewrite sorts by), and the
    /// width and height of its bbox (a wrapping geography box's width is its longitude arc).
    Located {
        /// The key.
        key: u64,
        /// Bbox width.
        width: f64,
        /// Bbox height.
        height: f64,
    },
    /// A null or empty geometry: no location.
    Unlocated,
    /// A bbox centre outside the curve's bounds (a rewrite refuses such rows; an append keeps
    /// them apart).
    OutsideCurve,
}

/// The [`RowKey`] of every row of a WKB `geometry` column on `spec`'s curve, keyed as a
/// rewrite keys them (boxes on the sphere with `sphere`). `column` names the column in errors.
pub fn row_keys(
    geometry: &dyn Array,
    spec: &geoberg_crs::HilbertSpec,
    sphere: bool,
    column: &str,
) -> Result<Vec<RowKey>, RewriteError> {
    let curve = hilbert_curve(spec)?;
    let boxes = if sphere {
        geography_bbox_columns(geometry)
    } else {
        bbox_columns(geometry)
    };
    let b = boxes.map_err(|source| RewriteError::Geometry {
        column: column.to_string(),
        path: "the appended rows".to_string(),
        source,
    })?;
    Ok((0..geometry.len())
        .map(|i| {
            if b.min_x.is_null(i) {
                return RowKey::Unlocated;
            }
            let (min_x, max_x) = (b.min_x.value(i), b.max_x.value(i));
            let (min_y, max_y) = (b.min_y.value(i), b.max_y.value(i));
            let x = lon_centre(min_x, max_x, sphere);
            match curve.encode(x, min_y * 0.5 + max_y * 0.5) {
                Ok(key) => RowKey::Located {
                    key,
                    width: lon_width(min_x, max_x, sphere),
                    height: max_y - min_y,
                },
                Err(_) => RowKey::OutsideCurve,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_boxes_are_centred_on_their_arc() {
        assert_eq!(lon_centre(170.0, -170.0, true), 180.0);
        assert_eq!(lon_centre(175.0, -165.0, true), -175.0);
        assert_eq!(lon_centre(-10.0, 30.0, true), 10.0);
        assert_eq!(lon_width(170.0, -170.0, true), 20.0);
        assert_eq!(lon_width(-180.0, 180.0, true), 360.0);
        // Planar: the numbers as they are.
        assert_eq!(lon_centre(170.0, -170.0, false), 0.0);
    }
}
