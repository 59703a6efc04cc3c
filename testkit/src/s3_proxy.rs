//! An HTTP-aware proxy in front of an S3 server that answers, delays, loses or truncates chosen
//! requests.
//!
//! Each client connection is served by one thread, request by request (keep-alive works); each
//! forwarded request goes to the server on a fresh connection, unchanged but for hop-by-hop
//! headers, so SigV4 signatures (which cover the `Host` the client used) still verify.
//! Hand-written on std threads like [`crate::FaultProxy`]: the faults need whole messages, and
//! a full HTTP proxy crate would hide the message boundaries they act on.

use std::io::{self, BufReader, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::http_message::{Request, Response, read_request, read_response};

/// What the proxy does to a request a rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum S3Fault {
    /// Answers with this status (500 `InternalError`, 503 `ServiceUnavailable`, ...) and an
    /// S3 error body; the request is not forwarded.
    Status(u16),
    /// Answers 503 `SlowDown` (S3's throttling answer); the request is not forwarded.
    SlowDown,
    /// Forwards the request and holds the server's reply this long before passing it on (to
    /// run past a client timeout: the server has acted by then).
    Delay(Duration),
    /// Forwards the request, then closes the client connection without a reply: the server
    /// acted (an object was written), the client never hears it.
    DropReply,
    /// Forwards the request, sends the reply's head (announcing the full length) and half its
    /// body, then closes: a truncated (ranged) read.
    TruncateBody,
    /// Closes the client connection without forwarding the request.
    Reset,
}

/// Which requests a fault applies to, and how often.
#[derive(Debug, Clone)]
pub struct S3FaultRule {
    fault: S3Fault,
    method: Option<String>,
    path_contains: Option<String>,
    ranged_only: bool,
    skip: usize,
    times: Option<usize>,
}

impl S3FaultRule {
    /// Applies `fault` once, to the next request.
    pub fn new(fault: S3Fault) -> Self {
        S3FaultRule {
            fault,
            method: None,
            path_contains: None,
            ranged_only: false,
            skip: 0,
            times: Some(1),
        }
    }

    /// Only requests with this method (`GET`, `PUT`, `HEAD`, `POST`, `DELETE`).
    pub fn method(mut self, method: &str) -> Self {
        self.method = Some(method.to_ascii_uppercase());
        self
    }

    /// Only requests whose path and query contain `s`.
    pub fn path_contains(mut self, s: &str) -> Self {
        self.path_contains = Some(s.to_string());
        self
    }

    /// Only requests with a `Range` header.
    pub fn ranged(mut self) -> Self {
        self.ranged_only = true;
        self
    }

    /// Lets the first `n` matching requests through untouched.
    pub fn skip(mut self, n: usize) -> Self {
        self.skip = n;
        self
    }

    /// Applies the fault to `n` matching requests (default 1).
    pub fn times(mut self, n: usize) -> Self {
        self.times = Some(n);
        self
    }

    /// Applies the fault to every matching request.
    pub fn always(mut self) -> Self {
        self.times = None;
        self
    }

    fn matches(&self, req: &Request) -> bool {
        self.method.as_ref().is_none_or(|m| *m == req.method)
            && self
                .path_contains
                .as_ref()
                .is_none_or(|p| req.target.contains(p.as_str()))
            && (!self.ranged_only || req.range().is_some())
    }
}

/// One request the proxy saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Exchange {
    /// Request method.
    pub method: String,
    /// Path and query.
    pub target: String,
    /// The `Range` header, if any.
    pub range: Option<String>,
    /// The fault applied, if any.
    pub fault: Option<S3Fault>,
    /// The server's status, if the request was forwarded and answered.
    pub upstream_status: Option<u16>,
}

/// An HTTP proxy on 127.0.0.1 in front of an S3 server.
///
/// ```no_run
/// use geoberg_testkit::{S3Fault, S3FaultProxy, S3FaultRule, S3Server};
/// let s3 = S3Server::shared();
/// let proxy = S3FaultProxy::start(s3.addr()).unwrap();
/// // Clients use proxy.endpoint_url() (e.g. s3.env_via(&proxy.endpoint_url())).
/// proxy.add(S3FaultRule::new(S3Fault::SlowDown).method("PUT").times(2));
/// proxy.add(S3FaultRule::new(S3Fault::TruncateBody).ranged());
/// ```
#[derive(Debug)]
pub struct S3FaultProxy {
    addr: SocketAddr,
    state: Arc<State>,
    acceptor: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct State {
    upstream: SocketAddr,
    rules: Mutex<Vec<S3FaultRule>>,
    log: Mutex<Vec<S3Exchange>>,
    clients: Mutex<Vec<TcpStream>>,
    stopping: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl S3FaultProxy {
    /// Starts a proxy on a free port of 127.0.0.1 forwarding to the S3 server at `upstream`.
    pub fn start(upstream: SocketAddr) -> io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            upstream,
            rules: Mutex::default(),
            log: Mutex::default(),
            clients: Mutex::default(),
            stopping: AtomicBool::new(false),
        });
        let acceptor = {
            let state = state.clone();
            std::thread::Builder::new()
                .name("s3-fault-proxy-accept".into())
                .spawn(move || accept_loop(listener, state))?
        };
        Ok(S3FaultProxy {
            addr,
            state,
            acceptor: Some(acceptor),
        })
    }

    /// `http://127.0.0.1:<port>`: the endpoint clients use instead of the server's.
    pub fn endpoint_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Adds a rule; rules are checked in order and the first live match applies.
    pub fn add(&self, rule: S3FaultRule) {
        lock(&self.state.rules).push(rule);
    }

    /// Removes every rule.
    pub fn clear(&self) {
        lock(&self.state.rules).clear();
    }

    /// Every request seen so far, in arrival order.
    pub fn exchanges(&self) -> Vec<S3Exchange> {
        lock(&self.state.log).clone()
    }

    /// How many requests got a fault.
    pub fn faults_applied(&self) -> usize {
        lock(&self.state.log)
            .iter()
            .filter(|e| e.fault.is_some())
            .count()
    }
}

impl Drop for S3FaultProxy {
    fn drop(&mut self) {
        self.state.stopping.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        for c in lock(&self.state.clients).drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }
}

fn accept_loop(listener: TcpListener, state: Arc<State>) {
    for client in listener.incoming() {
        if state.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        // Without TCP_NODELAY, a reply written as head then body waits out the peer's delayed
        // ACK: about 40 ms a request.
        let _ = client.set_nodelay(true);
        if let Ok(c) = client.try_clone() {
            lock(&state.clients).push(c);
        }
        let state = state.clone();
        let _ = std::thread::Builder::new()
            .name("s3-fault-proxy-conn".into())
            .spawn(move || {
                let _ = serve(client, &state);
            });
    }
}

/// The fault for `req`, consuming one use of the first live matching rule.
fn pick_fault(state: &State, req: &Request) -> Option<S3Fault> {
    let mut rules = lock(&state.rules);
    let i = rules.iter().position(|r| r.matches(req))?;
    let rule = &mut rules[i];
    if rule.skip > 0 {
        rule.skip -= 1;
        return None;
    }
    let fault = rule.fault;
    match &mut rule.times {
        Some(1) => {
            rules.remove(i);
        }
        Some(n) => *n -= 1,
        None => {}
    }
    Some(fault)
}

fn serve(client: TcpStream, state: &State) -> io::Result<()> {
    let mut out = client.try_clone()?;
    let mut input = BufReader::new(client);
    loop {
        let continue_writer = &mut out;
        let Some(req) = read_request(&mut input, || {
            continue_writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
            continue_writer.flush()
        })?
        else {
            return Ok(());
        };
        let fault = pick_fault(state, &req);
        let mut record = S3Exchange {
            method: req.method.clone(),
            target: req.target.clone(),
            range: req.range(),
            fault,
            upstream_status: None,
        };
        let head = req.method == "HEAD";
        match fault {
            Some(S3Fault::Status(code)) => {
                lock(&state.log).push(record);
                error_response(code).write_to(&mut out, head)?;
            }
            Some(S3Fault::SlowDown) => {
                lock(&state.log).push(record);
                slow_down().write_to(&mut out, head)?;
            }
            Some(S3Fault::Reset) => {
                lock(&state.log).push(record);
                return out.shutdown(Shutdown::Both);
            }
            _ => {
                let resp = forward(state.upstream, &req);
                record.upstream_status = resp.as_ref().ok().map(|r| r.status);
                lock(&state.log).push(record);
                let resp = match resp {
                    Ok(r) => r,
                    Err(e) => Response::new(
                        502,
                        "Bad Gateway",
                        "text/plain",
                        format!("fault proxy: upstream failed: {e}").into_bytes(),
                    ),
                };
                match fault {
                    Some(S3Fault::DropReply) => return out.shutdown(Shutdown::Both),
                    Some(S3Fault::TruncateBody) => {
                        resp.write_head(&mut out, head)?;
                        out.write_all(&resp.body[..resp.body.len() / 2])?;
                        out.flush()?;
                        return out.shutdown(Shutdown::Both);
                    }
                    Some(S3Fault::Delay(d)) => {
                        std::thread::sleep(d);
                        resp.write_to(&mut out, head)?;
                    }
                    _ => resp.write_to(&mut out, head)?,
                }
            }
        }
        if req.wants_close() {
            return out.shutdown(Shutdown::Both);
        }
    }
}

fn forward(upstream: SocketAddr, req: &Request) -> io::Result<Response> {
    let mut server = TcpStream::connect(upstream)?;
    server.set_nodelay(true)?;
    server.set_read_timeout(Some(Duration::from_secs(120)))?;
    req.write_to(&mut server)?;
    read_response(&mut BufReader::new(server), &req.method)
}

fn s3_error(status: u16, reason: &str, code: &str, message: &str) -> Response {
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code>\
         <Message>{message}</Message><RequestId>geoberg-fault-proxy</RequestId></Error>"
    );
    Response::new(status, reason, "application/xml", body.into_bytes())
}

fn error_response(status: u16) -> Response {
    match status {
        500 => s3_error(
            500,
            "Internal Server Error",
            "InternalError",
            "We encountered an internal error. Please try again.",
        ),
        503 => s3_error(
            503,
            "Service Unavailable",
            "ServiceUnavailable",
            "Service is unable to handle request.",
        ),
        _ => s3_error(
            status,
            "Injected Fault",
            "InjectedFault",
            "Injected by the geoberg fault proxy.",
        ),
    }
}

fn slow_down() -> Response {
    s3_error(
        503,
        "Slow Down",
        "SlowDown",
        "Please reduce your request rate.",
    )
}
