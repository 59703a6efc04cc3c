//! Sampling a terabyte table: each sampled row stands for many rows of the modelled table.

use crate::error::Error;
use crate::generator::RowFormat;
use crate::model::{DatasetModel, Feature, STREAM_SAMPLE_OVERSIZED};
use crate::rng::SplitMix64;

/// Rows averaged to estimate the mean row width (and so the table's row count).
const PILOT_ROWS: u64 = 4096;

/// How big the modelled table is and how finely it is sampled.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SampleConfig {
    /// Uncompressed bytes of the modelled table (2^40 = 1 TB).
    pub table_bytes: u64,
    /// Target data-file size of the writer (Iceberg's `write.target-file-size-bytes`).
    pub target_file_bytes: u64,
    /// Sampled rows per expected output file. More samples make file MBRs closer to the true
    /// MBR of the millions of rows a file holds (a sampled MBR can only be smaller).
    pub samples_per_file: u32,
    /// Cap on the ordinary sample size (memory: 40 bytes a sample); when files × samples_per_file
    /// exceeds it, samples per file drop, but never below one per expected file.
    pub max_samples: usize,
    /// Columns and row width.
    pub format: RowFormat,
}

impl Default for SampleConfig {
    /// 1 TB (2^40 bytes) in 512 MiB files, 64 samples per file, at most 4 M samples.
    fn default() -> Self {
        Self {
            table_bytes: 1 << 40,
            target_file_bytes: 512 << 20,
            samples_per_file: 64,
            max_samples: 4_000_000,
            format: RowFormat::default(),
        }
    }
}

/// One sampled row: its bbox in CRS coordinates and what it stands for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SampleRow {
    pub(crate) bbox: [f64; 4],
    /// Uncompressed bytes of the rows this sample stands for.
    pub(crate) bytes: f64,
    /// Number of table rows this sample stands for.
    pub(crate) rows: f64,
}

impl SampleRow {
    pub(crate) fn centre(&self) -> (f64, f64) {
        (
            (self.bbox[0] + self.bbox[2]) / 2.0,
            (self.bbox[1] + self.bbox[3]) / 2.0,
        )
    }
}

/// A stratified sample of a modelled table, in arrival order.
///
/// Ordinary rows are taken at evenly spaced row ids (so arrival order is the table's). Oversized
/// rows are rare (0.1% of a 1 TB table is still a million rows, hundreds per file) and would be
/// missed by a uniform sample, so they form their own stratum of up to as many samples as the
/// ordinary one, each standing for fewer rows, placed at evenly spaced arrival positions.
#[derive(Debug, Clone)]
pub struct TableSample {
    pub(crate) model: DatasetModel,
    pub(crate) config: SampleConfig,
    pub(crate) rows_total: u64,
    pub(crate) expected_files: u64,
    pub(crate) samples: Vec<SampleRow>,
}

impl TableSample {
    /// Samples `model` as a table of `config.table_bytes`.
    pub fn new(model: &DatasetModel, config: SampleConfig) -> Result<Self, Error> {
        if config.target_file_bytes == 0 || config.target_file_bytes > config.table_bytes {
            return Err(Error::invalid(
                "target_file_bytes",
                config.target_file_bytes,
                "between 1 and table_bytes, e.g. 536870912 (512 MiB)",
            ));
        }
        if config.samples_per_file == 0 {
            return Err(Error::invalid("samples_per_file", 0, "at least 1, e.g. 64"));
        }
        if config.max_samples == 0 {
            return Err(Error::invalid("max_samples", 0, "at least 1, e.g. 4000000"));
        }
        let crs = model.crs();
        let format = config.format;
        let mut feature = Feature::new();

        let pilot_bytes: u64 = (0..PILOT_ROWS)
            .map(|row| {
                model.unit_row(row, &mut feature);
                format.row_bytes_of(&feature) as u64
            })
            .sum();
        let mean_row_bytes = pilot_bytes as f64 / PILOT_ROWS as f64;
        let rows_total = ((config.table_bytes as f64 / mean_row_bytes) as u64).max(1);
        let expected_files = config.table_bytes.div_ceil(config.target_file_bytes);

        let wanted = expected_files.saturating_mul(u64::from(config.samples_per_file));
        let cap = (config.max_samples as u64).max(expected_files);
        let n_normal = wanted.min(cap).min(rows_total).max(1);
        let oversized_rows = (rows_total as f64 * model.oversized_fraction()).round() as u64;
        let n_over = oversized_rows.min(n_normal);
        let normal_rows = (rows_total - oversized_rows) as f64 / n_normal as f64;
        let over_rows = if n_over > 0 {
            oversized_rows as f64 / n_over as f64
        } else {
            0.0
        };

        // The CRS mapping is linear and increasing, so it maps the unit bbox corner to corner.
        let sample_of = |unit: &Feature, rows: f64| {
            let [u0, v0, u1, v1] = unit.bbox();
            let [x0, y0] = crs.map([u0, v0]);
            let [x1, y1] = crs.map([u1, v1]);
            SampleRow {
                bbox: [x0, y0, x1, y1],
                bytes: format.row_bytes_of(unit) as f64 * rows,
                rows,
            }
        };

        let stride = rows_total as f64 / n_normal as f64;
        let over_stride = rows_total as f64 / n_over.max(1) as f64;
        let mut samples = Vec::with_capacity((n_normal + n_over) as usize);
        let mut next_over = 0u64;
        for j in 0..n_normal {
            let position = (j as f64 + 0.5) * stride;
            while next_over < n_over && (next_over as f64 + 0.5) * over_stride <= position {
                let mut r = SplitMix64::for_item(model.seed(), STREAM_SAMPLE_OVERSIZED, next_over);
                model.unit_oversized(&mut r, &mut feature);
                samples.push(sample_of(&feature, over_rows));
                next_over += 1;
            }
            // The ordinary row nearest this position (skipping the rare oversized ids).
            let mut row = position as u64;
            while model.is_oversized(row) {
                row += 1;
            }
            model.unit_row(row, &mut feature);
            samples.push(sample_of(&feature, normal_rows));
        }
        while next_over < n_over {
            let mut r = SplitMix64::for_item(model.seed(), STREAM_SAMPLE_OVERSIZED, next_over);
            model.unit_oversized(&mut r, &mut feature);
            samples.push(sample_of(&feature, over_rows));
            next_over += 1;
        }
        Ok(Self {
            model: model.clone(),
            config,
            rows_total,
            expected_files,
            samples,
        })
    }

    /// Number of sampled rows (both strata).
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether the sample is empty (never, for a valid config).
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Rows of the modelled table.
    pub fn rows_total(&self) -> u64 {
        self.rows_total
    }

    /// `ceil(table_bytes / target_file_bytes)`: the file count of a perfect writer.
    pub fn expected_files(&self) -> u64 {
        self.expected_files
    }

    /// The configuration sampled with.
    pub fn config(&self) -> &SampleConfig {
        &self.config
    }

    /// The model sampled.
    pub fn model(&self) -> &DatasetModel {
        &self.model
    }
}
