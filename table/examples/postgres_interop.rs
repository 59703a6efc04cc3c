//! Driver for `interop/postgres_check.py`: pyiceberg reads tables geoberg wrote to a PostgreSQL
//! catalog, and geoberg reads the table pyiceberg then wrote there.
//!
//! `postgres_interop <python> <postgres_check.py> <workdir>` starts a PostgreSQL server
//! (`geoberg-testkit`), writes `geo.points_v3` (geometry(4326), 4 files) and `geo.points_v2`
//! (legacy geometry, format-version 2) through a `PostgresCatalog`, runs the check script with
//! a `postgresql+psycopg2://` URI and the rows written, then loads `geo.from_pyiceberg`, which
//! the script created, and compares its ids. Exits non-zero on the first mismatch; the server is
//! stopped at the end either way.

use std::collections::HashMap;
use std::process::Command;
use std::sync::Arc;

use arrow_array::{Array, BinaryArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_table::{Catalog, Column, CreateTable, DataType, PostgresCatalog, Table, TableIdent};
use geoberg_testkit::PostgresServer;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [python, script, work] = args.as_slice() else {
        return Err("usage: postgres_interop <python> <postgres_check.py> <workdir>".into());
    };
    let warehouse = std::path::absolute(work)?.join("warehouse");
    std::fs::create_dir_all(&warehouse)?;
    let pg = PostgresServer::try_start()?;
    let catalog: Arc<dyn Catalog> =
        Arc::new(PostgresCatalog::connect(&pg.url(), "geoberg", &warehouse)?);
    let written = write(catalog.clone())?;

    let uri = pg
        .url()
        .replacen("postgresql://", "postgresql+psycopg2://", 1);
    let status = Command::new(python)
        .arg(script)
        .arg(&uri)
        .arg(&warehouse)
        .arg(serde_json::to_string(&written)?)
        .status()?;
    if !status.success() {
        return Err(format!("{script} failed: {status}").into());
    }

    // The reverse: geoberg loads what pyiceberg wrote to the same catalog.
    let theirs = Table::load(catalog, &TableIdent::new("geo", "from_pyiceberg")?)?;
    let (batches, _) = theirs.scan().execute()?;
    let mut ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let c = b.column(b.schema().index_of("id").unwrap()).clone();
            c.as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    ids.sort_unstable();
    if ids != (0..100).collect::<Vec<i64>>() {
        return Err(format!("geoberg read ids {ids:?} from pyiceberg's table").into());
    }
    println!("ok: geoberg loads and reads the table pyiceberg wrote to the PostgreSQL catalog");
    Ok(())
}

fn point(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1u8, 1, 0, 0, 0];
    v.extend_from_slice(&x.to_le_bytes());
    v.extend_from_slice(&y.to_le_bytes());
    v
}

/// Writes both tables; returns what the script checks against.
fn write(catalog: Arc<dyn Catalog>) -> Res<serde_json::Value> {
    catalog.create_namespace("geo")?;
    let mut v3 = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("name", DataType::String),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(catalog.clone(), &TableIdent::new("geo", "points_v3")?)?;
    let mut v2 = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::LEGACY_GEOMETRY),
    ])
    .allow_undeclared_crs()
    .create(catalog, &TableIdent::new("geo", "points_v2")?)?;
    let mut rows = Vec::new();
    for file in 0..4i64 {
        let ids: Vec<i64> = (file * 25..file * 25 + 25).collect();
        let xy: Vec<(f64, f64)> = ids
            .iter()
            .map(|&i| (file as f64 * 10.0 + (i % 10) as f64, (i % 25) as f64 - 12.0))
            .collect();
        let label = HashMap::from([("srid".to_string(), "4326".to_string())]);
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", ArrowType::Int64, false),
                Field::new("name", ArrowType::Utf8, true),
                Field::new("geom", ArrowType::Binary, true).with_metadata(label),
            ])),
            vec![
                Arc::new(Int64Array::from(ids.clone())),
                Arc::new(StringArray::from_iter_values(
                    ids.iter().map(|i| format!("p{i}")),
                )),
                Arc::new(BinaryArray::from_iter_values(
                    xy.iter().map(|&(x, y)| point(x, y)),
                )),
            ],
        )?;
        v3 = v3.append(std::slice::from_ref(&batch))?.0;
        v2 = v2.append(&[batch.project(&[0, 2])?])?.0;
        for (i, (x, y)) in ids.iter().zip(&xy) {
            rows.push(serde_json::json!({"id": i, "x": x, "y": y}));
        }
    }
    Ok(serde_json::json!({
        "rows": rows,
        "v3_metadata": v3.metadata_location(),
        "v2_metadata": v2.metadata_location(),
    }))
}
