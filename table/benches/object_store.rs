//! The same table on local disk and in S3 (a SeaweedFS server on 127.0.0.1, started by
//! geoberg-testkit, reached through its recording proxy): append, `CREATE SPATIAL INDEX`,
//! planning a 1% window from the manifests, and the window scan, with the S3 requests and
//! ranged bytes the scan fetched. Prints a Markdown table.
//!
//! `cargo bench -p geoberg-table --bench object_store` (release; needs `bash
//! .ci/install-servers`); `GEOBERG_BENCH_ROWS` (default 2,000,000), `GEOBERG_BENCH_COMMITS`
//! (appends, default 64) and `GEOBERG_BENCH_RUNS` (timed runs of the plan and scan, median).

mod points;

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use geoberg_table::{
    BBox, Catalog, Column, CreateTable, DataType, SqliteCatalog, Storage, Table, TableIdent,
};
use geoberg_testkit::{S3FaultProxy, S3Server};

fn batches(rows: usize, commits: usize) -> Vec<RecordBatch> {
    let per = rows.div_ceil(commits);
    (0..rows)
        .step_by(per)
        .map(|start| points::batch(start..rows.min(start + per), "g"))
        .collect()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

struct Steps {
    append: Duration,
    index: Duration,
    plan: Duration,
    scan: Duration,
    files: String,
    bytes_read: u64,
    rows: usize,
}

fn run(
    catalog: Arc<dyn Catalog>,
    input: &[RecordBatch],
    window: BBox,
    runs: usize,
) -> (Table, Steps) {
    let start = Instant::now();
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("g", DataType::parse("geometry(4326)").unwrap()),
    ])
    .create(catalog, &TableIdent::new("bench", "points").unwrap())
    .unwrap();
    for batch in input {
        table = table.append(std::slice::from_ref(batch)).unwrap().0;
    }
    let append = start.elapsed();
    let start = Instant::now();
    let table = table
        .rewrite()
        .hilbert("g", 16)
        .option("target-file-count", "64")
        .execute()
        .unwrap()
        .0;
    let index = start.elapsed();
    // Each plan and scan starts from a freshly loaded table (nothing cached in the handle).
    let fresh = || Table::load(table.catalog().clone(), table.ident()).unwrap();
    let plan = median(
        (0..runs)
            .map(|_| {
                let t = fresh();
                let start = Instant::now();
                t.scan().with_window("g", window).plan().unwrap();
                start.elapsed()
            })
            .collect(),
    );
    let mut last = None;
    let scan = median(
        (0..runs)
            .map(|_| {
                let t = fresh();
                let start = Instant::now();
                let (b, explain) = t
                    .scan()
                    .with_window("g", window)
                    .exact(true)
                    .execute()
                    .unwrap();
                let elapsed = start.elapsed();
                last = Some((b.iter().map(RecordBatch::num_rows).sum::<usize>(), explain));
                elapsed
            })
            .collect(),
    );
    let (rows, explain) = last.unwrap();
    let steps = Steps {
        append,
        index,
        plan,
        scan,
        files: format!("{} / {}", explain.files_read, explain.files_total),
        bytes_read: explain.bytes_read,
        rows,
    };
    (table, steps)
}

/// Sum of the `Range: bytes=a-b` lengths of GET requests.
fn ranged_bytes(range: &str) -> u64 {
    let Some(spec) = range.strip_prefix("bytes=") else {
        return 0;
    };
    let mut parts = spec.splitn(2, '-');
    match (
        parts.next().and_then(|a| a.parse::<u64>().ok()),
        parts.next().and_then(|b| b.parse::<u64>().ok()),
    ) {
        (Some(a), Some(b)) if b >= a => b - a + 1,
        _ => 0,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let rows = points::env("GEOBERG_BENCH_ROWS", 2_000_000);
    let commits = points::env("GEOBERG_BENCH_COMMITS", 64);
    let runs = points::env("GEOBERG_BENCH_RUNS", 5);
    let input = batches(rows, commits);
    // 36 x 17 degrees: 1% of the data's extent.
    let window = BBox::new(10.0, 20.0, 46.0, 37.0);

    let local_dir = tempfile::tempdir().unwrap();
    let local: Arc<dyn Catalog> = Arc::new(
        SqliteCatalog::open(
            local_dir.path().join("c.db"),
            "bench",
            local_dir.path().join("wh"),
        )
        .unwrap(),
    );
    local.create_namespace("bench").unwrap();
    let (_, on_disk) = run(local, &input, window, runs);

    let s3 = S3Server::shared();
    let proxy = S3FaultProxy::start(s3.addr()).unwrap();
    let bucket = s3.fresh_bucket().unwrap();
    let s3_dir = tempfile::tempdir().unwrap();
    // Timed straight against the server; the same catalog through the recording proxy
    // counts the requests of one more scan.
    let remote = |endpoint: Vec<(&'static str, String)>| -> Arc<dyn Catalog> {
        Arc::new(
            SqliteCatalog::open(
                s3_dir.path().join("c.db"),
                "bench",
                format!("s3://{bucket}/wh"),
            )
            .unwrap()
            .with_storage(Storage::with_options(endpoint)),
        )
    };
    let direct = remote(s3.env());
    direct.create_namespace("bench").unwrap();
    let (table, in_s3) = run(direct, &input, window, runs);
    let before = proxy.exchanges().len();
    let t = Table::load(remote(s3.env_via(&proxy.endpoint_url())), table.ident()).unwrap();
    t.scan()
        .with_window("g", window)
        .exact(true)
        .execute()
        .unwrap();
    let scan_requests: Vec<_> = proxy.exchanges().into_iter().skip(before).collect();
    let gets = scan_requests.iter().filter(|e| e.method == "GET").count();
    let ranged: u64 = scan_requests
        .iter()
        .filter_map(|e| e.range.as_deref())
        .map(ranged_bytes)
        .sum();
    let whole_gets = scan_requests
        .iter()
        .filter(|e| e.method == "GET" && e.range.is_none())
        .count();

    println!(
        "rows: {rows} in {commits} appends, then 64 files after the index; runs: {runs} (median)\n"
    );
    println!("| step | local disk | S3 (SeaweedFS on 127.0.0.1) | S3 / local |");
    println!("|---|---:|---:|---:|");
    let ratio = |a: Duration, b: Duration| format!("{:.2}×", b.as_secs_f64() / a.as_secs_f64());
    for (name, a, b) in [
        (format!("{commits} appends"), on_disk.append, in_s3.append),
        (
            "CREATE SPATIAL INDEX".to_string(),
            on_disk.index,
            in_s3.index,
        ),
        (
            "plan a 1% window (fresh load)".to_string(),
            on_disk.plan,
            in_s3.plan,
        ),
        (
            "scan the window, exact (fresh load)".to_string(),
            on_disk.scan,
            in_s3.scan,
        ),
    ] {
        println!("| {name} | {} | {} | {} |", ms(a), ms(b), ratio(a, b));
    }
    println!(
        "\nwindow scan: files {} (local) / {} (S3), rows {} / {}, data-file bytes of the files read {} / {}",
        on_disk.files, in_s3.files, on_disk.rows, in_s3.rows, on_disk.bytes_read, in_s3.bytes_read
    );
    println!(
        "S3 requests of one window scan: {} ({} GET, of which {} whole-object GETs of metadata, \
         manifest lists and manifests); ranged bytes fetched: {}",
        scan_requests.len(),
        gets,
        whole_gets,
        ranged
    );
}
