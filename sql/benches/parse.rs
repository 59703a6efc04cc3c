//! Parse time of each statement kind and of a WHERE condition, so a change to the front or the
//! sqlparser version that makes parsing slow shows up.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use geoberg_sql::{parse, parse_condition};

const STATEMENTS: &[(&str, &str)] = &[
    (
        "create_spatial_index",
        "CREATE SPATIAL INDEX FOR wherobots.db.test_table USING hilbert(geom, 10, -20037508.34, -20037508.34, 20037508.34, 20037508.34) WHERE state = 'CA' OPTIONS map('target-file-size-bytes', '10485760')",
    ),
    (
        "call_rewrite_data_files",
        "CALL wherobots.system.rewrite_data_files(table => 'db.test_table', strategy => 'sort', sort_order => 'hilbert(geom, 10)', where => \"state = 'CA'\", options => map('target-file-size-bytes', '10485760', 'rewrite-all', 'true'))",
    ),
    (
        "create_table",
        "CREATE TABLE IF NOT EXISTS org_catalog.test_db.test_table (id bigint NOT NULL, data string, ts timestamp, geom geometry(4326)) USING iceberg PARTITIONED BY (bucket(4, id), days(ts)) TBLPROPERTIES ('write.target-file-size-bytes' = '134217728')",
    ),
    ("describe", "DESCRIBE TABLE org_catalog.test_db.test_table"),
];

/// A spatial condition with column filters, as `where => "..."` or a scan's row filter holds it.
const CONDITION: &str = "ST_Intersects(geom, ST_GeomFromText('POLYGON ((0 0, 0 2, 2 2, 2 0, 0 0))', 4326)) AND id IN (1, 2, 3) AND ts >= '2024-01-01'";

fn bench_parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    for (name, sql) in STATEMENTS {
        group.bench_function(*name, |b| b.iter(|| parse(black_box(sql)).unwrap()));
    }
    group.bench_function("condition_spatial", |b| {
        b.iter(|| parse_condition(black_box(CONDITION)).unwrap())
    });
    // A 1000-vertex WKT window: the cost of the WKT -> geo-types -> WKB path.
    let ring: Vec<String> = (0..=1000)
        .map(|i| {
            let a = std::f64::consts::TAU * f64::from(i % 1000) / 1000.0;
            format!("{:.6} {:.6}", a.cos(), a.sin())
        })
        .collect();
    let big = format!(
        "ST_Intersects(geom, ST_GeomFromText('POLYGON (({}))'))",
        ring.join(", ")
    );
    group.bench_function("condition_1000_vertex_window", |b| {
        b.iter(|| parse_condition(black_box(&big)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
