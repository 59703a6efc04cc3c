//! Materialized bbox columns (the v1/v2-compatible layout): four `double` columns whose Iceberg
//! bounds (Appendix D, "Bound serialization": a double is 8 bytes little-endian) give each data
//! file a box that any engine can prune on.
//!
//! A file's box is `[lower(min_x), lower(min_y), upper(max_x), upper(max_y)]`: the smallest row
//! minimum and the largest row maximum.

use crate::bbox::BBox;
use crate::error::GeostatsError;

/// Names of the four bbox columns. Defaults: `bbox_min_x`, `bbox_min_y`, `bbox_max_x`,
/// `bbox_max_y`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BBoxColumnNames {
    /// Column of per-row minimum X.
    pub min_x: String,
    /// Column of per-row minimum Y.
    pub min_y: String,
    /// Column of per-row maximum X.
    pub max_x: String,
    /// Column of per-row maximum Y.
    pub max_y: String,
}

impl Default for BBoxColumnNames {
    fn default() -> Self {
        BBoxColumnNames {
            min_x: "bbox_min_x".into(),
            min_y: "bbox_min_y".into(),
            max_x: "bbox_max_x".into(),
            max_y: "bbox_max_y".into(),
        }
    }
}

/// Serializes a `double` bound: 8 bytes, little-endian.
pub fn encode_double_bound(v: f64) -> [u8; 8] {
    v.to_le_bytes()
}

/// Parses a `double` bound; only 8 bytes are accepted.
pub fn decode_double_bound(bytes: &[u8]) -> Result<f64, GeostatsError> {
    let b: [u8; 8] = bytes.try_into().map_err(|_| GeostatsError::BoundLength {
        what: "double bound",
        len: bytes.len(),
        expected: "8",
    })?;
    Ok(f64::from_le_bytes(b))
}

impl BBoxColumnNames {
    /// The file box from the bbox columns' bounds, looked up by column name.
    ///
    /// `None` when any of the four bounds is missing (metrics mode `none` or `counts`, or a
    /// column past the statistics limit): the file cannot be pruned and must be read.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use geoberg_geostats::{BBox, BBoxColumnNames, encode_double_bound};
    /// let lower: HashMap<&str, [u8; 8]> = [("bbox_min_x", -5.0), ("bbox_min_y", -1.0)]
    ///     .map(|(k, v)| (k, encode_double_bound(v))).into();
    /// let upper: HashMap<&str, [u8; 8]> = [("bbox_max_x", 3.0), ("bbox_max_y", 7.0)]
    ///     .map(|(k, v)| (k, encode_double_bound(v))).into();
    /// let names = BBoxColumnNames::default();
    /// let mbr = names.file_bbox(|c| lower.get(c).map(|b| &b[..]), |c| upper.get(c).map(|b| &b[..]));
    /// assert_eq!(mbr.unwrap(), Some(BBox::new(-5.0, -1.0, 3.0, 7.0)));
    /// ```
    pub fn file_bbox<'a>(
        &self,
        lower: impl Fn(&str) -> Option<&'a [u8]>,
        upper: impl Fn(&str) -> Option<&'a [u8]>,
    ) -> Result<Option<BBox>, GeostatsError> {
        let (Some(min_x), Some(min_y), Some(max_x), Some(max_y)) = (
            lower(&self.min_x),
            lower(&self.min_y),
            upper(&self.max_x),
            upper(&self.max_y),
        ) else {
            return Ok(None);
        };
        let bbox = BBox::new(
            decode_double_bound(min_x)?,
            decode_double_bound(min_y)?,
            decode_double_bound(max_x)?,
            decode_double_bound(max_y)?,
        );
        for (what, v) in [
            ("lower bound of the min_x column", bbox.min_x),
            ("lower bound of the min_y column", bbox.min_y),
            ("upper bound of the max_x column", bbox.max_x),
            ("upper bound of the max_y column", bbox.max_y),
        ] {
            if v.is_nan() {
                return Err(GeostatsError::BoundNaN { what });
            }
        }
        let hint = "some rows have min > max in their bbox columns; run `audit` and rewrite them";
        for (what, lower, upper) in [
            ("bbox columns x", bbox.min_x, bbox.max_x),
            ("bbox columns y", bbox.min_y, bbox.max_y),
        ] {
            if lower > upper {
                return Err(GeostatsError::BoundOrder {
                    what,
                    lower,
                    upper,
                    hint,
                });
            }
        }
        Ok(Some(bbox))
    }
}
