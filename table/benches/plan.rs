//! Planning a 1% window over 10 k, 100 k and 1 M data files of a real table: from the manifests
//! (fresh load, nothing cached) and with the file index cached.
//!
//! The data-file entries are generated directly (a grid of tiles with v3 geometry bounds, `id`
//! bounds and counts, 10 000 entries per manifest) and committed with `stage_data_files`: the
//! manifests, manifest lists and metadata are the real ones, only the Parquet files are absent.
//! 1 M files take a while to set up; set `GEOBERG_BENCH_1M=1` to include them.

use std::collections::HashMap;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use geoberg_geostats::encode_geospatial_bounds;
use geoberg_table::{
    BBox, Catalog, Column, CreateTable, DataType, SqliteCatalog, Table, TableIdent,
};
use iceberg::spec::{DataContentType, DataFileBuilder, DataFileFormat, Datum, Struct};

const PER_MANIFEST: usize = 10_000;

/// A table of `n` files, tile `i` of a `side x side` grid over the lon/lat extent.
fn table_of(dir: &std::path::Path, n: usize) -> Table {
    let catalog = Arc::new(SqliteCatalog::open(dir.join("c.db"), "b", dir.join("wh")).unwrap());
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
    let (w, h) = (360.0 / side as f64, 180.0 / side as f64);
    let data = table.metadata().location().to_string() + "/data";
    for start in (0..n).step_by(PER_MANIFEST) {
        let files = (start..n.min(start + PER_MANIFEST))
            .map(|i| {
                let (x, y) = (
                    -180.0 + (i % side) as f64 * w,
                    -90.0 + (i / side) as f64 * h,
                );
                let (lo, hi) = encode_geospatial_bounds(&BBox::new(x, y, x + w, y + h));
                let rows = 1000i64;
                DataFileBuilder::default()
                    .content(DataContentType::Data)
                    .file_path(format!(
                        "{data}/{i:08}-0b7c2a1e-5d3f-4e8a-9c61-2f4d8e0a7b13.parquet"
                    ))
                    .file_format(DataFileFormat::Parquet)
                    .partition(Struct::empty())
                    .record_count(rows as u64)
                    .file_size_in_bytes(64 * 1024)
                    .value_counts(HashMap::from([(1, rows as u64), (2, rows as u64)]))
                    .null_value_counts(HashMap::from([(1, 0), (2, 0)]))
                    .column_sizes(HashMap::from([(1, 8_000), (2, 40_000)]))
                    .lower_bounds(HashMap::from([
                        (1, Datum::long(i as i64 * rows)),
                        (2, Datum::binary(lo)),
                    ]))
                    .upper_bounds(HashMap::from([
                        (1, Datum::long(i as i64 * rows + rows - 1)),
                        (2, Datum::binary(hi)),
                    ]))
                    .build()
                    .unwrap()
            })
            .collect();
        table = table.stage_data_files(files).unwrap().commit().unwrap();
    }
    table
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
        group.bench_function(format!("{n}_files_1pct_window/from_manifests"), |b| {
            b.iter(|| {
                let fresh = table.refresh().unwrap();
                fresh.scan().with_window("geom", window).plan().unwrap()
            })
        });
        group.bench_function(format!("{n}_files_1pct_window/cached_index"), |b| {
            b.iter(|| table.scan().with_window("geom", window).plan().unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, plan);
criterion_main!(benches);
