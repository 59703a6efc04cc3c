//! The layout simulator against theory, the reference simulation's orders of magnitude, and its
//! own invariants. Sample sizes are small to keep debug test time low.

use geoberg_bench_data::{
    DatasetModel, Distribution, LayoutReport, SampleConfig, Strategy, TableSample, Workload,
    evaluate,
};

const MIB: u64 = 1 << 20;

fn sample(d: Distribution, oversized: f64, files: u64, samples_per_file: u32) -> TableSample {
    let model = DatasetModel::builder(d)
        .oversized_fraction(oversized)
        .build()
        .unwrap();
    let config = SampleConfig {
        table_bytes: files * 512 * MIB,
        target_file_bytes: 512 * MIB,
        samples_per_file,
        ..SampleConfig::default()
    };
    TableSample::new(&model, config).unwrap()
}

/// Mean files read (%) of `strategy` over `windows` windows of area fraction `area`.
fn files_read(s: &TableSample, strategy: Strategy, area: f64, windows: usize) -> f64 {
    let w = Workload::new(s, &[area], windows).unwrap();
    evaluate(&s.layout(strategy).unwrap(), &w).unwrap()[0].files_read_pct
}

const HILBERT: Strategy = Strategy::HilbertGlobal { bits: 16 };

#[test]
fn hilbert_on_uniform_data_meets_the_grid_closed_form() {
    // N = 1000 equal files, s = 0.1: (s + 1/sqrt(N))^2 = 1.73%. A Hilbert file is not a perfect
    // square cell (the reference simulation measured 1.8%), and sampled MBRs are slightly
    // small; tolerance: within -10% / +15% of the closed form.
    let s = sample(Distribution::Uniform, 0.0, 1000, 32);
    let ideal = 100.0 * (0.1 + 1.0 / 1000f64.sqrt()).powi(2);
    assert!((ideal - 1.73).abs() < 0.01);
    let got = files_read(&s, HILBERT, 0.01, 150);
    assert!(
        got > 0.90 * ideal && got < 1.15 * ideal,
        "hilbert read {got:.3}% of files, closed form {ideal:.3}%"
    );
}

#[test]
fn results_are_stable_when_the_sample_doubles() {
    for d in [Distribution::Uniform, Distribution::CITIES] {
        for strategy in [HILBERT, Strategy::ZOrder { bits: 16 }, Strategy::SortX] {
            let small = files_read(&sample(d, 0.0, 500, 16), strategy, 0.01, 100);
            let large = files_read(&sample(d, 0.0, 500, 32), strategy, 0.01, 100);
            let change = (large - small).abs() / large;
            assert!(
                change < 0.15,
                "{} {}: {small:.3}% at 16/file vs {large:.3}% at 32/file",
                d.name(),
                strategy.name()
            );
        }
    }
}

#[test]
fn orders_of_magnitude_of_the_reference_simulation_on_uniform_data() {
    let s = sample(Distribution::Uniform, 0.0, 1000, 32);
    let read = |st| files_read(&s, st, 0.01, 100);
    let (arrival, x, z, h) = (
        read(Strategy::Arrival),
        read(Strategy::SortX),
        read(Strategy::ZOrder { bits: 16 }),
        read(HILBERT),
    );
    assert!(arrival > 90.0, "arrival {arrival}"); // reference: 100%
    assert!((7.0..13.0).contains(&x), "sort-x {x}"); // reference: 9.8%
    // Seed 001's bbox_min_x, bbox_min_y sort: min_y only breaks ties of min_x, which points
    // almost never have, so it cuts the same vertical slabs (s + 1/N) as sort-x.
    let xy = read(Strategy::SortBBoxMinXMinY);
    assert!((xy - x).abs() / x < 0.05, "sort-bbox {xy} vs sort-x {x}");
    assert!((1.8..2.8).contains(&z), "z-order {z}"); // reference: 2.2%
    assert!(h < z, "hilbert {h} vs z-order {z}"); // reference: 1.8% < 2.2%
    let geohash = read(Strategy::GeoHash { chars: 8 });
    assert!(
        (geohash - z).abs() / z < 0.1,
        "geohash {geohash} ~ z-order {z}"
    );
}

#[test]
fn per_group_sorting_and_oversized_rows_hurt_and_splitting_repairs() {
    let s = sample(Distribution::CITIES, 0.0, 1000, 16);
    let global = files_read(&s, HILBERT, 0.01, 100);
    let groups = files_read(
        &s,
        Strategy::HilbertPerGroup {
            groups: 64,
            bits: 16,
        },
        0.01,
        100,
    );
    // reference: 64 groups read ~4.7x more than one global sort
    assert!(
        groups > 2.5 * global,
        "64 groups {groups} vs global {global}"
    );

    let o = sample(Distribution::CITIES, 0.001, 1000, 16);
    let with_big = files_read(&o, HILBERT, 0.01, 100);
    let split = files_read(&o, Strategy::HilbertOversizedSplit { bits: 16 }, 0.01, 100);
    // reference: 0.1% oversized rows tripled the files read
    assert!(
        with_big > 2.0 * global,
        "oversized {with_big} vs clean {global}"
    );
    assert!(split < 1.3 * global, "split {split} vs clean {global}");
}

#[test]
fn layouts_conserve_rows_and_bytes_and_are_deterministic() {
    let s = sample(Distribution::PARCELS, 0.01, 200, 8);
    for strategy in Strategy::standard_set() {
        let layout = s.layout(strategy).unwrap();
        let bytes = layout.total_bytes() as f64;
        let rows: u64 = layout.files.iter().map(|f| f.record_count).sum();
        let table = (200 * 512 * MIB) as f64;
        assert!(
            (bytes / table - 1.0).abs() < 0.01,
            "{}: {bytes}",
            strategy.name()
        );
        assert!((rows as f64 / s.rows_total() as f64 - 1.0).abs() < 0.01);
        let n = layout.files.len() as u64;
        // Per-group layouts close a smaller file at the end of each group.
        assert!(
            (200..=200 + 64 + 2).contains(&n),
            "{}: {n} files",
            strategy.name()
        );
        assert!(layout.files.iter().all(|f| f.mbr.is_valid()));
        assert_eq!(layout.files, s.layout(strategy).unwrap().files);
    }
}

#[test]
fn report_has_every_strategy_and_window_in_csv_and_json() {
    let s = sample(Distribution::Uniform, 0.0, 100, 8);
    let w = Workload::new(&s, &[1e-3, 1e-2], 10).unwrap();
    let strategies = Strategy::standard_set();
    let report = LayoutReport::run(&s, &strategies, &w).unwrap();
    assert_eq!(report.rows.len(), strategies.len() * 2);
    let mut csv = Vec::new();
    report.write_csv(&mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    assert_eq!(csv.lines().count(), 1 + report.rows.len());
    assert!(csv.contains("hilbert-16-global,1,10,"));
    let back: LayoutReport = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(back.rows.len(), report.rows.len());
    assert!(report.to_markdown().contains("| z-order-16 |"));
}

#[test]
fn bad_layout_settings_are_typed_errors() {
    let model = DatasetModel::builder(Distribution::Uniform)
        .build()
        .unwrap();
    let config = SampleConfig {
        table_bytes: 1 << 30,
        target_file_bytes: 1 << 31,
        ..SampleConfig::default()
    };
    let e = TableSample::new(&model, config).unwrap_err();
    assert!(
        e.to_string().contains("target_file_bytes = 2147483648"),
        "{e}"
    );
    let s = sample(Distribution::Uniform, 0.0, 10, 4);
    let e = s.layout(Strategy::HilbertGlobal { bits: 40 }).unwrap_err();
    assert!(e.to_string().contains("40"), "{e}");
    assert!(Workload::new(&s, &[0.0], 10).is_err());
}
