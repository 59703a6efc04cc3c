//! The Hilbert curve over a rectangle.

use crate::batch::CellEncoder;
use crate::grid::Grid;
use crate::kernel::Accel;
use crate::{Bounds, Error, lut, scalar};

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

    #[inline(always)]
    fn key32(&self, cx: u32, cy: u32) -> u64 {
        scalar::encode32(cx, cy)
    }

    /// The key at this precision if `(x, y)` lies in the bounds.
    #[inline(always)]
    fn key_checked(&self, x: f64, y: f64) -> Option<u64> {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            crate::arch::hilbert_checked(&self.grid, x, y)
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        {
            let (cx, cy) = self.grid.cells32_checked(x, y)?;
            Some(scalar::encode32_shr(cx, cy, 2 * self.grid.coarsen()))
        }
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
        for ((o, &x), &y) in out.iter_mut().zip(cx).zip(cy) {
            *o = scalar::encode32_shr(x, y, shift);
        }
    }

    #[inline]
    fn encode_points<const CHECK: bool>(
        &self,
        xs: &[f64],
        ys: &[f64],
        out: &mut [u64],
    ) -> Option<bool> {
        let avx2 = self.accel.avx2?;
        Some(avx2.hilbert_points::<CHECK>(&self.grid, xs, ys, out))
    }
}
