//! A streamed new file: a synchronous `Write` over an `object_store` multipart upload.

use std::fmt;
use std::io::{self, Write};
use std::sync::Arc;

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart};

use super::io_runtime::{block_on, enter};
use crate::error::{Error, Result};

/// Part size of the uploads: above S3's 5 MiB minimum, small enough to keep memory flat.
const PART_BYTES: usize = 8 << 20;
/// Parts in flight before `write` waits for one to finish.
const PARTS_IN_FLIGHT: usize = 4;

/// Writes a new file as a multipart upload. Nothing is visible under its location until
/// [`StreamWriter::finish`] returns `Ok`; dropping it before then aborts the upload.
///
/// Multipart uploads cannot be conditional on every store, so streamed files must have names
/// nobody else uses (ours carry a UUID).
pub struct StreamWriter {
    location: String,
    upload: Option<WriteMultipart>,
    written: u64,
}

impl fmt::Debug for StreamWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamWriter")
            .field("location", &self.location)
            .field("written", &self.written)
            .finish_non_exhaustive()
    }
}

impl StreamWriter {
    pub(crate) fn start(
        store: Arc<dyn ObjectStore>,
        path: ObjectPath,
        location: &str,
    ) -> Result<StreamWriter> {
        let upload = block_on(async move { store.put_multipart(&path).await })
            .map_err(|e| Error::storage(location, e))?;
        Ok(StreamWriter {
            location: location.to_string(),
            upload: Some(WriteMultipart::new_with_chunk_size(upload, PART_BYTES)),
            written: 0,
        })
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// Completes the upload: the file becomes visible, whole. Nothing may be written after.
    pub fn finish(&mut self) -> Result<u64> {
        let upload = self.upload.take().ok_or_else(|| {
            Error::storage_message(&self.location, "the upload already finished or failed")
        })?;
        block_on(async move { upload.finish().await })
            .map_err(|e| Error::storage(&self.location, e))?;
        Ok(self.written)
    }

    fn upload(&mut self) -> io::Result<&mut WriteMultipart> {
        self.upload
            .as_mut()
            .ok_or_else(|| io::Error::other(format!("upload of {} already failed", self.location)))
    }
}

impl Write for StreamWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let location = self.location.clone();
        let upload = self.upload()?;
        {
            // `write` spawns part uploads onto the current runtime: ours.
            let _runtime = enter();
            upload.write(buf);
        }
        // Back-pressure: the part tasks run on the I/O runtime; waiting for them from this
        // thread only polls their join handles.
        if let Err(e) = futures::executor::block_on(upload.wait_for_capacity(PARTS_IN_FLIGHT)) {
            self.upload = None;
            return Err(io::Error::other(format!("upload of {location}: {e}")));
        }
        self.written += buf.len() as u64;
        Ok(buf.len())
    }

    /// Parts go out as they fill; completing the file is [`StreamWriter::finish`].
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for StreamWriter {
    fn drop(&mut self) {
        if let Some(upload) = self.upload.take() {
            // Best effort: a failed abort leaves invisible parts that the store expires.
            let _ = block_on(async move { upload.abort().await });
        }
    }
}

impl geoberg_rewrite::OutputStream for StreamWriter {
    fn finish(&mut self) -> io::Result<()> {
        StreamWriter::finish(self)
            .map(|_| ())
            .map_err(io::Error::other)
    }
}
