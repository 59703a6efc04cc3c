//! What a spatial query reads under each layout: the headline report.

use std::io::Write;

use crate::error::Error;
use geoberg_crs::FormatVersion;
use geoberg_pruning::{BoxFilter, FileIndex};

use crate::layout::{Layout, Strategy};
use crate::sample::TableSample;
use crate::workload::Workload;

/// Averages over all windows of one area for one layout.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WindowResult {
    /// Window area ÷ extent area.
    pub area_fraction: f64,
    /// Windows averaged.
    pub windows: usize,
    /// Files in the layout.
    pub files: usize,
    /// Mean share of files read, in percent.
    pub files_read_pct: f64,
    /// Mean share of table bytes read, in percent.
    pub bytes_read_pct: f64,
    /// Mean share of rows matching (ground truth), in percent.
    pub matching_rows_pct: f64,
    /// Bytes read ÷ bytes of matching rows, summed over the windows (1 is perfect).
    pub read_amplification: f64,
}

/// Evaluates every window of `workload` against `layout`, planning each query with the
/// `pruning` crate's [`FileIndex`] exactly as a scan of the table would.
pub fn evaluate(layout: &Layout, workload: &Workload) -> Result<Vec<WindowResult>, Error> {
    let total_bytes = layout.total_bytes() as f64;
    let files = layout.files.len();
    let index = FileIndex::build(
        layout.files.clone(),
        &layout.crs.column_type(),
        FormatVersion::V3,
    )?;
    let mut results: Vec<WindowResult> = Vec::new();
    let mut sums: Vec<(f64, f64)> = Vec::new(); // (bytes read, matching bytes) per size
    for w in &workload.windows {
        let plan = index.plan(&BoxFilter::intersects(w.bbox).with_crs(layout.crs.declared()))?;
        let (read_files, read_bytes) = (plan.read().files as usize, plan.read().bytes);
        let idx = match results
            .iter()
            .position(|r| r.area_fraction == w.area_fraction)
        {
            Some(i) => i,
            None => {
                results.push(WindowResult {
                    area_fraction: w.area_fraction,
                    windows: 0,
                    files,
                    files_read_pct: 0.0,
                    bytes_read_pct: 0.0,
                    matching_rows_pct: 0.0,
                    read_amplification: 0.0,
                });
                sums.push((0.0, 0.0));
                results.len() - 1
            }
        };
        let r = &mut results[idx];
        r.windows += 1;
        r.files_read_pct += 100.0 * read_files as f64 / files as f64;
        r.bytes_read_pct += 100.0 * read_bytes as f64 / total_bytes;
        r.matching_rows_pct += 100.0 * w.matching_rows;
        sums[idx].0 += read_bytes as f64;
        sums[idx].1 += w.matching_bytes * total_bytes;
    }
    for (r, (read, matching)) in results.iter_mut().zip(sums) {
        let n = r.windows as f64;
        r.files_read_pct /= n;
        r.bytes_read_pct /= n;
        r.matching_rows_pct /= n;
        r.read_amplification = read / matching;
    }
    Ok(results)
}

/// One line of the report: one strategy at one window size.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReportRow {
    /// Distribution name.
    pub distribution: String,
    /// Share of oversized rows.
    pub oversized_fraction: f64,
    /// Modelled table size.
    pub table_bytes: u64,
    /// Writer target file size.
    pub target_file_bytes: u64,
    /// Sampled rows behind the layout.
    pub samples: usize,
    /// Strategy name.
    pub strategy: String,
    /// Window area in percent of the extent.
    pub window_area_pct: f64,
    /// The per-window averages.
    #[serde(flatten)]
    pub result: WindowResult,
    /// `(s + 1/√N)²` in percent: files a window of relative side `s` meets when `N` equal files
    /// tile the extent as a square grid (the ideal for uniform data).
    pub grid_ideal_files_pct: f64,
}

/// The report over strategies × window sizes for one sampled table.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LayoutReport {
    /// Rows in strategy-major order.
    pub rows: Vec<ReportRow>,
}

impl LayoutReport {
    /// Simulates every strategy on `sample` and evaluates it on `workload`.
    pub fn run(
        sample: &TableSample,
        strategies: &[Strategy],
        workload: &Workload,
    ) -> Result<Self, Error> {
        let mut rows = Vec::new();
        for &strategy in strategies {
            let layout = sample.layout(strategy)?;
            for result in evaluate(&layout, workload)? {
                let n = result.files as f64;
                let s = result.area_fraction.sqrt();
                rows.push(ReportRow {
                    distribution: sample.model.distribution().name().to_owned(),
                    oversized_fraction: sample.model.oversized_fraction(),
                    table_bytes: sample.config.table_bytes,
                    target_file_bytes: sample.config.target_file_bytes,
                    samples: sample.len(),
                    strategy: strategy.name(),
                    window_area_pct: 100.0 * result.area_fraction,
                    grid_ideal_files_pct: 100.0 * ((s + 1.0 / n.sqrt()).powi(2)).min(1.0),
                    result,
                });
            }
        }
        Ok(Self { rows })
    }

    /// A markdown table (one line per strategy × window).
    pub fn to_markdown(&self) -> String {
        let mut s = String::from(
            "| data | oversized | strategy | files | window | rows matching | files read | bytes read | read amplification | grid ideal |\n\
             |---|---|---|---|---|---|---|---|---|---|\n",
        );
        for r in &self.rows {
            s.push_str(&format!(
                "| {} | {}% | {} | {} | {}% | {:.3}% | {:.2}% | {:.2}% | {:.1}× | {:.2}% |\n",
                r.distribution,
                100.0 * r.oversized_fraction,
                r.strategy,
                r.result.files,
                r.window_area_pct,
                r.result.matching_rows_pct,
                r.result.files_read_pct,
                r.result.bytes_read_pct,
                r.result.read_amplification,
                r.grid_ideal_files_pct,
            ));
        }
        s
    }

    /// Writes the rows as CSV with a header line.
    pub fn write_csv(&self, mut out: impl Write) -> Result<(), Error> {
        writeln!(
            out,
            "distribution,oversized_fraction,table_bytes,target_file_bytes,samples,strategy,window_area_pct,windows,files,files_read_pct,bytes_read_pct,matching_rows_pct,read_amplification,grid_ideal_files_pct"
        )?;
        for r in &self.rows {
            writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{:.4},{:.4},{:.5},{:.4},{:.4}",
                r.distribution,
                r.oversized_fraction,
                r.table_bytes,
                r.target_file_bytes,
                r.samples,
                r.strategy,
                r.window_area_pct,
                r.result.windows,
                r.result.files,
                r.result.files_read_pct,
                r.result.bytes_read_pct,
                r.result.matching_rows_pct,
                r.result.read_amplification,
                r.grid_ideal_files_pct,
            )?;
        }
        Ok(())
    }

    /// The rows as pretty JSON.
    pub fn to_json(&self) -> String {
        // Plain numbers and strings only: serialization cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
