//! Space-filling-curve keys for points inside known bounds: Hilbert, with Z-order and GeoHash
//! for comparison.
//!
//! A Hilbert key maps a point `(x, y)` to one `u64` so that points close on the map tend to be
//! close in key order. Sorting rows by it clusters each file and row group into a compact area,
//! so per-file bounding boxes stay small and spatial filters prune more. This crate computes that
//! key for whole columns fast: a [`HilbertCurve`] fixes the [`Bounds`] and the precision (bits per
//! axis, 1..=32); each coordinate is scaled to a cell on a `2^p × 2^p` grid, and the cell pair is
//! encoded in the classic `xy2d` orientation (the one DuckDB's `ST_Hilbert` uses, so keys can be
//! cross-checked there at 16 bits with the same bounds).
//!
//! Batch calls ([`HilbertCurve::encode_batch`], [`HilbertCurve::par_encode_batch`], and the
//! Arrow helper [`HilbertCurve::encode_arrow`]) work in blocks of 1024 points: a normalisation
//! pass without float-to-int casts, then a branch-free parallel-prefix encoder in explicit AVX2
//! when the CPU has it ([`Kernel`]), or lookup tables over 8-bit tiles otherwise. The
//! single-point [`HilbertCurve::encode`] uses the tables (four tiles, a three-step state chain).
//! All paths produce identical keys.
//!
//! Values outside the bounds, NaN and infinities are errors naming the value and the bounds;
//! the `*_clamped` variants clip instead for callers who choose that.
//!
//! ```
//! use geoberg_hilbert::{Bounds, HilbertCurve};
//!
//! let curve = HilbertCurve::wgs84(16)?;
//! let lon = [21.01, 21.02, -0.12, 139.69];
//! let lat = [52.23, 52.24, 51.51, 35.69];
//! let mut keys = [0u64; 4];
//! curve.encode_batch(&lon, &lat, &mut keys)?;
//! assert_eq!(keys[0], curve.encode(21.01, 52.23)?);
//!
//! // Nearby points share a long key prefix; every key's cell contains its point.
//! assert_eq!(keys[0] >> 12, keys[1] >> 12);
//! assert!(curve.cell_bounds(keys[3]).contains(139.69, 35.69));
//!
//! // Out-of-bounds input is an error that names the value.
//! let err = curve.encode(200.0, 0.0).unwrap_err();
//! assert!(err.to_string().contains("x = 200"));
//! # Ok::<(), geoberg_hilbert::Error>(())
//! ```

#![deny(missing_docs)]
#![deny(unsafe_code)]

#[allow(unsafe_code)]
mod arch;
mod batch;
mod bounds;
#[allow(unsafe_code)]
mod cast;
mod curve;
mod error;
mod geohash;
mod grid;
mod hilbert;
mod kernel;
mod lut;
mod scalar;
mod zorder;

pub use bounds::Bounds;
pub use error::{Axis, Error};
pub use geohash::GeoHash;
pub use hilbert::HilbertCurve;
pub use kernel::Kernel;
pub use zorder::ZOrderCurve;

/// Points per block in batch calls; batch inputs of any length are accepted.
pub const BLOCK_SIZE: usize = grid::BLOCK;
