//! The footer payload: `FileMetadata` and `BlobMetadata` (spec, "Footer Payload").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Everything the footer says about a Puffin file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMetadata {
    /// The blobs, in file order.
    pub blobs: Vec<BlobMetadata>,
    /// File properties such as `created-by`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, String>,
}

/// Where one blob is and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct BlobMetadata {
    /// Blob type, e.g. `deletion-vector-v1`.
    #[serde(rename = "type")]
    pub blob_type: String,
    /// Field ids the blob was computed for.
    pub fields: Vec<i32>,
    /// Snapshot the blob was computed from (-1 for deletion vectors: inherited).
    pub snapshot_id: i64,
    /// Sequence number of that snapshot (-1 for deletion vectors: inherited).
    pub sequence_number: i64,
    /// Offset of the blob's first byte in the file.
    pub offset: i64,
    /// Stored length of the blob (after compression, if compressed).
    pub length: i64,
    /// `lz4` or `zstd` when compressed; absent when not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression_codec: Option<String>,
    /// Blob properties, e.g. a deletion vector's `referenced-data-file` and `cardinality`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, String>,
}
