//! CREATE SPATIAL INDEX end to end: real Parquet files in temporary warehouses, the REPLACE
//! commit, its validation against concurrent writers and its failure modes.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};

use arrow_array::{BinaryArray, Int64Array, RecordBatch, StringArray};
use common::{
    data_dir_files, live_paths, partitioned_points_table, points_batch, points_table,
    rewrite_in_three_commits, rows, sqlite_catalog, uniform, with_partition_data,
};
use geoberg_table::{
    BBox, Column, CreateTable, DataType, Error, Extent, PartitionField,
    SPATIAL_INDEX_PROPERTY_PREFIX, Table, TableIdent, execute_rewrite_statement,
};
use iceberg::spec::Operation;

/// A table of `files` appended files of `rows` uniform points each.
fn scattered_table(dir: &Path, files: i64, rows: i64) -> Table {
    let mut table = points_table(sqlite_catalog(dir), "pts");
    for f in 0..files {
        let batch = points_batch(f * rows..(f + 1) * rows, uniform(7));
        table = table.append(&[batch]).unwrap().0;
    }
    table
}

#[test]
fn rewrite_preserves_every_row_and_clusters_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let table = scattered_table(dir.path(), 8, 2_000);
    let before_rows = rows(&table);
    let window = BBox::new(10.0, 10.0, 46.0, 27.0); // 1% of the area
    let before = table.scan().with_window("geom", window).explain().unwrap();
    assert_eq!(
        before.files_read, 8,
        "unclustered appends all span the world"
    );
    let next_row_id = table.metadata().next_row_id();

    let progress = Mutex::new(Vec::new());
    let (table, report) = table
        .rewrite()
        .hilbert("geom", 16)
        .option("target-file-count", "16")
        .on_progress(|done, total| progress.lock().unwrap().push((done, total)))
        .execute()
        .unwrap();

    assert_eq!(
        rows(&table),
        before_rows,
        "the multiset of rows is unchanged"
    );
    assert_eq!(report.rewritten_data_files_count, 8);
    assert_eq!(
        report.added_data_files_count as usize,
        table.data_files().unwrap().len()
    );
    assert!(report.added_data_files_count >= 8, "{report}");
    assert_eq!(report.rewritten_records_count, 16_000);
    assert_eq!(report.failed_data_files_count, 0);
    let progress = progress.into_inner().unwrap();
    assert_eq!(progress.first().map(|p| p.0), Some(0));
    assert_eq!(
        progress.last().map(|p| p.0),
        Some(report.rewritten_bytes_count)
    );

    let after = table.scan().with_window("geom", window).explain().unwrap();
    assert!(
        after.files_read * 4 <= report.added_data_files_count as usize,
        "a 1% window should read few of the clustered files: {after}"
    );
    assert!(after.files_read < before.files_read);
    let (hits_before, hits_after) = (before.rows_returned, after.rows_returned);
    assert_eq!(hits_before, hits_after, "the window returns the same rows");

    // One REPLACE snapshot with Iceberg's summary keys, the index recorded twice.
    let snapshot = table.metadata().current_snapshot().unwrap();
    let summary = snapshot.summary();
    assert_eq!(summary.operation, Operation::Replace);
    let p = &summary.additional_properties;
    assert_eq!(p["deleted-data-files"], "8");
    assert_eq!(p["added-records"], "16000");
    assert_eq!(p["deleted-records"], "16000");
    assert_eq!(p["total-records"], "16000");
    assert_eq!(
        p["total-data-files"],
        report.added_data_files_count.to_string()
    );
    assert!(p["geoberg.spatial-index"].contains("\"precision\":16"));
    let prop = &table.metadata().properties()[&format!("{SPATIAL_INDEX_PROPERTY_PREFIX}geom")];
    assert_eq!(
        prop,
        "{\"bounds\":[-180.0,-90.0,180.0,90.0],\"precision\":16}"
    );
    // v3 row lineage: the new files' manifest takes an id range of their row count (spec:
    // First Row ID Assignment), unused since every row stores its own `_row_id`
    // (tests/lineage.rs checks the rows keep theirs).
    assert_eq!(table.metadata().next_row_id(), next_row_id + 16_000);
    assert_eq!(snapshot.first_row_id(), Some(next_row_id));

    // Reloading from the catalog gives the same table; a compaction keeps the index.
    let reloaded = table.refresh().unwrap();
    assert_eq!(rows(&reloaded), before_rows);
    let (again, report2) = reloaded.rewrite().execute().unwrap();
    assert_eq!(report2.index.spec.precision, 16);
    assert_eq!(rows(&again), before_rows);
}

#[test]
fn where_restricts_the_rewritten_files() {
    let dir = tempfile::tempdir().unwrap();
    let table = scattered_table(dir.path(), 6, 500);
    let untouched: BTreeSet<String> = table
        .data_files()
        .unwrap()
        .iter()
        .filter(|f| {
            // Files 2.. hold ids >= 1000.
            let lo = &f.lower_bounds()[&1];
            *lo >= iceberg::spec::Datum::long(1_000)
        })
        .map(|f| f.file_path().rsplit('/').next().unwrap().to_string())
        .collect();
    assert_eq!(untouched.len(), 4);
    let before_rows = rows(&table);

    let (table, report) = table
        .rewrite()
        .hilbert("geom", 12)
        .where_sql("id < 1000 AND data IS NOT NULL")
        .execute()
        .unwrap();
    assert_eq!(report.files_matching_filter, 2);
    assert_eq!(report.rewritten_data_files_count, 2);
    assert!(live_paths(&table).is_superset(&untouched));
    assert_eq!(rows(&table), before_rows);

    // A spatial condition matches every scattered file; one that misses all data none.
    let (table, report) = table
        .rewrite()
        .hilbert("geom", 12)
        .where_sql("ST_Intersects(geom, ST_GeomFromText('POLYGON((170 86, 179 86, 179 89, 170 89, 170 86))'))")
        .execute()
        .unwrap();
    assert_eq!(report.files_matching_filter, 0, "{report}");
    assert!(report.snapshot_ids.is_empty());
    let err = table
        .rewrite()
        .hilbert("geom", 12)
        .where_sql("nope = 1")
        .execute()
        .unwrap_err();
    assert!(err.to_string().contains("\"nope\""), "{err}");
}

#[test]
fn statements_run_through_the_table_api() {
    let dir = tempfile::tempdir().unwrap();
    let table = scattered_table(dir.path(), 3, 300);
    let catalog = table.catalog().clone();
    let before_rows = rows(&table);
    let geoberg_sql::Statement::Rewrite(create) = geoberg_sql::parse(
        "CREATE SPATIAL INDEX FOR geoberg.test_db.pts USING hilbert(geom, 10) \
         OPTIONS map('target-file-count', '2')",
    )
    .unwrap() else {
        panic!("not a rewrite")
    };
    let (table, report) = execute_rewrite_statement(catalog.clone(), &create).unwrap();
    assert_eq!(report.rewritten_data_files_count, 3);
    assert_eq!(rows(&table), before_rows);

    // Bin-pack (Iceberg's default strategy) compacts without sorting and leaves the recorded
    // index as it was.
    let geoberg_sql::Statement::Rewrite(call) = geoberg_sql::parse(
        "CALL geoberg.system.rewrite_data_files(table => 'test_db.pts', \
         options => map('rewrite-all', 'true'))",
    )
    .unwrap() else {
        panic!("not a rewrite")
    };
    let (table, report) = execute_rewrite_statement(catalog, &call).unwrap();
    assert_eq!(
        report.order,
        geoberg_table::RowOrder::InputOrder,
        "{report}"
    );
    assert_eq!(table.spatial_indexes().unwrap()[0].spec.precision, 10);
    assert_eq!(rows(&table), before_rows);
}

#[test]
fn preflight_errors_name_the_problem_before_any_data_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let mercator = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::geometry(3857)),
    ])
    .create(
        catalog.clone(),
        &TableIdent::new("test_db", "merc").unwrap(),
    )
    .unwrap();
    let batch = RecordBatch::try_new(
        Arc::new(arrow_schema::Schema::new(vec![
            arrow_schema::Field::new("id", arrow_schema::DataType::Int64, false),
            arrow_schema::Field::new("geom", arrow_schema::DataType::Binary, true)
                .with_metadata(HashMap::from([("srid".to_string(), "3857".to_string())])),
        ])),
        vec![
            Arc::new(Int64Array::from(vec![1])),
            Arc::new(BinaryArray::from_iter_values([common::wkb_point(1e6, 2e6)])),
        ],
    )
    .unwrap();
    let (mercator, _) = mercator.append(&[batch]).unwrap();
    let err = mercator
        .rewrite()
        .hilbert("geom", 10)
        .execute()
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("EPSG:3857") && msg.contains("minX, minY, maxX, maxY"),
        "{msg}"
    );
    // With explicit bounds it works.
    let (_, report) = mercator
        .rewrite()
        .hilbert("geom", 10)
        .bounds(Extent::new(
            -20037508.34,
            -20037508.34,
            20037508.34,
            20037508.34,
        ))
        .execute()
        .unwrap();
    assert_eq!(report.rewritten_data_files_count, 1);

    let table = points_table(catalog, "small");
    let (table, _) = table
        .append(&[points_batch(0..10, |i| (i as f64 * 5.0, 1.0))])
        .unwrap();
    let files_before = data_dir_files(&table);
    let snapshot = table.metadata().current_snapshot_id();
    let cases: Vec<(geoberg_table::Rewrite<'_>, Vec<&str>)> = vec![
        (
            table
                .rewrite()
                .hilbert("geom", 10)
                .bounds(Extent::new(0.0, 0.0, 10.0, 10.0)),
            vec!["45", "hilbert(geom, 10, 0, 0, 45, 10)"],
        ),
        (
            table
                .rewrite()
                .hilbert("geom", 10)
                .option("target-file-sise-bytes", "1"),
            vec![
                "target-file-sise-bytes",
                "target-file-size-bytes",
                "rewrite-all",
            ],
        ),
        (
            table.rewrite().hilbert("geom", 33),
            vec!["precision 33", "1..=32"],
        ),
        (table.rewrite().hilbert("nope", 10), vec!["\"nope\""]),
    ];
    for (rewrite, needles) in cases {
        let msg = rewrite.execute().unwrap_err().to_string();
        for n in needles {
            assert!(msg.contains(n), "{n:?} not in: {msg}");
        }
    }
    let table = table.refresh().unwrap();
    assert_eq!(table.metadata().current_snapshot_id(), snapshot);
    assert_eq!(data_dir_files(&table), files_before);
}

#[test]
fn a_concurrent_append_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let table = scattered_table(dir.path(), 4, 400);
    let other = table.refresh().unwrap();
    let appended = Mutex::new(false);
    let (table, report) = table
        .rewrite()
        .hilbert("geom", 12)
        .on_progress(|done, total| {
            let mut appended = appended.lock().unwrap();
            if done == total && !*appended {
                other
                    .append(&[points_batch(10_000..10_100, uniform(3))])
                    .unwrap();
                *appended = true;
            }
        })
        .execute()
        .unwrap();
    assert!(*appended.lock().unwrap());
    assert_eq!(report.rewritten_data_files_count, 4);
    let ids: Vec<i64> = rows(&table).iter().map(|r| r.0).collect();
    let expected: Vec<i64> = (0..1_600).chain(10_000..10_100).collect();
    assert_eq!(ids, expected);
    let p = &table
        .metadata()
        .current_snapshot()
        .unwrap()
        .summary()
        .additional_properties;
    assert_eq!(p["total-records"], "1700");
}

#[test]
fn a_concurrent_rewrite_of_an_input_is_a_conflict_and_leaves_no_files() {
    let dir = tempfile::tempdir().unwrap();
    let table = scattered_table(dir.path(), 4, 400);
    let other = table.refresh().unwrap();
    let winner = Mutex::new(None);
    let err = table
        .rewrite()
        .hilbert("geom", 12)
        .on_progress(|done, total| {
            let mut w = winner.lock().unwrap();
            if done == total && w.is_none() {
                *w = Some(other.rewrite().hilbert("geom", 8).execute().unwrap().0);
            }
        })
        .execute()
        .unwrap_err();
    assert!(matches!(err, Error::RewriteConflict { .. }), "{err}");
    assert!(err.to_string().contains("missing required files"), "{err}");
    let winner = winner.into_inner().unwrap().unwrap();
    let current = table.refresh().unwrap();
    assert_eq!(current.metadata_location(), winner.metadata_location());
    // On disk: the original inputs plus the winner's files, nothing of the loser's.
    let expected: BTreeSet<String> = live_paths(&table)
        .union(&live_paths(&current))
        .cloned()
        .collect();
    assert_eq!(data_dir_files(&current), expected);
    assert_eq!(rows(&current).len(), 1_600);
}

#[test]
fn a_failure_in_the_middle_leaves_the_table_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let table = points_table(sqlite_catalog(dir.path()), "parts");
    let _ = table;
    // Two partitions, so that one is written before the other fails.
    let table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .partition_by(PartitionField::identity("data"))
    .create(
        table.catalog().clone(),
        &TableIdent::new("test_db", "p2").unwrap(),
    )
    .unwrap();
    let mut table = table;
    for f in 0..4i64 {
        let b = points_batch(f * 100..(f + 1) * 100, uniform(1));
        let data: Vec<&str> = (0..100)
            .map(|i| if i % 2 == 0 { "a" } else { "b" })
            .collect();
        let b = RecordBatch::try_new(
            b.schema(),
            vec![
                b.column(0).clone(),
                Arc::new(StringArray::from(data)),
                b.column(2).clone(),
            ],
        )
        .unwrap();
        table = table.append(&[b]).unwrap().0;
    }
    let before = data_dir_files(&table);
    let location = table.metadata_location().to_string();
    let victim = table
        .data_files()
        .unwrap()
        .iter()
        .find(|f| format!("{:?}", f.partition()).contains("\"b\""))
        .unwrap()
        .file_path()
        .trim_start_matches("file://")
        .to_string();
    let err = table
        .rewrite()
        .hilbert("geom", 12)
        .on_progress(|done, _| {
            if done == 0 {
                std::fs::remove_file(&victim).unwrap();
            }
        })
        .execute()
        .unwrap_err();
    assert!(
        err.to_string().contains(victim.rsplit('/').next().unwrap()),
        "{err}"
    );
    let current = table.refresh().unwrap();
    assert_eq!(current.metadata_location(), location);
    let mut expected = before.clone();
    expected.remove(victim.rsplit('/').next().unwrap());
    assert_eq!(
        data_dir_files(&current),
        expected,
        "no file of the failed rewrite remains"
    );
}

#[test]
fn partial_progress_commits_partition_batches() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let mut table = partitioned_points_table(catalog, "pp", &[]);
    for f in 0..3i64 {
        let b = points_batch(f * 90..(f + 1) * 90, uniform(5));
        table = table.append(&[with_partition_data(b)]).unwrap().0;
    }
    let before_rows = rows(&table);
    let (table, report) = rewrite_in_three_commits(&table).execute().unwrap();
    assert_eq!(report.snapshot_ids.len(), 3, "{report}");
    assert_eq!(report.rewritten_data_files_count, 9);
    assert_eq!(rows(&table), before_rows);
    for id in &report.snapshot_ids {
        let s = table.metadata().snapshot_by_id(*id).unwrap();
        assert_eq!(s.summary().operation, Operation::Replace);
    }
}

#[test]
fn a_legacy_v2_column_takes_the_two_argument_form_as_wgs84() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
        Column::new("geom", DataType::LEGACY_GEOMETRY),
    ])
    .allow_undeclared_crs()
    .with_bbox_columns("geom")
    .create(catalog, &TableIdent::new("test_db", "legacy").unwrap())
    .unwrap();
    assert_eq!(table.metadata().format_version() as u8, 2);
    for f in 0..4i64 {
        table = table
            .append(&[points_batch(f * 500..(f + 1) * 500, uniform(11))])
            .unwrap()
            .0;
    }
    let before_rows = rows(&table);
    let window = BBox::new(-20.0, -10.0, 16.0, 7.0);
    let before = table.scan().with_window("geom", window).explain().unwrap();
    let (table, report) = table
        .rewrite()
        .hilbert("geom", 12)
        .option("target-file-count", "16")
        .execute()
        .unwrap();
    assert_eq!(
        report.index.spec.bounds,
        Extent::new(-180.0, -90.0, 180.0, 90.0)
    );
    assert_eq!(rows(&table), before_rows);
    // The rewritten files carry bounds on the bbox columns (from the Parquet footers).
    let after = table.scan().with_window("geom", window).explain().unwrap();
    assert_eq!(after.rows_returned, before.rows_returned);
    assert!(
        after.files_read * 3 < report.added_data_files_count as usize,
        "{after}"
    );
}

/// Null and empty geometries after CREATE SPATIAL INDEX (issue #30): nulls get files of their
/// own, which every window skips by their null counts; empties join the clustered files, so no
/// file is left without bounds for every window to read. Oracle: the rows written here (ids of
/// nulls and empties known), and the manifest's own bounds and null counts.
#[test]
fn null_and_empty_geometries_leave_no_file_every_window_reads() {
    let dir = tempfile::tempdir().unwrap();
    let mut table = points_table(sqlite_catalog(dir.path()), "holes");
    // 4 appends of 3,000 rows; ids ≡ 1 (mod 5) null, ≡ 2 (mod 5) POINT EMPTY, the rest points.
    let empty_point = [
        &[1u8, 1, 0, 0, 0][..],
        &f64::NAN.to_le_bytes(),
        &f64::NAN.to_le_bytes(),
    ]
    .concat();
    for f in 0..4i64 {
        let ids = f * 3_000..(f + 1) * 3_000;
        let batch = points_batch(ids.clone(), uniform(11));
        let geom: BinaryArray = ids
            .map(|i| match i % 5 {
                1 => None,
                2 => Some(empty_point.clone()),
                _ => {
                    let (x, y) = uniform(11)(i);
                    Some(common::wkb_point(x, y))
                }
            })
            .collect();
        let mut columns = batch.columns().to_vec();
        columns[2] = Arc::new(geom);
        let batch = RecordBatch::try_new(batch.schema(), columns).unwrap();
        table = table.append(&[batch]).unwrap().0;
    }
    let before = rows(&table);
    let (table, _) = table
        .rewrite()
        .hilbert("geom", 16)
        .option("target-file-count", "8")
        .execute()
        .unwrap();
    assert_eq!(rows(&table), before, "every row, empties and nulls too");

    let files = table.file_index("geom").unwrap().files().entries().to_vec();
    let unbounded: Vec<_> = files
        .iter()
        .filter(|f| f.bbox.is_none() && !f.all_null)
        .collect();
    assert!(
        unbounded.is_empty(),
        "files every window reads: {unbounded:?}"
    );
    let null_files = files.iter().filter(|f| f.all_null).count();
    assert!(null_files >= 1, "the nulls are in files of their own");
    assert_eq!(
        files
            .iter()
            .filter(|f| f.all_null)
            .map(|f| f.record_count)
            .sum::<u64>(),
        2_400,
        "exactly the 2,400 nulls"
    );
    // A window reads neither the null files nor a file without bounds.
    let window = BBox::new(10.0, 10.0, 46.0, 27.0);
    let plan = table.scan().with_window("geom", window).explain().unwrap();
    assert!(
        plan.files_read + null_files < files.len(),
        "the window reads {} of {} files: {plan}",
        plan.files_read,
        files.len()
    );
}
