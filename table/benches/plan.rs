//! Planning a 1% window over 10 k, 100 k and 1 M data files of a real table: from the manifests
//! (fresh load, nothing cached), cold from the persisted file-bounds index (a fresh handle: no
//! in-process state, as a new process starts) and with the file index cached.
//!
//! The data-file entries are generated directly (a grid of tiles with v3 geometry bounds, `id`
//! bounds and counts, 10 000 entries per manifest, tiles in Hilbert order as a clustered table
//! lays them out) and committed with `stage_data_files`: the manifests, manifest lists,
//! metadata and file-bounds index are the real ones, only the Parquet files are absent. The
//! object-store reads of one cold plan are counted through `FaultyCatalog` and printed.
//! 1 M files take a while to set up; set `GEOBERG_BENCH_1M=1` to include them.

use std::collections::HashMap;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use geoberg_table::testing::FaultyCatalog;
use geoberg_table::{
    BBox, Catalog, Column, CreateTable, DataType, SqliteCatalog, Table, TableIdent,
};
use iceberg::spec::DataFile;

mod tiles;

const PER_MANIFEST: usize = 10_000;

fn table_catalog(dir: &std::path::Path) -> Arc<dyn Catalog> {
    Arc::new(SqliteCatalog::open(dir.join("c.db"), "b", dir.join("wh")).unwrap())
}

/// A table of `n` files, the tiles of a `side x side` grid over the lon/lat extent in Hilbert
/// order (each manifest covers a compact region, as in a clustered table).
fn table_of(dir: &std::path::Path, n: usize) -> Table {
    let catalog = table_catalog(dir);
    catalog.create_namespace("bench").unwrap();
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(
        catalog,
        &TableIdent::new("bench", &format!("t{n}")).unwrap(),
    )
    .unwrap();
    let side = (n as f64).sqrt().ceil() as usize;
    let curve = geoberg_hilbert::HilbertCurve::new(
        16,
        geoberg_hilbert::Bounds::new(0.0, 0.0, side as f64, side as f64).unwrap(),
    )
    .unwrap();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| curve.encode_clamped((i % side) as f64 + 0.5, (i / side) as f64 + 0.5));
    for chunk in order.chunks(PER_MANIFEST) {
        let files = chunk.iter().map(|&i| tile(&table, n, i, "")).collect();
        table = table.stage_data_files(files).unwrap().commit().unwrap();
    }
    table
}

/// The entry of tile `i` of the grid of a table of `n` files (`tag` makes its path new).
fn tile(table: &Table, n: usize, i: usize, tag: &str) -> DataFile {
    let side = (n as f64).sqrt().ceil() as usize;
    let data = table.metadata().location().to_string() + "/data";
    let name = format!("{i:08}{tag}-0b7c2a1e-5d3f-4e8a-9c61-2f4d8e0a7b13.parquet");
    tiles::tile_entry(&data, &name, side, i, 1000, 64 * 1024)
}

fn plan(c: &mut Criterion) {
    let mut sizes = vec![10_000, 100_000];
    if std::env::var_os("GEOBERG_BENCH_1M").is_some() {
        sizes.push(1_000_000);
    }
    // 10% of each axis = 1% of the area, off the tile edges.
    let window = BBox::new(-100.1, -50.1, -64.1, -32.1);
    let mut group = c.benchmark_group("plan");
    group.sample_size(10);
    for n in sizes {
        let dir = tempfile::tempdir().unwrap();
        let t0 = std::time::Instant::now();
        let table = table_of(dir.path(), n);
        eprintln!("setup {n} files: {:.1?}", t0.elapsed());
        let planned = table.scan().with_window("geom", window).plan().unwrap();
        assert_eq!(planned.explain.files_total, n);
        assert!(planned.explain.files_read * 50 < n, "{}", planned.explain);
        let cold = table
            .refresh()
            .unwrap()
            .scan()
            .with_window("geom", window)
            .plan()
            .unwrap();
        assert_eq!(cold.files, planned.files);
        assert!(
            cold.explain
                .reasons
                .iter()
                .any(|r| r.starts_with("planned from the file-bounds index")),
            "{:?}",
            cold.explain.reasons
        );
        let counting = Arc::new(FaultyCatalog::new(table_catalog(dir.path())));
        let ident = TableIdent::new("bench", &format!("t{n}")).unwrap();
        let before = counting.gets();
        let fresh = Table::load(counting.clone(), &ident).unwrap();
        let loaded = counting.gets();
        fresh.scan().with_window("geom", window).plan().unwrap();
        eprintln!(
            "{n} files, cold plan from the file-bounds index: {} object-store GETs ({} to load \
             the table, {} to plan: manifest list, index root, sidecars); {}",
            counting.gets() - before,
            loaded - before,
            counting.gets() - loaded,
            cold.explain.reasons.last().unwrap()
        );
        group.bench_function(format!("{n}_files_1pct_window/from_manifests"), |b| {
            b.iter(|| {
                let fresh = table.refresh().unwrap();
                fresh.file_index("geom").unwrap();
                fresh.scan().with_window("geom", window).plan().unwrap()
            })
        });
        group.bench_function(format!("{n}_files_1pct_window/cold_persisted_index"), |b| {
            b.iter(|| {
                let fresh = table.refresh().unwrap();
                fresh.scan().with_window("geom", window).plan().unwrap()
            })
        });
        group.bench_function(format!("{n}_files_1pct_window/cached_index"), |b| {
            b.iter(|| table.scan().with_window("geom", window).plan().unwrap())
        });
        // What one 1-file append costs on this table, and what its index adds: a sidecar for
        // the new manifest and a root naming every manifest.
        let meta = table.metadata().location().to_string() + "/metadata";
        let listed = |t: &Table| -> HashMap<String, u64> {
            t.storage()
                .list(&meta)
                .unwrap()
                .into_iter()
                .map(|f| (f.location, f.size))
                .collect()
        };
        let before = listed(&table);
        let one = vec![tile(&table, n, 0, "-appended")];
        let t0 = std::time::Instant::now();
        let appended = table.stage_data_files(one).unwrap().commit().unwrap();
        let took = t0.elapsed();
        let new: Vec<(String, u64)> = listed(&appended)
            .into_iter()
            .filter(|(l, _)| !before.contains_key(l))
            .collect();
        let index: u64 = new
            .iter()
            .filter(|(l, _)| l.contains("-bounds-"))
            .map(|(_, s)| s)
            .sum();
        let all: u64 = new.iter().map(|(_, s)| s).sum();
        eprintln!(
            "1-file append to {n} files: {took:.1?}; {} new metadata files, {all} bytes, of \
             which the file-bounds index (root + 1 sidecar) {index} bytes",
            new.len()
        );
    }
    group.finish();
}

criterion_group!(benches, plan);
criterion_main!(benches);
