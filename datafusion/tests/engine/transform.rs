//! `ST_Transform` on PROJ (loaded from the system, see geoberg-datafusion's `proj` module):
//! WGS 84 to Web Mercator against geoberg-crs's own spherical Mercator formulas (written
//! without PROJ), other EPSG codes against pyproj's answers, seed 003's
//! `ST_Transform(geometry, 'epsg:2180', 'epsg:4326')` round trip, and a table column brought
//! into another CRS.

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
/// `(target, lon, lat, x, y)` from pyproj 3.7.2 (PROJ 9.5.1):
/// `Transformer.from_crs('EPSG:4326', target, always_xy=True).transform(lon, lat)`. Map
/// projections on the WGS 84 / ETRS89 datum only (Poland's CS92, UTM 33N, the European LAEA
/// grid), whose answers do not depend on the datum grids a PROJ install has.
const PYPROJ: [(&str, f64, f64, f64, f64); 12] = [
    (
        "EPSG:2180",
        13.405,
        52.52,
        120637.39917201758,
        531849.628548679,
    ),
    (
        "EPSG:2180",
        21.0122,
        52.2297,
        637382.2044361834,
        486757.20948080625,
    ),
    (
        "EPSG:2180",
        15.0,
        45.0,
        184833.18911813886,
        -310759.55911508575,
    ),
    (
        "EPSG:2180",
        2.3522,
        48.8566,
        -718268.9856428134,
        244955.1638461668,
    ),
    (
        "EPSG:32633",
        13.405,
        52.52,
        391779.25925275,
        5820072.1592110265,
    ),
    (
        "EPSG:32633",
        21.0122,
        52.2297,
        910436.2019131165,
        5803636.188351416,
    ),
    (
        "EPSG:32633",
        15.0,
        45.0,
        500000.0000000013,
        4982950.400226552,
    ),
    (
        "EPSG:32633",
        -0.1276,
        51.5072,
        -547012.0510945774,
        5815542.743754806,
    ),
    (
        "EPSG:3035",
        13.405,
        52.52,
        4552036.45015454,
        3273268.2735680644,
    ),
    (
        "EPSG:3035",
        21.0122,
        52.2297,
        5070108.648660272,
        3292361.6008730386,
    ),
    (
        "EPSG:3035",
        15.0,
        45.0,
        4715582.032395293,
        2445248.8412497006,
    ),
    (
        "EPSG:3035",
        -0.1276,
        51.5072,
        3620448.669410665,
        3203879.3670170866,
    ),
];

#[test]
fn other_epsg_codes_match_pyproj() {
    let w = Warehouse::new();
    let s = w.session();
    for (target, lon, lat, x, y) in PYPROJ {
        let got = rows(
            &s.sql(&format!(
                "SELECT ST_X(p), ST_Y(p) FROM (SELECT ST_Transform(ST_SetSRID(ST_Point({lon}, \
                 {lat}), 4326), '{target}') AS p)"
            ))
            .unwrap(),
        );
        let [gx, gy] = got[0][..] else {
            panic!("{got:?}")
        };
        // A millimetre: the system's PROJ and pyproj's may differ in the last digits.
        assert!(
            (gx - x).abs() < 1e-3 && (gy - y).abs() < 1e-3,
            "{target} of ({lon} {lat}): ({gx} {gy}), pyproj ({x} {y})"
        );
    }
}

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
