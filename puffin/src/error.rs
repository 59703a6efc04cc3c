//! The one error type of this crate: a kind a caller can match on, and where it happened.

use std::fmt;

/// A Puffin or deletion-vector failure: what went wrong ([`ErrorKind`]) and in which file or
/// blob ([`Error::location`]), so that a message names both.
#[derive(Debug)]
pub struct Error {
    location: Option<String>,
    kind: ErrorKind,
}

impl Error {
    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The file (and blob) it went wrong in, when known.
    pub fn location(&self) -> Option<&str> {
        self.location.as_deref()
    }

    /// The same error in `location` (a file path, or a path and blob range). An inner location
    /// is kept after the outer one: "a.puffin, blob at 4 (40 bytes)".
    pub fn at(mut self, location: impl Into<String>) -> Error {
        let outer = location.into();
        self.location = Some(match self.location.take() {
            Some(inner) => format!("{outer}, {inner}"),
            None => outer,
        });
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(l) => write!(f, "{l}: {}", self.kind),
            None => write!(f, "{}", self.kind),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.kind.source()
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Error {
            location: None,
            kind,
        }
    }
}

/// Bytes as `D1 D3 39 64`, for messages about magic numbers.
pub(crate) struct Hex<'a>(pub &'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, b) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{b:02X}")?;
        }
        Ok(())
    }
}

/// What went wrong. Messages name the value found and what was expected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing the underlying file failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),

    /// A Puffin magic (`PFA1`) is missing: not a Puffin file, or a truncated or overwritten one.
    #[error(
        "not a Puffin file: expected the magic PFA1 (50 46 41 31) at the {position}, found {}; \
         the file is truncated, overwritten, or of another format",
        Hex(found)
    )]
    FileMagic {
        /// Where the magic should be: "start of the file", "start of the footer" or "end of the file".
        position: &'static str,
        /// The four bytes found there.
        found: [u8; 4],
    },

    /// The file or blob ends before a structure it declares.
    #[error(
        "truncated: {what} needs {needed} bytes but only {available} are there; the file was cut \
         short or the offset/length that point into it are wrong"
    )]
    Truncated {
        /// The structure being read.
        what: &'static str,
        /// Bytes it needs.
        needed: u64,
        /// Bytes available.
        available: u64,
    },

    /// The footer's `FooterPayloadSize` is negative or larger than the file.
    #[error(
        "invalid Puffin footer: FooterPayloadSize is {size}, but the file has only {file_size} \
         bytes (the footer is corrupt)"
    )]
    FooterPayloadSize {
        /// The size field as stored (a signed 4-byte integer).
        size: i32,
        /// The file's size.
        file_size: u64,
    },

    /// Reserved footer flags are set: the file was written by a newer Puffin version.
    #[error(
        "unsupported Puffin footer flags {}: only bit 0 of byte 0 (compressed payload) is defined; \
         the file was written by a newer Puffin version",
        Hex(flags)
    )]
    UnsupportedFlags {
        /// The four flag bytes.
        flags: [u8; 4],
    },

    /// The footer payload is not the `FileMetadata` JSON of the spec.
    #[error("Puffin footer payload is not valid FileMetadata JSON: {0}")]
    FooterJson(#[source] serde_json::Error),

    /// A compression codec this crate does not read.
    #[error(
        "compression codec '{codec}' of the {context} is not supported: Puffin defines only lz4 \
         and zstd (or no codec)"
    )]
    UnsupportedCodec {
        /// The codec name as given.
        codec: String,
        /// "footer payload" or "blob".
        context: &'static str,
    },

    /// Compressed bytes that do not decompress.
    #[error("cannot decompress the {context} with {codec}: {source}")]
    Decompress {
        /// Codec name.
        codec: &'static str,
        /// "footer payload" or "blob".
        context: &'static str,
        /// The decoder's error.
        #[source]
        source: std::io::Error,
    },

    /// A blob's offset and length do not lie inside the file.
    #[error(
        "blob at offset {offset} with length {length} is outside the file ({file_size} bytes): the \
         footer or manifest entry is corrupt, or points at another file"
    )]
    BlobOutOfBounds {
        /// The blob's offset.
        offset: i64,
        /// The blob's length.
        length: i64,
        /// The file's size.
        file_size: u64,
    },

    /// A blob or footer too large for the 4-byte fields that describe it.
    #[error("{what} of {bytes} bytes is too large for Puffin (at most {max} bytes)")]
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// Its size.
        bytes: u64,
        /// The largest size allowed.
        max: u64,
    },

    /// The blob is shorter than the smallest deletion vector (20 bytes: an empty one).
    #[error(
        "blob is too small ({length} bytes) to be a deletion-vector-v1: even an empty vector has \
         20 (length, magic, bitmap count, CRC)"
    )]
    DeletionVectorTooSmall {
        /// The blob's length.
        length: usize,
    },

    /// The deletion vector magic `D1 D3 39 64` is missing.
    #[error(
        "Magic bytes mismatch, deletion vector is corrupt: expected D1 D3 39 64, found {} (is the \
         offset right, and is the blob a deletion-vector-v1?)",
        Hex(found)
    )]
    DeletionVectorMagic {
        /// The four bytes found.
        found: [u8; 4],
    },

    /// The big-endian length field disagrees with the blob's size.
    #[error(
        "deletion vector length field says {declared} bytes of magic and bitmap, but the blob has \
         room for {available} (blob length - 8): the blob is corrupt or its content size is wrong"
    )]
    DeletionVectorLength {
        /// The stored length of magic + bitmap.
        declared: u32,
        /// Blob length less the length and CRC fields.
        available: u64,
    },

    /// The CRC-32 of magic + bitmap does not match the stored one.
    #[error(
        "CRC-32 mismatch, deletion vector is corrupt: stored 0x{stored:08x}, computed \
         0x{computed:08x}"
    )]
    DeletionVectorCrc {
        /// The checksum stored after the bitmap.
        stored: u32,
        /// The checksum of the bytes read.
        computed: u32,
    },

    /// The 64-bit Roaring bitmap inside the vector is malformed.
    #[error("deletion vector bitmap is corrupt: {reason}")]
    DeletionVectorBitmap {
        /// What is wrong, with the bucket it is in.
        reason: String,
    },

    /// A row position too large for a deletion vector.
    #[error(
        "row position {position} is larger than a deletion vector can hold ({max}, the largest \
         position Iceberg's Java reader accepts)"
    )]
    PositionTooLarge {
        /// The position.
        position: u64,
        /// The largest position allowed.
        max: u64,
    },

    /// A deleted position at or past the end of the data file it applies to.
    #[error(
        "deletion vector deletes row position {position}, but the data file has only {num_rows} \
         rows: the vector belongs to another file or is corrupt"
    )]
    PositionBeyondFile {
        /// The position.
        position: u64,
        /// Rows of the data file.
        num_rows: u64,
    },

    /// An empty vector given to the writer: a data file without deletes gets no vector.
    #[error(
        "deletion vector for '{referenced_data_file}' deletes no rows: write no vector for a \
         file without deletes (pyiceberg 0.12 cannot read an empty one)"
    )]
    EmptyDeletionVector {
        /// The data file it was meant for.
        referenced_data_file: String,
    },

    /// A blob of another type where a deletion vector was expected.
    #[error("blob type '{found}' is not deletion-vector-v1")]
    NotADeletionVector {
        /// The blob's type.
        found: String,
    },

    /// A deletion vector blob that declares a compression codec.
    #[error(
        "deletion-vector-v1 blob declares compression codec '{codec}', but the spec requires \
         deletion vectors to be stored uncompressed"
    )]
    CompressedDeletionVector {
        /// The declared codec.
        codec: String,
    },

    /// A required blob property is absent.
    #[error("deletion-vector-v1 blob lacks its required property '{property}'")]
    MissingProperty {
        /// The property name.
        property: &'static str,
    },

    /// A blob property whose value cannot be parsed.
    #[error("deletion-vector-v1 blob property '{property}' = '{value}' is not {expected}")]
    InvalidProperty {
        /// The property name.
        property: &'static str,
        /// The value as stored.
        value: String,
        /// What it should be.
        expected: &'static str,
    },

    /// The `cardinality` property disagrees with the vector.
    #[error(
        "deletion vector holds {actual} positions, but its cardinality property says {declared}: \
         the blob or its metadata is corrupt"
    )]
    CardinalityMismatch {
        /// The `cardinality` property.
        declared: u64,
        /// Positions in the decoded vector.
        actual: u64,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        ErrorKind::Io(e).into()
    }
}
