//! Records per second of `Table::ingest` (seed 003's JSON messages) on this machine.
//!
//! `ingest_throughput [records] [batch-rows] [batch-seconds]` writes `records` messages (skewed
//! points in EPSG:4326, numbers as strings as the seed sends them) to a temporary file, ingests
//! them into a table clustered by `CREATE SPATIAL INDEX` (so cluster on write cuts every commit)
//! with a commit every `batch-rows` records or `batch-seconds`, and prints records/s with the
//! commit count. The file is read faster than it is committed, so `batch-rows` sets the commit
//! size: at R records/s, 1-second commits hold R records.

use std::io::{BufReader, BufWriter, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use geoberg_table::{
    Catalog, Column, CreateTable, DataType, IngestOptions, SqliteCatalog, TableIdent,
};

#[path = "common/skewed_points.rs"]
mod skewed_points;

use skewed_points::{batch, points};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let records: usize = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let batch_rows: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let seconds: f64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1.0);
    let dir = tempfile::tempdir()?;
    let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(
        dir.path().join("catalog.db"),
        "geoberg",
        dir.path().join("warehouse"),
    )?);
    catalog.create_namespace("iot")?;
    let table = CreateTable::new([
        Column::new("id", DataType::String).required(),
        Column::new("velocity_value", DataType::Double),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(catalog, &TableIdent::new("iot", "telemetry")?)?;

    // A clustered start: 400 000 points, CREATE SPATIAL INDEX into 64 files.
    let xy = points(400_000 + records);
    let base = batch(0..400_000, &xy);
    let base = arrow_array::RecordBatch::try_new(
        Arc::new(arrow_schema::Schema::new(vec![
            arrow_schema::Field::new("id", arrow_schema::DataType::Utf8, false),
            base.schema().field(1).clone(),
        ])),
        vec![
            Arc::new(arrow_array::StringArray::from_iter_values(
                (0..400_000).map(|i| format!("base-{i}")),
            )),
            base.column(1).clone(),
        ],
    )?;
    let table = table.append(&[base])?.0;
    let table = table
        .rewrite()
        .hilbert("geom", 16)
        .option("target-file-count", "64")
        .execute()?
        .0;

    let path = dir.path().join("messages.ndjson");
    let mut out = BufWriter::new(std::fs::File::create(&path)?);
    for (i, (x, y)) in xy[400_000..].iter().enumerate() {
        writeln!(
            out,
            r#"{{"location": {{"lon": "{x:.6}", "lat": "{y:.6}", "crs": "EPSG:4326"}}, "velocity": {{"value": {}, "unitOfMeasure": "km/h"}}, "id": "{i:08x}"}}"#,
            i % 130
        )?;
    }
    out.flush()?;
    let bytes = std::fs::metadata(&path)?.len();

    let options = IngestOptions {
        batch_rows,
        batch_interval: Duration::from_secs_f64(seconds),
        ..IngestOptions::default()
    };
    let input = BufReader::new(std::fs::File::open(&path)?);
    let start = Instant::now();
    let (table, p) = table.ingest(
        input,
        &mut std::io::sink(),
        &options,
        &AtomicBool::new(false),
        |_| {},
    )?;
    let elapsed = start.elapsed().as_secs_f64();
    println!(
        "{} records ({:.0} MB of JSON) in {elapsed:.2} s: {:.0} records/s, {} commits of \
         at most {batch_rows} rows or {seconds} s, {} data files after",
        p.rows_committed,
        bytes as f64 / 1e6,
        p.rows_committed as f64 / elapsed,
        p.commits,
        table.data_files()?.len()
    );
    Ok(())
}
