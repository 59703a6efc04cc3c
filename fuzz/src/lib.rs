//! geoberg's fuzz targets, as plain functions.
//!
//! Each public function takes the fuzzer's bytes, feeds them to one parser or decoder of the
//! workspace, and asserts the properties that must hold for every input: no panic, plus the
//! invariants named in its doc (a box holds every coordinate, round trips give the same value,
//! a pruning plan holds every file a brute force says can match). A failed assertion is a bug.
//!
//! The same functions run in two places:
//!
//! * under libFuzzer, through the thin binaries in `fuzz_targets/` (feature `libfuzzer`;
//!   see `README.md` for the `cargo fuzz` commands on the stable toolchain);
//! * in `cargo test`, where `tests/replay.rs` runs every file of `corpus/<target>/`, so the seed
//!   corpora and every crash ever found stay regression tests.
//!
//! ```
//! // LINESTRING (0 0, 10 5), little-endian ISO WKB.
//! let mut wkb = vec![1, 2, 0, 0, 0, 2, 0, 0, 0];
//! for v in [0.0f64, 0.0, 10.0, 5.0] {
//!     wkb.extend(v.to_le_bytes());
//! }
//! geoberg_fuzz::wkb_bbox(&wkb);
//! geoberg_fuzz::sql_parse(b"CREATE SPATIAL INDEX FOR db.t USING hilbert(geom, 10)");
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod bounds;
mod crs;
mod hilbert;
mod numbers;
mod pruning;
mod reference_wkb;
mod sql;
mod table_bridge;
mod wkb;

pub use bounds::bound_bytes;
pub use crs::{crs_reproject, crs_strings};
pub use hilbert::hilbert_curve;
pub use pruning::pruning_plan;
pub use sql::sql_parse;
pub use table_bridge::{manifest_header, table_metadata};
pub use wkb::{wkb_batch, wkb_bbox};

/// A target: bytes in, a panic on a broken property.
pub type Target = fn(&[u8]);

/// Every target by name, as `cargo fuzz` and `corpus/<name>/` spell it.
pub const TARGETS: &[(&str, Target)] = &[
    ("wkb_bbox", wkb_bbox),
    ("wkb_batch", wkb_batch),
    ("bound_bytes", bound_bytes),
    ("crs_strings", crs_strings),
    ("crs_reproject", crs_reproject),
    ("hilbert_curve", hilbert_curve),
    ("sql_parse", sql_parse),
    ("pruning_plan", pruning_plan),
    ("table_metadata", table_metadata),
    ("manifest_header", manifest_header),
];
