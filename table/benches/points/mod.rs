//! The points the table benches write: deterministic, uniform over lon [-180, 180) x lat
//! [-85, 85), as WKB in a `geometry(4326)` / `geography(4326)` column, with an `id` column.

use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_table::{Catalog, Column, CreateTable, DataType, Table, TableIdent};

/// A numeric setting from the environment, or `default`.
pub fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Point `i` (SplitMix64 of `i`).
pub fn point(i: u64) -> (f64, f64) {
    let mut z = i.wrapping_add(0x5EED).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let a = (z >> 32) as f64 / u32::MAX as f64;
    let b = (z & 0xFFFF_FFFF) as f64 / u32::MAX as f64;
    (-180.0 + 360.0 * a, -85.0 + 170.0 * b)
}

/// Rows `ids` as a batch of `id` (Int64) and `column` (WKB points, SRID 4326).
pub fn batch(ids: std::ops::Range<usize>, column: &str) -> RecordBatch {
    let srid = [("srid".to_string(), "4326".to_string())].into();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new(column, ArrowType::Binary, true).with_metadata(srid),
    ]));
    let values: Vec<Vec<u8>> = ids
        .clone()
        .map(|i| {
            let (x, y) = point(i as u64);
            [&[1u8, 1, 0, 0, 0][..], &x.to_le_bytes(), &y.to_le_bytes()].concat()
        })
        .collect();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(
                ids.start as i64..ids.end as i64,
            )),
            Arc::new(BinaryArray::from_iter_values(values.iter())),
        ],
    )
    .unwrap()
}

/// Rows appended per batch by [`clustered_table`].
const BATCH: usize = 100_000;

/// A format-version 3 table `bench.points` of `rows` points appended in batches, then
/// Hilbert-clustered into 64 files: the demo layout the row-change benches change.
#[allow(dead_code)] // Used by the row-change benches, not by every bench including this module.
pub fn clustered_table(catalog: Arc<dyn Catalog>, rows: usize) -> Table {
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("g", DataType::geometry(4326)),
    ])
    .property("format-version", "3")
    .create(catalog, &TableIdent::new("bench", "points").unwrap())
    .unwrap();
    for start in (0..rows).step_by(BATCH) {
        let batch = batch(start..rows.min(start + BATCH), "g");
        table = table.append(&[batch]).unwrap().0;
    }
    table
        .rewrite()
        .hilbert("g", 16)
        .option("target-file-count", "64")
        .execute()
        .unwrap()
        .0
}
