//! DELETE and UPDATE, copy-on-write and merge-on-read, on v3 (deletion vectors) and v2
//! (position delete files): the rows left are exactly a model's, deletion vectors merge, v3 rows
//! keep their ids, a rewrite keeps deleted rows deleted, and a random sequence of changes always
//! reads back as the model says.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray};
use common::*;
use geoberg_table::{
    Catalog, Column, CreateTable, DataType, PartitionField, RowChangeMode, RowFilter, Table,
    TableIdent,
};
use iceberg::spec::{DataContentType, DataFileFormat};
use proptest::prelude::*;

const MODES: [RowChangeMode; 2] = [RowChangeMode::CopyOnWrite, RowChangeMode::MergeOnRead];

/// v3 declares the CRS; v2 cannot, so its column is no-CRS geometry.
fn table(catalog: Arc<dyn Catalog>, name: &str, version: u8, partitioned: bool) -> Table {
    let geom = if version >= 3 {
        DataType::geometry(4326)
    } else {
        DataType::LEGACY_GEOMETRY
    };
    let mut create = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
        Column::new("geom", geom),
    ])
    .allow_undeclared_crs()
    .format_version(version)
    .property(geoberg_table::ROW_GROUP_ROWS_PROPERTY, "16");
    if partitioned {
        create = create.partition_by(PartitionField::identity("data"));
    }
    create
        .create(catalog, &TableIdent::new("test_db", name).unwrap())
        .unwrap()
}

/// id → (data, x): what the table must hold. Point i sits at (x(i), 0).
type Model = BTreeMap<i64, (String, f64)>;

fn x_of(i: i64) -> f64 {
    ((i * 37) % 100) as f64 - 50.0
}

fn fill(mut t: Table, model: &mut Model, appends: i64, rows: i64, partitioned: bool) -> Table {
    for a in 0..appends {
        let ids = a * rows..(a + 1) * rows;
        let mut batch = points_batch(ids.clone(), |i| (x_of(i), 0.0));
        if partitioned {
            batch = with_partition_data(batch);
        }
        let data = batch.column(1).as_string::<i32>().clone();
        for (k, i) in ids.enumerate() {
            model.insert(i, (data.value(k).to_string(), x_of(i)));
        }
        t = t.append(&[batch]).unwrap().0;
    }
    t
}

fn contents(t: &Table) -> Model {
    let (batches, _) = t.scan().execute().unwrap();
    let mut out = Model::new();
    for b in &batches {
        let ids = b.column(0).as_primitive::<Int64Type>();
        let data = b.column(1).as_string::<i32>();
        let geom = b.column(2).as_binary::<i32>();
        for r in 0..b.num_rows() {
            // ISO WKB, or EWKB (a v2 column without a CRS keeps each value's SRID): the
            // SRID sits between the type code and the coordinates.
            let g = geom.value(r);
            let code = u32::from_le_bytes(g[1..5].try_into().unwrap());
            let at = if code & 0x2000_0000 != 0 { 9 } else { 5 };
            let x = f64::from_le_bytes(g[at..at + 8].try_into().unwrap());
            let prev = out.insert(ids.value(r), (data.value(r).to_string(), x));
            assert!(prev.is_none(), "row {} read twice", ids.value(r));
        }
    }
    out
}

fn window_filter(x0: f64, x1: f64) -> RowFilter {
    RowFilter::from_predicate(
        geoberg_sql::parse_condition(&format!(
            "ST_Intersects(geom, ST_MakeEnvelope({x0}, -1, {x1}, 1, 4326))"
        ))
        .unwrap(),
    )
}

fn sql_filter(condition: &str) -> RowFilter {
    RowFilter::from_predicate(geoberg_sql::parse_condition(condition).unwrap())
}

#[test]
fn delete_by_window_in_both_modes_on_v3_and_v2() {
    for version in [3u8, 2] {
        for mode in MODES {
            let dir = tempfile::tempdir().unwrap();
            let catalog = sqlite_catalog(dir.path());
            let mut model = Model::new();
            let t = fill(
                table(catalog, "t", version, false),
                &mut model,
                3,
                40,
                false,
            );
            let files_before = t.data_files().unwrap().len();
            let (t, report) = t
                .delete(window_filter(-10.0, 10.0))
                .mode(mode)
                .execute()
                .unwrap();
            let gone: Vec<i64> = model
                .iter()
                .filter(|(_, (_, x))| (-10.0..=10.0).contains(x))
                .map(|(i, _)| *i)
                .collect();
            for i in &gone {
                model.remove(i);
            }
            let label = format!("v{version} {mode:?}");
            assert_eq!(
                report.deleted_rows as usize,
                gone.len(),
                "{label}: {report}"
            );
            assert_eq!(contents(&t), model, "{label}");
            let reloaded = t.refresh().unwrap();
            assert_eq!(contents(&reloaded), model, "{label}: reloaded");
            let deletes = t.delete_files().unwrap();
            match mode {
                RowChangeMode::CopyOnWrite => {
                    assert!(deletes.is_empty(), "{label}");
                    assert_eq!(report.removed_data_files, 3, "{label}: {report}");
                }
                RowChangeMode::MergeOnRead => {
                    assert_eq!(t.data_files().unwrap().len(), files_before, "{label}");
                    assert!(!deletes.is_empty(), "{label}");
                    let format = if version == 3 {
                        DataFileFormat::Puffin
                    } else {
                        DataFileFormat::Parquet
                    };
                    assert!(
                        deletes
                            .iter()
                            .all(|d| d.content_type() == DataContentType::PositionDeletes
                                && d.file_format() == format),
                        "{label}"
                    );
                    let (_, explain) = t.scan().execute().unwrap();
                    assert_eq!(explain.rows_deleted as usize, gone.len(), "{label}");
                }
            }
            // A window scan sees the same rows as the full scan, filtered.
            let (batches, _) = t
                .scan()
                .with_window("geom", geoberg_table::BBox::new(-20.0, -1.0, 20.0, 1.0))
                .execute()
                .unwrap();
            let expected = model
                .values()
                .filter(|(_, x)| (-20.0..=20.0).contains(x))
                .count();
            assert_eq!(ids_of(&batches).len(), expected, "{label}");
        }
    }
}

#[test]
fn a_second_delete_merges_the_deletion_vector_and_removes_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let mut model = Model::new();
    let t = fill(table(catalog, "t", 3, false), &mut model, 2, 50, false);
    let (t, _) = t
        .delete(window_filter(-50.0, -30.0))
        .mode(RowChangeMode::MergeOnRead)
        .execute()
        .unwrap();
    let first = t.delete_files().unwrap();
    assert_eq!(first.len(), 2, "one vector per data file");
    let (t, report) = t
        .delete(window_filter(-35.0, 0.0))
        .mode(RowChangeMode::MergeOnRead)
        .execute()
        .unwrap();
    assert_eq!(report.removed_delete_files, 2, "{report}");
    let second = t.delete_files().unwrap();
    assert_eq!(second.len(), 2, "still one vector per data file");
    for d in &second {
        assert!(
            !first.iter().any(|f| f.file_path() == d.file_path()),
            "the old vectors are gone"
        );
    }
    model.retain(|_, (_, x)| !(-50.0..=0.0).contains(x));
    assert_eq!(contents(&t), model);
    // The merged vectors hold both deletes' rows.
    let total: u64 = second.iter().map(|d| d.record_count()).sum();
    assert_eq!(total as usize, 100 - model.len());
}

#[test]
fn update_keeps_row_ids_and_sets_a_new_sequence_number() {
    for mode in MODES {
        let dir = tempfile::tempdir().unwrap();
        let catalog = sqlite_catalog(dir.path());
        let mut model = Model::new();
        let t = fill(table(catalog, "t", 3, false), &mut model, 3, 20, false);
        let lineage = |t: &Table| -> BTreeMap<i64, (i64, i64)> {
            let (batches, _) = t.scan().with_row_lineage(true).execute().unwrap();
            let mut out = BTreeMap::new();
            for b in &batches {
                let ids = b.column(0).as_primitive::<Int64Type>();
                let rid = b
                    .column_by_name("_row_id")
                    .unwrap()
                    .as_primitive::<Int64Type>();
                let seq = b
                    .column_by_name("_last_updated_sequence_number")
                    .unwrap()
                    .as_primitive::<Int64Type>();
                for r in 0..b.num_rows() {
                    out.insert(ids.value(r), (rid.value(r), seq.value(r)));
                }
            }
            out
        };
        let before = lineage(&t);
        let (t, report) = t
            .update(sql_filter("id >= 10 AND id < 30"))
            .set("data", |rows: &RecordBatch| {
                Ok(Arc::new(StringArray::from(vec!["updated"; rows.num_rows()])) as ArrayRef)
            })
            .mode(mode)
            .execute()
            .unwrap();
        assert_eq!(report.updated_rows, 20, "{mode:?}: {report}");
        for i in 10..30 {
            model.get_mut(&i).unwrap().0 = "updated".into();
        }
        assert_eq!(contents(&t), model, "{mode:?}");
        let after = lineage(&t);
        let seq = t.metadata().current_snapshot().unwrap().sequence_number();
        assert_eq!(after.len(), before.len());
        for (id, (rid, s)) in &after {
            assert_eq!(*rid, before[id].0, "{mode:?}: row {id} kept its _row_id");
            if (10..30).contains(id) {
                assert_eq!(*s, seq, "{mode:?}: updated row {id}");
            } else {
                assert_eq!(*s, before[id].1, "{mode:?}: untouched row {id}");
            }
        }
    }
}

/// Each live data file's ids in file order, with its sort order id.
fn ids_per_file(t: &Table) -> Vec<(Vec<i64>, Option<i32>)> {
    t.data_files()
        .unwrap()
        .iter()
        .map(|f| {
            let (batches, _) = t.scan().files([f.file_path()]).execute().unwrap();
            (ids_of(&batches), f.sort_order_id())
        })
        .collect()
}

/// Whether `part` is `whole` with some values left out, the rest in the same order.
fn is_subsequence(part: &[i64], whole: &[i64]) -> bool {
    let mut rest = whole.iter();
    part.iter().all(|p| rest.any(|w| w == p))
}

#[test]
fn copy_on_write_rewrites_each_file_on_its_own_keeping_its_row_order() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let mut model = Model::new();
    // Three appended files in id order, then one sorted by the declared order `id DESC`.
    let t = fill(table(catalog, "t", 3, false), &mut model, 3, 40, false);
    let mut t = t
        .set_properties([(geoberg_table::SORT_ORDER_PROPERTY, "id DESC")])
        .unwrap();
    let batch = points_batch(120..160, |i| (x_of(i), 0.0));
    model.extend((120..160).map(|i| (i, (format!("row{i}"), x_of(i)))));
    t = t.append(&[batch]).unwrap().0;
    for (x0, x1) in [(-10.0, 10.0), (20.0, 30.0)] {
        let before = ids_per_file(&t);
        let (next, report) = t
            .delete(window_filter(x0, x1))
            .mode(RowChangeMode::CopyOnWrite)
            .execute()
            .unwrap();
        t = next;
        model.retain(|_, (_, x)| !(x0..=x1).contains(x));
        assert_eq!(contents(&t), model);
        let after = ids_per_file(&t);
        assert_eq!(after.len(), before.len(), "one file per file: {report}");
        for (ids, sort_order) in &after {
            assert!(
                before
                    .iter()
                    .any(|(old, old_order)| old_order == sort_order && is_subsequence(ids, old)),
                "{ids:?} ({sort_order:?}) is one earlier file's rows in their order: {before:?}"
            );
        }
        let sorted = after.iter().filter(|(_, o)| o.is_some()).count();
        assert_eq!(sorted, 1, "the sorted file keeps its sort order id");
    }
}

#[test]
fn a_spatial_index_after_merge_on_read_deletes_keeps_them_deleted() {
    for version in [3u8, 2] {
        let dir = tempfile::tempdir().unwrap();
        let catalog = sqlite_catalog(dir.path());
        let mut model = Model::new();
        let t = fill(table(catalog, "t", version, true), &mut model, 3, 30, true);
        let (t, _) = t
            .delete(window_filter(0.0, 25.0))
            .mode(RowChangeMode::MergeOnRead)
            .execute()
            .unwrap();
        model.retain(|_, (_, x)| !(0.0..=25.0).contains(x));
        let (t, report) = t.rewrite().hilbert("geom", 10).execute().unwrap();
        assert_eq!(contents(&t), model, "v{version}");
        if version == 3 {
            assert!(report.removed_delete_files_count > 0, "{report}");
            assert!(
                t.delete_files().unwrap().is_empty(),
                "vectors of replaced files removed"
            );
        }
        let (_, explain) = t.scan().execute().unwrap();
        assert_eq!(explain.rows_deleted, 0);
    }
}

#[test]
fn a_delete_that_matches_nothing_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let mut model = Model::new();
    let t = fill(table(catalog, "t", 3, false), &mut model, 1, 10, false);
    let snapshot = t.metadata().current_snapshot_id();
    let (t, report) = t.delete(window_filter(100.0, 120.0)).execute().unwrap();
    assert_eq!(report.snapshot_id, None);
    assert_eq!(t.metadata().current_snapshot_id(), snapshot);
}

#[derive(Debug, Clone)]
enum Change {
    Delete { x0: i32, x1: i32, mode: bool },
    DeleteIds { below: i64, mode: bool },
    Update { x0: i32, x1: i32, mode: bool },
    Append { rows: i64 },
    Rewrite,
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        3 => (-55i32..55, 0i32..30, any::<bool>())
            .prop_map(|(x0, w, mode)| Change::Delete { x0, x1: x0 + w, mode }),
        1 => (0i64..200, any::<bool>()).prop_map(|(below, mode)| Change::DeleteIds { below, mode }),
        2 => (-55i32..55, 0i32..30, any::<bool>())
            .prop_map(|(x0, w, mode)| Change::Update { x0, x1: x0 + w, mode }),
        1 => (1i64..30).prop_map(|rows| Change::Append { rows }),
        1 => Just(Change::Rewrite),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12),
        ..ProptestConfig::default()
    })]

    /// Any sequence of changes, in either mode, on v2 or v3, partitioned or not, reads back as
    /// the model: a map from id to row, changed by brute force.
    #[test]
    fn random_changes_read_back_as_the_model(
        version in prop::sample::select(vec![2u8, 3]),
        partitioned in any::<bool>(),
        changes in prop::collection::vec(change(), 1..7),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let catalog = sqlite_catalog(dir.path());
        let mut model = Model::new();
        let mut t = fill(table(catalog, "t", version, partitioned), &mut model, 2, 25, partitioned);
        let mut next_id = 1000i64;
        let mode = |m: bool| if m { RowChangeMode::MergeOnRead } else { RowChangeMode::CopyOnWrite };
        for c in &changes {
            match c {
                Change::Delete { x0, x1, mode: m } => {
                    let (x0, x1) = (f64::from(*x0), f64::from(*x1));
                    t = t.delete(window_filter(x0, x1)).mode(mode(*m)).execute().unwrap().0;
                    model.retain(|_, (_, x)| !(x0..=x1).contains(x));
                }
                Change::DeleteIds { below, mode: m } => {
                    t = t.delete(sql_filter(&format!("id < {below}"))).mode(mode(*m)).execute().unwrap().0;
                    model.retain(|i, _| *i >= *below);
                }
                Change::Update { x0, x1, mode: m } => {
                    let (x0, x1) = (f64::from(*x0), f64::from(*x1));
                    let (next, report) = t
                        .update(window_filter(x0, x1))
                        .set("data", |rows: &RecordBatch| {
                            let old = rows.column(1).as_string::<i32>();
                            Ok(Arc::new(StringArray::from_iter(
                                old.iter().map(|v| v.map(|v| format!("{v}+"))),
                            )) as ArrayRef)
                        })
                        .mode(mode(*m))
                        .execute()
                        .unwrap();
                    t = next;
                    let mut n = 0;
                    for (_, (data, x)) in model.iter_mut() {
                        if (x0..=x1).contains(x) {
                            data.push('+');
                            n += 1;
                        }
                    }
                    prop_assert_eq!(report.updated_rows, n);
                }
                Change::Append { rows } => {
                    let ids = next_id..next_id + rows;
                    next_id += rows;
                    let mut batch = points_batch(ids.clone(), |i| (x_of(i), 0.0));
                    if partitioned {
                        batch = with_partition_data(batch);
                    }
                    let data = batch.column(1).as_string::<i32>().clone();
                    for (k, i) in ids.enumerate() {
                        model.insert(i, (data.value(k).to_string(), x_of(i)));
                    }
                    t = t.append(&[batch]).unwrap().0;
                }
                Change::Rewrite => {
                    t = t.rewrite().hilbert("geom", 8).execute().unwrap().0;
                }
            }
            prop_assert_eq!(contents(&t), model.clone(), "after {:?}", c);
        }
        prop_assert_eq!(contents(&t.refresh().unwrap()), model);
    }
}

#[test]
fn a_null_in_the_filter_column_matches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = table(catalog, "t", 3, false);
    let batch = points_batch(0..6, |i| (i as f64, 0.0));
    let data: StringArray = (0..6)
        .map(|i| (i % 2 == 0).then(|| format!("d{i}")))
        .collect();
    let batch = RecordBatch::try_new(
        batch.schema(),
        vec![
            batch.column(0).clone(),
            Arc::new(data),
            batch.column(2).clone(),
        ],
    )
    .unwrap();
    let (t, _) = t.append(&[batch]).unwrap();
    // `data <> 'd0'` is unknown for the nulls: they stay, as in SQL.
    let (t, report) = t.delete(sql_filter("data <> 'd0'")).execute().unwrap();
    assert_eq!(report.deleted_rows, 2);
    let (batches, _) = t.scan().execute().unwrap();
    let left: Vec<i64> = ids_of(&batches);
    assert_eq!(left, [0, 1, 3, 5]);
    let nulls = batches
        .iter()
        .map(|b| b.column(1).null_count())
        .sum::<usize>();
    assert_eq!(nulls, 3);
}
