//! Seed 002's backfill measured (issue 20): `backfill [rows] [partitions] [appends]
//! [target-file-bytes]` appends skewed points (clusters around 40 "cities" plus a uniform
//! background; each append one day's partition, `appends / partitions` appends a day) to a table
//! without bbox columns, then runs `add_bbox_columns` and the per-partition backfill, and prints
//! the time, the bytes written, peak memory and the files that window queries read before and
//! after: seed 002's bbox-column range query (what an engine without geometry support reads)
//! and geoberg's own window scan.
//!
//! Release build: `cargo run --release -p geoberg-table --example backfill -- 4000000 16 64`.

use std::sync::Arc;
use std::time::Instant;

use arrow_array::{RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_table::{
    BBox, Catalog, Column, CreateTable, DataType, PartitionField, SqliteCatalog, Table, TableIdent,
};

#[path = "common/skewed_points.rs"]
mod skewed_points;

use skewed_points::{Rng, batch, points};

/// Rows `ids` of day `day`: `id`, `day`, `geom`.
fn day_batch(ids: std::ops::Range<usize>, xy: &[(f64, f64)], day: usize) -> RecordBatch {
    let b = batch(ids, xy);
    let mut fields: Vec<Field> = b
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields.insert(1, Field::new("day", ArrowType::Utf8, true));
    let mut columns = b.columns().to_vec();
    columns.insert(
        1,
        Arc::new(StringArray::from(vec![
            format!("2026-11-{:02}", day + 1);
            b.num_rows()
        ])),
    );
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

/// Mean files read by `windows` square windows of 1% of the world, centred on random rows:
/// (bbox-column range query, geoberg's window scan).
fn files_read(table: &Table, xy: &[(f64, f64)], windows: usize) -> (f64, f64) {
    let (w, h) = (36.0, 17.0);
    let mut rng = Rng(7);
    let (mut ranges, mut scans) = (0usize, 0usize);
    for _ in 0..windows {
        let (cx, cy) = xy[(rng.next() % xy.len() as u64) as usize];
        let window = BBox::new(cx - w / 2.0, cy - h / 2.0, cx + w / 2.0, cy + h / 2.0);
        let query = geoberg_sql::parse_condition(&format!(
            "bbox_max_x >= {:?} AND bbox_min_x <= {:?} AND bbox_max_y >= {:?} AND bbox_min_y <= {:?}",
            window.min_x, window.max_x, window.min_y, window.max_y
        ))
        .unwrap();
        ranges += table.files_matching(&query).unwrap().len();
        scans += table
            .scan()
            .with_window("geom", window)
            .plan()
            .unwrap()
            .explain
            .files_read;
    }
    (
        ranges as f64 / windows as f64,
        scans as f64 / windows as f64,
    )
}

/// Peak resident memory of this process (Linux `VmHWM`), in MiB.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let arg = |i: usize, default: usize| args.get(i).copied().unwrap_or(default);
    let (rows, partitions, appends, target) =
        (arg(0, 4_000_000), arg(1, 16), arg(2, 64), arg(3, 1 << 20));
    let xy = points(rows);
    let dir = tempfile::tempdir()?;
    let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(
        dir.path().join("catalog.db"),
        "geoberg",
        dir.path().join("warehouse"),
    )?);
    catalog.create_namespace("bench")?;
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("day", DataType::String),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .partition_by(PartitionField::identity("day"))
    .property("write.target-file-size-bytes", target.to_string())
    .create(catalog, &TableIdent::new("bench", "telemetry")?)?;
    let per = rows.div_ceil(appends);
    let started = Instant::now();
    for a in 0..appends {
        let ids = a * per..((a + 1) * per).min(rows);
        if !ids.is_empty() {
            table = table
                .append(&[day_batch(ids, &xy, a * partitions / appends)])?
                .0;
        }
    }
    let load = started.elapsed();
    let input_bytes: u64 = table
        .data_files()?
        .iter()
        .map(|f| f.file_size_in_bytes())
        .sum();
    println!(
        "{rows} points in {partitions} partitions, {appends} appends ({} files, {input_bytes} \
         bytes) in {:.1} s; write.target-file-size-bytes {target}",
        table.data_files()?.len(),
        load.as_secs_f64()
    );

    let started = Instant::now();
    let (added, report) = table.add_bbox_columns("geom", None)?;
    let add = started.elapsed();
    println!("{report} in {:.1} ms", add.as_secs_f64() * 1e3);
    let windows = 200;
    let before = files_read(&added, &xy, windows);

    let started = Instant::now();
    let (filled, report) = added.backfill_bbox_columns("geom").execute()?;
    let backfill = started.elapsed();
    let after = files_read(&filled, &xy, windows);
    println!("{report}");
    println!(
        "backfill {:.2} s, {:.1} MB/s of input, {} bytes written; peak RSS {:.0} MiB",
        backfill.as_secs_f64(),
        input_bytes as f64 / 1e6 / backfill.as_secs_f64(),
        report.added_bytes_count,
        peak_rss_mib().unwrap_or(f64::NAN)
    );
    println!("| {windows} windows of 1% | files before | files after |");
    println!("|---|---:|---:|");
    println!(
        "| bbox-column range query | {:.1} of {} | {:.1} of {} |",
        before.0,
        added.data_files()?.len(),
        after.0,
        report.files_total
    );
    println!("| geoberg window scan | {:.1} | {:.1} |", before.1, after.1);
    let (again, rerun) = filled.backfill_bbox_columns("geom").execute()?;
    assert_eq!(rerun.partitions_backfilled, 0);
    assert_eq!(
        again.metadata().current_snapshot_id(),
        filled.metadata().current_snapshot_id()
    );
    println!(
        "re-run: {} partitions skipped, nothing committed",
        rerun.partitions_skipped
    );
    Ok(())
}
