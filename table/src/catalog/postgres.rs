//! A shared catalog on PostgreSQL in the layout of Java's JdbcCatalog (schema V1), pyiceberg's
//! `SqlCatalog` and `iceberg-catalog-sql`, so that all of them use the same database.
//!
//! A commit is `UPDATE iceberg_tables ... WHERE metadata_location = <expected>` in a
//! transaction: one row updated is the commit, none is a retryable [`Error::CommitConflict`].
//!
//! # A connection that breaks during the swap
//!
//! Whether the swap happened is then found out, never guessed. The swap's transaction first
//! asks for its transaction id, so after a break the catalog reconnects and reads the
//! transaction's fate with `pg_xact_status` (PostgreSQL 13 or newer): `committed` means the
//! commit happened (success); `aborted` means it did not, and the swap is retried on the new
//! connection (the compare-and-swap makes that safe). `in progress` means the old session is
//! still alive (the server has not noticed the break, or a partition keeps it open, holding its
//! row lock): it is terminated (`pg_terminate_backend`, matched by pid and start time so a
//! reused pid is never hit) and the status read again. If the server cannot be reached within
//! [`PostgresCatalog::with_commit_settle_timeout`], the result is
//! [`Error::CommitStateUnknown`]. Re-reading only the pointer would not do: another writer may
//! commit on top of ours between the break and the read, and a pointer that moved on would be
//! taken for a swap that never happened.

use std::fmt;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls};

use super::{Catalog, SQL_CATALOG_DDL as DDL, conflict, validate_warehouse};
use crate::error::{Error, Result};
use crate::ident::{TableIdent, parse_namespace};
use crate::storage::Storage;

/// Concurrent `CREATE TABLE IF NOT EXISTS` of one table can fail in PostgreSQL (a unique
/// violation in its own catalog), so the DDL runs under this transaction-level advisory lock.
const DDL_LOCK: i64 = 0x6765_6f62_6572_6731; // "geoberg1"

/// Rows of other catalog types (views) are invisible, as in the other implementations.
const TABLE_ROWS: &str = "(iceberg_type = 'TABLE' OR iceberg_type IS NULL)";

/// Idle connections kept for reuse.
const POOL_SIZE: usize = 8;
/// Swap attempts when the connection breaks before the swap committed.
const SWAP_ATTEMPTS: usize = 3;
const DEFAULT_SETTLE_TIMEOUT: Duration = Duration::from_secs(30);
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A catalog in a PostgreSQL database; safe to share between threads, processes and machines.
///
/// Holds a small pool of connections; each failure of a connection drops it.
///
/// ```
/// use geoberg_table::{Catalog, PostgresCatalog, TableIdent};
/// # let server = geoberg_testkit::PostgresServer::shared();
/// # let uri = server.url(); // postgresql://postgres@127.0.0.1:<port>/geoberg
/// # let dir = tempfile::tempdir()?;
/// # let warehouse = dir.path();
/// let catalog = PostgresCatalog::connect(&uri, "geoberg", warehouse)?;
/// catalog.create_namespace("geo")?;
/// let t = TableIdent::new("geo", "points")?;
/// catalog.register_table(&t, "file:///wh/geo/points/metadata/00000-a.metadata.json")?;
/// // Every commit is a compare-and-swap; losing a race is a retryable conflict.
/// let err = catalog
///     .swap_metadata_location(&t, "file:///elsewhere.json", "file:///new.json")
///     .unwrap_err();
/// assert!(err.is_retryable());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PostgresCatalog {
    name: String,
    warehouse: String,
    storage: Storage,
    config: postgres::Config,
    server: String,
    pool: Mutex<Vec<Conn>>,
    settle_timeout: Duration,
}

/// A pooled connection and the identity of its server session.
struct Conn {
    client: Client,
    backend: Backend,
}

/// A server session: its pid and start time (a pid alone may be reused).
#[derive(Debug, Clone)]
struct Backend {
    pid: i32,
    started: String,
}

/// How one swap attempt ended.
enum Swap {
    Done,
    /// Nothing was updated; the pointer the catalog holds instead.
    Moved(Option<String>),
}

/// Why one swap attempt failed.
enum SwapFailure {
    /// The server rejected a statement: the transaction is aborted, nothing committed.
    Rejected(postgres::Error),
    /// The connection broke; `xid` is the transaction's id if it was known by then (if not,
    /// the UPDATE was never sent).
    Broken {
        xid: Option<i64>,
        source: postgres::Error,
    },
}

/// The fate of a swap transaction whose connection broke.
enum Fate {
    Committed,
    NotCommitted,
}

impl PostgresCatalog {
    /// Connects to the database at `uri` (`postgresql://user[:password]@host[:port]/db`, also
    /// `postgres://`, with libpq's query parameters such as `connect_timeout`), creates the
    /// catalog tables if absent, for catalog `name`, placing new tables under `warehouse` (an
    /// absolute path or `file://` URI).
    pub fn connect(uri: &str, name: &str, warehouse: impl AsRef<Path>) -> Result<Self> {
        let warehouse = validate_warehouse(warehouse.as_ref())?;
        let redacted = redact_uri(uri);
        if !(uri.starts_with("postgresql://") || uri.starts_with("postgres://")) {
            return Err(Error::InvalidLocation {
                location: redacted,
                reason: "a PostgreSQL catalog URI looks like \
                         postgresql://user[:password]@host[:port]/database"
                    .into(),
            });
        }
        let mut config: postgres::Config = uri.parse().map_err(|source| Error::Postgres {
            server: redacted,
            source,
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("geoberg");
        }
        config.keepalives(true);
        let catalog = PostgresCatalog {
            name: name.to_string(),
            warehouse,
            storage: Storage::new(),
            server: server_name(&config),
            config,
            pool: Mutex::new(Vec::new()),
            settle_timeout: DEFAULT_SETTLE_TIMEOUT,
        };
        let mut conn = catalog.open()?;
        conn.client
            .batch_execute(&format!(
                "BEGIN; SELECT pg_advisory_xact_lock({DDL_LOCK}); {DDL} COMMIT;"
            ))
            .map_err(|e| catalog.error(e))?;
        catalog.give_back(conn);
        Ok(catalog)
    }

    /// The same catalog reading and writing table files through `storage` (object-store
    /// options, credentials, a fault layer).
    pub fn with_storage(mut self, storage: Storage) -> Self {
        self.storage = storage;
        self
    }

    /// How long a commit whose connection broke keeps trying to read back its outcome before
    /// failing with [`Error::CommitStateUnknown`] (default 30 s).
    pub fn with_commit_settle_timeout(mut self, timeout: Duration) -> Self {
        self.settle_timeout = timeout;
        self
    }

    /// The server as `user@host:port/database` (never the password).
    pub fn server(&self) -> &str {
        &self.server
    }

    fn error(&self, source: postgres::Error) -> Error {
        Error::Postgres {
            server: self.server.clone(),
            source,
        }
    }

    fn pool(&self) -> MutexGuard<'_, Vec<Conn>> {
        // Poisoning only means a thread panicked while holding the list; the connections in it
        // are still whole.
        self.pool.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new connection, with its session identity.
    fn open(&self) -> Result<Conn> {
        off_async_runtime(|| self.open_here())
    }

    fn open_here(&self) -> Result<Conn> {
        let mut client = self.config.connect(NoTls).map_err(|e| self.error(e))?;
        let row = client
            .query_typed_one(
                "SELECT pg_backend_pid(), backend_start::text FROM pg_stat_activity \
                 WHERE pid = pg_backend_pid()",
                &[],
            )
            .map_err(|e| self.error(e))?;
        let backend = Backend {
            pid: row.get(0),
            started: row.get(1),
        };
        Ok(Conn { client, backend })
    }

    /// A pooled connection, or a new one.
    fn take(&self) -> Result<(Conn, bool)> {
        let pooled = self.pool().pop();
        match pooled {
            Some(c) if !c.client.is_closed() => Ok((c, true)),
            _ => Ok((self.open()?, false)),
        }
    }

    fn give_back(&self, conn: Conn) {
        let mut pool = self.pool();
        if pool.len() < POOL_SIZE && !conn.client.is_closed() {
            pool.push(conn);
        }
    }

    /// Runs `f` on a connection. A statement the server rejected leaves the connection usable;
    /// any other failure drops it. `idempotent` calls that failed on a pooled connection without
    /// a server answer (it went stale while idle) are repeated once on a new connection.
    fn with_conn<T: Send>(
        &self,
        idempotent: bool,
        mut f: impl FnMut(&mut Client) -> Result<T, postgres::Error> + Send,
    ) -> Result<T> {
        let (mut conn, pooled) = self.take()?;
        match off_async_runtime(|| f(&mut conn.client)) {
            Ok(v) => {
                self.give_back(conn);
                Ok(v)
            }
            Err(e) if e.as_db_error().is_some() => {
                self.give_back(conn);
                Err(self.error(e))
            }
            Err(_) if idempotent && pooled => {
                drop(conn);
                let mut conn = self.open()?;
                let v = off_async_runtime(|| f(&mut conn.client)).map_err(|e| self.error(e))?;
                self.give_back(conn);
                Ok(v)
            }
            Err(e) => Err(self.error(e)),
        }
    }

    /// One attempt of the swap on `client`, in one transaction.
    fn swap_once(
        &self,
        client: &mut Client,
        table: &TableIdent,
        expected: &str,
        new: &str,
    ) -> Result<Swap, SwapFailure> {
        let fail = |xid: Option<i64>| {
            move |source: postgres::Error| {
                if source.as_db_error().is_some() {
                    SwapFailure::Rejected(source)
                } else {
                    SwapFailure::Broken { xid, source }
                }
            }
        };
        // A row lock held longer than this is a session that will not finish (the settle
        // step ends such sessions); fail instead of waiting for ever.
        client
            .batch_execute("BEGIN; SET LOCAL lock_timeout = '30s'")
            .map_err(fail(None))?;
        let xid: i64 = client
            .query_typed_one("SELECT pg_current_xact_id()::text::bigint", &[])
            .map_err(fail(None))?
            .get(0);
        let ns = table.namespace_str();
        let updated = client
            .query_typed(
                &format!(
                    "UPDATE iceberg_tables SET metadata_location = $1, \
                     previous_metadata_location = $2 WHERE catalog_name = $3 \
                     AND table_namespace = $4 AND table_name = $5 AND metadata_location = $2 \
                     AND {TABLE_ROWS} RETURNING 1"
                ),
                &[
                    (&new, Type::VARCHAR),
                    (&expected, Type::VARCHAR),
                    (&self.name.as_str(), Type::VARCHAR),
                    (&ns.as_str(), Type::VARCHAR),
                    (&table.name(), Type::VARCHAR),
                ],
            )
            .map_err(fail(Some(xid)))?;
        if updated.is_empty() {
            let key = Self::key(table);
            let found = client
                .query_typed_opt(&self.pointer_sql(), &self.key_params(&key))
                .map_err(fail(Some(xid)))?
                .and_then(|r| r.get::<_, Option<String>>(0));
            client.batch_execute("ROLLBACK").map_err(fail(Some(xid)))?;
            return Ok(Swap::Moved(found));
        }
        client.batch_execute("COMMIT").map_err(fail(Some(xid)))?;
        Ok(Swap::Done)
    }

    /// Reads the fate of transaction `xid`, whose connection (session `old`) broke, on new
    /// connections until it is known or the settle timeout passes.
    fn settle(&self, xid: i64, old: &Backend, table: &TableIdent, new: &str) -> Result<Fate> {
        let unknown = |reason: String| Error::CommitStateUnknown {
            table: table.to_string(),
            metadata_location: new.to_string(),
            reason,
        };
        let deadline = Instant::now() + self.settle_timeout;
        let mut pause = Duration::from_millis(10);
        let mut last;
        loop {
            match self.open() {
                Ok(mut conn) => {
                    let status = conn.client.query_typed_one(
                        "SELECT pg_xact_status($1::text::xid8)",
                        &[(&xid.to_string(), Type::TEXT)],
                    );
                    match status.map(|r| r.get::<_, Option<String>>(0)) {
                        Ok(Some(s)) if s == "committed" => {
                            self.give_back(conn);
                            return Ok(Fate::Committed);
                        }
                        Ok(Some(s)) if s == "aborted" => {
                            self.give_back(conn);
                            return Ok(Fate::NotCommitted);
                        }
                        Ok(Some(_in_progress)) => {
                            // The old session still runs the transaction; end it.
                            last = format!("transaction {xid} still in progress");
                            let ended = conn.client.query_typed(
                                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                                 WHERE pid = $1 AND backend_start::text = $2",
                                &[(&old.pid, Type::INT4), (&old.started, Type::TEXT)],
                            );
                            if let Err(e) = ended {
                                last = format!("{last}; ending its session failed: {e}");
                            }
                            self.give_back(conn);
                        }
                        Ok(None) => {
                            return Err(unknown(format!(
                                "the server no longer knows transaction {xid}"
                            )));
                        }
                        Err(e) => last = e.to_string(),
                    }
                }
                Err(e) => last = e.to_string(),
            }
            if Instant::now() >= deadline {
                return Err(unknown(format!(
                    "the connection broke during the swap and its outcome could not be read \
                     back within {:?} (last: {last})",
                    self.settle_timeout
                )));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(500));
        }
    }

    fn pointer_sql(&self) -> String {
        format!(
            "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = $1 \
             AND table_namespace = $2 AND table_name = $3 AND {TABLE_ROWS}"
        )
    }

    /// `(namespace, table name)` of `table`, owned, for [`PostgresCatalog::key_params`].
    fn key(table: &TableIdent) -> (String, String) {
        (table.namespace_str(), table.name().to_string())
    }

    /// Parameters `$1..$3` (catalog, namespace, table) of the row of `key`.
    fn key_params<'a>(&'a self, key: &'a (String, String)) -> [(&'a (dyn ToSql + Sync), Type); 3] {
        [
            (&self.name, Type::VARCHAR),
            (&key.0, Type::VARCHAR),
            (&key.1, Type::VARCHAR),
        ]
    }
}

impl fmt::Debug for PostgresCatalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresCatalog")
            .field("name", &self.name)
            .field("server", &self.server)
            .field("warehouse", &self.warehouse)
            .finish_non_exhaustive()
    }
}

impl Catalog for PostgresCatalog {
    fn name(&self) -> &str {
        &self.name
    }

    fn warehouse(&self) -> &str {
        &self.warehouse
    }

    fn storage(&self) -> &Storage {
        &self.storage
    }

    fn create_namespace(&self, namespace: &str) -> Result<()> {
        parse_namespace(namespace)?;
        self.with_conn(true, |c| {
            c.query_typed(
                "INSERT INTO iceberg_namespace_properties \
                 (catalog_name, namespace, property_key, property_value) \
                 VALUES ($1, $2, 'exists', 'true') ON CONFLICT DO NOTHING",
                &[(&self.name, Type::VARCHAR), (&namespace, Type::VARCHAR)],
            )
        })?;
        Ok(())
    }

    fn namespace_exists(&self, namespace: &str) -> Result<bool> {
        let sql = format!(
            "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = $1 AND namespace = $2
             UNION ALL SELECT 1 FROM iceberg_tables WHERE catalog_name = $1
             AND table_namespace = $2 AND {TABLE_ROWS} LIMIT 1"
        );
        self.with_conn(true, |c| {
            c.query_typed(
                &sql,
                &[(&self.name, Type::VARCHAR), (&namespace, Type::VARCHAR)],
            )
            .map(|rows| !rows.is_empty())
        })
    }

    fn list_namespaces(&self) -> Result<Vec<String>> {
        let sql = format!(
            "SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = $1
             UNION SELECT table_namespace FROM iceberg_tables WHERE catalog_name = $1
             AND {TABLE_ROWS}"
        );
        let mut names: Vec<String> = self.with_conn(true, |c| {
            let rows = c.query_typed(&sql, &[(&self.name, Type::VARCHAR)])?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })?;
        // Sorted here, not by the database's collation, to match the other catalogs.
        names.sort();
        Ok(names)
    }

    fn list_tables(&self, namespace: &str) -> Result<Vec<TableIdent>> {
        let sql = format!(
            "SELECT table_name FROM iceberg_tables WHERE catalog_name = $1
             AND table_namespace = $2 AND {TABLE_ROWS}"
        );
        let mut names: Vec<String> = self.with_conn(true, |c| {
            let rows = c.query_typed(
                &sql,
                &[(&self.name, Type::VARCHAR), (&namespace, Type::VARCHAR)],
            )?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })?;
        names.sort();
        names
            .iter()
            .map(|n| TableIdent::new(namespace, n))
            .collect()
    }

    fn metadata_location(&self, table: &TableIdent) -> Result<Option<String>> {
        let key = Self::key(table);
        self.with_conn(true, |c| {
            let row = c.query_typed_opt(&self.pointer_sql(), &self.key_params(&key))?;
            Ok(row.and_then(|r| r.get::<_, Option<String>>(0)))
        })
    }

    fn register_table(&self, table: &TableIdent, metadata_location: &str) -> Result<()> {
        let ns = table.namespace_str();
        if !self.namespace_exists(&ns)? {
            return Err(Error::NoSuchNamespace(ns));
        }
        let inserted = self.with_conn(false, |c| {
            c.query_typed(
                "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name,
                 metadata_location, previous_metadata_location, iceberg_type)
                 VALUES ($1, $2, $3, $4, NULL, 'TABLE') ON CONFLICT DO NOTHING RETURNING 1",
                &[
                    (&self.name, Type::VARCHAR),
                    (&ns, Type::VARCHAR),
                    (&table.name(), Type::VARCHAR),
                    (&metadata_location, Type::VARCHAR),
                ],
            )
            .map(|rows| rows.len())
        })?;
        if inserted == 0 {
            return Err(Error::TableAlreadyExists(table.to_string()));
        }
        Ok(())
    }

    fn swap_metadata_location(&self, table: &TableIdent, expected: &str, new: &str) -> Result<()> {
        off_async_runtime(|| self.swap_here(table, expected, new))
    }

    fn drop_table(&self, table: &TableIdent) -> Result<bool> {
        off_async_runtime(|| self.drop_here(table))
    }

    /// One `UPDATE` of the row's key, as the JDBC catalog renames (`JdbcUtil.RENAME_TABLE_SQL`):
    /// the primary key refuses a taken name, atomically.
    fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        let ns = to.namespace_str();
        if !self.namespace_exists(&ns)? {
            return Err(Error::NoSuchNamespace(ns));
        }
        let sql = format!(
            "UPDATE iceberg_tables SET table_namespace = $4, table_name = $5
             WHERE catalog_name = $1 AND table_namespace = $2 AND table_name = $3 AND {TABLE_ROWS}
             RETURNING 1"
        );
        let key = Self::key(from);
        let to_name = to.name().to_string();
        let renamed = self.with_conn(false, |c| {
            let [a, b, d] = self.key_params(&key);
            let params = [a, b, d, (&ns, Type::VARCHAR), (&to_name, Type::VARCHAR)];
            match c.query_typed(&sql, &params) {
                Err(e) if e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION) => {
                    Ok(None)
                }
                other => other.map(|rows| Some(rows.len())),
            }
        })?;
        match renamed {
            None => Err(Error::TableAlreadyExists(to.to_string())),
            Some(0) => Err(Error::NoSuchTable(from.to_string())),
            Some(_) => Ok(()),
        }
    }
}

impl PostgresCatalog {
    fn swap_here(&self, table: &TableIdent, expected: &str, new: &str) -> Result<()> {
        for attempt in 1.. {
            let (mut conn, _) = self.take()?;
            let failure = match self.swap_once(&mut conn.client, table, expected, new) {
                Ok(Swap::Done) => {
                    self.give_back(conn);
                    return Ok(());
                }
                Ok(Swap::Moved(found)) => {
                    self.give_back(conn);
                    return Err(conflict(table, expected, found));
                }
                Err(SwapFailure::Rejected(e)) => {
                    if conn.client.batch_execute("ROLLBACK").is_ok() {
                        self.give_back(conn);
                    }
                    return Err(self.error(e));
                }
                Err(SwapFailure::Broken { xid, source }) => {
                    let Conn { client, backend } = conn;
                    drop(client);
                    if let Some(xid) = xid
                        && let Fate::Committed = self.settle(xid, &backend, table, new)?
                    {
                        return Ok(());
                    }
                    source
                }
            };
            // Known not committed: the compare-and-swap can simply be tried again.
            if attempt >= SWAP_ATTEMPTS {
                return Err(self.error(failure));
            }
        }
        unreachable!("the loop returns")
    }

    fn drop_here(&self, table: &TableIdent) -> Result<bool> {
        let sql = format!(
            "DELETE FROM iceberg_tables WHERE catalog_name = $1 AND table_namespace = $2
             AND table_name = $3 AND {TABLE_ROWS} RETURNING 1"
        );
        let key = Self::key(table);
        let n = self.with_conn(false, |c| {
            c.query_typed(&sql, &self.key_params(&key))
                .map(|rows| rows.len())
        })?;
        Ok(n > 0)
    }
}

/// `user@host:port/database` of a connection configuration (never its password).
fn server_name(config: &postgres::Config) -> String {
    use postgres::config::Host;
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let host = match h {
                Host::Tcp(name) => name.clone(),
                Host::Unix(path) => path.display().to_string(),
            };
            let port = config
                .get_ports()
                .get(i)
                .or(config.get_ports().first())
                .copied()
                .unwrap_or(5432);
            format!("{host}:{port}")
        })
        .collect();
    let user = config.get_user().unwrap_or("");
    let db = config.get_dbname().unwrap_or(user);
    format!("{user}@{}/{db}", hosts.join(","))
}

/// `uri` with the password of its user info and any `password=` query parameter replaced by
/// `***`, for messages about a URI that may not even parse.
fn redact_uri(uri: &str) -> String {
    let Some(scheme_end) = uri.find("://").map(|i| i + 3) else {
        return "<not a URI>".into();
    };
    let rest = &uri[scheme_end..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(at) => {
            let (userinfo, host) = authority.split_at(at);
            match userinfo.split_once(':') {
                Some((user, _password)) => format!("{user}:***{host}"),
                None => authority.to_string(),
            }
        }
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => kv.to_string(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{}{authority}{tail}", &uri[..scheme_end])
}

/// Runs `f`, a call of the blocking `postgres` client (which drives its own Tokio runtime and
/// panics when called on a thread that is running another one, e.g. from a DataFusion catalog
/// lookup), on a scoped thread of its own when the caller is inside a runtime.
fn off_async_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return f();
    }
    std::thread::scope(|s| match s.spawn(f).join() {
        Ok(v) => v,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        for (uri, want) in [
            (
                "postgresql://alice:s3cr3t@db.example:5433/cat",
                "postgresql://alice:***@db.example:5433/cat",
            ),
            ("postgres://alice@h/db", "postgres://alice@h/db"),
            (
                "postgresql://a:p%40ss@h/db?sslmode=disable&password=s3cr3t",
                "postgresql://a:***@h/db?sslmode=disable&password=***",
            ),
            ("host=h password=s3cr3t", "<not a URI>"),
        ] {
            assert_eq!(redact_uri(uri), want);
        }
        let config: postgres::Config = "postgresql://alice:s3cr3t@db.example:5433/cat"
            .parse()
            .unwrap();
        assert_eq!(server_name(&config), "alice@db.example:5433/cat");
    }

    #[test]
    fn bad_uris_are_refused_without_echoing_the_password() {
        for uri in [
            "mysql://root:s3cr3t@h/db",
            "postgresql://alice:s3cr3t@h:notaport/db",
        ] {
            let err = PostgresCatalog::connect(uri, "c", "/tmp/wh").unwrap_err();
            let text = format!("{err} {err:?}");
            assert!(!text.contains("s3cr3t"), "{text}");
        }
        let err = PostgresCatalog::connect("mysql://h/db", "c", "/tmp/wh").unwrap_err();
        assert!(err.to_string().contains("postgresql://user"), "{err}");
    }
}
