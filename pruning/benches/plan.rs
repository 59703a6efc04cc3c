//! Plan time (R-tree vs linear scan), index build time and index bytes per entry over uniform
//! tile layouts of 10 k .. 1 M files (10 M with `GEOBERG_BENCH_10M=1`).
//!
//! `cargo bench -p geoberg-pruning --bench plan -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use geoberg_crs::{ColumnType, Crs, FormatVersion};
use geoberg_geostats::BBox;
use geoberg_pruning::{Bounded, Bounds, BoxFilter, FileIndex};

/// A compact file entry (the layout of a simulated table), bounded through the trait.
struct Tile {
    bbox: [f64; 4],
    records: u32,
    bytes: u32,
}

impl Bounded for Tile {
    fn bounds(&self) -> Bounds {
        let [a, b, c, d] = self.bbox;
        Bounds::Box(BBox::new(a, b, c, d))
    }
    fn record_count(&self) -> u64 {
        u64::from(self.records)
    }
    fn size_in_bytes(&self) -> u64 {
        u64::from(self.bytes)
    }
}

/// `n` files as a square grid of tiles over the WGS84 extent (as a perfectly clustered table
/// would have them).
fn tiles(n: usize) -> Vec<Tile> {
    let side = (n as f64).sqrt().ceil() as usize;
    let (w, h) = (360.0 / side as f64, 180.0 / side as f64);
    (0..n)
        .map(|i| {
            let (x, y) = (
                -180.0 + (i % side) as f64 * w,
                -90.0 + (i / side) as f64 * h,
            );
            Tile {
                bbox: [x, y, x + w, y + h],
                records: 100_000,
                bytes: 128 << 20,
            }
        })
        .collect()
}

/// A window covering 1% of the extent (a tenth of each side).
fn one_percent() -> BoxFilter {
    BoxFilter::intersects(BBox::new(10.0, 10.0, 46.0, 28.0))
}

fn column() -> ColumnType {
    ColumnType::geometry(Crs::OgcCrs84)
}

fn sizes() -> Vec<usize> {
    let mut v = vec![10_000, 100_000, 1_000_000];
    if std::env::var_os("GEOBERG_BENCH_10M").is_some() {
        v.push(10_000_000);
    }
    v
}

fn bench_plan(c: &mut Criterion) {
    let mut g = c.benchmark_group("plan_1pct");
    g.sample_size(10);
    for n in sizes() {
        let index = FileIndex::build(tiles(n), &column(), FormatVersion::V3).unwrap();
        let f = one_percent();
        let plan = index.plan(&f).unwrap();
        eprintln!(
            "{n} files: reads {} ({:.2}%), index {} bytes = {:.1} bytes/entry (+ {} bytes/entry of Tile)",
            plan.read().files,
            plan.scanned_fraction() * 100.0,
            index.index_bytes(),
            index.index_bytes() as f64 / n as f64,
            size_of::<Tile>()
        );
        g.bench_with_input(BenchmarkId::new("rtree", n), &n, |b, _| {
            b.iter(|| index.plan(black_box(&f)).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("linear", n), &n, |b, _| {
            b.iter(|| index.plan_linear(black_box(&f)).unwrap())
        });
    }
    g.finish();
}

fn bench_build(c: &mut Criterion) {
    let mut g = c.benchmark_group("build");
    g.sample_size(10);
    for n in sizes() {
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter_batched(
                || tiles(n),
                |t| FileIndex::build(t, &column(), FormatVersion::V3).unwrap(),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench_plan, bench_build);
criterion_main!(benches);
