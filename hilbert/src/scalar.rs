//! The scalar entry points of the curves: on x86-64 the SSE2 kernels of `arch`, elsewhere the
//! portable grid arithmetic and `lut` tables. Kept apart from both so that the kernels can use
//! the grid and the tables without a cycle.

use crate::grid::Grid;

impl Grid {
    /// The 32-bit cells of an in-bounds point, or `None` (then [`Grid::bad_value`] names
    /// the bad value). Same cells and the same verdict as [`Grid::check`] followed by
    /// [`Grid::cells32_in_bounds`], in fewer instructions on x86-64.
    #[inline(always)]
    pub(crate) fn cells32_checked(&self, x: f64, y: f64) -> Option<(u32, u32)> {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            crate::arch::cells32_checked(self, x, y)
        }
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
        {
            self.cells32_checked_portable(x, y)
        }
    }
}

/// Hilbert key of 32-bit cells on the full `2^32 × 2^32` grid.
#[inline(always)]
pub(crate) fn encode32(x: u32, y: u32) -> u64 {
    encode32_shr(x, y, 0)
}

/// [`encode32`] shifted right by `shift` (< 64) bits, to a coarser precision.
#[inline(always)]
pub(crate) fn encode32_shr(x: u32, y: u32, shift: u32) -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        crate::arch::encode32_shr(x, y, shift)
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        crate::lut::encode32_versions(&crate::lut::tile_versions(x, y)) >> shift
    }
}
