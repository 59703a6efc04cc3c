//! A PostgreSQL server from Debian's packages in a temporary directory.

use std::ffi::OsStr;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::binaries::postgres_bindir;
use crate::error::{Error, Result};
use crate::ports::{START_ATTEMPTS, free_ports, start_lock};
use crate::reaper::Reaper;
use crate::run::{log_tail, run};

/// The superuser of every server (trust authentication, no password).
pub const PG_USER: &str = "postgres";
/// The database created at start.
pub const PG_DATABASE: &str = "geoberg";

/// A running PostgreSQL server on 127.0.0.1 with its own data directory; stopped
/// (`pg_ctl stop -m immediate`) and deleted on drop, or by its watchdog if the process dies.
///
/// `initdb` refuses to run as root, so as root every server command runs as the `postgres` user
/// (created by the Debian package) through `runuser`, in a directory owned by it.
#[derive(Debug)]
pub struct PostgresServer {
    port: u16,
    dir: PathBuf,
    bindir: PathBuf,
    reaper: Reaper,
}

impl PostgresServer {
    /// Starts a server, panicking with a message that names the fix if it cannot (a test
    /// harness wants that; see [`PostgresServer::try_start`]).
    pub fn start() -> Self {
        Self::try_start().unwrap_or_else(|e| panic!("{e}"))
    }

    /// One server for the whole test process, started on first use (a database per test keeps
    /// tests apart: [`PostgresServer::create_database`]). Its watchdog stops it when the process
    /// exits.
    pub fn shared() -> &'static Self {
        static SHARED: OnceLock<PostgresServer> = OnceLock::new();
        SHARED.get_or_init(Self::start)
    }

    /// Starts a server: `initdb`, then `pg_ctl start` on a free port (retried on another port
    /// if that one was taken meanwhile), then creates the database [`PG_DATABASE`].
    pub fn try_start() -> Result<Self> {
        let bindir = postgres_bindir()?;
        let as_postgres = RunAs::detect()?;
        let dir = tempdir("geoberg-pg-")?;
        // From here on the watchdog owns the directory: it is removed whatever happens next.
        let mut reaper = Reaper::spawn(
            r#"if [ "$1" = runuser ]; then runuser -u postgres -- "$2/pg_ctl" -D "$3/data" -m immediate -w stop
else "$2/pg_ctl" -D "$3/data" -m immediate -w stop; fi >/dev/null 2>&1
rm -rf "$3""#,
            [
                OsStr::new(as_postgres.mode()),
                bindir.as_os_str(),
                dir.as_os_str(),
            ],
        )?;
        as_postgres.chown(&dir)?;
        let data = dir.join("data");
        let mut initdb = as_postgres.command(&bindir.join("initdb"));
        initdb.arg("-D").arg(&data).args([
            "-A",
            "trust",
            "-U",
            PG_USER,
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ]);
        run(&mut initdb)?;
        let log = dir.join("postgres.log");
        let mut last = String::new();
        for _ in 0..START_ATTEMPTS {
            let _guard = start_lock();
            let port = free_ports(1)?[0];
            // Durability is not under test: no fsync makes the many small commits fast.
            let options = format!(
                "-p {port} -k {} -c listen_addresses=127.0.0.1 -c max_connections=300 \
                 -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
                dir.display()
            );
            let mut pg_ctl = as_postgres.command(&bindir.join("pg_ctl"));
            pg_ctl
                .arg("-D")
                .arg(&data)
                .arg("-l")
                .arg(&log)
                .args(["-w", "-t", "60", "-o", &options, "start"]);
            match run(&mut pg_ctl) {
                Ok(_) => {
                    let server = PostgresServer {
                        port,
                        dir,
                        bindir,
                        reaper,
                    };
                    server.create_database(PG_DATABASE)?;
                    return Ok(server);
                }
                Err(e) => {
                    let tail = log_tail(&log);
                    if !tail.contains("could not bind") && !tail.contains("already in use") {
                        reaper.finish();
                        return Err(Error::Start {
                            server: "PostgreSQL",
                            reason: e.to_string(),
                            log,
                            log_tail: tail,
                        });
                    }
                    last = e.to_string();
                }
            }
        }
        reaper.finish();
        Err(Error::Start {
            server: "PostgreSQL",
            reason: format!("no free port after {START_ATTEMPTS} attempts: {last}"),
            log_tail: log_tail(&log),
            log,
        })
    }

    /// `127.0.0.1`.
    pub fn host(&self) -> &str {
        "127.0.0.1"
    }

    /// The TCP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:<port>`, to put a [`crate::FaultProxy`] in front of.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// The superuser, [`PG_USER`].
    pub fn user(&self) -> &str {
        PG_USER
    }

    /// The database created at start, [`PG_DATABASE`].
    pub fn database(&self) -> &str {
        PG_DATABASE
    }

    /// `postgresql://postgres@127.0.0.1:<port>/geoberg`.
    pub fn url(&self) -> String {
        self.url_for(PG_DATABASE)
    }

    /// The URL of another database of this server.
    pub fn url_for(&self, database: &str) -> String {
        format!("postgresql://{PG_USER}@127.0.0.1:{}/{database}", self.port)
    }

    /// Creates database `name` (an SQL identifier: letters, digits, `_`) and returns its URL.
    pub fn create_database(&self, name: &str) -> Result<String> {
        let valid = !name.is_empty()
            && name.len() < 64
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid {
            return Err(Error::Command {
                command: format!("CREATE DATABASE {name}"),
                reason: "database names here are 1 to 63 letters, digits or '_'".into(),
            });
        }
        let mut client = self.connect(PG_USER)?;
        client
            .batch_execute(&format!("CREATE DATABASE \"{name}\""))
            .map_err(|source| Error::Postgres {
                server: self.server_name("postgres"),
                source,
            })?;
        Ok(self.url_for(name))
    }

    /// Creates a database with a name no other call in this process returns (`t_<pid>_<n>`)
    /// and returns its URL.
    pub fn fresh_database(&self) -> Result<String> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        self.create_database(&format!("t_{}_{n}", std::process::id()))
    }

    /// A new client connection to `database` as the superuser.
    pub fn connect(&self, database: &str) -> Result<postgres::Client> {
        postgres::Config::new()
            .host("127.0.0.1")
            .port(self.port)
            .user(PG_USER)
            .dbname(database)
            .connect(postgres::NoTls)
            .map_err(|source| Error::Postgres {
                server: self.server_name(database),
                source,
            })
    }

    /// The server log so far (for a failing test's message).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("postgres.log")).unwrap_or_default()
    }

    /// The directory holding the data directory, socket and log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The directory of the PostgreSQL binaries in use.
    pub fn bindir(&self) -> &Path {
        &self.bindir
    }

    fn server_name(&self, database: &str) -> String {
        format!("{PG_USER}@127.0.0.1:{}/{database}", self.port)
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        self.reaper.finish();
    }
}

/// A fresh private directory under the system temp dir; the caller removes it.
fn tempdir(prefix: &str) -> Result<PathBuf> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map(tempfile::TempDir::keep)
        .map_err(|e| Error::io("creating a temporary directory", e))
}

/// How server commands run: directly, or (as root) as the `postgres` user via `runuser`.
enum RunAs {
    Myself,
    Postgres { uid: u32, gid: u32 },
}

impl RunAs {
    fn detect() -> Result<Self> {
        let euid = std::fs::metadata("/proc/self")
            .map_err(|e| Error::io("reading /proc/self", e))?
            .uid();
        if euid != 0 {
            return Ok(RunAs::Myself);
        }
        let id = |flag: &str| -> Result<u32> {
            let out = run(Command::new("id").args([flag, PG_USER]))?;
            out.trim().parse().map_err(|_| Error::Command {
                command: format!("id {flag} {PG_USER}"),
                reason: format!("unexpected output {out:?}"),
            })
        };
        match (id("-u"), id("-g")) {
            (Ok(uid), Ok(gid)) => Ok(RunAs::Postgres { uid, gid }),
            _ => Err(Error::MissingBinary {
                what: "the `postgres` user (initdb refuses to run as root)",
                looked: "id -u postgres".into(),
                install: crate::binaries::PG_INSTALL.into(),
            }),
        }
    }

    fn command(&self, program: &Path) -> Command {
        match self {
            RunAs::Myself => Command::new(program),
            RunAs::Postgres { .. } => {
                let mut c = Command::new("runuser");
                c.args(["-u", PG_USER, "--"]).arg(program);
                c
            }
        }
    }

    /// How the watchdog script runs `pg_ctl`: `runuser` or `direct`.
    fn mode(&self) -> &'static str {
        match self {
            RunAs::Myself => "direct",
            RunAs::Postgres { .. } => "runuser",
        }
    }

    fn chown(&self, dir: &Path) -> Result<()> {
        if let RunAs::Postgres { uid, gid } = self {
            std::os::unix::fs::chown(dir, Some(*uid), Some(*gid))
                .map_err(|e| Error::io(format!("chown postgres {}", dir.display()), e))?;
        }
        Ok(())
    }
}
