//! Fault injection for crash-consistency tests: an object store that fails the k-th write (with
//! or without effect) or the k-th delete, and a catalog whose pointer swap fails (with or
//! without effect) and which can run a hook right before its n-th swap (to interleave racing
//! writers). The store wraps whatever store the catalog's [`Storage`] opens, local or remote, so
//! every fault test runs against object storage too.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::path::Path as ObjectPath;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult, UploadPart,
};

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
    /// The k-th file write (1-based; a put or a completed multipart upload) fails without
    /// effect, as a crash before the store acknowledged it would.
    Write(usize),
    /// The k-th file write takes effect, then fails as if its reply were lost.
    WriteLost(usize),
    /// The k-th delete (1-based) fails without effect.
    Delete(usize),
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
    deletes: AtomicUsize,
    /// Gets (whole or ranged reads; not HEADs) since construction.
    gets: AtomicUsize,
    /// Bytes returned by gets (the ranges of every get), per object path, since construction.
    bytes_read: Mutex<BTreeMap<String, u64>>,
    fired: AtomicBool,
}

impl State {
    fn fault(&self) -> Fault {
        *self.fault.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn injected(&self, what: String) -> object_store::Error {
        self.fired.store(true, Ordering::SeqCst);
        object_store::Error::Generic {
            store: "FaultyStore",
            source: format!("injected fault: {what}").into(),
        }
    }

    /// Counts a write; the fault that applies to it, if any.
    fn next_write(&self) -> (usize, Fault) {
        let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        match self.fault() {
            f @ (Fault::Write(k) | Fault::WriteLost(k)) if k == n => (n, f),
            _ => (n, Fault::None),
        }
    }
}

/// An [`ObjectStore`] that delegates to another and fails the step armed on its
/// [`FaultyCatalog`].
#[derive(Debug)]
pub struct FaultyStore {
    inner: Arc<dyn ObjectStore>,
    state: Arc<State>,
}

impl fmt::Display for FaultyStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FaultyStore({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for FaultyStore {
    async fn put_opts(
        &self,
        location: &ObjectPath,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        match self.state.next_write() {
            (n, Fault::Write(_)) => Err(self.state.injected(format!("write #{n} of {location}"))),
            (n, Fault::WriteLost(_)) => {
                self.inner.put_opts(location, payload, opts).await?;
                Err(self
                    .state
                    .injected(format!("reply of write #{n} of {location}")))
            }
            _ => self.inner.put_opts(location, payload, opts).await,
        }
    }

    async fn put_multipart_opts(
        &self,
        location: &ObjectPath,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        let inner = self.inner.put_multipart_opts(location, opts).await?;
        Ok(Box::new(FaultyUpload {
            inner,
            state: self.state.clone(),
            location: location.to_string(),
        }))
    }

    async fn get_opts(
        &self,
        location: &ObjectPath,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        // A HEAD is a get with `head` set: its range is the object's, but no byte moves.
        let head = options.head;
        let got = self.inner.get_opts(location, options).await?;
        if head {
            return Ok(got);
        }
        self.state.gets.fetch_add(1, Ordering::SeqCst);
        *self
            .state
            .bytes_read
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(location.to_string())
            .or_default() += got.range.end - got.range.start;
        Ok(got)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<ObjectPath>>,
    ) -> BoxStream<'static, object_store::Result<ObjectPath>> {
        let (inner, state) = (self.inner.clone(), self.state.clone());
        locations
            .then(move |location| {
                let (inner, state) = (inner.clone(), state.clone());
                async move {
                    let location = location?;
                    let n = state.deletes.fetch_add(1, Ordering::SeqCst) + 1;
                    if state.fault() == Fault::Delete(n) {
                        return Err(state.injected(format!("delete #{n} of {location}")));
                    }
                    inner.delete(&location).await.map(|()| location)
                }
            })
            .boxed()
    }

    fn list(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    async fn list_with_delimiter(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &ObjectPath,
        to: &ObjectPath,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// A multipart upload whose completion is a write of the [`FaultyStore`].
#[derive(Debug)]
struct FaultyUpload {
    inner: Box<dyn MultipartUpload>,
    state: Arc<State>,
    location: String,
}

#[async_trait]
impl MultipartUpload for FaultyUpload {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        self.inner.put_part(data)
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        match self.state.next_write() {
            (n, Fault::Write(_)) => {
                let _ = self.inner.abort().await;
                Err(self
                    .state
                    .injected(format!("streamed write #{n} of {}", self.location)))
            }
            (n, Fault::WriteLost(_)) => {
                self.inner.complete().await?;
                Err(self
                    .state
                    .injected(format!("reply of streamed write #{n} of {}", self.location)))
            }
            _ => self.inner.complete().await,
        }
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        self.inner.abort().await
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
/// Tables loaded through it read and write through a [`FaultyStore`] over the inner catalog's
/// stores.
#[derive(Debug)]
pub struct FaultyCatalog {
    inner: Arc<dyn Catalog>,
    storage: Storage,
    state: Arc<State>,
    swap_hooks: SwapHooks,
}

impl FaultyCatalog {
    /// Wraps `inner`; nothing fails until [`FaultyCatalog::inject`].
    pub fn new(inner: Arc<dyn Catalog>) -> Self {
        let state = Arc::new(State::default());
        let layer_state = state.clone();
        let storage = inner.storage().layered(Arc::new(move |store| {
            Arc::new(FaultyStore {
                inner: store,
                state: layer_state.clone(),
            }) as Arc<dyn ObjectStore>
        }));
        FaultyCatalog {
            storage,
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
        self.state.deletes.store(0, Ordering::SeqCst);
        self.state.fired.store(false, Ordering::SeqCst);
    }

    /// True if the armed fault has happened since [`FaultyCatalog::inject`].
    pub fn fired(&self) -> bool {
        self.state.fired.load(Ordering::SeqCst)
    }

    /// Writes and deletes counted since [`FaultyCatalog::inject`].
    pub fn steps(&self) -> (usize, usize) {
        (
            self.state.writes.load(Ordering::SeqCst),
            self.state.deletes.load(Ordering::SeqCst),
        )
    }

    /// Gets (whole-object and ranged reads, not HEADs) since construction: the requests an
    /// object store would be sent.
    pub fn gets(&self) -> usize {
        self.state.gets.load(Ordering::SeqCst)
    }

    /// Bytes read since construction from the stored objects whose path ends with
    /// `path_suffix` (the sum of every get's range), so that a test can hold a reader to the
    /// bytes it needs.
    pub fn bytes_read(&self, path_suffix: &str) -> u64 {
        let read = self
            .state
            .bytes_read
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        read.iter()
            .filter(|(path, _)| path.ends_with(path_suffix))
            .map(|(_, n)| n)
            .sum()
    }

    fn swap_failure(&self, table: &TableIdent, what: &str) -> Error {
        Error::storage(
            self.inner.warehouse(),
            self.state.injected(format!("{what} of {table}")),
        )
    }
}

impl Catalog for FaultyCatalog {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn warehouse(&self) -> &str {
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
            Fault::Swap => Err(self.swap_failure(table, "catalog swap")),
            Fault::SwapLost => {
                self.inner.swap_metadata_location(table, expected, new)?;
                Err(self.swap_failure(table, "reply of the catalog swap"))
            }
            _ => self.inner.swap_metadata_location(table, expected, new),
        }
    }
    fn drop_table(&self, table: &TableIdent) -> Result<bool> {
        self.inner.drop_table(table)
    }
    fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        self.inner.rename_table(from, to)
    }
    fn storage(&self) -> &Storage {
        &self.storage
    }
}
