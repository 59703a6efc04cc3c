//! SedonaDB's GEOS-backed functions in a geoberg session, against answers worked out by hand
//! (areas of squares and their overlaps, the hull of known points, a buffer's area against
//! π r²), and seed 004's buffered value inserted into a `geometry(4326)` column.

use arrow_array::{Array, Float64Array, StringArray};
use arrow_schema::DataType as ArrowType;

use crate::common::{Warehouse, scalar_i64};

fn floats(batches: &[arrow_array::RecordBatch]) -> Vec<f64> {
    batches
        .iter()
        .flat_map(|b| {
            let c = arrow::compute::cast(b.column(0), &ArrowType::Float64).unwrap();
            let c = c.as_any().downcast_ref::<Float64Array>().unwrap().clone();
            (0..c.len()).map(move |i| c.value(i))
        })
        .collect()
}

fn text(batches: &[arrow_array::RecordBatch]) -> String {
    let b = &batches[0];
    let c = arrow::compute::cast(b.column(0), &ArrowType::Utf8).unwrap();
    c.as_any()
        .downcast_ref::<StringArray>()
        .unwrap()
        .value(0)
        .to_string()
}

/// The area of a regular 32-gon inscribed in a circle of radius `r`: GEOS's buffer of a point
/// (8 segments a quadrant).
fn polygon_32(r: f64) -> f64 {
    16.0 * r * r * (std::f64::consts::TAU / 32.0).sin()
}

#[test]
fn geos_functions_answer_what_the_geometry_says() {
    let w = Warehouse::new();
    let s = w.session();
    let sq = |x: f64, y: f64, a: f64| {
        format!(
            "ST_GeomFromText('POLYGON (({x} {y}, {} {y}, {} {}, {x} {}, {x} {y}))')",
            x + a,
            x + a,
            y + a,
            y + a
        )
    };
    let (a, b) = (sq(0.0, 0.0, 2.0), sq(1.0, 1.0, 2.0));
    for (sql, expected) in [
        // Two 2×2 squares overlapping in a 1×1 square.
        (format!("SELECT ST_Area(ST_Intersection({a}, {b}))"), 1.0),
        (format!("SELECT ST_Area(ST_Union({a}, {b}))"), 7.0),
        (format!("SELECT ST_Area(ST_Difference({a}, {b}))"), 3.0),
        (
            "SELECT ST_Area(ST_ConvexHull(ST_GeomFromText('MULTIPOINT ((0 0), (4 0), (0 3), (1 1))')))"
                .to_string(),
            6.0,
        ),
    ] {
        let got = floats(&s.sql(&sql).unwrap())[0];
        assert!((got - expected).abs() < 1e-9, "{sql}: {got}");
    }
    // A buffer of radius 1 around a point: GEOS's regular 32-gon (8 segments a quadrant)
    // inscribed in the unit circle.
    let area = floats(
        &s.sql("SELECT ST_Area(ST_Buffer(ST_Point(3, 4), 1.0))")
            .unwrap(),
    )[0];
    assert!((area - polygon_32(1.0)).abs() < 1e-9, "{area}");
    let hull = text(
        &s.sql("SELECT ST_AsText(ST_ConvexHull(ST_GeomFromText('MULTIPOINT ((0 0), (4 0), (0 3), (1 1))')))")
            .unwrap(),
    );
    assert!(hull.starts_with("POLYGON"), "{hull}");
    assert!(
        !hull.contains("1 1"),
        "an inner point is not on the hull: {hull}"
    );
}

/// Seed 004: `ST_Buffer(geom, 0.001)` of a `geometry(4326)` value keeps the SRID, so the table
/// takes it; aggregates over a column too.
#[test]
fn a_buffered_value_keeps_its_srid_into_a_geometry_4326_column() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE db.points (id bigint, geom geometry(4326))")
        .unwrap();
    s.sql("CREATE TABLE db.areas (id bigint, geom geometry(4326))")
        .unwrap();
    s.sql(
        "INSERT INTO db.points VALUES (1, ST_SetSRID(ST_Point(10, 20), 4326)), \
         (2, ST_SetSRID(ST_Point(10.5, 20), 4326))",
    )
    .unwrap();
    s.sql("INSERT INTO db.areas SELECT id, ST_Buffer(geom, 0.001) FROM db.points")
        .unwrap();
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM db.areas").unwrap()),
        2
    );
    let srid = floats(&s.sql("SELECT ST_SRID(geom) FROM db.areas").unwrap());
    assert_eq!(srid, vec![4326.0, 4326.0]);
    let area = floats(&s.sql("SELECT sum(ST_Area(geom)) FROM db.areas").unwrap())[0];
    let disc = polygon_32(0.001);
    assert!((area - 2.0 * disc).abs() < 1e-6 * disc, "{area}");
    // The aggregate union of both discs, and the hull of the two points.
    let union = floats(
        &s.sql("SELECT ST_Area(ST_Union_Agg(geom)) FROM db.areas")
            .unwrap(),
    )[0];
    assert!(
        (union - area).abs() < 1e-6 * area,
        "disjoint discs: {union} vs {area}"
    );
    let hull = text(
        &s.sql("SELECT ST_AsText(ST_ConvexHull(ST_Collect_Agg(geom))) FROM db.points")
            .unwrap(),
    );
    assert!(
        hull.starts_with("LINESTRING"),
        "the hull of two points is their segment: {hull}"
    );
}
