//! Synthetic geometry data and simulated terabyte-scale file layouts.
//!
//! geoberg is judged by one question: after clustering, how much of a terabyte does a selective
//! spatial query read? This crate answers it without a terabyte of disk:
//!
//! - [`DatasetModel`] describes a seeded dataset (uniform, skewed cities, roads, parcels, a
//!   share of oversized geometries). [`DatasetModel::batches`] streams it as Arrow record
//!   batches: `id`, `arrival_ts`, `state` (derived from location), `geometry` (WKB or EWKB),
//!   optional `bbox_min_x`..`bbox_max_y`, and `payload_<i>` up to a target row width. Row `i` is
//!   drawn from its own random stream, so the same seed gives the same bytes, shards can be
//!   generated in parallel, and only one batch is in memory at a time.
//! - [`TableSample`] samples the same model as a table of any size (1 TB = 2^40 bytes and up);
//!   each sampled row stands for many rows. [`TableSample::layout`] simulates the data files a
//!   writer produces under a [`Strategy`] (arrival, random, x-sort, GeoHash, Z-order, Hilbert
//!   per file group, Hilbert global, Hilbert with oversized rows split off), keyed with
//!   `geoberg-hilbert` and bounded with `geoberg-geostats` boxes.
//! - [`Workload`] draws query windows of 0.01%..10% of the extent centred on data, with ground
//!   truth; [`LayoutReport`] gives files read, bytes read and read amplification per strategy
//!   and window (the `layout-report` binary prints it and writes CSV / JSON).
//!
//! Produce a dataset and a report:
//!
//! ```
//! use geoberg_bench_data::{
//!     DatasetModel, Distribution, GenerateOptions, LayoutReport, SampleConfig, Strategy,
//!     TableSample, Workload,
//! };
//!
//! let model = DatasetModel::builder(Distribution::CITIES).seed(7).build()?;
//!
//! // 10,000 rows in batches of 4,096 (write them with parquet's ArrowWriter, IPC, ...).
//! let options = GenerateOptions { rows: 10_000, batch_size: 4096, ..Default::default() };
//! let rows: usize = model.batches(options)?.map(|b| b.unwrap().num_rows()).sum();
//! assert_eq!(rows, 10_000);
//!
//! // A 64 GiB table in 512 MiB files, 16 samples per file (the CLI defaults to 1 TB and 64).
//! let config = SampleConfig { table_bytes: 64 << 30, samples_per_file: 16, ..Default::default() };
//! let sample = TableSample::new(&model, config)?;
//! let workload = Workload::new(&sample, &[0.01], 20)?;
//! let strategies = [Strategy::Arrival, Strategy::HilbertGlobal { bits: 16 }];
//! let report = LayoutReport::run(&sample, &strategies, &workload)?;
//! let (unsorted, hilbert) = (&report.rows[0].result, &report.rows[1].result);
//! assert!(hilbert.files_read_pct < unsorted.files_read_pct);
//! println!("{}", report.to_markdown());
//! # Ok::<(), geoberg_bench_data::Error>(())
//! ```
//!
//! The headline report for 1 TB:
//! `cargo run --release -p geoberg-bench-data --bin layout-report -- --csv report.csv`.
//!
//! Modelling choices: row bytes are uncompressed widths (payload is random, so it does not
//! compress); a file's MBR is the union of its sampled rows' boxes, which can only be smaller than
//! the true MBR of the millions of rows it stands for (tests show results stable when the sample
//! doubles); each window query is planned by `geoberg-pruning`'s `FileIndex`, as a scan of a real
//! table would be.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod crs;
mod error;
mod generator;
mod keys;
mod layout;
mod model;
mod report;
mod rng;
mod sample;
mod wkb_writer;
mod workload;

pub use crs::Crs;
pub use error::Error;
pub use generator::{BatchStream, GenerateOptions, RowFormat, schema};
pub use layout::{DataFile, Layout, Strategy};
pub use model::{DatasetModel, DatasetModelBuilder, Distribution};
pub use report::{LayoutReport, ReportRow, WindowResult, evaluate};
pub use sample::{SampleConfig, TableSample};
pub use wkb_writer::GeometryEncoding;
pub use workload::{QueryWindow, STANDARD_WINDOW_AREAS, Workload};
