//! `INSERT OVERWRITE` (Iceberg Java's `ReplacePartitions`, Spark's dynamic partition
//! overwrite): new rows replace every live data file of the partitions they fall in (of an
//! unpartitioned table: every live data file) in one `overwrite` snapshot; with a static
//! `PARTITION (c = v)`, the named partition is replaced, also by no rows. Partitions the new
//! rows do not touch keep their files, so re-running one partition's backfill (seed 002) is
//! atomic and idempotent.
//!
//! The snapshot replaces exactly the files that were live when the statement started: a
//! concurrent commit that removed or rewrote one of them, or added deletes to it, makes the
//! overwrite fail with a conflict (its new files are removed); rows appended meanwhile are kept.

use std::collections::HashSet;

use arrow_array::RecordBatch;
use geoberg_sql::Literal;
use iceberg::spec::{
    DataContentType, DataFile, Literal as IcebergLiteral, PrimitiveLiteral, Transform, Type,
};

use crate::error::{Error, Result};
use crate::ops::row_delta::replace_data_files;
use crate::scan::column_stats::datum;
use crate::snapshot::ReadSet;
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
    /// The snapshot committed (`None` when nothing changed: no rows, and for a static
    /// partition no files to replace either).
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
        let spec_id = self.metadata().default_partition_spec_id();
        let replaced: HashSet<iceberg::spec::Struct> =
            written.iter().map(|f| f.partition().clone()).collect();
        let partitions = replaced.len();
        self.replace_files(written, partitions, |spec, file| {
            // A file of an older partition spec has no tuple of the current spec to compare:
            // it is kept (replacing it would drop rows of partitions the query never named).
            spec == spec_id && replaced.contains(file.partition())
        })
    }

    /// `INSERT OVERWRITE t PARTITION (c = v, ...) <query>` (Spark's static overwrite): writes
    /// `batches`, every row of which must lie in the partition the identity partition columns
    /// `values` name, and replaces every live data file of that partition in one commit, also
    /// when there are no rows (the partition is then emptied).
    pub fn overwrite_partition(
        &self,
        values: &[(String, Literal)],
        batches: &[RecordBatch],
    ) -> Result<(Table, OverwriteReport)> {
        let spec = self.metadata().default_partition_spec();
        let schema = self.metadata().current_schema();
        let named = || {
            values
                .iter()
                .map(|(c, v)| format!("{c} = {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let identity: Vec<String> = spec
            .fields()
            .iter()
            .filter(|f| f.transform == Transform::Identity)
            .filter_map(|f| schema.field_by_id(f.source_id).map(|c| c.name.clone()))
            .collect();
        // (position in the spec's partition tuple, value) of each static column.
        let mut wanted: Vec<(usize, PrimitiveLiteral)> = Vec::with_capacity(values.len());
        for (column, value) in values {
            let field = schema
                .field_by_name(column)
                .ok_or_else(|| self.no_such_column(column))?;
            let at = spec
                .fields()
                .iter()
                .position(|f| f.source_id == field.id && f.transform == Transform::Identity);
            let (Some(at), Type::Primitive(ty)) = (at, field.field_type.as_ref()) else {
                return Err(Error::InvalidData(format!(
                    "INSERT OVERWRITE {} PARTITION ({}): {column} is not an identity partition \
                     column of the table; a static PARTITION names identity partition columns \
                     ({}), or leave PARTITION out to replace the partitions the rows fall in",
                    self.ident(),
                    named(),
                    if identity.is_empty() {
                        "it has none".to_string()
                    } else {
                        identity.join(", ")
                    }
                )));
            };
            let datum = datum(column, ty, value)
                .map_err(|e| Error::InvalidData(format!("PARTITION ({column} = {value}): {e}")))?;
            wanted.push((at, datum.literal().clone()));
        }
        let in_partition = |tuple: &iceberg::spec::Struct| {
            wanted.iter().all(|(at, v)| {
                matches!(tuple.fields().get(*at), Some(Some(IcebergLiteral::Primitive(p))) if p == v)
            })
        };
        let written = write_data_files(self, batches)?;
        if let Some(outside) = written.iter().find(|f| !in_partition(f.partition())) {
            for f in &written {
                let _ = self.storage().delete(f.file_path());
            }
            return Err(Error::InvalidData(format!(
                "INSERT OVERWRITE {} PARTITION ({}): the query has rows of another partition \
                 ({:?}); select only rows of this partition, or leave PARTITION out",
                self.ident(),
                named(),
                outside.partition()
            )));
        }
        let spec_id = spec.spec_id();
        self.replace_files(written, 1, |spec, file| {
            spec == spec_id && in_partition(file.partition())
        })
    }

    /// Commits `written` as one `overwrite` snapshot that removes the live data files `replace`
    /// picks (by spec id and file), and their deletion vectors; `written` is removed when
    /// nothing was committed.
    fn replace_files(
        &self,
        written: Vec<DataFile>,
        partitions: usize,
        replace: impl Fn(i32, &DataFile) -> bool,
    ) -> Result<(Table, OverwriteReport)> {
        let entries = match self.live_entries() {
            Ok(e) => e,
            Err(e) => {
                for f in &written {
                    let _ = self.storage().delete(f.file_path());
                }
                return Err(e);
            }
        };
        let removed: Vec<&DataFile> = entries
            .iter()
            .filter(|(spec, e)| {
                e.data_file().content_type() == DataContentType::Data
                    && replace(*spec, e.data_file())
            })
            .map(|(_, e)| e.data_file())
            .collect();
        let report = OverwriteReport {
            partitions,
            removed_data_files: removed.len(),
            removed_rows: removed.iter().map(|f| f.record_count()).sum(),
            added_data_files: written.len(),
            added_rows: written.iter().map(DataFile::record_count).sum(),
            snapshot_id: None,
        };
        if report.removed_data_files == 0 && report.added_data_files == 0 {
            return Ok((self.clone(), report));
        }
        let read = ReadSet {
            starting_snapshot_id: self.metadata().current_snapshot_id().unwrap_or(-1),
            files: removed.iter().map(|f| f.file_path().to_string()).collect(),
            ..ReadSet::default()
        };
        let next = replace_data_files(self, read, &written)?;
        let snapshot_id = next.metadata().current_snapshot_id();
        Ok((
            next,
            OverwriteReport {
                snapshot_id,
                ..report
            },
        ))
    }
}
