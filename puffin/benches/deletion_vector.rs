//! Encode and decode of a deletion vector with 1 M deleted positions, in three shapes: one dense
//! run (run containers), every other row (array/bitmap containers), and random rows spread over
//! 100 M rows (many sparse containers); plus the keep/skip runs a scan builds from it.
//!
//! `cargo bench -p geoberg-puffin --bench deletion_vector`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use geoberg_puffin::DeletionVector;

const POSITIONS: u64 = 1_000_000;

fn shapes() -> Vec<(&'static str, DeletionVector, u64)> {
    let mut dense = DeletionVector::new();
    dense
        .insert_range(5_000_000..5_000_000 + POSITIONS)
        .unwrap();
    let alternate = DeletionVector::from_positions((0..POSITIONS).map(|i| 2 * i)).unwrap();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut random = DeletionVector::new();
    while random.len() < POSITIONS {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        random.insert(state % 100_000_000).unwrap();
    }
    vec![
        ("dense-run", dense, 6_000_000),
        ("every-other-row", alternate, 2 * POSITIONS),
        ("random-of-100M", random, 100_000_000),
    ]
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("deletion_vector_1M");
    g.throughput(Throughput::Elements(POSITIONS));
    for (name, dv, rows) in shapes() {
        let blob = dv.to_blob().unwrap();
        eprintln!("{name}: blob of {} bytes", blob.len());
        g.bench_with_input(BenchmarkId::new("encode", name), &dv, |b, dv| {
            b.iter(|| black_box(dv.to_blob().unwrap()))
        });
        g.bench_with_input(BenchmarkId::new("decode", name), &blob, |b, blob| {
            b.iter(|| black_box(DeletionVector::from_blob(blob).unwrap()))
        });
        g.bench_with_input(BenchmarkId::new("keep_skip_runs", name), &dv, |b, dv| {
            b.iter(|| black_box(dv.keep_skip_runs(rows).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
