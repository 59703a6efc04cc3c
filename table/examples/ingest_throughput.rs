//! Records per second of streaming ingest (seed 003's messages) on this machine, as
//! newline-delimited JSON (`Table::ingest`) and as an Arrow IPC stream (`Table::ingest_arrow`).
//!
//! `ingest_throughput [records] [batch-rows] [batch-seconds] [json|arrow|both]` writes `records`
//! messages (skewed points in EPSG:4326) to a temporary file: JSON lines with the numbers as
//! strings, as the seed sends them, or an IPC stream of 8,192-row batches with `location {lon,
//! lat, crs}` and `velocity {value, unitOfMeasure}` struct columns (numbers as doubles). It
//! ingests them into a table clustered by `CREATE SPATIAL INDEX` (so cluster on write cuts every
//! commit) with a commit every `batch-rows` records or `batch-seconds`, and prints records/s with
//! the commit count; `both` (the default) measures each format on a fresh table. The file is
//! read faster than it is committed, so `batch-rows` sets the commit size: at R records/s,
//! 1-second commits hold R records.

use std::io::{BufReader, BufWriter, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use arrow_array::{Array, ArrayRef, Float64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType as ArrowType, Field, Fields, Schema};
use geoberg_table::{
    Catalog, Column, CreateTable, DataType, IngestOptions, SqliteCatalog, Table, TableIdent,
};

#[path = "common/skewed_points.rs"]
mod skewed_points;

use skewed_points::{batch, points};

/// A table of 400,000 clustered points (`CREATE SPATIAL INDEX` into 64 files) in `dir`.
fn clustered_table(
    dir: &std::path::Path,
    xy: &[(f64, f64)],
) -> Result<Table, Box<dyn std::error::Error>> {
    let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(
        dir.join("catalog.db"),
        "geoberg",
        dir.join("warehouse"),
    )?);
    catalog.create_namespace("iot")?;
    let table = CreateTable::new([
        Column::new("id", DataType::String).required(),
        Column::new("velocity_value", DataType::Double),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(catalog, &TableIdent::new("iot", "telemetry")?)?;
    let base = batch(0..400_000, xy);
    let base = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Utf8, false),
            base.schema().field(1).clone(),
        ])),
        vec![
            Arc::new(StringArray::from_iter_values(
                (0..400_000).map(|i| format!("base-{i}")),
            )),
            base.column(1).clone(),
        ],
    )?;
    let table = table.append(&[base])?.0;
    Ok(table
        .rewrite()
        .hilbert("geom", 16)
        .option("target-file-count", "64")
        .execute()?
        .0)
}

fn write_json(path: &std::path::Path, xy: &[(f64, f64)]) -> std::io::Result<()> {
    let mut out = BufWriter::new(std::fs::File::create(path)?);
    for (i, (x, y)) in xy.iter().enumerate() {
        writeln!(
            out,
            r#"{{"location": {{"lon": "{x:.6}", "lat": "{y:.6}", "crs": "EPSG:4326"}}, "velocity": {{"value": {}, "unitOfMeasure": "km/h"}}, "id": "{i:08x}"}}"#,
            i % 130
        )?;
    }
    out.flush()
}

fn write_arrow(
    path: &std::path::Path,
    xy: &[(f64, f64)],
) -> Result<(), Box<dyn std::error::Error>> {
    let structs = |fields: Vec<(&str, ArrayRef)>| {
        let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = fields
            .into_iter()
            .map(|(n, a)| (Field::new(n, a.data_type().clone(), true), a))
            .unzip();
        StructArray::new(Fields::from(fields), arrays, None)
    };
    let mut writer = None;
    for (k, chunk) in xy.chunks(8_192).enumerate() {
        let n = chunk.len();
        let location = structs(vec![
            (
                "lon",
                Arc::new(Float64Array::from_iter_values(chunk.iter().map(|p| p.0))),
            ),
            (
                "lat",
                Arc::new(Float64Array::from_iter_values(chunk.iter().map(|p| p.1))),
            ),
            ("crs", Arc::new(StringArray::from(vec!["EPSG:4326"; n]))),
        ]);
        let velocity = structs(vec![
            (
                "value",
                Arc::new(Float64Array::from_iter_values(
                    (0..n).map(|i| ((k * 8_192 + i) % 130) as f64),
                )),
            ),
            (
                "unitOfMeasure",
                Arc::new(StringArray::from(vec!["km/h"; n])),
            ),
        ]);
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", ArrowType::Utf8, false),
                Field::new("location", location.data_type().clone(), true),
                Field::new("velocity", velocity.data_type().clone(), true),
            ])),
            vec![
                Arc::new(StringArray::from_iter_values(
                    (0..n).map(|i| format!("{:08x}", k * 8_192 + i)),
                )),
                Arc::new(location),
                Arc::new(velocity),
            ],
        )?;
        let writer = match &mut writer {
            Some(w) => w,
            None => writer.insert(arrow_ipc::writer::StreamWriter::try_new(
                BufWriter::new(std::fs::File::create(path)?),
                &batch.schema(),
            )?),
        };
        writer.write(&batch)?;
    }
    if let Some(mut w) = writer {
        w.finish()?;
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let records: usize = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let batch_rows: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let seconds: f64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1.0);
    let formats: &[&str] = match args.get(3).map(String::as_str) {
        Some("json") => &["json"],
        Some("arrow") => &["arrow"],
        None | Some("both") => &["json", "arrow"],
        Some(other) => return Err(format!("format {other:?}: json, arrow or both").into()),
    };
    let xy = points(400_000 + records);
    let options = IngestOptions {
        batch_rows,
        batch_interval: Duration::from_secs_f64(seconds),
        ..IngestOptions::default()
    };
    for format in formats {
        let dir = tempfile::tempdir()?;
        let table = clustered_table(dir.path(), &xy)?;
        let path = dir.path().join("messages");
        match *format {
            "json" => write_json(&path, &xy[400_000..])?,
            _ => write_arrow(&path, &xy[400_000..])?,
        }
        let bytes = std::fs::metadata(&path)?.len();
        let stop = AtomicBool::new(false);
        let start = Instant::now();
        let (table, p) = match *format {
            "json" => {
                let input = BufReader::new(std::fs::File::open(&path)?);
                table.ingest(input, &mut std::io::sink(), &options, &stop, |_| {})?
            }
            _ => {
                let input = std::fs::File::open(&path)?;
                table.ingest_arrow(input, &mut std::io::sink(), &options, &stop, |_| {})?
            }
        };
        let elapsed = start.elapsed().as_secs_f64();
        println!(
            "{format}: {} records ({:.0} MB) in {elapsed:.2} s: {:.0} records/s, {} commits of \
             at most {batch_rows} rows or {seconds} s, {} data files after",
            p.rows_committed,
            bytes as f64 / 1e6,
            p.rows_committed as f64 / elapsed,
            p.commits,
            table.data_files()?.len()
        );
    }
    Ok(())
}
