//! The crate's one error type.

/// Everything that can go wrong when configuring generators, layouts and reports.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration value is outside the range the generator or simulator supports.
    #[error("{parameter} = {value} is not allowed: {expected}")]
    InvalidParameter {
        /// Which setting.
        parameter: &'static str,
        /// The value given, formatted.
        value: String,
        /// What would be accepted (the fix).
        expected: &'static str,
    },
    /// A curve rejected its settings (precision, bounds or GeoHash length of a strategy).
    #[error("sort key settings rejected: {0}")]
    Key(#[from] geoberg_hilbert::Error),
    /// Building an Arrow batch failed (a bug in this crate if it ever happens).
    #[error("building an Arrow record batch failed: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// Planning a query over a layout failed.
    #[error("planning a window query over the layout failed: {0}")]
    Pruning(#[from] geoberg_pruning::PruneError),
    /// Writing a report failed.
    #[error("writing the layout report failed: {0}; check that the output path is writable")]
    Io(#[from] std::io::Error),
}

impl Error {
    pub(crate) fn invalid(
        parameter: &'static str,
        value: impl std::fmt::Display,
        expected: &'static str,
    ) -> Self {
        Self::InvalidParameter {
            parameter,
            value: value.to_string(),
            expected,
        }
    }
}
