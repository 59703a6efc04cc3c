//! The functions the reference documents name, under their names: seed 000's S2 partitioning
//! recipe (`array_max(ST_S2CellIds(ST_Centroid(geom), 4))`), and seed 003's list of Sedona
//! functions (transformations, predicates, aggregates, constructors). Oracles: S2's cell ids as
//! s2sphere 0.2.5 (the Python port of S2) computes them, the points the test wrote, areas
//! worked out by hand or by the `geo` crate, and the published geohash of San Francisco.

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, Float64Array, RecordBatch, StringArray};
use arrow_schema::DataType as ArrowType;
use geo::Area;

use crate::common::{Row, Warehouse, append_files, create_points};

/// Cities with their level-4 S2 cell as s2sphere 0.2.5 gives it:
/// `CellId.from_lat_lng(LatLng.from_degrees(lat, lon)).parent(4).id()`, as a signed 64-bit
/// integer (Sedona's `long`); tokens 47b, 809, 6b1, 95b, 601 and b01.
const CITIES: [(f64, f64, i64); 6] = [
    (13.405, 52.52, 5165628772593958912),
    (-122.4194, 37.7749, -9182839640208441344),
    (151.2093, -33.8688, 7714666161685659648),
    (-58.3816, -34.6037, -7660622966157213696),
    (139.6917, 35.6895, 6922032627268452352),
    (0.0, -89.0, -5760103923406864384),
];

fn cities(w: &Warehouse) {
    let table = create_points(w, "cities", 4326, 1000);
    let rows: Vec<Row> = CITIES
        .iter()
        .enumerate()
        .map(|(i, &(x, y, _))| Row {
            id: i as i64,
            n: 0,
            x,
            state: None,
            point: Some((x, y)),
        })
        .collect();
    append_files(table, &[rows], 4326);
}

fn column_f64(batches: &[RecordBatch], column: usize) -> Vec<f64> {
    batches
        .iter()
        .flat_map(|b| {
            let c = arrow::compute::cast(b.column(column), &ArrowType::Float64).unwrap();
            let c = c.as_any().downcast_ref::<Float64Array>().unwrap().clone();
            (0..c.len()).map(move |i| c.value(i)).collect::<Vec<_>>()
        })
        .collect()
}

fn column_i64(batches: &[RecordBatch], column: usize) -> Vec<i64> {
    batches
        .iter()
        .flat_map(|b| {
            let c = arrow::compute::cast(b.column(column), &ArrowType::Int64).unwrap();
            c.as_primitive::<Int64Type>().values().to_vec()
        })
        .collect()
}

fn first_text(batches: &[RecordBatch]) -> String {
    let c = arrow::compute::cast(batches[0].column(0), &ArrowType::Utf8).unwrap();
    c.as_any()
        .downcast_ref::<StringArray>()
        .unwrap()
        .value(0)
        .to_string()
}

fn first_bool(s: &geoberg_datafusion::BlockingSession, sql: &str) -> bool {
    let b = s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    b[0].column(0).as_boolean().value(0)
}

fn first_f64(s: &geoberg_datafusion::BlockingSession, sql: &str) -> f64 {
    column_f64(&s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}")), 0)[0]
}

#[test]
fn seed_000_s2_partition_key_is_s2s_cell() {
    let w = Warehouse::new();
    cities(&w);
    let s = w.session();
    let got = s
        .sql(
            "SELECT id, array_max(ST_S2CellIds(ST_Centroid(geom), 4)) AS s2 \
             FROM geo.cities ORDER BY id",
        )
        .unwrap();
    let expected: Vec<i64> = CITIES.iter().map(|c| c.2).collect();
    assert_eq!(column_i64(&got, 1), expected);

    // A polygon is covered by several cells, each listed once, and the cell of any point
    // inside it is one of them.
    let cover = s
        .sql(
            "SELECT ST_S2CellIds(ST_GeomFromText('POLYGON ((10 50, 16 50, 16 54, 10 54, 10 50))'), 4)",
        )
        .unwrap();
    let list = cover[0].column(0).as_list::<i32>().value(0);
    let cells = list.as_primitive::<Int64Type>().values().to_vec();
    assert!(cells.len() > 1, "{cells:?}");
    let mut unique = cells.clone();
    unique.dedup();
    assert_eq!(unique, cells, "sorted, without repeats");
    assert!(cells.contains(&CITIES[0].2), "Berlin's cell: {cells:?}");

    // Out-of-range levels and projected geometry are refused with the fix.
    let err = s
        .sql("SELECT ST_S2CellIds(ST_Point(1, 2), 31)")
        .unwrap_err()
        .to_string();
    assert!(err.contains("from 0 to 30, got 31"), "{err}");
    let err = s
        .sql("SELECT ST_S2CellIds(ST_SetSRID(ST_Point(1000, 2000), 3857), 4)")
        .unwrap_err()
        .to_string();
    assert!(err.contains("ST_Transform(geom, 'EPSG:4326')"), "{err}");
}

#[test]
fn seed_003_transformations_and_predicates() {
    let w = Warehouse::new();
    let s = w.session();
    let square = |x: f64, y: f64, a: f64| {
        format!(
            "ST_GeomFromText('POLYGON (({x} {y}, {} {y}, {} {}, {x} {}, {x} {y}))')",
            x + a,
            x + a,
            y + a,
            y + a
        )
    };
    let (a, b, c) = (
        square(0.0, 0.0, 2.0),
        square(1.0, 1.0, 2.0),
        square(2.0, 0.0, 2.0),
    );
    let bowtie = "ST_GeomFromText('POLYGON ((0 0, 2 2, 2 0, 0 2, 0 0))')";
    let line = "ST_GeomFromText('LINESTRING (-1 1, 3 1)')";
    assert!(first_bool(&s, &format!("SELECT ST_IsValid({a})")));
    assert!(!first_bool(&s, &format!("SELECT ST_IsValid({bowtie})")));
    assert!(first_bool(&s, &format!("SELECT ST_Crosses({line}, {a})")));
    assert!(first_bool(&s, &format!("SELECT ST_Overlaps({a}, {b})")));
    assert!(!first_bool(&s, &format!("SELECT ST_Overlaps({a}, {c})")));
    assert!(first_bool(&s, &format!("SELECT ST_Touches({a}, {c})")));
    assert!(first_bool(
        &s,
        &format!("SELECT ST_Equals({a}, ST_GeomFromText('POLYGON ((0 0, 0 2, 2 2, 2 0, 0 0))'))")
    ));
    assert!(first_bool(
        &s,
        &format!("SELECT ST_Contains({a}, ST_Point(1, 1))")
    ));
    assert!(first_bool(
        &s,
        &format!("SELECT ST_Within(ST_Point(1, 1), {a})")
    ));
    assert_eq!(first_f64(&s, &format!("SELECT ST_Area({a})")), 4.0);
    assert_eq!(first_f64(&s, &format!("SELECT ST_Length({line})")), 4.0);
    // San Francisco's geohash at 5 characters is 9q8yy.
    let hash = first_text(
        &s.sql("SELECT ST_GeoHash(ST_Point(-122.4194, 37.7749), 5)")
            .unwrap(),
    );
    assert_eq!(hash, "9q8yy");
}

/// A 100-vertex polygon cut into parts of at most 16 vertices: the parts tile it (their
/// areas, by the `geo` crate, add up to its area) and none has more vertices than asked.
/// (DataFusion's `unnest` drops the list items' geometry type, so the rows are WKB that
/// `ST_GeomFromWKB` types again.)
#[test]
fn seed_003_subdivide_tiles_the_polygon() {
    let w = Warehouse::new();
    let s = w.session();
    let ring: Vec<(f64, f64)> = (0..=100)
        .map(|i| {
            let t = std::f64::consts::TAU * (i % 100) as f64 / 100.0;
            // A wavy circle, so cuts meet edges at many angles.
            let r = 10.0 + (5.0 * t).sin();
            (r * t.cos(), r * t.sin())
        })
        .collect();
    let wkt = format!(
        "POLYGON (({}))",
        ring.iter()
            .map(|(x, y)| format!("{x} {y}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let expected = geo::Polygon::new(geo::LineString::from(ring.clone()), vec![]).unsigned_area();
    let parts = s
        .sql(&format!(
            "SELECT ST_NPoints(ST_GeomFromWKB(part)), ST_AsText(ST_GeomFromWKB(part)) FROM \
             (SELECT unnest(ST_SubDivide(ST_GeomFromText('{wkt}'), 16)) AS part)"
        ))
        .unwrap();
    let vertices = column_i64(&parts, 0);
    assert!(vertices.len() > 6, "{} parts", vertices.len());
    assert!(vertices.iter().all(|&v| v <= 16), "{vertices:?}");
    let mut area = 0.0;
    for b in &parts {
        let texts = b.column(1).as_string::<i32>();
        for i in 0..texts.len() {
            let part: wkt::Wkt<f64> = texts.value(i).parse().unwrap();
            let part: geo::Geometry<f64> = part.try_into().unwrap();
            area += part.unsigned_area();
        }
    }
    assert!(
        (area - expected).abs() < 1e-9 * expected,
        "{area} vs {expected}"
    );
    // The list form, null and a limit below five.
    let count = column_i64(
        &s.sql(&format!(
            "SELECT array_length(ST_SubDivide(ST_GeomFromText('{wkt}'), 16))"
        ))
        .unwrap(),
        0,
    )[0];
    assert_eq!(count as usize, vertices.len());
    let err = s
        .sql("SELECT ST_SubDivide(ST_Point(1, 2), 4)")
        .unwrap_err()
        .to_string();
    assert!(err.contains("at least 5 vertices per part"), "{err}");
}

#[test]
fn seed_003_aggregates_under_sedonas_names() {
    let w = Warehouse::new();
    cities(&w);
    let s = w.session();
    let envelope = s
        .sql(
            "SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) FROM \
             (SELECT ST_Envelope_Aggr(geom) AS e FROM geo.cities)",
        )
        .unwrap();
    let xs = CITIES.iter().map(|c| c.0);
    let ys = CITIES.iter().map(|c| c.1);
    let expected = [
        xs.clone().fold(f64::INFINITY, f64::min),
        ys.clone().fold(f64::INFINITY, f64::min),
        xs.fold(f64::NEG_INFINITY, f64::max),
        ys.fold(f64::NEG_INFINITY, f64::max),
    ];
    let got: Vec<f64> = (0..4).map(|i| column_f64(&envelope, i)[0]).collect();
    assert_eq!(got, expected);
    let squares = "(VALUES (ST_GeomFromText('POLYGON ((0 0, 2 0, 2 2, 0 2, 0 0))')), \
                   (ST_GeomFromText('POLYGON ((1 1, 3 1, 3 3, 1 3, 1 1))'))) AS t(g)";
    assert_eq!(
        first_f64(
            &s,
            &format!("SELECT ST_Area(ST_Union_Aggr(g)) FROM {squares}")
        ),
        7.0
    );
    assert_eq!(
        first_f64(
            &s,
            &format!("SELECT ST_Area(ST_Intersection_Aggr(g)) FROM {squares}")
        ),
        1.0
    );
}

#[test]
fn seed_003_constructors_over_json_text_and_geometry_columns() {
    let w = Warehouse::new();
    cities(&w);
    let s = w.session();
    // Seed 003's message shape: coordinates as JSON text inside a struct.
    let point = first_text(
        &s.sql(
            "SELECT ST_AsText(ST_Point(measure.location.lon, measure.location.lat)) FROM \
             (SELECT named_struct('location', named_struct('lon', '13.405', 'lat', '52.52')) \
             AS measure)",
        )
        .unwrap(),
    );
    assert_eq!(point, "POINT(13.405 52.52)");
    let err = s
        .sql("SELECT ST_Point('east', '52.52')")
        .unwrap_err()
        .to_string();
    assert!(err.contains("x coordinate is not a number"), "{err}");
    // ST_GeomFromWKB of a geometry column is the geometry (seeds 001 and 002 wrap their
    // columns in it); of WKB bytes it parses them as before.
    let got = s
        .sql(
            "SELECT ST_XMin(ST_GeomFromWKB(geom)), ST_YMax(ST_GeomFromWKB(ST_AsBinary(geom))) \
             FROM geo.cities ORDER BY id",
        )
        .unwrap();
    assert_eq!(
        column_f64(&got, 0),
        CITIES.iter().map(|c| c.0).collect::<Vec<_>>()
    );
    assert_eq!(
        column_f64(&got, 1),
        CITIES.iter().map(|c| c.1).collect::<Vec<_>>()
    );
}
