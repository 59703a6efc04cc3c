//! Rewrites 2 M synthetic points (or `--rows N`) and prints wall time, CPU time (user + system)
//! and peak RSS (VmHWM).
//!
//! `cargo run --release -p geoberg-rewrite --example rewrite_2m -- [--rows N] [--memory BYTES]`
//! The input is generated first; VmHWM is reset (`/proc/self/clear_refs`) before the rewrite
//! where the kernel allows it, otherwise the peak includes generation.

use std::time::Instant;

use geoberg_rewrite::{DirectoryStorage, HilbertSpec, RewriteOptions, execute, plan_rewrite};

#[allow(dead_code)]
#[path = "../benches/gen_points.rs"]
mod gen_points;

fn vm_hwm_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// User + system CPU seconds of this process so far (`/proc/self/stat`, 100 ticks/s).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // After the command name: state is field 0, utime field 11, stime field 12.
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let rows: usize = arg("--rows").map_or(2_000_000, |v| v.parse().expect("--rows N"));
    let files: usize = arg("--files").map_or(8, |v| v.parse().expect("--files N"));
    let dir = tempfile::tempdir().expect("temp dir");
    let t = Instant::now();
    let inputs = gen_points::write_points(dir.path(), rows, files, 42);
    let input_bytes: u64 = inputs.iter().map(|f| f.file_size_bytes).sum();
    eprintln!(
        "generated {rows} rows in {} files, {input_bytes} bytes, {:.2?}",
        inputs.len(),
        t.elapsed()
    );
    // Reset the high-water mark so that it measures the rewrite only.
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let mut pairs = vec![("rewrite-all".to_string(), "true".to_string())];
    if let Some(m) = arg("--memory") {
        pairs.push(("max-memory-bytes".into(), m));
    }
    if let Some(s) = arg("--target") {
        pairs.push(("target-file-size-bytes".into(), s));
    }
    let options = RewriteOptions::parse(pairs, None).expect("options");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("out dir");
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let plan = plan_rewrite(
        &inputs,
        "geom",
        &HilbertSpec::wgs84(16).expect("curve"),
        &options,
        &geoberg_rewrite::LocalFiles,
    )
    .expect("plan");
    let planned = start.elapsed();
    let outcome = execute(
        &plan,
        &DirectoryStorage {
            dir: out,
            prefix: "ex".into(),
        },
    )
    .expect("execute");
    let wall = start.elapsed();
    let cpu = cpu_seconds() - cpu0;
    let out_bytes: u64 = outcome.added.iter().map(|f| f.file_size_bytes).sum();
    println!(
        "rows={rows} input_bytes={input_bytes} output_files={} output_bytes={out_bytes} spilled_bytes={} plan={:.3}s wall={:.3}s cpu={cpu:.2}s peak_rss_mb={:.1} (hwm reset: {reset}) budget_mb={:.0}",
        outcome.added.len(),
        outcome.spilled_bytes,
        planned.as_secs_f64(),
        wall.as_secs_f64(),
        vm_hwm_kib().unwrap_or(0) as f64 / 1024.0,
        options.max_memory_bytes as f64 / 1048576.0,
    );
}
