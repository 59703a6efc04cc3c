//! Append (Iceberg's fast append): new data files in one new manifest; the other manifests are
//! carried over. An append never conflicts: after losing a race it is re-applied on the new
//! metadata (`commit.retry.*`).

use arrow_array::RecordBatch;
use iceberg::spec::{DataContentType, DataFile, Operation};

use crate::error::{Error, Result};
use crate::snapshot::{
    CommitFailure, PendingCommit, SnapshotOperation, SnapshotProducer, commit_with_retry,
};
use crate::table::Table;
use crate::write::write_data_files;

/// What one append wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendReport {
    /// Data files added.
    pub data_files: usize,
    /// Rows added.
    pub rows: u64,
    /// Bytes of Parquet written.
    pub bytes: u64,
}

impl AppendReport {
    fn of(files: &[DataFile]) -> AppendReport {
        AppendReport {
            data_files: files.len(),
            rows: files.iter().map(DataFile::record_count).sum(),
            bytes: files.iter().map(DataFile::file_size_in_bytes).sum(),
        }
    }
}

/// The snapshot operation of an append.
struct FastAppend {
    files: Vec<(i32, DataFile)>,
}

impl SnapshotOperation for FastAppend {
    fn operation(&self) -> Operation {
        Operation::Append
    }

    fn validate(&self, _current: &Table) -> Result<()> {
        Ok(())
    }

    fn apply(&self, producer: &mut SnapshotProducer<'_>) -> Result<()> {
        producer.add_data_files(self.files.iter().cloned());
        Ok(())
    }
}

impl Table {
    /// Appends rows and commits one fast-append snapshot, retrying on concurrent commits.
    ///
    /// Columns are matched by name; missing nullable columns are written as nulls. Every
    /// geometry value's SRID (its EWKB SRID, else the field's `srid` metadata,
    /// [`crate::SRID_FIELD_METADATA`]) is checked against the column CRS, and bbox metrics come
    /// from the same pass over the WKB. If the commit fails for good, the files written are
    /// removed and nothing is committed.
    pub fn append(&self, batches: &[RecordBatch]) -> Result<(Table, AppendReport)> {
        let files = self.write_batches(batches)?;
        let report = AppendReport::of(&files);
        Ok((self.commit_data_files(files)?, report))
    }

    /// Commits data files that are already written (an import, or files produced by another
    /// writer) as one fast append, from their entries alone: the files are not opened, so their
    /// record counts, sizes and column metrics are taken as given.
    pub fn append_data_files(&self, data_files: Vec<DataFile>) -> Result<Table> {
        check_data_files(&data_files)?;
        let op = FastAppend {
            files: self.with_spec_ids(data_files),
        };
        commit_with_retry(self, &op).map_err(CommitFailure::into_error)
    }

    /// Writes the data files, manifest, manifest list and next metadata file for `batches`,
    /// without making them visible, and without retrying: what [`Table::append`] does once.
    pub fn stage_append(&self, batches: &[RecordBatch]) -> Result<(PendingCommit, AppendReport)> {
        let files = self.write_batches(batches)?;
        let report = AppendReport::of(&files);
        Ok((self.stage_data_files(files)?, report))
    }

    /// Stages a fast append of data files that are already written, without retrying.
    pub fn stage_data_files(&self, data_files: Vec<DataFile>) -> Result<PendingCommit> {
        check_data_files(&data_files)?;
        let mut producer = SnapshotProducer::new(self, Operation::Append);
        producer.add_data_files(self.with_spec_ids(data_files));
        producer.stage()
    }

    pub(crate) fn write_batches(&self, batches: &[RecordBatch]) -> Result<Vec<DataFile>> {
        let files = write_data_files(self, batches)?;
        if files.is_empty() {
            return Err(Error::InvalidData(
                "nothing to append: every batch is empty".into(),
            ));
        }
        Ok(files)
    }

    /// Commits freshly written data files; removes them if nothing was committed.
    pub(crate) fn commit_data_files(&self, files: Vec<DataFile>) -> Result<Table> {
        self.commit_written_files(files)
            .map_err(CommitFailure::into_error)
    }

    /// Commits freshly written data files as one fast append; removes them if nothing was
    /// committed, and says whether that is known.
    pub(crate) fn commit_written_files(
        &self,
        files: Vec<DataFile>,
    ) -> std::result::Result<Table, CommitFailure> {
        let locations: Vec<String> = files.iter().map(|f| f.file_path().to_string()).collect();
        let op = FastAppend {
            files: self.with_spec_ids(files),
        };
        let result = commit_with_retry(self, &op);
        if let Err(CommitFailure::Definite(_)) = &result {
            for l in &locations {
                let _ = self.storage().delete(l);
            }
        }
        result
    }

    /// Appended files belong to the default partition spec (`DataFile` does not expose its
    /// spec id, so it travels beside the entry).
    fn with_spec_ids(&self, files: Vec<DataFile>) -> Vec<(i32, DataFile)> {
        let spec = self.metadata().default_partition_spec_id();
        files.into_iter().map(|f| (spec, f)).collect()
    }
}

fn check_data_files(files: &[DataFile]) -> Result<()> {
    if files.is_empty() {
        return Err(Error::InvalidData(
            "nothing to append: no data files".into(),
        ));
    }
    for f in files {
        crate::storage::normalize_location(f.file_path())?;
        if f.content_type() != DataContentType::Data {
            return Err(Error::InvalidData(format!(
                "{} is a delete file; only data files can be appended",
                f.file_path()
            )));
        }
    }
    Ok(())
}
