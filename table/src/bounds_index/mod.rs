//! The file-bounds index persisted with each snapshot, so that a fresh process plans a window
//! from a few small reads instead of decoding every manifest.
//!
//! Two levels, both Puffin files under `metadata/`:
//! - per manifest, a **sidecar** (blob [`MANIFEST_BOUNDS_BLOB`]) with the path, rows, bytes and
//!   box of each of its live files on every indexed geometry column. Manifests are immutable,
//!   so a sidecar is written once, by the commit that writes its manifest, and reused by every
//!   later snapshot that keeps the manifest: a 1-row append to a 1 M-file table writes one tiny
//!   sidecar, not 1 M boxes.
//! - per snapshot, a **root** (blob [`FILE_BOUNDS_INDEX_BLOB`], JSON) naming, for each data
//!   manifest of the snapshot, what identifies it (path, length, file counts, snapshot,
//!   sequence number), its sidecar (location, length, CRC-32) and per column the union of its
//!   files' boxes. A planner reads the root, skips every manifest whose box misses the window
//!   (a clustered table's manifests cover small regions) and reads only the sidecars of the
//!   rest.
//!
//! The root is named by the snapshot summary property [`FILE_BOUNDS_INDEX_SUMMARY_KEY`], which
//! other readers ignore. It is not the snapshot's Iceberg statistics file: Iceberg keeps one
//! statistics file per snapshot, a Hilbert rewrite's is its clustered layout, and
//! `ClusteredLayout::current` walks the ancestors' statistics files on every append; a
//! statistics file on every snapshot would make that walk read one file per ancestor. geoberg's
//! `expire_snapshots` deletes an expired snapshot's root and the sidecars no remaining root
//! names, and its orphan listing counts every root and sidecar as referenced; another engine's
//! orphan removal may delete them, which costs only speed.
//!
//! The index is never trusted over the manifests: a manifest whose root entry is missing or
//! does not match the manifest list, or whose sidecar is missing, has another length or CRC,
//! or does not decode, is read from its Avro instead, and a missing or unreadable root plans
//! from the manifests; the plan's reasons say which. The next commit rebuilds what was missing.

mod commit;
mod plan;
mod sidecar;

use std::collections::BTreeMap;

use bytes::Bytes;
use geoberg_puffin::{Blob, PuffinReader, PuffinWriter};
use iceberg::spec::ManifestFile;
use serde::{Deserialize, Serialize};

pub(crate) use commit::write_for_commit;

use crate::error::{Error, Result};
use crate::storage::Storage;
use crate::table::Table;

/// The snapshot summary property naming the snapshot's file-bounds index (the root Puffin
/// file); other engines ignore it.
pub const FILE_BOUNDS_INDEX_SUMMARY_KEY: &str = "geoberg.file-bounds-index";

/// Puffin blob type of a snapshot's file-bounds index root (JSON).
pub const FILE_BOUNDS_INDEX_BLOB: &str = "geoberg-file-bounds-index-v1";

/// Puffin blob type of one manifest's file boxes (a flat binary layout).
pub const MANIFEST_BOUNDS_BLOB: &str = "geoberg-manifest-file-bounds-v1";

/// A snapshot's index: its data manifests and their sidecars.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Root {
    /// The snapshot it was written for.
    pub(crate) snapshot_id: i64,
    /// Indexed columns, in the order of every sidecar's and manifest's column sections.
    pub(crate) columns: Vec<IndexedColumn>,
    /// The snapshot's data manifests that list live files, in manifest-list order.
    pub(crate) manifests: Vec<ManifestBounds>,
}

/// One indexed column and the rule its boxes were chosen by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct IndexedColumn {
    /// Column name.
    pub(crate) name: String,
    /// [`crate::box_rule::BoxRule::key`] of the rule: boxes are used only under the same rule.
    pub(crate) rule: String,
}

/// One data manifest: what identifies it, where its sidecar is and its boxes per column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ManifestBounds {
    /// Manifest location.
    pub(crate) path: String,
    /// `manifest_length`.
    pub(crate) length: i64,
    /// `added_snapshot_id`.
    pub(crate) added_snapshot_id: i64,
    /// `added_files_count`, `existing_files_count`, `deleted_files_count`.
    pub(crate) counts: [Option<u32>; 3],
    /// Sidecar location.
    pub(crate) sidecar: String,
    /// Sidecar size in bytes.
    pub(crate) sidecar_length: u64,
    /// CRC-32 of the sidecar's bytes.
    pub(crate) sidecar_crc: u32,
    /// Live files, their rows and bytes.
    pub(crate) files: u64,
    /// Rows of the live files.
    pub(crate) records: u64,
    /// Bytes of the live files.
    pub(crate) bytes: u64,
    /// Per indexed column.
    pub(crate) columns: Vec<ManifestColumn>,
}

/// What one manifest's files say about one column, for skipping the whole manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ManifestColumn {
    /// Union of the files' boxes: `[min_x, min_y, max_x, max_y]`; `None` when a file has no
    /// box and is not all null (it is read whatever the window), or a box wraps.
    pub(crate) bbox: Option<[f64; 4]>,
    /// Every file holds only nulls in the column.
    pub(crate) all_null: bool,
    /// Files whose bounds did not decode, and the first problem.
    pub(crate) undecodable: u64,
    /// The first problem of those.
    pub(crate) first_problem: Option<String>,
    /// Files with no bounds at all.
    pub(crate) boundless: u64,
}

impl ManifestBounds {
    /// Whether this entry describes `m`: a manifest is immutable and its name unique, so the
    /// same location, length, file counts and adding snapshot are the same manifest.
    pub(crate) fn describes(&self, m: &ManifestFile) -> bool {
        self.path == m.manifest_path
            && self.length == m.manifest_length
            && self.added_snapshot_id == m.added_snapshot_id
            && self.counts
                == [
                    m.added_files_count,
                    m.existing_files_count,
                    m.deleted_files_count,
                ]
    }
}

impl Root {
    /// The root of the table's current snapshot: `Ok(None)` when the snapshot names none,
    /// `Err(why)` when it cannot be read (a reason for the plan, not a failure).
    pub(crate) fn of_current(table: &Table) -> std::result::Result<Option<(String, Root)>, String> {
        let Some(snapshot) = table.metadata().current_snapshot() else {
            return Ok(None);
        };
        let Some(location) = snapshot
            .summary()
            .additional_properties
            .get(FILE_BOUNDS_INDEX_SUMMARY_KEY)
        else {
            return Ok(None);
        };
        let root = Root::read(table.storage(), location).map_err(|e| e.to_string())?;
        if root.snapshot_id != snapshot.snapshot_id() {
            return Err(format!(
                "{location} was written for snapshot {}, not the current {}",
                root.snapshot_id,
                snapshot.snapshot_id()
            ));
        }
        Ok(Some((location.clone(), root)))
    }

    /// Reads a root Puffin file.
    pub(crate) fn read(storage: &Storage, location: &str) -> Result<Root> {
        let data = read_blob(&storage.read(location)?, location, FILE_BOUNDS_INDEX_BLOB)?;
        serde_json::from_slice(&data).map_err(|e| {
            Error::corrupt(
                location,
                format!("file-bounds index is not valid JSON: {e}"),
            )
        })
    }

    /// Writes the root at `location` (a new file).
    fn write(&self, storage: &Storage, location: &str, sequence_number: i64) -> Result<()> {
        let data = serde_json::to_vec(self).map_err(|e| Error::corrupt(location, e.to_string()))?;
        let bytes = puffin_file(
            location,
            FILE_BOUNDS_INDEX_BLOB,
            self.snapshot_id,
            sequence_number,
            data,
        )?;
        storage.write_new(location, bytes)
    }
}

/// A Puffin file holding one blob.
fn puffin_file(
    location: &str,
    blob_type: &str,
    snapshot_id: i64,
    sequence_number: i64,
    data: Vec<u8>,
) -> Result<Vec<u8>> {
    let puffin = |e: geoberg_puffin::Error| Error::corrupt(location, e.to_string());
    let mut writer = PuffinWriter::new(Vec::new()).map_err(puffin)?;
    writer
        .add_blob(Blob {
            blob_type: blob_type.to_string(),
            fields: Vec::new(),
            snapshot_id,
            sequence_number,
            properties: BTreeMap::new(),
            data,
        })
        .map_err(puffin)?;
    Ok(writer.finish().map_err(puffin)?.0)
}

/// The first blob of type `blob_type` in the Puffin file `bytes`.
fn read_blob(bytes: &Bytes, location: &str, blob_type: &str) -> Result<Vec<u8>> {
    let puffin = |e: geoberg_puffin::Error| Error::corrupt(location, e.to_string());
    let mut reader =
        PuffinReader::open(std::io::Cursor::new(bytes.clone()), location).map_err(puffin)?;
    let Some(blob) = reader
        .metadata()
        .blobs
        .iter()
        .find(|b| b.blob_type == blob_type)
        .cloned()
    else {
        return Err(Error::corrupt(location, format!("no {blob_type} blob")));
    };
    reader.read_blob(&blob).map_err(puffin)
}

/// Every file the roots at `locations` consist of: the roots and the sidecars they name
/// (roots that cannot be read name none). For orphan listing and snapshot expiry.
pub(crate) fn index_files(storage: &Storage, locations: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for l in locations {
        out.push(l.clone());
        if let Ok(root) = Root::read(storage, l) {
            out.extend(root.manifests.into_iter().map(|m| m.sidecar));
        }
    }
    out
}

/// The index roots snapshots name in their summaries.
pub(crate) fn root_of(snapshot: &iceberg::spec::Snapshot) -> Option<&String> {
    snapshot
        .summary()
        .additional_properties
        .get(FILE_BOUNDS_INDEX_SUMMARY_KEY)
}
