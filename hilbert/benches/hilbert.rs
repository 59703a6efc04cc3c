//! f64 → u64 key throughput at 16 and 32 bits per axis, against `fast_hilbert` 2.1 and the
//! memory floor (read two f64, write one u64) over the same arrays.
//!
//! `cargo bench -p geoberg-hilbert --bench hilbert`; `HILBERT_BENCH_POINTS` sets the number of
//! points (default 10M: 240 MB of traffic, well past the L3 cache).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use geoberg_hilbert::{Bounds, GeoHash, HilbertCurve, Kernel, ZOrderCurve};
use rayon::prelude::*;
use std::hint::black_box;
use std::time::Duration;

struct Data {
    xs: Vec<f64>,
    ys: Vec<f64>,
    out: Vec<u64>,
}

fn data() -> Data {
    let n = std::env::var("HILBERT_BENCH_POINTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000usize);
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let xs = (0..n).map(|_| next() * 360.0 - 180.0).collect();
    let ys = (0..n).map(|_| next() * 180.0 - 90.0).collect();
    Data {
        xs,
        ys,
        out: vec![0; n],
    }
}

/// `fast_hilbert` with the usual normalisation (saturating `as u32`), as a caller would write it.
fn fast_hilbert_batch(p: u8, b: &Bounds, xs: &[f64], ys: &[f64], out: &mut [u64]) {
    let side = (1u64 << p) as f64;
    let (sx, sy) = (side / b.width(), side / b.height());
    let last = ((1u64 << p) - 1) as u32;
    for ((o, &x), &y) in out.iter_mut().zip(xs).zip(ys) {
        let cx = (((x - b.min_x) * sx) as u32).min(last);
        let cy = (((y - b.min_y) * sy) as u32).min(last);
        *o = fast_hilbert::xy2h::<u32>(cx, cy, p);
    }
}

/// The single-value API called once per point, as a row-at-a-time caller would.
fn scalar_loop(curve: &HilbertCurve, xs: &[f64], ys: &[f64], out: &mut [u64]) {
    for ((o, &x), &y) in out.iter_mut().zip(xs).zip(ys) {
        *o = curve.encode(x, y).unwrap();
    }
}

/// Read two f64, write one u64: the cost no encoder can go under.
fn memory_floor(xs: &[f64], ys: &[f64], out: &mut [u64]) {
    for ((o, &x), &y) in out.iter_mut().zip(xs).zip(ys) {
        *o = x.to_bits() ^ y.to_bits();
    }
}

fn configure<'c>(
    c: &'c mut Criterion,
    name: &str,
    n: usize,
) -> criterion::BenchmarkGroup<'c, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    group
}

fn benches(c: &mut Criterion) {
    let Data { xs, ys, mut out } = data();
    let n = xs.len();
    let b = Bounds::WGS84;

    let mut group = configure(c, "scalar", n);
    for p in [16u8, 32] {
        let curve = HilbertCurve::wgs84(p).unwrap();
        group.bench_function(BenchmarkId::new("geoberg_encode", p), |bench| {
            bench.iter(|| scalar_loop(&curve, black_box(&xs), black_box(&ys), &mut out))
        });
        group.bench_function(BenchmarkId::new("fast_hilbert", p), |bench| {
            bench.iter(|| fast_hilbert_batch(p, &b, black_box(&xs), black_box(&ys), &mut out))
        });
    }
    group.finish();

    let mut group = configure(c, "batch", n);
    group.bench_function("memory_floor", |bench| {
        bench.iter(|| memory_floor(black_box(&xs), black_box(&ys), &mut out))
    });
    for p in [16u8, 32] {
        let curve = HilbertCurve::wgs84(p).unwrap();
        group.bench_function(BenchmarkId::new("geoberg", p), |bench| {
            bench.iter(|| {
                curve
                    .encode_batch(black_box(&xs), black_box(&ys), &mut out)
                    .unwrap()
            })
        });
        let portable = curve.with_kernel(Kernel::Portable).unwrap();
        group.bench_function(BenchmarkId::new("geoberg_portable", p), |bench| {
            bench.iter(|| {
                portable
                    .encode_batch(black_box(&xs), black_box(&ys), &mut out)
                    .unwrap()
            })
        });
        group.bench_function(BenchmarkId::new("fast_hilbert", p), |bench| {
            bench.iter(|| fast_hilbert_batch(p, &b, black_box(&xs), black_box(&ys), &mut out))
        });
        let zorder = ZOrderCurve::wgs84(p).unwrap();
        group.bench_function(BenchmarkId::new("zorder", p), |bench| {
            bench.iter(|| {
                zorder
                    .encode_batch(black_box(&xs), black_box(&ys), &mut out)
                    .unwrap()
            })
        });
    }
    let geohash = GeoHash::new(12).unwrap();
    group.bench_function(BenchmarkId::new("geohash_key", 12), |bench| {
        bench.iter(|| {
            geohash
                .encode_key_batch(black_box(&xs), black_box(&ys), &mut out)
                .unwrap()
        })
    });
    group.finish();

    let mut group = configure(c, "parallel", n);
    group.bench_function("memory_floor", |bench| {
        bench.iter(|| {
            xs.par_chunks(1 << 16)
                .zip(ys.par_chunks(1 << 16))
                .zip(out.par_chunks_mut(1 << 16))
                .for_each(|((x, y), o)| memory_floor(black_box(x), black_box(y), o))
        })
    });
    for p in [16u8, 32] {
        let curve = HilbertCurve::wgs84(p).unwrap();
        group.bench_function(BenchmarkId::new("geoberg", p), |bench| {
            bench.iter(|| {
                curve
                    .par_encode_batch(black_box(&xs), black_box(&ys), &mut out)
                    .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(hilbert, benches);
criterion_main!(hilbert);
