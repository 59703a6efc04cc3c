//! Where a rewrite reads its inputs and writes its outputs: [`RewriteStorage`].
//!
//! The rewrite runs on any machine and against any store: `table` implements the trait over its
//! object store (ranged GETs, multipart uploads), and [`DirectoryStorage`] is the local default.
//! Inputs are read through [`RandomAccess`]; on remote stores a row group's column chunks are
//! fetched in one batch of ranges before decoding, on local files page by page.

use std::fs::File;
use std::io::{self, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use parquet::file::reader::{ChunkReader, Length};

use crate::PartitionKey;
use crate::target_schema::TargetSchema;

/// Random access to the bytes of one input file.
pub trait RandomAccess: Send + Sync {
    /// The file's size in bytes.
    fn size(&self) -> u64;

    /// `len` bytes at `offset`; fewer only at the end of the file.
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes>;

    /// Several ranges at once (a store may coalesce them into fewer requests).
    fn read_ranges(&self, ranges: &[Range<u64>]) -> io::Result<Vec<Bytes>> {
        ranges
            .iter()
            .map(|r| self.read_at(r.start, (r.end - r.start) as usize))
            .collect()
    }

    /// Whether a reader should fetch a row group's column chunks up front, in one
    /// [`RandomAccess::read_ranges`] call (remote stores), rather than page by page (local
    /// files, where each read is a cheap `pread`).
    fn prefers_prefetch(&self) -> bool {
        true
    }
}

/// A new output file. Nothing may be visible under its location until
/// [`OutputStream::finish`] has returned `Ok`.
pub trait OutputStream: Write + Send {
    /// Completes the file; nothing may be written after it.
    fn finish(&mut self) -> io::Result<()>;
}

/// Where the rewrite reads its input files: all that planning needs.
pub trait InputStorage: Sync {
    /// Opens an input file (a location from [`crate::InputFile::location`]). By default a
    /// local path or `file://` URI.
    fn open(&self, location: &str) -> io::Result<Arc<dyn RandomAccess>> {
        Ok(Arc::new(LocalFile::open(local_path(location))?))
    }

    /// The columns the inputs are read as when their own may differ (a table whose schema
    /// evolved; see [`TargetSchema`]), which the output files then have; by default none: a
    /// partition's inputs must share their columns, and the outputs keep them.
    fn target_schema(&self) -> Option<&dyn TargetSchema> {
        None
    }
}

/// Local input files (plain paths or `file://` URIs).
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalFiles;

impl InputStorage for LocalFiles {}

/// Where the rewrite's files live: its inputs, and where and how its outputs are written. Only
/// input and output files go through it: spill runs are scratch files in `spill-dir` (or the
/// system temporary directory) that are always removed.
pub trait RewriteStorage: InputStorage {
    /// Location of the `seq`-th file written by `task` for `partition`.
    fn locate(&self, partition: &PartitionKey, task: usize, seq: usize) -> String;

    /// Creates a new output file at a location [`RewriteStorage::locate`] returned; fails with
    /// `AlreadyExists` if something is there. By default a local file (parents created).
    fn create(&self, location: &str) -> io::Result<Box<dyn OutputStream>> {
        let path = local_path(location);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Box::new(LocalOutput(io::BufWriter::with_capacity(
            1 << 20,
            File::create_new(path)?,
        ))))
    }

    /// Removes an output file of a failed rewrite (it may be partly written, or missing if
    /// [`RewriteStorage::create`] failed). By default a local file.
    fn remove(&self, location: &str) -> io::Result<()> {
        std::fs::remove_file(local_path(location))
    }
}

/// Writes every output file into one local directory as `<prefix>-<task>-<seq>.parquet` and
/// reads local inputs.
#[derive(Debug, Clone)]
pub struct DirectoryStorage {
    /// Target directory (created if missing).
    pub dir: PathBuf,
    /// File-name prefix, e.g. a run id, so that concurrent rewrites never collide.
    pub prefix: String,
}

impl InputStorage for DirectoryStorage {}

impl RewriteStorage for DirectoryStorage {
    fn locate(&self, _partition: &PartitionKey, task: usize, seq: usize) -> String {
        self.dir
            .join(format!("{}-{task:05}-{seq:03}.parquet", self.prefix))
            .display()
            .to_string()
    }
}

/// The local path of a plain path or `file://` / `file:` URI.
pub fn local_path(location: &str) -> &Path {
    let rest = location
        .strip_prefix("file://")
        .or_else(|| location.strip_prefix("file:"))
        .unwrap_or(location);
    Path::new(rest)
}

/// A local file read with positioned reads (`pread`): threads share it without sharing an
/// offset.
#[derive(Debug)]
pub struct LocalFile {
    file: File,
    size: u64,
}

impl LocalFile {
    /// Opens `path`.
    pub fn open(path: &Path) -> io::Result<LocalFile> {
        let file = File::open(path)?;
        let size = file.metadata()?.len();
        Ok(LocalFile { file, size })
    }
}

impl RandomAccess for LocalFile {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let len = len.min(self.size.saturating_sub(offset) as usize);
        let mut buf = vec![0u8; len];
        read_exact_at(&self.file, &mut buf, offset)?;
        Ok(buf.into())
    }

    fn prefers_prefetch(&self) -> bool {
        false
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, offset)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

struct LocalOutput(io::BufWriter<File>);

impl Write for LocalOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl OutputStream for LocalOutput {
    fn finish(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Parquet's view of an input: byte ranges served from the column chunks fetched up front
/// (`prefetched`, sorted by start), else read from the file.
#[derive(Clone)]
pub(crate) struct InputBytes {
    file: Arc<dyn RandomAccess>,
    prefetched: Arc<Vec<(u64, Bytes)>>,
}

impl InputBytes {
    pub(crate) fn new(file: Arc<dyn RandomAccess>) -> Self {
        InputBytes {
            file,
            prefetched: Arc::default(),
        }
    }

    /// The same file with `ranges` fetched now (one `read_ranges` call) when the store prefers
    /// it; reads inside them are then served from memory.
    pub(crate) fn prefetch(&self, mut ranges: Vec<Range<u64>>) -> io::Result<InputBytes> {
        if !self.file.prefers_prefetch() || ranges.is_empty() {
            return Ok(self.clone());
        }
        ranges.sort_by_key(|r| r.start);
        let bytes = self.file.read_ranges(&ranges)?;
        Ok(InputBytes {
            file: self.file.clone(),
            prefetched: Arc::new(ranges.iter().map(|r| r.start).zip(bytes).collect()),
        })
    }

    fn cached(&self, start: u64, len: u64) -> Option<Bytes> {
        let i = self.prefetched.partition_point(|(s, _)| *s <= start);
        let (s, b) = self.prefetched.get(i.checked_sub(1)?)?;
        let from = (start - s) as usize;
        (from as u64 + len <= b.len() as u64).then(|| b.slice(from..from + len as usize))
    }
}

impl Length for InputBytes {
    fn len(&self) -> u64 {
        self.file.size()
    }
}

impl ChunkReader for InputBytes {
    type T = RangeRead;

    fn get_read(&self, start: u64) -> parquet::errors::Result<RangeRead> {
        Ok(RangeRead {
            input: self.clone(),
            pos: start,
            buf: Bytes::new(),
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        if let Some(b) = self.cached(start, length as u64) {
            return Ok(b);
        }
        let bytes = self.file.read_at(start, length)?;
        if bytes.len() != length {
            return Err(parquet::errors::ParquetError::EOF(format!(
                "read {} of {length} bytes at offset {start}",
                bytes.len()
            )));
        }
        Ok(bytes)
    }
}

/// Sequential reads from an offset (what Parquet reads page headers with), in blocks.
pub(crate) struct RangeRead {
    input: InputBytes,
    pos: u64,
    buf: Bytes,
}

/// Block size of [`RangeRead`] outside prefetched ranges.
const READ_BLOCK: u64 = 64 << 10;

impl Read for RangeRead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.buf.is_empty() {
            let remaining = self.input.file.size().saturating_sub(self.pos);
            if remaining == 0 {
                return Ok(0);
            }
            // Serve from a prefetched chunk when the position is inside one.
            let i = self
                .input
                .prefetched
                .partition_point(|(s, _)| *s <= self.pos);
            self.buf = match i.checked_sub(1).map(|i| &self.input.prefetched[i]) {
                Some((s, b)) if self.pos < s + b.len() as u64 => b.slice((self.pos - s) as usize..),
                _ => self
                    .input
                    .file
                    .read_at(self.pos, remaining.min(READ_BLOCK) as usize)?,
            };
            if self.buf.is_empty() {
                return Ok(0);
            }
        }
        let n = out.len().min(self.buf.len());
        out[..n].copy_from_slice(&self.buf[..n]);
        self.buf = self.buf.slice(n..);
        self.pos += n as u64;
        Ok(n)
    }
}
