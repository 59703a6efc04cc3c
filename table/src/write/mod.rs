//! The write path shared by every operation that adds rows (append, INSERT, the rows an update
//! or merge writes back): batches aligned to the table's columns, split by partition with
//! `iceberg`'s [`RecordBatchPartitionSplitter`], sorted by the table's `write.sort-order`, and
//! written as Parquet data files.
//!
//! [`RecordBatchPartitionSplitter`]: iceberg::arrow::RecordBatchPartitionSplitter

mod align;
mod conform;
mod parquet;
mod sort;

use arrow_array::RecordBatch;
use iceberg::arrow::RecordBatchPartitionSplitter;
use iceberg::spec::{DataFile, Struct};

pub(crate) use align::BatchAligner;
pub use align::SRID_FIELD_METADATA;
pub(crate) use parquet::DataFileWriter;

use crate::error::Result;
use crate::table::Table;

/// Writes `batches` into new data files of `table`'s current version, one per partition;
/// nothing is committed. Empty batches are skipped; an input with no rows writes nothing.
pub(crate) fn write_data_files(table: &Table, batches: &[RecordBatch]) -> Result<Vec<DataFile>> {
    write_files(table, batches, false, false)
}

/// [`write_data_files`] where every batch (of each partition) ends a Parquet row group, so
/// that an import keeps its source file's row groups, and with them the statistics and
/// locality its writer chose. A batch larger than `geoberg.parquet.row-group-rows` still
/// splits.
pub(crate) fn write_data_files_keeping_row_groups(
    table: &Table,
    batches: &[RecordBatch],
) -> Result<Vec<DataFile>> {
    write_files(table, batches, false, true)
}

/// [`write_data_files`] for rows that keep their v3 row lineage: the batches' `_row_id` and
/// `_last_updated_sequence_number` columns are written too (a null inherits on read).
pub(crate) fn write_data_files_with_lineage(
    table: &Table,
    batches: &[RecordBatch],
) -> Result<Vec<DataFile>> {
    let v3 = table.metadata().format_version() >= iceberg::spec::FormatVersion::V3;
    write_files(table, batches, v3, false)
}

fn write_files(
    table: &Table,
    batches: &[RecordBatch],
    lineage: bool,
    row_group_per_batch: bool,
) -> Result<Vec<DataFile>> {
    let aligner = BatchAligner::with_lineage(table, lineage)?;
    let md = table.metadata();
    let spec = md.default_partition_spec().clone();
    let mut groups: Vec<(Struct, Vec<RecordBatch>)> = Vec::new();
    let splitter = if spec.fields().is_empty() {
        None
    } else {
        Some(RecordBatchPartitionSplitter::try_new_with_computed_values(
            md.current_schema().clone(),
            spec,
        )?)
    };
    for batch in batches.iter().filter(|b| b.num_rows() > 0) {
        let aligned = aligner.align(batch)?;
        let parts = match &splitter {
            None => vec![(Struct::empty(), aligned)],
            Some(s) => s
                .split(&aligned)?
                .into_iter()
                .map(|(key, b)| (key.data().clone(), b))
                .collect(),
        };
        for (partition, part) in parts {
            match groups.iter_mut().find(|(p, _)| *p == partition) {
                Some((_, g)) => g.push(part),
                None => groups.push((partition, vec![part])),
            }
        }
    }
    let mut writer = DataFileWriter::new(table, &aligner)?;
    // An import keeps its source's row groups; everything else is sorted by write.sort-order.
    let sorter = if row_group_per_batch {
        None
    } else {
        sort::FileSorter::of(table)?
    };
    writer.sort_order_id = sorter.as_ref().and_then(|s| s.sort_order_id(table));
    let mut written = Vec::with_capacity(groups.len());
    for (partition, batches) in groups {
        let batches = match &sorter {
            Some(s) => s.sort(batches)?,
            None => batches,
        };
        match writer.write(partition, &batches, row_group_per_batch) {
            Ok(f) => written.push(f),
            Err(e) => {
                // Nothing will reference the files written so far.
                for f in &written {
                    let _ = table.storage().delete(f.file_path());
                }
                return Err(e);
            }
        }
    }
    Ok(written)
}
