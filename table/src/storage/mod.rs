//! Storage: every byte a table reads or writes goes through one [`Storage`], an `object_store`
//! per location scheme (local files, S3, GCS, Azure, memory) behind a synchronous API.
//!
//! - New files are created with create-if-absent semantics ([`Storage::write_new`]: S3
//!   `If-None-Match: *`, a hard link on local disk), so a file is never overwritten.
//! - Large files (a rewrite's output) are streamed as multipart uploads ([`Storage::create`]).
//! - Reads are ranged ([`Storage::read_range`]); Parquet goes through `object_store` readers
//!   that fetch the footer first, then only the row groups and columns asked for.
//! - The stores are shared with the SQL engine ([`Storage::object_store`]), so both use one
//!   connection pool.
//! - A [`StoreLayer`] wraps each store as it is opened: the fault-injection seam of the tests.
//!
//! Credentials and endpoints come from the standard variables (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, and the
//! `GOOGLE_*` / `AZURE_*` ones) or from [`Storage::with_options`]; secrets are never printed.

mod io_runtime;
mod location;
mod parquet_reader;
mod stream;

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

pub(crate) use io_runtime::block_on;
pub(crate) use location::{ParsedLocation, join, parse_location};
pub use location::{normalize_location, split_location};
pub(crate) use parquet_reader::StorageFile;
pub use stream::StreamWriter;

use crate::error::{Error, Result};

/// Wraps every store a [`Storage`] opens (fault injection, metrics, throttling).
pub type StoreLayer = Arc<dyn Fn(Arc<dyn ObjectStore>) -> Arc<dyn ObjectStore> + Send + Sync>;

/// Size and age of a stored file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// Its location (a URI).
    pub location: String,
    /// Bytes.
    pub size: u64,
    /// Last modification.
    pub last_modified: std::time::SystemTime,
}

/// Where tables live: one object store per `scheme://authority`, opened on first use.
///
/// Cheap to clone (the stores are shared).
#[derive(Clone)]
pub struct Storage {
    inner: Arc<Inner>,
}

struct Inner {
    /// `object_store` configuration keys (`aws_endpoint`, `aws_access_key_id`, ...) set
    /// explicitly; the environment fills in the rest.
    options: HashMap<String, String>,
    stores: RwLock<HashMap<String, Arc<dyn ObjectStore>>>,
    layer: Option<StoreLayer>,
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut keys: Vec<&String> = self.inner.options.keys().collect();
        keys.sort();
        let stores: Vec<String> = self
            .inner
            .stores
            .read()
            .map(|s| s.keys().cloned().collect())
            .unwrap_or_default();
        // Option values may be secrets: only their keys are shown.
        f.debug_struct("Storage")
            .field("option_keys", &keys)
            .field("stores", &stores)
            .field("layered", &self.inner.layer.is_some())
            .finish()
    }
}

impl Default for Storage {
    fn default() -> Self {
        Storage::new()
    }
}

impl Storage {
    /// Storage configured from the environment only.
    pub fn new() -> Self {
        Storage::with_options(HashMap::<String, String>::new())
    }

    /// Storage with explicit `object_store` options (`aws_endpoint`, `aws_region`,
    /// `aws_access_key_id`, `aws_allow_http`, `google_service_account`, ...), which take
    /// precedence over the environment.
    pub fn with_options<K: Into<String>, V: Into<String>>(
        options: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Storage {
            inner: Arc::new(Inner {
                options: options
                    .into_iter()
                    .map(|(k, v)| (k.into().to_ascii_lowercase(), v.into()))
                    .collect(),
                stores: RwLock::default(),
                layer: None,
            }),
        }
    }

    /// The same configuration with every store wrapped by `layer` (stores are reopened).
    pub fn layered(&self, layer: StoreLayer) -> Self {
        Storage {
            inner: Arc::new(Inner {
                options: self.inner.options.clone(),
                stores: RwLock::default(),
                layer: Some(layer),
            }),
        }
    }

    /// The object store holding `location`, and the path of `location` inside it: what an
    /// engine registers to read the same files (DataFusion's `ObjectStoreRegistry`).
    pub fn object_store(&self, location: &str) -> Result<(Arc<dyn ObjectStore>, ObjectPath)> {
        let parsed = parse_location(location)?;
        Ok((self.store(&parsed)?, parsed.path))
    }

    /// The store URL (`scheme://authority/`) a location belongs to.
    pub fn store_url(&self, location: &str) -> Result<url::Url> {
        Ok(parse_location(location)?.store_url)
    }

    pub(crate) fn store(&self, parsed: &ParsedLocation) -> Result<Arc<dyn ObjectStore>> {
        if let Some(s) = self
            .inner
            .stores
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&parsed.store_key)
        {
            return Ok(s.clone());
        }
        let opened = self.open_store(parsed)?;
        let opened = match &self.inner.layer {
            Some(layer) => layer(opened),
            None => opened,
        };
        let mut stores = self.inner.stores.write().unwrap_or_else(|p| p.into_inner());
        Ok(stores
            .entry(parsed.store_key.clone())
            .or_insert(opened)
            .clone())
    }

    fn open_store(&self, parsed: &ParsedLocation) -> Result<Arc<dyn ObjectStore>> {
        use object_store::client::SpawnedReqwestConnector;
        let url = parsed.store_url.as_str();
        let fail = |e: object_store::Error| Error::Storage {
            location: parsed.store_key.clone(),
            source: Box::new(e),
        };
        let options = &self.inner.options;
        let connector = || SpawnedReqwestConnector::new(io_runtime::io_handle());
        let store: Arc<dyn ObjectStore> = match parsed.store_url.scheme() {
            "file" => Arc::new(object_store::local::LocalFileSystem::new()),
            "memory" => Arc::new(object_store::memory::InMemory::new()),
            "s3" | "s3a" => {
                let mut b = object_store::aws::AmazonS3Builder::from_env()
                    .with_url(url)
                    // Create-if-absent (`If-None-Match: *`) for new files; S3, MinIO,
                    // SeaweedFS and moto support it.
                    .with_conditional_put(object_store::aws::S3ConditionalPut::ETagMatch);
                for (k, v) in options {
                    if let Ok(key) = k.parse() {
                        b = b.with_config(key, v);
                    }
                }
                Arc::new(b.with_http_connector(connector()).build().map_err(fail)?)
            }
            "gs" => {
                let mut b = object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(url);
                for (k, v) in options {
                    if let Ok(key) = k.parse() {
                        b = b.with_config(key, v);
                    }
                }
                Arc::new(b.with_http_connector(connector()).build().map_err(fail)?)
            }
            _ => {
                let mut b = object_store::azure::MicrosoftAzureBuilder::from_env().with_url(url);
                for (k, v) in options {
                    if let Ok(key) = k.parse() {
                        b = b.with_config(key, v);
                    }
                }
                Arc::new(b.with_http_connector(connector()).build().map_err(fail)?)
            }
        };
        Ok(store)
    }

    fn resolve(&self, location: &str) -> Result<(Arc<dyn ObjectStore>, ObjectPath)> {
        self.object_store(location)
    }

    /// The file system path of a local location, when reads may bypass `object_store`: its
    /// local store runs every read on a blocking thread of the I/O runtime and wakes the caller
    /// after, two thread hops per Parquet page (the "tokio wake-ups" of issue 29's rewrite
    /// profile). A layered storage (the tests' fault injection) always reads through its store.
    fn local_path(&self, location: &str) -> Result<Option<std::path::PathBuf>> {
        if self.inner.layer.is_some() {
            return Ok(None);
        }
        let parsed = parse_location(location)?;
        if parsed.store_key != "file://" {
            return Ok(None);
        }
        object_store::local::LocalFileSystem::new()
            .path_to_filesystem(&parsed.path)
            .map(Some)
            .map_err(|e| Error::storage(location, e))
    }

    /// The whole file.
    pub fn read(&self, location: &str) -> Result<Bytes> {
        if let Some(path) = self.local_path(location)? {
            return std::fs::read(&path)
                .map(Bytes::from)
                .map_err(|e| Error::storage(location, local_error(&path, e)));
        }
        let (store, path) = self.resolve(location)?;
        block_on(async move { store.get(&path).await?.bytes().await })
            .map_err(|e| Error::storage(location, e))
    }

    /// Bytes `range` of the file.
    pub fn read_range(&self, location: &str, range: Range<u64>) -> Result<Bytes> {
        let want = range.end.saturating_sub(range.start);
        let bytes = match self.local_path(location)? {
            Some(path) => read_local_range(&path, range)
                .map_err(|e| Error::storage(location, local_error(&path, e)))?,
            None => {
                let (store, path) = self.resolve(location)?;
                block_on(async move { store.get_range(&path, range).await })
                    .map_err(|e| Error::storage(location, e))?
            }
        };
        if bytes.len() as u64 != want {
            return Err(Error::corrupt(
                location,
                format!(
                    "a ranged read returned {} of {want} bytes (a truncated reply)",
                    bytes.len()
                ),
            ));
        }
        Ok(bytes)
    }

    /// Size and modification time.
    pub fn head(&self, location: &str) -> Result<FileInfo> {
        let (store, path) = self.resolve(location)?;
        let meta = block_on(async move { store.head(&path).await })
            .map_err(|e| Error::storage(location, e))?;
        Ok(FileInfo {
            location: location.to_string(),
            size: meta.size,
            last_modified: meta.last_modified.into(),
        })
    }

    /// Creates a file that must not exist yet, atomically: readers see all of it or nothing,
    /// and an existing file is never replaced (the error then says so).
    ///
    /// A store client retries a PUT whose reply was lost, and the retry then finds the object
    /// the first attempt wrote. So when a create finds a file with exactly these bytes, the
    /// write counts as done (our files carry UUIDs: nobody else writes those bytes there).
    pub fn write_new(&self, location: &str, bytes: impl Into<Bytes>) -> Result<()> {
        let (store, path) = self.resolve(location)?;
        let bytes = bytes.into();
        let payload = PutPayload::from(bytes.clone());
        let options = PutOptions {
            mode: PutMode::Create,
            ..PutOptions::default()
        };
        let (s, p) = (store.clone(), path.clone());
        match block_on(async move { s.put_opts(&p, payload, options).await }) {
            Ok(_) => Ok(()),
            Err(e @ object_store::Error::AlreadyExists { .. }) => {
                let found = block_on(async move { store.get(&path).await?.bytes().await });
                match found {
                    Ok(found) if found == bytes => Ok(()),
                    _ => Err(Error::storage(location, e)),
                }
            }
            Err(e) => Err(Error::storage(location, e)),
        }
    }

    /// A streamed new file (multipart upload); nothing is visible until
    /// [`StreamWriter::finish`]. Dropping the writer unfinished aborts the upload.
    pub fn create(&self, location: &str) -> Result<StreamWriter> {
        let (store, path) = self.resolve(location)?;
        StreamWriter::start(store, path, location)
    }

    /// Removes a file; removing a missing file is not an error.
    pub fn delete(&self, location: &str) -> Result<()> {
        let (store, path) = self.resolve(location)?;
        match block_on(async move { store.delete(&path).await }) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(Error::storage(location, e)),
        }
    }

    /// Every file below `prefix` (a directory-like location), recursively. On local disk,
    /// symbolic links are neither followed nor listed (`object_store`'s local listing follows
    /// them, which would let an orphan cleanup delete files outside the table).
    pub fn list(&self, prefix: &str) -> Result<Vec<FileInfo>> {
        let parsed = parse_location(prefix)?;
        if parsed.store_key == "file://" {
            let root = std::path::PathBuf::from(format!("/{}", parsed.path));
            let mut out = Vec::new();
            walk_local(&root, &mut out)?;
            return Ok(out);
        }
        let store = self.store(&parsed)?;
        let key = parsed.store_key.clone();
        let path = parsed.path.clone();
        let metas: Vec<object_store::ObjectMeta> = block_on(async move {
            let prefix = (!path.as_ref().is_empty()).then_some(path);
            store.list(prefix.as_ref()).try_collect().await
        })
        .map_err(|e| Error::storage(prefix, e))?;
        Ok(metas
            .into_iter()
            .map(|m| FileInfo {
                location: location::location_of(&key, &m.location),
                size: m.size,
                last_modified: m.last_modified.into(),
            })
            .collect())
    }
}

/// Bytes `range` of a local file, read on this thread; a file shorter than the range gives
/// what it has (the caller reports the truncation).
fn read_local_range(path: &std::path::Path, range: Range<u64>) -> std::io::Result<Bytes> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    file.seek(SeekFrom::Start(range.start))?;
    let len = range.end.saturating_sub(range.start);
    let mut buf = Vec::with_capacity(len as usize);
    file.take(len).read_to_end(&mut buf)?;
    Ok(Bytes::from(buf))
}

/// A local read's error as `object_store`'s local store reports it (a missing file is
/// `NotFound`, which callers tolerate where a file may be gone).
fn local_error(path: &std::path::Path, e: std::io::Error) -> object_store::Error {
    let path = path.display().to_string();
    match e.kind() {
        std::io::ErrorKind::NotFound => object_store::Error::NotFound {
            path,
            source: Box::new(e),
        },
        _ => object_store::Error::Generic {
            store: "LocalFileSystem",
            source: format!("{path}: {e}").into(),
        },
    }
}

/// Regular files below `dir`, without following symbolic links; staging files of unfinished
/// writes (`object_store` names them `<file>#<n>`) are skipped, as its own listing does.
fn walk_local(dir: &std::path::Path, out: &mut Vec<FileInfo>) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let path = entry.path();
        // `DirEntry::file_type` does not follow symlinks.
        let ty = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if ty.is_dir() {
            walk_local(&path, out)?;
        } else if ty.is_file() && !entry.file_name().to_string_lossy().contains('#') {
            let meta = entry.metadata().map_err(|e| Error::io(&path, e))?;
            out.push(FileInfo {
                location: format!("file://{}", path.display()),
                size: meta.len(),
                last_modified: meta.modified().map_err(|e| Error::io(&path, e))?,
            });
        }
    }
    Ok(())
}
