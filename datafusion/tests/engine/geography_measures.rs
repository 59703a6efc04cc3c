//! Measures and conversions of geography through SQL (issue 30): `ST_Area`, `ST_Length`,
//! `ST_Perimeter` and `ST_Distance` are square metres and metres on the sphere, `ST_GeomToGeography`
//! and `ST_GeogToGeometry` change the type, and a planar geometry written into a geography
//! column is refused with the conversion to use.
//!
//! The oracle is closed forms of spherical geometry, independent of the kernels: the octant
//! triangle `(0 0, 90 0, 0 90)` is 1/8 of the sphere (4πR²/8) with three quarter great
//! circles as perimeter (3πR/2); the triangle from the pole to two equator points 10 degrees
//! apart is R²·π/18 (its spherical excess: two right angles and 10 degrees at the pole); a
//! quarter of the equator is πR/2. The planar reading of the same coordinates gives other
//! numbers (the octant is 4050 square degrees), so a kernel that fell back to planar fails.

use std::f64::consts::PI;
use std::sync::OnceLock;

use crate::common::{Warehouse, geography_values, ids, scalar_i64};
use arrow_array::{Array, Float64Array, Int64Array, RecordBatch};
use geoberg_datafusion::BlockingSession;

/// The radius of the kernels' sphere (S2Earth, spherely's `EARTH_RADIUS_METERS`).
const R: f64 = 6_371_010.0;

const OCTANT: &str = "POLYGON ((0 0, 90 0, 0 90, 0 0))";
const POLE_TRIANGLE: &str = "POLYGON ((0 0, 10 0, 0 90, 0 0))";
const QUARTER_EQUATOR: &str = "LINESTRING (0 0, 90 0)";

/// `(id, WKT)`; `None` for NULL.
const ROWS: [(i64, Option<&str>); 6] = [
    (1, Some(OCTANT)),
    (2, Some(POLE_TRIANGLE)),
    (3, Some(QUARTER_EQUATOR)),
    (4, Some("POINT (1 2)")),
    (5, Some("POLYGON EMPTY")),
    (6, None),
];

fn session() -> &'static (Warehouse, BlockingSession) {
    static S: OnceLock<(Warehouse, BlockingSession)> = OnceLock::new();
    S.get_or_init(|| {
        let w = Warehouse::new();
        let s = w.session();
        s.sql("CREATE SCHEMA geo").unwrap();
        s.sql("CREATE TABLE geo.shapes (id bigint, g geography(4326))")
            .unwrap();
        s.sql(&format!(
            "INSERT INTO geo.shapes VALUES {}",
            geography_values(&ROWS)
        ))
        .unwrap();
        (w, s)
    })
}

/// The `Float64` columns after the id of every row, by id.
fn measures(batches: &[RecordBatch]) -> Vec<(i64, Vec<Option<f64>>)> {
    let mut out = Vec::new();
    for b in batches {
        let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        for (row, id) in id.values().iter().copied().enumerate() {
            let values = (1..b.num_columns())
                .map(|c| {
                    let a = b.column(c).as_any().downcast_ref::<Float64Array>().unwrap();
                    a.is_valid(row).then(|| a.value(row))
                })
                .collect();
            out.push((id, values));
        }
    }
    out.sort_by_key(|(id, _)| *id);
    out
}

fn one_float(s: &BlockingSession, sql: &str) -> Option<f64> {
    let batches = s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let b = batches.iter().find(|b| b.num_rows() > 0).unwrap();
    let a = b.column(0).as_any().downcast_ref::<Float64Array>().unwrap();
    a.is_valid(0).then(|| a.value(0))
}

fn close(ours: Option<f64>, expected: f64) -> bool {
    ours.is_some_and(|v| (v - expected).abs() <= 1e-9 * expected.abs().max(1.0))
}

#[test]
fn area_length_and_perimeter_of_a_geography_column_are_metres_on_the_sphere() {
    let (_, s) = session();
    let batches = s
        .sql("SELECT id, ST_Area(g), ST_Length(g), ST_Perimeter(g) FROM geo.shapes")
        .unwrap();
    let got = measures(&batches);
    let quarter = PI * R / 2.0;
    let pole_side = 10f64.to_radians() * R;
    // (area m², length m, perimeter m) by the closed forms of the module docs.
    let expected: [(i64, Option<[f64; 3]>); 6] = [
        (1, Some([4.0 * PI * R * R / 8.0, 0.0, 3.0 * quarter])),
        (2, Some([R * R * PI / 18.0, 0.0, pole_side + 2.0 * quarter])),
        (3, Some([0.0, quarter, 0.0])),
        (4, Some([0.0, 0.0, 0.0])),
        (5, Some([0.0, 0.0, 0.0])),
        (6, None),
    ];
    assert_eq!(got.len(), expected.len(), "{got:?}");
    for ((id, values), (eid, e)) in got.iter().zip(expected) {
        assert_eq!(*id, eid);
        match e {
            None => assert!(values.iter().all(Option::is_none), "{id}: {values:?}"),
            Some(e) => {
                for (v, e) in values.iter().zip(e) {
                    assert!(close(*v, e), "row {id}: {values:?}, expected {e}");
                }
            }
        }
    }
}

#[test]
fn constants_and_distance_are_on_the_sphere_too() {
    let (_, s) = session();
    let octant = 4.0 * PI * R * R / 8.0;
    let v = one_float(s, &format!("SELECT ST_Area(ST_GeogFromText('{OCTANT}'))"));
    assert!(close(v, octant), "{v:?}");
    let v = one_float(
        s,
        &format!("SELECT ST_Length(ST_GeogFromText('{QUARTER_EQUATOR}'))"),
    );
    assert!(close(v, PI * R / 2.0), "{v:?}");
    // A quarter meridian, point to point and from a column.
    let v = one_float(
        s,
        "SELECT ST_Distance(ST_GeogPoint(0, 0), ST_GeogPoint(0, 90))",
    );
    assert!(close(v, PI * R / 2.0), "{v:?}");
    let v = one_float(
        s,
        "SELECT ST_Distance(g, ST_GeogPoint(-90, 0)) FROM geo.shapes WHERE id = 3",
    );
    assert!(close(v, PI * R / 2.0), "{v:?}");
    assert_eq!(
        one_float(s, "SELECT ST_Area(ST_GeogFromText(CAST(NULL AS VARCHAR)))").map(|_| ()),
        None
    );
    // Geometry keeps its planar kernels: square degrees.
    let v = one_float(s, &format!("SELECT ST_Area(ST_GeomFromText('{OCTANT}'))"));
    assert_eq!(v, Some(4050.0));
}

#[test]
fn seed_conversions_change_the_type_and_keep_wkb_and_crs() {
    let (_, s) = session();
    let octant = 4.0 * PI * R * R / 8.0;
    let v = one_float(
        s,
        &format!("SELECT ST_Area(ST_GeomToGeography(ST_GeomFromText('{OCTANT}')))"),
    );
    assert!(close(v, octant), "{v:?}");
    // Back to planar: the same coordinates in square degrees.
    let v = one_float(
        s,
        "SELECT ST_Area(ST_GeogToGeometry(g)) FROM geo.shapes WHERE id = 1",
    );
    assert_eq!(v, Some(4050.0));
    let srid = scalar_i64(
        &s.sql("SELECT ST_SRID(ST_GeogToGeometry(g)) FROM geo.shapes WHERE id = 1")
            .unwrap(),
    );
    assert_eq!(srid, 4326);
    let text = s
        .sql("SELECT ST_AsText(ST_GeogToGeometry(ST_GeomToGeography(ST_GeomFromText('POINT (1 2)'))))")
        .unwrap();
    let shown = geoberg_datafusion::pretty_format(&text).unwrap();
    assert!(
        shown.contains("POINT(1 2)") || shown.contains("POINT (1 2)"),
        "{shown}"
    );
    // A projected CRS is not longitude/latitude: no geography of it.
    let err = s
        .sql("SELECT ST_GeomToGeography(ST_SetSRID(ST_GeomFromText('POINT (1 2)'), 3857))")
        .unwrap_err()
        .to_string();
    assert!(err.contains("3857"), "{err}");
}

#[test]
fn a_planar_geometry_written_into_a_geography_column_is_refused_with_the_conversion() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE SCHEMA geo").unwrap();
    s.sql("CREATE TABLE geo.stations (id bigint, geog geography(4326))")
        .unwrap();
    s.sql("CREATE TABLE geo.staged (id bigint, geom geometry(4326))")
        .unwrap();
    s.sql("INSERT INTO geo.staged VALUES (7, ST_SetSRID(ST_GeomFromText('POINT (3 4)'), 4326))")
        .unwrap();
    let refused = [
        "INSERT INTO geo.stations VALUES (1, ST_GeomFromText('POINT (1 2)'))",
        "INSERT INTO geo.stations VALUES (1, ST_SetSRID(ST_GeomFromText('POINT (1 2)'), 4326))",
        "INSERT INTO geo.stations SELECT id, geom FROM geo.staged",
        "MERGE INTO geo.stations t USING geo.staged s ON t.id = s.id \
         WHEN NOT MATCHED THEN INSERT (id, geog) VALUES (s.id, s.geom)",
    ];
    for sql in refused {
        let err = s.sql(sql).unwrap_err();
        let message = err.to_string();
        assert!(
            matches!(
                err,
                geoberg_datafusion::Error::Table(
                    geoberg_table::Error::GeometryIntoGeography { .. }
                )
            ),
            "{sql}: {message}"
        );
        assert!(
            message.contains("ST_GeomToGeography") && message.contains("\"geog\""),
            "{sql}: {message}"
        );
    }
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM geo.stations").unwrap()),
        0
    );
    // The fix, and values that are geography already, or plain WKB with no type: accepted.
    for sql in [
        "INSERT INTO geo.stations VALUES (1, ST_GeomToGeography(ST_GeomFromText('POINT (1 2)')))",
        "INSERT INTO geo.stations SELECT id, ST_GeomToGeography(geom) FROM geo.staged",
        "INSERT INTO geo.stations VALUES (2, ST_GeogFromText('POINT (5 6)'))",
        "INSERT INTO geo.stations VALUES (3, ST_AsBinary(ST_GeomFromText('POINT (7 8)')))",
    ] {
        s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let all = s.sql("SELECT id FROM geo.stations").unwrap();
    assert_eq!(ids(&all), [1, 2, 3, 7]);
    // UPDATE writes through the same check.
    let err = s
        .sql("UPDATE geo.stations SET geog = ST_GeomFromText('POINT (0 0)') WHERE id = 1")
        .unwrap_err()
        .to_string();
    assert!(err.contains("ST_GeomToGeography"), "{err}");
}
