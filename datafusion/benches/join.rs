//! Spatial joins at scale: points in zones, through this engine (SedonaDB's spatial join
//! operator over geoberg tables) and through SedonaDB alone reading the same Parquet files (no
//! geoberg code: `SedonaContext::read_parquet` over each snapshot's data files), on tables in
//! arrival order and after `CREATE SPATIAL INDEX ... hilbert(geom, 16)` on both sides.
//!
//! Points: `GEOBERG_JOIN_POINTS` (default 2 000 000) in a 80 x 80 square (degrees, inside WGS84's bounds), half uniform and
//! half around 40 centres, appended in 16 commits. Zones: a `GEOBERG_JOIN_ZONES`-cell grid
//! (default 100 000: 316 x 316) of jittered quadrilaterals tiling the square, in 4 commits.
//! Queries: every pair (`full`), the zones inside an 8 x 8 window (1% of the area: `subset`),
//! and points within 0.05 of those zones (`dwithin_subset`). Every answer must equal
//! SedonaDB's; pair counts and files read are printed once before timing.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use criterion::{Criterion, criterion_group, criterion_main};
use geoberg_datafusion::BlockingSession;
use geoberg_table::{
    Catalog, Column, CreateTable, DataType, SRID_FIELD_METADATA, Table, TableIdent,
};

mod common;

use common::{count, sedona_over, temp_catalog};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The side of the square the data lies in.
const SIDE: f64 = 80.0;

/// A deterministic generator (the bench needs no statistical quality).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn wkb_point(x: f64, y: f64) -> Vec<u8> {
    [&[1u8, 1, 0, 0, 0][..], &x.to_le_bytes(), &y.to_le_bytes()].concat()
}

fn wkb_polygon(ring: &[(f64, f64)]) -> Vec<u8> {
    let mut out = vec![1u8, 3, 0, 0, 0];
    out.extend(1u32.to_le_bytes());
    out.extend((ring.len() as u32).to_le_bytes());
    for (x, y) in ring {
        out.extend(x.to_le_bytes());
        out.extend(y.to_le_bytes());
    }
    out
}

fn schema() -> Arc<Schema> {
    let srid = HashMap::from([(SRID_FIELD_METADATA.to_string(), "4326".to_string())]);
    Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("geom", ArrowType::Binary, true).with_metadata(srid),
    ]))
}

fn create(catalog: &Arc<dyn Catalog>, name: &str) -> Table {
    CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(
        Arc::clone(catalog),
        &TableIdent::new("bench", name).unwrap(),
    )
    .unwrap()
}

fn points(catalog: &Arc<dyn Catalog>, name: &str, rows: usize) -> Table {
    let mut table = create(catalog, name);
    let mut g = Lcg(42);
    let centres: Vec<(f64, f64)> = (0..40)
        .map(|_| (4.0 + g.next() * (SIDE - 8.0), 4.0 + g.next() * (SIDE - 8.0)))
        .collect();
    let appends = 16;
    for a in 0..appends {
        let (from, to) = (rows * a / appends, rows * (a + 1) / appends);
        let geoms = BinaryArray::from_iter_values((from..to).map(|i| {
            let (x, y) = if i % 2 == 0 {
                (g.next() * SIDE, g.next() * SIDE)
            } else {
                let (cx, cy) = centres[i / 2 % centres.len()];
                let (r, t) = (g.next() * g.next() * 5.0, g.next() * std::f64::consts::TAU);
                (
                    (cx + r * t.cos()).clamp(0.0, SIDE),
                    (cy + r * t.sin()).clamp(0.0, SIDE),
                )
            };
            wkb_point(x, y)
        }));
        let batch = RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(Int64Array::from_iter_values(from as i64..to as i64)),
                Arc::new(geoms),
            ],
        )
        .unwrap();
        table = table.append(&[batch]).unwrap().0;
    }
    table
}

fn zones(catalog: &Arc<dyn Catalog>, name: &str, count: usize) -> Table {
    let mut table = create(catalog, name);
    let side = (count as f64).sqrt().round().max(1.0) as usize;
    let cell = SIDE / side as f64;
    let mut g = Lcg(7);
    // Jittered grid vertices shared by neighbouring cells, so the zones tile the square.
    let mut vertex = vec![vec![(0.0, 0.0); side + 1]; side + 1];
    for (i, row) in vertex.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            let jitter = |k: usize, g: &mut Lcg| {
                if k == 0 || k == side {
                    0.0
                } else {
                    (g.next() - 0.5) * cell * 0.4
                }
            };
            *v = (
                i as f64 * cell + jitter(i, &mut g),
                j as f64 * cell + jitter(j, &mut g),
            );
        }
    }
    let cells: Vec<(usize, usize)> = (0..side)
        .flat_map(|i| (0..side).map(move |j| (i, j)))
        .collect();
    for part in cells.chunks(cells.len().div_ceil(4)) {
        let ids = Int64Array::from_iter_values(part.iter().map(|(i, j)| (i * side + j) as i64));
        let geoms = BinaryArray::from_iter_values(part.iter().map(|&(i, j)| {
            let v = &vertex;
            wkb_polygon(&[v[i][j], v[i + 1][j], v[i + 1][j + 1], v[i][j + 1], v[i][j]])
        }));
        let batch = RecordBatch::try_new(schema(), vec![Arc::new(ids), Arc::new(geoms)]).unwrap();
        table = table.append(&[batch]).unwrap().0;
    }
    table
}

fn cluster(table: Table) -> Table {
    let total: u64 = table
        .data_files()
        .unwrap()
        .iter()
        .map(|f| f.file_size_in_bytes())
        .sum();
    table
        .rewrite()
        .hilbert("geom", 16)
        .option("target-file-size-bytes", (total / 16).max(1).to_string())
        .execute()
        .unwrap()
        .0
}

fn bench(c: &mut Criterion) {
    let n_points = env("GEOBERG_JOIN_POINTS", 2_000_000);
    let n_zones = env("GEOBERG_JOIN_ZONES", 100_000);
    let (dir, catalog) = temp_catalog("bench");
    let p = points(&catalog, "points", n_points);
    let z = zones(&catalog, "zones", n_zones);
    let pc = cluster(points(&catalog, "points_c", n_points));
    let zc = cluster(zones(&catalog, "zones_c", n_zones));
    let session = BlockingSession::new(Arc::clone(&catalog), "geoberg").unwrap();
    let window = "ST_MakeEnvelope(36, 36, 44, 44)";
    let queries = |points: &str, zones: &str, qualified: bool| {
        let ns = if qualified { "bench." } else { "" };
        let window = if qualified {
            window.to_string()
        } else {
            format!("ST_SetSRID({window}, 4326)")
        };
        [
            (
                "full",
                format!(
                    "SELECT count(*) FROM {ns}{points} p JOIN {ns}{zones} z \
                     ON ST_Intersects(p.geom, z.geom)"
                ),
            ),
            (
                "subset",
                format!(
                    "SELECT count(*) FROM {ns}{points} p JOIN {ns}{zones} z \
                     ON ST_Intersects(p.geom, z.geom) WHERE ST_Within(z.geom, {window})"
                ),
            ),
            (
                "dwithin_subset",
                format!(
                    "SELECT count(*) FROM {ns}{points} p JOIN {ns}{zones} z \
                     ON ST_DWithin(p.geom, z.geom, 0.05) WHERE ST_Within(z.geom, {window})"
                ),
            ),
        ]
    };

    let (runtime, sedona) = sedona_over(&[
        ("points", &p),
        ("zones", &z),
        ("points_c", &pc),
        ("zones_c", &zc),
    ]);
    let sedona_count = |q: &str| {
        runtime.block_on(async { count(&sedona.sql(q).await.unwrap().collect().await.unwrap()) })
    };
    let mut group = c.benchmark_group("spatial_join");
    group.sample_size(10);
    for (layout, points, zones) in [
        ("unclustered", "points", "zones"),
        ("clustered", "points_c", "zones_c"),
    ] {
        let ours = queries(points, zones, true);
        let theirs = queries(points, zones, false);
        for ((name, q), (_, sq)) in ours.iter().zip(theirs.iter()) {
            let pairs = count(&session.sql(q).unwrap());
            assert_eq!(pairs, sedona_count(sq), "{q}: SedonaDB disagrees");
            let plan = geoberg_datafusion::pretty_format(
                &session.sql(&format!("EXPLAIN ANALYZE {q}")).unwrap(),
            )
            .unwrap();
            // Per scan: the table, its files, those the join's build side pruned, those opened.
            let scans: Vec<String> = plan
                .lines()
                .filter(|l| l.contains("GeobergScanExec"))
                .map(|l| {
                    let l = l.trim_matches(|c: char| c == '|' || c.is_whitespace());
                    let table = l.split(", ").next().unwrap_or_default();
                    let metric = |name: &str| {
                        l.split([',', '[', ' '])
                            .find_map(|m| m.strip_prefix(&format!("{name}=")))
                            .unwrap_or("-")
                            .to_string()
                    };
                    format!(
                        "{table} files_total={} files_skipped_by_join={} files_opened={}",
                        metric("files_total"),
                        metric("files_skipped_by_join"),
                        metric("files_opened")
                    )
                })
                .collect();
            let file_pairs = plan
                .lines()
                .find(|l| l.contains("GeobergFilePairJoinExec"))
                .and_then(|l| l.split(", ").find(|p| p.starts_with("file_pairs=")))
                .unwrap_or("no file-pair join");
            println!(
                "{layout}/{name}: {pairs} pairs, operator {}, {file_pairs}, scans [{}]",
                if plan.contains("SpatialJoinExec") {
                    "SpatialJoinExec"
                } else {
                    "other"
                },
                scans.join("; ")
            );
            group.bench_function(format!("geoberg_{layout}_{name}"), |b| {
                b.iter(|| count(&session.sql(q).unwrap()))
            });
            group.bench_function(format!("sedona_parquet_{layout}_{name}"), |b| {
                b.iter(|| sedona_count(sq))
            });
        }
    }
    group.finish();
    drop(dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
