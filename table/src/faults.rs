//! Fault injection for crash-consistency tests: a catalog wrapper whose storage fails the k-th
//! write or the k-th link/delete, or whose pointer swap fails (with or without effect), and
//! which can run a hook right before its n-th swap (to interleave racing writers).

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::ident::TableIdent;
use crate::storage::Storage;

/// The one step to fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fault {
    /// Nothing fails.
    #[default]
    None,
    /// The k-th file write (1-based; [`Storage::write`] and [`Storage::create`] counted
    /// together) writes half its bytes, then fails, as a crash would. A streamed file writes
    /// half of the first block it is given.
    Write(usize),
    /// The k-th link or delete (1-based, counted together) fails without effect.
    LinkOrDelete(usize),
    /// The catalog swap fails without effect (an error whose outcome the caller cannot know).
    Swap,
    /// The catalog swap takes effect, then fails as if its reply were lost: the caller sees
    /// the same error as for [`Fault::Swap`], but the commit happened.
    SwapLost,
}

#[derive(Debug, Default)]
struct State {
    fault: Mutex<Fault>,
    writes: AtomicUsize,
    links_deletes: AtomicUsize,
    fired: AtomicBool,
}

impl State {
    fn fault(&self) -> Fault {
        *self.fault.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fire(&self, what: &str) -> io::Error {
        self.fired.store(true, Ordering::SeqCst);
        io::Error::other(format!("injected fault: {what}"))
    }
}

/// Hooks run before the n-th catalog swap (1-based), and the swaps counted so far.
#[derive(Default)]
struct SwapHooks {
    swaps: AtomicUsize,
    hooks: Mutex<BTreeMap<usize, Box<dyn FnOnce() + Send>>>,
}

impl fmt::Debug for SwapHooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SwapHooks")
            .field("swaps", &self.swaps)
            .finish_non_exhaustive()
    }
}

/// A [`Catalog`] that delegates to another one and fails the step chosen with
/// [`FaultyCatalog::inject`], or pauses before a swap with [`FaultyCatalog::before_swap`].
/// Tables loaded through it write through its storage.
#[derive(Debug)]
pub struct FaultyCatalog {
    inner: Arc<dyn Catalog>,
    storage: FaultyStorage,
    state: Arc<State>,
    swap_hooks: SwapHooks,
}

/// The storage of a [`FaultyCatalog`].
#[derive(Debug)]
pub struct FaultyStorage {
    inner: Arc<dyn Catalog>,
    state: Arc<State>,
}

impl FaultyCatalog {
    /// Wraps `inner`; nothing fails until [`FaultyCatalog::inject`].
    pub fn new(inner: Arc<dyn Catalog>) -> Self {
        let state = Arc::new(State::default());
        FaultyCatalog {
            storage: FaultyStorage {
                inner: inner.clone(),
                state: state.clone(),
            },
            inner,
            state,
            swap_hooks: SwapHooks::default(),
        }
    }

    /// Runs `hook` right before the `n`-th catalog swap (1-based, counted from construction)
    /// reaches the inner catalog: a writer paused before its commit while another one runs.
    pub fn before_swap(&self, n: usize, hook: impl FnOnce() + Send + 'static) {
        self.swap_hooks
            .hooks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(n, Box::new(hook));
    }

    /// Arms `fault` and restarts the step counters.
    pub fn inject(&self, fault: Fault) {
        *self.state.fault.lock().unwrap_or_else(|p| p.into_inner()) = fault;
        self.state.writes.store(0, Ordering::SeqCst);
        self.state.links_deletes.store(0, Ordering::SeqCst);
        self.state.fired.store(false, Ordering::SeqCst);
    }

    /// True if the armed fault has happened since [`FaultyCatalog::inject`].
    pub fn fired(&self) -> bool {
        self.state.fired.load(Ordering::SeqCst)
    }
}

impl Storage for FaultyStorage {
    fn write(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let n = self.state.writes.fetch_add(1, Ordering::SeqCst) + 1;
        if self.state.fault() == Fault::Write(n) {
            self.inner
                .storage()
                .write(path, &bytes[..bytes.len() / 2])?;
            return Err(self
                .state
                .fire(&format!("write #{n} of {}", path.display())));
        }
        self.inner.storage().write(path, bytes)
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn Write + Send>> {
        let n = self.state.writes.fetch_add(1, Ordering::SeqCst) + 1;
        let inner = self.inner.storage().create(path)?;
        if self.state.fault() == Fault::Write(n) {
            return Ok(Box::new(CrashingWriter {
                inner,
                state: self.state.clone(),
                what: format!("write #{n} of {}", path.display()),
            }));
        }
        Ok(inner)
    }

    fn link(&self, from: &Path, to: &Path) -> io::Result<()> {
        let n = self.state.links_deletes.fetch_add(1, Ordering::SeqCst) + 1;
        if self.state.fault() == Fault::LinkOrDelete(n) {
            return Err(self.state.fire(&format!("link #{n} to {}", to.display())));
        }
        self.inner.storage().link(from, to)
    }

    fn delete(&self, path: &Path) -> io::Result<()> {
        let n = self.state.links_deletes.fetch_add(1, Ordering::SeqCst) + 1;
        if self.state.fault() == Fault::LinkOrDelete(n) {
            return Err(self
                .state
                .fire(&format!("delete #{n} of {}", path.display())));
        }
        self.inner.storage().delete(path)
    }
}

/// The writer of a streamed file whose write is the armed fault: it passes on half of the first
/// block, then fails every call.
struct CrashingWriter {
    inner: Box<dyn Write + Send>,
    state: Arc<State>,
    what: String,
}

impl Write for CrashingWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.state.fired.load(Ordering::SeqCst) {
            self.inner.write_all(&buf[..buf.len() / 2])?;
        }
        Err(self.state.fire(&self.what))
    }

    fn flush(&mut self) -> io::Result<()> {
        Err(self.state.fire(&self.what))
    }
}

impl Catalog for FaultyCatalog {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn warehouse(&self) -> &Path {
        self.inner.warehouse()
    }
    fn create_namespace(&self, namespace: &str) -> Result<()> {
        self.inner.create_namespace(namespace)
    }
    fn namespace_exists(&self, namespace: &str) -> Result<bool> {
        self.inner.namespace_exists(namespace)
    }
    fn list_namespaces(&self) -> Result<Vec<String>> {
        self.inner.list_namespaces()
    }
    fn list_tables(&self, namespace: &str) -> Result<Vec<TableIdent>> {
        self.inner.list_tables(namespace)
    }
    fn metadata_location(&self, table: &TableIdent) -> Result<Option<String>> {
        self.inner.metadata_location(table)
    }
    fn register_table(&self, table: &TableIdent, metadata_location: &str) -> Result<()> {
        self.inner.register_table(table, metadata_location)
    }
    fn swap_metadata_location(&self, table: &TableIdent, expected: &str, new: &str) -> Result<()> {
        let n = self.swap_hooks.swaps.fetch_add(1, Ordering::SeqCst) + 1;
        // Taken out first: the hook may commit through the inner catalog.
        let hook = self
            .swap_hooks
            .hooks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&n);
        if let Some(hook) = hook {
            hook();
        }
        match self.state.fault() {
            Fault::Swap => Err(Error::io(
                self.inner.warehouse(),
                self.state.fire(&format!("catalog swap of {table}")),
            )),
            Fault::SwapLost => {
                self.inner.swap_metadata_location(table, expected, new)?;
                Err(Error::io(
                    self.inner.warehouse(),
                    self.state
                        .fire(&format!("reply of the catalog swap of {table}")),
                ))
            }
            _ => self.inner.swap_metadata_location(table, expected, new),
        }
    }
    fn drop_table(&self, table: &TableIdent) -> Result<bool> {
        self.inner.drop_table(table)
    }
    fn storage(&self) -> &dyn Storage {
        &self.storage
    }
}
