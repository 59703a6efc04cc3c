//! End-to-end property: for random tables (points, boxes and diamonds, nulls, several appends,
//! small row groups, partitioned or not, with or without a Hilbert rewrite) and random windows,
//! a window scan returns exactly the rows a brute-force filter of every appended row returns.
//! The oracle works on the generated shapes' own parameters (closed forms for a point, a box
//! and an L1 ball against a rectangle), not on WKB, bounds or any geoberg code.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::*;
use geoberg_table::{BBox, Column, CreateTable, DataType, PartitionField, TableIdent};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy)]
enum Shape {
    Point(f64, f64),
    /// Axis-aligned box (x0, y0, x1, y1).
    Box(f64, f64, f64, f64),
    /// |x - cx| + |y - cy| <= r: a square rotated by 45 degrees.
    Diamond(f64, f64, f64),
    Null,
}

impl Shape {
    fn wkb(self) -> Option<Vec<u8>> {
        let ring = |pts: &[(f64, f64)]| {
            let mut w = vec![1u8, 3, 0, 0, 0, 1, 0, 0, 0];
            w.extend((pts.len() as u32).to_le_bytes());
            for (x, y) in pts {
                w.extend(x.to_le_bytes());
                w.extend(y.to_le_bytes());
            }
            w
        };
        match self {
            Shape::Point(x, y) => Some(wkb_point(x, y)),
            Shape::Box(x0, y0, x1, y1) => {
                Some(ring(&[(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]))
            }
            Shape::Diamond(cx, cy, r) => Some(ring(&[
                (cx + r, cy),
                (cx, cy + r),
                (cx - r, cy),
                (cx, cy - r),
                (cx + r, cy),
            ])),
            Shape::Null => None,
        }
    }

    /// Whether the shape's bounding box meets the closed window.
    fn bbox_meets(self, w: &BBox) -> bool {
        let (x0, y0, x1, y1) = match self {
            Shape::Point(x, y) => (x, y, x, y),
            Shape::Box(x0, y0, x1, y1) => (x0, y0, x1, y1),
            Shape::Diamond(cx, cy, r) => (cx - r, cy - r, cx + r, cy + r),
            Shape::Null => return false,
        };
        x0 <= w.max_x && x1 >= w.min_x && y0 <= w.max_y && y1 >= w.min_y
    }

    /// Whether the shape itself meets the closed window.
    fn meets(self, w: &BBox) -> bool {
        match self {
            Shape::Diamond(cx, cy, r) => {
                // L1 distance from the centre to the rectangle.
                let dx = (w.min_x - cx).max(cx - w.max_x).max(0.0);
                let dy = (w.min_y - cy).max(cy - w.max_y).max(0.0);
                dx + dy <= r
            }
            other => other.bbox_meets(w),
        }
    }
}

fn coordinate() -> impl Strategy<Value = f64> {
    // Quarter-degree steps: plenty of exact ties with window edges.
    (-720i32..=720).prop_map(|q| f64::from(q) / 4.0)
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        4 => (coordinate(), coordinate().prop_map(|y| y / 2.0)).prop_map(|(x, y)| Shape::Point(x, y)),
        2 => (coordinate(), coordinate().prop_map(|y| y / 2.0), 0..40i32, 0..40i32)
            .prop_map(|(x, y, w, h)| (x, y, f64::from(w) / 4.0, f64::from(h) / 4.0))
            .prop_map(|(x, y, w, h)| Shape::Box(x, y, (x + w).min(180.0), (y + h).min(90.0))),
        2 => (-170.0..170.0f64, -80.0..80.0f64, 0.25..8.0f64)
            .prop_map(|(x, y, r)| Shape::Diamond(x, y, r)),
        1 => Just(Shape::Null),
    ]
}

fn window() -> impl Strategy<Value = BBox> {
    // Quarter-degree sizes too, so that window edges often touch shape edges exactly.
    let size = |max: i32| (0..=max * 4).prop_map(|q| f64::from(q) / 4.0);
    (
        coordinate(),
        coordinate().prop_map(|y| y / 2.0),
        size(120),
        size(60),
    )
        .prop_map(|(x, y, w, h)| BBox::new(x, y, (x + w).min(180.0), (y + h).min(90.0)))
}

#[derive(Debug, Clone)]
struct Case {
    appends: Vec<Vec<Shape>>,
    row_group_rows: usize,
    partitioned: bool,
    rewrite: Option<u8>,
    windows: Vec<BBox>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(prop::collection::vec(shape(), 0..120), 1..4),
        prop::sample::select(vec![7usize, 32, 1 << 20]),
        any::<bool>(),
        prop::option::of(prop::sample::select(vec![2u8, 8, 16])),
        prop::collection::vec(window(), 1..6),
    )
        .prop_map(
            |(appends, row_group_rows, partitioned, rewrite, windows)| Case {
                appends,
                row_group_rows,
                partitioned,
                rewrite,
                windows,
            },
        )
}

fn batch(first_id: i64, shapes: &[Shape]) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("data", ArrowType::Utf8, true),
        Field::new("geom", ArrowType::Binary, true)
            .with_metadata(HashMap::from([("srid".to_string(), "4326".to_string())])),
    ]);
    let ids = first_id..first_id + shapes.len() as i64;
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from_iter_values(ids.clone())),
            Arc::new(StringArray::from_iter_values(
                ids.map(|i| format!("p{}", i % 3)),
            )),
            Arc::new(BinaryArray::from_iter(shapes.iter().map(|s| s.wkb()))),
        ],
    )
    .unwrap()
}

fn run(case: &Case) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let mut create = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .property(
        geoberg_table::ROW_GROUP_ROWS_PROPERTY,
        case.row_group_rows.to_string(),
    );
    if case.partitioned {
        create = create.partition_by(PartitionField::identity("data"));
    }
    let mut table = create
        .create(catalog, &TableIdent::new("test_db", "t").unwrap())
        .unwrap();
    let mut all: Vec<(i64, Shape)> = Vec::new();
    for shapes in &case.appends {
        let first = all.len() as i64;
        all.extend(
            shapes
                .iter()
                .enumerate()
                .map(|(i, s)| (first + i as i64, *s)),
        );
        if !shapes.is_empty() {
            table = table.append(&[batch(first, shapes)]).unwrap().0;
        }
    }
    if let Some(precision) = case.rewrite {
        table = table
            .rewrite()
            .hilbert("geom", precision)
            .option("target-file-count", "4")
            .execute()
            .unwrap()
            .0;
    }
    let (everything, _) = table.scan().execute().unwrap();
    prop_assert_eq!(
        ids_of(&everything),
        all.iter().map(|(id, _)| *id).collect::<Vec<_>>()
    );
    for w in &case.windows {
        for exact in [false, true] {
            let (batches, explain) = table
                .scan()
                .with_window("geom", *w)
                .exact(exact)
                .execute()
                .unwrap();
            let got: BTreeSet<i64> = ids_of(&batches).into_iter().collect();
            let want: BTreeSet<i64> = all
                .iter()
                .filter(|(_, s)| if exact { s.meets(w) } else { s.bbox_meets(w) })
                .map(|(id, _)| *id)
                .collect();
            prop_assert_eq!(
                &got,
                &want,
                "window {:?} exact={} explain:\n{}",
                w,
                exact,
                explain
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24),
        ..ProptestConfig::default()
    })]

    #[test]
    fn window_scans_return_exactly_the_brute_force_rows(case in case()) {
        run(&case)?;
    }
}
