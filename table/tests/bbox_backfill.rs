//! Seed 002's recipe end to end ("Materializing Bbox Columns for Pushdown"): add the four bbox
//! columns before the geometry with explicit metrics, backfill one partition at a time with an
//! atomic, idempotent overwrite sorted on the way, derive them on append from then on, and
//! assert that a bbox-column range query reads fewer files afterwards. The oracle is the
//! generator: every point's coordinates are known, so every bbox value and every window's rows
//! are checked against them, not against the code that derived them. A backfill killed at each
//! write in turn and re-run gives the same table as one that was never interrupted.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, BinaryArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::*;
use geoberg_geostats::BBox;
use geoberg_table::testing::{Fault, FaultyCatalog};
use geoberg_table::{Catalog, Column, CreateTable, DataType, PartitionField, Table, TableIdent};

const PARTITIONS: i64 = 3;
const APPENDS: i64 = 4;
const ROWS_PER_APPEND: i64 = 300;
const NAMES: [&str; 4] = ["bbox_min_x", "bbox_min_y", "bbox_max_x", "bbox_max_y"];

/// The point of row `id` (uniform over the world), or none for every 50th row (a null
/// geometry, whose bounds must be null).
fn point(id: i64) -> Option<(f64, f64)> {
    (id % 50 != 7).then(|| uniform(11)(id))
}

/// Rows `ids`, partition `d<id % 3>`, labelled 4326 (`srid` field metadata) or unlabelled.
fn batch(ids: std::ops::Range<i64>, srid: bool) -> RecordBatch {
    let mut geom = Field::new("geom", ArrowType::Binary, true);
    if srid {
        geom = geom.with_metadata(HashMap::from([("srid".into(), "4326".into())]));
    }
    let schema = Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("data", ArrowType::Utf8, true),
        geom,
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from_iter_values(ids.clone())),
            Arc::new(StringArray::from_iter_values(
                ids.clone().map(|i| format!("d{}", i % PARTITIONS)),
            )),
            Arc::new(BinaryArray::from_iter(
                ids.map(|i| point(i).map(|(x, y)| wkb_point(x, y))),
            )),
        ],
    )
    .unwrap()
}

/// A partitioned points table, `APPENDS` appends over every partition; v3 `geometry(4326)`,
/// or v2 with a WKB-binary geometry column of no declared CRS.
fn table(catalog: Arc<dyn Catalog>, name: &str, v3: bool) -> Table {
    let geom = match v3 {
        true => DataType::geometry(4326),
        false => DataType::LEGACY_GEOMETRY,
    };
    let mut create = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
        Column::new("geom", geom),
    ])
    .partition_by(PartitionField::identity("data"));
    if !v3 {
        create = create.allow_undeclared_crs();
    }
    let mut t = create
        .create(catalog, &TableIdent::new("test_db", name).unwrap())
        .unwrap();
    for a in 0..APPENDS {
        let ids = a * ROWS_PER_APPEND..(a + 1) * ROWS_PER_APPEND;
        t = t.append(&[batch(ids, v3)]).unwrap().0;
    }
    t
}

/// One row as the table returns it: id, partition, the four bbox values.
type Row = (i64, String, [Option<f64>; 4]);

fn rows_of(batches: &[RecordBatch]) -> Vec<Row> {
    let mut out = Vec::new();
    for b in batches {
        let col = |n: &str| b.column(b.schema().index_of(n).unwrap()).clone();
        let id = col("id");
        let id = id.as_primitive::<Int64Type>();
        let data = col("data");
        let data = data.as_string::<i32>();
        let bbox = NAMES.map(col);
        for r in 0..b.num_rows() {
            let v = |k: usize| {
                let a = bbox[k].as_primitive::<Float64Type>();
                a.is_valid(r).then(|| a.value(r))
            };
            out.push((
                id.value(r),
                data.value(r).to_string(),
                [v(0), v(1), v(2), v(3)],
            ));
        }
    }
    out.sort_by_key(|r| r.0);
    out
}

fn rows(t: &Table) -> Vec<Row> {
    rows_of(&t.scan().execute().unwrap().0)
}

/// Every row's bbox values are its point's coordinates (null for a null geometry).
fn assert_filled_from_the_generator(rows: &[Row]) {
    assert_eq!(rows.len() as i64, APPENDS * ROWS_PER_APPEND);
    for (id, data, bbox) in rows {
        assert_eq!(*data, format!("d{}", id % PARTITIONS));
        let want = match point(*id) {
            Some((x, y)) => [Some(x), Some(y), Some(x), Some(y)],
            None => [None; 4],
        };
        assert_eq!(*bbox, want, "row {id}");
    }
}

/// Live data files by partition.
fn files_by_partition(t: &Table) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for f in t.data_files().unwrap() {
        *out.entry(format!("{:?}", f.partition())).or_default() += 1;
    }
    out
}

/// Ids of the rows whose point lies in `w` (brute force over the generator).
fn ids_in(w: &BBox) -> Vec<i64> {
    (0..APPENDS * ROWS_PER_APPEND)
        .filter(|&i| point(i).is_some_and(|(x, y)| w.contains_point(x, y)))
        .collect()
}

fn recipe(v3: bool) {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = table(catalog.clone(), "telemetry", v3);
    let before_ids = ids_of(&t.scan().execute().unwrap().0);
    let files_before = t.data_files().unwrap().len();
    assert_eq!(files_before as i64, PARTITIONS * APPENDS);

    // Step 1 and 2: the columns right before the geometry, metrics set explicitly.
    let (t, added) = t.add_bbox_columns("geom", None).unwrap();
    assert_eq!(added.added, NAMES.map(String::from).to_vec());
    let names = column_names(&t);
    assert_eq!(
        names,
        [
            "id",
            "data",
            "bbox_min_x",
            "bbox_min_y",
            "bbox_max_x",
            "bbox_max_y",
            "geom"
        ]
    );
    let props = t.metadata().properties();
    for n in NAMES {
        assert_eq!(props[&format!("write.metadata.metrics.column.{n}")], "full");
    }
    assert_eq!(props["geoberg.bbox-columns.source"], "geom");
    // A WKB-binary geometry keeps null counts but no byte bounds; a native one keeps its bounds.
    assert_eq!(
        props
            .get("write.metadata.metrics.column.geom")
            .map(String::as_str),
        (!v3).then_some("counts")
    );
    assert!(t.metrics_position_warnings().unwrap().is_empty());
    // Adding again changes nothing.
    let (t, again) = t.add_bbox_columns("geom", None).unwrap();
    assert!(
        again.added.is_empty() && again.properties.is_empty(),
        "{again}"
    );

    // Step 3 and 4: backfill per partition, sorted; files of about a quarter of a partition.
    let bytes: u64 = t
        .data_files()
        .unwrap()
        .iter()
        .map(|f| f.file_size_in_bytes())
        .sum();
    let target = (bytes / (PARTITIONS as u64 * 4)).to_string();
    let t = t
        .set_properties([("write.target-file-size-bytes", target.as_str())])
        .unwrap();
    let window = BBox::new(-20.0, -60.0, 20.0, 60.0);
    let progress = std::sync::Mutex::new(Vec::new());
    let (t, report) = t
        .backfill_bbox_columns("geom")
        .window(window)
        .on_partition(|done, total| progress.lock().unwrap().push((done, total)))
        .execute()
        .unwrap();
    assert_eq!(
        progress.into_inner().unwrap(),
        vec![(0, 3), (1, 3), (2, 3), (3, 3)]
    );
    assert_eq!(report.partitions_total, PARTITIONS as usize);
    assert_eq!(report.partitions_backfilled, PARTITIONS as usize);
    assert_eq!(report.snapshot_ids.len(), PARTITIONS as usize);
    assert_eq!(report.rewritten_data_files_count as usize, files_before);
    assert_eq!(
        report.rewritten_records_count as i64,
        APPENDS * ROWS_PER_APPEND
    );
    // Seed 002's evidence: before, no file has bounds on the bbox columns, so a bbox-range
    // query reads them all; after, a partition's rows are sorted by bbox_min_x across its
    // files, so a window a ninth of the world wide reads a fraction of them.
    assert_eq!(report.files_read_before, files_before, "{report}");
    let files_after = t.data_files().unwrap();
    assert_eq!(report.files_total, files_after.len());
    assert!(files_after.len() as i64 >= PARTITIONS * 3, "{report}");
    assert!(
        report.files_read_after * 2 <= report.files_total,
        "{report}"
    );
    // No row in the window is in a file the query skips (brute force over the generator).
    let query = geoberg_sql::parse_condition(
        "bbox_max_x >= -20 AND bbox_min_x <= 20 AND bbox_max_y >= -60 AND bbox_min_y <= 60",
    )
    .unwrap();
    let read = t.files_matching(&query).unwrap();
    assert_eq!(read.len(), report.files_read_after);
    let (batches, _) = t
        .scan()
        .files(read.iter().map(|f| f.file_path().to_string()))
        .execute()
        .unwrap();
    let in_read: std::collections::BTreeSet<i64> = rows_of(&batches).iter().map(|r| r.0).collect();
    let want = ids_in(&window);
    assert!(!want.is_empty());
    assert!(
        want.iter().all(|i| in_read.contains(i)),
        "a file holding a row in the window was skipped"
    );
    let after = rows(&t);
    assert_filled_from_the_generator(&after);
    let ids: Vec<i64> = after.iter().map(|r| r.0).collect();
    assert_eq!(ids, before_ids, "no row lost or added");
    for f in t.data_files().unwrap() {
        let (batches, _) = t
            .scan()
            .files([f.file_path()])
            .select(["bbox_min_x"])
            .execute()
            .unwrap();
        let xs: Vec<f64> = batches
            .iter()
            .flat_map(|b| b.column(0).as_primitive::<Float64Type>().iter().flatten())
            .collect();
        assert!(
            xs.is_sorted(),
            "{} is not sorted by bbox_min_x",
            f.file_path()
        );
    }

    // A second run finds every partition filled and commits nothing.
    let (t2, rerun) = t.backfill_bbox_columns("geom").execute().unwrap();
    assert_eq!(rerun.partitions_backfilled, 0);
    assert_eq!(rerun.partitions_skipped, PARTITIONS as usize);
    assert_eq!(
        t2.metadata().current_snapshot_id(),
        t.metadata().current_snapshot_id()
    );

    // Step 5: appends derive the columns; a backfill leaves their files alone.
    let base = APPENDS * ROWS_PER_APPEND;
    let (t, _) = t.append(&[batch(base..base + 90, v3)]).unwrap();
    let (t, rerun) = t.backfill_bbox_columns("geom").execute().unwrap();
    assert_eq!(rerun.partitions_backfilled, 0, "{rerun}");
    let appended: Vec<Row> = rows(&t).into_iter().filter(|r| r.0 >= base).collect();
    assert_eq!(appended.len(), 90);
    for (id, _, bbox) in &appended {
        let want = point(*id).map_or([None; 4], |(x, y)| [Some(x), Some(y), Some(x), Some(y)]);
        assert_eq!(*bbox, want);
    }
}

#[test]
fn seed_002_recipe_on_a_v3_geometry_table() {
    recipe(true);
}

#[test]
fn seed_002_recipe_on_a_v2_wkb_table() {
    recipe(false);
}

/// The add step of the recipe, with files of about a quarter of a partition.
fn added(t: Table) -> Table {
    let (t, _) = t.add_bbox_columns("geom", None).unwrap();
    let bytes: u64 = t
        .data_files()
        .unwrap()
        .iter()
        .map(|f| f.file_size_in_bytes())
        .sum();
    let target = (bytes / (PARTITIONS as u64 * 4)).to_string();
    t.set_properties([("write.target-file-size-bytes", target.as_str())])
        .unwrap()
}

#[test]
fn rows_keep_their_row_ids_through_the_backfill() {
    let dir = tempfile::tempdir().unwrap();
    let t = added(table(sqlite_catalog(dir.path()), "t", true));
    let lineage = |t: &Table| -> Vec<(i64, i64)> {
        let (batches, _) = t.scan().select(["id", "_row_id"]).execute().unwrap();
        let mut out: Vec<(i64, i64)> = batches
            .iter()
            .flat_map(|b| {
                let id = b.column(0).as_primitive::<Int64Type>().clone();
                let row_id = b
                    .column(b.schema().index_of("_row_id").unwrap())
                    .as_primitive::<Int64Type>()
                    .clone();
                (0..b.num_rows()).map(move |r| (id.value(r), row_id.value(r)))
            })
            .collect();
        out.sort();
        out
    };
    let before = lineage(&t);
    let (after, _) = t.backfill_bbox_columns("geom").execute().unwrap();
    assert_eq!(lineage(&after), before);
}

#[test]
fn a_backfill_killed_at_any_write_and_re_run_gives_the_uninterrupted_table() {
    let dir = tempfile::tempdir().unwrap();
    let reference = added(table(sqlite_catalog(dir.path()), "reference", true));
    let (reference, _) = reference.backfill_bbox_columns("geom").execute().unwrap();
    let want = rows(&reference);
    assert_filled_from_the_generator(&want);
    let want_files = files_by_partition(&reference);

    let mut filled_when_killed = std::collections::BTreeSet::new();
    for k in 1.. {
        let dir = tempfile::tempdir().unwrap();
        let catalog = sqlite_catalog(dir.path());
        let t = added(table(catalog.clone(), "t", true));
        let faulty = Arc::new(FaultyCatalog::new(catalog.clone()));
        let killed = Table::load(faulty.clone(), t.ident()).unwrap();
        faulty.inject(Fault::Write(k));
        let result = killed.backfill_bbox_columns("geom").execute();
        if !faulty.fired() {
            // Past the last write: the run was never interrupted.
            assert!(
                k > 3,
                "a backfill of three partitions writes more than {k} files"
            );
            result.unwrap();
            break;
        }
        let e = result.expect_err("the injected write failure surfaces");
        assert!(e.to_string().contains("injected"), "{e}");

        // The table reads as before the kill: every row there, no file left over.
        let t = Table::load(catalog.clone(), t.ident()).unwrap();
        assert_eq!(
            ids_of(&t.scan().execute().unwrap().0),
            (0..APPENDS * ROWS_PER_APPEND).collect::<Vec<_>>()
        );
        let far = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
        assert_eq!(
            t.orphan_files(far).unwrap(),
            Vec::<String>::new(),
            "kill {k}"
        );

        // The re-run fills the rest and gives the uninterrupted table.
        let (done, report) = t.backfill_bbox_columns("geom").execute().unwrap();
        filled_when_killed.insert(report.partitions_skipped);
        assert_eq!(
            report.partitions_skipped + report.partitions_backfilled,
            PARTITIONS as usize
        );
        assert_eq!(rows(&done), want, "kill {k}");
        assert_eq!(files_by_partition(&done), want_files, "kill {k}");
    }
    // Kills fell before the first partition's commit, between commits, and before the last.
    assert_eq!(
        filled_when_killed,
        (0..PARTITIONS as usize).collect(),
        "partitions already filled when a kill came"
    );
}

#[test]
fn a_compaction_of_a_partly_backfilled_table_fills_the_rest_and_prunes() {
    let dir = tempfile::tempdir().unwrap();
    let t = added(table(sqlite_catalog(dir.path()), "t", true));
    // Seed 002: backfill the closed partitions only; new rows keep arriving in the others.
    let (t, report) = t
        .backfill_bbox_columns("geom")
        .where_sql("data = 'd0'")
        .execute()
        .unwrap();
    assert_eq!(
        (report.partitions_total, report.partitions_backfilled),
        (1, 1)
    );
    let base = APPENDS * ROWS_PER_APPEND;
    let (t, _) = t.append(&[batch(base..base + 30, true)]).unwrap();
    // Seed 001's daily compaction over partitions holding files from before and after the
    // columns were added: every output file has the current columns, derived where missing.
    let t = t
        .set_properties([("write.sort-order", "bbox_min_x, bbox_min_y")])
        .unwrap();
    let (t, report) = t
        .rewrite()
        .sort_order("bbox_min_x, bbox_min_y".parse().unwrap())
        .option("rewrite-all", "true")
        .option("target-file-size-bytes", "8192")
        .execute()
        .unwrap();
    assert!(report.added_data_files_count > 3, "{report}");
    let all = rows(&t);
    assert_eq!(all.len() as i64, base + 30);
    for (id, _, bbox) in &all {
        let want = point(*id).map_or([None; 4], |(x, y)| [Some(x), Some(y), Some(x), Some(y)]);
        assert_eq!(*bbox, want, "row {id}");
    }
    // The outputs know they hold no NaN, so a bbox-range query prunes on them.
    let query = geoberg_sql::parse_condition("bbox_max_x >= -20 AND bbox_min_x <= 20").unwrap();
    let read = t.files_matching(&query).unwrap().len();
    let files = t.data_files().unwrap();
    let ids: Vec<i32> = NAMES
        .iter()
        .map(|n| t.metadata().current_schema().field_by_name(n).unwrap().id)
        .collect();
    for f in &files {
        for id in &ids {
            assert_eq!(f.nan_value_counts().get(id), Some(&0), "{}", f.file_path());
        }
    }
    assert!(read < files.len(), "{read} of {} files read", files.len());
    let (_, rerun) = t.backfill_bbox_columns("geom").execute().unwrap();
    assert_eq!(
        rerun.partitions_backfilled, 0,
        "the compaction filled every partition"
    );
}

#[test]
fn the_seed_steps_by_hand_then_the_backfill_fill_the_columns_appends_left_null() {
    use geoberg_table::ColumnPosition;
    let dir = tempfile::tempdir().unwrap();
    let t = table(sqlite_catalog(dir.path()), "t", true);
    // Seed 002's ALTER TABLE ... ADD COLUMN ... AFTER, by hand: appends leave them null until
    // the table derives them.
    let mut update = t.update_schema();
    let mut after = "data".to_string();
    for n in NAMES {
        update = update.add_column(
            Column::new(n, DataType::Double),
            ColumnPosition::After(after.clone()),
        );
        after = n.to_string();
    }
    let t = update.commit().unwrap();
    let base = APPENDS * ROWS_PER_APPEND;
    let (t, _) = t.append(&[batch(base..base + 60, true)]).unwrap();
    assert!(rows(&t).iter().all(|r| r.2 == [None; 4]));
    let (t, added) = t.add_bbox_columns("geom", None).unwrap();
    assert!(added.added.is_empty(), "the columns are kept: {added}");
    let (t, report) = t.backfill_bbox_columns("geom").execute().unwrap();
    assert_eq!(
        report.rewritten_data_files_count as i64,
        PARTITIONS * (APPENDS + 1),
        "files storing the columns all null count as unfilled: {report}"
    );
    let all = rows(&t);
    assert_eq!(all.len() as i64, base + 60);
    for (id, _, bbox) in &all {
        let want = point(*id).map_or([None; 4], |(x, y)| [Some(x), Some(y), Some(x), Some(y)]);
        assert_eq!(*bbox, want, "row {id}");
    }
}
