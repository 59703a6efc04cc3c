//! The one error type of this crate.

/// Everything that can stop a rewrite. Messages name the offending value and the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RewriteError {
    /// An option key that this rewrite does not know.
    #[error("unknown rewrite option '{key}'; valid options are: {valid}")]
    UnknownOption {
        /// The key as given.
        key: String,
        /// Comma-separated list of the accepted keys.
        valid: String,
    },
    /// An option whose value cannot be parsed or is out of range.
    #[error("invalid value '{value}' for rewrite option '{key}': {reason}")]
    InvalidOption {
        /// The key as given.
        key: String,
        /// The value as given.
        value: String,
        /// What is expected instead.
        reason: String,
    },
    /// A curve whose precision or bounds are invalid, or bounds that do not fit the column.
    #[error(transparent)]
    Crs(#[from] geoberg_crs::CrsError),
    /// The selected files hold coordinates outside the curve bounds.
    #[error(
        "the data of column '{column}' spans [{data_min_x}, {data_min_y}, {data_max_x}, \
         {data_max_y}] (minX, minY, maxX, maxY), which is not inside the Hilbert curve bounds \
         [{curve_min_x}, {curve_min_y}, {curve_max_x}, {curve_max_y}]; pass bounds that cover the \
         data, e.g. hilbert({column}, {precision}, {suggest_min_x}, {suggest_min_y}, \
         {suggest_max_x}, {suggest_max_y})"
    )]
    DataOutsideCurveBounds {
        /// Geometry column.
        column: String,
        /// Precision of the requested curve (for the suggestion).
        precision: u8,
        /// Union of the selected files' bounds.
        data_min_x: f64,
        /// See `data_min_x`.
        data_min_y: f64,
        /// See `data_min_x`.
        data_max_x: f64,
        /// See `data_min_x`.
        data_max_y: f64,
        /// The curve bounds.
        curve_min_x: f64,
        /// See `curve_min_x`.
        curve_min_y: f64,
        /// See `curve_min_x`.
        curve_max_x: f64,
        /// See `curve_min_x`.
        curve_max_y: f64,
        /// Union of curve and data bounds, the smallest widening that works.
        suggest_min_x: f64,
        /// See `suggest_min_x`.
        suggest_min_y: f64,
        /// See `suggest_min_x`.
        suggest_max_x: f64,
        /// See `suggest_min_x`.
        suggest_max_y: f64,
    },
    /// The Hilbert curve rejected its parameters or a coordinate.
    #[error("Hilbert key: {0}")]
    Hilbert(#[from] geoberg_hilbert::Error),
    /// A geometry value could not be decoded.
    #[error("geometry column '{column}' in '{path}': {source}")]
    Geometry {
        /// Geometry column.
        column: String,
        /// Input file.
        path: String,
        /// The decoder's error (it names the row and byte offset).
        source: geoberg_geostats::GeostatsError,
    },
    /// A coordinate of a row lies outside the curve bounds (found while reading).
    #[error(
        "row {row} of '{path}' has its bbox centre outside the Hilbert curve bounds: {source}; \
         widen the bounds of hilbert(...) to cover every value of the column"
    )]
    RowOutsideCurveBounds {
        /// Input file.
        path: String,
        /// Row ordinal in the file.
        row: u64,
        /// The curve's error, with the value and the bounds.
        source: geoberg_hilbert::Error,
    },
    /// The geometry column is missing from an input file or has a non-binary type.
    #[error(
        "input file '{path}' has no binary (WKB) column named '{column}'; found columns: {found}"
    )]
    MissingGeometryColumn {
        /// Input file.
        path: String,
        /// Column that was asked for.
        column: String,
        /// Columns present in the file.
        found: String,
    },
    /// Input files of one partition do not share one schema.
    #[error(
        "input files of partition '{partition}' have different schemas ('{first}' vs '{other}'); \
         rewrite them separately or rewrite them to the current schema first"
    )]
    SchemaMismatch {
        /// Partition key.
        partition: String,
        /// A file with the first schema.
        first: String,
        /// A file with a different schema.
        other: String,
    },
    /// An input batch could not be made into the output schema a [`crate::TargetSchema`]
    /// gives (a value that does not fit the column's current type, a geometry in another CRS).
    #[error("input file '{path}' does not fit the table's current schema: {reason}")]
    Conform {
        /// Input file.
        path: String,
        /// Why, naming the column and the fix.
        reason: String,
    },
    /// An input file's row-lineage column (found by its reserved field id) is not a 64-bit
    /// integer, so its values cannot be carried into the output.
    #[error(
        "input file '{path}' has row-lineage column '{column}' of type {found}; Iceberg \
         requires long (INT64)"
    )]
    InvalidLineageColumn {
        /// Input file.
        path: String,
        /// The column's name in the file.
        column: String,
        /// Its Arrow type.
        found: String,
    },
    /// Reading or writing a Parquet file failed.
    #[error("parquet file '{path}': {source}")]
    Parquet {
        /// The file.
        path: String,
        /// The Parquet error.
        source: parquet::errors::ParquetError,
    },
    /// Building, spilling or reading back Arrow batches failed.
    #[error("arrow while {context}: {source}")]
    Arrow {
        /// What was being done.
        context: String,
        /// The Arrow error.
        source: arrow_schema::ArrowError,
    },
    /// A filesystem operation failed.
    #[error("{context} '{path}': {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The path involved.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A column named in the sort order is missing from an input file.
    #[error(
        "input file '{path}' has no column '{column}' named in the sort order; sort by columns \
         of the table"
    )]
    MissingSortColumn {
        /// Input file.
        path: String,
        /// The column.
        column: String,
    },
    /// A sort order column whose type has no order geoberg can sort or z-order by.
    #[error(
        "column '{column}' of type {data_type} cannot be sorted or z-ordered; use numbers, \
         strings, binary, booleans, dates or timestamps (and hilbert(...) or zorder(...) for a \
         geometry column)"
    )]
    UnsortableColumn {
        /// The column.
        column: String,
        /// Its Arrow type.
        data_type: String,
    },
    /// The plan refers to something that is not in it (a hand-edited or truncated plan).
    #[error("invalid rewrite plan: {0}")]
    InvalidPlan(String),
}

impl RewriteError {
    pub(crate) fn parquet(
        path: impl std::fmt::Display,
        source: parquet::errors::ParquetError,
    ) -> Self {
        RewriteError::Parquet {
            path: path.to_string(),
            source,
        }
    }

    pub(crate) fn arrow(context: impl Into<String>, source: arrow_schema::ArrowError) -> Self {
        RewriteError::Arrow {
            context: context.into(),
            source,
        }
    }

    pub(crate) fn io(
        context: &'static str,
        path: impl std::fmt::Display,
        source: std::io::Error,
    ) -> Self {
        RewriteError::Io {
            context,
            path: path.to_string(),
            source,
        }
    }
}
