//! `layout-report`: how much of a simulated terabyte a spatial query reads under each layout.
//!
//! ```text
//! cargo run --release -p geoberg-bench-data --bin layout-report -- \
//!     [--distribution uniform,cities] [--oversized 0,0.001] [--table-bytes 1TB] \
//!     [--file-bytes 512MiB] [--samples-per-file 64] [--windows 200] [--seed 42] \
//!     [--crs 4326|3857] [--csv report.csv] [--json report.json]
//! ```
//! Sizes take B, KiB, MiB, GiB, TiB, PiB and KB, MB, GB, TB, PB (both binary, as in the issue:
//! 1 TB = 2^40 bytes).

use std::process::ExitCode;

use geoberg_bench_data::{
    Crs, DatasetModel, Distribution, LayoutReport, STANDARD_WINDOW_AREAS, SampleConfig, Strategy,
    TableSample, Workload,
};

struct Args {
    distributions: Vec<Distribution>,
    oversized: Vec<f64>,
    config: SampleConfig,
    windows: usize,
    seed: u64,
    crs: Crs,
    csv: Option<String>,
    json: Option<String>,
}

fn parse_size(v: &str) -> Result<u64, String> {
    let v = v.trim();
    let split = v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "kb" | "kib" => 10,
        "mb" | "mib" => 20,
        "gb" | "gib" => 30,
        "tb" | "tib" => 40,
        "pb" | "pib" => 50,
        _ => return Err(format!("unknown size unit in {v:?}; use e.g. 1TB, 512MiB")),
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("size {v:?} is not a number with a unit, e.g. 512MiB"))?;
    Ok((n * (1u64 << shift) as f64) as u64)
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        distributions: vec![Distribution::Uniform, Distribution::CITIES],
        oversized: vec![0.0, 0.001],
        config: SampleConfig::default(),
        windows: 200,
        seed: 42,
        crs: Crs::Wgs84,
        csv: None,
        json: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| format!("{flag} {v:?} is not a number"))
        };
        match flag.as_str() {
            "--distribution" => {
                a.distributions = value
                    .split(',')
                    .map(|d| Distribution::from_name(d).map_err(|e| e.to_string()))
                    .collect::<Result<_, _>>()?;
            }
            "--oversized" => {
                a.oversized = value.split(',').map(num).collect::<Result<_, _>>()?;
            }
            "--table-bytes" => a.config.table_bytes = parse_size(&value)?,
            "--file-bytes" => a.config.target_file_bytes = parse_size(&value)?,
            "--samples-per-file" => a.config.samples_per_file = num(&value)? as u32,
            "--windows" => a.windows = num(&value)? as usize,
            "--seed" => a.seed = num(&value)? as u64,
            "--crs" => {
                a.crs = match value.as_str() {
                    "4326" | "wgs84" => Crs::Wgs84,
                    "3857" | "webmercator" => Crs::WebMercator,
                    _ => return Err(format!("--crs {value:?}: use 4326 or 3857")),
                }
            }
            "--csv" => a.csv = Some(value),
            "--json" => a.json = Some(value),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

fn run(args: &Args) -> Result<LayoutReport, geoberg_bench_data::Error> {
    let mut all = LayoutReport { rows: Vec::new() };
    for &distribution in &args.distributions {
        for &oversized in &args.oversized {
            let model = DatasetModel::builder(distribution)
                .seed(args.seed)
                .crs(args.crs)
                .oversized_fraction(oversized)
                .build()?;
            let sample = TableSample::new(&model, args.config)?;
            let workload = Workload::new(&sample, &STANDARD_WINDOW_AREAS, args.windows)?;
            eprintln!(
                "{} (oversized {}%): {} rows modelled, {} samples, {} files expected",
                distribution.name(),
                100.0 * oversized,
                sample.rows_total(),
                sample.len(),
                sample.expected_files()
            );
            let report = LayoutReport::run(&sample, &Strategy::standard_set(), &workload)?;
            all.rows.extend(report.rows);
        }
    }
    Ok(all)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("error: {msg}");
            }
            eprintln!(
                "usage: layout-report [--distribution uniform,cities,roads,parcels] [--oversized 0,0.001] \
                 [--table-bytes 1TB] [--file-bytes 512MiB] [--samples-per-file 64] [--windows 200] \
                 [--seed 42] [--crs 4326|3857] [--csv PATH] [--json PATH]"
            );
            return ExitCode::from(2);
        }
    };
    let report = match run(&args) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    print!("{}", report.to_markdown());
    let written = (|| -> Result<(), geoberg_bench_data::Error> {
        if let Some(path) = &args.csv {
            report.write_csv(std::io::BufWriter::new(std::fs::File::create(path)?))?;
        }
        if let Some(path) = &args.json {
            std::fs::write(path, report.to_json())?;
        }
        Ok(())
    })();
    if let Err(e) = written {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
