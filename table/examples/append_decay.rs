//! How window pruning decays as data streams into a clustered table (issue 28), measured on real
//! tables written by geoberg.
//!
//! `append_decay [base-rows] [appends] [every] [windows] [svg] [ratio] [generations]` clusters
//! `base-rows` skewed points (clusters around 40 "cities" plus a uniform background) with
//! `CREATE SPATIAL INDEX` into 64 files, then appends `appends` batches of 1% of the base each, in arrival order, to four
//! copies of that table:
//! - (a) plain: cluster on write off (`geoberg.write.cluster-on-write = false`);
//! - (b) cluster on write: every append cut at the clustered key ranges (the default);
//! - (c) incremental: cluster on write and an incremental clustering
//!   (`rewrite_data_files` with `incremental`, `incremental.min-new-data-ratio` = `ratio`,
//!   default 0.5, and `incremental.max-delta-generations` = `generations`, default 1) every
//!   `every` appends;
//! - (d) re-indexed: plain appends and a full `CREATE SPATIAL INDEX` every `every` appends.
//!
//! Every `every` appends it prints, per table, the mean files and MB that `windows` windows of 1%
//! and of 0.1% of the world's area (centred on random rows) must read, from the manifests'
//! bounds, and the bytes appended and rewritten; with `svg` it draws the 1% files-read curves.

use std::fmt::Write as _;
use std::sync::Arc;

use geoberg_table::{
    BBox, CLUSTER_ON_WRITE_PROPERTY, Catalog, Column, CreateTable, DataType, SqliteCatalog, Table,
    TableIdent,
};

#[path = "common/skewed_points.rs"]
mod skewed_points;

use skewed_points::{Rng, batch, points};

/// Mean files and bytes read by windows of `fraction` of the world's area.
fn mean_read(table: &Table, xy: &[(f64, f64)], fraction: f64, windows: usize) -> (f64, f64) {
    let (w, h) = (360.0 * fraction.sqrt(), 170.0 * fraction.sqrt());
    let mut rng = Rng(7);
    let (mut files, mut bytes) = (0usize, 0u64);
    for _ in 0..windows {
        let (cx, cy) = xy[(rng.next() % xy.len() as u64) as usize];
        let window = BBox::new(cx - w / 2.0, cy - h / 2.0, cx + w / 2.0, cy + h / 2.0);
        let explain = table
            .scan()
            .with_window("geom", window)
            .plan()
            .unwrap()
            .explain;
        files += explain.files_read;
        bytes += explain.bytes_read;
    }
    (
        files as f64 / windows as f64,
        bytes as f64 / windows as f64 / 1e6,
    )
}

/// One of the four tables and what its writes cost.
struct Copy {
    name: &'static str,
    table: Table,
    appended_bytes: u64,
    rewritten_bytes: u64,
    /// Mean files read by a 1% window at each checkpoint.
    curve: Vec<(usize, f64)>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg =
        |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (base, appends, every, windows) = (
        arg(0, 4_000_000),
        arg(1, 100),
        arg(2, 10).max(1),
        arg(3, 200),
    );
    let svg = args.get(4).cloned().filter(|s| s != "-");
    let ratio = args.get(5).cloned().unwrap_or_else(|| "0.5".into());
    let generations = args.get(6).cloned().unwrap_or_else(|| "1".into());
    let per_append = (base / 100).max(1);
    let xy = points(base + appends * per_append);
    let dir = tempfile::tempdir()?;
    let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(
        dir.path().join("catalog.db"),
        "geoberg",
        dir.path().join("warehouse"),
    )?);
    catalog.create_namespace("bench")?;

    let mut copies = Vec::new();
    let mut file_size = 0;
    for (i, name) in [
        "(a) plain",
        "(b) cluster on write",
        "(c) incremental",
        "(d) re-indexed",
    ]
    .into_iter()
    .enumerate()
    {
        let mut table = CreateTable::new([
            Column::new("id", DataType::Long).required(),
            Column::new("geom", DataType::geometry(4326)),
        ])
        .create(
            catalog.clone(),
            &TableIdent::new("bench", &format!("t{i}"))?,
        )?;
        let per_file = base.div_ceil(10);
        for f in 0..10 {
            let ids = f * per_file..((f + 1) * per_file).min(base);
            table = table.append(&[batch(ids, &xy)])?.0;
        }
        table = table
            .rewrite()
            .hilbert("geom", 16)
            .option("target-file-count", "64")
            .execute()?
            .0;
        // Re-indexing keeps the clustered files' size.
        file_size = table
            .data_files()?
            .iter()
            .map(|f| f.file_size_in_bytes())
            .sum::<u64>()
            / 64;
        if name.starts_with("(a)") || name.starts_with("(d)") {
            table = table.set_properties([(CLUSTER_ON_WRITE_PROPERTY, "false")])?;
        }
        copies.push(Copy {
            name,
            table,
            appended_bytes: 0,
            rewritten_bytes: 0,
            curve: Vec::new(),
        });
    }

    println!(
        "{base} clustered points in 64 files, {appends} appends of {per_append} rows, {windows} \
         windows of each size"
    );
    println!(
        "| appends | table | data files | files read, 1% | MB read, 1% | files read, 0.1% | \
         MB read, 0.1% | MB appended | MB rewritten |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for a in 0..=appends {
        if a > 0 {
            let ids = base + (a - 1) * per_append..base + a * per_append;
            for c in &mut copies {
                let (table, report) = c.table.append(&[batch(ids.clone(), &xy)])?;
                c.table = table;
                c.appended_bytes += report.bytes;
            }
        }
        if a % every != 0 {
            continue;
        }
        for c in &mut copies {
            let maintain = c.name.starts_with("(c)") || c.name.starts_with("(d)");
            if maintain && a > 0 {
                let incremental = c.name.starts_with("(c)").to_string();
                let (table, report) = c
                    .table
                    .rewrite()
                    .hilbert("geom", 16)
                    .option("target-file-size-bytes", file_size.to_string())
                    .option("incremental", incremental)
                    .option("incremental.min-new-data-ratio", &ratio)
                    .option("incremental.max-delta-generations", &generations)
                    .execute()?;
                c.table = table;
                c.rewritten_bytes += report.added_bytes_count;
            }
            let (f1, b1) = mean_read(&c.table, &xy, 0.01, windows);
            let (f01, b01) = mean_read(&c.table, &xy, 0.001, windows);
            c.curve.push((a, f1));
            println!(
                "| {a} | {} | {} | {f1:.1} | {b1:.1} | {f01:.1} | {b01:.2} | {:.1} | {:.1} |",
                c.name,
                c.table.data_files()?.len(),
                c.appended_bytes as f64 / 1e6,
                c.rewritten_bytes as f64 / 1e6,
            );
        }
    }
    if let Some(path) = svg {
        std::fs::write(&path, plot(&copies, appends))?;
        println!("wrote {path}");
    }
    Ok(())
}

/// Files read by a 1% window against appends, one line per table.
fn plot(copies: &[Copy], appends: usize) -> String {
    let (w, h, pad) = (640.0, 360.0, 48.0);
    let top = copies
        .iter()
        .flat_map(|c| c.curve.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        .ceil();
    let x = |a: usize| pad + (w - 2.0 * pad) * a as f64 / appends.max(1) as f64;
    let y = |f: f64| h - pad - (h - 2.0 * pad) * f / top;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>\n<line x1=\"{pad}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"black\"/>\n\
         <line x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{b}\" stroke=\"black\"/>\n\
         <text x=\"{cx}\" y=\"{bx}\" text-anchor=\"middle\">appends of 1% ({appends})</text>\n\
         <text x=\"12\" y=\"{pad}\">files read by a 1% window (0 to {top})</text>\n",
        b = h - pad,
        r = w - pad,
        cx = w / 2.0,
        bx = h - 12.0,
    );
    for (c, colour) in copies
        .iter()
        .zip(["#d62728", "#ff7f0e", "#2ca02c", "#1f77b4"])
    {
        let points: Vec<String> = c
            .curve
            .iter()
            .map(|&(a, f)| format!("{:.1},{:.1}", x(a), y(f)))
            .collect();
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>",
            points.join(" ")
        );
        if let Some(&(a, f)) = c.curve.last() {
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{colour}\">{}</text>",
                x(a) - 150.0,
                y(f) - 6.0,
                c.name
            );
        }
    }
    s.push_str("</svg>\n");
    s
}
