//! The layout simulator: the data files a writer would produce from a sampled table under each
//! clustering strategy.

use geoberg_geostats::BBox;
use geoberg_pruning::{Bounded, Bounds};

use crate::crs::Crs;
use crate::error::Error;
use crate::keys::{geohash_keys, hilbert_keys, zorder_keys};
use crate::rng::SplitMix64;
use crate::sample::{SampleRow, TableSample};

/// How a writer orders rows before rolling them into target-size files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Strategy {
    /// Rows in arrival order: the table as appended, never rewritten.
    Arrival,
    /// Rows shuffled (a hash-distributed write).
    Random,
    /// Sorted by `bbox_min_x` alone (a naive single-column sort).
    SortX,
    /// Sorted by `bbox_min_x`, then `bbox_min_y`: seed 001's `write.sort-order` /
    /// `sortWithinPartitions("bbox_min_x", "bbox_min_y")` recipe, what geoberg's
    /// `sort_order => 'bbox_min_x ASC, bbox_min_y ASC'` writes.
    SortBBoxMinXMinY,
    /// Sorted by the GeoHash of the bbox centre.
    GeoHash {
        /// GeoHash characters (1..=12; 5 bits each).
        chars: u8,
    },
    /// Sorted by the Z-order (Morton) key of the bbox centre.
    ZOrder {
        /// Bits per axis.
        bits: u8,
    },
    /// Input split in arrival order into `groups` file groups, each Hilbert-sorted on its own
    /// (Iceberg Java's `rewrite_data_files` sorts per file group of up to 100 GiB).
    HilbertPerGroup {
        /// Number of independently sorted groups.
        groups: u32,
        /// Bits per axis.
        bits: u8,
    },
    /// One global Hilbert range partition over the whole table.
    HilbertGlobal {
        /// Bits per axis.
        bits: u8,
    },
    /// Global Hilbert order, with rows whose bbox is wider or taller than an ideal file tile
    /// (extent side ÷ √files) routed to files of their own.
    HilbertOversizedSplit {
        /// Bits per axis.
        bits: u8,
    },
}

impl Strategy {
    /// The strategies of the headline report, in reading order.
    pub fn standard_set() -> Vec<Strategy> {
        vec![
            Strategy::Arrival,
            Strategy::Random,
            Strategy::SortX,
            Strategy::SortBBoxMinXMinY,
            Strategy::GeoHash { chars: 8 },
            Strategy::ZOrder { bits: 16 },
            Strategy::HilbertPerGroup {
                groups: 64,
                bits: 16,
            },
            Strategy::HilbertPerGroup {
                groups: 10,
                bits: 16,
            },
            Strategy::HilbertGlobal { bits: 16 },
            Strategy::HilbertOversizedSplit { bits: 16 },
        ]
    }

    /// A short stable name for tables, CSV and JSON.
    pub fn name(&self) -> String {
        match self {
            Strategy::Arrival => "arrival".into(),
            Strategy::Random => "random".into(),
            Strategy::SortX => "sort-x".into(),
            Strategy::SortBBoxMinXMinY => "sort-bbox-min-x-min-y".into(),
            Strategy::GeoHash { chars } => format!("geohash-{chars}"),
            Strategy::ZOrder { bits } => format!("z-order-{bits}"),
            Strategy::HilbertPerGroup { groups, bits } => format!("hilbert-{bits}-groups-{groups}"),
            Strategy::HilbertGlobal { bits } => format!("hilbert-{bits}-global"),
            Strategy::HilbertOversizedSplit { bits } => format!("hilbert-{bits}-oversized-split"),
        }
    }
}

/// One simulated data file, as its manifest entry would describe it.
#[derive(Debug, Clone, PartialEq)]
pub struct DataFile {
    /// Rows in the file.
    pub record_count: u64,
    /// Uncompressed bytes in the file.
    pub bytes: u64,
    /// Minimum bounding rectangle of the file's geometries (CRS coordinates).
    pub mbr: BBox,
}

impl Bounded for DataFile {
    fn bounds(&self) -> Bounds {
        Bounds::Box(self.mbr)
    }
    fn record_count(&self) -> u64 {
        self.record_count
    }
    fn size_in_bytes(&self) -> u64 {
        self.bytes
    }
}

/// The files one strategy produces for one sampled table.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The strategy simulated.
    pub strategy: Strategy,
    /// The coordinate system of the file MBRs.
    pub crs: Crs,
    /// Files in write order.
    pub files: Vec<DataFile>,
}

impl Layout {
    /// Total bytes over all files.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes).sum()
    }
}

impl TableSample {
    /// Simulates `strategy` on this table: orders the sampled rows as the writer would and rolls
    /// them into files of the target size.
    pub fn layout(&self, strategy: Strategy) -> Result<Layout, Error> {
        let n = self.samples.len();
        let arrival: Vec<u32> = (0..n as u32).collect();
        let extent = self.model.crs().extent();
        let runs: Vec<Vec<u32>> = match strategy {
            Strategy::Arrival => vec![arrival],
            Strategy::Random => {
                let mut order = arrival;
                let mut r = SplitMix64::new(self.model.seed() ^ 0x5EED_F11E);
                for i in (1..order.len()).rev() {
                    order.swap(i, r.below(i as u64 + 1) as usize);
                }
                vec![order]
            }
            Strategy::SortX => {
                let mut order = arrival;
                order.sort_by(|&a, &b| {
                    self.samples[a as usize].bbox[0].total_cmp(&self.samples[b as usize].bbox[0])
                });
                vec![order]
            }
            Strategy::SortBBoxMinXMinY => {
                let mut order = arrival;
                order.sort_by(|&a, &b| {
                    let (a, b) = (
                        &self.samples[a as usize].bbox,
                        &self.samples[b as usize].bbox,
                    );
                    a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1]))
                });
                vec![order]
            }
            Strategy::GeoHash { chars } => {
                vec![sort_by_keys(
                    arrival,
                    &geohash_keys(&self.samples, self.model.crs(), chars)?,
                )]
            }
            Strategy::ZOrder { bits } => {
                vec![sort_by_keys(
                    arrival,
                    &zorder_keys(&self.samples, extent, bits)?,
                )]
            }
            Strategy::HilbertGlobal { bits } => {
                vec![sort_by_keys(
                    arrival,
                    &hilbert_keys(&self.samples, extent, bits)?,
                )]
            }
            Strategy::HilbertPerGroup { groups, bits } => {
                if groups == 0 {
                    return Err(Error::invalid(
                        "groups",
                        0,
                        "at least 1 file group, e.g. 10 (1 TB in 100 GiB groups)",
                    ));
                }
                let keys = hilbert_keys(&self.samples, extent, bits)?;
                let group_bytes = self.total_bytes() / f64::from(groups);
                let mut runs = vec![Vec::new(); groups as usize];
                let mut cum = 0.0;
                for i in arrival {
                    let b = self.samples[i as usize].bytes;
                    let g = (((cum + b / 2.0) / group_bytes) as usize).min(runs.len() - 1);
                    runs[g].push(i);
                    cum += b;
                }
                runs.into_iter()
                    .filter(|r| !r.is_empty())
                    .map(|r| sort_by_keys(r, &keys))
                    .collect()
            }
            Strategy::HilbertOversizedSplit { bits } => {
                let keys = hilbert_keys(&self.samples, extent, bits)?;
                let side = 1.0 / (self.expected_files as f64).sqrt();
                let (tile_w, tile_h) = (
                    side * (extent[2] - extent[0]),
                    side * (extent[3] - extent[1]),
                );
                let (big, normal): (Vec<u32>, Vec<u32>) = arrival.into_iter().partition(|&i| {
                    let b = self.samples[i as usize].bbox;
                    b[2] - b[0] > tile_w || b[3] - b[1] > tile_h
                });
                [normal, big]
                    .into_iter()
                    .filter(|r| !r.is_empty())
                    .map(|r| sort_by_keys(r, &keys))
                    .collect()
            }
        };
        let target = self.config.target_file_bytes as f64;
        let mut files = Vec::new();
        for run in &runs {
            roll_files(&self.samples, run, target, &mut files);
        }
        Ok(Layout {
            strategy,
            crs: self.model.crs(),
            files,
        })
    }

    fn total_bytes(&self) -> f64 {
        self.samples.iter().map(|s| s.bytes).sum()
    }
}

/// Stable sort of `order` by `keys[i]`: ties keep arrival order, so layouts are deterministic.
fn sort_by_keys(mut order: Vec<u32>, keys: &[u64]) -> Vec<u32> {
    order.sort_by_key(|&i| keys[i as usize]);
    order
}

/// Rolls an ordered run into files: a sample goes to file ⌊(bytes before it + half its bytes) /
/// target⌋ of the run, so files are target-sized up to one sample and each run ends in a
/// (possibly smaller) file of its own, as a writer closing a task does.
fn roll_files(samples: &[SampleRow], run: &[u32], target: f64, out: &mut Vec<DataFile>) {
    let mut cum = 0.0;
    let mut current: Option<(usize, FileAcc)> = None;
    for &i in run {
        let s = &samples[i as usize];
        let index = ((cum + s.bytes / 2.0) / target) as usize;
        cum += s.bytes;
        match &mut current {
            Some((idx, acc)) if *idx == index => acc.add(s),
            _ => {
                if let Some((_, acc)) = current.take() {
                    out.push(acc.finish());
                }
                let mut acc = FileAcc::new(s);
                acc.add(s);
                current = Some((index, acc));
            }
        }
    }
    if let Some((_, acc)) = current {
        out.push(acc.finish());
    }
}

struct FileAcc {
    rows: f64,
    bytes: f64,
    bbox: [f64; 4],
}

impl FileAcc {
    fn new(first: &SampleRow) -> Self {
        Self {
            rows: 0.0,
            bytes: 0.0,
            bbox: first.bbox,
        }
    }

    fn add(&mut self, s: &SampleRow) {
        self.rows += s.rows;
        self.bytes += s.bytes;
        self.bbox[0] = self.bbox[0].min(s.bbox[0]);
        self.bbox[1] = self.bbox[1].min(s.bbox[1]);
        self.bbox[2] = self.bbox[2].max(s.bbox[2]);
        self.bbox[3] = self.bbox[3].max(s.bbox[3]);
    }

    fn finish(self) -> DataFile {
        let [a, b, c, d] = self.bbox;
        DataFile {
            record_count: self.rows.round() as u64,
            bytes: self.bytes.round() as u64,
            mbr: BBox::new(a, b, c, d),
        }
    }
}
