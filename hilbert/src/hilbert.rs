//! The Hilbert curve over a rectangle.

use crate::batch::CellEncoder;
use crate::grid::Grid;
use crate::kernel::Accel;
use crate::{Bounds, Error, lut};

/// Hilbert keys for points inside fixed [`Bounds`], at `precision` bits per axis (1..=32).
///
/// The orientation is the classic `xy2d` (Wikipedia's algorithm and DuckDB's `ST_Hilbert`):
/// the curve starts in the `(min_x, min_y)` cell, and at one bit per axis visits
/// `(0,0) → (0,1) → (1,1) → (1,0)` as keys `0, 1, 2, 3`. Keys nest: the key at precision `p` is
/// the key at `p + 1` shifted right by 2.
///
/// ```
/// use geoberg_hilbert::{Bounds, HilbertCurve};
///
/// let curve = HilbertCurve::new(1, Bounds::new(0.0, 0.0, 2.0, 2.0)?)?;
/// assert_eq!(curve.encode(0.5, 0.5)?, 0);
/// assert_eq!(curve.encode(0.5, 1.5)?, 1);
/// assert_eq!(curve.encode(1.5, 1.5)?, 2);
/// assert_eq!(curve.encode(2.0, 0.0)?, 3); // max is inside the last cell
/// assert!(curve.encode(2.5, 0.0).is_err());
/// # Ok::<(), geoberg_hilbert::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HilbertCurve {
    grid: Grid,
    accel: Accel,
}

impl HilbertCurve {
    /// A curve at `precision` bits per axis (1..=32) over `bounds`, on the fastest kernel the
    /// CPU supports.
    pub fn new(precision: u8, bounds: Bounds) -> Result<HilbertCurve, Error> {
        Ok(HilbertCurve {
            grid: Grid::new(precision, bounds)?,
            accel: Accel::detect(),
        })
    }

    /// A curve over longitude/latitude, [`Bounds::WGS84`].
    pub fn wgs84(precision: u8) -> Result<HilbertCurve, Error> {
        HilbertCurve::new(precision, Bounds::WGS84)
    }

    crate::curve::curve_methods!("Hilbert");

    /// The key of a point that passed the bounds check: one call into the BMI2 kernel (table
    /// indices spread with `pdep`) when the curve's kernel has it, the portable table walk
    /// otherwise. The choice was made once, at construction.
    #[inline(always)]
    fn key_in_bounds(&self, x: f64, y: f64) -> u64 {
        match self.accel.bmi2 {
            Some(bmi2) => bmi2.hilbert_in_bounds(&self.grid, x, y),
            None => {
                let (cx, cy) = self.grid.cells32_in_bounds(x, y);
                lut::encode32(cx, cy) >> (2 * self.grid.coarsen())
            }
        }
    }

    #[inline(always)]
    fn key32(&self, cx: u32, cy: u32) -> u64 {
        lut::encode32(cx, cy)
    }

    #[inline]
    fn cells32(&self, key: u64) -> (u32, u32) {
        lut::decode32(key)
    }
}

impl CellEncoder for HilbertCurve {
    fn grid(&self) -> &Grid {
        &self.grid
    }

    fn accel(&self) -> &Accel {
        &self.accel
    }

    #[inline]
    fn encode_cells(&self, cx: &[u32], cy: &[u32], out: &mut [u64]) {
        let shift = 2 * self.grid.coarsen();
        match self.accel.avx2 {
            Some(avx2) => avx2.hilbert(cx, cy, shift, out),
            None => {
                let table = lut::encode_table();
                for ((o, &x), &y) in out.iter_mut().zip(cx).zip(cy) {
                    *o = lut::encode32_with(table, x, y) >> shift;
                }
            }
        }
    }
}
