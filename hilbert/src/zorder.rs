//! The Z-order (Morton) curve over a rectangle, for comparison with Hilbert keys.

use crate::batch::CellEncoder;
use crate::grid::Grid;
use crate::kernel::Accel;
use crate::{Bounds, Error};

/// Z-order (Morton) keys with exactly the same normalisation as [`crate::HilbertCurve`]: the
/// cells are the same, only their order differs. Bits interleave with x in the higher bit of
/// each pair, as GeoHash puts longitude first, so at an even number of bits a GeoHash integer
/// key is a Z-order key over [`Bounds::WGS84`].
///
/// ```
/// use geoberg_hilbert::{Bounds, ZOrderCurve};
///
/// let curve = ZOrderCurve::new(1, Bounds::new(0.0, 0.0, 2.0, 2.0)?)?;
/// assert_eq!(curve.encode(0.5, 0.5)?, 0b00);
/// assert_eq!(curve.encode(0.5, 1.5)?, 0b01);
/// assert_eq!(curve.encode(1.5, 0.5)?, 0b10);
/// assert_eq!(curve.encode(1.5, 1.5)?, 0b11);
/// # Ok::<(), geoberg_hilbert::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ZOrderCurve {
    grid: Grid,
    accel: Accel,
}

impl ZOrderCurve {
    /// A curve at `precision` bits per axis (1..=32) over `bounds`, on the fastest kernel the
    /// CPU supports (BMI2 `pdep` for the interleave where available).
    pub fn new(precision: u8, bounds: Bounds) -> Result<ZOrderCurve, Error> {
        Ok(ZOrderCurve {
            grid: Grid::new(precision, bounds)?,
            accel: Accel::detect(),
        })
    }

    /// A curve over longitude/latitude, [`Bounds::WGS84`].
    pub fn wgs84(precision: u8) -> Result<ZOrderCurve, Error> {
        ZOrderCurve::new(precision, Bounds::WGS84)
    }

    crate::curve::curve_methods!("Z-order");

    #[inline(always)]
    fn key32(&self, cx: u32, cy: u32) -> u64 {
        match self.accel.bmi2 {
            Some(bmi2) => bmi2.morton(cx, cy),
            None => interleave(cx, cy),
        }
    }

    /// The key at this precision if `(x, y)` lies in the bounds.
    #[inline(always)]
    fn key_checked(&self, x: f64, y: f64) -> Option<u64> {
        let (cx, cy) = self.grid.cells32_checked(x, y)?;
        Some(self.key32(cx, cy) >> (2 * self.grid.coarsen()))
    }

    #[inline]
    fn cells32(&self, key: u64) -> (u32, u32) {
        (compact(key >> 1), compact(key))
    }
}

impl CellEncoder for ZOrderCurve {
    fn grid(&self) -> &Grid {
        &self.grid
    }

    fn accel(&self) -> &Accel {
        &self.accel
    }

    #[inline]
    fn encode_cells(&self, cx: &[u32], cy: &[u32], out: &mut [u64]) {
        let shift = 2 * self.grid.coarsen();
        match self.accel.bmi2 {
            Some(bmi2) => bmi2.morton_batch(cx, cy, shift, out),
            None => {
                for ((o, &x), &y) in out.iter_mut().zip(cx).zip(cy) {
                    *o = interleave(x, y) >> shift;
                }
            }
        }
    }
}

/// Morton interleave with x in the odd bits, by magic-number spreading.
#[inline]
pub(crate) fn interleave(x: u32, y: u32) -> u64 {
    (spread(x) << 1) | spread(y)
}

/// Bit `k` of `v` to bit `2k`.
#[inline]
fn spread(v: u32) -> u64 {
    let mut v = u64::from(v);
    v = (v | (v << 16)) & 0x0000_ffff_0000_ffff;
    v = (v | (v << 8)) & 0x00ff_00ff_00ff_00ff;
    v = (v | (v << 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    v = (v | (v << 2)) & 0x3333_3333_3333_3333;
    (v | (v << 1)) & 0x5555_5555_5555_5555
}

/// Inverse of [`spread`]: bit `2k` of `v` to bit `k`.
#[inline]
fn compact(v: u64) -> u32 {
    let mut v = v & 0x5555_5555_5555_5555;
    v = (v | (v >> 1)) & 0x3333_3333_3333_3333;
    v = (v | (v >> 2)) & 0x0f0f_0f0f_0f0f_0f0f;
    v = (v | (v >> 4)) & 0x00ff_00ff_00ff_00ff;
    v = (v | (v >> 8)) & 0x0000_ffff_0000_ffff;
    ((v | (v >> 16)) & 0xffff_ffff) as u32
}
