//! Driver for `interop/check.py`: the Rust side of the interop round trip.
//!
//! `interop scan <catalog.db> <catalog-name> <namespace.table> <geom-col> <minx> <miny> <maxx> <maxy>`
//! prints a JSON line with the explain counters and the sorted ids read.
//! `interop write <catalog.db> <warehouse>` creates `geo.points_v3` (geometry(4326), 8 files),
//! `geo.points_v2` (legacy geometry + bbox columns, format-version 2) and `geo.nested_v3`
//! (struct, list, map, decimal, uuid, fixed, time and geometry columns, 3 files) and prints
//! their rows.
//! `interop upgrade <catalog.db> <catalog-name> <warehouse> <namespace.table> <geom-col> <srid>`
//! copies a no-CRS table into `<table>_v3` (under the warehouse) with `geometry(<srid>)`
//! (`upgrade_geometry`), then regroups the copy's manifests (`rewrite_manifests`); prints both
//! results as JSON.
//! `interop evolve <catalog.db> <warehouse>` creates `geo.evolved` (id, name, old, geom), appends
//! 10 rows, adds `score double` after `id`, renames `name` to `label`, drops `old`, appends 5
//! rows with scores, and prints the rows as the current schema should read them.
//! `interop backfill <catalog.db> <warehouse>` creates `geo.telemetry` (id, day, geom;
//! partitioned by day) from 12 appends over 3 days, runs seed 002's `add_bbox_columns` and the
//! per-partition backfill, and prints the rows, the window and the files read before and after.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, ListBuilder, MapBuilder, StringBuilder};
use arrow_array::{
    Array, ArrayRef, BinaryArray, Decimal128Array, FixedSizeBinaryArray, Int32Array, Int64Array,
    RecordBatch, StringArray, StructArray, Time64MicrosecondArray,
};
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
        Some("upgrade") => upgrade(&args[1..]),
        Some("evolve") => evolve(&args[1..]),
        Some("backfill") => backfill(&args[1..]),
        _ => Err("usage: interop scan|write|rewrite|upgrade|evolve|backfill ...".into()),
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

fn upgrade(a: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(&a[0], &a[1], &a[2])?);
    let table = Table::load(catalog, &TableIdent::parse(&a[3])?)?;
    let (upgraded, report) = table.upgrade_geometry(&a[4], a[5].parse()?, None)?;
    let (upgraded, manifests) = upgraded.rewrite_manifests().execute()?;
    println!(
        "{}",
        serde_json::json!({
            "source_rows": report.source_rows,
            "copied_rows": report.copied_rows,
            "target": report.target,
            "metadata_location": upgraded.metadata_location(),
            "rewritten_manifests_count": manifests.rewritten_manifests_count,
            "added_manifests_count": manifests.added_manifests_count,
        })
    );
    Ok(())
}

fn evolve(a: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    use geoberg_table::ColumnPosition;
    let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(&a[0], "geoberg", &a[1])?);
    catalog.create_namespace("geo")?;
    let table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("name", DataType::String),
        Column::new("old", DataType::String),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(catalog, &TableIdent::new("geo", "evolved")?)?;
    let label = HashMap::from([("srid".to_string(), "4326".to_string())]);
    let geom_field = Field::new("geom", ArrowType::Binary, true).with_metadata(label);
    let before: Vec<i64> = (0..10).collect();
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("name", ArrowType::Utf8, true),
            Field::new("old", ArrowType::Utf8, true),
            geom_field.clone(),
        ])),
        vec![
            Arc::new(Int64Array::from(before.clone())),
            Arc::new(StringArray::from_iter_values(
                before.iter().map(|i| format!("n{i}")),
            )),
            Arc::new(StringArray::from_iter_values(
                before.iter().map(|i| format!("gone{i}")),
            )),
            Arc::new(BinaryArray::from_iter_values(
                before.iter().map(|&i| point(i as f64, 1.0)),
            )),
        ],
    )?;
    let table = table.append(&[batch])?.0;
    let table = table
        .update_schema()
        .add_column(
            Column::new("score", DataType::Double),
            ColumnPosition::After("id".into()),
        )
        .rename_column("name", "label")
        .drop_column("old")
        .commit()?;
    let after: Vec<i64> = (10..15).collect();
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("score", ArrowType::Float64, true),
            Field::new("label", ArrowType::Utf8, true),
            geom_field,
        ])),
        vec![
            Arc::new(Int64Array::from(after.clone())),
            Arc::new(arrow_array::Float64Array::from_iter_values(
                after.iter().map(|&i| i as f64 * 0.5),
            )),
            Arc::new(StringArray::from_iter_values(
                after.iter().map(|i| format!("n{i}")),
            )),
            Arc::new(BinaryArray::from_iter_values(
                after.iter().map(|&i| point(i as f64, 1.0)),
            )),
        ],
    )?;
    let table = table.append(&[batch])?.0;
    let rows: Vec<serde_json::Value> = (0..15i64)
        .map(|i| {
            serde_json::json!({
                "id": i,
                "score": (i >= 10).then_some(i as f64 * 0.5),
                "label": format!("n{i}"),
                "x": i as f64,
            })
        })
        .collect();
    let columns = column_names(&table);
    println!(
        "{}",
        serde_json::json!({
            "metadata_location": table.metadata_location(),
            "columns": columns,
            "rows": rows,
        })
    );
    Ok(())
}

fn backfill(a: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    use geoberg_table::PartitionField;
    let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(&a[0], "geoberg", &a[1])?);
    catalog.create_namespace("geo")?;
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("day", DataType::String),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .partition_by(PartitionField::identity("day"))
    .create(catalog, &TableIdent::new("geo", "telemetry")?)?;
    // Points spread over the world in arrival order: every appended file spans it.
    let xy = |i: i64| {
        let t = i as f64 * 0.618_033_988_749_895;
        (
            (t.fract() * 360.0) - 180.0,
            ((i * 37 % 170) as f64) - 85.0 + 0.5,
        )
    };
    let label = HashMap::from([("srid".to_string(), "4326".to_string())]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("day", ArrowType::Utf8, true),
        Field::new("geom", ArrowType::Binary, true).with_metadata(label),
    ]));
    for a in 0..12i64 {
        let ids: Vec<i64> = (a * 200..(a + 1) * 200).collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(ids.clone())),
                Arc::new(StringArray::from(vec![
                    format!("2026-11-0{}", a / 4 + 1);
                    200
                ])),
                Arc::new(BinaryArray::from_iter_values(ids.iter().map(|&i| {
                    let (x, y) = xy(i);
                    point(x, y)
                }))),
            ],
        )?;
        table = table.append(&[batch])?.0;
    }
    // Files of about a quarter of a day, so that the sorted backfill has files to skip.
    let bytes: u64 = table
        .data_files()?
        .iter()
        .map(|f| f.file_size_in_bytes())
        .sum();
    let table =
        table.set_properties([("write.target-file-size-bytes", (bytes / 12).to_string())])?;
    let (table, _) = table.add_bbox_columns("geom", None)?;
    let window = BBox::new(-30.0, -40.0, 10.0, 40.0);
    let (table, report) = table
        .backfill_bbox_columns("geom")
        .window(window)
        .execute()?;
    let rows: Vec<serde_json::Value> = (0..2400i64)
        .map(|i| {
            let (x, y) = xy(i);
            serde_json::json!({"id": i, "x": x, "y": y})
        })
        .collect();
    let columns = column_names(&table);
    println!(
        "{}",
        serde_json::json!({
            "metadata_location": table.metadata_location(),
            "columns": columns,
            "rows": rows,
            "window": [window.min_x, window.min_y, window.max_x, window.max_y],
            "files_total": report.files_total,
            "files_read_before": report.files_read_before,
            "files_read_after": report.files_read_after,
            "partitions_backfilled": report.partitions_backfilled,
        })
    );
    Ok(())
}

/// The table's current top-level column names, in order.
fn column_names(table: &Table) -> Vec<&str> {
    table
        .metadata()
        .current_schema()
        .as_struct()
        .fields()
        .iter()
        .map(|f| f.name.as_str())
        .collect()
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
    let nested = write_nested(catalog_of(&v3))?;
    println!(
        "{}",
        serde_json::json!({"rows": rows, "count": n, "nested": nested})
    );
    Ok(())
}

fn catalog_of(t: &Table) -> Arc<dyn Catalog> {
    t.catalog().clone()
}

/// `geo.nested_v3`: every nested and newer primitive type beside a geometry, in 3 appends;
/// returns the rows as JSON (decimals and uuids as strings).
fn write_nested(
    catalog: Arc<dyn Catalog>,
) -> Result<Vec<serde_json::Value>, Box<dyn std::error::Error>> {
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new(
            "s",
            DataType::struct_of([
                Column::new("a", DataType::Int),
                Column::new("b", DataType::String).required(),
            ]),
        ),
        Column::new("tags", DataType::list(DataType::String)),
        Column::new("attrs", DataType::map(DataType::String, DataType::Double)),
        Column::new("price", DataType::decimal(10, 2)),
        Column::new("uid", DataType::Uuid),
        Column::new("raw", DataType::Fixed(4)),
        Column::new("t", DataType::Time),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(catalog, &TableIdent::new("geo", "nested_v3")?)?;
    let mut rows = Vec::new();
    for part in 0..3i64 {
        let ids: Vec<i64> = (part * 10..part * 10 + 10).collect();
        let a: Int32Array = ids
            .iter()
            .map(|&i| (i % 5 != 0).then_some(i as i32 * 2))
            .collect();
        let b = StringArray::from_iter_values(ids.iter().map(|i| format!("n{i}")));
        let s = StructArray::from(vec![
            (
                Arc::new(Field::new("a", ArrowType::Int32, true)),
                Arc::new(a) as ArrayRef,
            ),
            (
                Arc::new(Field::new("b", ArrowType::Utf8, false)),
                Arc::new(b) as ArrayRef,
            ),
        ]);
        let mut tags = ListBuilder::new(StringBuilder::new());
        let mut attrs = MapBuilder::new(None, StringBuilder::new(), Float64Builder::new());
        for &i in &ids {
            if i % 7 == 0 {
                tags.append_null();
            } else {
                for k in 0..i % 3 {
                    tags.values().append_value(format!("t{k}"));
                }
                tags.append(true);
            }
            attrs.keys().append_value("w");
            attrs.values().append_value(i as f64 / 2.0);
            if i % 4 == 0 {
                attrs.keys().append_value("h");
                attrs.values().append_null();
            }
            attrs.append(true)?;
        }
        let price = Decimal128Array::from_iter_values(ids.iter().map(|&i| i as i128 * 125 - 1000))
            .with_precision_and_scale(10, 2)?;
        let uid = FixedSizeBinaryArray::try_from_iter(ids.iter().map(|&i| {
            uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0000_0000_0000_0000 + i as u128)
                .into_bytes()
        }))?;
        let raw = FixedSizeBinaryArray::try_from_iter(
            ids.iter().map(|&i| (i as u32 * 77).to_be_bytes()),
        )?;
        let t = Time64MicrosecondArray::from_iter_values(ids.iter().map(|&i| i * 1_000_003));
        let geom = BinaryArray::from_iter_values(ids.iter().map(|&i| point(i as f64, -(i as f64))));
        let label = HashMap::from([("srid".to_string(), "4326".to_string())]);
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(s),
            Arc::new(tags.finish()),
            Arc::new(attrs.finish()),
            Arc::new(price),
            Arc::new(uid),
            Arc::new(raw),
            Arc::new(t),
            Arc::new(geom),
        ];
        let names = [
            "id", "s", "tags", "attrs", "price", "uid", "raw", "t", "geom",
        ];
        let fields: Vec<Field> = names
            .iter()
            .zip(&columns)
            .map(|(n, c)| {
                let f = Field::new(*n, c.data_type().clone(), *n != "id");
                if *n == "geom" {
                    f.with_metadata(label.clone())
                } else {
                    f
                }
            })
            .collect();
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)?;
        table = table.append(&[batch])?.0;
        for &i in &ids {
            let tags: Option<Vec<String>> =
                (i % 7 != 0).then(|| (0..i % 3).map(|k| format!("t{k}")).collect());
            let mut attrs = vec![serde_json::json!(["w", i as f64 / 2.0])];
            if i % 4 == 0 {
                attrs.push(serde_json::json!(["h", null]));
            }
            let cents = i * 125 - 1000;
            rows.push(serde_json::json!({
                "id": i,
                "a": (i % 5 != 0).then_some(i * 2),
                "b": format!("n{i}"),
                "tags": tags,
                "attrs": attrs,
                "price": format!("{}{}.{:02}", if cents < 0 { "-" } else { "" }, cents.abs() / 100, cents.abs() % 100),
                "uid": uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0000_0000_0000_0000 + i as u128).to_string(),
                "raw": hex((i as u32 * 77).to_be_bytes()),
                "t_us": i * 1_000_003,
                "x": i as f64,
                "y": -(i as f64),
            }));
        }
    }
    Ok(rows)
}

fn hex(bytes: [u8; 4]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
