//! A ~1% window over a demo-like table (the README demo's data: skewed points around 200
//! cities, appended in arrival order, then `CREATE SPATIAL INDEX ... hilbert(geom, 16)`):
//! `SELECT count(*) ... WHERE ST_Intersects(geom, ST_MakeEnvelope(...))` through this engine
//! vs the table crate's own window scan vs SedonaDB alone reading the same Parquet files (no
//! geoberg code: `SedonaContext::read_parquet` over the snapshot's data files) vs DuckDB 1.5.5's
//! `iceberg_scan` with `ST_Intersects` and with `&&` (`table/interop/duckdb_window.py`, in the
//! interop venv that `table/interop/run.sh` makes), all on one table in one run; and a
//! points-in-polygons join inside the window. Every reader's count must equal the engine's.
//!
//! `GEOBERG_BENCH_ROWS` (default 4 000 000) and `GEOBERG_BENCH_FILES` (default 16: data files
//! after the rewrite) size the table; `GEOBERG_INTEROP_VENV` names the venv (default
//! `target/interop-venv`). Files read and rows are printed once before timing; DuckDB's medians
//! are printed as it measures them (criterion cannot time another process's query).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, BinaryArray, RecordBatch};
use arrow_schema::{Field, Schema};
use criterion::{Criterion, criterion_group, criterion_main};
use geoberg_bench_data::{
    DatasetModel, Distribution, GenerateOptions, GeometryEncoding, RowFormat,
};
use geoberg_datafusion::BlockingSession;
use geoberg_geostats::bbox_of_wkb;
use geoberg_table::{BBox, Column, CreateTable, DataType, SRID_FIELD_METADATA, Table, TableIdent};
use sedona::context::SedonaContext;

mod common;

use common::{count, sedona_over, temp_catalog};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `geometry` renamed `geom`, labelled SRID 4326 for the append; `arrival_ts` and `state` kept.
fn as_table_batch(batch: &RecordBatch) -> RecordBatch {
    let schema = batch.schema();
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.name().as_str() {
            "geometry" => Field::new("geom", f.data_type().clone(), true).with_metadata(
                HashMap::from([(SRID_FIELD_METADATA.to_string(), "4326".to_string())]),
            ),
            _ => f.as_ref().clone(),
        })
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), batch.columns().to_vec()).unwrap()
}

struct Setup {
    dir: tempfile::TempDir,
    table: Table,
    window: BBox,
    session: BlockingSession,
}

/// The demo's table, clustered, and a 10% x 10% window on its densest spot.
fn setup() -> Setup {
    let rows = env("GEOBERG_BENCH_ROWS", 4_000_000);
    let files = env("GEOBERG_BENCH_FILES", 16).max(1);
    let (dir, catalog) = temp_catalog("demo");
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("arrival_ts", DataType::Timestamptz).required(),
        Column::new("state", DataType::String).required(),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(
        Arc::clone(&catalog),
        &TableIdent::new("demo", "points").unwrap(),
    )
    .unwrap();
    let model = DatasetModel::builder(Distribution::CITIES)
        .seed(42)
        .build()
        .unwrap();
    let format = RowFormat {
        encoding: GeometryEncoding::Wkb,
        bbox_columns: false,
        row_width_bytes: 0,
        payload_columns: 0,
    };
    // Arrival order, in 64 appends like the demo; a sample of points for the window.
    let appends = 64u64.min(rows);
    let mut sample = Vec::new();
    let mut start_row = 0;
    for i in 0..appends {
        let end = rows * (i + 1) / appends;
        let batches: Vec<RecordBatch> = model
            .batches(GenerateOptions {
                start_row,
                rows: end - start_row,
                batch_size: 16_384,
                format,
            })
            .unwrap()
            .map(|b| as_table_batch(&b.unwrap()))
            .collect();
        for b in &batches {
            let geom = b.column_by_name("geom").unwrap();
            let geom = geom.as_any().downcast_ref::<BinaryArray>().unwrap();
            for row in (0..geom.len()).step_by(97) {
                if let Ok(Some(bb)) = bbox_of_wkb(geom.value(row)) {
                    sample.push((bb.min_x, bb.min_y));
                }
            }
        }
        table = table.append(&batches).unwrap().0;
        start_row = end;
    }
    let total: u64 = table
        .data_files()
        .unwrap()
        .iter()
        .map(|f| f.file_size_in_bytes())
        .sum();
    let (table, _) = table
        .rewrite()
        .hilbert("geom", 16)
        .option("target-file-size-bytes", (total / files).max(1).to_string())
        .execute()
        .unwrap();
    let window = densest_window(&sample);
    let session = BlockingSession::new(catalog, "geoberg").unwrap();
    Setup {
        dir,
        table,
        window,
        session,
    }
}

/// 10% x 10% of the sample's extent (1% of its area) around the densest cell of a 20 x 20
/// grid, as the demo picks it.
fn densest_window(sample: &[(f64, f64)]) -> BBox {
    const GRID: usize = 20;
    let (mut lo, mut hi) = ((f64::MAX, f64::MAX), (f64::MIN, f64::MIN));
    for &(x, y) in sample {
        lo = (lo.0.min(x), lo.1.min(y));
        hi = (hi.0.max(x), hi.1.max(y));
    }
    let (w, h) = (hi.0 - lo.0, hi.1 - lo.1);
    let cell =
        |v: f64, min: f64, span: f64| (((v - min) / span * GRID as f64) as usize).min(GRID - 1);
    let mut counts = [[0u32; GRID]; GRID];
    for &(x, y) in sample {
        counts[cell(y, lo.1, h)][cell(x, lo.0, w)] += 1;
    }
    let mut best = (0, 0, 0);
    for (r, row) in counts.iter().enumerate() {
        for (c, n) in row.iter().enumerate() {
            if *n > best.0 {
                best = (*n, r, c);
            }
        }
    }
    let cx = lo.0 + (best.2 as f64 + 0.5) * w / GRID as f64;
    let cy = lo.1 + (best.1 as f64 + 0.5) * h / GRID as f64;
    let (hw, hh) = (w * 0.05, h * 0.05);
    let min_x = (cx - hw).clamp(lo.0, hi.0 - 2.0 * hw);
    let min_y = (cy - hh).clamp(lo.1, hi.1 - 2.0 * hh);
    let round = |v: f64| (v * 1e3).round() / 1e3;
    BBox::new(
        round(min_x),
        round(min_y),
        round(min_x + 2.0 * hw),
        round(min_y + 2.0 * hh),
    )
}

/// SedonaDB alone over the snapshot's data files, and the window query against it.
fn sedona_direct(table: &Table, window: BBox) -> (tokio::runtime::Runtime, SedonaContext, String) {
    let (runtime, context) = sedona_over(&[("points", table)]);
    let query = format!(
        "SELECT count(*) FROM points WHERE ST_Intersects(geom, \
         ST_SetSRID(ST_MakeEnvelope({}, {}, {}, {}), 4326))",
        window.min_x, window.min_y, window.max_x, window.max_y
    );
    (runtime, context, query)
}

/// DuckDB's medians for `ST_Intersects` and `&&`, as printed by `duckdb_window.py`; `None` (with
/// the command that makes the venv) when the interop venv is missing.
fn duckdb_rows(s: &Setup, expected: i64) -> Option<Vec<String>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let venv = std::env::var_os("GEOBERG_INTEROP_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("target/interop-venv"));
    let python = venv.join("bin/python");
    if !python.exists() {
        println!(
            "DuckDB: no interop venv at {}; make it with `bash table/interop/run.sh`",
            venv.display()
        );
        return None;
    }
    let w = s.window;
    let out = std::process::Command::new(python)
        .arg(root.join("table/interop/duckdb_window.py"))
        .arg(s.dir.path())
        .arg("demo.points")
        .args([w.min_x, w.min_y, w.max_x, w.max_y].map(|v| v.to_string()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "duckdb_window.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    for row in &rows {
        let count: i64 = row.split('|').nth(2).unwrap().trim().parse().unwrap();
        assert_eq!(count, expected, "DuckDB disagrees with the engine: {row}");
    }
    Some(rows)
}

fn bench(c: &mut Criterion) {
    let s = setup();
    let w = s.window;
    let query = format!(
        "SELECT count(*) FROM demo.points WHERE ST_Intersects(geom, ST_MakeEnvelope({}, {}, {}, {}))",
        w.min_x, w.min_y, w.max_x, w.max_y
    );
    // Zones: a 4 x 4 grid of rectangles over the window, for the join.
    s.session
        .sql("CREATE TABLE demo.zones (id bigint, geom geometry(4326))")
        .unwrap();
    let mut values = Vec::new();
    for i in 0..4 {
        for j in 0..4 {
            let (dx, dy) = ((w.max_x - w.min_x) / 4.0, (w.max_y - w.min_y) / 4.0);
            let (x, y) = (w.min_x + i as f64 * dx, w.min_y + j as f64 * dy);
            values.push(format!(
                "({}, ST_MakeEnvelope({x}, {y}, {}, {}, 4326))",
                i * 4 + j,
                x + dx,
                y + dy
            ));
        }
    }
    s.session
        .sql(&format!(
            "INSERT INTO demo.zones VALUES {}",
            values.join(", ")
        ))
        .unwrap();
    let join = format!(
        "SELECT count(*) FROM demo.points p JOIN demo.zones z ON ST_Intersects(p.geom, z.geom) \
         WHERE ST_Intersects(p.geom, ST_MakeEnvelope({}, {}, {}, {}))",
        w.min_x, w.min_y, w.max_x, w.max_y
    );

    let engine_rows = count(&s.session.sql(&query).unwrap());
    let (scan_rows, explain) = s
        .table
        .scan()
        .with_window("geom", w)
        .select(["geom"])
        .execute()
        .unwrap();
    let scan_rows: usize = scan_rows.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(
        engine_rows as usize, scan_rows,
        "engine and table scan disagree"
    );
    let analyzed = geoberg_datafusion::pretty_format(
        &s.session.sql(&format!("EXPLAIN ANALYZE {query}")).unwrap(),
    )
    .unwrap();
    let scan_line = analyzed
        .lines()
        .find(|l| l.contains("GeobergScanExec"))
        .unwrap_or_default()
        .trim()
        .to_string();
    let join_plan =
        geoberg_datafusion::pretty_format(&s.session.sql(&format!("EXPLAIN {join}")).unwrap())
            .unwrap();
    let operator = [
        "SpatialJoinExec",
        "NestedLoopJoinExec",
        "HashJoinExec",
        "CrossJoinExec",
    ]
    .into_iter()
    .find(|op| join_plan.contains(op))
    .unwrap_or("unknown");
    println!("query: {query}");
    println!("rows matched: {engine_rows}");
    println!(
        "table scan: files {} of {} read, {} of {} row groups skipped",
        explain.files_read,
        explain.files_total,
        explain.row_groups_skipped,
        explain.row_groups_total
    );
    println!("engine scan node: {scan_line}");
    let (runtime, sedona, sedona_query) = sedona_direct(&s.table, w);
    let sedona_count = |q: &str| {
        runtime.block_on(async { count(&sedona.sql(q).await.unwrap().collect().await.unwrap()) })
    };
    assert_eq!(
        sedona_count(&sedona_query),
        engine_rows,
        "SedonaDB on the Parquet files disagrees with the engine"
    );
    println!("SedonaDB alone: {sedona_query}");
    for row in duckdb_rows(&s, engine_rows).unwrap_or_default() {
        println!("{row}");
    }
    println!(
        "join: {} pairs, operator {operator}",
        count(&s.session.sql(&join).unwrap())
    );

    let mut group = c.benchmark_group("window_count");
    group.sample_size(20);
    group.bench_function("engine", |b| {
        b.iter(|| count(&s.session.sql(&query).unwrap()))
    });
    group.bench_function("table_scan", |b| {
        b.iter(|| {
            let (batches, _) = s
                .table
                .scan()
                .with_window("geom", w)
                .select(["geom"])
                .execute()
                .unwrap();
            batches.iter().map(RecordBatch::num_rows).sum::<usize>()
        })
    });
    group.bench_function("sedona_parquet", |b| b.iter(|| sedona_count(&sedona_query)));
    group.finish();
    let mut group = c.benchmark_group("window_join");
    group.sample_size(10);
    group.bench_function("engine_points_in_16_zones", |b| {
        b.iter(|| count(&s.session.sql(&join).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
