//! Sort orders on real tables: `write.sort-order` checked when it is set, `rewrite_data_files`
//! with column sorts, z-order, the table's order and bin-pack, each output file checked against
//! an ordering computed here.

mod common;

use std::fs::File;
use std::sync::Arc;

use arrow_array::{Array, Int64Array, RecordBatch, StringArray};
use common::{points_batch, points_table, rows, sqlite_catalog, uniform};
use geoberg_table::{Column, CreateTable, DataType, Error, SORT_ORDER_PROPERTY, Table, TableIdent};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// A points table of `files` appends of `rows` rows each; `data` is null every 7th row and
/// else one of five values sharing a 9-byte prefix (ties, and an order decided past 8 bytes).
fn table_of(dir: &std::path::Path, files: i64, rows: i64) -> Table {
    let mut table = points_table(sqlite_catalog(dir), "pts");
    for f in 0..files {
        let batch = points_batch(f * rows..(f + 1) * rows, uniform(5));
        let data: StringArray = (f * rows..(f + 1) * rows)
            .map(|i| (i % 7 != 0).then(|| format!("district-{}", (i * 31) % 5)))
            .collect();
        let mut columns = batch.columns().to_vec();
        columns[1] = Arc::new(data);
        let batch = RecordBatch::try_new(batch.schema(), columns).unwrap();
        table = table.append(&[batch]).unwrap().0;
    }
    table
}

/// (id, data) of every row of each live data file, in file order, the files in manifest order.
fn file_rows(table: &Table) -> Vec<Vec<(i64, Option<String>)>> {
    table
        .data_files()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f.file_path().trim_start_matches("file://");
            let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
                .unwrap()
                .build()
                .unwrap();
            let mut out = Vec::new();
            for b in reader {
                let b = b.unwrap();
                let id = b.column(b.schema().index_of("id").unwrap()).clone();
                let id = id.as_any().downcast_ref::<Int64Array>().unwrap();
                let data = b.column(b.schema().index_of("data").unwrap()).clone();
                let data = data.as_any().downcast_ref::<StringArray>().unwrap();
                for r in 0..b.num_rows() {
                    out.push((
                        id.value(r),
                        data.is_valid(r).then(|| data.value(r).to_string()),
                    ));
                }
            }
            out
        })
        .collect()
}

/// `id -> (_row_id, _last_updated_sequence_number)` of every row (v3 row lineage).
fn lineage(table: &Table) -> std::collections::BTreeMap<i64, (i64, i64)> {
    let (batches, _) = table.scan().with_row_lineage(true).execute().unwrap();
    let mut out = std::collections::BTreeMap::new();
    for b in &batches {
        let col = |n: &str| {
            b.column(b.schema().index_of(n).unwrap())
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .clone()
        };
        let (id, row, seq) = (
            col("id"),
            col("_row_id"),
            col("_last_updated_sequence_number"),
        );
        for r in 0..b.num_rows() {
            out.insert(id.value(r), (row.value(r), seq.value(r)));
        }
    }
    out
}

#[test]
fn write_sort_order_is_checked_when_set() {
    let dir = tempfile::tempdir().unwrap();
    let table = points_table(sqlite_catalog(dir.path()), "pts");
    let table = table
        .set_properties([(SORT_ORDER_PROPERTY, "data DESC, id")])
        .unwrap();
    assert_eq!(
        table.properties().unwrap().sort_order.unwrap().to_string(),
        "data DESC NULLS LAST, id ASC NULLS FIRST"
    );
    for (value, says) in [
        ("nope ASC", "no column \"nope\""),
        ("geom ASC", "hilbert(geom, 16) or zorder(geom)"),
        ("hilbert(id, 16)", "a geometry or geography column"),
        ("data NULLS MIDDLE", "FIRST or LAST"),
        ("zorder(id, nope)", "no column \"nope\""),
    ] {
        let e = table
            .set_properties([(SORT_ORDER_PROPERTY, value)])
            .unwrap_err();
        assert!(
            matches!(&e, Error::InvalidProperty { key, .. } if key == SORT_ORDER_PROPERTY),
            "{value}: {e}"
        );
        assert!(e.to_string().contains(says), "{value}: {e}");
    }
    // Unchanged by the refused changes.
    let reloaded = Table::load(table.catalog().clone(), table.ident()).unwrap();
    assert_eq!(
        reloaded.metadata().properties().get(SORT_ORDER_PROPERTY),
        Some(&"data DESC, id".to_string())
    );
    // CREATE TABLE checks it as well.
    let e = CreateTable::new([
        Column::new("id", DataType::Long),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .property(SORT_ORDER_PROPERTY, "geom")
    .create(
        sqlite_catalog(&dir.path().join("b")),
        &TableIdent::new("test_db", "t").unwrap(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("zorder(geom)"), "{e}");
}

#[test]
fn a_column_sort_rewrite_orders_rows_within_and_across_files() {
    let dir = tempfile::tempdir().unwrap();
    let table = table_of(dir.path(), 6, 1_500);
    let before = rows(&table);
    let request = "CALL geoberg.system.rewrite_data_files(table => 'test_db.pts', \
                   strategy => 'sort', sort_order => 'data DESC NULLS FIRST, id', \
                   options => map('rewrite-all', 'true', 'target-file-count', '4'))";
    let geoberg_sql::Statement::Rewrite(request) = geoberg_sql::parse(request).unwrap() else {
        panic!("a rewrite")
    };
    let lineage_before = lineage(&table);
    let (table, report) = table.execute_rewrite(&request).unwrap();
    assert_eq!(rows(&table), before, "the multiset of rows is unchanged");
    assert_eq!(
        lineage(&table),
        lineage_before,
        "rows keep their v3 row lineage"
    );
    assert!(
        report.to_string().contains("sorted by data DESC"),
        "{report}"
    );
    assert!(
        table.spatial_indexes().unwrap().is_empty(),
        "a column sort records no spatial index"
    );
    // Brute force: every row, ordered by the key here, equals the files read in order once
    // the files are put in the order of their first rows.
    // DESC NULLS FIRST, then id ascending.
    let key = |r: &(i64, Option<String>)| (r.1.is_some(), std::cmp::Reverse(r.1.clone()), r.0);
    let mut files = file_rows(&table);
    assert!(files.len() > 1, "{report}");
    files.sort_by_key(|f| key(&f[0]));
    let written: Vec<_> = files.concat();
    let mut expected = written.clone();
    expected.sort_by_key(key);
    assert_eq!(written, expected);
}

#[test]
fn sort_without_an_order_uses_write_sort_order_or_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let table = table_of(dir.path(), 3, 500);
    let request = |sql: &str| {
        let geoberg_sql::Statement::Rewrite(r) = geoberg_sql::parse(sql).unwrap() else {
            panic!("a rewrite")
        };
        r
    };
    let sort = request(
        "CALL geoberg.system.rewrite_data_files(table => 'test_db.pts', strategy => 'sort', \
         options => map('rewrite-all', 'true'))",
    );
    let e = table.execute_rewrite(&sort).unwrap_err();
    assert!(matches!(e, Error::NoSortOrder { .. }), "{e}");
    assert!(e.to_string().contains("write.sort-order"), "{e}");
    assert!(e.to_string().contains("sort_order => '"), "{e}");

    let table = table
        .set_properties([(SORT_ORDER_PROPERTY, "id DESC")])
        .unwrap();
    let before = rows(&table);
    let (table, _) = table.execute_rewrite(&sort).unwrap();
    assert_eq!(rows(&table), before);
    let mut files = file_rows(&table);
    files.sort_by_key(|f| std::cmp::Reverse(f[0].0));
    let written: Vec<i64> = files.concat().iter().map(|r| r.0).collect();
    assert_eq!(written, (0..1_500).rev().collect::<Vec<_>>());
    // The rewritten files declare the table's sort order.
    let declared = table.metadata().default_sort_order_id() as i32;
    assert_ne!(declared, 0);
    for f in table.data_files().unwrap() {
        assert_eq!(f.sort_order_id(), Some(declared));
    }
}

#[test]
fn binpack_compacts_without_a_spatial_index_and_keeps_row_order() {
    let dir = tempfile::tempdir().unwrap();
    let table = table_of(dir.path(), 8, 300);
    let before_files = file_rows(&table);
    assert_eq!(before_files.len(), 8);
    let before = rows(&table);
    let request = "CALL geoberg.system.rewrite_data_files(table => 'test_db.pts', \
                   strategy => 'binpack')";
    let geoberg_sql::Statement::Rewrite(request) = geoberg_sql::parse(request).unwrap() else {
        panic!("a rewrite")
    };
    let lineage_before = lineage(&table);
    let (table, report) = table.execute_rewrite(&request).unwrap();
    assert_eq!(rows(&table), before);
    assert_eq!(
        lineage(&table),
        lineage_before,
        "rows keep their v3 row lineage"
    );
    assert_eq!(report.rewritten_data_files_count, 8, "{report}");
    assert_eq!(report.added_data_files_count, 1, "{report}");
    assert!(report.to_string().contains("bin-packed"), "{report}");
    // Rows in the order of the inputs: manifest order, then file order.
    assert_eq!(file_rows(&table).concat(), before_files.concat());
}

#[test]
fn zorder_over_the_geometry_clusters_like_a_curve() {
    let dir = tempfile::tempdir().unwrap();
    let table = table_of(dir.path(), 8, 2_000);
    let before = rows(&table);
    let window = geoberg_table::BBox::new(10.0, 10.0, 46.0, 27.0);
    let read_before = table
        .scan()
        .with_window("geom", window)
        .explain()
        .unwrap()
        .files_read;
    let (table, report) = table
        .rewrite()
        .sort_order("zorder(geom)".parse().unwrap())
        .option("target-file-count", "16")
        .execute()
        .unwrap();
    assert_eq!(rows(&table), before);
    let after = table.scan().with_window("geom", window).explain().unwrap();
    assert!(
        after.files_read * 4 <= report.added_data_files_count as usize
            && after.files_read < read_before,
        "{after} of {report}"
    );
}

#[test]
fn appends_sort_each_file_by_write_sort_order() {
    let dir = tempfile::tempdir().unwrap();
    let table = common::partitioned_points_table(
        sqlite_catalog(dir.path()),
        "parts",
        &[(SORT_ORDER_PROPERTY, "id DESC NULLS LAST")],
    );
    // Ids scrambled, so that input order is far from the sort order.
    let scrambled = |i: i64| (i * 7_919) % 3_000;
    let batch = points_batch(0..3_000, uniform(9));
    let ids: Int64Array = (0..3_000).map(scrambled).collect();
    let mut columns = batch.columns().to_vec();
    columns[0] = Arc::new(ids);
    let batch = common::with_partition_data(RecordBatch::try_new(batch.schema(), columns).unwrap());
    let before: Vec<i64> = {
        let mut v: Vec<i64> = (0..3_000).map(scrambled).collect();
        v.sort_unstable();
        v
    };
    let (table, report) = table.append(&[batch]).unwrap();
    assert_eq!(report.data_files, 3, "one file per partition");
    let files = file_rows(&table);
    let mut all = Vec::new();
    for f in &files {
        let ids: Vec<i64> = f.iter().map(|r| r.0).collect();
        let mut expected = ids.clone();
        expected.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(ids, expected, "each file is sorted by id DESC");
        all.extend(ids);
    }
    all.sort_unstable();
    assert_eq!(all, before, "every row written once");
}

#[test]
fn a_column_sort_order_is_recorded_for_iceberg_readers() {
    let dir = tempfile::tempdir().unwrap();
    let table = points_table(sqlite_catalog(dir.path()), "pts");
    let table = table
        .set_properties([(SORT_ORDER_PROPERTY, "data DESC, id")])
        .unwrap();
    let md = table.metadata();
    let order = md.default_sort_order();
    assert_ne!(order.order_id, 0, "a sorted default order");
    let schema = md.current_schema();
    let fields: Vec<_> = order
        .fields
        .iter()
        .map(|f| {
            (
                schema.name_by_field_id(f.source_id).unwrap().to_string(),
                f.direction,
                f.null_order,
                f.transform,
            )
        })
        .collect();
    use iceberg::spec::{NullOrder, SortDirection, Transform};
    assert_eq!(
        fields,
        vec![
            (
                "data".into(),
                SortDirection::Descending,
                NullOrder::Last,
                Transform::Identity
            ),
            (
                "id".into(),
                SortDirection::Ascending,
                NullOrder::First,
                Transform::Identity
            ),
        ]
    );
    // Appended files declare it; a z-order has no Iceberg transform, so the default goes back
    // to unsorted and new files declare none.
    let (table, _) = table.append(&[points_batch(0..100, uniform(1))]).unwrap();
    let ids: Vec<_> = table
        .data_files()
        .unwrap()
        .iter()
        .map(|f| f.sort_order_id())
        .collect();
    assert_eq!(ids, vec![Some(order.order_id as i32)]);
    let table = table
        .set_properties([(SORT_ORDER_PROPERTY, "zorder(id, geom)")])
        .unwrap();
    assert_eq!(table.metadata().default_sort_order_id(), 0);
    let table = table
        .unset_properties([SORT_ORDER_PROPERTY], false)
        .unwrap();
    assert_eq!(table.metadata().default_sort_order_id(), 0);
}
