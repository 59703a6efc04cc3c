//! Seed 002's recipe ("Materializing Bbox Columns for Pushdown") as one procedure:
//! `CALL ... add_bbox_columns` on a partitioned table written without bbox columns adds them
//! before the geometry, backfills the partitions the `where` selects (sorted), and returns the
//! files a bbox-range window query reads before and after. The oracle for every count is the
//! rows themselves: the points the test generated, grouped by the `_file` they are stored in.

use std::collections::{BTreeMap, HashMap};

use arrow::array::{Array, Int64Array, StringArray, UInt64Array};
use arrow_array::RecordBatch;
use arrow_schema::DataType as ArrowType;
use geoberg_table::{CreateTable, PartitionField, TableIdent};

use crate::common::{
    Row, Warehouse, append_files, arrivals, plan_text, points_columns, scalar_i64, scan_metric,
};

/// The one result row of the procedure, by column name (`None` for a null count).
struct Outcome {
    added_columns: String,
    counts: HashMap<String, Option<u64>>,
}

impl Outcome {
    fn of(batches: &[RecordBatch]) -> Outcome {
        assert_eq!(batches.len(), 1);
        let b = &batches[0];
        assert_eq!(b.num_rows(), 1);
        let added = b.column_by_name("added_columns").expect("added_columns");
        let added_columns = added
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap()
            .value(0)
            .to_string();
        let counts = b
            .schema()
            .fields()
            .iter()
            .zip(b.columns())
            .filter(|(f, _)| f.name() != "added_columns")
            .map(|(f, c)| {
                let c = c.as_any().downcast_ref::<UInt64Array>().unwrap();
                (f.name().clone(), (!c.is_null(0)).then(|| c.value(0)))
            })
            .collect();
        Outcome {
            added_columns,
            counts,
        }
    }

    fn count(&self, name: &str) -> u64 {
        self.counts
            .get(name)
            .unwrap_or_else(|| panic!("no column {name}"))
            .unwrap_or_else(|| panic!("{name} is null"))
    }
}

/// `(first column as i64, second column as string)` of every row.
fn pairs(batches: &[RecordBatch]) -> Vec<(i64, String)> {
    let mut out = Vec::new();
    for b in batches {
        let a = arrow::compute::cast(b.column(0), &ArrowType::Int64).unwrap();
        let s = arrow::compute::cast(b.column(1), &ArrowType::Utf8).unwrap();
        let a = a.as_any().downcast_ref::<Int64Array>().unwrap();
        let s = s.as_any().downcast_ref::<StringArray>().unwrap();
        out.extend((0..b.num_rows()).map(|i| (a.value(i), s.value(i).to_string())));
    }
    out
}

/// The extent of each data file's points, from which file each row is stored in (`_file`) and
/// the points the test generated; `None` for a file whose bbox columns are null (it cannot be
/// pruned on them).
fn file_extents(
    s: &geoberg_datafusion::BlockingSession,
    points: &HashMap<i64, (f64, f64)>,
) -> BTreeMap<String, Option<[f64; 4]>> {
    let rows = s
        .sql("SELECT id, _file, bbox_min_x IS NULL AS unfilled FROM db.telemetry")
        .unwrap();
    let unfilled: Vec<bool> = rows
        .iter()
        .flat_map(|b| {
            let c = b
                .column(2)
                .as_any()
                .downcast_ref::<arrow::array::BooleanArray>();
            c.unwrap().iter().map(|v| v.unwrap()).collect::<Vec<_>>()
        })
        .collect();
    let mut out: BTreeMap<String, Option<[f64; 4]>> = BTreeMap::new();
    for ((id, file), unfilled) in pairs(&rows).into_iter().zip(unfilled) {
        let (x, y) = points[&id];
        let e = out.entry(file).or_insert(Some([x, y, x, y]));
        match (e.as_mut(), unfilled) {
            (_, true) => *e = None,
            (Some(e), false) => *e = [e[0].min(x), e[1].min(y), e[2].max(x), e[3].max(y)],
            (None, false) => panic!("a file with filled and unfilled rows"),
        }
    }
    out
}

/// Files an engine without geometry support reads for the window's bbox-range query: those
/// whose extent meets the window, and every file it has no bounds for.
fn files_meeting(extents: &BTreeMap<String, Option<[f64; 4]>>, w: [f64; 4]) -> usize {
    extents
        .values()
        .filter(|e| e.is_none_or(|e| e[2] >= w[0] && e[0] <= w[2] && e[3] >= w[1] && e[1] <= w[3]))
        .count()
}

#[test]
fn seed_002_add_bbox_columns_backfills_partitions_and_counts_files_read() {
    let w = Warehouse::new();
    w.catalog.create_namespace("db").unwrap();
    let table = CreateTable::new(points_columns(4326))
        .partition_by(PartitionField::identity("state"))
        .create(
            w.catalog.clone(),
            &TableIdent::new("db", "telemetry").unwrap(),
        )
        .unwrap();
    let files = arrivals(0x9e37_79b9_7f4a_7c15, 8, 400);
    let table = append_files(table, &files, 4326);
    let rows: Vec<&Row> = files.iter().flatten().collect();
    let points: HashMap<i64, (f64, f64)> = rows.iter().map(|r| (r.id, r.point.unwrap())).collect();
    let ca = rows
        .iter()
        .filter(|r| r.state.as_deref() == Some("CA"))
        .count();
    let s = w.session();
    assert_eq!(
        table.data_files().unwrap().len(),
        16,
        "8 appends x 2 partitions"
    );
    // Files small enough that the backfill cuts each partition into several sorted files.
    let bytes: u64 = table
        .data_files()
        .unwrap()
        .iter()
        .map(|f| f.file_size_in_bytes())
        .sum();
    s.sql(&format!(
        "ALTER TABLE db.telemetry SET TBLPROPERTIES ('write.target-file-size-bytes' = '{}')",
        bytes / 8
    ))
    .unwrap();

    // Backfill the closed partition (CA) only; NY is "still being written".
    let window = [-100.0, 30.0, -94.0, 34.0];
    let call = format!(
        "CALL geoberg.system.add_bbox_columns(table => 'db.telemetry', column => 'geom', \
         where => \"state = 'CA'\", window => array({}, {}, {}, {}))",
        window[0], window[1], window[2], window[3]
    );
    let first = Outcome::of(&s.sql(&call).unwrap());
    assert_eq!(
        first.added_columns,
        "bbox_min_x,bbox_min_y,bbox_max_x,bbox_max_y"
    );
    let columns =
        geoberg_datafusion::pretty_format(&s.sql("DESCRIBE db.telemetry").unwrap()).unwrap();
    let at = |c: &str| {
        columns
            .find(&format!("| {c} "))
            .unwrap_or_else(|| panic!("{c}"))
    };
    assert!(
        at("state") < at("bbox_min_x")
            && at("bbox_min_x") < at("bbox_max_y")
            && at("bbox_max_y") < at("geom"),
        "the bbox columns go right before the geometry:\n{columns}"
    );
    assert_eq!(first.count("partitions_backfilled"), 1);
    assert_eq!(first.count("partitions_skipped"), 0);
    assert_eq!(first.count("rewritten_data_files_count"), 8);
    assert_eq!(first.count("rewritten_records_count"), ca as u64);
    let extents = file_extents(&s, &points);
    let added = first.count("added_data_files_count");
    assert_eq!(first.count("files_total"), extents.len() as u64);
    assert_eq!(
        extents.len() as u64,
        8 + added,
        "8 NY files and the new CA files"
    );
    assert!(
        added >= 3,
        "{added} files: the partition is cut into several"
    );
    assert_eq!(
        extents.values().filter(|e| e.is_none()).count(),
        8,
        "NY keeps its unfilled files"
    );
    // Before: no file had bbox bounds, every one is read.
    assert_eq!(first.count("files_read_before"), 16);
    let read_after = files_meeting(&extents, window);
    assert_eq!(first.count("files_read_after"), read_after as u64);
    assert!(
        read_after < 8 + added as usize,
        "sorted on bbox_min_x, the CA files are slabs of longitude: {read_after} read of {extents:#?}"
    );

    // The engine agrees, and the bbox query finds exactly the CA points in the window (NY rows
    // have null bounds, excluded from every range comparison, as seed 002 says).
    let by_bbox = format!(
        "SELECT count(*) FROM db.telemetry WHERE bbox_max_x >= {} AND bbox_min_x <= {} \
         AND bbox_max_y >= {} AND bbox_min_y <= {}",
        window[0], window[2], window[1], window[3]
    );
    let in_window = |r: &&&Row| {
        let (x, y) = r.point.unwrap();
        (window[0]..=window[2]).contains(&x) && (window[1]..=window[3]).contains(&y)
    };
    let expected_ca = rows
        .iter()
        .filter(|r| r.state.as_deref() == Some("CA"))
        .filter(in_window)
        .count();
    assert!(expected_ca > 0, "the window must hold points");
    assert_eq!(scalar_i64(&s.sql(&by_bbox).unwrap()), expected_ca as i64);
    let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {by_bbox}")).unwrap());
    assert_eq!(scan_metric(&plan, "files_read"), read_after as u64);
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM db.telemetry").unwrap()),
        rows.len() as i64,
        "no row lost"
    );
    let bad = "SELECT count(*) FROM db.telemetry WHERE state = 'CA' AND (bbox_min_x <> ST_X(geom) \
               OR bbox_max_x <> ST_X(geom) OR bbox_min_y <> ST_Y(geom) OR bbox_max_y <> ST_Y(geom) \
               OR bbox_min_x IS NULL)";
    assert_eq!(
        scalar_i64(&s.sql(bad).unwrap()),
        0,
        "every CA box is its point"
    );

    // Sorted while rewriting: along `_pos`, each CA file's rows climb in bbox_min_x.
    let ordered = s
        .sql("SELECT id, _file FROM db.telemetry WHERE state = 'CA' ORDER BY _file, _pos")
        .unwrap();
    let mut last: Option<(String, f64)> = None;
    for (id, file) in pairs(&ordered) {
        let x = points[&id].0;
        if let Some((f, prev)) = &last
            && *f == file
        {
            assert!(*prev <= x, "{file}: {prev} before {x}");
        }
        last = Some((file, x));
    }

    // Re-run: the columns exist and every selected partition is filled, so nothing is done.
    let again = Outcome::of(&s.sql(&call).unwrap());
    assert_eq!(again.added_columns, "");
    assert_eq!(again.count("partitions_backfilled"), 0);
    assert_eq!(again.count("partitions_skipped"), 1);
    assert_eq!(again.count("rewritten_data_files_count"), 0);
    assert_eq!(again.count("files_read_before"), read_after as u64);
    assert_eq!(again.count("files_read_after"), read_after as u64);

    // Without `where`: NY now; then everything is skipped.
    let all = "CALL geoberg.system.add_bbox_columns('db.telemetry', 'geom')";
    let ny = Outcome::of(&s.sql(all).unwrap());
    assert_eq!(
        (
            ny.count("partitions_backfilled"),
            ny.count("partitions_skipped")
        ),
        (1, 1)
    );
    assert_eq!(ny.count("rewritten_data_files_count"), 8);
    assert_eq!(
        ny.count("rewritten_records_count"),
        (rows.len() - ca) as u64
    );
    let extents = file_extents(&s, &points);
    assert!(
        extents.values().all(Option::is_some),
        "every file is filled"
    );
    assert_eq!(ny.count("files_total"), extents.len() as u64);
    let done = Outcome::of(&s.sql(all).unwrap());
    assert_eq!(done.count("partitions_backfilled"), 0);
    assert_eq!(done.count("partitions_skipped"), 2, "all partitions");
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM db.telemetry").unwrap()),
        rows.len() as i64
    );
}

/// `backfill => false` only adds the columns (named by `names`) and their properties: the
/// counts are null, the files written before keep null bbox columns, and a new row gets its box.
#[test]
fn add_bbox_columns_without_backfill_adds_named_columns_only() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE db.u (id bigint, geom geometry(4326))")
        .unwrap();
    s.sql("INSERT INTO db.u VALUES (1, ST_SetSRID(ST_Point(1, 2), 4326))")
        .unwrap();
    let out = Outcome::of(
        &s.sql(
            "CALL geoberg.system.add_bbox_columns(table => 'db.u', column => 'geom', \
             names => array('x0', 'y0', 'x1', 'y1'), backfill => false)",
        )
        .unwrap(),
    );
    assert_eq!(out.added_columns, "x0,y0,x1,y1");
    assert_eq!(out.counts.len(), 8);
    assert!(out.counts.values().all(Option::is_none), "{:?}", out.counts);
    let props = geoberg_datafusion::pretty_format(
        &s.sql("SHOW TBLPROPERTIES db.u ('write.metadata.metrics.column.x0')")
            .unwrap(),
    )
    .unwrap();
    assert!(props.contains("full"), "{props}");
    s.sql("INSERT INTO db.u (id, geom) VALUES (2, ST_SetSRID(ST_Point(3, 4), 4326))")
        .unwrap();
    let count = |sql: &str| scalar_i64(&s.sql(sql).unwrap());
    assert_eq!(
        count("SELECT count(*) FROM db.u WHERE x0 = 3 AND y0 = 4 AND x1 = 3 AND y1 = 4"),
        1
    );
    assert_eq!(
        count("SELECT count(*) FROM db.u WHERE x0 IS NULL AND id = 1"),
        1
    );
    // A bad argument names its fix.
    let err = s
        .sql("CALL geoberg.system.add_bbox_columns(table => 'db.u', column => 'geom', backfill => 1)")
        .unwrap_err()
        .to_string();
    assert!(err.contains("true or false"), "{err}");
}
