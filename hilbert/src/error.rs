//! The crate's one error type.

use crate::Bounds;

/// Which coordinate of a point an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Axis {
    /// The first coordinate (longitude for WGS84 and GeoHash).
    X,
    /// The second coordinate (latitude for WGS84 and GeoHash).
    Y,
}

impl std::fmt::Display for Axis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Axis::X => "x",
            Axis::Y => "y",
        })
    }
}

/// Everything that can go wrong when building a curve or encoding a point.
///
/// Messages name the offending value and, for coordinates, the bounds they had to lie in, so a
/// caller can tell a bad row from bad bounds without a debugger.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bounds are not finite, not ordered (`min < max`), or so wide or narrow that the
    /// scale to the grid is not a finite number.
    #[error("invalid bounds {bounds}: {reason}")]
    InvalidBounds {
        /// The rejected bounds.
        bounds: Bounds,
        /// Why they were rejected.
        reason: &'static str,
    },
    /// The precision (bits per axis) is outside `1..=32`.
    #[error("precision {precision} is outside 1..=32 bits per axis")]
    InvalidPrecision {
        /// The rejected precision.
        precision: u8,
    },
    /// A coordinate is NaN, infinite, or outside the curve's bounds.
    #[error(
        "{axis} = {value}{} is outside the bounds {bounds} (NaN, infinite and out-of-bounds values are rejected; use the clamped variant to clip them)",
        index_suffix(index)
    )]
    OutOfBounds {
        /// The coordinate that is out of bounds.
        axis: Axis,
        /// The offending value.
        value: f64,
        /// The bounds it had to lie in.
        bounds: Bounds,
        /// Position in the input, for batch calls.
        index: Option<usize>,
    },
    /// The input and output slices of a batch call differ in length.
    #[error("length mismatch: {xs} x values, {ys} y values, {out} output slots")]
    LengthMismatch {
        /// Number of x values.
        xs: usize,
        /// Number of y values.
        ys: usize,
        /// Number of output slots.
        out: usize,
    },
    /// A GeoHash length outside `1..=12` characters.
    #[error("GeoHash length {len} is outside 1..=12 characters")]
    InvalidGeoHashLength {
        /// The rejected length.
        len: u8,
    },
    /// The requested kernel cannot run on this CPU.
    #[error("kernel {kernel:?} is not supported by this CPU")]
    KernelUnavailable {
        /// The requested kernel.
        kernel: crate::Kernel,
    },
}

fn index_suffix(index: &Option<usize>) -> String {
    match index {
        Some(i) => format!(" (at index {i})"),
        None => String::new(),
    }
}
