//! Puffin files and Iceberg v3 deletion vectors.
//!
//! A v3 table deletes rows in merge-on-read mode by writing, per affected data file, one
//! [`DeletionVector`] (the set of deleted row positions) as a `deletion-vector-v1` blob of a
//! [Puffin](https://iceberg.apache.org/puffin-spec/) file; the manifest entry of the delete file
//! names the data file (`referenced_data_file`) and the blob's `content_offset` and
//! `content_size_in_bytes`, so that a reader fetches the blob without reading the footer.
//!
//! - [`PuffinWriter`] writes the magic `PFA1`, blobs, and an uncompressed footer (DuckDB's
//!   iceberg extension and pyiceberg 0.12 read only uncompressed footers).
//!   [`PuffinWriter::add_deletion_vector`] returns the [`DeletionVectorEntry`] a manifest needs.
//! - [`PuffinReader`] checks both magics, the footer flags and JSON ([`FileMetadata`]), reads
//!   blobs (LZ4 footers, LZ4 and zstd blobs included) and deletion vectors with their
//!   `referenced-data-file` and `cardinality`; [`read_deletion_vector_at`] reads one vector by
//!   (offset, length) alone.
//! - [`DeletionVector`]: insert, [`DeletionVector::union_with`] (a second delete on the same
//!   file writes the merged vector), sorted iteration, `contains`, and
//!   [`DeletionVector::keep_skip_runs`], run-length [`RowRun`]s over a file's rows for a Parquet
//!   row selection. Its blob is the spec's framing (big-endian length, magic `D1 D3 39 64`,
//!   portable 64-bit Roaring bitmap, big-endian CRC-32), byte for byte what Iceberg Java writes.
//!
//! Every malformed input is a typed [`Error`] whose [`ErrorKind`] says what is wrong (magic,
//! length, CRC, truncation, codec, blob type, properties) and whose message names the file.
//!
//! ```
//! use std::io::Cursor;
//! use geoberg_puffin::{DeletionVector, PuffinReader, PuffinWriter, RowRun};
//!
//! // A first DELETE removed rows 2..5 of a data file; a second one removes row 8.
//! let mut first = DeletionVector::new();
//! first.insert_range(2..5)?;
//! let second = DeletionVector::from_positions([8])?;
//! let merged = first.union(&second);
//!
//! let mut writer = PuffinWriter::new(Vec::new())?;
//! let entry = writer.add_deletion_vector("file:/warehouse/t/data/00000.parquet", &merged)?;
//! let (bytes, summary) = writer.finish()?;
//! assert_eq!((entry.cardinality, summary.file_size_in_bytes), (4, bytes.len() as u64));
//!
//! // A scan reads the blob the manifest entry points at, and skips the deleted rows.
//! let mut file = Cursor::new(bytes);
//! let dv = geoberg_puffin::read_deletion_vector_at(
//!     &mut file,
//!     entry.content_offset,
//!     entry.content_size_in_bytes,
//! )?;
//! assert_eq!(
//!     dv.keep_skip_runs(10)?,
//!     [RowRun::keep(2), RowRun::skip(3), RowRun::keep(3), RowRun::skip(1), RowRun::keep(1)]
//! );
//!
//! // Or every vector of the file, with the data file each applies to.
//! let mut reader = PuffinReader::open(file, "delete.puffin")?;
//! let vectors = reader.deletion_vectors()?;
//! assert_eq!(vectors[0].0, "file:/warehouse/t/data/00000.parquet");
//! assert_eq!(vectors[0].1.iter().collect::<Vec<_>>(), [2, 3, 4, 8]);
//! # Ok::<(), geoberg_puffin::Error>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod codec;
mod deletion_vector;
mod deletion_vector_blob;
mod error;
mod file_metadata;
mod reader;
mod row_runs;
mod writer;

pub use codec::CompressionCodec;
pub use deletion_vector::{DeletionVector, MAX_POSITION};
pub use deletion_vector_blob::DELETION_VECTOR_MAGIC;
pub use error::{Error, ErrorKind, Result};
pub use file_metadata::{BlobMetadata, FileMetadata};
pub use reader::{PuffinReader, read_blob_at, read_deletion_vector_at};
pub use row_runs::{RowRun, keep_skip_runs};
pub use writer::{
    Blob, CARDINALITY, CREATED_BY, DELETION_VECTOR_V1, DeletionVectorEntry, PuffinSummary,
    PuffinWriter, REFERENCED_DATA_FILE, ROW_POSITION_FIELD_ID,
};

pub(crate) use reader::deletion_vector_properties;

/// The Puffin magic `PFA1`, at the start of the file and around the footer.
pub const PUFFIN_MAGIC: [u8; 4] = *b"PFA1";
