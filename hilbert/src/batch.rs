//! The batch driver shared by every curve: blocks of points, a normalisation pass into `u32`
//! cells, then the curve's encode pass. Two tight passes over a block that stays in L1 vectorise
//! far better than one fused loop. A curve can take over the whole input with its own kernel
//! (Hilbert on AVX2 does, with the same two passes inside).

use crate::Error;
use crate::grid::{BLOCK, Grid};
use crate::kernel::Accel;
use rayon::prelude::*;

/// Points per rayon task: large enough to amortise scheduling, small enough to balance.
pub(crate) const PAR_CHUNK: usize = 64 * BLOCK;

/// A curve that turns 32-bit cells into keys.
pub(crate) trait CellEncoder: Sync {
    fn grid(&self) -> &Grid;
    fn accel(&self) -> &Accel;
    /// Keys at the curve's precision for cells on the 32-bit grid.
    fn encode_cells(&self, cx: &[u32], cy: &[u32], out: &mut [u64]);
    /// Keys straight from coordinates for the whole input, when the curve has its own kernel
    /// on its accel: `Some(every value in bounds)` (only computed when `CHECK`; keys are
    /// unspecified if not), or `None` to take the block-wise normalise-then-`encode_cells`
    /// path.
    fn encode_points<const CHECK: bool>(
        &self,
        _xs: &[f64],
        _ys: &[f64],
        _out: &mut [u64],
    ) -> Option<bool> {
        None
    }
}

pub(crate) fn check_lengths(xs: usize, ys: usize, out: usize) -> Result<(), Error> {
    if xs == ys && ys == out {
        Ok(())
    } else {
        Err(Error::LengthMismatch { xs, ys, out })
    }
}

/// Encodes equal-length slices; `base` is the index of `xs[0]` in the caller's input.
pub(crate) fn encode<const CHECK: bool, C: CellEncoder + ?Sized>(
    curve: &C,
    xs: &[f64],
    ys: &[f64],
    out: &mut [u64],
    base: usize,
) -> Result<(), Error> {
    let grid = curve.grid();
    if let Some(ok) = curve.encode_points::<CHECK>(xs, ys, out) {
        return if !CHECK || ok {
            Ok(())
        } else {
            Err(grid.first_error(xs, ys, base))
        };
    }
    let accel = curve.accel();
    let b = grid.bounds;
    let mut cx = [0u32; BLOCK];
    let mut cy = [0u32; BLOCK];
    for (i, ((bx, by), bo)) in xs
        .chunks(BLOCK)
        .zip(ys.chunks(BLOCK))
        .zip(out.chunks_mut(BLOCK))
        .enumerate()
    {
        let n = bx.len();
        let ok_x = accel.normalize::<CHECK>(bx, b.min_x, b.max_x, grid.scale_x, &mut cx[..n]);
        let ok_y = accel.normalize::<CHECK>(by, b.min_y, b.max_y, grid.scale_y, &mut cy[..n]);
        if CHECK && !(ok_x && ok_y) {
            return Err(grid.first_error(bx, by, base + i * BLOCK));
        }
        curve.encode_cells(&cx[..n], &cy[..n], bo);
    }
    Ok(())
}

/// [`encode`] over rayon tasks; the error, if any, is the one with the smallest index.
pub(crate) fn par_encode<const CHECK: bool, C: CellEncoder + ?Sized>(
    curve: &C,
    xs: &[f64],
    ys: &[f64],
    out: &mut [u64],
) -> Result<(), Error> {
    check_lengths(xs.len(), ys.len(), out.len())?;
    let first_bad = xs
        .par_chunks(PAR_CHUNK)
        .zip(ys.par_chunks(PAR_CHUNK))
        .zip(out.par_chunks_mut(PAR_CHUNK))
        .enumerate()
        .filter_map(|(i, ((x, y), o))| encode::<CHECK, C>(curve, x, y, o, i * PAR_CHUNK).err())
        .min_by_key(|e| match e {
            Error::OutOfBounds { index, .. } => index.unwrap_or(usize::MAX),
            _ => usize::MAX,
        });
    match first_bad {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
