//! Row-level changes on a 4 M-point table after `CREATE SPATIAL INDEX` (Hilbert, precision 16,
//! 64 files): `DELETE` of a 1% window in both modes, `UPDATE` of 1% of the rows, and a full
//! scan and a window scan with 0, 1, 8 and 64 deletion vectors. Prints Markdown tables.
//!
//! `cargo bench -p geoberg-table --bench row_changes` (release); `GEOBERG_BENCH_ROWS` changes
//! the row count, `GEOBERG_BENCH_RUNS` the timed runs per measurement (median reported). Each
//! change is timed on a fresh copy of the same table version (a change commits; the next run
//! starts from the version before it).

mod points;

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{ArrayRef, Int64Array, RecordBatch};
use geoberg_table::{
    BBox, Catalog, RowChangeMode, RowDeltaReport, RowFilter, SqliteCatalog, Table, TableIdent,
};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// Runs `change` `runs` times, each on its own copy of `base` (the same metadata registered
/// under a new name, so that one run's commit does not conflict with the next), and returns
/// the last report and the median time.
fn time_change(
    base: &Table,
    runs: usize,
    change: impl Fn(&Table) -> (Table, RowDeltaReport),
) -> (RowDeltaReport, Duration) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let copy = copy_of(base);
        let start = Instant::now();
        let (_, report) = change(&copy);
        times.push(start.elapsed());
        last = Some(report);
    }
    (last.unwrap(), median(times))
}

/// `base`'s current version registered as a new table.
fn copy_of(base: &Table) -> Table {
    static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let ident = TableIdent::new("bench", &format!("copy{n}")).unwrap();
    base.catalog()
        .register_table(&ident, base.metadata_location())
        .unwrap();
    Table::load(base.catalog().clone(), &ident).unwrap()
}

/// Median time of a scan (full when `window` is `None`) and the rows it returned.
fn time_scan(table: &Table, window: Option<BBox>, runs: usize) -> (usize, Duration) {
    let mut times = Vec::with_capacity(runs);
    let mut rows = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let scan = table.scan().select(["id", "g"]);
        let scan = match window {
            Some(w) => scan.with_window("g", w).exact(true),
            None => scan,
        };
        let (batches, _) = scan.execute().unwrap();
        times.push(start.elapsed());
        rows = batches.iter().map(RecordBatch::num_rows).sum();
    }
    (rows, median(times))
}

fn window_filter(w: BBox) -> RowFilter {
    RowFilter::from_predicate(
        geoberg_sql::parse_condition(&format!(
            "ST_Intersects(g, ST_MakeEnvelope({}, {}, {}, {}, 4326))",
            w.min_x, w.min_y, w.max_x, w.max_y
        ))
        .unwrap(),
    )
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
    let start = Instant::now();
    let table = points::clustered_table(catalog, rows);
    eprintln!("append + CREATE SPATIAL INDEX: {:.1?}", start.elapsed());
    // 36 x 17 degrees: 1% of the data's extent.
    let window = BBox::new(10.0, 20.0, 46.0, 37.0);
    println!("rows: {rows}, 64 files after the index, runs: {runs} (median)\n");

    println!(
        "| change | mode | rows changed | files scanned | files written | bytes written | time |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    for mode in [RowChangeMode::CopyOnWrite, RowChangeMode::MergeOnRead] {
        let (r, t) = time_change(&table, runs, |t| {
            t.delete(window_filter(window))
                .mode(mode)
                .execute()
                .unwrap()
        });
        println!(
            "| DELETE 1% window | {} | {} | {} of {} | {} data + {} delete | {} | {} |",
            mode.name(),
            r.deleted_rows,
            r.files_scanned,
            r.files_total,
            r.added_data_files,
            r.added_delete_files,
            r.bytes_written,
            ms(t)
        );
        // 1% of the rows by id (spread over every file after clustering).
        let every = 100i64;
        let (r, t) = time_change(&table, runs, |t| {
            t.update(RowFilter::from_predicate(
                geoberg_sql::parse_condition(&format!("id < {}", rows as i64 / every)).unwrap(),
            ))
            .set("id", |b: &RecordBatch| -> geoberg_table::Result<ArrayRef> {
                let ids = b.column_by_name("id").unwrap();
                let ids = ids.as_any().downcast_ref::<Int64Array>().unwrap();
                Ok(Arc::new(Int64Array::from_iter_values(
                    ids.values().iter().map(|v| -v - 1),
                )))
            })
            .mode(mode)
            .execute()
            .unwrap()
        });
        println!(
            "| UPDATE 1% of rows (`id < {}`) | {} | {} | {} of {} | {} data + {} delete | {} | {} |",
            rows as i64 / every,
            mode.name(),
            r.updated_rows,
            r.files_scanned,
            r.files_total,
            r.added_data_files,
            r.added_delete_files,
            r.bytes_written,
            ms(t)
        );
    }

    println!("\n| scan | deletion vectors | rows | time |");
    println!("|---|---:|---:|---:|");
    // k deletion vectors: one row deleted (merge-on-read) in each of the first k files.
    for k in [0usize, 1, 8, 64] {
        let mut with_dvs = copy_of(&table);
        if k > 0 {
            let files = with_dvs.scan().plan().unwrap().files;
            let ids: Vec<String> = files
                .iter()
                .take(k)
                .map(|f| {
                    let (batches, _) = with_dvs
                        .scan()
                        .files([f.path.clone()])
                        .select(["id"])
                        .execute()
                        .unwrap();
                    let ids = batches[0].column(0);
                    let ids = ids.as_any().downcast_ref::<Int64Array>().unwrap();
                    ids.value(0).to_string()
                })
                .collect();
            with_dvs = with_dvs
                .delete(RowFilter::from_predicate(
                    geoberg_sql::parse_condition(&format!("id IN ({})", ids.join(", "))).unwrap(),
                ))
                .mode(RowChangeMode::MergeOnRead)
                .execute()
                .unwrap()
                .0;
        }
        for (label, w) in [("full", None), ("1% window", Some(window))] {
            let (n, t) = time_scan(&with_dvs, w, runs);
            println!("| {label} | {k} | {n} | {} |", ms(t));
        }
    }
}
