//! Free loopback ports for servers started by the harness.

use std::net::{Ipv4Addr, TcpListener};
use std::sync::{Mutex, MutexGuard};

use crate::error::{Error, Result};

/// `n` distinct ports that were free a moment ago on 127.0.0.1.
///
/// All `n` are bound at once (so they differ) and then released for the server to bind. Another
/// process may take one in between: callers retry a start that failed with "address in use".
pub(crate) fn free_ports(n: usize) -> Result<Vec<u16>> {
    let listeners = (0..n)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::io("binding a free port on 127.0.0.1", e))?;
    listeners
        .iter()
        .map(|l| Ok(l.local_addr()?.port()))
        .collect::<std::io::Result<_>>()
        .map_err(|e| Error::io("reading a bound port", e))
}

/// Serialises server starts within this process, so that two threads never hand out the same
/// released port before either server has bound it.
pub(crate) fn start_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// How many times a start is tried with fresh ports before giving up.
pub(crate) const START_ATTEMPTS: usize = 5;
