//! Query workloads and their ground truth.

use geoberg_geostats::BBox;

use crate::error::Error;
use crate::rng::SplitMix64;
use crate::sample::TableSample;

/// Window areas of the standard workload as fractions of the extent: 0.01%, 0.1%, 1%, 10%.
pub const STANDARD_WINDOW_AREAS: [f64; 4] = [1e-4, 1e-3, 1e-2, 1e-1];

/// One spatial filter: a rectangle of a given share of the extent's area.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryWindow {
    /// Window area ÷ extent area.
    pub area_fraction: f64,
    /// The window (CRS coordinates).
    pub bbox: BBox,
    /// Share of the table's rows whose bbox meets the window (ground truth).
    pub matching_rows: f64,
    /// Share of the table's bytes in those rows.
    pub matching_bytes: f64,
}

/// Deterministic query windows centred on data points (queries go where the data is).
///
/// A window of area fraction `a` has the extent's aspect ratio and relative side `√a`; it is
/// centred on a sampled row picked in proportion to the rows it stands for, then shifted (not
/// clipped) to lie inside the extent, so every window has its full area. Ground truth counts the
/// sampled rows whose bbox meets the window (for points, the exact answer of `ST_Intersects`).
#[derive(Debug, Clone)]
pub struct Workload {
    /// All windows, grouped by area in the order given.
    pub windows: Vec<QueryWindow>,
}

impl Workload {
    /// `windows_per_size` windows for each area fraction in `area_fractions`.
    pub fn new(
        sample: &TableSample,
        area_fractions: &[f64],
        windows_per_size: usize,
    ) -> Result<Self, Error> {
        if windows_per_size == 0 {
            return Err(Error::invalid(
                "windows_per_size",
                0,
                "at least 1 window per size, e.g. 200",
            ));
        }
        if let Some(&bad) = area_fractions.iter().find(|&&a| !(a > 0.0 && a <= 1.0)) {
            return Err(Error::invalid(
                "area_fraction",
                bad,
                "a share of the extent area in (0, 1], e.g. 0.01 for 1%",
            ));
        }
        let samples = &sample.samples;
        let max_rows = samples.iter().map(|s| s.rows).fold(0.0, f64::max);
        let total_rows: f64 = samples.iter().map(|s| s.rows).sum();
        let total_bytes: f64 = samples.iter().map(|s| s.bytes).sum();
        let [x0, y0, x1, y1] = sample.model.crs().extent();
        let mut r = SplitMix64::new(sample.model.seed() ^ 0x0057_1D0F);
        let mut windows = Vec::with_capacity(area_fractions.len() * windows_per_size);
        for &a in area_fractions {
            let (w, h) = (a.sqrt() * (x1 - x0), a.sqrt() * (y1 - y0));
            for _ in 0..windows_per_size {
                // Pick a row in proportion to the rows a sample stands for (rejection).
                let centre = loop {
                    let s = &samples[r.below(samples.len() as u64) as usize];
                    if r.next_f64() * max_rows <= s.rows {
                        break s.centre();
                    }
                };
                let min_x = (centre.0 - w / 2.0).clamp(x0, x1 - w);
                let min_y = (centre.1 - h / 2.0).clamp(y0, y1 - h);
                let bbox = BBox::new(min_x, min_y, min_x + w, min_y + h);
                let (mut rows, mut bytes) = (0.0, 0.0);
                for s in samples {
                    let b = s.bbox;
                    if b[0] <= bbox.max_x
                        && bbox.min_x <= b[2]
                        && b[1] <= bbox.max_y
                        && bbox.min_y <= b[3]
                    {
                        rows += s.rows;
                        bytes += s.bytes;
                    }
                }
                windows.push(QueryWindow {
                    area_fraction: a,
                    bbox,
                    matching_rows: rows / total_rows,
                    matching_bytes: bytes / total_bytes,
                });
            }
        }
        Ok(Self { windows })
    }
}
