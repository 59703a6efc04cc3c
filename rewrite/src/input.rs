//! What `table` hands the planner: data files with their manifest facts.

use serde::{Deserialize, Serialize};

use crate::Extent;

/// The partition a file belongs to, opaque to this crate: files are clustered within their
/// partition and output files inherit it. `table` uses its partition tuple's string form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct PartitionKey(pub String);

/// One data file as listed in the table's manifests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputFile {
    /// Location of the Parquet file: a local path or a URI that the [`crate::RewriteStorage`]
    /// opens.
    pub location: String,
    /// `file_size_in_bytes` from the manifest.
    pub file_size_bytes: u64,
    /// `record_count` from the manifest.
    pub record_count: u64,
    /// The file's partition.
    pub partition: PartitionKey,
    /// Bounds of the geometry column from the manifest, when recorded.
    pub bbox: Option<Extent>,
    /// Iceberg v3 row lineage of the file. When any input of a partition has one, its output
    /// files carry the `_row_id` and `_last_updated_sequence_number` columns (see
    /// [`RowLineage`]); `None` everywhere (v1/v2 tables) writes the input columns unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<RowLineage>,
    /// Rows of the file that deletes removed (the table's deletion vectors and position
    /// deletes): the rewrite drops them, so they do not come back.
    #[serde(default, skip_serializing_if = "DeletedRows::is_empty")]
    pub deleted: DeletedRows,
}

/// Deleted row positions of one input file, as sorted, disjoint `(start, length)` runs: small
/// for the runs that deletes usually remove, and serializable with the plan.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeletedRows(Vec<(u64, u64)>);

impl DeletedRows {
    /// The runs of ascending `positions` (duplicates allowed).
    pub fn from_sorted(positions: impl IntoIterator<Item = u64>) -> Self {
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for p in positions {
            match runs.last_mut() {
                Some((start, len)) if p < *start + *len => {}
                Some((start, len)) if p == *start + *len => *len += 1,
                _ => runs.push((p, 1)),
            }
        }
        DeletedRows(runs)
    }

    /// True when no row is deleted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Deleted rows.
    pub fn count(&self) -> u64 {
        self.0.iter().map(|(_, n)| n).sum()
    }

    /// Whether the row at `position` is deleted.
    pub fn contains(&self, position: u64) -> bool {
        let i = self.0.partition_point(|(start, _)| *start <= position);
        i > 0 && position < self.0[i - 1].0 + self.0[i - 1].1
    }
}

/// What a reader needs to derive the lineage of a file's rows when its `_row_id` or
/// `_last_updated_sequence_number` column is absent or null (Iceberg spec, "Row Lineage"):
/// `_row_id = first_row_id + position in the file` and `_last_updated_sequence_number = the
/// file's data sequence number`. The rewrite materializes both in its output files, so that the
/// rows keep them wherever they move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowLineage {
    /// The file's `first_row_id` (explicit or inherited from its manifest); `None` when the
    /// snapshot assigned none (a file from before an upgrade to v3), whose rows' ids are null.
    pub first_row_id: Option<i64>,
    /// The file's data sequence number (explicit or inherited from its manifest).
    pub data_sequence_number: i64,
}

impl InputFile {
    /// A file in the unpartitioned (empty) partition.
    pub fn new(location: impl Into<String>, file_size_bytes: u64, record_count: u64) -> Self {
        InputFile {
            location: location.into(),
            file_size_bytes,
            record_count,
            partition: PartitionKey::default(),
            bbox: None,
            lineage: None,
            deleted: DeletedRows::default(),
        }
    }

    /// The same file in `partition`.
    pub fn with_partition(mut self, partition: impl Into<String>) -> Self {
        self.partition = PartitionKey(partition.into());
        self
    }

    /// The same file with geometry bounds.
    pub fn with_bbox(mut self, bbox: Extent) -> Self {
        self.bbox = Some(bbox);
        self
    }

    /// The same file with rows that deletes removed: the rewrite drops them.
    pub fn with_deleted(mut self, deleted: DeletedRows) -> Self {
        self.deleted = deleted;
        self
    }

    /// The same file with its v3 row lineage (its rows keep their ids through the rewrite).
    pub fn with_lineage(mut self, lineage: RowLineage) -> Self {
        self.lineage = Some(lineage);
        self
    }
}
