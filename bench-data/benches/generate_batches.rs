//! Generator throughput: rows/s and MB/s of `DatasetModel::batches`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use geoberg_bench_data::{DatasetModel, Distribution, GenerateOptions, RowFormat};

const ROWS: u64 = 100_000;

fn generate_batches(c: &mut Criterion) {
    let mut g = c.benchmark_group("generate_batches");
    g.sample_size(10);
    for (name, dist, width) in [
        ("uniform_points_64B", Distribution::Uniform, 64),
        ("cities_points_1KiB", Distribution::CITIES, 1024),
        ("parcels_1KiB_bbox", Distribution::PARCELS, 1024),
    ] {
        let model = DatasetModel::builder(dist).build().unwrap();
        let options = GenerateOptions {
            rows: ROWS,
            batch_size: 8192,
            format: RowFormat {
                row_width_bytes: width,
                bbox_columns: name.ends_with("bbox"),
                ..RowFormat::default()
            },
            ..GenerateOptions::default()
        };
        let bytes: usize = model
            .batches(options)
            .unwrap()
            .map(|b| b.unwrap().get_array_memory_size())
            .sum();
        g.throughput(Throughput::Elements(ROWS));
        g.bench_function(format!("{name}/rows"), |b| {
            b.iter(|| {
                model
                    .batches(options)
                    .unwrap()
                    .map(|b| b.unwrap().num_rows())
                    .sum::<usize>()
            })
        });
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_function(format!("{name}/bytes"), |b| {
            b.iter(|| {
                model
                    .batches(options)
                    .unwrap()
                    .map(|b| b.unwrap().num_rows())
                    .sum::<usize>()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, generate_batches);
criterion_main!(benches);
