//! The table side of `geography/oracle/table_check.py`: reads
//! `{"rows": [hex WKB], "windows": [[min_x, min_y, max_x, max_y]]}` on stdin, appends the rows
//! to a `geography(4326)` table in a temporary warehouse (several files, small row groups),
//! runs an exact window scan for every window before and after `CREATE SPATIAL INDEX` on the
//! column, and prints `{"appended": [[row ids]], "indexed": [[row ids]]}` (a row's id is its
//! position in `rows`).
//!
//! cargo run -p geoberg-table --example geography_scan_oracle < cases.json

use std::io::Read;
use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_table::{
    BBox, Catalog, Column, CreateTable, DataType, SqliteCatalog, Table, TableIdent,
};
use serde_json::{Value, json};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

fn scan_all(table: &Table, windows: &[BBox]) -> geoberg_table::Result<Value> {
    let mut out = Vec::new();
    for w in windows {
        let (batches, _) = table
            .scan()
            .with_window("geog", *w)
            .exact(true)
            .select(["id"])
            .execute()?;
        let mut ids: Vec<i64> = batches
            .iter()
            .flat_map(|b| {
                b.column(0)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .expect("id column")
                    .values()
                    .to_vec()
            })
            .collect();
        ids.sort_unstable();
        out.push(json!(ids));
    }
    Ok(Value::Array(out))
}

fn main() -> geoberg_table::Result<()> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("stdin");
    let cases: Value = serde_json::from_str(&input).expect("JSON input");
    let rows: Vec<Vec<u8>> = cases["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|v| unhex(v.as_str().expect("hex")))
        .collect();
    let windows: Vec<BBox> = cases["windows"]
        .as_array()
        .expect("windows")
        .iter()
        .map(|w| {
            let c: Vec<f64> = w
                .as_array()
                .expect("four numbers")
                .iter()
                .map(|v| v.as_f64().expect("number"))
                .collect();
            BBox::new(c[0], c[1], c[2], c[3])
        })
        .collect();

    let dir = tempfile::tempdir().expect("temp dir");
    let catalog = Arc::new(SqliteCatalog::open(
        dir.path().join("catalog.db"),
        "oracle",
        dir.path().join("wh"),
    )?);
    catalog.create_namespace("oracle")?;
    let catalog: Arc<dyn Catalog> = catalog;
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geog", DataType::parse("geography(4326)")?),
    ])
    .property("geoberg.parquet.row-group-rows", "64")
    .create(catalog, &TableIdent::new("oracle", "rows")?)?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("geog", ArrowType::Binary, true),
    ]));
    let per_file = rows.len().div_ceil(8).max(1);
    for (k, part) in rows.chunks(per_file).enumerate() {
        let first = (k * per_file) as i64;
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values(
                    first..first + part.len() as i64,
                )),
                Arc::new(BinaryArray::from_iter_values(part.iter())),
            ],
        )?;
        table = table.append(&[batch])?.0;
    }
    let appended = scan_all(&table, &windows)?;
    let (indexed, _) = table
        .rewrite()
        .hilbert("geog", 10)
        .option("target-file-count", "16")
        .execute()?;
    let indexed = scan_all(&indexed, &windows)?;
    println!("{}", json!({"appended": appended, "indexed": indexed}));
    Ok(())
}
