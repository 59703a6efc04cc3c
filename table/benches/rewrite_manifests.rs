//! `rewrite_manifests` on a table of 2,000 small appends (one 5-row file each, so one manifest
//! each): manifests before and after, and the time to plan a 1% window from a fresh load
//! (manifest list and every manifest read) before and after the rewrite.
//!
//! The appends commit generated data-file entries (geometry bounds of a grid tile, counts)
//! through `stage_data_files`: manifests, manifest lists and metadata are the real ones, only
//! the Parquet files are absent (planning never opens them). `GEOBERG_BENCH_APPENDS` changes
//! the number of appends.
//!
//! `cargo bench -p geoberg-table --bench rewrite_manifests`

use std::collections::HashMap;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use geoberg_geostats::encode_geospatial_bounds;
use geoberg_table::{
    BBox, Catalog, Column, CreateTable, DataType, SqliteCatalog, Table, TableIdent,
};
use iceberg::spec::{DataContentType, DataFileBuilder, DataFileFormat, Datum, Struct};

/// A table of `n` appends, append `i` one file on tile `i` of a grid over lon/lat.
fn appended(dir: &std::path::Path, n: usize) -> Table {
    let catalog = Arc::new(SqliteCatalog::open(dir.join("c.db"), "b", dir.join("wh")).unwrap());
    catalog.create_namespace("bench").unwrap();
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(catalog, &TableIdent::new("bench", "appends").unwrap())
    .unwrap();
    let side = (n as f64).sqrt().ceil() as usize;
    let (w, h) = (360.0 / side as f64, 180.0 / side as f64);
    let data = table.metadata().location().to_string() + "/data";
    let rows = 5i64;
    for i in 0..n {
        let (x, y) = (
            -180.0 + (i % side) as f64 * w,
            -90.0 + (i / side) as f64 * h,
        );
        let (lo, hi) = encode_geospatial_bounds(&BBox::new(x, y, x + w, y + h));
        let file = DataFileBuilder::default()
            .content(DataContentType::Data)
            .file_path(format!("{data}/{i:08}-append.parquet"))
            .file_format(DataFileFormat::Parquet)
            .partition(Struct::empty())
            .record_count(rows as u64)
            .file_size_in_bytes(2 * 1024)
            .value_counts(HashMap::from([(1, rows as u64), (2, rows as u64)]))
            .null_value_counts(HashMap::from([(1, 0), (2, 0)]))
            .column_sizes(HashMap::from([(1, 40), (2, 200)]))
            .lower_bounds(HashMap::from([
                (1, Datum::long(i as i64 * rows)),
                (2, Datum::binary(lo)),
            ]))
            .upper_bounds(HashMap::from([
                (1, Datum::long(i as i64 * rows + rows - 1)),
                (2, Datum::binary(hi)),
            ]))
            .build()
            .unwrap();
        table = table
            .stage_data_files(vec![file])
            .unwrap()
            .commit()
            .unwrap();
    }
    table
}

fn rewrite_manifests(c: &mut Criterion) {
    let n: usize = std::env::var("GEOBERG_BENCH_APPENDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    // 10% of each axis = 1% of the area.
    let window = BBox::new(-100.1, -50.1, -64.1, -32.1);
    let dir = tempfile::tempdir().unwrap();
    let t0 = std::time::Instant::now();
    let table = appended(dir.path(), n);
    eprintln!("setup {n} appends: {:.1?}", t0.elapsed());
    let plan_fresh = |t: &Table| {
        let fresh = t.refresh().unwrap();
        fresh.scan().with_window("geom", window).plan().unwrap()
    };
    let before = plan_fresh(&table);
    assert_eq!(before.explain.files_total, n);

    let mut group = c.benchmark_group("rewrite_manifests");
    group.sample_size(10);
    group.bench_function(format!("{n}_appends/plan_1pct_window/before"), |b| {
        b.iter(|| plan_fresh(&table))
    });
    let t0 = std::time::Instant::now();
    let (rewritten, report) = table.rewrite_manifests().execute().unwrap();
    eprintln!(
        "rewrite_manifests: {:.1?}; manifests {} -> {} ({} replaced, {} added)",
        t0.elapsed(),
        report.manifests_before,
        report.manifests_after,
        report.rewritten_manifests_count,
        report.added_manifests_count
    );
    let after = plan_fresh(&rewritten);
    assert_eq!(after.explain.files_total, n);
    assert_eq!(after.explain.files_read, before.explain.files_read);
    group.bench_function(format!("{n}_appends/plan_1pct_window/after"), |b| {
        b.iter(|| plan_fresh(&rewritten))
    });
    group.finish();
}

criterion_group!(benches, rewrite_manifests);
criterion_main!(benches);
