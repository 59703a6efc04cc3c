//! The one description of a Hilbert curve across the workspace: its precision and the bounds it
//! is laid over (`hilbert(geom, precision[, minX, minY, maxX, maxY])`), checked in one place.

use crate::error::CrsError;
use crate::extent::Extent;

/// A Hilbert curve as statements, table properties and rewrite plans name it: `precision` bits
/// per axis (4^precision cells) over `bounds` in the column's CRS units. With the `serde`
/// feature it serializes as `{"precision": p, "bounds": {...}}`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HilbertSpec {
    /// Bits per axis, [`HilbertSpec::MIN_PRECISION`]..=[`HilbertSpec::MAX_PRECISION`].
    pub precision: u8,
    /// The curve's extent; every bbox centre must lie inside it.
    pub bounds: Extent,
}

impl HilbertSpec {
    /// Coarsest precision: 4 cells.
    pub const MIN_PRECISION: u8 = 1;
    /// Finest precision, as in WherobotsDB: 2^64 cells, a key per `u64`.
    pub const MAX_PRECISION: u8 = 32;

    /// Checks the precision (1..=32) and the bounds (finite, min < max on both axes) before any
    /// data is read.
    pub fn new(precision: u32, bounds: Extent) -> Result<HilbertSpec, CrsError> {
        let precision = Self::check_precision(precision)?;
        bounds.validate()?;
        if bounds.min_x == bounds.max_x || bounds.min_y == bounds.max_y {
            return Err(CrsError::InvalidBounds {
                bounds,
                reason: "the bounds have no area (minX = maxX or minY = maxY)",
            });
        }
        Ok(HilbertSpec { precision, bounds })
    }

    /// `hilbert(geom, precision)` on a WGS84 column: longitude/latitude bounds.
    pub fn wgs84(precision: u32) -> Result<HilbertSpec, CrsError> {
        HilbertSpec::new(precision, Extent::WGS84)
    }

    /// The precision as a `u8` if it is in range.
    pub fn check_precision(precision: u32) -> Result<u8, CrsError> {
        if (u32::from(Self::MIN_PRECISION)..=u32::from(Self::MAX_PRECISION)).contains(&precision) {
            Ok(precision as u8)
        } else {
            Err(CrsError::InvalidPrecision { precision })
        }
    }

    /// The same curve with at most `max` bits per axis (a derived partition column's keys
    /// must fit a `long`, so cells use at most 16).
    pub fn limit_precision(self, max: u8) -> Result<HilbertSpec, CrsError> {
        if self.precision <= max {
            Ok(self)
        } else {
            Err(CrsError::InvalidPrecision {
                precision: u32::from(self.precision),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_and_bounds_are_checked() {
        assert!(HilbertSpec::wgs84(16).is_ok());
        assert!(HilbertSpec::wgs84(0).is_err());
        assert!(HilbertSpec::wgs84(33).is_err());
        assert_eq!(
            HilbertSpec::wgs84(40).unwrap_err().code(),
            "ST_INVALID_PRECISION"
        );
        assert!(HilbertSpec::new(8, Extent::new(0.0, 0.0, 0.0, 1.0)).is_err());
        assert!(HilbertSpec::new(8, Extent::new(0.0, f64::NAN, 1.0, 1.0)).is_err());
        assert!(HilbertSpec::new(8, Extent::new(1.0, 0.0, 0.0, 1.0)).is_err());
    }
}
