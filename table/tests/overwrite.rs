//! `Table::overwrite_partitions` (INSERT OVERWRITE): the partitions the new rows fall in are
//! replaced in one `overwrite` snapshot, the others kept; checked against a model of the rows
//! kept in the test, and against racing writers (a rewritten input is a conflict and leaves no
//! file behind; a concurrent append is kept).

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{RecordBatch, StringArray};
use common::*;
use geoberg_table::{Error, RowFilter, Table, TableIdent};
use iceberg::spec::{Literal, Operation, PrimitiveLiteral};

/// `points_batch(ids)` with every row in partition `data`.
fn in_partition(ids: std::ops::Range<i64>, data: &str) -> RecordBatch {
    let batch = points_batch(ids, uniform(3));
    let values = vec![data.to_string(); batch.num_rows()];
    RecordBatch::try_new(
        batch.schema(),
        vec![
            batch.column(0).clone(),
            Arc::new(StringArray::from(values)),
            batch.column(2).clone(),
        ],
    )
    .unwrap()
}

/// The rows of `batches`, sorted, as [`rows`] gives them.
fn model(batches: &[RecordBatch]) -> Vec<Row> {
    let dir = tempfile::tempdir().unwrap();
    let scratch = points_table(sqlite_catalog(dir.path()), "scratch");
    let (scratch, _) = scratch.append(batches).unwrap();
    rows(&scratch)
}

/// Every Parquet file under the table's data directory.
fn files_on_disk(table: &Table) -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                out.insert(p.to_string_lossy().into_owned());
            }
        }
    }
    let mut out = BTreeSet::new();
    let root = table.metadata().location().trim_start_matches("file://");
    walk(&Path::new(root).join("data"), &mut out);
    out
}

fn partitioned(dir: &Path, name: &str) -> Table {
    let table = partitioned_points_table(sqlite_catalog(dir), name, &[]);
    let (table, _) = table
        .append(&[with_partition_data(points_batch(0..30, uniform(1)))])
        .unwrap();
    let (table, _) = table
        .append(&[with_partition_data(points_batch(30..60, uniform(2)))])
        .unwrap();
    table
}

#[test]
fn new_rows_replace_the_partitions_they_fall_in_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let table = partitioned(dir.path(), "t");
    let before = rows(&table);
    let p1_files = table
        .data_files()
        .unwrap()
        .iter()
        .filter(|f| {
            f.partition().fields()[0]
                == Some(Literal::Primitive(PrimitiveLiteral::String("p1".into())))
        })
        .count();
    assert_eq!(p1_files, 2);

    let new = in_partition(100..104, "p1");
    let (table, report) = table
        .overwrite_partitions(std::slice::from_ref(&new))
        .unwrap();
    assert_eq!(report.partitions, 1);
    assert_eq!(report.removed_data_files, 2);
    assert_eq!(report.removed_rows, 20);
    assert_eq!(report.added_rows, 4);
    let snapshot = table.metadata().current_snapshot().unwrap();
    assert_eq!(snapshot.summary().operation, Operation::Overwrite);

    let mut expected: Vec<Row> = before
        .into_iter()
        .filter(|r| r.1.as_deref() != Some("p1"))
        .chain(model(&[new]))
        .collect();
    expected.sort();
    assert_eq!(rows(&table), expected);
    // Re-running it is idempotent: the partition is replaced by the same rows again.
    let (table, _) = table
        .overwrite_partitions(&[in_partition(100..104, "p1")])
        .unwrap();
    assert_eq!(rows(&table), expected);
    // A reloaded table reads the same.
    let reloaded = Table::load(table.catalog().clone(), table.ident()).unwrap();
    assert_eq!(rows(&reloaded), expected);

    // Rows over two partitions replace both.
    let two = in_partition(200..202, "p0");
    let (table, report) = table
        .overwrite_partitions(&[two, in_partition(300..301, "p2")])
        .unwrap();
    assert_eq!(report.partitions, 2);
    let ids: Vec<i64> = rows(&table).iter().map(|r| r.0).collect();
    assert_eq!(ids, vec![100, 101, 102, 103, 200, 201, 300]);
}

#[test]
fn an_unpartitioned_table_is_replaced_whole_and_no_rows_replace_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let table = points_table(sqlite_catalog(dir.path()), "flat");
    let (table, _) = table.append(&[points_batch(0..10, uniform(1))]).unwrap();
    let (table, _) = table.append(&[points_batch(10..20, uniform(2))]).unwrap();
    let snapshot = table.metadata().current_snapshot_id();

    let empty = points_batch(0..0, uniform(1));
    let (same, report) = table.overwrite_partitions(&[empty]).unwrap();
    assert_eq!(report.snapshot_id, None);
    assert_eq!(same.metadata().current_snapshot_id(), snapshot);

    let new = points_batch(50..53, uniform(5));
    let (table, report) = table
        .overwrite_partitions(std::slice::from_ref(&new))
        .unwrap();
    assert_eq!((report.removed_data_files, report.removed_rows), (2, 20));
    assert_eq!(rows(&table), model(&[new]));
}

#[test]
fn a_rewritten_input_is_a_conflict_that_leaves_no_file_and_an_append_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let table = partitioned(dir.path(), "race");
    let ident = TableIdent::new("test_db", "race").unwrap();

    // A copy-on-write DELETE rewrites a p1 file after the overwrite loaded the table.
    let stale = table.clone();
    let (deleted, _) = table
        .delete(RowFilter::from_predicate(
            geoberg_sql::parse_condition("id = 1").unwrap(),
        ))
        .execute()
        .unwrap();
    let after_delete = rows(&deleted);
    let on_disk = files_on_disk(&deleted);
    let err = stale
        .overwrite_partitions(&[in_partition(100..104, "p1")])
        .unwrap_err();
    assert!(matches!(err, Error::RewriteConflict { .. }), "{err}");
    let current = Table::load(table.catalog().clone(), &ident).unwrap();
    assert_eq!(
        rows(&current),
        after_delete,
        "nothing of the overwrite landed"
    );
    assert_eq!(files_on_disk(&current), on_disk, "its files were removed");

    // An append into the same partition meanwhile is kept: the overwrite replaces the files
    // that were live when it started.
    let stale = current.clone();
    let (_, _) = current.append(&[in_partition(500..502, "p1")]).unwrap();
    let (table, _) = stale
        .overwrite_partitions(&[in_partition(100..104, "p1")])
        .unwrap();
    let p1: Vec<i64> = rows(&table)
        .iter()
        .filter(|r| r.1.as_deref() == Some("p1"))
        .map(|r| r.0)
        .collect();
    assert_eq!(p1, vec![100, 101, 102, 103, 500, 501]);
}
