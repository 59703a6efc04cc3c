//! Explicit SIMD and BMI2 kernels: with `cast`, the crate's only `unsafe` code.
//!
//! The AVX2 and BMI2 kernels are chosen at run time: each is reached through a zero-sized token
//! ([`Avx2`], [`Bmi2`]) that can only be made by runtime feature detection, so holding one proves
//! the CPU supports the instructions; the safe methods on the token are the only callers of the
//! `#[target_feature]` functions. The SSE2 helpers of the scalar `encode` ([`cells32_checked`],
//! [`hilbert_checked`], [`encode32_shr`]) need no token: SSE2 is part of x86-64, and they are
//! compiled only where the target has it, so they inline into any caller's loop.
//!
//! The AVX2 Hilbert encoder is the branch-free parallel-prefix algorithm of rawrunprotected's
//! `hilbert_curves` ("Hilbert curves in O(log n) time", public domain), widened from 16 to 32
//! bits per axis with one more scan round, over 8 `u32` lanes, followed by a 32 → 64-bit
//! interleave done with `pshufb` nibble tables. Its normalisation pass writes the cells in the
//! lane order the interleave's in-lane unpacks leave in natural order, so neither pass needs a
//! cross-lane permute.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// Proof that AVX2 is available.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx2(());

/// Proof that BMI2 (`pdep`) is available.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bmi2(());

impl Avx2 {
    pub(crate) fn detect() -> Option<Avx2> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            return Some(Avx2(()));
        }
        None
    }

    /// Normalisation pass (see `grid`): returns whether every value lay in `[min, max]`
    /// (only computed when `CHECK`). Bit-identical to `grid::normalize_portable`.
    #[inline]
    pub(crate) fn normalize<const CHECK: bool>(
        self,
        vs: &[f64],
        min: f64,
        max: f64,
        scale: f64,
        out: &mut [u32],
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: an `Avx2` token exists only after `is_x86_feature_detected!("avx2")`.
            unsafe { normalize_avx2::<CHECK>(vs, min, max, scale, out) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (vs, min, max, scale, out);
            unreachable!("Avx2 token on a non-x86_64 target")
        }
    }

    /// Hilbert keys at the grid's precision straight from coordinates: a normalisation pass and
    /// an encode pass per block of up to `BLOCK` points, with the cells in the lane order the
    /// encoder wants (no cross-lane permutes on either side). Returns whether every
    /// value lay in bounds (only computed when `CHECK`); if not, the keys written are
    /// unspecified. Bit-identical to `Grid::cells32` followed by `lut::encode32`.
    #[inline]
    pub(crate) fn hilbert_points<const CHECK: bool>(
        self,
        grid: &crate::grid::Grid,
        xs: &[f64],
        ys: &[f64],
        out: &mut [u64],
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: an `Avx2` token exists only after `is_x86_feature_detected!("avx2")`.
            unsafe { hilbert_points_avx2::<CHECK>(grid, xs, ys, out) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (grid, xs, ys, out);
            unreachable!("Avx2 token on a non-x86_64 target")
        }
    }
}

impl Bmi2 {
    pub(crate) fn detect() -> Option<Bmi2> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("bmi2") {
            return Some(Bmi2(()));
        }
        None
    }

    /// Morton key of 32-bit cells (x in the odd, higher bit of each pair).
    #[inline]
    pub(crate) fn morton(self, x: u32, y: u32) -> u64 {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: a `Bmi2` token exists only after `is_x86_feature_detected!("bmi2")`.
            unsafe { morton_bmi2(x, y) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (x, y);
            unreachable!("Bmi2 token on a non-x86_64 target")
        }
    }

    /// Morton keys of 32-bit cells, shifted right by `shift` bits.
    #[inline]
    pub(crate) fn morton_batch(self, xs: &[u32], ys: &[u32], shift: u32, out: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: a `Bmi2` token exists only after `is_x86_feature_detected!("bmi2")`.
            unsafe { morton_batch_bmi2(xs, ys, shift, out) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (xs, ys, shift, out);
            unreachable!("Bmi2 token on a non-x86_64 target")
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
fn morton_bmi2(x: u32, y: u32) -> u64 {
    _pdep_u64(u64::from(x), 0xaaaa_aaaa_aaaa_aaaa) | _pdep_u64(u64::from(y), 0x5555_5555_5555_5555)
}

/// The 32-bit cells of `(x, y)` if both lie in the grid's bounds (NaN does not), else `None`:
/// one packed compare of both coordinates against both bounds, then one packed
/// subtract-multiply-clamp. Bit-identical to `Grid::check` followed by
/// `Grid::cells32_in_bounds`; SSE2 is part of x86-64, so this inlines into any caller.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
pub(crate) fn cells32_checked(grid: &crate::grid::Grid, x: f64, y: f64) -> Option<(u32, u32)> {
    let b = &grid.bounds;
    // SAFETY: only SSE2 register arithmetic, no memory access; the cfg guarantees SSE2.
    unsafe {
        let v = _mm_set_pd(y, x);
        let lo = _mm_set_pd(b.min_y, b.min_x);
        let hi = _mm_set_pd(b.max_y, b.max_x);
        // Unordered negated compares: NaN is outside.
        let outside = _mm_or_pd(_mm_cmpnge_pd(v, lo), _mm_cmpnle_pd(v, hi));
        if _mm_movemask_pd(outside) != 0 {
            return None;
        }
        // In bounds, `v - min >= 0`, so only `max` itself (whose product can round to 2^32)
        // needs the clamp, and truncation is the floor.
        let t = _mm_mul_pd(_mm_sub_pd(v, lo), _mm_set_pd(grid.scale_y, grid.scale_x));
        let t = _mm_min_pd(t, _mm_set1_pd(crate::grid::TOP));
        Some((
            _mm_cvttsd_si64(t) as u32,
            _mm_cvttsd_si64(_mm_unpackhi_pd(t, t)) as u32,
        ))
    }
}

/// The Hilbert key of `(x, y)` at the grid's precision if both lie in the grid's bounds (NaN
/// does not), else `None`. Same verdict and key as [`cells32_checked`] followed by
/// `lut::encode32` and the shift to the precision, but the cells never leave the SSE2
/// registers: the bounds check is one clamp and one compare, the floor is the `2^52` trick of
/// `grid::cell32` on both lanes, and the key is assembled by inserting the table words straight
/// from memory ([`hilbert_key`]).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
pub(crate) fn hilbert_checked(grid: &crate::grid::Grid, x: f64, y: f64) -> Option<u64> {
    let b = &grid.bounds;
    // SAFETY: only SSE2 register arithmetic, no memory access; the cfg guarantees SSE2.
    let tiles = unsafe {
        let v = _mm_set_pd(y, x);
        let lo = _mm_set_pd(b.min_y, b.min_x);
        let hi = _mm_set_pd(b.max_y, b.max_x);
        // Clamped into the bounds, a coordinate stays equal to itself only if it was inside.
        // `maxpd` returns its second operand when either is NaN, so NaN becomes `min`, which
        // differs from it (and -0.0 against a 0.0 bound compares equal, as in `Grid::check`).
        let clamped = _mm_min_pd(_mm_max_pd(v, lo), hi);
        if _mm_movemask_pd(_mm_cmpneq_pd(clamped, v)) != 0 {
            return None;
        }
        // In bounds, `v - min >= 0`, so only `max` itself (whose product can round to 2^32)
        // needs the clamp.
        let t = _mm_mul_pd(_mm_sub_pd(v, lo), _mm_set_pd(grid.scale_y, grid.scale_x));
        let t = _mm_min_pd(t, _mm_set1_pd(crate::grid::TOP));
        // `floor(t)` as `grid::cell32`: adding 2^52 leaves round(t) in the low bits of each
        // lane; the compare is all ones (-1) where that rounded up.
        let magic = _mm_set1_pd(crate::grid::MAGIC);
        let rounded = _mm_add_pd(t, magic);
        let up = _mm_cmplt_pd(t, _mm_sub_pd(rounded, magic));
        let cells = _mm_add_epi64(_mm_castpd_si128(rounded), _mm_castpd_si128(up));
        // x in dword 0, y in dword 2: gather `y, x` and `x, y` for the byte unpack.
        let yx = _mm_shuffle_epi32::<0b11_10_00_10>(cells);
        let xy = _mm_shuffle_epi32::<0b11_10_10_00>(cells);
        _mm_unpacklo_epi8(yx, xy)
    };
    // The top two tiles hold every key bit at 16 bits per axis or fewer: a branch on a value
    // that is fixed for the curve, so the loop around it predicts it (or is unswitched).
    let key = if grid.precision <= 16 {
        hilbert_key::<true>(tiles)
    } else {
        hilbert_key::<false>(tiles)
    };
    // SAFETY: SSE2 register arithmetic (the cfg guarantees SSE2).
    Some(unsafe {
        let count = _mm_cvtsi32_si128((2 * grid.coarsen()) as i32);
        _mm_cvtsi128_si64(_mm_srl_epi64(key, count)) as u64
    })
}

/// `lut::encode32(x, y) >> shift` with SSE2 (`shift` < 64), the shift done before the key
/// leaves the vector register.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
pub(crate) fn encode32_shr(x: u32, y: u32, shift: u32) -> u64 {
    // SAFETY: SSE2 register arithmetic (the cfg guarantees SSE2).
    unsafe {
        let (xv, yv) = (_mm_cvtsi32_si128(x as i32), _mm_cvtsi32_si128(y as i32));
        let tiles = _mm_unpacklo_epi8(_mm_unpacklo_epi32(yv, xv), _mm_unpacklo_epi32(xv, yv));
        let key = hilbert_key::<false>(tiles);
        _mm_cvtsi128_si64(_mm_srl_epi64(key, _mm_cvtsi32_si128(shift as i32))) as u64
    }
}

/// The 32-level Hilbert key of the cells whose bytes `tiles` holds interleaved (`y0, x0, y1,
/// x1, …` for the tile indices `x8 << 8 | y8` in the low four 16-bit lanes, then `x0, y0, …`
/// for their swaps), in the low 64 bits of the result; with `TOP_HALF`, only its top 32 bits
/// are computed (the rest is garbage), enough for 16 bits per axis or fewer. One XOR gives the
/// flipped copies (`lut::tile_versions`); `lut::digit_tiles` walks the states; each tile's 16
/// key bits are then inserted (`pinsrw`) straight from the `digits` table into their lane.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn hilbert_key<const TOP_HALF: bool>(tiles: __m128i) -> __m128i {
    let digits = &crate::lut::TILES.digits;
    // SAFETY: SSE2 register arithmetic (the cfg guarantees SSE2), then a transmute between
    // `[__m128i; 2]` and `[u16; 16]`: both are 32 bytes of plain integers, and every bit pattern
    // is a valid `[u16; 16]`.
    let versions = unsafe {
        let flipped = _mm_xor_si128(tiles, _mm_set1_epi32(-1));
        std::mem::transmute::<[__m128i; 2], [u16; 16]>([tiles, flipped])
    };
    if TOP_HALF {
        let [t2, t3] = crate::lut::digit_tiles_top(&versions).map(|t| digits[usize::from(t)]);
        // SAFETY: SSE2 register arithmetic (the cfg guarantees SSE2).
        return unsafe {
            let key = _mm_insert_epi16::<3>(tiles, i32::from(t3));
            _mm_insert_epi16::<2>(key, i32::from(t2))
        };
    }
    let [t0, t1, t2, t3] = crate::lut::digit_tiles(&versions).map(|t| digits[usize::from(t)]);
    // SAFETY: SSE2 register arithmetic (the cfg guarantees SSE2).
    unsafe {
        let key = _mm_insert_epi16::<3>(tiles, i32::from(t3));
        let key = _mm_insert_epi16::<2>(key, i32::from(t2));
        let key = _mm_insert_epi16::<1>(key, i32::from(t1));
        _mm_insert_epi16::<0>(key, i32::from(t0))
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
fn morton_batch_bmi2(xs: &[u32], ys: &[u32], shift: u32, out: &mut [u64]) {
    for ((o, &x), &y) in out.iter_mut().zip(xs).zip(ys) {
        *o = morton_bmi2(x, y) >> shift;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn normalize_avx2<const CHECK: bool>(
    vs: &[f64],
    min: f64,
    max: f64,
    scale: f64,
    out: &mut [u32],
) -> bool {
    let n = vs.len().min(out.len());
    let (vs, out) = (&vs[..n], &mut out[..n]);
    let minv = _mm256_set1_pd(min);
    let maxv = _mm256_set1_pd(max);
    let scalev = _mm256_set1_pd(scale);
    let zero = _mm256_setzero_pd();
    let top = _mm256_set1_pd(crate::grid::TOP);
    let magic = _mm256_set1_pd(crate::grid::MAGIC);
    // Gathers the low dword of each 64-bit lane into the low 128 bits.
    let pack = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    let mut ok = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));

    let cells = |v: __m256d| {
        let t = _mm256_mul_pd(_mm256_sub_pd(v, minv), scalev);
        // `maxpd` returns its second operand when either is NaN: NaN becomes 0.
        let t = _mm256_min_pd(_mm256_max_pd(t, zero), top);
        let t = _mm256_round_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(t);
        _mm256_permutevar8x32_epi32(_mm256_castpd_si256(_mm256_add_pd(t, magic)), pack)
    };

    let mut v_chunks = vs.chunks_exact(8);
    let mut o_chunks = out.chunks_exact_mut(8);
    for (v8, o8) in (&mut v_chunks).zip(&mut o_chunks) {
        // SAFETY: `v8` has exactly 8 f64, so both unaligned 4-lane loads are in bounds.
        let (a, b) = unsafe {
            (
                _mm256_loadu_pd(v8.as_ptr()),
                _mm256_loadu_pd(v8.as_ptr().add(4)),
            )
        };
        if CHECK {
            let in_a = _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GE_OQ>(a, minv),
                _mm256_cmp_pd::<_CMP_LE_OQ>(a, maxv),
            );
            let in_b = _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GE_OQ>(b, minv),
                _mm256_cmp_pd::<_CMP_LE_OQ>(b, maxv),
            );
            ok = _mm256_and_pd(ok, _mm256_and_pd(in_a, in_b));
        }
        let packed = _mm256_permute2x128_si256::<0x20>(cells(a), cells(b));
        // SAFETY: `o8` has exactly 8 u32 = 32 bytes; the store is unaligned.
        unsafe { _mm256_storeu_si256(o8.as_mut_ptr().cast(), packed) };
    }
    let tail_ok = crate::grid::normalize_portable::<CHECK>(
        v_chunks.remainder(),
        min,
        max,
        scale,
        o_chunks.into_remainder(),
    );
    !CHECK || (_mm256_movemask_pd(ok) == 0xf && tail_ok)
}

/// Logical right shift of each 32-bit lane by a constant.
#[cfg(target_arch = "x86_64")]
macro_rules! srl {
    ($v:expr, $n:literal) => {
        _mm256_srli_epi32::<$n>($v)
    };
}

/// One round of the prefix scan over the four transform bit-planes.
#[cfg(target_arch = "x86_64")]
macro_rules! scan_round {
    ($a:ident, $b:ident, $c:ident, $d:ident, $n:literal, full) => {{
        let (a, b, c, d) = ($a, $b, $c, $d);
        let ab = _mm256_xor_si256(a, b);
        $a = _mm256_xor_si256(
            _mm256_and_si256(a, srl!(a, $n)),
            _mm256_and_si256(b, srl!(b, $n)),
        );
        $b = _mm256_xor_si256(
            _mm256_and_si256(a, srl!(b, $n)),
            _mm256_and_si256(b, srl!(ab, $n)),
        );
        $c = _mm256_xor_si256(
            c,
            _mm256_xor_si256(
                _mm256_and_si256(a, srl!(c, $n)),
                _mm256_and_si256(b, srl!(d, $n)),
            ),
        );
        $d = _mm256_xor_si256(
            d,
            _mm256_xor_si256(
                _mm256_and_si256(b, srl!(c, $n)),
                _mm256_and_si256(ab, srl!(d, $n)),
            ),
        );
    }};
    ($a:ident, $b:ident, $c:ident, $d:ident, $n:literal, last) => {{
        let (a, b, c, d) = ($a, $b, $c, $d);
        let ab = _mm256_xor_si256(a, b);
        $c = _mm256_xor_si256(
            c,
            _mm256_xor_si256(
                _mm256_and_si256(a, srl!(c, $n)),
                _mm256_and_si256(b, srl!(d, $n)),
            ),
        );
        $d = _mm256_xor_si256(
            d,
            _mm256_xor_si256(
                _mm256_and_si256(b, srl!(c, $n)),
                _mm256_and_si256(ab, srl!(d, $n)),
            ),
        );
    }};
}

/// Hilbert keys of 8 points of 32-bit cells, unshifted: (keys of lanes 0, 1, 4, 5; keys of
/// lanes 2, 3, 6, 7), the order the in-lane byte unpacks produce. Callers load the points in the
/// lane order `[0, 1, 4, 5, 2, 3, 6, 7]` so that both halves come out in natural order.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
fn hilbert8(x: __m256i, y: __m256i) -> (__m256i, __m256i) {
    let ones = _mm256_set1_epi32(-1);
    // Initial round, primed with x and y.
    let a = _mm256_xor_si256(x, y);
    let b = _mm256_xor_si256(ones, a);
    let c = _mm256_xor_si256(ones, _mm256_or_si256(x, y));
    let d = _mm256_andnot_si256(y, x);
    let mut ra = _mm256_or_si256(a, srl!(b, 1));
    let mut rb = _mm256_xor_si256(srl!(a, 1), a);
    let mut rc = _mm256_xor_si256(
        _mm256_xor_si256(srl!(c, 1), _mm256_and_si256(b, srl!(d, 1))),
        c,
    );
    let mut rd = _mm256_xor_si256(
        _mm256_xor_si256(_mm256_and_si256(a, srl!(c, 1)), srl!(d, 1)),
        d,
    );
    scan_round!(ra, rb, rc, rd, 2, full);
    scan_round!(ra, rb, rc, rd, 4, full);
    scan_round!(ra, rb, rc, rd, 8, full);
    scan_round!(ra, rb, rc, rd, 16, last);
    // Undo the transformation prefix scan and recover the two index bit-planes.
    let a = _mm256_xor_si256(rc, srl!(rc, 1));
    let b = _mm256_xor_si256(rd, srl!(rd, 1));
    let i0 = _mm256_xor_si256(x, y);
    let i1 = _mm256_or_si256(b, _mm256_xor_si256(ones, _mm256_or_si256(i0, a)));
    // Interleave with nibble lookups: `pshufb` spreads each nibble of a plane to the even
    // bits of a byte (the i1 table is pre-shifted to the odd bits), and unpacking the low-
    // and high-nibble bytes side by side widens every 32-bit lane to its 64-bit key.
    let nibble = _mm256_set1_epi8(0x0f);
    let spread_even = _mm256_setr_epi8(
        0x00, 0x01, 0x04, 0x05, 0x10, 0x11, 0x14, 0x15, 0x40, 0x41, 0x44, 0x45, 0x50, 0x51, 0x54,
        0x55, 0x00, 0x01, 0x04, 0x05, 0x10, 0x11, 0x14, 0x15, 0x40, 0x41, 0x44, 0x45, 0x50, 0x51,
        0x54, 0x55,
    );
    let spread_odd = _mm256_slli_epi16::<1>(spread_even);
    let spread = |plane: __m256i, table: __m256i| {
        let lo = _mm256_shuffle_epi8(table, _mm256_and_si256(plane, nibble));
        let hi = _mm256_shuffle_epi8(table, _mm256_and_si256(srl!(plane, 4), nibble));
        (lo, hi)
    };
    let (i0_lo, i0_hi) = spread(i0, spread_even);
    let (i1_lo, i1_hi) = spread(i1, spread_odd);
    let lo = _mm256_or_si256(i0_lo, i1_lo);
    let hi = _mm256_or_si256(i0_hi, i1_hi);
    (_mm256_unpacklo_epi8(lo, hi), _mm256_unpackhi_epi8(lo, hi))
}

/// Inputs from this many points on are prefetched a block ahead (24 bytes a point: about the
/// size of the L2 cache).
#[cfg(target_arch = "x86_64")]
const PREFETCH_MIN_POINTS: usize = 1 << 15;

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn hilbert_points_avx2<const CHECK: bool>(
    grid: &crate::grid::Grid,
    xs: &[f64],
    ys: &[f64],
    out: &mut [u64],
) -> bool {
    let n = xs.len().min(ys.len()).min(out.len());
    let (xs, ys, out) = (&xs[..n], &ys[..n], &mut out[..n]);
    let b = &grid.bounds;
    let shift = 2 * grid.coarsen();
    let count = _mm_cvtsi32_si128(shift as i32);
    let (min_x, max_x) = (_mm256_set1_pd(b.min_x), _mm256_set1_pd(b.max_x));
    let (min_y, max_y) = (_mm256_set1_pd(b.min_y), _mm256_set1_pd(b.max_y));
    let (scale_x, scale_y) = (_mm256_set1_pd(grid.scale_x), _mm256_set1_pd(grid.scale_y));
    let zero = _mm256_setzero_pd();
    let top = _mm256_set1_pd(crate::grid::TOP);
    let magic = _mm256_set1_pd(crate::grid::MAGIC);
    let mut ok = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));

    // The normalisation of `grid::cell32` on 4 values: `floor` of the clamped product, plus
    // 2^52 so the cell lands in the low 32 bits of each 64-bit lane. With `CHECK`, an input
    // with an out-of-bounds value is an error whatever its keys, so the clamp at 0 (which only
    // matters below `min` and for NaN) is skipped.
    let cell4 = |v: __m256d, min: __m256d, scale: __m256d| {
        let t = _mm256_mul_pd(_mm256_sub_pd(v, min), scale);
        // `maxpd` returns its second operand when either is NaN: NaN becomes 0.
        let t = if CHECK { t } else { _mm256_max_pd(t, zero) };
        let t = _mm256_min_pd(t, top);
        _mm256_castpd_ps(_mm256_add_pd(
            _mm256_round_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(t),
            magic,
        ))
    };
    // Cells of points 0..8 (`a` = 0..4, `b` = 4..8) as 8 `u32` lanes in the order
    // `[0, 1, 4, 5, 2, 3, 6, 7]` that `hilbert8` expects: one in-lane shuffle of the low
    // dwords.
    let cells8 = |a: __m256d, b: __m256d, min: __m256d, scale: __m256d| {
        _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(
            cell4(a, min, scale),
            cell4(b, min, scale),
        ))
    };
    let inside = |v: __m256d, min: __m256d, max: __m256d| {
        _mm256_and_pd(
            _mm256_cmp_pd::<_CMP_GE_OQ>(v, min),
            _mm256_cmp_pd::<_CMP_LE_OQ>(v, max),
        )
    };

    // Two passes over at most `BLOCK` points, through cells on the stack: the fused loop (one
    // long dependency chain of ~170 instructions per 8 points) overlaps fewer iterations and
    // measured ~10% slower than two short loops.
    let mut cx = [0u32; crate::grid::BLOCK];
    let mut cy = [0u32; crate::grid::BLOCK];
    // Past the L2 cache the encode pass (pure arithmetic) has time to spare for pulling in the
    // next block's inputs and output lines; on L2-resident inputs the prefetches only cost.
    let prefetch = n >= PREFETCH_MIN_POINTS;
    let mut start = 0;
    while start < n {
        let len = (n - start).min(crate::grid::BLOCK) & !7;
        if len == 0 {
            break;
        }
        let (xs, ys) = (&xs[start..start + len], &ys[start..start + len]);
        let (cx, cy) = (&mut cx[..len], &mut cy[..len]);
        for ((x8, y8), (cx8, cy8)) in xs
            .chunks_exact(8)
            .zip(ys.chunks_exact(8))
            .zip(cx.chunks_exact_mut(8).zip(cy.chunks_exact_mut(8)))
        {
            // SAFETY: `x8` and `y8` have exactly 8 f64, so the unaligned 4-lane loads at
            // offsets 0 and 4 are in bounds.
            let (xa, xb, ya, yb) = unsafe {
                (
                    _mm256_loadu_pd(x8.as_ptr()),
                    _mm256_loadu_pd(x8.as_ptr().add(4)),
                    _mm256_loadu_pd(y8.as_ptr()),
                    _mm256_loadu_pd(y8.as_ptr().add(4)),
                )
            };
            if CHECK {
                let in_x = _mm256_and_pd(inside(xa, min_x, max_x), inside(xb, min_x, max_x));
                let in_y = _mm256_and_pd(inside(ya, min_y, max_y), inside(yb, min_y, max_y));
                ok = _mm256_and_pd(ok, _mm256_and_pd(in_x, in_y));
            }
            // SAFETY: `cx8` and `cy8` have exactly 8 u32 = 32 bytes; the stores are unaligned.
            unsafe {
                _mm256_storeu_si256(cx8.as_mut_ptr().cast(), cells8(xa, xb, min_x, scale_x));
                _mm256_storeu_si256(cy8.as_mut_ptr().cast(), cells8(ya, yb, min_y, scale_y));
            }
        }
        let o = &mut out[start..start + len];
        // The same offsets one block ahead; prefetches never fault, and `wrapping_add` keeps the
        // pointer arithmetic defined past the end of the slices.
        let ahead = (
            xs.as_ptr().wrapping_add(len),
            ys.as_ptr().wrapping_add(len),
            o.as_ptr().wrapping_add(len),
        );
        for (j, ((cx8, cy8), o8)) in cx
            .chunks_exact(8)
            .zip(cy.chunks_exact(8))
            .zip(o.chunks_exact_mut(8))
            .enumerate()
        {
            if prefetch {
                _mm_prefetch::<_MM_HINT_T0>(ahead.0.wrapping_add(8 * j).cast());
                _mm_prefetch::<_MM_HINT_T0>(ahead.1.wrapping_add(8 * j).cast());
                _mm_prefetch::<_MM_HINT_T0>(ahead.2.wrapping_add(8 * j).cast());
            }
            // SAFETY: `cx8` and `cy8` have exactly 8 u32 = 32 bytes; the loads are unaligned.
            let (x, y) = unsafe {
                (
                    _mm256_loadu_si256(cx8.as_ptr().cast()),
                    _mm256_loadu_si256(cy8.as_ptr().cast()),
                )
            };
            let (k0, k1) = hilbert8(x, y);
            let (k0, k1) = (_mm256_srl_epi64(k0, count), _mm256_srl_epi64(k1, count));
            // SAFETY: `o8` has exactly 8 u64 = 64 bytes, written as two unaligned 32-byte
            // stores.
            unsafe {
                _mm256_storeu_si256(o8.as_mut_ptr().cast(), k0);
                _mm256_storeu_si256(o8.as_mut_ptr().add(4).cast(), k1);
            }
        }
        start += len;
    }
    let (xs, ys, out) = (&xs[start..], &ys[start..], &mut out[start..]);
    let mut tail_ok = true;
    for ((o, &x), &y) in out.iter_mut().zip(xs).zip(ys) {
        if CHECK {
            tail_ok &= (x >= b.min_x) & (x <= b.max_x) & (y >= b.min_y) & (y <= b.max_y);
        }
        let (cx, cy) = grid.cells32(x, y);
        *o = encode32_shr(cx, cy, shift);
    }
    !CHECK || (_mm256_movemask_pd(ok) == 0xf && tail_ok)
}
