//! Driver for `interop/check.py`: the Rust side of the interop round trip.
//!
//! `interop scan <catalog.db> <catalog-name> <namespace.table> <geom-col> <minx> <miny> <maxx> <maxy>`
//! prints a JSON line with the explain counters and the sorted ids read.
//! `interop write <catalog.db> <warehouse>` creates `geo.points_v3` (geometry(4326), 8 files)
//! and `geo.points_v2` (legacy geometry + bbox columns, format-version 2) and prints their rows.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_table::{
    BBox, Catalog, Column, CreateTable, DataType, SqliteCatalog, Table, TableIdent,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("scan") => scan(&args[1..]),
        Some("write") => write(&args[1..]),
        Some("rewrite") => rewrite(&args[1..]),
        _ => Err("usage: interop scan|write|rewrite ...".into()),
    }
}

fn scan(a: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(&a[0], &a[1], "/")?);
    let table = Table::load(catalog, &TableIdent::parse(&a[2])?)?;
    let w: Vec<f64> = a[4..8]
        .iter()
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    let (batches, explain) = table
        .scan()
        .with_window(&a[3], BBox::new(w[0], w[1], w[2], w[3]))
        .select(["id"])
        .execute()?;
    let mut ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let c = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            c.values().to_vec()
        })
        .collect();
    ids.sort_unstable();
    println!(
        "{}",
        serde_json::json!({
            "files_total": explain.files_total, "files_read": explain.files_read,
            "files_skipped": explain.files_skipped, "ids": ids, "reasons": explain.reasons,
        })
    );
    Ok(())
}

/// `interop rewrite <catalog.db> <catalog-name> <namespace.table> <precision>`: CREATE SPATIAL
/// INDEX with small output files; prints the procedure result as JSON.
fn rewrite(a: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(&a[0], &a[1], "/")?);
    let table = Table::load(catalog, &TableIdent::parse(&a[2])?)?;
    let (table, report) = table
        .rewrite()
        .hilbert("geom", a[3].parse()?)
        .option("target-file-count", "4")
        .execute()?;
    println!(
        "{}",
        serde_json::json!({
            "rewritten_data_files_count": report.rewritten_data_files_count,
            "added_data_files_count": report.added_data_files_count,
            "metadata_location": table.metadata_location(),
        })
    );
    Ok(())
}

fn point(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1u8, 1, 0, 0, 0];
    v.extend_from_slice(&x.to_le_bytes());
    v.extend_from_slice(&y.to_le_bytes());
    v
}

fn write(a: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(&a[0], "geoberg", &a[1])?);
    catalog.create_namespace("geo")?;
    let v3 = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("name", DataType::String),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(catalog.clone(), &TableIdent::new("geo", "points_v3")?)?;
    let v2 = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::LEGACY_GEOMETRY),
    ])
    .allow_undeclared_crs()
    .with_bbox_columns("geom")
    .create(catalog, &TableIdent::new("geo", "points_v2")?)?;
    let (mut v3, mut v2) = (v3, v2);
    let mut rows = Vec::new();
    for file in 0..8i64 {
        // each file one 10°-wide band of longitude
        let ids: Vec<i64> = (file * 50..file * 50 + 50).collect();
        let xy: Vec<(f64, f64)> = ids
            .iter()
            .map(|&i| (file as f64 * 10.0 + (i % 10) as f64, (i % 50) as f64 - 25.0))
            .collect();
        let geoms: Vec<Vec<u8>> = xy.iter().map(|&(x, y)| point(x, y)).collect();
        let label = HashMap::from([("srid".to_string(), "4326".to_string())]);
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", ArrowType::Int64, false),
                Field::new("name", ArrowType::Utf8, true),
                Field::new("geom", ArrowType::Binary, true).with_metadata(label),
            ])),
            vec![
                Arc::new(Int64Array::from(ids.clone())),
                Arc::new(arrow_array::StringArray::from_iter_values(
                    ids.iter().map(|i| format!("p{i}")),
                )),
                Arc::new(BinaryArray::from_iter_values(geoms.iter())),
            ],
        )?;
        v3 = v3.append(std::slice::from_ref(&batch))?.0;
        v2 = v2.append(&[batch.project(&[0, 2])?])?.0;
        for (i, (x, y)) in ids.iter().zip(&xy) {
            rows.push(serde_json::json!({"id": i, "x": x, "y": y}));
        }
    }
    let geom = v3.scan().execute()?.0;
    let n: usize = geom.iter().map(|b| b.column(2).len()).sum();
    println!("{}", serde_json::json!({"rows": rows, "count": n}));
    Ok(())
}
