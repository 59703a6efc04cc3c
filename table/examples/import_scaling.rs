//! Import time against file size (issue 29): for each row count given, writes a Parquet file
//! of trip-like rows in ONE row group (zstd: `id`, four doubles, a string, a WKB pickup point
//! with GeoParquet metadata), imports it into a fresh table with `import_parquet`, and prints
//! the time, rows/s and the bytes read from the file (through a counting store, so a reader
//! that re-reads the file shows up). Linear means rows/s stays flat as the file grows.
//!
//! Release build: `cargo run --release -p geoberg-table --example import_scaling -- 600000 6000000`.

use std::sync::Arc;
use std::time::Instant;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_table::testing::FaultyCatalog;
use geoberg_table::{Catalog, ImportOptions, SqliteCatalog, TableIdent, import_parquet};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

#[path = "common/skewed_points.rs"]
mod skewed_points;

use skewed_points::{Rng, points, wkb_point};

const GEO: &str = r#"{"version":"1.1.0","primary_column":"pickup","columns":{"pickup":{"encoding":"WKB","geometry_types":["Point"]}}}"#;

/// `rows` trip-like rows in one row group at `path`; the file's size.
fn write_file(path: &std::path::Path, rows: usize) -> u64 {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("fare", ArrowType::Float64, false),
        Field::new("tip", ArrowType::Float64, false),
        Field::new("distance", ArrowType::Float64, false),
        Field::new("duration", ArrowType::Float64, false),
        Field::new("vendor", ArrowType::Utf8, false),
        Field::new("pickup", ArrowType::Binary, true),
    ]));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows.max(1)))
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_key_value_metadata(Some(vec![KeyValue::new("geo".into(), GEO.to_string())]))
        .build();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        Arc::clone(&schema),
        Some(props),
    )
    .unwrap();
    let xy = points(rows);
    let mut rng = Rng(7);
    for start in (0..rows).step_by(1 << 16) {
        let end = (start + (1 << 16)).min(rows);
        let mut float = || -> ArrayRef {
            Arc::new(Float64Array::from_iter_values(
                (start..end).map(|_| (rng.unit() * 1e4).round() / 100.0),
            ))
        };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(start as i64..end as i64)),
            float(),
            float(),
            float(),
            float(),
            Arc::new(StringArray::from_iter_values(
                (start..end).map(|i| format!("vendor-{}", i % 7)),
            )),
            Arc::new(arrow_array::BinaryArray::from_iter_values(
                xy[start..end].iter().map(|&(x, y)| wkb_point(x, y)),
            )),
        ];
        w.write(&RecordBatch::try_new(Arc::clone(&schema), columns).unwrap())
            .unwrap();
    }
    w.close().unwrap();
    std::fs::metadata(path).unwrap().len()
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("row counts, e.g. 600000 6000000"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![600_000, 6_000_000]
    } else {
        sizes
    };
    let mut first: Option<f64> = None;
    for rows in sizes {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("trips.parquet");
        let size = write_file(&file, rows);
        let inner: Arc<dyn Catalog> = Arc::new(
            SqliteCatalog::open(
                dir.path().join("catalog.db"),
                "geoberg",
                dir.path().join("wh"),
            )
            .unwrap(),
        );
        let counting = Arc::new(FaultyCatalog::new(inner));
        let started = Instant::now();
        let report = import_parquet(
            counting.clone(),
            &TableIdent::new("bench", "trips").unwrap(),
            file.to_str().unwrap(),
            &ImportOptions::default(),
        )
        .unwrap();
        let secs = started.elapsed().as_secs_f64();
        assert_eq!(report.rows, rows as u64);
        let per_row = secs / rows as f64;
        let ratio = first.map_or(1.0, |f| per_row / f);
        first.get_or_insert(per_row);
        println!(
            "{rows} rows, {:.1} MB file in one row group: import {secs:.2} s, {:.2} M rows/s, \
             {:.2}x the file's bytes read, time per row {ratio:.2}x the first size's",
            size as f64 / 1e6,
            rows as f64 / secs / 1e6,
            counting.bytes_read("trips.parquet") as f64 / size as f64,
        );
    }
}
