//! Methods every min/max-bounds curve shares, generated once for [`crate::HilbertCurve`] and
//! [`crate::ZOrderCurve`] so their behaviour (validation, clamping, batches, Arrow) cannot drift.

use crate::Error;
use crate::batch::{self, CellEncoder};
use crate::grid::BLOCK;
use arrow_array::{Array, Float64Array, UInt64Array};

/// Arrow helper behind `encode_arrow`: null in either input gives null out; the value slots of
/// null rows are not validated (Arrow leaves them unspecified).
pub(crate) fn encode_arrow<const CHECK: bool, C: CellEncoder>(
    curve: &C,
    xs: &Float64Array,
    ys: &Float64Array,
) -> Result<UInt64Array, Error> {
    let n = xs.len();
    batch::check_lengths(n, ys.len(), n)?;
    let nulls = match (xs.nulls(), ys.nulls()) {
        (None, None) => None,
        (Some(a), None) => Some(a.clone()),
        (None, Some(b)) => Some(b.clone()),
        (Some(a), Some(b)) => Some((a.inner() & b.inner()).into()),
    };
    let mut out = vec![0u64; n];
    let (x_values, y_values): (&[f64], &[f64]) = (xs.values(), ys.values());
    match &nulls {
        None => batch::encode::<CHECK, C>(curve, x_values, y_values, &mut out, 0)?,
        Some(valid) if valid.null_count() == n => {}
        Some(valid) => {
            // Null rows get the bounds' minimum, which is always valid, so one checked pass
            // over a scratch block serves every row without a per-row branch in the kernel.
            let b = curve.grid().bounds;
            let mut sx = [0f64; BLOCK];
            let mut sy = [0f64; BLOCK];
            for (start, o) in (0..n).step_by(BLOCK).zip(out.chunks_mut(BLOCK)) {
                let len = o.len();
                for j in 0..len {
                    let live = valid.is_valid(start + j);
                    sx[j] = if live { x_values[start + j] } else { b.min_x };
                    sy[j] = if live { y_values[start + j] } else { b.min_y };
                }
                batch::encode::<CHECK, C>(curve, &sx[..len], &sy[..len], o, start)?;
            }
        }
    }
    Ok(UInt64Array::new(out.into(), nulls))
}

/// The shared public methods of a curve type with fields `grid: Grid` and `accel: Accel`.
macro_rules! curve_methods {
    ($name:literal) => {
        /// Bits per axis; keys lie in `[0, 4^precision)`.
        pub fn precision(&self) -> u8 {
            self.grid.precision
        }

        /// The rectangle the curve covers.
        pub fn bounds(&self) -> $crate::Bounds {
            self.grid.bounds
        }

        /// The kernel batch calls run on.
        pub fn kernel(&self) -> $crate::Kernel {
            self.accel.kernel()
        }

        /// The same curve on a chosen kernel (for example [`Kernel::Portable`] to compare paths);
        /// an error if this CPU cannot run it. Keys are identical on every kernel.
        ///
        /// [`Kernel::Portable`]: crate::Kernel::Portable
        pub fn with_kernel(mut self, kernel: $crate::Kernel) -> Result<Self, $crate::Error> {
            self.accel = $crate::kernel::Accel::new(kernel)?;
            Ok(self)
        }

        #[doc = concat!("The ", $name, " key of `(x, y)`.")]
        ///
        /// The cell on each axis is `floor((v - min) * (2^p / width))`, with `max` itself in the
        /// last cell. NaN, infinite and out-of-bounds values are errors naming the value and the
        /// bounds.
        #[inline(always)]
        pub fn encode(&self, x: f64, y: f64) -> Result<u64, $crate::Error> {
            match self.key_checked(x, y) {
                Some(key) => Ok(key),
                None => {
                    let (axis, value) = self.grid.bad_value(x, y);
                    Err(self.grid.error(axis, value, None))
                }
            }
        }

        /// Like `encode`, but clips each coordinate into the bounds instead of failing; NaN
        /// goes to the minimum edge.
        #[inline(always)]
        pub fn encode_clamped(&self, x: f64, y: f64) -> u64 {
            let (cx, cy) = self.grid.cells32(x, y);
            self.key32(cx, cy) >> (2 * self.grid.coarsen())
        }

        /// Keys for `xs[i], ys[i]` into `out[i]`. The three slices must have equal lengths. An
        /// invalid value is an error naming the first bad index; `out` is then partly written.
        pub fn encode_batch(
            &self,
            xs: &[f64],
            ys: &[f64],
            out: &mut [u64],
        ) -> Result<(), $crate::Error> {
            $crate::batch::check_lengths(xs.len(), ys.len(), out.len())?;
            $crate::batch::encode::<true, Self>(self, xs, ys, out, 0)
        }

        /// `encode_batch` with `encode_clamped` semantics; fails only on unequal lengths.
        pub fn encode_batch_clamped(
            &self,
            xs: &[f64],
            ys: &[f64],
            out: &mut [u64],
        ) -> Result<(), $crate::Error> {
            $crate::batch::check_lengths(xs.len(), ys.len(), out.len())?;
            $crate::batch::encode::<false, Self>(self, xs, ys, out, 0)
        }

        /// `encode_batch` split across the rayon thread pool; the error, if any, names the
        /// smallest bad index.
        pub fn par_encode_batch(
            &self,
            xs: &[f64],
            ys: &[f64],
            out: &mut [u64],
        ) -> Result<(), $crate::Error> {
            $crate::batch::par_encode::<true, Self>(self, xs, ys, out)
        }

        /// `par_encode_batch` with `encode_clamped` semantics.
        pub fn par_encode_batch_clamped(
            &self,
            xs: &[f64],
            ys: &[f64],
            out: &mut [u64],
        ) -> Result<(), $crate::Error> {
            $crate::batch::par_encode::<false, Self>(self, xs, ys, out)
        }

        /// Keys for two Arrow `Float64Array`s. A row that is null in either input is null in
        /// the output (its value slots are not checked); other rows behave as in
        /// `encode_batch`, with the error index counting rows of the arrays.
        pub fn encode_arrow(
            &self,
            xs: &arrow_array::Float64Array,
            ys: &arrow_array::Float64Array,
        ) -> Result<arrow_array::UInt64Array, $crate::Error> {
            $crate::curve::encode_arrow::<true, Self>(self, xs, ys)
        }

        /// `encode_arrow` with `encode_clamped` semantics; fails only on unequal lengths.
        pub fn encode_arrow_clamped(
            &self,
            xs: &arrow_array::Float64Array,
            ys: &arrow_array::Float64Array,
        ) -> Result<arrow_array::UInt64Array, $crate::Error> {
            $crate::curve::encode_arrow::<false, Self>(self, xs, ys)
        }

        /// The key of cell `(cx, cy)` at this precision (bits above the precision are ignored).
        #[inline]
        pub fn encode_cell(&self, cx: u32, cy: u32) -> u64 {
            let up = self.grid.coarsen();
            let (cx, cy) = (
                ((u64::from(cx) << up) & 0xffff_ffff) as u32,
                ((u64::from(cy) << up) & 0xffff_ffff) as u32,
            );
            self.key32(cx, cy) >> (2 * up)
        }

        /// Cell indices `(cx, cy)` of a key, each in `[0, 2^precision)`. Bits above
        /// `2 * precision` are ignored.
        #[inline]
        pub fn decode(&self, key: u64) -> (u32, u32) {
            let up = self.grid.coarsen();
            let (x, y) = self.cells32(key << (2 * up));
            (x >> up, y >> up)
        }

        /// The closed rectangle of a key's cell. Every point that encodes to `key` lies inside
        /// it (the edges are computed against the encoder, not just analytically).
        pub fn cell_bounds(&self, key: u64) -> $crate::Bounds {
            let (cx, cy) = self.decode(key);
            self.grid.cell_bounds(cx, cy)
        }
    };
}

pub(crate) use curve_methods;
