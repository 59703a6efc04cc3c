//! Normalisation: from an `f64` coordinate inside [`Bounds`] to a cell index on a `2^32` grid.
//!
//! Every curve in the crate shares this step, so Hilbert, Z-order and GeoHash keys agree on which
//! cell a point is in. The cell at precision `p` is `floor((v - min) * (2^p / width))`, with `max`
//! itself in the last cell. Because scaling by a power of two is exact in binary floating point,
//! that equals the 32-bit cell shifted right by `32 - p`, so one 32-bit computation serves every
//! precision (and the nesting of keys across precisions holds bit for bit).
//!
//! The float-to-integer step avoids Rust's saturating `as u32` cast, which costs about 1 ns a
//! value and blocks vectorisation: the value is clamped in the float domain, then `2^52` is added
//! so the integer lands in the low mantissa bits.

use crate::cast::truncate_to_u32;
use crate::{Axis, Bounds, Error};

pub(crate) const TWO_POW_32: f64 = 4_294_967_296.0;
/// Largest cell index on the 32-bit grid, as a float.
pub(crate) const TOP: f64 = 4_294_967_295.0;
/// `2^52`: adding it to a float in `[0, 2^32)` leaves the rounded integer in the low bits.
pub(crate) const MAGIC: f64 = 4_503_599_627_370_496.0;

/// Bounds plus the precomputed scale to the 32-bit grid and the curve's precision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Grid {
    pub(crate) bounds: Bounds,
    pub(crate) precision: u8,
    /// `2^32 / width`.
    pub(crate) scale_x: f64,
    /// `2^32 / height`.
    pub(crate) scale_y: f64,
}

impl Grid {
    pub(crate) fn new(precision: u8, bounds: Bounds) -> Result<Grid, Error> {
        if !(1..=32).contains(&precision) {
            return Err(Error::InvalidPrecision { precision });
        }
        bounds.validate()?;
        Ok(Grid {
            bounds,
            precision,
            scale_x: TWO_POW_32 / bounds.width(),
            scale_y: TWO_POW_32 / bounds.height(),
        })
    }

    /// `32 - precision`: how far 32-bit cells shift right to reach this precision.
    #[inline]
    pub(crate) fn coarsen(&self) -> u32 {
        32 - u32::from(self.precision)
    }

    #[inline]
    pub(crate) fn check(&self, x: f64, y: f64, index: Option<usize>) -> Result<(), Error> {
        let b = &self.bounds;
        // One branch for the common case; NaN fails every comparison.
        if (x >= b.min_x) & (x <= b.max_x) & (y >= b.min_y) & (y <= b.max_y) {
            return Ok(());
        }
        self.check_slow(x, y, index)
    }

    /// Portable [`Grid::cells32_checked`].
    #[cfg_attr(
        all(target_arch = "x86_64", target_feature = "sse2"),
        allow(
            dead_code,
            reason = "x86-64 uses arch::cells32_checked; tests cover this one"
        )
    )]
    #[inline(always)]
    pub(crate) fn cells32_checked_portable(&self, x: f64, y: f64) -> Option<(u32, u32)> {
        let b = &self.bounds;
        if (x >= b.min_x) & (x <= b.max_x) & (y >= b.min_y) & (y <= b.max_y) {
            Some(self.cells32_in_bounds(x, y))
        } else {
            None
        }
    }

    /// The axis and value that failed the bounds check (x first), for [`Grid::error`]. The
    /// caller builds the error itself, so the compiler sees which variant it is: a `Result` of
    /// a key and an [`Error`] then needs no check of what came back, and the key can be stored
    /// straight from the register it was computed in.
    #[cold]
    #[inline(never)]
    pub(crate) fn bad_value(&self, x: f64, y: f64) -> (Axis, f64) {
        let b = &self.bounds;
        if !(x >= b.min_x && x <= b.max_x) {
            (Axis::X, x)
        } else {
            (Axis::Y, y)
        }
    }

    #[cold]
    fn check_slow(&self, x: f64, y: f64, index: Option<usize>) -> Result<(), Error> {
        let b = &self.bounds;
        if !(x >= b.min_x && x <= b.max_x) {
            return Err(self.error(Axis::X, x, index));
        }
        if !(y >= b.min_y && y <= b.max_y) {
            return Err(self.error(Axis::Y, y, index));
        }
        Ok(())
    }

    #[inline(always)]
    pub(crate) fn error(&self, axis: Axis, value: f64, index: Option<usize>) -> Error {
        Error::OutOfBounds {
            axis,
            value,
            bounds: self.bounds,
            index,
        }
    }

    /// The error for the first out-of-bounds point in `xs`/`ys`, which must contain one.
    #[cold]
    pub(crate) fn first_error(&self, xs: &[f64], ys: &[f64], base: usize) -> Error {
        for (i, (&x, &y)) in xs.iter().zip(ys).enumerate() {
            if let Err(e) = self.check(x, y, Some(base + i)) {
                return e;
            }
        }
        unreachable!("first_error called on a block without a bad value")
    }

    /// 32-bit cells of a point, clamped into the grid (NaN goes to cell 0). Same result as
    /// [`cell32`], with a scalar truncating conversion in place of the vector-friendly one.
    #[inline(always)]
    pub(crate) fn cells32(&self, x: f64, y: f64) -> (u32, u32) {
        let cell = |t: f64| {
            #[expect(clippy::manual_clamp, reason = "NaN must map to cell 0")]
            let t = t.max(0.0).min(TOP);
            truncate_to_u32(t)
        };
        (
            cell((x - self.bounds.min_x) * self.scale_x),
            cell((y - self.bounds.min_y) * self.scale_y),
        )
    }

    /// [`Grid::cells32`] for a point that passed [`Grid::check`]: `v >= min` makes
    /// `(v - min) * scale` non-negative already (rounding is monotone), so only `max` itself,
    /// whose product can round to `2^32`, needs clamping. Same result, one operation shorter on
    /// the path `encode` takes.
    #[cfg_attr(
        all(target_arch = "x86_64", target_feature = "sse2"),
        allow(
            dead_code,
            reason = "only the portable cells32_checked uses it on x86-64"
        )
    )]
    #[inline(always)]
    pub(crate) fn cells32_in_bounds(&self, x: f64, y: f64) -> (u32, u32) {
        let cell = |t: f64| truncate_to_u32(t.min(TOP));
        (
            cell((x - self.bounds.min_x) * self.scale_x),
            cell((y - self.bounds.min_y) * self.scale_y),
        )
    }

    /// Closed bounds of cell `(cx, cy)` at this precision: the smallest coordinate that maps
    /// into the cell, up to the smallest one that maps into the next (or `max` for the last).
    /// Computed against the encoder itself, so every point encoded into the cell lies inside.
    pub(crate) fn cell_bounds(&self, cx: u32, cy: u32) -> Bounds {
        let b = &self.bounds;
        let shift = self.coarsen();
        let x_cell = |v: f64| cell32((v - b.min_x) * self.scale_x) >> shift;
        let y_cell = |v: f64| cell32((v - b.min_y) * self.scale_y) >> shift;
        let last = ((1u64 << self.precision) - 1) as u32;
        let (min_x, max_x) = (
            edge(cx, b.min_x, b.max_x, x_cell),
            if cx >= last {
                b.max_x
            } else {
                edge(cx + 1, b.min_x, b.max_x, x_cell)
            },
        );
        let (min_y, max_y) = (
            edge(cy, b.min_y, b.max_y, y_cell),
            if cy >= last {
                b.max_y
            } else {
                edge(cy + 1, b.min_y, b.max_y, y_cell)
            },
        );
        Bounds {
            min_x,
            min_y,
            max_x,
            max_y,
        }
    }
}

/// The smallest float in `[min, max]` whose cell is `>= cell` (the cell's lower edge), found by
/// bisection over the ordered floats: the encoder's map is monotone, and bisection stays exact
/// even where floats are dense (near zero an ulp walk could take 2^60 steps).
fn edge(cell: u32, min: f64, max: f64, cell_of: impl Fn(f64) -> u32) -> f64 {
    if cell == 0 {
        return min;
    }
    // Invariant: cell_of(lo) < cell <= cell_of(hi).
    let (mut lo, mut hi) = (i128::from(ordered(min)), i128::from(ordered(max)));
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if cell_of(unordered(mid as i64)) >= cell {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    unordered(hi as i64)
}

/// A float's position in numeric order as an integer (both zeros map to 0).
fn ordered(v: f64) -> i64 {
    let magnitude = (v.to_bits() & !(1 << 63)) as i64;
    if v.is_sign_negative() {
        -magnitude
    } else {
        magnitude
    }
}

fn unordered(k: i64) -> f64 {
    let v = f64::from_bits(k.unsigned_abs());
    if k < 0 { -v } else { v }
}

/// `floor(t)` clamped into `[0, 2^32 - 1]`, NaN to 0, without a saturating cast.
#[inline(always)]
pub(crate) fn cell32(t: f64) -> u32 {
    // `f64::max` returns the non-NaN operand, so NaN becomes 0 here (`clamp` would keep NaN).
    #[expect(clippy::manual_clamp, reason = "NaN must map to cell 0")]
    let t = t.max(0.0).min(TOP);
    let r = t + MAGIC;
    // Round-to-nearest put round(t) in the low bits; step down if that rounded up.
    (r.to_bits() as u32).wrapping_sub(u32::from(r - MAGIC > t))
}

/// Portable normalisation pass over one block; returns whether every value was in bounds.
#[inline]
pub(crate) fn normalize_portable<const CHECK: bool>(
    vs: &[f64],
    min: f64,
    max: f64,
    scale: f64,
    out: &mut [u32],
) -> bool {
    let mut ok = true;
    for (o, &v) in out.iter_mut().zip(vs) {
        if CHECK {
            ok &= v >= min && v <= max;
        }
        *o = cell32((v - min) * scale);
    }
    ok
}

/// Points per block: 1024 × (2 × 4 B) of cells stays in L1 beside the inputs.
pub(crate) const BLOCK: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_cells_and_keys_equal_check_then_cells_on_both_paths() {
        let grids = [
            Grid::new(32, Bounds::WGS84).unwrap(),
            Grid::new(7, Bounds::new(-3.5, 10.0, 1e9, 10.25).unwrap()).unwrap(),
        ];
        let specials = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            0.0,
            1e300,
            -1e300,
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for grid in grids {
            let b = grid.bounds;
            let mut values_x = vec![b.min_x, b.max_x, b.min_x.next_down(), b.max_x.next_up()];
            let mut values_y = vec![b.min_y, b.max_y, b.min_y.next_down(), b.max_y.next_up()];
            values_x.extend(specials);
            values_y.extend(specials);
            for _ in 0..200 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let u = (state >> 11) as f64 / (1u64 << 53) as f64;
                values_x.push(b.min_x + u * (b.max_x - b.min_x) * 1.1);
                values_y.push(b.min_y + (1.0 - u) * (b.max_y - b.min_y) * 1.1);
            }
            for &x in &values_x {
                for &y in &values_y {
                    let expected = grid.check(x, y, None).ok().map(|()| grid.cells32(x, y));
                    assert_eq!(grid.cells32_checked(x, y), expected, "({x}, {y})");
                    assert_eq!(grid.cells32_checked_portable(x, y), expected, "({x}, {y})");
                    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
                    {
                        let versions = |(cx, cy)| crate::lut::tile_versions(cx, cy);
                        let key = expected.map(|cells| {
                            crate::lut::encode32_versions(&versions(cells)) >> (2 * grid.coarsen())
                        });
                        assert_eq!(crate::arch::hilbert_checked(&grid, x, y), key, "({x}, {y})");
                    }
                    if expected.is_none() {
                        // Debug text, since NaN values never compare equal.
                        let (axis, value) = grid.bad_value(x, y);
                        let error = format!("{:?}", Err::<(), _>(grid.error(axis, value, Some(3))));
                        assert_eq!(error, format!("{:?}", grid.check(x, y, Some(3))));
                    }
                }
            }
        }
    }
}
