//! The one error type of the tool: every failure a user can cause, with its fix.

use std::path::PathBuf;

/// Everything a `geoberg` command can fail with. `main` prints the message and exits non-zero.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A table operation failed (unknown table, SRID rule, commit conflict, I/O ...).
    #[error(transparent)]
    Table(#[from] geoberg_table::Error),
    /// A statement did not parse or is not one this tool runs.
    #[error(transparent)]
    Sql(#[from] geoberg_sql::SqlError),
    /// The SQL engine refused or failed a statement (a table error raised inside it arrives
    /// as [`CliError::Table`]).
    #[error(transparent)]
    Engine(geoberg_datafusion::Error),
    /// A cluster's scheduler or executor could not start, or was not reachable.
    #[cfg(feature = "cluster")]
    #[error(transparent)]
    Cluster(geoberg_distributed::Error),
    /// A cluster command in a binary built without Ballista.
    #[cfg(not(feature = "cluster"))]
    #[error(
        "this geoberg was built without the cluster feature (Ballista); rebuild it with \
         `cargo build --release -p geoberg-cli --features cluster` to run `cluster` commands \
         and `--scheduler`"
    )]
    ClusterNotBuilt,
    /// Planning a spatial filter failed, or the pruning assertion did not hold.
    #[error(transparent)]
    Pruning(#[from] geoberg_pruning::PruneError),
    /// A geometry value or bound could not be read.
    #[error(transparent)]
    Geostats(#[from] geoberg_geostats::GeostatsError),
    /// The demo data generator rejected its settings.
    #[error("demo data: {0}")]
    BenchData(#[from] geoberg_bench_data::Error),
    /// An Arrow kernel failed on data we read.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// A file or directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A read-only command was pointed at a warehouse that has no catalog yet.
    #[error(
        "no catalog database at {path}; create a table first (`geoberg demo`, `geoberg import` \
         or `geoberg sql \"CREATE TABLE ...\"`), or point --warehouse / --catalog-db at an \
         existing warehouse"
    )]
    NoCatalog {
        /// The catalog database path that was tried.
        path: PathBuf,
    },
    /// A command-line value that is well-formed for clap but wrong for the operation.
    #[error("invalid {what} {value:?}: {fix}")]
    InvalidArgument {
        /// Which argument.
        what: &'static str,
        /// The value given.
        value: String,
        /// What to pass instead.
        fix: String,
    },
    /// An audit found rows or files that break the bbox policy.
    #[error("audit of {table} failed: {problems}")]
    AuditFailed {
        /// `namespace.table`.
        table: String,
        /// The violations, counted.
        problems: String,
    },
}

impl From<geoberg_datafusion::Error> for CliError {
    fn from(e: geoberg_datafusion::Error) -> Self {
        match e {
            geoberg_datafusion::Error::Table(e) => CliError::Table(e),
            geoberg_datafusion::Error::Sql(e) => CliError::Sql(e),
            other => CliError::Engine(other),
        }
    }
}

#[cfg(feature = "cluster")]
impl From<geoberg_distributed::Error> for CliError {
    fn from(e: geoberg_distributed::Error) -> Self {
        match e {
            geoberg_distributed::Error::Engine(e) => CliError::from(e),
            other => CliError::Cluster(other),
        }
    }
}

impl CliError {
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        CliError::Io {
            path: path.into(),
            source,
        }
    }

    /// A bad argument value with its fix.
    pub fn invalid(what: &'static str, value: impl ToString, fix: impl Into<String>) -> Self {
        CliError::InvalidArgument {
            what,
            value: value.to_string(),
            fix: fix.into(),
        }
    }
}

/// Result with [`CliError`].
pub type Result<T, E = CliError> = std::result::Result<T, E>;
