//! The fast path for points against a constant rectangle answers as SedonaDB's own kernels
//! do: the same rectangle written with a sixth (collinear) vertex is no rectangle to the fast
//! path, so SedonaDB decides every row of that query; both queries must return the same rows,
//! over points on and off the rectangle's edges, lines, polygons, empty points and NULLs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::common::{Warehouse, ids, wkb_point, wkb_polygon};
use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_datafusion::BlockingSession;
use geoberg_table::{Column, CreateTable, DataType, SRID_FIELD_METADATA, TableIdent};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Shape {
    Point(i32, i32),
    Empty,
    Null,
    Line(i32, i32, i32, i32),
    Square(i32, i32, i32),
}

fn wkb(shape: &Shape) -> Option<Vec<u8>> {
    Some(match *shape {
        Shape::Point(x, y) => wkb_point(x as f64, y as f64),
        Shape::Empty => wkb_point(f64::NAN, f64::NAN),
        Shape::Null => return None,
        Shape::Line(a, b, c, d) => {
            let mut out = vec![1u8, 2, 0, 0, 0];
            out.extend(2u32.to_le_bytes());
            for v in [a, b, c, d] {
                out.extend((v as f64).to_le_bytes());
            }
            out
        }
        Shape::Square(x, y, s) => {
            let (x, y, s) = (x as f64, y as f64, s as f64);
            wkb_polygon(&[(x, y), (x + s, y), (x + s, y + s), (x, y + s), (x, y)])
        }
    })
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        6 => (0..10i32, 0..10i32).prop_map(|(x, y)| Shape::Point(x, y)),
        1 => Just(Shape::Empty),
        1 => Just(Shape::Null),
        2 => (0..10i32, 0..10i32, 0..10i32, 0..10i32).prop_map(|(a, b, c, d)| Shape::Line(a, b, c, d)),
        2 => (0..10i32, 0..10i32, 1..4i32).prop_map(|(x, y, s)| Shape::Square(x, y, s)),
    ]
}

fn session() -> &'static (Warehouse, BlockingSession, AtomicUsize) {
    static S: OnceLock<(Warehouse, BlockingSession, AtomicUsize)> = OnceLock::new();
    S.get_or_init(|| {
        let w = Warehouse::new();
        w.catalog.create_namespace("geo").unwrap();
        let s = w.session();
        (w, s, AtomicUsize::new(0))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn the_fast_path_agrees_with_sedonadb(
        shapes in prop::collection::vec(shape(), 1..60),
        (x, y, w, h) in (-1..9i32, -1..9i32, 1..6i32, 1..6i32),
    ) {
        let (warehouse, s, n) = session();
        let name = format!("r{}", n.fetch_add(1, Ordering::Relaxed));
        let table = CreateTable::new([
            Column::new("id", DataType::Long).required(),
            Column::new("geom", DataType::geometry(4326)),
        ])
        .create(Arc::clone(&warehouse.catalog), &TableIdent::new("geo", &name).unwrap())
        .unwrap();
        let srid = HashMap::from([(SRID_FIELD_METADATA.to_string(), "4326".to_string())]);
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("geom", ArrowType::Binary, true).with_metadata(srid),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from_iter_values(0..shapes.len() as i64)),
                Arc::new(BinaryArray::from_iter(shapes.iter().map(wkb))),
            ],
        )
        .unwrap();
        table.append(&[batch]).unwrap();
        let (x2, y2) = (x + w, y + h);
        let rect = format!("ST_GeomFromText('POLYGON (({x} {y}, {x2} {y}, {x2} {y2}, {x} {y2}, {x} {y}))')");
        // The same shape with a collinear vertex in its first edge.
        let xm = x as f64 + w as f64 / 2.0;
        let six = format!(
            "ST_GeomFromText('POLYGON (({x} {y}, {xm} {y}, {x2} {y}, {x2} {y2}, {x} {y2}, {x} {y}))')"
        );
        for (template, rectangle_first) in [
            ("ST_Intersects(geom, {r})", false),
            ("ST_Intersects({r}, geom)", true),
            ("ST_Contains({r}, geom)", true),
            ("ST_Within(geom, {r})", false),
            ("ST_Covers({r}, geom)", true),
            ("ST_CoveredBy(geom, {r})", false),
        ] {
            let _ = rectangle_first;
            let fast = template.replace("{r}", &rect);
            let slow = template.replace("{r}", &six);
            let got = ids(&s.sql(&format!("SELECT id FROM geo.{name} WHERE {fast}")).unwrap());
            let want = ids(&s.sql(&format!("SELECT id FROM geo.{name} WHERE {slow}")).unwrap());
            prop_assert_eq!(got, want, "{}", fast);
        }
    }
}
