//! The rectangle a curve covers.

use crate::Error;

/// An axis-aligned rectangle `[min_x, max_x] × [min_y, max_y]`, closed on every side.
///
/// Fields are public for reading and pattern matching; [`Bounds::new`] is the checked
/// constructor, and every curve re-checks the bounds it is given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// Smallest x.
    pub min_x: f64,
    /// Smallest y.
    pub min_y: f64,
    /// Largest x.
    pub max_x: f64,
    /// Largest y.
    pub max_y: f64,
}

impl Bounds {
    /// Longitude/latitude in degrees: `[-180, -90, 180, 90]`.
    pub const WGS84: Bounds = Bounds {
        min_x: -180.0,
        min_y: -90.0,
        max_x: 180.0,
        max_y: 90.0,
    };

    /// Checked constructor: every value finite, `min < max` on both axes, and a width that is
    /// itself finite (so that the scale to the grid is well defined).
    pub fn new(min_x: f64, min_y: f64, max_x: f64, max_y: f64) -> Result<Bounds, Error> {
        let bounds = Bounds {
            min_x,
            min_y,
            max_x,
            max_y,
        };
        bounds.validate()?;
        Ok(bounds)
    }

    /// Checks the invariants that [`Bounds::new`] promises.
    pub fn validate(&self) -> Result<(), Error> {
        let fail = |reason| {
            Err(Error::InvalidBounds {
                bounds: *self,
                reason,
            })
        };
        let all = [self.min_x, self.min_y, self.max_x, self.max_y];
        if !all.iter().all(|v| v.is_finite()) {
            return fail("every value must be finite");
        }
        if !(self.min_x < self.max_x && self.min_y < self.max_y) {
            return fail("min must be strictly less than max on both axes");
        }
        let (w, h) = (self.width(), self.height());
        if !(w.is_finite() && h.is_finite()) {
            return fail("the width and height must be finite");
        }
        if !((crate::grid::TWO_POW_32 / w).is_finite() && (crate::grid::TWO_POW_32 / h).is_finite())
        {
            return fail("the width and height are too small to scale to a 2^32 grid");
        }
        Ok(())
    }

    /// `max_x - min_x`.
    pub fn width(&self) -> f64 {
        self.max_x - self.min_x
    }

    /// `max_y - min_y`.
    pub fn height(&self) -> f64 {
        self.max_y - self.min_y
    }

    /// Whether `(x, y)` lies inside or on the edge. NaN is never contained.
    pub fn contains(&self, x: f64, y: f64) -> bool {
        x >= self.min_x && x <= self.max_x && y >= self.min_y && y <= self.max_y
    }
}

impl std::fmt::Display for Bounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[min_x {}, min_y {}, max_x {}, max_y {}]",
            self.min_x, self.min_y, self.max_x, self.max_y
        )
    }
}
