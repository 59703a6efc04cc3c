//! Property: a window scan of a geography column returns exactly the rows whose value meets the
//! window on the sphere, with and without a spatial index (rewrite keyed on the column).
//!
//! The oracle is brute force with the exact spherical predicate: every appended row is parsed
//! and tested against the window polygon (its corners joined by great-circle edges, built here
//! from the box) with `geoberg_geography::Geography::intersects`, which `geography/oracle`
//! checks against spherely (S2). Nothing of the box code (file bounds, row-group statistics,
//! pruning, the scan's pre-filter) takes part in the oracle, so a bound that misses a value
//! (a bulge, a wrap, a pole) makes a scan lose a row that the oracle keeps.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::{ids_of, sqlite_catalog};
use geoberg_geography::Geography;
use geoberg_table::{BBox, Column, CreateTable, DataType, Table, TableIdent};
use proptest::prelude::*;

fn wkb(kind: u32, coords: &[(f64, f64)]) -> Vec<u8> {
    let mut v = vec![1u8];
    v.extend(kind.to_le_bytes());
    if kind == 3 {
        v.extend(1u32.to_le_bytes());
    }
    if kind != 1 {
        v.extend((coords.len() as u32).to_le_bytes());
    }
    for (x, y) in coords {
        v.extend(x.to_le_bytes());
        v.extend(y.to_le_bytes());
    }
    v
}

fn wrap_lon(x: f64) -> f64 {
    if x > 180.0 {
        x - 360.0
    } else if x < -180.0 {
        x + 360.0
    } else {
        x
    }
}

fn longitude() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -180.0..=180.0f64,
        2 => 170.0..=180.0f64,
        2 => -180.0..=-170.0f64,
        1 => prop::sample::select(vec![180.0, -180.0, 180.000_000_000_000_06, 0.0]),
    ]
}

fn latitude() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -85.0..=85.0f64,
        1 => 80.0..=90.0f64,
        1 => -90.0..=-80.0f64,
        1 => prop::sample::select(vec![90.0, -90.0, 0.0]),
    ]
}

/// Points, lines (steps of up to 60 degrees of longitude: great circles that bulge) and quads.
fn value() -> impl Strategy<Value = Vec<u8>> {
    let steps = prop::collection::vec((-60.0..60.0f64, -25.0..25.0f64), 1..4);
    prop_oneof![
        3 => (longitude(), latitude()).prop_map(|(x, y)| wkb(1, &[(x, y)])),
        3 => (longitude(), latitude(), steps).prop_map(|(x, y, steps)| {
            let mut c = vec![(x, y)];
            for (dx, dy) in steps {
                let (px, py) = *c.last().unwrap();
                c.push((wrap_lon(px + dx), (py + dy).clamp(-90.0, 90.0)));
            }
            wkb(2, &c)
        }),
        2 => (longitude(), -80.0..80.0f64, 0.5..20.0f64, 0.5..9.0f64).prop_map(|(x, y, w, h)| {
            let (x0, x1) = (wrap_lon(x - w), wrap_lon(x + w));
            let (y0, y1) = (y - h, y + h);
            wkb(3, &[(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)])
        }),
    ]
}

/// Boxes narrower than 180 degrees (one polygon), tiny to 100 degrees, wrapping where they pass
/// 180.
fn window() -> impl Strategy<Value = BBox> {
    let width = prop_oneof![1 => 1e-7..1e-3f64, 3 => 0.01..100.0f64];
    let height = prop_oneof![1 => 1e-7..1e-3f64, 3 => 0.01..60.0f64];
    // Rows may sit at 180.00000000000006; windows are snapped to ±180 by the table, so they
    // start at longitudes the oracle's polygon takes as they are.
    let west = prop_oneof![
        4 => -180.0..=180.0f64,
        2 => 170.0..=180.0f64,
        2 => -180.0..=-170.0f64,
        1 => prop::sample::select(vec![180.0, -180.0, 0.0]),
    ];
    (west, -90.0..89.0f64, width, height)
        .prop_map(|(x, y, w, h)| BBox::new(x, y, wrap_lon(x + w), (y + h).min(90.0)))
}

/// The oracle's window: the polygon through the box's corners, great-circle edges.
fn window_polygon(b: &BBox) -> Geography {
    let ring = [
        (b.min_x, b.min_y),
        (b.max_x, b.min_y),
        (b.max_x, b.max_y),
        (b.min_x, b.max_y),
        (b.min_x, b.min_y),
    ];
    Geography::from_wkb(&wkb(3, &ring)).unwrap()
}

fn table(dir: &std::path::Path) -> Table {
    CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geog", DataType::parse("geography(4326)").unwrap()),
    ])
    .property("geoberg.parquet.row-group-rows", "8")
    .create(
        sqlite_catalog(dir),
        &TableIdent::new("test_db", "props").unwrap(),
    )
    .unwrap()
}

fn batch(first: i64, values: &[Vec<u8>]) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("geog", ArrowType::Binary, true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from_iter_values(
                first..first + values.len() as i64,
            )),
            Arc::new(BinaryArray::from_iter_values(values.iter())),
        ],
    )
    .unwrap()
}

fn scan(table: &Table, window: BBox, exact: bool) -> BTreeSet<i64> {
    let (batches, _) = table
        .scan()
        .with_window("geog", window)
        .exact(exact)
        .execute()
        .unwrap();
    ids_of(&batches).into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn window_scans_return_exactly_the_rows_that_meet_the_window(
        values in prop::collection::vec(value(), 20..120),
        windows in prop::collection::vec(window(), 6),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut t = table(dir.path());
        let third = values.len().div_ceil(3);
        for (k, part) in values.chunks(third).enumerate() {
            t = t.append(&[batch((k * third) as i64, part)]).unwrap().0;
        }
        let rows: Vec<Geography> = values.iter().map(|v| Geography::from_wkb(v).unwrap()).collect();
        let (indexed, _) = t
            .rewrite()
            .hilbert("geog", 6)
            .option("target-file-size-bytes", "1500")
            .execute()
            .unwrap();
        for w in &windows {
            let polygon = window_polygon(w);
            let expected: BTreeSet<i64> = rows
                .iter()
                .enumerate()
                .filter(|(_, g)| g.intersects(&polygon))
                .map(|(i, _)| i as i64)
                .collect();
            for (layout, table) in [("appended", &t), ("indexed", &indexed)] {
                let exact = scan(table, *w, true);
                prop_assert_eq!(&exact, &expected, "{} {:?}", layout, w);
                let boxes = scan(table, *w, false);
                prop_assert!(boxes.is_superset(&expected), "{} {:?}: {:?}", layout, w, boxes);
            }
        }
    }
}
