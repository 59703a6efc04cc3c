//! `INSERT OVERWRITE` (Iceberg Java's `ReplacePartitions`, Spark's dynamic partition
//! overwrite): new rows replace every live data file of the partitions they fall in (of an
//! unpartitioned table: every live data file) in one `overwrite` snapshot. Partitions the new
//! rows do not touch keep their files, so re-running one partition's backfill (seed 002) is
//! atomic and idempotent.
//!
//! The snapshot replaces exactly the files that were live when the statement started: a
//! concurrent commit that removed or rewrote one of them, or added deletes to it, makes the
//! overwrite fail with a conflict (its new files are removed); rows appended meanwhile are kept.

use std::collections::HashSet;

use arrow_array::RecordBatch;
use iceberg::spec::{DataContentType, DataFile};

use crate::deletes::DeleteIndex;
use crate::error::Result;
use crate::ops::row_delta::RowDeltaOp;
use crate::snapshot::{CommitFailure, ReadSet, commit_with_retry};
use crate::table::Table;
use crate::write::write_data_files;

/// What an overwrite did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverwriteReport {
    /// Partitions replaced (1 for an unpartitioned table that had files or got rows).
    pub partitions: usize,
    /// Live data files removed.
    pub removed_data_files: usize,
    /// Rows those files held (before their deletes).
    pub removed_rows: u64,
    /// Data files added.
    pub added_data_files: usize,
    /// Rows added.
    pub added_rows: u64,
    /// The snapshot committed (`None` when there were no rows: nothing is replaced).
    pub snapshot_id: Option<i64>,
}

impl Table {
    /// Writes `batches` and replaces, in one commit, every live data file of the partitions
    /// the rows fall in (dynamic partition overwrite; an unpartitioned table is one
    /// partition). No rows replace nothing. Rows are checked as [`Table::append`] checks them.
    pub fn overwrite_partitions(
        &self,
        batches: &[RecordBatch],
    ) -> Result<(Table, OverwriteReport)> {
        let written = write_data_files(self, batches)?;
        if written.is_empty() {
            let report = OverwriteReport {
                partitions: 0,
                removed_data_files: 0,
                removed_rows: 0,
                added_data_files: 0,
                added_rows: 0,
                snapshot_id: None,
            };
            return Ok((self.clone(), report));
        }
        let cleanup = |files: &[DataFile]| {
            for f in files {
                let _ = self.storage().delete(f.file_path());
            }
        };
        let spec_id = self.metadata().default_partition_spec_id();
        let replaced: HashSet<&iceberg::spec::Struct> =
            written.iter().map(DataFile::partition).collect();
        let entries = match self.live_entries() {
            Ok(e) => e,
            Err(e) => {
                cleanup(&written);
                return Err(e);
            }
        };
        // Files of older specs belong to no partition of the current spec; Iceberg's
        // ReplacePartitions refuses them, and so does this by leaving them alone.
        let removed: Vec<&DataFile> = entries
            .iter()
            .filter(|(spec, e)| {
                *spec == spec_id
                    && e.data_file().content_type() == DataContentType::Data
                    && replaced.contains(e.data_file().partition())
            })
            .map(|(_, e)| e.data_file())
            .collect();
        let paths: Vec<String> = removed.iter().map(|f| f.file_path().to_string()).collect();
        let deletes = match DeleteIndex::of(self) {
            Ok(d) => d,
            Err(e) => {
                cleanup(&written);
                return Err(e);
            }
        };
        let op = RowDeltaOp {
            read: ReadSet {
                starting_snapshot_id: self.metadata().current_snapshot_id().unwrap_or(-1),
                files: paths.iter().cloned().collect(),
                ..ReadSet::default()
            },
            added_data: written.iter().map(|f| (spec_id, f.clone())).collect(),
            added_deletes: Vec::new(),
            removed_vectors: paths
                .iter()
                .flat_map(|p| deletes.vectors_of(p))
                .map(|d| (d.location.clone(), d.blob.unwrap_or_default().0))
                .collect(),
            removed_files: paths,
        };
        let report = OverwriteReport {
            partitions: replaced.len(),
            removed_data_files: removed.len(),
            removed_rows: removed.iter().map(|f| f.record_count()).sum(),
            added_data_files: written.len(),
            added_rows: written.iter().map(DataFile::record_count).sum(),
            snapshot_id: None,
        };
        match commit_with_retry(self, &op) {
            Ok(next) => {
                let snapshot_id = next.metadata().current_snapshot_id();
                Ok((
                    next,
                    OverwriteReport {
                        snapshot_id,
                        ..report
                    },
                ))
            }
            Err(CommitFailure::Definite(e)) => {
                cleanup(&written);
                Err(e)
            }
            Err(CommitFailure::Unknown(e)) => Err(e),
        }
    }
}
