//! Row-level changes through SQL on a 4 M-point table after `CREATE SPATIAL INDEX` (Hilbert,
//! precision 16, 64 files): `DELETE` of a 1% window and `UPDATE` of 1% of the rows, in both
//! modes. These are the statements that read the table through the row-position scan (`_file`,
//! `_pos`); the table crate's bench (`geoberg-table --bench row_changes`) times the same
//! changes without the engine. Prints a Markdown table.
//!
//! `cargo bench -p geoberg-datafusion --bench row_changes` (release); `GEOBERG_BENCH_ROWS`
//! changes the row count, `GEOBERG_BENCH_RUNS` the timed runs (median reported). Each run
//! changes its own copy of the same table version (the same metadata registered under a new
//! name), so that one run's commit does not change what the next one sees.

#[path = "../../table/benches/points/mod.rs"]
mod points;

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use geoberg_datafusion::BlockingSession;
use geoberg_table::{Catalog, SqliteCatalog, Table, TableIdent};

/// `base`'s current version registered as `bench.<name>` with `mode` for deletes and updates.
fn copy_of(base: &Table, name: &str, mode: &str) {
    let ident = TableIdent::new("bench", name).unwrap();
    base.catalog()
        .register_table(&ident, base.metadata_location())
        .unwrap();
    Table::load(base.catalog().clone(), &ident)
        .unwrap()
        .set_properties([("write.delete.mode", mode), ("write.update.mode", mode)])
        .unwrap();
}

/// The one integer of a statement's result (rows changed).
fn changed(batches: &[RecordBatch]) -> u64 {
    let c = arrow::compute::cast(batches[0].column(0), &arrow_schema::DataType::UInt64).unwrap();
    c.as_any()
        .downcast_ref::<arrow_array::UInt64Array>()
        .unwrap()
        .value(0)
}

fn main() {
    let rows = points::env("GEOBERG_BENCH_ROWS", 4_000_000);
    let runs = points::env("GEOBERG_BENCH_RUNS", 5);
    let dir = tempfile::tempdir().unwrap();
    let catalog: Arc<dyn Catalog> = Arc::new(
        SqliteCatalog::open(dir.path().join("c.db"), "geoberg", dir.path().join("wh")).unwrap(),
    );
    catalog.create_namespace("bench").unwrap();
    let start = Instant::now();
    let table = points::clustered_table(Arc::clone(&catalog), rows);
    eprintln!("append + CREATE SPATIAL INDEX: {:.1?}", start.elapsed());
    let session = BlockingSession::new(catalog, "geoberg").unwrap();
    println!("rows: {rows}, 64 files after the index, runs: {runs} (median)\n");
    println!("| statement | mode | rows changed | time |");
    println!("|---|---|---:|---:|");
    let statements = [
        (
            "DELETE 1% window",
            "DELETE FROM geoberg.bench.{t} WHERE ST_Intersects(g, ST_MakeEnvelope(10, 20, 46, 37))",
        ),
        (
            "UPDATE 1% of rows (`id < N/100`)",
            "UPDATE geoberg.bench.{t} SET id = -id - 1 WHERE id < {n}",
        ),
    ];
    let mut copies = 0;
    for (label, template) in statements {
        for mode in ["copy-on-write", "merge-on-read"] {
            let mut times: Vec<Duration> = Vec::with_capacity(runs);
            let mut count = 0;
            for _ in 0..runs {
                copies += 1;
                let name = format!("copy{copies}");
                copy_of(&table, &name, mode);
                let sql = template
                    .replace("{t}", &name)
                    .replace("{n}", &(rows / 100).to_string());
                let start = Instant::now();
                let result = session.sql(&sql).unwrap();
                times.push(start.elapsed());
                count = changed(&result);
            }
            times.sort();
            let median = times[times.len() / 2];
            println!(
                "| {label} | {mode} | {count} | {:.1} ms |",
                median.as_secs_f64() * 1e3
            );
        }
    }
}
