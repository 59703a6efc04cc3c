//! Throughput of the batch kernels: 100 000 points and 10 000 small polygons against a polygon
//! window across the antimeridian.
//!
//! cargo bench -p geoberg-geography --bench kernels -- --warm-up-time 1 --measurement-time 3

use std::hint::black_box;

use arrow_array::{Array, BinaryArray};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use geoberg_geography::{PreparedGeography, distance, intersects};

struct Rng(u64);

impl Rng {
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        lo + (hi - lo) * (((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64)
    }
}

fn polygon(ring: &[(f64, f64)]) -> Vec<u8> {
    let mut v = vec![1, 3, 0, 0, 0, 1, 0, 0, 0];
    v.extend((ring.len() as u32).to_le_bytes());
    for (x, y) in ring {
        v.extend(x.to_le_bytes());
        v.extend(y.to_le_bytes());
    }
    v
}

fn bench(c: &mut Criterion) {
    let mut rng = Rng(7);
    let points: Vec<Vec<u8>> = (0..100_000)
        .map(|_| {
            let mut v = vec![1, 1, 0, 0, 0];
            v.extend(rng.uniform(-180.0, 180.0).to_le_bytes());
            v.extend(rng.uniform(-90.0, 90.0).to_le_bytes());
            v
        })
        .collect();
    let polygons: Vec<Vec<u8>> = (0..10_000)
        .map(|_| {
            let (x, y) = (rng.uniform(-179.0, 179.0), rng.uniform(-80.0, 80.0));
            let ring: Vec<(f64, f64)> = (0..=20)
                .map(|i| {
                    let t = std::f64::consts::TAU * f64::from(i % 20) / 20.0;
                    (x + 0.5 * t.cos(), y + 0.5 * t.sin())
                })
                .collect();
            polygon(&ring)
        })
        .collect();
    let window = PreparedGeography::from_wkb(&polygon(&[
        (170.0, -10.0),
        (-170.0, -10.0),
        (-170.0, 10.0),
        (170.0, 10.0),
        (170.0, -10.0),
    ]))
    .unwrap();
    let points = BinaryArray::from_iter_values(points.iter());
    let polygons = BinaryArray::from_iter_values(polygons.iter());
    let mut g = c.benchmark_group("geography_kernels");
    g.throughput(Throughput::Elements(points.len() as u64));
    g.bench_function("intersects/points", |b| {
        b.iter(|| intersects(black_box(&points), &window).unwrap())
    });
    g.bench_function("distance/points", |b| {
        b.iter(|| distance(black_box(&points), &window).unwrap())
    });
    g.throughput(Throughput::Elements(polygons.len() as u64));
    g.bench_function("intersects/polygons", |b| {
        b.iter(|| intersects(black_box(&polygons), &window).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
