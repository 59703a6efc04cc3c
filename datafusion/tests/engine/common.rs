//! Tables for the integration tests, written with the table crate (not the engine under test).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{BinaryArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_datafusion::BlockingSession;
use geoberg_table::{
    Catalog, Column, CreateTable, DataType, ROW_GROUP_ROWS_PROPERTY, SRID_FIELD_METADATA,
    SqliteCatalog, Table, TableIdent,
};

/// A warehouse in a temporary directory with a SQLite catalog named `geoberg`.
pub struct Warehouse {
    /// Keeps the directory until the warehouse is dropped.
    _dir: tempfile::TempDir,
    pub catalog: Arc<dyn Catalog>,
}

impl Warehouse {
    pub fn new() -> Warehouse {
        let dir = tempfile::tempdir().unwrap();
        let catalog: Arc<dyn Catalog> = Arc::new(
            SqliteCatalog::open(
                dir.path().join("catalog.db"),
                "geoberg",
                dir.path().join("wh"),
            )
            .unwrap(),
        );
        Warehouse { _dir: dir, catalog }
    }

    pub fn session(&self) -> BlockingSession {
        BlockingSession::new(Arc::clone(&self.catalog), "geoberg").unwrap()
    }
}

/// One row of a points table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub id: i64,
    pub n: i32,
    pub x: f64,
    pub state: Option<String>,
    /// `None`: a NULL geometry.
    pub point: Option<(f64, f64)>,
}

/// ISO WKB of a point.
pub fn wkb_point(x: f64, y: f64) -> Vec<u8> {
    [&[1u8, 1, 0, 0, 0][..], &x.to_le_bytes(), &y.to_le_bytes()].concat()
}

/// ISO WKB of a polygon (one ring, closed by the caller).
pub fn wkb_polygon(ring: &[(f64, f64)]) -> Vec<u8> {
    let mut out = vec![1u8, 3, 0, 0, 0];
    out.extend(1u32.to_le_bytes());
    out.extend((ring.len() as u32).to_le_bytes());
    for (x, y) in ring {
        out.extend(x.to_le_bytes());
        out.extend(y.to_le_bytes());
    }
    out
}

/// `CREATE TABLE geo.<name> (id bigint NOT NULL, n int, x double, state string, geom
/// geometry(<srid>))` with `row_group_rows` rows per Parquet row group.
pub fn create_points(warehouse: &Warehouse, name: &str, srid: i32, row_group_rows: usize) -> Table {
    create_points_in(&warehouse.catalog, name, srid, row_group_rows)
}

/// [`create_points`] in any catalog (creating the namespace `geo` when it is missing).
pub fn create_points_in(
    catalog: &Arc<dyn Catalog>,
    name: &str,
    srid: i32,
    row_group_rows: usize,
) -> Table {
    if !catalog.namespace_exists("geo").unwrap() {
        catalog.create_namespace("geo").unwrap();
    }
    CreateTable::new(points_columns(srid))
        .property(ROW_GROUP_ROWS_PROPERTY, row_group_rows.to_string())
        .create(Arc::clone(catalog), &TableIdent::new("geo", name).unwrap())
        .unwrap()
}

/// The columns of a points table: `id bigint NOT NULL, n int, x double, state string, geom
/// geometry(<srid>)`.
pub fn points_columns(srid: i32) -> Vec<Column> {
    vec![
        Column::new("id", DataType::Long).required(),
        Column::new("n", DataType::Int),
        Column::new("x", DataType::Double),
        Column::new("state", DataType::String),
        Column::new("geom", DataType::geometry(srid)),
    ]
}

/// A batch of rows for a points table, geometry labelled with `srid`.
pub fn points_batch(rows: &[Row], srid: i32) -> RecordBatch {
    let srid = HashMap::from([(SRID_FIELD_METADATA.to_string(), srid.to_string())]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("n", ArrowType::Int32, true),
        Field::new("x", ArrowType::Float64, true),
        Field::new("state", ArrowType::Utf8, true),
        Field::new("geom", ArrowType::Binary, true).with_metadata(srid),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.id))),
            Arc::new(Int32Array::from_iter_values(rows.iter().map(|r| r.n))),
            Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| r.x))),
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.state.clone()))),
            Arc::new(BinaryArray::from_iter(
                rows.iter().map(|r| r.point.map(|(x, y)| wkb_point(x, y))),
            )),
        ],
    )
    .unwrap()
}

/// Appends each group of rows as its own commit (one data file each).
pub fn append_files(mut table: Table, files: &[Vec<Row>], srid: i32) -> Table {
    for rows in files.iter().filter(|r| !r.is_empty()) {
        table = table.append(&[points_batch(rows, srid)]).unwrap().0;
    }
    table
}

/// `(id, ST_GeogFromText('<wkt>'))` tuples of an `INSERT ... VALUES`, `NULL` for a missing value.
pub fn geography_values(rows: &[(i64, Option<&str>)]) -> String {
    let values: Vec<String> = rows
        .iter()
        .map(|(id, wkt)| match wkt {
            Some(wkt) => format!("({id}, ST_GeogFromText('{wkt}'))"),
            None => format!("({id}, NULL)"),
        })
        .collect();
    values.join(", ")
}

/// A single integer of a one-row, one-column result.
pub fn scalar_i64(batches: &[RecordBatch]) -> i64 {
    let batch = batches.iter().find(|b| b.num_rows() > 0).unwrap();
    let column = arrow::compute::cast(batch.column(0), &ArrowType::Int64).unwrap();
    column
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .value(0)
}

/// The ids of a result whose first column is `id`, sorted.
pub fn ids(batches: &[RecordBatch]) -> Vec<i64> {
    let mut out: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            let c = arrow::compute::cast(b.column(0), &ArrowType::Int64).unwrap();
            c.as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .iter()
                .flatten()
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort_unstable();
    out
}

/// The `(first column, second column)` pairs of a join's result, as integers, sorted.
pub fn pairs(batches: &[RecordBatch]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for b in batches {
        let a = arrow::compute::cast(b.column(0), &ArrowType::Int64).unwrap();
        let c = arrow::compute::cast(b.column(1), &ArrowType::Int64).unwrap();
        let a = a.as_any().downcast_ref::<Int64Array>().unwrap();
        let c = c.as_any().downcast_ref::<Int64Array>().unwrap();
        out.extend(
            a.iter()
                .zip(c.iter())
                .map(|(a, c)| (a.unwrap(), c.unwrap())),
        );
    }
    out.sort_unstable();
    out
}

/// The text of an EXPLAIN [ANALYZE] result (the plan column, joined).
pub fn plan_text(batches: &[RecordBatch]) -> String {
    let mut out = String::new();
    for b in batches {
        let plans = arrow::compute::cast(b.column(1), &ArrowType::Utf8).unwrap();
        let plans = plans.as_any().downcast_ref::<StringArray>().unwrap();
        for p in plans.iter().flatten() {
            out.push_str(p);
            out.push('\n');
        }
    }
    out
}

/// The value of a metric `name=<n>` in the GeobergScanExec line of a plan.
pub fn scan_metric(plan: &str, name: &str) -> u64 {
    let line = plan
        .lines()
        .find(|l| l.contains("GeobergScanExec"))
        .unwrap_or_else(|| panic!("no GeobergScanExec in\n{plan}"));
    let metrics = &line[line
        .find("metrics=[")
        .unwrap_or_else(|| panic!("no metrics: {line}"))..];
    let key = format!(" {name}=");
    let start = metrics
        .find(&key)
        .or_else(|| metrics.find(&format!("[{name}=")))
        .unwrap_or_else(|| panic!("no metric {name} in {metrics}"));
    let rest = &metrics[start + key.len()..];
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("metric {name} is not a number: {rest}"))
}

/// Points in arrival order: `appends` groups of `per_append` rows, each spread over the whole
/// extent (-125..-65 by 25..50), half CA, half NY (a linear congruential generator from `seed`,
/// so every run writes the same table).
pub fn arrivals(seed: u64, appends: usize, per_append: usize) -> Vec<Vec<Row>> {
    let mut state = seed;
    let mut unit = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..appends)
        .map(|a| {
            (0..per_append)
                .map(|i| {
                    let id = (a * per_append + i) as i64;
                    let (x, y) = (-125.0 + 60.0 * unit(), 25.0 + 25.0 * unit());
                    Row {
                        id,
                        n: i as i32,
                        x,
                        state: Some(if id % 2 == 0 { "CA" } else { "NY" }.to_string()),
                        point: Some((x, y)),
                    }
                })
                .collect()
        })
        .collect()
}
