//! A spatial join of two geoberg tables returns the rows a brute-force join returns.

use std::collections::HashMap;
use std::sync::Arc;

use crate::common::{Row, Warehouse, append_files, create_points, pairs, plan_text, wkb_polygon};
use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_table::{Column, CreateTable, DataType, SRID_FIELD_METADATA, TableIdent};

/// Zones: axis-aligned rectangles `(id, [min_x, min_y, max_x, max_y])`.
fn zones() -> Vec<(i64, [f64; 4])> {
    let mut out = Vec::new();
    let mut id = 0;
    for i in 0..5 {
        for j in 0..4 {
            id += 1;
            let (x, y) = (i as f64 * 4.0 + (j % 2) as f64, j as f64 * 5.0);
            out.push((id, [x, y, x + 3.0 + j as f64, y + 4.0]));
        }
    }
    out
}

fn make_tables(w: &Warehouse) -> (Vec<Row>, Vec<(i64, [f64; 4])>) {
    let points = create_points(w, "points", 4326, 16);
    let rows: Vec<Row> = (0..400)
        .map(|i| Row {
            id: i,
            n: (i % 7) as i32,
            x: 0.0,
            state: None,
            // A grid that puts points on zone edges and corners too.
            point: (i % 37 != 0).then_some(((i % 20) as f64, (i / 20) as f64)),
        })
        .collect();
    let files: Vec<Vec<Row>> = rows.chunks(100).map(|c| c.to_vec()).collect();
    append_files(points, &files, 4326);

    let zones = zones();
    let table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(
        Arc::clone(&w.catalog),
        &TableIdent::new("geo", "zones").unwrap(),
    )
    .unwrap();
    let srid = HashMap::from([(SRID_FIELD_METADATA.to_string(), "4326".to_string())]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("geom", ArrowType::Binary, true).with_metadata(srid),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(zones.iter().map(|z| z.0))),
            Arc::new(BinaryArray::from_iter_values(zones.iter().map(|(_, b)| {
                wkb_polygon(&[
                    (b[0], b[1]),
                    (b[2], b[1]),
                    (b[2], b[3]),
                    (b[0], b[3]),
                    (b[0], b[1]),
                ])
            }))),
        ],
    )
    .unwrap();
    table.append(&[batch]).unwrap();
    (rows, zones)
}

#[test]
fn points_in_polygons_join_matches_brute_force() {
    let w = Warehouse::new();
    let (rows, zones) = make_tables(&w);
    let s = w.session();
    let intersects = "SELECT p.id, z.id FROM geo.points p JOIN geo.zones z \
                      ON ST_Intersects(p.geom, z.geom)";
    let mut expected = Vec::new();
    let mut strictly_inside = Vec::new();
    for r in &rows {
        let Some((x, y)) = r.point else { continue };
        for (zid, b) in &zones {
            if b[0] <= x && x <= b[2] && b[1] <= y && y <= b[3] {
                expected.push((r.id, *zid));
            }
            if b[0] < x && x < b[2] && b[1] < y && y < b[3] {
                strictly_inside.push((r.id, *zid));
            }
        }
    }
    expected.sort_unstable();
    strictly_inside.sort_unstable();
    assert!(
        expected.len() > strictly_inside.len(),
        "points on edges are part of the test"
    );
    assert_eq!(pairs(&s.sql(intersects).unwrap()), expected);
    let contains = "SELECT p.id, z.id FROM geo.points p, geo.zones z \
                    WHERE ST_Contains(z.geom, p.geom)";
    assert_eq!(pairs(&s.sql(contains).unwrap()), strictly_inside);

    // SedonaDB's spatial join operator, not a nested loop.
    let plan = plan_text(&s.sql(&format!("EXPLAIN {intersects}")).unwrap());
    assert!(plan.contains("SpatialJoinExec"), "{plan}");
    assert!(!plan.contains("NestedLoopJoinExec"), "{plan}");
}
