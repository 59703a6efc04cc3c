//! Driver for `interop/row_changes_check.py`: tables after DELETE and UPDATE in both modes.
//!
//! `row_changes_interop <catalog.db> <warehouse>` creates, in namespace `rc`, one table per
//! (format version, mode): `v3_cow`, `v3_mor` (deletion vectors), `v2_cow`, `v2_mor` (position
//! delete files); each gets 3 appends of 50 points, a DELETE of a window, a DELETE by id and an
//! UPDATE of a window. Prints, per table, its metadata location and the rows it must hold, and
//! writes its metadata tables (`Table::metadata_table`) as Parquet files beside the warehouse,
//! for the check to compare with pyiceberg's `table.inspect`.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_table::{
    Catalog, Column, CreateTable, DataType, MetadataTable, RowChangeMode, RowFilter, SqliteCatalog,
    Table, TableIdent,
};

fn point(x: f64, y: f64) -> Vec<u8> {
    [&[1u8, 1, 0, 0, 0][..], &x.to_le_bytes(), &y.to_le_bytes()].concat()
}

fn filter(sql: &str) -> Result<RowFilter, Box<dyn std::error::Error>> {
    Ok(RowFilter::from_predicate(geoberg_sql::parse_condition(
        sql,
    )?))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [db, warehouse] = &args[..] else {
        return Err("usage: row_changes_interop <catalog.db> <warehouse>".into());
    };
    let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(db, "geoberg", warehouse)?);
    catalog.create_namespace("rc")?;
    let mut out = serde_json::Map::new();
    for (version, mode, name) in [
        (3u8, RowChangeMode::CopyOnWrite, "v3_cow"),
        (3, RowChangeMode::MergeOnRead, "v3_mor"),
        (2, RowChangeMode::CopyOnWrite, "v2_cow"),
        (2, RowChangeMode::MergeOnRead, "v2_mor"),
    ] {
        let geom = if version == 3 {
            DataType::geometry(4326)
        } else {
            DataType::LEGACY_GEOMETRY
        };
        let mut t = CreateTable::new([
            Column::new("id", DataType::Long).required(),
            Column::new("name", DataType::String),
            Column::new("geom", geom),
        ])
        .allow_undeclared_crs()
        .format_version(version)
        .create(catalog.clone(), &TableIdent::new("rc", name)?)?;
        // id -> (name, x, y)
        let mut rows: HashMap<i64, (String, f64, f64)> = HashMap::new();
        for a in 0..3i64 {
            let ids: Vec<i64> = (a * 50..(a + 1) * 50).collect();
            let xy = |i: i64| {
                (
                    ((i * 37) % 100) as f64 - 50.0,
                    ((i * 11) % 40) as f64 - 20.0,
                )
            };
            for &i in &ids {
                let (x, y) = xy(i);
                rows.insert(i, (format!("r{i}"), x, y));
            }
            let srid = HashMap::from([("srid".to_string(), "4326".to_string())]);
            let batch = RecordBatch::try_new(
                Arc::new(Schema::new(vec![
                    Field::new("id", ArrowType::Int64, false),
                    Field::new("name", ArrowType::Utf8, true),
                    Field::new("geom", ArrowType::Binary, true).with_metadata(srid),
                ])),
                vec![
                    Arc::new(Int64Array::from(ids.clone())),
                    Arc::new(StringArray::from_iter_values(
                        ids.iter().map(|i| format!("r{i}")),
                    )),
                    Arc::new(BinaryArray::from_iter_values(ids.iter().map(|&i| {
                        let (x, y) = xy(i);
                        point(x, y)
                    }))),
                ],
            )?;
            t = t.append(&[batch])?.0;
        }
        let window = "ST_Intersects(geom, ST_MakeEnvelope(-10, -5, 10, 5, 4326))";
        t = t.delete(filter(window)?).mode(mode).execute()?.0;
        rows.retain(|_, (_, x, y)| !((-10.0..=10.0).contains(x) && (-5.0..=5.0).contains(y)));
        t = t.delete(filter("id < 20")?).mode(mode).execute()?.0;
        rows.retain(|i, _| *i >= 20);
        let set = "ST_Intersects(geom, ST_MakeEnvelope(20, -20, 50, 0, 4326))";
        t = t
            .update(filter(set)?)
            .set("name", |b: &RecordBatch| {
                Ok(Arc::new(StringArray::from(vec!["updated"; b.num_rows()])) as ArrayRef)
            })
            .mode(mode)
            .execute()?
            .0;
        for (_, (n, x, y)) in rows.iter_mut() {
            if (20.0..=50.0).contains(x) && (-20.0..=0.0).contains(y) {
                *n = "updated".into();
            }
        }
        let t = Table::load(catalog.clone(), t.ident())?;
        let mut listed: Vec<serde_json::Value> = rows
            .iter()
            .map(|(i, (n, x, y))| serde_json::json!([i, n, x, y]))
            .collect();
        listed.sort_by_key(|v| v[0].as_i64());
        let mut inspect = serde_json::Map::new();
        for which in MetadataTable::ALL {
            let path = std::path::Path::new(warehouse)
                .join("..")
                .join(format!("{name}.{which}.parquet"));
            let batch = t.metadata_table(which)?;
            let mut writer = parquet::arrow::ArrowWriter::try_new(
                std::fs::File::create(&path)?,
                batch.schema(),
                None,
            )?;
            writer.write(&batch)?;
            writer.close()?;
            inspect.insert(which.name().into(), path.to_string_lossy().into());
        }
        out.insert(
            name.into(),
            serde_json::json!({
                "metadata": t.metadata_location(),
                "delete_files": t.delete_files()?.len(),
                "rows": listed,
                "inspect": inspect,
            }),
        );
    }
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
