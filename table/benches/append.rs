//! Append throughput: 100 k WKB points → one zstd Parquet file + manifest + commit (SQLite).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use geoberg_table::{Catalog, Column, CreateTable, DataType, SqliteCatalog, TableIdent};

fn points(n: i64) -> RecordBatch {
    let geoms: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let (x, y) = (
                (i * 7919 % 36000) as f64 / 100.0 - 180.0,
                (i * 104729 % 17000) as f64 / 100.0 - 85.0,
            );
            [&[1u8, 1, 0, 0, 0][..], &x.to_le_bytes(), &y.to_le_bytes()].concat()
        })
        .collect();
    let srid = HashMap::from([("srid".to_string(), "4326".to_string())]);
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("geom", ArrowType::Binary, true).with_metadata(srid),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values(0..n)),
            Arc::new(BinaryArray::from_iter_values(geoms.iter())),
        ],
    )
    .unwrap()
}

fn append(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let catalog =
        Arc::new(SqliteCatalog::open(dir.path().join("c.db"), "b", dir.path().join("wh")).unwrap());
    catalog.create_namespace("bench").unwrap();
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(catalog, &TableIdent::new("bench", "points").unwrap())
    .unwrap();
    let batch = points(100_000);
    let mut group = c.benchmark_group("append");
    group.sample_size(10);
    group.throughput(Throughput::Elements(100_000));
    group.bench_function("100k_points", |b| {
        b.iter(|| {
            table = table.append(std::slice::from_ref(&batch)).unwrap().0;
        })
    });
    group.finish();
}

criterion_group!(benches, append);
criterion_main!(benches);
