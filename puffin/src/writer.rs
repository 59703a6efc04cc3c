//! Writing Puffin files: magic, blobs, then an uncompressed footer.

use std::collections::BTreeMap;
use std::io::Write;

use crate::{
    BlobMetadata, DeletionVector, ErrorKind, FileMetadata, PUFFIN_MAGIC, Result,
    deletion_vector_properties,
};

/// The Puffin `deletion-vector-v1` blob type.
pub const DELETION_VECTOR_V1: &str = "deletion-vector-v1";
/// The reserved field id of `_pos`, the row position (Iceberg spec, "Reserved Field IDs"): the
/// one field of a deletion vector blob, as Iceberg Java writes it.
pub const ROW_POSITION_FIELD_ID: i32 = i32::MAX - 2;
/// Blob property: the data file a deletion vector applies to (its `location` in the table).
pub const REFERENCED_DATA_FILE: &str = "referenced-data-file";
/// Blob property: the number of deleted positions of a deletion vector.
pub const CARDINALITY: &str = "cardinality";
/// File property naming the writer.
pub const CREATED_BY: &str = "created-by";

/// A blob to add, uncompressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// Blob type.
    pub blob_type: String,
    /// Field ids it was computed for.
    pub fields: Vec<i32>,
    /// Snapshot it was computed from (-1 when inherited).
    pub snapshot_id: i64,
    /// That snapshot's sequence number (-1 when inherited).
    pub sequence_number: i64,
    /// Blob properties.
    pub properties: BTreeMap<String, String>,
    /// The bytes.
    pub data: Vec<u8>,
}

/// What a manifest entry of a deletion vector needs from the Puffin file it was written to
/// (with the file's location and [`PuffinSummary::file_size_in_bytes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletionVectorEntry {
    /// The data file the vector applies to: the entry's `referenced_data_file`.
    pub referenced_data_file: String,
    /// The blob's offset: the entry's `content_offset`.
    pub content_offset: i64,
    /// The blob's length: the entry's `content_size_in_bytes`.
    pub content_size_in_bytes: i64,
    /// Deleted rows: the entry's `record_count`.
    pub cardinality: u64,
}

/// A finished Puffin file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PuffinSummary {
    /// The footer as written.
    pub metadata: FileMetadata,
    /// Total bytes written: the manifest entry's `file_size_in_bytes`.
    pub file_size_in_bytes: u64,
    /// Bytes of the footer (magic, payload, size, flags, magic).
    pub footer_size_in_bytes: u64,
}

/// Writes a Puffin file to `W`: the magic on creation, blobs as they are added, the footer on
/// [`PuffinWriter::finish`]. Blobs and footer are stored uncompressed, the form DuckDB, pyiceberg
/// and Iceberg Java all read.
///
/// ```
/// use geoberg_puffin::{DeletionVector, PuffinReader, PuffinWriter};
///
/// let mut writer = PuffinWriter::new(Vec::new())?;
/// let dv = DeletionVector::from_positions([3, 4, 5, 1 << 40])?;
/// let entry = writer.add_deletion_vector("s3://b/t/data/a.parquet", &dv)?;
/// let (bytes, summary) = writer.finish()?;
/// assert_eq!(summary.file_size_in_bytes, bytes.len() as u64);
///
/// let mut reader = PuffinReader::open(std::io::Cursor::new(bytes), "dv.puffin")?;
/// let back = reader.read_deletion_vector_at(entry.content_offset, entry.content_size_in_bytes)?;
/// assert_eq!(back, dv);
/// # Ok::<(), geoberg_puffin::Error>(())
/// ```
pub struct PuffinWriter<W: Write> {
    out: W,
    written: u64,
    blobs: Vec<BlobMetadata>,
    properties: BTreeMap<String, String>,
}

impl<W: Write> PuffinWriter<W> {
    /// Starts a file on `out` (writes the magic); `created-by` names this crate until
    /// [`PuffinWriter::set_property`] replaces it.
    pub fn new(mut out: W) -> Result<PuffinWriter<W>> {
        out.write_all(&PUFFIN_MAGIC)?;
        let mut properties = BTreeMap::new();
        properties.insert(
            CREATED_BY.to_string(),
            concat!("geoberg-puffin ", env!("CARGO_PKG_VERSION")).to_string(),
        );
        Ok(PuffinWriter {
            out,
            written: PUFFIN_MAGIC.len() as u64,
            blobs: Vec::new(),
            properties,
        })
    }

    /// Sets a file property (e.g. [`CREATED_BY`]).
    pub fn set_property(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.properties.insert(key.into(), value.into());
    }

    /// Appends a blob, uncompressed; returns its metadata (offset and length in the file).
    pub fn add_blob(&mut self, blob: Blob) -> Result<&BlobMetadata> {
        let offset = self.written;
        self.out.write_all(&blob.data)?;
        self.written += blob.data.len() as u64;
        self.blobs.push(BlobMetadata {
            blob_type: blob.blob_type,
            fields: blob.fields,
            snapshot_id: blob.snapshot_id,
            sequence_number: blob.sequence_number,
            offset: offset as i64,
            length: blob.data.len() as i64,
            compression_codec: None,
            properties: blob.properties,
        });
        Ok(self.blobs.last().expect("a blob was just added"))
    }

    /// Appends the `deletion-vector-v1` blob of `vector` for `referenced_data_file`, with the
    /// fields and properties Iceberg Java writes (`_pos`, `referenced-data-file`, `cardinality`,
    /// snapshot id and sequence number -1). One vector per data file: merge a new delete into
    /// the file's previous vector ([`DeletionVector::union_with`]) before writing it. An empty
    /// vector is refused: a file without deletes gets none (and pyiceberg 0.12 fails on one).
    pub fn add_deletion_vector(
        &mut self,
        referenced_data_file: &str,
        vector: &DeletionVector,
    ) -> Result<DeletionVectorEntry> {
        if vector.is_empty() {
            return Err(ErrorKind::EmptyDeletionVector {
                referenced_data_file: referenced_data_file.to_string(),
            }
            .into());
        }
        let data = vector.to_blob()?;
        let cardinality = vector.len();
        let blob = self.add_blob(Blob {
            blob_type: DELETION_VECTOR_V1.to_string(),
            fields: vec![ROW_POSITION_FIELD_ID],
            snapshot_id: -1,
            sequence_number: -1,
            properties: deletion_vector_properties(referenced_data_file, cardinality),
            data,
        })?;
        Ok(DeletionVectorEntry {
            referenced_data_file: referenced_data_file.to_string(),
            content_offset: blob.offset,
            content_size_in_bytes: blob.length,
            cardinality,
        })
    }

    /// Writes the footer (magic, JSON payload, payload size, zero flags, magic), flushes, and
    /// returns the sink with what was written.
    pub fn finish(mut self) -> Result<(W, PuffinSummary)> {
        let metadata = FileMetadata {
            blobs: std::mem::take(&mut self.blobs),
            properties: std::mem::take(&mut self.properties),
        };
        let payload = serde_json::to_vec(&metadata).map_err(ErrorKind::FooterJson)?;
        let size = i32::try_from(payload.len()).map_err(|_| ErrorKind::TooLarge {
            what: "footer payload",
            bytes: payload.len() as u64,
            max: i32::MAX as u64,
        })?;
        let mut footer = Vec::with_capacity(payload.len() + 16);
        footer.extend(PUFFIN_MAGIC);
        footer.extend(&payload);
        footer.extend(size.to_le_bytes());
        footer.extend([0u8; 4]);
        footer.extend(PUFFIN_MAGIC);
        self.out.write_all(&footer)?;
        self.out.flush()?;
        let footer_size_in_bytes = footer.len() as u64;
        Ok((
            self.out,
            PuffinSummary {
                metadata,
                file_size_in_bytes: self.written + footer_size_in_bytes,
                footer_size_in_bytes,
            },
        ))
    }
}
