//! `ST_Transform` on PROJ (loaded from the system, see geoberg-datafusion's `proj` module):
//! WGS 84 to Web Mercator against geoberg-crs's own spherical Mercator formulas (written
//! without PROJ), seed 003's `ST_Transform(geometry, 'epsg:2180', 'epsg:4326')` round trip,
//! and a table column brought into another CRS.

use arrow_array::{Array, Float64Array, RecordBatch};
use arrow_schema::DataType as ArrowType;

use crate::common::Warehouse;

/// Each row's columns as floats.
fn rows(batches: &[RecordBatch]) -> Vec<Vec<f64>> {
    batches
        .iter()
        .flat_map(|b| {
            let columns: Vec<Float64Array> = b
                .columns()
                .iter()
                .map(|c| {
                    let c = arrow::compute::cast(c, &ArrowType::Float64).unwrap();
                    c.as_any().downcast_ref::<Float64Array>().unwrap().clone()
                })
                .collect();
            (0..b.num_rows()).map(move |i| columns.iter().map(|c| c.value(i)).collect::<Vec<_>>())
        })
        .collect()
}

#[test]
fn wgs84_to_web_mercator_matches_the_spherical_formulas() {
    let w = Warehouse::new();
    let s = w.session();
    let mut points = Vec::new();
    for lon in (-179..=179).step_by(17) {
        for lat in (-84..=84).step_by(12) {
            points.push((lon as f64 + 0.25, lat as f64 + 0.125));
        }
    }
    let values = points
        .iter()
        .map(|(x, y)| format!("({x}, {y})"))
        .collect::<Vec<_>>()
        .join(", ");
    let got = rows(
        &s.sql(&format!(
            "SELECT ST_X(m), ST_Y(m), ST_X(back), ST_Y(back) FROM (SELECT m, \
             ST_Transform(m, 'EPSG:3857', 'EPSG:4326') AS back FROM (SELECT \
             ST_Transform(ST_Point(x, y), 'EPSG:4326', 'EPSG:3857') AS m, x, y \
             FROM (VALUES {values}) t(x, y) ORDER BY x, y))"
        ))
        .unwrap(),
    );
    let mut expected = points.clone();
    expected.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(got.len(), expected.len());
    for (row, &(lon, lat)) in got.iter().zip(&expected) {
        let (x, y) = geoberg_crs::lonlat_to_web_mercator(lon, lat).unwrap();
        assert!(
            (row[0] - x).abs() < 1e-6,
            "{lon} {lat}: x {} vs {x}",
            row[0]
        );
        assert!(
            (row[1] - y).abs() < 1e-6,
            "{lon} {lat}: y {} vs {y}",
            row[1]
        );
        assert!(
            (row[2] - lon).abs() < 1e-9 && (row[3] - lat).abs() < 1e-9,
            "{row:?}"
        );
    }
}

/// Seed 003 stores Polish messages in EPSG:2180 (PUWG 1992: transverse Mercator on the GRS 80
/// ellipsoid, central meridian 19°E, scale 0.9993, false easting 500 km, false northing
/// -5,300 km) and reads them back in WGS 84.
#[test]
fn seed_003_poland_round_trips_through_epsg_2180() {
    let w = Warehouse::new();
    let s = w.session();
    let got = rows(
        &s.sql(
            "SELECT ST_X(pl), ST_Y(pl), ST_X(back), ST_Y(back) FROM (SELECT pl, \
             ST_Transform(pl, 'epsg:2180', 'epsg:4326') AS back FROM (SELECT \
             ST_Transform(ST_Point(21.0, 52.0), 'epsg:4326', 'epsg:2180') AS pl))",
        )
        .unwrap(),
    );
    let [east, north, lon, lat] = got[0][..] else {
        panic!("{got:?}")
    };
    // On the central meridian's parallel 52°N, 2° east: about 2° × 68.7 km east of 500 km,
    // and the meridian arc to 52°N (5,763 km) scaled by 0.9993, less 5,300 km.
    assert!((east - 637_300.0).abs() < 1_000.0, "{east}");
    assert!((north - 461_200.0).abs() < 1_000.0, "{north}");
    assert!(
        (lon - 21.0).abs() < 1e-9 && (lat - 52.0).abs() < 1e-9,
        "{lon} {lat}"
    );
}

#[test]
fn a_column_is_brought_into_another_crs() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE db.points (id bigint, geom geometry(4326))")
        .unwrap();
    s.sql(
        "INSERT INTO db.points VALUES (1, ST_SetSRID(ST_Point(10, 50), 4326)), \
         (2, ST_SetSRID(ST_Point(-75, -12), 4326))",
    )
    .unwrap();
    let got = rows(
        &s.sql(
            "SELECT ST_SRID(m), ST_X(m), ST_Y(m) FROM (SELECT id, ST_Transform(geom, 'EPSG:3857') \
             AS m FROM db.points) ORDER BY id",
        )
        .unwrap(),
    );
    for (row, (lon, lat)) in got.iter().zip([(10.0, 50.0), (-75.0, -12.0)]) {
        let (x, y) = geoberg_crs::lonlat_to_web_mercator(lon, lat).unwrap();
        assert_eq!(row[0], 3857.0, "{row:?}");
        assert!(
            (row[1] - x).abs() < 1e-6 && (row[2] - y).abs() < 1e-6,
            "{row:?}"
        );
    }
}
