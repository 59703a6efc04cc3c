//! Pruning is visible: EXPLAIN shows what the scan skips and why, EXPLAIN ANALYZE has it as
//! metrics of the scan node.

use std::sync::Arc;

use crate::common::{Row, Warehouse, append_files, create_points, ids, plan_text, scan_metric};
use geoberg_table::{Column, CreateTable, DataType, PartitionField, TableIdent};

fn row(id: i64, state: &str, x: f64, y: f64) -> Row {
    Row {
        id,
        n: (id % 10) as i32,
        x: id as f64,
        state: Some(state.to_string()),
        point: Some((x, y)),
    }
}

/// Four files, one per quadrant of [0, 20]², each of 3 row groups (rows 2 by 2).
fn quadrants(w: &Warehouse) {
    let table = create_points(w, "quads", 4326, 2);
    let mut files = Vec::new();
    let mut id = 0;
    for (qx, qy) in [(0.0, 0.0), (10.0, 0.0), (0.0, 10.0), (10.0, 10.0)] {
        let mut rows = Vec::new();
        for k in 0..6 {
            id += 1;
            // Row groups of two rows walk along the diagonal of the quadrant.
            let t = k as f64 * 1.5;
            rows.push(row(id, if qx == 0.0 { "CA" } else { "NY" }, qx + t, qy + t));
        }
        files.push(rows);
    }
    append_files(table, &files, 4326);
}

#[test]
fn explain_analyze_counts_files_row_groups_and_bytes() {
    let w = Warehouse::new();
    quadrants(&w);
    let s = w.session();
    // The window touches only the first quadrant's first row group (points (0,0) and (1.5,1.5)).
    let sql = "SELECT id FROM geo.quads WHERE ST_Intersects(geom, ST_MakeEnvelope(0, 0, 2, 2))";
    assert_eq!(ids(&s.sql(sql).unwrap()), [1, 2]);
    let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {sql}")).unwrap());
    assert_eq!(scan_metric(&plan, "files_total"), 4, "{plan}");
    assert_eq!(scan_metric(&plan, "files_skipped"), 3, "{plan}");
    assert_eq!(scan_metric(&plan, "files_read"), 1, "{plan}");
    assert_eq!(scan_metric(&plan, "row_groups_total"), 3, "{plan}");
    assert_eq!(scan_metric(&plan, "row_groups_skipped"), 2, "{plan}");
    let (total, skipped, read) = (
        scan_metric(&plan, "bytes_total"),
        scan_metric(&plan, "bytes_skipped"),
        scan_metric(&plan, "bytes_read"),
    );
    assert_eq!(total, skipped + read, "{plan}");
    assert!(read > 0 && skipped > read, "{plan}");
    // The reader read only what was planned: two rows came out of the scan.
    assert!(plan.contains("GeobergScanExec"), "{plan}");
    let plain = plan_text(&s.sql(&format!("EXPLAIN {sql}")).unwrap());
    assert!(plain.contains("files=1 of 4 read"), "{plain}");
    assert!(plain.contains("spatial=[geom && [0, 0, 2, 2]]"), "{plain}");
}

#[test]
fn a_window_touching_a_file_box_reads_the_file() {
    let w = Warehouse::new();
    quadrants(&w);
    let s = w.session();
    // The first quadrant's last point is (7.5, 7.5): a window starting there touches it.
    let sql = "SELECT id FROM geo.quads WHERE ST_Intersects(geom, ST_MakeEnvelope(7.5, 7.5, 9, 9))";
    assert_eq!(ids(&s.sql(sql).unwrap()), [6]);
    let sql = "SELECT id FROM geo.quads WHERE ST_DWithin(geom, ST_Point(9.5, 7.5), 2)";
    assert_eq!(ids(&s.sql(sql).unwrap()), [6]);
}

#[test]
fn partition_and_column_filters_skip_files_too() {
    // Seed 000: a table partitioned by state skips on state = 'CA' and on the spatial filter.
    let w = Warehouse::new();
    w.catalog.create_namespace("geo").unwrap();
    let table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("n", DataType::Int),
        Column::new("x", DataType::Double),
        Column::new("state", DataType::String),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .partition_by(PartitionField::identity("state"))
    .create(
        Arc::clone(&w.catalog),
        &TableIdent::new("geo", "parts").unwrap(),
    )
    .unwrap();
    let rows: Vec<Row> = (0..40)
        .map(|i| {
            let state = ["CA", "NY", "TX", "WA"][i % 4];
            row(i as i64, state, (i % 20) as f64, (i / 2) as f64)
        })
        .collect();
    // One append: one file per partition value.
    append_files(table, &[rows], 4326);
    let s = w.session();
    let sql = "SELECT id FROM geo.parts WHERE state = 'CA'";
    let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {sql}")).unwrap());
    assert_eq!(scan_metric(&plan, "files_total"), 4, "{plan}");
    assert_eq!(scan_metric(&plan, "files_read"), 1, "{plan}");
    assert_eq!(ids(&s.sql(sql).unwrap()).len(), 10);
    let sql = "SELECT id FROM geo.parts WHERE state IN ('CA', 'NY') \
               AND ST_Intersects(geom, ST_MakeEnvelope(0, 0, 3, 3))";
    let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {sql}")).unwrap());
    assert_eq!(scan_metric(&plan, "files_read"), 2, "{plan}");
    let sql = "SELECT id FROM geo.parts WHERE id > 100";
    let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {sql}")).unwrap());
    assert_eq!(scan_metric(&plan, "files_read"), 0, "{plan}");
}

#[test]
fn the_reason_is_shown_when_nothing_can_be_skipped() {
    // A geometry column without declared CRS on a format-version 3 table: every file is read.
    let w = Warehouse::new();
    w.catalog.create_namespace("geo").unwrap();
    let table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("n", DataType::Int),
        Column::new("x", DataType::Double),
        Column::new("state", DataType::String),
        Column::new("geom", DataType::LEGACY_GEOMETRY),
    ])
    .allow_undeclared_crs()
    .format_version(3)
    .create(
        Arc::clone(&w.catalog),
        &TableIdent::new("geo", "legacy").unwrap(),
    )
    .unwrap();
    let files = vec![vec![row(1, "CA", 0.0, 0.0)], vec![row(2, "CA", 10.0, 10.0)]];
    append_files(table, &files, 0);
    let s = w.session();
    let sql = "SELECT id FROM geo.legacy WHERE ST_Intersects(geom, ST_MakeEnvelope(0, 0, 1, 1))";
    assert_eq!(ids(&s.sql(sql).unwrap()), [1]);
    let plan = plan_text(&s.sql(&format!("EXPLAIN {sql}")).unwrap());
    assert!(plan.contains("files=2 of 2 read"), "{plan}");
    assert!(plan.contains("no declared CRS on a v3 table"), "{plan}");

    // No filter at all: said too.
    let plan = plan_text(&s.sql("EXPLAIN SELECT id FROM geo.legacy").unwrap());
    assert!(plan.contains("every file is read"), "{plan}");
}
