//! The write path shared by every operation that adds rows (append, INSERT, the rows an update
//! or merge writes back): batches aligned to the table's columns, split by partition with
//! `iceberg`'s [`RecordBatchPartitionSplitter`], sorted by the table's `write.sort-order`, and
//! written as Parquet data files.
//!
//! [`RecordBatchPartitionSplitter`]: iceberg::arrow::RecordBatchPartitionSplitter

mod align;
mod cluster;
mod conform;
mod parquet;
mod rewrite_target;
mod sort;

use arrow_array::RecordBatch;
use iceberg::arrow::RecordBatchPartitionSplitter;
use iceberg::spec::{DataFile, Struct};

pub(crate) use align::BatchAligner;
pub use align::SRID_FIELD_METADATA;
pub(crate) use parquet::DataFileWriter;
pub(crate) use rewrite_target::RewriteTarget;
pub(crate) use sort::FileSorter;

use crate::error::Result;
use crate::table::Table;
use cluster::ClusterOnWrite;

/// Writes `batches` into new data files of `table`'s current version, one per partition;
/// nothing is committed. Empty batches are skipped; an input with no rows writes nothing.
pub(crate) fn write_data_files(table: &Table, batches: &[RecordBatch]) -> Result<Vec<DataFile>> {
    write_files(table, batches, false, Sorting::TableOrder)
}

/// How the rows of each written file are ordered.
enum Sorting {
    /// By the table's `write.sort-order` (column and z-orders), else cut along the table's
    /// clustered layout (cluster on write), else as given.
    TableOrder,
    /// As given, each batch ending a row group (an import keeps its source's row groups).
    RowGroupPerBatch,
    /// As given, recording this sort order id (the order the rows already have).
    AsGiven(Option<i32>),
    /// By this order, each partition's rows sorted together and split into files of at most
    /// this many rows (so that the files hold consecutive ranges of the order).
    By(FileSorter, usize),
}

/// [`write_data_files`] where every batch (of each partition) ends a Parquet row group, so
/// that an import keeps its source file's row groups, and with them the statistics and
/// locality its writer chose. A batch larger than `geoberg.parquet.row-group-rows` still
/// splits. On a table with a clustered layout the rows are cut along it instead.
pub(crate) fn write_data_files_keeping_row_groups(
    table: &Table,
    batches: &[RecordBatch],
) -> Result<Vec<DataFile>> {
    write_files(table, batches, false, Sorting::RowGroupPerBatch)
}

/// Writes rows that keep their v3 row lineage (like [`write_data_files_with_lineage`]) in the
/// order given, one file per partition, neither sorted nor cut along a clustered layout: what
/// copy-on-write needs to rewrite one data file without some of its rows. `sort_order_id` is
/// recorded on the files (the order the rows were already in).
pub(crate) fn write_data_files_in_order(
    table: &Table,
    batches: &[RecordBatch],
    sort_order_id: Option<i32>,
) -> Result<Vec<DataFile>> {
    write_files(
        table,
        batches,
        has_lineage(table),
        Sorting::AsGiven(sort_order_id),
    )
}

/// [`write_data_files`] for rows that keep their v3 row lineage: the batches' `_row_id` and
/// `_last_updated_sequence_number` columns are written too (a null inherits on read).
pub(crate) fn write_data_files_with_lineage(
    table: &Table,
    batches: &[RecordBatch],
) -> Result<Vec<DataFile>> {
    write_files(table, batches, has_lineage(table), Sorting::TableOrder)
}

/// [`write_data_files_with_lineage`] with each partition's rows sorted together by `order`
/// (rather than the table's `write.sort-order`) and split into files of at most
/// `rows_per_file` rows, which then hold consecutive ranges of the order.
pub(crate) fn write_data_files_sorted(
    table: &Table,
    batches: &[RecordBatch],
    order: FileSorter,
    rows_per_file: usize,
) -> Result<Vec<DataFile>> {
    let sorting = Sorting::By(order, rows_per_file.max(1));
    write_files(table, batches, has_lineage(table), sorting)
}

fn has_lineage(table: &Table) -> bool {
    table.metadata().format_version() >= iceberg::spec::FormatVersion::V3
}

fn write_files(
    table: &Table,
    batches: &[RecordBatch],
    lineage: bool,
    sorting: Sorting,
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
    let (sorter, rows_per_file) = match sorting {
        Sorting::TableOrder => (FileSorter::of(table)?, usize::MAX),
        Sorting::RowGroupPerBatch | Sorting::AsGiven(_) => (None, usize::MAX),
        Sorting::By(ref order, rows) => (Some(order.clone()), rows),
    };
    let cluster = match (&sorting, &sorter) {
        (Sorting::TableOrder | Sorting::RowGroupPerBatch, None) => ClusterOnWrite::of(table)?,
        _ => None,
    };
    let row_group_per_batch = matches!(sorting, Sorting::RowGroupPerBatch) && cluster.is_none();
    writer.sort_order_id = match sorting {
        Sorting::AsGiven(id) => id,
        _ => sorter.as_ref().and_then(|s| s.sort_order_id(table)),
    };
    let mut written = Vec::with_capacity(groups.len());
    for (partition, batches) in groups {
        let files = match (&sorter, &cluster) {
            (Some(s), _) => split_rows(s.sort(batches)?, rows_per_file),
            (None, Some(c)) => c.files(&partition, batches)?,
            (None, None) => split_rows(batches, rows_per_file),
        };
        for file in files {
            match writer.write(partition.clone(), &file, row_group_per_batch) {
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
    }
    Ok(written)
}

/// The batches of one partition cut into files of at most `rows` rows, in order.
fn split_rows(batches: Vec<RecordBatch>, rows: usize) -> Vec<Vec<RecordBatch>> {
    let total: usize = batches.iter().map(RecordBatch::num_rows).sum();
    if total <= rows {
        return vec![batches];
    }
    let mut files = vec![Vec::new()];
    let mut in_file = 0;
    for batch in batches {
        let mut offset = 0;
        while offset < batch.num_rows() {
            if in_file == rows {
                files.push(Vec::new());
                in_file = 0;
            }
            let n = (rows - in_file).min(batch.num_rows() - offset);
            files
                .last_mut()
                .expect("one file")
                .push(batch.slice(offset, n));
            (offset, in_file) = (offset + n, in_file + n);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Int32Array;
    use std::sync::Arc;

    #[test]
    fn rows_are_cut_into_files_in_order() {
        let batch = |r: std::ops::Range<i32>| {
            RecordBatch::try_from_iter([(
                "v",
                Arc::new(Int32Array::from_iter_values(r)) as arrow_array::ArrayRef,
            )])
            .unwrap()
        };
        let files = split_rows(vec![batch(0..5), batch(5..12)], 4);
        let values: Vec<Vec<i32>> = files
            .iter()
            .map(|f| {
                f.iter()
                    .flat_map(|b| {
                        b.column(0)
                            .as_any()
                            .downcast_ref::<Int32Array>()
                            .unwrap()
                            .values()
                            .to_vec()
                    })
                    .collect()
            })
            .collect();
        assert_eq!(
            values,
            [vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![8, 9, 10, 11]]
        );
        assert_eq!(split_rows(vec![batch(0..3)], 3).len(), 1);
    }
}
