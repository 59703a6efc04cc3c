//! Row-level changes (spec: "Row-level Deletes"; Iceberg Java's `RowDelta` and
//! `OverwriteFiles`): some rows of some data files go, some rows come (updated or inserted), and
//! the whole change is one snapshot, written
//! - copy-on-write: each affected data file is rewritten on its own without its deleted rows,
//!   in their order (an `overwrite` snapshot replaces it; v3 rows keep their `_row_id`), or
//! - merge-on-read: v3 writes one deletion vector per affected file (merged with the one it had,
//!   which is removed), v2 a position delete file per partition; new rows are appended.
//!
//! DELETE, UPDATE and MERGE (in `delete.rs` and the SQL engine) find the rows, by `_file` and
//! `_pos`, and hand them here. Validation is snapshot isolation: the commit fails cleanly if a
//! concurrent commit removed or rewrote a file whose rows it changes, or added deletes to one;
//! concurrent appends never conflict.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, BooleanArray, RecordBatch};
use geoberg_puffin::DeletionVector;
use iceberg::spec::{DataFile, FormatVersion, Operation};
use rayon::prelude::*;

use crate::deletes::{DeleteFileWriter, DeleteIndex, FileDeletes, read_vector};
use crate::error::{Error, Result};
use crate::lineage::live_file_lineage;
use crate::metadata_columns::{FILE_COLUMN, POS_COLUMN, is_position_column};
use crate::properties::RowChangeMode;
use crate::snapshot::{
    CommitFailure, ReadSet, SnapshotOperation, SnapshotProducer, commit_with_retry, validate_since,
};
use crate::table::Table;
use crate::write::{write_data_files_in_order, write_data_files_with_lineage};

/// What a row-level change did.
#[derive(Debug, Clone, PartialEq)]
pub struct RowDeltaReport {
    /// How it was written.
    pub mode: RowChangeMode,
    /// Rows deleted (for an UPDATE: the old versions of the updated rows).
    pub deleted_rows: u64,
    /// Rows updated (each is one deleted and one added row).
    pub updated_rows: u64,
    /// Rows inserted.
    pub inserted_rows: u64,
    /// Data files whose rows were examined.
    pub files_scanned: usize,
    /// Live data files of the table before the change.
    pub files_total: usize,
    /// Data files removed (copy-on-write).
    pub removed_data_files: usize,
    /// Data files added (rewritten files, updated and inserted rows).
    pub added_data_files: usize,
    /// Delete files added (deletion vectors, position delete files).
    pub added_delete_files: usize,
    /// Delete files removed (deletion vectors merged into new ones, or of rewritten files).
    pub removed_delete_files: usize,
    /// Bytes of the files written.
    pub bytes_written: u64,
    /// The snapshot committed (`None` when nothing changed).
    pub snapshot_id: Option<i64>,
    /// Wall time.
    pub elapsed: Duration,
}

impl fmt::Display for RowDeltaReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} rows deleted, {} updated, {} inserted; {} of {} files scanned; data files \
             -{} +{}, delete files -{} +{}; {} bytes written in {:.1} ms",
            self.mode.name(),
            self.deleted_rows,
            self.updated_rows,
            self.inserted_rows,
            self.files_scanned,
            self.files_total,
            self.removed_data_files,
            self.added_data_files,
            self.removed_delete_files,
            self.added_delete_files,
            self.bytes_written,
            self.elapsed.as_secs_f64() * 1e3
        )
    }
}

/// Which statement a change comes from: it picks the mode property (`write.delete.mode`,
/// `write.update.mode`, `write.merge.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowChangeKind {
    /// DELETE.
    Delete,
    /// UPDATE.
    Update,
    /// MERGE INTO.
    Merge,
}

/// A row-level change being assembled; see [`Table::row_delta`].
#[derive(Debug)]
pub struct RowDelta<'a> {
    table: &'a Table,
    kind: RowChangeKind,
    mode: Option<RowChangeMode>,
    deleted: BTreeMap<String, DeletionVector>,
    added: Vec<RecordBatch>,
    updated_rows: u64,
    inserted_rows: u64,
    files_scanned: usize,
    started: Instant,
}

impl Table {
    /// Starts a row-level change of `kind` on this version: rows to delete by data file and
    /// position (from a scan's `_file` and `_pos`), rows to add. Nothing happens until
    /// [`RowDelta::commit`].
    pub fn row_delta(&self, kind: RowChangeKind) -> RowDelta<'_> {
        RowDelta {
            table: self,
            kind,
            mode: None,
            deleted: BTreeMap::new(),
            added: Vec::new(),
            updated_rows: 0,
            inserted_rows: 0,
            files_scanned: 0,
            started: Instant::now(),
        }
    }
}

impl<'a> RowDelta<'a> {
    /// Deletes rows of one data file, by position.
    pub fn delete_rows(
        &mut self,
        data_file: impl Into<String>,
        positions: impl IntoIterator<Item = u64>,
    ) -> Result<&mut Self> {
        let file = data_file.into();
        let dv = self.deleted.entry(file.clone()).or_default();
        for p in positions {
            dv.insert(p)
                .map_err(|e| Error::InvalidData(format!("position {p} of {file}: {e}")))?;
        }
        Ok(self)
    }

    /// Deletes the rows of a scan batch (with `_file` and `_pos`) where `mask` is true.
    pub fn delete_marked(&mut self, batch: &RecordBatch, mask: &BooleanArray) -> Result<&mut Self> {
        let (files, positions) = file_positions(batch)?;
        for (row, &position) in positions.iter().enumerate() {
            if mask.is_valid(row) && mask.value(row) {
                let file = files.value(row);
                self.deleted
                    .entry(file.to_string())
                    .or_default()
                    .insert(position)
                    .map_err(|e| {
                        Error::InvalidData(format!("position {position} of {file}: {e}"))
                    })?;
            }
        }
        Ok(self)
    }

    /// Adds rows: the new versions of updated rows (with the `_row_id` they had, on v3) or
    /// inserted rows (no `_row_id`: they get new ids). Columns are matched by name.
    pub fn add_rows(&mut self, batches: impl IntoIterator<Item = RecordBatch>) -> &mut Self {
        self.added
            .extend(batches.into_iter().filter(|b| b.num_rows() > 0));
        self
    }

    /// Counts for the report: rows updated and inserted, data files examined.
    pub fn count(&mut self, updated: u64, inserted: u64, files_scanned: usize) -> &mut Self {
        self.updated_rows += updated;
        self.inserted_rows += inserted;
        self.files_scanned += files_scanned;
        self
    }

    /// Overrides the table's mode property for this change.
    pub fn mode(&mut self, mode: RowChangeMode) -> &mut Self {
        self.mode = Some(mode);
        self
    }

    /// Writes the files and commits one snapshot (retrying after concurrent appends; failing
    /// cleanly after a concurrent change to an affected file). Written files are removed when
    /// nothing was committed.
    pub fn commit(&mut self) -> Result<(Table, RowDeltaReport)> {
        let table = self.table;
        let props = table.properties()?;
        let mode = self.mode.unwrap_or(match self.kind {
            RowChangeKind::Delete => props.delete_mode,
            RowChangeKind::Update => props.update_mode,
            RowChangeKind::Merge => props.merge_mode,
        });
        let entries: HashMap<String, DataFile> = table
            .data_files()?
            .into_iter()
            .map(|f| (f.file_path().to_string(), f))
            .collect();
        let mut report = RowDeltaReport {
            mode,
            deleted_rows: self.deleted.values().map(DeletionVector::len).sum(),
            updated_rows: self.updated_rows,
            inserted_rows: self.inserted_rows,
            files_scanned: self.files_scanned,
            files_total: entries.len(),
            removed_data_files: 0,
            added_data_files: 0,
            added_delete_files: 0,
            removed_delete_files: 0,
            bytes_written: 0,
            snapshot_id: None,
            elapsed: Duration::ZERO,
        };
        self.deleted.retain(|_, dv| !dv.is_empty());
        if self.deleted.is_empty() && self.added.is_empty() {
            report.elapsed = self.started.elapsed();
            return Ok((table.clone(), report));
        }
        for path in self.deleted.keys() {
            if !entries.contains_key(path) {
                return Err(Error::RewriteConflict {
                    table: table.ident().to_string(),
                    reason: format!("{path} is not a live data file of this table version"),
                });
            }
        }
        let v3 = table.metadata().format_version() >= FormatVersion::V3;
        let deletes = DeleteIndex::of(table)?;
        let spec_id = table.metadata().default_partition_spec_id();
        let mut writer = DeleteFileWriter::new(table);
        let mut op = RowDeltaOp {
            read: ReadSet {
                starting_snapshot_id: table.metadata().current_snapshot_id().unwrap_or(-1),
                files: self.deleted.keys().cloned().collect(),
                ..ReadSet::default()
            },
            ..RowDeltaOp::default()
        };
        if v3 {
            let lineage = live_file_lineage(table)?;
            op.read.first_row_ids = self
                .deleted
                .keys()
                .filter_map(|p| Some((p.clone(), lineage.get(p)?.first_row_id)))
                .collect();
        }
        let new_rows = std::mem::take(&mut self.added);
        let result = (|| -> Result<()> {
            match mode {
                RowChangeMode::CopyOnWrite => {
                    op.added_data = rewrite_without(table, &self.deleted, &entries, v3)?
                        .into_iter()
                        .map(|f| (spec_id, f))
                        .collect();
                    op.removed_files = self.deleted.keys().cloned().collect();
                    for path in self.deleted.keys() {
                        for d in deletes.vectors_of(path) {
                            let (offset, _) = d.blob.unwrap_or_default();
                            op.removed_vectors.push((d.location.clone(), offset));
                        }
                    }
                }
                RowChangeMode::MergeOnRead => {
                    let mut files = Vec::with_capacity(self.deleted.len());
                    for (path, dv) in &self.deleted {
                        let mut positions = dv.clone();
                        if v3 {
                            for d in deletes.vectors_of(path) {
                                let (offset, length) = d.blob.unwrap_or_default();
                                positions.union_with(&read_vector(
                                    table.storage(),
                                    &d.location,
                                    offset,
                                    length,
                                )?);
                                op.removed_vectors.push((d.location.clone(), offset));
                            }
                        }
                        files.push(FileDeletes {
                            data_file: &entries[path],
                            spec_id,
                            positions,
                        });
                    }
                    op.added_deletes = match table.metadata().format_version() {
                        FormatVersion::V3 => writer.deletion_vectors(&files)?,
                        FormatVersion::V2 => writer.position_files(&files)?,
                        FormatVersion::V1 => {
                            return Err(Error::Unsupported {
                                what: format!(
                                    "merge-on-read on format-version 1 table {}",
                                    table.ident()
                                ),
                                fix: "v1 tables have no delete files: set write.delete.mode \
                                      (or write.update.mode / write.merge.mode) to \
                                      copy-on-write, or upgrade the table to format-version 2"
                                    .into(),
                            });
                        }
                    };
                }
            }
            let added = write_data_files_with_lineage(table, &new_rows)?;
            op.added_data
                .extend(added.into_iter().map(|f| (spec_id, f)));
            Ok(())
        })();
        let mut written = writer.written.clone();
        written.extend(op.added_data.iter().map(|(_, f)| f.file_path().to_string()));
        let cleanup = |table: &Table| {
            for l in &written {
                let _ = table.storage().delete(l);
            }
        };
        if let Err(e) = result {
            cleanup(table);
            return Err(e);
        }
        report.removed_data_files = op.removed_files.len();
        report.added_data_files = op.added_data.len();
        report.added_delete_files = op.added_deletes.len();
        report.removed_delete_files = op.removed_vectors.len();
        report.bytes_written = op
            .added_data
            .iter()
            .map(|(_, f)| f.file_size_in_bytes())
            .sum::<u64>()
            + op.added_deletes
                .iter()
                .map(|(_, f)| {
                    f.content_size_in_bytes()
                        .map_or(f.file_size_in_bytes(), |s| s as u64)
                })
                .sum::<u64>();
        match commit_with_retry(table, &op) {
            Ok(next) => {
                report.snapshot_id = next.metadata().current_snapshot_id();
                report.elapsed = self.started.elapsed();
                Ok((next, report))
            }
            Err(CommitFailure::Definite(e)) => {
                cleanup(table);
                Err(e)
            }
            Err(CommitFailure::Unknown(e)) => Err(e),
        }
    }
}

/// Copy-on-write: each data file in `deleted` rewritten without the rows deleted from it
/// (and those its delete files had already removed), its rows kept in their order (so a
/// clustered file stays as tight as it was, and keeps its sort order id), with their row
/// lineage on v3. Files are rewritten one at a time per core, each read whole and written
/// back, so memory follows the cores times the largest file rather than the whole change. On
/// failure nothing written is left behind.
fn rewrite_without(
    table: &Table,
    deleted: &BTreeMap<String, DeletionVector>,
    entries: &HashMap<String, DataFile>,
    lineage: bool,
) -> Result<Vec<DataFile>> {
    let scan = table
        .scan()
        .files(deleted.keys().cloned())
        .with_row_lineage(lineage);
    let (tasks, _) = scan.plan_tasks()?;
    if tasks.len() != deleted.len() {
        return Err(Error::RewriteConflict {
            table: table.ident().to_string(),
            reason: format!(
                "{} of the {} data files to rewrite are not in the table's current version",
                deleted.len() - tasks.len(),
                deleted.len()
            ),
        });
    }
    let rewritten: Vec<Result<Vec<DataFile>>> = tasks
        .into_par_iter()
        .map(|mut task| {
            let mut gone = deleted[task.path()].clone();
            if let Some(before) = &task.deleted {
                gone.union_with(before);
            }
            task.deleted = Some(gone);
            let kept = scan
                .read_task(&task)?
                .iter()
                .map(|b| labelled(table, b))
                .collect::<Result<Vec<_>>>()?;
            let sort_order_id = entries[task.path()].sort_order_id();
            write_data_files_in_order(table, &kept, sort_order_id)
        })
        .collect();
    let mut written = Vec::new();
    let mut failure = None;
    for r in rewritten {
        match r {
            Ok(files) => written.extend(files),
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    match failure {
        None => Ok(written),
        Some(e) => {
            for f in &written {
                let _ = table.storage().delete(f.file_path());
            }
            Err(e)
        }
    }
}

/// The snapshot of a row-level change.
#[derive(Debug, Default)]
pub(crate) struct RowDeltaOp {
    pub(crate) read: ReadSet,
    pub(crate) added_data: Vec<(i32, DataFile)>,
    pub(crate) added_deletes: Vec<(i32, DataFile)>,
    pub(crate) removed_files: Vec<String>,
    pub(crate) removed_vectors: Vec<(String, i64)>,
}

impl SnapshotOperation for RowDeltaOp {
    fn operation(&self) -> Operation {
        if self.added_data.is_empty() && self.removed_files.is_empty() {
            Operation::Delete
        } else {
            Operation::Overwrite
        }
    }

    fn validate(&self, current: &Table) -> Result<()> {
        validate_since(current, &self.read)
    }

    fn apply(&self, producer: &mut SnapshotProducer<'_>) -> Result<()> {
        producer.add_data_files(self.added_data.iter().cloned());
        producer.add_delete_files(self.added_deletes.iter().cloned());
        producer.remove_files(self.removed_files.iter().cloned());
        producer.remove_deletion_vectors(self.removed_vectors.iter().cloned());
        Ok(())
    }
}

/// Commits `written` in place of the live data files `read.files` (and their deletion
/// vectors) as one `overwrite` snapshot, validated against what happened since `read` was
/// taken; `written` is removed when nothing was committed.
pub(crate) fn replace_data_files(
    table: &Table,
    read: ReadSet,
    written: &[DataFile],
) -> Result<Table> {
    let cleanup = || {
        for f in written {
            let _ = table.storage().delete(f.file_path());
        }
    };
    let deletes = match DeleteIndex::of(table) {
        Ok(d) => d,
        Err(e) => {
            cleanup();
            return Err(e);
        }
    };
    let spec_id = table.metadata().default_partition_spec_id();
    let removed_files: Vec<String> = read.files.iter().cloned().collect();
    let op = RowDeltaOp {
        added_data: written.iter().map(|f| (spec_id, f.clone())).collect(),
        added_deletes: Vec::new(),
        removed_vectors: removed_files
            .iter()
            .flat_map(|p| deletes.vectors_of(p))
            .map(|d| (d.location.clone(), d.blob.unwrap_or_default().0))
            .collect(),
        removed_files,
        read,
    };
    match commit_with_retry(table, &op) {
        Ok(next) => Ok(next),
        Err(CommitFailure::Definite(e)) => {
            cleanup();
            Err(e)
        }
        Err(CommitFailure::Unknown(e)) => Err(e),
    }
}

/// Rows read back from the table, their geometry fields labelled with the column's SRID (the
/// field metadata appends check values against): they are in the column's CRS by construction.
/// An EWKB value's own SRID is still checked.
pub(crate) fn labelled(table: &Table, batch: &RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    let fields: Vec<arrow_schema::Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let srid = table
                .geo_columns()
                .iter()
                .find(|g| g.name == *f.name())
                .and_then(|g| g.column_type.crs().and_then(|c| c.srid()));
            match srid {
                Some(srid) if !f.metadata().contains_key(crate::SRID_FIELD_METADATA) => {
                    let mut m = f.metadata().clone();
                    m.insert(crate::SRID_FIELD_METADATA.to_string(), srid.to_string());
                    f.as_ref().clone().with_metadata(m)
                }
                _ => f.as_ref().clone(),
            }
        })
        .collect();
    Ok(RecordBatch::try_new(
        std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(
            fields,
            schema.metadata().clone(),
        )),
        batch.columns().to_vec(),
    )?)
}

/// The `_file` and `_pos` columns of a scan batch.
pub(crate) fn file_positions(batch: &RecordBatch) -> Result<(&arrow_array::StringArray, Vec<u64>)> {
    let missing = |c: &str| {
        Error::InvalidData(format!(
            "the batch has no {c} column; scan with with_file_position(true)"
        ))
    };
    let files = batch
        .column_by_name(FILE_COLUMN)
        .ok_or_else(|| missing(FILE_COLUMN))?
        .as_string_opt::<i32>()
        .ok_or_else(|| missing(FILE_COLUMN))?;
    let positions = batch
        .column_by_name(POS_COLUMN)
        .ok_or_else(|| missing(POS_COLUMN))?
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| missing(POS_COLUMN))?
        .values()
        .iter()
        .map(|&p| p as u64)
        .collect();
    Ok((files, positions))
}

/// `batch` without its `_file` and `_pos` columns.
pub(crate) fn without_position(batch: &RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    let keep: Vec<usize> = (0..batch.num_columns())
        .filter(|&i| {
            let n = schema.field(i).name();
            !is_position_column(n)
        })
        .collect();
    Ok(batch.project(&keep)?)
}
