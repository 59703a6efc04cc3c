//! Reading Puffin files: the footer, blobs by their metadata, and blobs by (offset, length)
//! alone, as a manifest entry's `content_offset` / `content_size_in_bytes` give them.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};

use crate::{
    BlobMetadata, CARDINALITY, CompressionCodec, DELETION_VECTOR_V1, DeletionVector, ErrorKind,
    FileMetadata, PUFFIN_MAGIC, REFERENCED_DATA_FILE, Result,
};

/// Footer trailer after the payload: payload size (4), flags (4), magic (4).
const TRAILER_BYTES: u64 = 12;
/// Smallest file: magic, footer magic, trailer (an empty payload).
const MIN_FILE_BYTES: u64 = 4 + 4 + TRAILER_BYTES;

/// An open Puffin file whose footer has been read and checked. Reads only the header magic,
/// the footer and the blobs asked for, never the whole file.
///
/// Compressed footers (LZ4) and blobs (LZ4, zstd) are read; the crate itself writes neither.
pub struct PuffinReader<R> {
    source: R,
    location: String,
    file_size: u64,
    footer_start: u64,
    metadata: FileMetadata,
}

impl<R: Read + Seek> PuffinReader<R> {
    /// Reads and checks the magic at the start, the footer, and its JSON payload. `location`
    /// names the file in errors.
    pub fn open(source: R, location: impl Into<String>) -> Result<PuffinReader<R>> {
        let location = location.into();
        Self::open_inner(source, &location).map_err(|e| e.at(location))
    }

    fn open_inner(mut source: R, location: &str) -> Result<PuffinReader<R>> {
        let file_size = source.seek(SeekFrom::End(0))?;
        if file_size < MIN_FILE_BYTES {
            return Err(ErrorKind::Truncated {
                what: "a Puffin file (magic, footer magic and footer trailer)",
                needed: MIN_FILE_BYTES,
                available: file_size,
            }
            .into());
        }
        let head = read_range(&mut source, 0, 4, "the file magic")?;
        check_magic(&head, "start of the file")?;
        let trailer = read_range(
            &mut source,
            file_size - TRAILER_BYTES,
            TRAILER_BYTES,
            "the footer trailer",
        )?;
        check_magic(&trailer[8..12], "end of the file")?;
        let size = i32::from_le_bytes(trailer[0..4].try_into().expect("4 bytes"));
        let flags: [u8; 4] = trailer[4..8].try_into().expect("4 bytes");
        if size < 0 || size as u64 > file_size - MIN_FILE_BYTES {
            return Err(ErrorKind::FooterPayloadSize { size, file_size }.into());
        }
        let footer_start = file_size - TRAILER_BYTES - size as u64 - 4;
        let footer = read_range(
            &mut source,
            footer_start,
            4 + size as u64,
            "the footer payload",
        )?;
        check_magic(&footer[..4], "start of the footer")?;
        if flags[0] & !1 != 0 || flags[1..] != [0, 0, 0] {
            return Err(ErrorKind::UnsupportedFlags { flags }.into());
        }
        let payload = if flags[0] & 1 == 1 {
            CompressionCodec::Lz4.decompress(&footer[4..], "footer payload")?
        } else {
            footer[4..].to_vec()
        };
        let metadata: FileMetadata =
            serde_json::from_slice(&payload).map_err(ErrorKind::FooterJson)?;
        Ok(PuffinReader {
            source,
            location: location.to_string(),
            file_size,
            footer_start,
            metadata,
        })
    }

    /// The footer.
    pub fn metadata(&self) -> &FileMetadata {
        &self.metadata
    }

    /// The file's size in bytes.
    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// A blob's bytes, decompressed. The blob must lie between the header magic and the footer.
    pub fn read_blob(&mut self, blob: &BlobMetadata) -> Result<Vec<u8>> {
        let context = blob_context(blob.offset, blob.length);
        self.read_blob_inner(blob)
            .map_err(|e| e.at(context).at(&self.location))
    }

    fn read_blob_inner(&mut self, blob: &BlobMetadata) -> Result<Vec<u8>> {
        let codec = blob
            .compression_codec
            .as_deref()
            .map(|c| CompressionCodec::parse(c, "blob"))
            .transpose()?;
        let inside = blob.offset >= PUFFIN_MAGIC.len() as i64
            && blob.length >= 0
            && (blob.offset as u64).saturating_add(blob.length as u64) <= self.footer_start;
        if !inside {
            return Err(ErrorKind::BlobOutOfBounds {
                offset: blob.offset,
                length: blob.length,
                file_size: self.file_size,
            }
            .into());
        }
        let raw = read_range(
            &mut self.source,
            blob.offset as u64,
            blob.length as u64,
            "the blob",
        )?;
        match codec {
            Some(c) => c.decompress(&raw, "blob"),
            None => Ok(raw),
        }
    }

    /// The deletion vector of a `deletion-vector-v1` blob, after checking its type, that it is
    /// uncompressed, and that its `cardinality` property matches; with its
    /// `referenced-data-file`.
    pub fn read_deletion_vector(
        &mut self,
        blob: &BlobMetadata,
    ) -> Result<(String, DeletionVector)> {
        let context = blob_context(blob.offset, blob.length);
        let checked = check_deletion_vector_metadata(blob)
            .map_err(|e| e.at(context.clone()).at(&self.location))?;
        let bytes = self.read_blob(blob)?;
        let vector = DeletionVector::from_blob(&bytes)
            .and_then(|v| {
                if v.len() == checked.cardinality {
                    Ok(v)
                } else {
                    Err(ErrorKind::CardinalityMismatch {
                        declared: checked.cardinality,
                        actual: v.len(),
                    }
                    .into())
                }
            })
            .map_err(|e| e.at(context).at(&self.location))?;
        Ok((checked.referenced_data_file, vector))
    }

    /// Every deletion vector in the file with the data file it applies to, in file order
    /// (blobs of other types are skipped).
    pub fn deletion_vectors(&mut self) -> Result<Vec<(String, DeletionVector)>> {
        let blobs: Vec<BlobMetadata> = self
            .metadata
            .blobs
            .iter()
            .filter(|b| b.blob_type == DELETION_VECTOR_V1)
            .cloned()
            .collect();
        blobs.iter().map(|b| self.read_deletion_vector(b)).collect()
    }

    /// The deletion vector at `offset`, `length` bytes long, checked by its own framing (length,
    /// magic, CRC) only, as a manifest entry locates it.
    pub fn read_deletion_vector_at(&mut self, offset: i64, length: i64) -> Result<DeletionVector> {
        read_deletion_vector_at(&mut self.source, offset, length).map_err(|e| e.at(&self.location))
    }

    /// The underlying source.
    pub fn into_inner(self) -> R {
        self.source
    }
}

/// The checked facts of a deletion-vector blob's metadata.
struct DeletionVectorFacts {
    referenced_data_file: String,
    cardinality: u64,
}

fn check_deletion_vector_metadata(blob: &BlobMetadata) -> Result<DeletionVectorFacts> {
    if blob.blob_type != DELETION_VECTOR_V1 {
        return Err(ErrorKind::NotADeletionVector {
            found: blob.blob_type.clone(),
        }
        .into());
    }
    if let Some(codec) = &blob.compression_codec {
        return Err(ErrorKind::CompressedDeletionVector {
            codec: codec.clone(),
        }
        .into());
    }
    let property = |name: &'static str| {
        blob.properties
            .get(name)
            .ok_or(ErrorKind::MissingProperty { property: name })
    };
    let referenced_data_file = property(REFERENCED_DATA_FILE)?.clone();
    let cardinality = property(CARDINALITY)?;
    let cardinality = cardinality
        .parse::<u64>()
        .map_err(|_| ErrorKind::InvalidProperty {
            property: CARDINALITY,
            value: cardinality.clone(),
            expected: "a non-negative integer",
        })?;
    Ok(DeletionVectorFacts {
        referenced_data_file,
        cardinality,
    })
}

/// The properties of a deletion-vector blob.
pub(crate) fn deletion_vector_properties(
    referenced_data_file: &str,
    cardinality: u64,
) -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            REFERENCED_DATA_FILE.to_string(),
            referenced_data_file.to_string(),
        ),
        (CARDINALITY.to_string(), cardinality.to_string()),
    ])
}

/// The raw bytes at `offset`, `length` long, of any seekable source (no footer is read).
pub fn read_blob_at<R: Read + Seek>(source: &mut R, offset: i64, length: i64) -> Result<Vec<u8>> {
    let file_size = source.seek(SeekFrom::End(0))?;
    let inside =
        offset >= 0 && length >= 0 && (offset as u64).saturating_add(length as u64) <= file_size;
    if !inside {
        return Err(ErrorKind::BlobOutOfBounds {
            offset,
            length,
            file_size,
        }
        .into());
    }
    read_range(source, offset as u64, length as u64, "the blob")
        .map_err(|e| e.at(blob_context(offset, length)))
}

/// The deletion vector at `offset`, `length` bytes long (a manifest entry's `content_offset`
/// and `content_size_in_bytes`), without reading the file's footer.
pub fn read_deletion_vector_at<R: Read + Seek>(
    source: &mut R,
    offset: i64,
    length: i64,
) -> Result<DeletionVector> {
    let bytes = read_blob_at(source, offset, length)?;
    DeletionVector::from_blob(&bytes).map_err(|e| e.at(blob_context(offset, length)))
}

fn blob_context(offset: i64, length: i64) -> String {
    format!("blob at offset {offset} ({length} bytes)")
}

fn check_magic(found: &[u8], position: &'static str) -> Result<()> {
    if found == PUFFIN_MAGIC {
        return Ok(());
    }
    Err(ErrorKind::FileMagic {
        position,
        found: found.try_into().expect("magic slices are 4 bytes"),
    }
    .into())
}

fn read_range<R: Read + Seek>(
    source: &mut R,
    offset: u64,
    length: u64,
    what: &'static str,
) -> Result<Vec<u8>> {
    source.seek(SeekFrom::Start(offset))?;
    let mut out = Vec::new();
    let read = source.by_ref().take(length).read_to_end(&mut out)? as u64;
    if read < length {
        return Err(ErrorKind::Truncated {
            what,
            needed: length,
            available: read,
        }
        .into());
    }
    Ok(out)
}
