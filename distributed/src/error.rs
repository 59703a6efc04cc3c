//! What can go wrong starting or reaching a cluster, each naming the component and the fix.

/// A failure of the scheduler, an executor or a distributed session.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The scheduler address does not parse.
    #[error(
        "scheduler address {address:?}: {reason}; write it as df://host:port (e.g. df://127.0.0.1:50050)"
    )]
    SchedulerAddress {
        /// The address as given.
        address: String,
        /// Why it does not parse.
        reason: String,
    },
    /// Nothing answers at the scheduler's address.
    #[error(
        "cannot reach the geoberg scheduler at {address}: {source}; start one with `geoberg \
         cluster scheduler --bind {address}` (and executors with `geoberg cluster executor \
         --scheduler {address}`), or run without --scheduler on this machine"
    )]
    SchedulerUnreachable {
        /// `host:port`.
        address: String,
        /// The connection error.
        source: std::io::Error,
    },
    /// The executor cannot open the warehouse's object store.
    #[error(
        "the executor cannot open the warehouse {warehouse}: {source}; give it the same \
         --warehouse and storage credentials (AWS_* environment variables) as the scheduler"
    )]
    Warehouse {
        /// The warehouse location.
        warehouse: String,
        /// Why it cannot be opened.
        source: Box<geoberg_table::Error>,
    },
    /// A Ballista component failed (binding its port, registering with the scheduler, ...).
    #[error("{component}: {message}")]
    Ballista {
        /// `scheduler` or `executor`.
        component: &'static str,
        /// Ballista's message.
        message: String,
    },
    /// The engine failed (setting up SedonaDB's functions, planning).
    #[error(transparent)]
    Engine(#[from] geoberg_datafusion::Error),
}

/// A `Result` with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
