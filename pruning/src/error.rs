//! The crate's one error type.

use thiserror::Error;

use geoberg_geostats::GeostatsError;

/// Everything planning can reject. Each message names the problem, the values and the fix.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum PruneError {
    /// The window's CRS is not the column's.
    #[error(
        "the filter window is in {window_crs} but the column is in {column_crs}; transform the \
         window to {column_crs} (e.g. ST_Transform) or, if its coordinates already are in \
         {column_crs}, declare that CRS on the window"
    )]
    CrsMismatch {
        /// The window's CRS.
        window_crs: String,
        /// The column's CRS.
        column_crs: String,
    },
    /// The window box cannot be compared.
    #[error("invalid filter window {window}: {problem}")]
    InvalidWindow {
        /// The window, formatted.
        window: String,
        /// What is wrong and how to fix it.
        problem: &'static str,
    },
    /// A distance filter with a distance that is negative, NaN or infinite.
    #[error(
        "distance-within needs a finite distance of at least 0, got {distance}; use intersects \
         for distance 0"
    )]
    InvalidDistance {
        /// The distance given.
        distance: f64,
    },
    /// The window WKB could not be decoded.
    #[error("filter window: {0}")]
    Wkb(#[from] GeostatsError),
    /// More entries than the index addresses.
    #[error(
        "{count} entries exceed the index limit of {limit}; split the table's files into \
         several indexes (for example one per partition)"
    )]
    TooManyEntries {
        /// Entries given.
        count: usize,
        /// Largest supported count.
        limit: usize,
    },
    /// The pruning assertion failed: the plan reads a larger share of files than allowed.
    #[error(
        "pruning regressed: {scanned}/{total} files scanned ({percent:.2}%), more than the \
         allowed {max_percent:.2}%; check that the geometry column still has bounds in the \
         manifests (metrics mode, column position vs the statistics limit) and that the table \
         is clustered, e.g. CREATE SPATIAL INDEX"
    )]
    PruningRegressed {
        /// Files the plan reads.
        scanned: u64,
        /// Files in the index.
        total: u64,
        /// `scanned / total` in percent.
        percent: f64,
        /// The allowed maximum in percent.
        max_percent: f64,
    },
    /// `assert_pruning` called with a fraction outside `[0, 1]`.
    #[error("max_fraction must be between 0 and 1, got {value}; pass e.g. 0.05 for 5%")]
    InvalidFraction {
        /// The value given.
        value: f64,
    },
}
