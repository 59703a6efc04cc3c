//! A 1% window on a 4 M-row table of points, the same points as `geography(4326)` and as
//! `geometry(4326)`: files and row groups read, rows returned and scan time, in arrival order
//! and after `CREATE SPATIAL INDEX` (Hilbert, precision 16). Prints a Markdown table.
//!
//! `cargo bench -p geoberg-table --bench geography_window` (release); `GEOBERG_BENCH_ROWS`
//! changes the row count, `GEOBERG_BENCH_RUNS` the timed runs per scan (median reported).

mod points;

use std::sync::Arc;
use std::time::{Duration, Instant};

use geoberg_table::{
    BBox, Catalog, Column, CreateTable, DataType, SqliteCatalog, Table, TableIdent,
};

const BATCH: usize = 100_000;

fn build(catalog: Arc<dyn Catalog>, name: &str, column_type: &str, rows: usize) -> Table {
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("g", DataType::parse(column_type).unwrap()),
    ])
    .property("geoberg.parquet.row-group-rows", "8192")
    .create(catalog, &TableIdent::new("bench", name).unwrap())
    .unwrap();
    for start in (0..rows).step_by(BATCH) {
        let batch = points::batch(start..rows.min(start + BATCH), "g");
        table = table.append(&[batch]).unwrap().0;
    }
    table
}

struct Measured {
    files: String,
    row_groups: String,
    rows: usize,
    median: Duration,
}

fn measure(table: &Table, window: BBox, exact: bool, runs: usize) -> Measured {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let (batches, explain) = table
            .scan()
            .with_window("g", window)
            .exact(exact)
            .execute()
            .unwrap();
        times.push(start.elapsed());
        drop(batches);
        last = Some(explain);
    }
    times.sort();
    let e = last.unwrap();
    Measured {
        files: format!("{} / {}", e.files_read, e.files_total),
        row_groups: format!(
            "{} / {}",
            e.row_groups_total - e.row_groups_skipped,
            e.row_groups_total
        ),
        rows: e.rows_returned,
        median: times[times.len() / 2],
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let rows = points::env("GEOBERG_BENCH_ROWS", 4_000_000);
    let runs = points::env("GEOBERG_BENCH_RUNS", 5);
    let dir = tempfile::tempdir().unwrap();
    let catalog = Arc::new(
        SqliteCatalog::open(dir.path().join("c.db"), "bench", dir.path().join("wh")).unwrap(),
    );
    catalog.create_namespace("bench").unwrap();
    let catalog: Arc<dyn Catalog> = catalog;
    // 36 x 17 degrees: 1% of the data's lon/lat extent, inland of the antimeridian; and the
    // same size across it (geography only).
    let window = BBox::new(10.0, 20.0, 46.0, 37.0);
    let across = BBox::new(162.0, -8.5, -162.0, 8.5);
    println!("rows: {rows}, runs per scan: {runs} (median)\n");
    println!("| column | layout | window | exact | files read | row groups read | rows | time |");
    println!("|---|---|---|---|---|---|---|---|");
    for (name, column_type) in [("geog", "geography(4326)"), ("geom", "geometry(4326)")] {
        let start = Instant::now();
        let appended = build(catalog.clone(), name, column_type, rows);
        let append_time = start.elapsed();
        let start = Instant::now();
        let (indexed, _) = appended
            .rewrite()
            .hilbert("g", 16)
            .option("target-file-count", "64")
            .execute()
            .unwrap();
        let index_time = start.elapsed();
        eprintln!("{column_type}: append {append_time:.1?}, CREATE SPATIAL INDEX {index_time:.1?}");
        let mut windows = vec![("1% inland", window)];
        if name == "geog" {
            windows.push(("1% across ±180", across));
        }
        for (layout, table) in [("arrival order", &appended), ("Hilbert index", &indexed)] {
            for (label, w) in &windows {
                for exact in [false, true] {
                    let m = measure(table, *w, exact, runs);
                    println!(
                        "| {column_type} | {layout} | {label} | {exact} | {} | {} | {} | {:.1} ms |",
                        m.files,
                        m.row_groups,
                        m.rows,
                        m.median.as_secs_f64() * 1e3
                    );
                }
            }
        }
    }
}
