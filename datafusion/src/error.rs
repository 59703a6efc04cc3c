//! The one error type of the crate.

use datafusion::error::DataFusionError;

/// Everything that can go wrong running SQL over geoberg tables.
///
/// Engine errors (parsing, planning, CRS checks of SedonaDB's functions) arrive as
/// [`Error::Engine`]; a geoberg table error raised inside the engine (an append's SRID check,
/// say) is unwrapped back to [`Error::Table`], so its message reaches the user unchanged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A table, catalog or CRS rule of `geoberg-table` refused the operation.
    #[error(transparent)]
    Table(#[from] geoberg_table::Error),
    /// A geoberg statement (`CREATE SPATIAL INDEX`, `SHOW CREATE TABLE`, ...) that does not parse.
    #[error(transparent)]
    Sql(#[from] geoberg_sql::SqlError),
    /// A statement the SQL parser does not accept; nothing of the input ran.
    #[error("syntax error in `{statement}`: {message}; fix the statement (nothing ran)")]
    Syntax {
        /// The statement, as split from the input.
        statement: String,
        /// The parser's message (what it expected, and where).
        message: String,
    },
    /// DataFusion or SedonaDB refused or failed the statement.
    #[error("{0}")]
    Engine(Box<DataFusionError>),
    /// SedonaDB refused the statement for a reason a SQL function fixes: its message, then
    /// which function.
    #[error("{source}; {hint}")]
    EngineHint {
        /// SedonaDB's refusal.
        source: Box<DataFusionError>,
        /// The SQL that fixes it.
        hint: &'static str,
    },
    /// An Arrow kernel failed while building a result.
    #[error(transparent)]
    Arrow(#[from] arrow_schema::ArrowError),
    /// A value the session cannot use, with the fix.
    #[error("invalid {what} {value:?}: {fix}")]
    Invalid {
        /// What kind of value (`catalog`, `table name`, ...).
        what: &'static str,
        /// The value as given.
        value: String,
        /// What to write instead.
        fix: String,
    },
    /// A statement this engine does not run, and what to do instead.
    #[error("{what} is not supported: {fix}")]
    Unsupported {
        /// The statement or feature.
        what: String,
        /// What to do instead.
        fix: String,
    },
    /// The blocking session was used from inside an async runtime, where it cannot wait.
    #[error(
        "BlockingSession::{method} was called inside a Tokio runtime, where blocking would stall \
         it; from async code use Session (its methods are async) instead"
    )]
    InsideAsyncRuntime {
        /// The method called.
        method: &'static str,
    },
    /// The Tokio runtime of a blocking session could not be started.
    #[error("cannot start the query runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

impl From<DataFusionError> for Error {
    fn from(e: DataFusionError) -> Self {
        // A table error that travelled through the engine (DataFusion wraps it, sometimes in
        // context or a shared Arc) is the user's real error: give it back as is.
        match e {
            DataFusionError::External(inner) => match inner.downcast::<Error>() {
                Ok(ours) => *ours,
                Err(inner) => match inner.downcast::<geoberg_table::Error>() {
                    Ok(table) => Error::Table(*table),
                    Err(inner) => Error::Engine(Box::new(DataFusionError::External(inner))),
                },
            },
            DataFusionError::Context(context, inner) => match Error::from(*inner) {
                Error::Engine(inner) => {
                    Error::Engine(Box::new(DataFusionError::Context(context, inner)))
                }
                ours => ours,
            },
            DataFusionError::Shared(shared) => match std::sync::Arc::try_unwrap(shared) {
                Ok(inner) => Error::from(inner),
                Err(shared) => Error::Engine(Box::new(DataFusionError::Shared(shared))),
            },
            other => match engine_hint(&other.to_string()) {
                Some(hint) => Error::EngineHint {
                    source: Box::new(other),
                    hint,
                },
                None => Error::Engine(Box::new(other)),
            },
        }
    }
}

/// The fix, in SQL, for a SedonaDB refusal whose own message names none.
fn engine_hint(message: &str) -> Option<&'static str> {
    if message.contains("Mismatched CRS arguments") {
        Some(
            "geometries compared, joined or measured together must share one CRS: bring one \
             side into the other's with ST_Transform(geom, 'EPSG:<srid>'), or label values \
             that are already in that CRS with ST_SetSRID(geom, <srid>)",
        )
    } else if message.contains("No kernel matching arguments")
        && message.contains("geometry")
        && message.contains("geography")
    {
        Some(
            "a geometry and a geography do not compare: read the geometry's longitude/latitude \
             on the sphere with ST_GeomToGeography(geom) (also ST_ToGeography), or the \
             geography as a planar geometry with ST_GeogToGeometry(geog)",
        )
    } else if message.contains("PROJ library") || message.contains("ProjApi") {
        Some(crate::proj::PROJ_HINT)
    } else {
        None
    }
}

impl From<Error> for DataFusionError {
    fn from(e: Error) -> Self {
        match e {
            Error::Engine(inner) => *inner,
            Error::EngineHint { source, hint } => {
                DataFusionError::Context(hint.to_string(), source)
            }
            other => DataFusionError::External(Box::new(other)),
        }
    }
}

/// A table error as the engine carries it.
pub(crate) fn table_error(e: geoberg_table::Error) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
