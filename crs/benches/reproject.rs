//! Batch reprojection 4326 <-> 3857: slices in place and Arrow `Float64Array` pairs.
//! Throughput is reported in coordinates (points) per second.

use std::hint::black_box;

use arrow_array::Float64Array;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use geoberg_crs::Reprojection;

/// 64 Ki points: the size of a large Arrow record batch.
const N: usize = 1 << 16;

/// Deterministic points spread over the Web Mercator square (no RNG dependency needed).
fn lonlat() -> (Vec<f64>, Vec<f64>) {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..N)
        .map(|_| (next() * 360.0 - 180.0, next() * 170.0 - 85.0))
        .unzip()
}

fn reproject(c: &mut Criterion) {
    let (lon, lat) = lonlat();
    let (mut mx, mut my) = (lon.clone(), lat.clone());
    Reprojection::LonLatToWebMercator
        .transform_slices(&mut mx, &mut my)
        .unwrap();

    let mut group = c.benchmark_group("reproject");
    group.throughput(Throughput::Elements(N as u64));
    for (name, r, xs, ys) in [
        (
            "slices_4326_to_3857",
            Reprojection::LonLatToWebMercator,
            &lon,
            &lat,
        ),
        (
            "slices_3857_to_4326",
            Reprojection::WebMercatorToLonLat,
            &mx,
            &my,
        ),
    ] {
        let (mut bx, mut by) = (xs.clone(), ys.clone());
        group.bench_function(name, |b| {
            b.iter(|| {
                bx.copy_from_slice(xs);
                by.copy_from_slice(ys);
                r.transform_slices(black_box(&mut bx), black_box(&mut by))
                    .unwrap();
            })
        });
    }
    for (name, r, xs, ys) in [
        (
            "arrow_4326_to_3857",
            Reprojection::LonLatToWebMercator,
            &lon,
            &lat,
        ),
        (
            "arrow_3857_to_4326",
            Reprojection::WebMercatorToLonLat,
            &mx,
            &my,
        ),
    ] {
        let (ax, ay) = (
            Float64Array::from(xs.clone()),
            Float64Array::from(ys.clone()),
        );
        group.bench_function(name, |b| {
            b.iter(|| r.transform_arrays(black_box(&ax), black_box(&ay)).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, reproject);
criterion_main!(benches);
