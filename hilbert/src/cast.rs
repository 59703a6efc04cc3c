//! The one float-to-cell conversion, shared by the portable grid and the SIMD kernels. Its
//! `unsafe` is the crate's only one outside `arch`.

/// `t` as an integer, truncating, with a single `cvttsd2si` instead of a saturating cast.
///
/// Panics in debug builds if `t` is not in `[0, 2^32 - 1]`.
#[inline(always)]
pub(crate) fn truncate_to_u32(t: f64) -> u32 {
    debug_assert!(
        (0.0..=f64::from(u32::MAX)).contains(&t),
        "{t} outside the u32 range"
    );
    // SAFETY: every caller clamps `t` into `[0, 2^32 - 1]` first (NaN included: `f64::max`
    // maps it to 0), so `t` is finite and its truncation fits in a `u32`.
    unsafe { t.to_int_unchecked::<u32>() }
}
