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

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use geoberg_table::{
    BBox, Catalog, Column, CreateTable, DataType, SqliteCatalog, Table, TableIdent,
};

mod tiles;

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
    let data = table.metadata().location().to_string() + "/data";
    for i in 0..n {
        let file = tiles::tile_entry(
            &data,
            &format!("{i:08}-append.parquet"),
            side,
            i,
            5,
            2 * 1024,
        );
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
