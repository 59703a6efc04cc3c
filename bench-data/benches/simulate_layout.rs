//! Layout simulation time (sampling + Hilbert-global layout) for 1 TB, 10 TB and 1 PB tables in
//! 512 MiB files.

use criterion::{Criterion, criterion_group, criterion_main};
use geoberg_bench_data::{DatasetModel, Distribution, SampleConfig, Strategy, TableSample};

fn simulate_layout(c: &mut Criterion) {
    let mut g = c.benchmark_group("simulate_layout");
    g.sample_size(10);
    let model = DatasetModel::builder(Distribution::CITIES).build().unwrap();
    // samples per file: 64 at 1 TB (131k samples), 64 at 10 TB (1.3M), and the 4M cap at 1 PB
    // (2 per file for 2M files).
    for (name, table_bytes) in [("1TB", 1u64 << 40), ("10TB", 10 << 40), ("1PB", 1 << 50)] {
        let config = SampleConfig {
            table_bytes,
            ..SampleConfig::default()
        };
        g.bench_function(format!("{name}/sample"), |b| {
            b.iter(|| TableSample::new(&model, config).unwrap().len())
        });
        let sample = TableSample::new(&model, config).unwrap();
        g.bench_function(format!("{name}/hilbert_global_layout"), |b| {
            b.iter(|| {
                sample
                    .layout(Strategy::HilbertGlobal { bits: 16 })
                    .unwrap()
                    .files
                    .len()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, simulate_layout);
criterion_main!(benches);
