//! Parquet files in storage, read by byte ranges: the footer first, then only the column chunks
//! a reader asks for.

use std::io;
use std::ops::Range;

use bytes::Bytes;
use parquet::file::reader::{ChunkReader, Length};

use super::Storage;
use crate::error::Result;

/// One stored file opened for random access (its size is known, so no request reads past it).
#[derive(Debug, Clone)]
pub(crate) struct StorageFile {
    storage: Storage,
    location: String,
    size: u64,
}

impl StorageFile {
    /// Opens `location`: one HEAD request for its size.
    pub(crate) fn open(storage: &Storage, location: &str) -> Result<StorageFile> {
        let size = storage.head(location)?.size;
        Ok(StorageFile::with_size(storage, location, size))
    }

    /// A file whose size is known already (from a manifest entry): no request at all.
    pub(crate) fn with_size(storage: &Storage, location: &str, size: u64) -> StorageFile {
        StorageFile {
            storage: storage.clone(),
            location: location.to_string(),
            size,
        }
    }
}

impl geoberg_rewrite::RandomAccess for StorageFile {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let end = (offset + len as u64).min(self.size);
        self.storage
            .read_range(&self.location, offset..end)
            .map_err(io::Error::other)
    }

    fn read_ranges(&self, ranges: &[Range<u64>]) -> io::Result<Vec<Bytes>> {
        let (store, path) = self
            .storage
            .object_store(&self.location)
            .map_err(io::Error::other)?;
        let ranges = ranges.to_vec();
        // One call: the store coalesces nearby ranges and fetches them concurrently.
        let got = super::block_on(async move { store.get_ranges(&path, &ranges).await });
        got.map_err(io::Error::other)
    }

    fn prefers_prefetch(&self) -> bool {
        !self.location.starts_with("file:")
    }
}

impl Length for StorageFile {
    fn len(&self) -> u64 {
        self.size
    }
}

impl ChunkReader for StorageFile {
    type T = io::Cursor<Bytes>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(io::Cursor::new(self.get_bytes(
            start,
            (self.size - start.min(self.size)) as usize,
        )?))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        // The reader asks for empty ranges (a page of no bytes); object stores refuse them.
        if length == 0 {
            return Ok(Bytes::new());
        }
        self.storage
            .read_range(&self.location, start..start + length as u64)
            .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))
    }
}
