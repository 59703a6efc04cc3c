//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use arrow_array::{Array, BinaryArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_table::{
    Catalog, Column, CreateTable, DataType, PartitionField, Rewrite, SqliteCatalog, Table,
    TableIdent,
};

/// ISO WKB point.
pub fn wkb_point(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1u8, 1, 0, 0, 0];
    v.extend_from_slice(&x.to_le_bytes());
    v.extend_from_slice(&y.to_le_bytes());
    v
}

/// EWKB point with an SRID.
pub fn ewkb_point(x: f64, y: f64, srid: u32) -> Vec<u8> {
    let mut v = vec![1u8];
    v.extend_from_slice(&(1u32 | 0x2000_0000).to_le_bytes());
    v.extend_from_slice(&srid.to_le_bytes());
    v.extend_from_slice(&x.to_le_bytes());
    v.extend_from_slice(&y.to_le_bytes());
    v
}

/// A SQLite catalog in `dir` with namespace `test_db`.
pub fn sqlite_catalog(dir: &std::path::Path) -> Arc<dyn Catalog> {
    let cat =
        SqliteCatalog::open(dir.join("catalog.db"), "geoberg", dir.join("warehouse")).unwrap();
    cat.create_namespace("test_db").unwrap();
    Arc::new(cat)
}

/// `id bigint NOT NULL, data string, geom geometry(4326)`.
pub fn points_table(catalog: Arc<dyn Catalog>, name: &str) -> Table {
    CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(catalog, &TableIdent::new("test_db", name).unwrap())
    .unwrap()
}

/// [`points_table`]'s columns, partitioned by identity on `data` (fill it with
/// [`with_partition_data`]), with extra table `properties`.
pub fn partitioned_points_table(
    catalog: Arc<dyn Catalog>,
    name: &str,
    properties: &[(&str, &str)],
) -> Table {
    let mut create = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .partition_by(PartitionField::identity("data"));
    for (key, value) in properties {
        create = create.property(*key, *value);
    }
    create
        .create(catalog, &TableIdent::new("test_db", name).unwrap())
        .unwrap()
}

/// `hilbert(geom, 12)` with partial progress in at most three commits (one per partition of
/// [`with_partition_data`]).
pub fn rewrite_in_three_commits(table: &Table) -> Rewrite<'_> {
    table
        .rewrite()
        .hilbert("geom", 12)
        .option("partial-progress.enabled", "true")
        .option("partial-progress.max-commits", "3")
}

/// A [`points_batch`] whose `data` column spreads its rows over three partitions: `p0`, `p1`,
/// `p2` in turn.
pub fn with_partition_data(batch: RecordBatch) -> RecordBatch {
    let data: Vec<String> = (0..batch.num_rows())
        .map(|i| format!("p{}", i % 3))
        .collect();
    RecordBatch::try_new(
        batch.schema(),
        vec![
            batch.column(0).clone(),
            Arc::new(StringArray::from(data)),
            batch.column(2).clone(),
        ],
    )
    .unwrap()
}

/// A batch of points labelled 4326 through field metadata (ISO WKB carries no SRID).
pub fn points_batch(ids: std::ops::Range<i64>, xy: impl Fn(i64) -> (f64, f64)) -> RecordBatch {
    let geom: Vec<Vec<u8>> = ids
        .clone()
        .map(|i| {
            let (x, y) = xy(i);
            wkb_point(x, y)
        })
        .collect();
    let schema = Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("data", ArrowType::Utf8, true),
        Field::new("geom", ArrowType::Binary, true)
            .with_metadata(HashMap::from([("srid".to_string(), "4326".to_string())])),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from_iter_values(ids.clone())),
            Arc::new(StringArray::from_iter_values(
                ids.clone().map(|i| format!("row{i}")),
            )),
            Arc::new(BinaryArray::from_iter_values(geom.iter())),
        ],
    )
    .unwrap()
}

/// The table's current top-level column names, in order.
pub fn column_names(table: &Table) -> Vec<String> {
    table
        .metadata()
        .current_schema()
        .as_struct()
        .fields()
        .iter()
        .map(|f| f.name.clone())
        .collect()
}

/// Sorted ids of all rows.
pub fn ids_of(batches: &[RecordBatch]) -> Vec<i64> {
    let mut ids: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let col = b.column(b.schema().index_of("id").unwrap());
            col.as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    ids.sort_unstable();
    ids
}

/// Deterministic uniform points over lon [-180, 180) x lat [-85, 85).
pub fn uniform(seed: u64) -> impl Fn(i64) -> (f64, f64) {
    move |i| {
        let mut z = (i as u64)
            .wrapping_add(seed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let a = (z >> 32) as f64 / u32::MAX as f64;
        let b = (z & 0xFFFF_FFFF) as f64 / u32::MAX as f64;
        (-180.0 + 360.0 * a, -85.0 + 170.0 * b)
    }
}

/// One row of a points table: (id, data, geometry bytes).
pub type Row = (i64, Option<String>, Option<Vec<u8>>);

/// Every row as (id, data, geometry bytes), sorted: the multiset to compare exactly.
pub fn rows(table: &Table) -> Vec<Row> {
    let (batches, _) = table.scan().execute().unwrap();
    let mut out = Vec::new();
    for b in &batches {
        let col = |n: &str| b.column(b.schema().index_of(n).unwrap()).clone();
        let id = col("id");
        let id = id.as_any().downcast_ref::<Int64Array>().unwrap();
        let data = col("data");
        let data = data.as_any().downcast_ref::<StringArray>().unwrap();
        let geom = col("geom");
        let geom = geom.as_any().downcast_ref::<BinaryArray>().unwrap();
        for r in 0..b.num_rows() {
            out.push((
                id.value(r),
                data.is_valid(r).then(|| data.value(r).to_string()),
                geom.is_valid(r).then(|| geom.value(r).to_vec()),
            ));
        }
    }
    out.sort();
    out
}

pub fn data_dir_files(table: &Table) -> BTreeSet<String> {
    let dir = table
        .metadata()
        .location()
        .trim_start_matches("file://")
        .to_string()
        + "/data";
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".parquet"))
                .collect()
        })
        .unwrap_or_default()
}

pub fn live_paths(table: &Table) -> BTreeSet<String> {
    table
        .data_files()
        .unwrap()
        .iter()
        .map(|f| f.file_path().rsplit('/').next().unwrap().to_string())
        .collect()
}

/// Full paths of the live data files.
pub fn live_file_paths(table: &Table) -> BTreeSet<String> {
    table
        .data_files()
        .unwrap()
        .iter()
        .map(|f| f.file_path().to_string())
        .collect()
}

/// Points inside `w`, borders included: the brute-force window oracle.
pub fn count_inside(points: &[(f64, f64)], w: geoberg_table::BBox) -> usize {
    points
        .iter()
        .filter(|(x, y)| w.min_x <= *x && *x <= w.max_x && w.min_y <= *y && *y <= w.max_y)
        .count()
}
