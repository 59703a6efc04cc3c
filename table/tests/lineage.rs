//! Iceberg v3 row lineage through CREATE SPATIAL INDEX: every row keeps its `_row_id` and
//! `_last_updated_sequence_number` (spec, "Row Lineage": a moved row's values are copied into
//! the new data file), the commit assigns `next-row-id` per spec, and later appends get fresh,
//! non-colliding ids.

mod common;

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::sync::Mutex;

use arrow_array::{Array, Int64Array, RecordBatch};
use common::{
    partitioned_points_table, points_batch, rewrite_in_three_commits, rows, sqlite_catalog,
    uniform, with_partition_data,
};
use geoberg_table::{
    BBox, Column, CreateTable, DataType, ROW_GROUP_ROWS_PROPERTY, Table, TableIdent,
};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// id column -> (`_row_id`, `_last_updated_sequence_number`), as the scan reads them.
type Lineage = BTreeMap<i64, (i64, i64)>;

fn lineage_of_batches(batches: &[RecordBatch]) -> Lineage {
    let mut out = BTreeMap::new();
    for b in batches {
        let col = |n: &str| {
            b.column(b.schema().index_of(n).unwrap())
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .clone()
        };
        let (id, row_id, seq) = (
            col("id"),
            col("_row_id"),
            col("_last_updated_sequence_number"),
        );
        assert_eq!(row_id.null_count(), 0, "every row of a v3 table has an id");
        assert_eq!(seq.null_count(), 0);
        for r in 0..b.num_rows() {
            let prev = out.insert(id.value(r), (row_id.value(r), seq.value(r)));
            assert!(prev.is_none(), "id {} read twice", id.value(r));
        }
    }
    out
}

fn lineage(table: &Table) -> Lineage {
    let (batches, _) = table.scan().with_row_lineage(true).execute().unwrap();
    let out = lineage_of_batches(&batches);
    let ids: HashSet<i64> = out.values().map(|v| v.0).collect();
    assert_eq!(ids.len(), out.len(), "row ids are unique");
    out
}

/// Field ids of a data file's Parquet columns.
fn parquet_field_ids(path: &str) -> Vec<i32> {
    let path = path.trim_start_matches("file://");
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    builder
        .parquet_schema()
        .root_schema()
        .get_fields()
        .iter()
        .map(|f| f.get_basic_info().id())
        .collect()
}

const ROW_ID: i32 = 2_147_483_540;
const LAST_UPDATED: i32 = 2_147_483_539;

/// A v3 table of `files` appends of `rows` points each, written in row groups of 300 rows so
/// that positions span row groups.
fn appended(dir: &std::path::Path, name: &str, files: i64, rows: i64) -> Table {
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .property(ROW_GROUP_ROWS_PROPERTY, "300")
    .create(
        sqlite_catalog(dir),
        &TableIdent::new("test_db", name).unwrap(),
    )
    .unwrap();
    assert_eq!(table.metadata().format_version() as u8, 3);
    for f in 0..files {
        let batch = points_batch(f * rows..(f + 1) * rows, uniform(f as u64 + 1));
        table = table.append(&[batch]).unwrap().0;
    }
    table
}

#[test]
fn a_rewrite_keeps_every_rows_lineage_and_later_appends_get_fresh_ids() {
    let dir = tempfile::tempdir().unwrap();
    let table = appended(dir.path(), "lin", 4, 1_500);
    let before = lineage(&table);
    assert_eq!(before.len(), 6_000);
    // Appended rows inherit: ids are first_row_id + position, sequence numbers the commit's.
    assert_eq!(before[&0], (0, 1));
    assert_eq!(before[&5_999], (5_999, 4));
    let data_before = rows(&table);

    // CREATE SPATIAL INDEX.
    let next_before = table.metadata().next_row_id();
    assert_eq!(next_before, 6_000);
    let (table, report) = table
        .rewrite()
        .hilbert("geom", 16)
        .option("target-file-count", "6")
        .option("row-group-rows", "200")
        .execute()
        .unwrap();
    assert_eq!(report.rewritten_records_count, 6_000);
    assert_eq!(
        lineage(&table),
        before,
        "every row keeps its id and sequence number"
    );
    assert_eq!(rows(&table), data_before);
    // Spec: the new files' manifest is assigned the table's next-row-id as its first_row_id and
    // consumes record_count ids (unused: every row stores its own), so next-row-id grows by the
    // rows added; the rewritten manifests keep their first_row_id and consume none.
    let snapshot = table.metadata().current_snapshot().unwrap();
    assert_eq!(snapshot.first_row_id(), Some(next_before));
    assert_eq!(snapshot.added_rows_count(), Some(6_000));
    assert_eq!(table.metadata().next_row_id(), next_before + 6_000);
    // The new files store both columns under their reserved field ids; a plain scan returns
    // only the table's columns.
    for f in table.data_files().unwrap() {
        let ids = parquet_field_ids(f.file_path());
        assert_eq!(ids[ids.len() - 2..], [ROW_ID, LAST_UPDATED], "{ids:?}");
    }
    let (plain, _) = table.scan().execute().unwrap();
    for b in &plain {
        let names: Vec<String> = b
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        assert_eq!(names, ["id", "data", "geom"]);
    }
    // A window scan skips row groups; the rows it returns still read their own lineage.
    let window = BBox::new(10.0, 10.0, 30.0, 25.0);
    let (hits, explain) = table
        .scan()
        .with_window("geom", window)
        .select(["id", "_row_id", "_last_updated_sequence_number"])
        .execute()
        .unwrap();
    let windowed = lineage_of_batches(&hits);
    assert!(!windowed.is_empty() && windowed.len() < before.len());
    assert!(explain.row_groups_skipped > 0, "{explain}");
    for (id, v) in &windowed {
        assert_eq!(&before[id], v);
    }

    // A later append gets fresh ids past next-row-id: no collision.
    let (table, _) = table
        .append(&[points_batch(100_000..100_700, uniform(9))])
        .unwrap();
    let after_append = lineage(&table);
    for id in 100_000..100_700 {
        let (row_id, seq) = after_append[&id];
        assert!(row_id as u64 >= next_before + 6_000, "fresh id {row_id}");
        assert_eq!(
            seq,
            table
                .metadata()
                .current_snapshot()
                .unwrap()
                .sequence_number()
        );
    }
    assert_eq!(table.metadata().next_row_id(), next_before + 6_700);

    // A second rewrite reads files that store lineage and one that inherits it (different
    // Parquet schemas in one partition) and keeps every row's values again.
    let (table, report) = table.rewrite().execute().unwrap();
    assert_eq!(report.rewritten_data_files_count, 7);
    assert_eq!(lineage(&table), after_append);
    assert_eq!(table.metadata().next_row_id(), next_before + 6_700 + 6_700);
    // As the catalog reloads it.
    assert_eq!(lineage(&table.refresh().unwrap()), after_append);
}

#[test]
fn a_concurrent_append_keeps_its_ids_and_the_rewrite_keeps_its_rows_ids() {
    let dir = tempfile::tempdir().unwrap();
    let table = appended(dir.path(), "conc", 3, 400);
    let before = lineage(&table);
    let other = table.refresh().unwrap();
    let appended_by_other = Mutex::new(None);
    let (table, _) = table
        .rewrite()
        .hilbert("geom", 12)
        .on_progress(|done, total| {
            let mut slot = appended_by_other.lock().unwrap();
            if done == total && slot.is_none() {
                let (t, _) = other
                    .append(&[points_batch(50_000..50_250, uniform(4))])
                    .unwrap();
                *slot = Some(lineage(&t));
            }
        })
        .execute()
        .unwrap();
    let concurrent = appended_by_other.into_inner().unwrap().unwrap();
    let after = lineage(&table);
    // The rewritten rows keep theirs, the concurrently appended rows keep what they were
    // assigned by their own commit, and the re-applied REPLACE takes its id range after them.
    assert_eq!(after.len(), 1_450);
    for (id, v) in &before {
        assert_eq!(&after[id], v);
    }
    for id in 50_000..50_250 {
        assert_eq!(after[&id], concurrent[&id]);
    }
    assert_eq!(table.metadata().next_row_id(), 1_200 + 250 + 1_200);
}

#[test]
fn partitions_committed_in_batches_keep_their_lineage() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let mut table = partitioned_points_table(catalog, "parts", &[(ROW_GROUP_ROWS_PROPERTY, "50")]);
    for f in 0..3i64 {
        let b = points_batch(f * 300..(f + 1) * 300, uniform(f as u64 + 20));
        table = table.append(&[with_partition_data(b)]).unwrap().0;
    }
    let before = lineage(&table);
    let next_before = table.metadata().next_row_id();
    let (table, report) = rewrite_in_three_commits(&table).execute().unwrap();
    assert_eq!(report.snapshot_ids.len(), 3, "{report}");
    assert_eq!(lineage(&table), before);
    // Each REPLACE consumed ids for the rows it added, nothing for the manifests it rewrote.
    assert_eq!(table.metadata().next_row_id(), next_before + 900);
    let (table, _) = table.rewrite().execute().unwrap();
    assert_eq!(lineage(&table), before);
}

#[test]
fn v2_tables_get_no_lineage_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
        Column::new("geom", DataType::LEGACY_GEOMETRY),
    ])
    .allow_undeclared_crs()
    .with_bbox_columns("geom")
    .create(
        sqlite_catalog(dir.path()),
        &TableIdent::new("test_db", "v2").unwrap(),
    )
    .unwrap();
    assert_eq!(table.metadata().format_version() as u8, 2);
    for f in 0..3i64 {
        table = table
            .append(&[points_batch(f * 200..(f + 1) * 200, uniform(3))])
            .unwrap()
            .0;
    }
    let before_ids = parquet_field_ids(table.data_files().unwrap()[0].file_path());
    let (table, _) = table.rewrite().hilbert("geom", 12).execute().unwrap();
    for f in table.data_files().unwrap() {
        assert_eq!(parquet_field_ids(f.file_path()), before_ids);
    }
    assert!(table.scan().with_row_lineage(true).execute().is_err());
}

#[test]
fn derived_ids_count_positions_across_skipped_row_groups() {
    // Points sorted along x, 300 per row group: a window skips row groups of appended files,
    // whose ids are derived (first_row_id + position) rather than stored.
    let dir = tempfile::tempdir().unwrap();
    let mut table = appended(dir.path(), "pos", 0, 0);
    for f in 0..2i64 {
        let xy = |i: i64| (-170.0 + (i % 1_500) as f64 * 0.2, (i % 7) as f64);
        table = table
            .append(&[points_batch(f * 1_500..(f + 1) * 1_500, xy)])
            .unwrap()
            .0;
    }
    let all = lineage(&table);
    assert_eq!(all[&1_499], (1_499, 1));
    assert_eq!(all[&1_500], (1_500, 2));
    let (hits, explain) = table
        .scan()
        .with_window("geom", BBox::new(-10.0, -1.0, 10.0, 10.0))
        .with_row_lineage(true)
        .execute()
        .unwrap();
    assert_eq!(explain.row_groups_skipped, 6, "{explain}");
    let windowed = lineage_of_batches(&hits);
    assert_eq!(windowed.len(), 2 * 101);
    for (id, v) in &windowed {
        assert_eq!(&all[id], v, "id {id}");
        assert_eq!(v.0, *id, "appended rows are numbered in order");
    }
}
