//! A TCP proxy that cuts connections when told to, for faults of wire protocols such as
//! PostgreSQL's.
//!
//! Written here on std threads (two per connection) rather than taken from a crate: test
//! proxies on crates.io (toxiproxy clients need the toxiproxy server) cannot cut a connection at
//! a chosen request, and the whole mechanism is a byte pump with a pattern check.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// When an armed [`Cut`] fires, relative to the client bytes that contain its pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutMoment {
    /// The bytes are not forwarded: the server never sees the request.
    BeforeForwarding,
    /// The bytes are forwarded, the server's first reply to them is swallowed and the
    /// connection is cut: the request ran, the client never hears how.
    AfterReply,
}

/// A one-shot cut of the first connection whose client sends `pattern` (at most 256 bytes;
/// found within one read or across two consecutive reads).
#[derive(Debug, Clone)]
pub struct Cut {
    pattern: Vec<u8>,
    moment: CutMoment,
    keep_server_open: bool,
}

impl Cut {
    /// Cuts before `pattern` reaches the server.
    pub fn before(pattern: impl AsRef<[u8]>) -> Self {
        Cut {
            pattern: pattern.as_ref().to_vec(),
            moment: CutMoment::BeforeForwarding,
            keep_server_open: false,
        }
    }

    /// Forwards `pattern`, drops the server's reply and cuts.
    pub fn after_reply(pattern: impl AsRef<[u8]>) -> Self {
        Cut {
            pattern: pattern.as_ref().to_vec(),
            moment: CutMoment::AfterReply,
            keep_server_open: false,
        }
    }

    /// Cuts only the client's side and leaves the server's connection open (a network
    /// partition: the server does not notice, and e.g. keeps a transaction's locks) until the
    /// proxy is dropped or [`FaultProxy::release_held`] is called.
    pub fn keep_server_open(mut self) -> Self {
        self.keep_server_open = true;
        self
    }
}

/// A TCP proxy on 127.0.0.1 in front of `upstream`, controllable from a test.
///
/// ```no_run
/// use geoberg_testkit::{Cut, FaultProxy, PostgresServer};
/// let pg = PostgresServer::shared();
/// let proxy = FaultProxy::start(pg.addr()).unwrap();
/// let url = format!("postgresql://postgres@{}/geoberg", proxy.addr());
/// proxy.arm(Cut::after_reply("COMMIT")); // the next COMMIT runs, its reply is lost
/// ```
#[derive(Debug)]
pub struct FaultProxy {
    addr: SocketAddr,
    state: Arc<State>,
    acceptor: Option<JoinHandle<()>>,
}

#[derive(Debug, Default)]
struct State {
    upstream: Mutex<Option<SocketAddr>>,
    cuts: Mutex<Vec<Cut>>,
    connections: Mutex<Vec<Arc<Connection>>>,
    refuse: AtomicBool,
    stopping: AtomicBool,
    accepted: AtomicUsize,
    fired: AtomicUsize,
}

#[derive(Debug)]
struct Connection {
    client: TcpStream,
    server: TcpStream,
    /// Set by an [`CutMoment::AfterReply`] cut: the next server bytes are swallowed and the
    /// connection cut; the flag says whether the server side stays open.
    drop_next_reply: Mutex<Option<bool>>,
    cut: AtomicBool,
    held: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Connection {
    /// Closes the client side, and the server side unless it is to be held open.
    fn cut(&self, keep_server_open: bool) {
        self.cut.store(true, Ordering::SeqCst);
        // Marked held before the client side closes: the pump that wakes up on that close
        // must see it and leave the server side alone.
        self.held.store(keep_server_open, Ordering::SeqCst);
        let _ = self.client.shutdown(Shutdown::Both);
        if !keep_server_open {
            let _ = self.server.shutdown(Shutdown::Both);
        }
    }
}

impl FaultProxy {
    /// Starts a proxy on a free port of 127.0.0.1 forwarding to `upstream`.
    pub fn start(upstream: SocketAddr) -> io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State::default());
        *lock(&state.upstream) = Some(upstream);
        let acceptor = {
            let state = state.clone();
            std::thread::Builder::new()
                .name("fault-proxy-accept".into())
                .spawn(move || accept_loop(listener, state))?
        };
        Ok(FaultProxy {
            addr,
            state,
            acceptor: Some(acceptor),
        })
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The proxy's port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Arms a one-shot cut; armed cuts are checked in order, and each fires once.
    pub fn arm(&self, cut: Cut) {
        lock(&self.state.cuts).push(cut);
    }

    /// Disarms every cut that has not fired.
    pub fn disarm(&self) {
        lock(&self.state.cuts).clear();
    }

    /// Cuts every open connection now (both sides).
    pub fn cut_all(&self) {
        for conn in lock(&self.state.connections).iter() {
            conn.cut(false);
        }
    }

    /// While `refuse` is true, new connections are accepted and closed at once (the server
    /// looks unreachable); open ones are not touched.
    pub fn refuse_connections(&self, refuse: bool) {
        self.state.refuse.store(refuse, Ordering::SeqCst);
    }

    /// Closes the server sides held open by [`Cut::keep_server_open`].
    pub fn release_held(&self) {
        for conn in lock(&self.state.connections).iter() {
            if conn.held.swap(false, Ordering::SeqCst) {
                let _ = conn.server.shutdown(Shutdown::Both);
            }
        }
    }

    /// How many armed cuts have fired.
    pub fn cuts_fired(&self) -> usize {
        self.state.fired.load(Ordering::SeqCst)
    }

    /// How many connections were accepted (refused ones included).
    pub fn connections_accepted(&self) -> usize {
        self.state.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.state.stopping.store(true, Ordering::SeqCst);
        // Wake the acceptor.
        let _ = TcpStream::connect(self.addr);
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        for conn in lock(&self.state.connections).drain(..) {
            let _ = conn.client.shutdown(Shutdown::Both);
            let _ = conn.server.shutdown(Shutdown::Both);
        }
    }
}

fn accept_loop(listener: TcpListener, state: Arc<State>) {
    for client in listener.incoming() {
        if state.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        state.accepted.fetch_add(1, Ordering::SeqCst);
        if state.refuse.load(Ordering::SeqCst) {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        }
        let Some(upstream) = *lock(&state.upstream) else {
            continue;
        };
        let Ok(server) = TcpStream::connect(upstream) else {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        };
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        let (Ok(c2), Ok(s2)) = (client.try_clone(), server.try_clone()) else {
            continue;
        };
        let conn = Arc::new(Connection {
            client,
            server,
            drop_next_reply: Mutex::new(None),
            cut: AtomicBool::new(false),
            held: AtomicBool::new(false),
        });
        {
            let mut conns = lock(&state.connections);
            conns.retain(|c| !c.cut.load(Ordering::SeqCst) || c.held.load(Ordering::SeqCst));
            conns.push(conn.clone());
        }
        let up = {
            let (state, conn) = (state.clone(), conn.clone());
            move || client_to_server(c2, &conn, &state)
        };
        let down = {
            let (state, conn) = (state.clone(), conn.clone());
            move || server_to_client(s2, &conn, &state)
        };
        let spawned = std::thread::Builder::new()
            .name("fault-proxy-up".into())
            .spawn(up)
            .and_then(|_| {
                std::thread::Builder::new()
                    .name("fault-proxy-down".into())
                    .spawn(down)
            });
        if spawned.is_err() {
            conn.cut(false);
        }
    }
}

/// Pumps client bytes to the server, firing the first armed cut whose pattern appears.
fn client_to_server(mut from: TcpStream, conn: &Connection, state: &State) {
    let mut buf = vec![0u8; 64 * 1024];
    // The tail of the previous read, so a pattern split across two reads is still found.
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let old = carry.len();
        let mut window = std::mem::take(&mut carry);
        window.extend_from_slice(&buf[..n]);
        let fired = {
            let mut cuts = lock(&state.cuts);
            let hit = cuts
                .iter()
                .position(|c| ends_in_new_bytes(&window, old, &c.pattern));
            hit.map(|i| cuts.remove(i))
        };
        if let Some(cut) = fired {
            state.fired.fetch_add(1, Ordering::SeqCst);
            match cut.moment {
                CutMoment::BeforeForwarding => {
                    conn.cut(cut.keep_server_open);
                    return;
                }
                CutMoment::AfterReply => {
                    *lock(&conn.drop_next_reply) = Some(cut.keep_server_open);
                }
            }
        }
        if (&conn.server).write_all(&buf[..n]).is_err() {
            break;
        }
        let keep = window.len().min(256);
        carry = window.split_off(window.len() - keep);
    }
    if !conn.held.load(Ordering::SeqCst) {
        let _ = conn.server.shutdown(Shutdown::Write);
    }
    conn.cut.store(true, Ordering::SeqCst); // finished: no longer listed
}

/// Pumps server bytes to the client, swallowing the reply an [`CutMoment::AfterReply`] cut
/// waits for.
fn server_to_client(mut from: TcpStream, conn: &Connection, _state: &State) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if let Some(keep_server_open) = lock(&conn.drop_next_reply).take() {
            conn.cut(keep_server_open);
            return;
        }
        if (&conn.client).write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = conn.client.shutdown(Shutdown::Write);
}

/// True if `needle` occurs in `window` ending past its first `old` bytes (bytes already
/// checked on the previous read), so a cut armed later never fires on bytes sent earlier.
fn ends_in_new_bytes(window: &[u8], old: usize, needle: &[u8]) -> bool {
    !needle.is_empty()
        && window
            .windows(needle.len())
            .enumerate()
            .any(|(i, w)| i + needle.len() > old && w == needle)
}

#[cfg(test)]
mod tests {
    use super::ends_in_new_bytes;

    #[test]
    fn patterns_match_across_reads_but_not_in_old_bytes_alone() {
        assert!(ends_in_new_bytes(b"xxCOMMIT", 0, b"COMMIT"));
        assert!(ends_in_new_bytes(b"xxCOMMIT", 4, b"COMMIT")); // split: "xxCO" + "MMIT"
        assert!(!ends_in_new_bytes(b"COMMITxx", 6, b"COMMIT")); // all of it seen before
        assert!(!ends_in_new_bytes(b"abc", 0, b""));
    }
}
