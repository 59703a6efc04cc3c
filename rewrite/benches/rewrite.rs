//! Whole Hilbert rewrite (plan + execute) of 2 M uniform points, 8 columns.
//!
//! `cargo bench -p geoberg-rewrite --bench rewrite`; peak RSS comes from
//! `cargo run --release -p geoberg-rewrite --example rewrite_2m`.

use criterion::{Criterion, criterion_group, criterion_main};
use geoberg_rewrite::{DirectoryStorage, HilbertSpec, RewriteOptions, execute, plan_rewrite};

#[allow(dead_code)]
mod gen_points;

fn rewrite_2m(c: &mut Criterion) {
    let rows: usize = std::env::var("GEOBERG_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let dir = tempfile::tempdir().unwrap();
    let inputs = gen_points::write_points(dir.path(), rows, 8, 42);
    let options = RewriteOptions::parse([("rewrite-all", "true")], None).unwrap();
    let curve = HilbertSpec::wgs84(16).unwrap();
    let mut group = c.benchmark_group("rewrite");
    group.sample_size(10);
    let mut run = 0;
    group.bench_function(format!("hilbert_rewrite_{rows}_points"), |b| {
        b.iter(|| {
            run += 1;
            let out = dir.path().join(format!("out-{run}"));
            std::fs::create_dir(&out).unwrap();
            let plan = plan_rewrite(
                &inputs,
                "geom",
                &curve,
                &options,
                &geoberg_rewrite::LocalFiles,
            )
            .unwrap();
            let outcome = execute(
                &plan,
                &DirectoryStorage {
                    dir: out.clone(),
                    prefix: "b".into(),
                },
            )
            .unwrap();
            std::fs::remove_dir_all(&out).unwrap();
            outcome.result.added_data_files_count
        })
    });
    group.finish();
}

criterion_group!(benches, rewrite_2m);
criterion_main!(benches);
