//! The one error type of the crate.

use std::path::PathBuf;

/// Why a server or proxy could not be started or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A server binary is not installed; the message names the command that installs it.
    #[error(
        "{what} not found (looked in: {looked}). Install it with `{install}`, or run \
         `bash .ci/install-servers`, which installs every server the tests use"
    )]
    MissingBinary {
        /// The program(s) that were looked for.
        what: &'static str,
        /// The places searched, in order.
        looked: String,
        /// The exact command that installs it on Debian.
        install: String,
    },
    /// A server process failed to start or to become ready.
    #[error("{server} did not start: {reason}\n--- last lines of its log ({log}) ---\n{log_tail}")]
    Start {
        /// `PostgreSQL` or `SeaweedFS`.
        server: &'static str,
        /// What went wrong.
        reason: String,
        /// The log file.
        log: PathBuf,
        /// Its last lines.
        log_tail: String,
    },
    /// A command of the harness (initdb, pg_ctl, chown, ...) failed.
    #[error("`{command}` failed: {reason}")]
    Command {
        /// The command line.
        command: String,
        /// Exit status and output, or the spawn error.
        reason: String,
    },
    /// Talking to the PostgreSQL server failed.
    #[error("PostgreSQL at {server}: {source}")]
    Postgres {
        /// `user@host:port/db`.
        server: String,
        /// The client error.
        source: postgres::Error,
    },
    /// An S3 request of the harness (creating a bucket) failed.
    #[error("S3 request {request} failed: {reason}")]
    S3 {
        /// Method and path.
        request: String,
        /// Status and body, or the I/O error.
        reason: String,
    },
    /// A socket or file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
