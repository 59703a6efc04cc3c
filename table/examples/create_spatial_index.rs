//! Times `CREATE SPATIAL INDEX` end to end on the 2 M-point table.
//!
//! `create_spatial_index prepare <dir> [rows] [files]` writes the table (id, x, y, bbox columns,
//! geometry(4326), name, value, category; uniform over lon [-180, 180) x lat [-85, 85)) as
//! `files` appended data files into a SQLite catalog under `<dir>`.
//! `create_spatial_index run <dir> [precision] [target-file-count]` runs `CREATE SPATIAL INDEX FOR bench.points
//! USING hilbert(geom, precision)` and prints the wall time, the procedure result and a 1 %
//! window's files read before and after. Run the two in separate processes so that
//! `/usr/bin/time -v` measures the rewrite's peak RSS alone.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{BinaryArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_table::{
    BBox, Catalog, Column, CreateTable, DataType, SqliteCatalog, Table, TableIdent,
    execute_rewrite_statement,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: u64| args.get(i).and_then(|v| v.parse().ok()).unwrap_or(default);
    match (args.first().map(String::as_str), args.get(1)) {
        (Some("prepare"), Some(dir)) => prepare(dir, arg(2, 2_000_000), arg(3, 8)),
        (Some("run"), Some(dir)) => run(dir, arg(2, 16), args.get(3)),
        _ => Err("usage: create_spatial_index prepare|run <dir> ...".into()),
    }
}

fn catalog(dir: &str) -> Result<Arc<dyn Catalog>, Box<dyn std::error::Error>> {
    let dir = std::path::Path::new(dir);
    Ok(Arc::new(SqliteCatalog::open(
        dir.join("catalog.db"),
        "geoberg",
        dir.join("warehouse"),
    )?))
}

fn prepare(dir: &str, rows: u64, files: u64) -> Result<(), Box<dyn std::error::Error>> {
    let catalog = catalog(dir)?;
    catalog.create_namespace("bench")?;
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("x", DataType::Double),
        Column::new("y", DataType::Double),
        Column::new("geom", DataType::geometry(4326)),
        Column::new("name", DataType::String),
        Column::new("value", DataType::Double),
        Column::new("category", DataType::String),
    ])
    .with_bbox_columns("geom")
    .create(catalog, &TableIdent::new("bench", "points")?)?;
    let per_file = rows.div_ceil(files);
    for f in 0..files {
        let ids = f * per_file..((f + 1) * per_file).min(rows);
        table = table.append(&[batch(ids)?])?.0;
    }
    println!("prepared {rows} rows in {files} files under {dir}");
    Ok(())
}

fn batch(ids: std::ops::Range<u64>) -> Result<RecordBatch, Box<dyn std::error::Error>> {
    let xy: Vec<(f64, f64)> = ids.clone().map(uniform).collect();
    let wkb = xy.iter().map(|&(x, y)| {
        let mut v = vec![1u8, 1, 0, 0, 0];
        v.extend_from_slice(&x.to_le_bytes());
        v.extend_from_slice(&y.to_le_bytes());
        v
    });
    let srid = HashMap::from([("srid".to_string(), "4326".to_string())]);
    let schema = Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("x", ArrowType::Float64, true),
        Field::new("y", ArrowType::Float64, true),
        Field::new("geom", ArrowType::Binary, true).with_metadata(srid),
        Field::new("name", ArrowType::Utf8, true),
        Field::new("value", ArrowType::Float64, true),
        Field::new("category", ArrowType::Utf8, true),
    ]);
    Ok(RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from_iter_values(ids.clone().map(|i| i as i64))),
            Arc::new(Float64Array::from_iter_values(xy.iter().map(|p| p.0))),
            Arc::new(Float64Array::from_iter_values(xy.iter().map(|p| p.1))),
            Arc::new(BinaryArray::from_iter_values(wkb)),
            Arc::new(StringArray::from_iter_values(
                ids.clone().map(|i| format!("feature-{i}")),
            )),
            Arc::new(Float64Array::from_iter_values(
                ids.clone().map(|i| (i % 1000) as f64 * 0.5),
            )),
            Arc::new(StringArray::from_iter_values(ids.map(|i| {
                ["road", "building", "water", "park"][(i % 4) as usize]
            }))),
        ],
    )?)
}

/// Splitmix64 of the id, mapped to lon [-180, 180) x lat [-85, 85).
fn uniform(i: u64) -> (f64, f64) {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let a = (z >> 32) as f64 / (1u64 << 32) as f64;
    let b = (z & 0xFFFF_FFFF) as f64 / (1u64 << 32) as f64;
    (-180.0 + 360.0 * a, -85.0 + 170.0 * b)
}

fn run(
    dir: &str,
    precision: u64,
    file_count: Option<&String>,
) -> Result<(), Box<dyn std::error::Error>> {
    let catalog = catalog(dir)?;
    let window = BBox::new(10.0, 10.0, 46.0, 27.0); // 1 % of the data area
    let table = Table::load(catalog.clone(), &TableIdent::new("bench", "points")?)?;
    let before = table.scan().with_window("geom", window).plan()?.explain;
    let mut sql = format!("CREATE SPATIAL INDEX FOR bench.points USING hilbert(geom, {precision})");
    if let Some(n) = file_count {
        sql.push_str(&format!(" OPTIONS map('target-file-count', '{n}')"));
    }
    let geoberg_sql::Statement::Rewrite(request) = geoberg_sql::parse(&sql)? else {
        return Err("not a rewrite statement".into());
    };
    let start = Instant::now();
    let (table, report) = execute_rewrite_statement(catalog, &request)?;
    let elapsed = start.elapsed();
    let after = table.scan().with_window("geom", window).plan()?.explain;
    println!("{sql}: {:.3} s", elapsed.as_secs_f64());
    println!("{report}");
    println!(
        "1% window: {} of {} files read before, {} of {} after; spilled {} bytes",
        before.files_read,
        before.files_total,
        after.files_read,
        after.files_total,
        report.spilled_bytes
    );
    Ok(())
}
