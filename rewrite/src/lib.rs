//! Hilbert-clustered rewrites of Parquet data files, planned globally and executed in bounded
//! memory, on local disk or any object store ([`RewriteStorage`]).
//!
//! This is the planning and execution half of `CREATE SPATIAL INDEX` /
//! `rewrite_data_files(strategy => 'sort', sort_order => 'hilbert(geom, p)')`; the `table` crate
//! parses the statements and commits the result as one REPLACE snapshot. Nothing here knows
//! about catalogs: the input is a list of [`InputFile`]s (manifest facts), the output a list of
//! [`OutputFile`]s with their statistics.
//!
//! 1. [`RewriteOptions::parse`] reads Iceberg's option map (names and defaults of
//!    `rewrite_data_files`, plus `target-file-count`, `max-memory-bytes`, `spill-dir`, `threads`).
//! 2. [`plan_rewrite`] runs the preflight (precision, curve bounds vs the files' bounds), selects
//!    files (`rewrite-all`, Iceberg's size rules, or an [`overlap_depth`] metric), samples the
//!    Hilbert keys of each partition and cuts **global** key ranges at byte-weighted quantiles, so
//!    the output files of a partition have disjoint, ordered key ranges. Oversized geometries
//!    and null ones get files of their own; empty ones join the regular files (a file of
//!    empties alone would have no bounds, and every window would read it). The [`RewritePlan`] is serde-serializable.
//! 3. [`execute`] streams the inputs on a rayon pool, keys rows by the Hilbert index of their
//!    bbox centre (ties broken by input and row ordinal), routes them to sort chunks that spill
//!    to Arrow IPC runs past the memory budget, sorts each chunk and writes Parquet files rolled
//!    near the target size, keeping the input schema (field ids, GEOMETRY logical type). Inputs
//!    whose columns differ (a table whose schema evolved) are read through the caller's
//!    [`TargetSchema`] ([`InputStorage::target_schema`]), and the outputs get its columns.
//! 4. Geography ([`GeoColumns`]): a geography column is keyed by the centre of each value's box
//!    on the sphere (the midpoint of its longitude arc, across the antimeridian where the box
//!    wraps), and every geography column of the output files is bounded on the sphere
//!    ([`OutputFile::bbox`], [`OutputFile::geography_bboxes`]); the Parquet row groups get
//!    sound GEOGRAPHY statistics through `geoberg_geostats::install_parquet_geo_stats`.
//! 5. Other orders ([`RowOrder`], [`plan_rewrite_ordered`]): columns with directions and null
//!    orders, Iceberg's z-order ([`ordered_bytes`], [`interleave_bits`]: `ZOrderByteUtils`), or
//!    the input order (bin-pack). Rows get an order-preserving `u64` prefix key, so planning,
//!    routing and spilling are the Hilbert path's; each sort chunk is then ordered by the full
//!    sort order. [`sort_indices`] orders one batch (what an append under `write.sort-order`
//!    does per file).
//! 6. Iceberg v3 row lineage: when the inputs carry a [`RowLineage`] (their `first_row_id` and
//!    data sequence number), every output file also gets the reserved `_row_id` and
//!    `_last_updated_sequence_number` columns, each row's value copied from its input file's
//!    column or derived as a reader would (`first_row_id + position`, the data sequence number),
//!    so that rows keep their ids through any number of rewrites.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{BinaryArray, Int64Array, RecordBatch};
//! use arrow_schema::{DataType, Field, Schema};
//! use geoberg_rewrite::{
//!     DirectoryStorage, HilbertSpec, InputFile, LocalFiles, RewriteOptions, execute, plan_rewrite,
//! };
//!
//! let dir = tempfile::tempdir()?;
//! let point = |x: f64, y: f64| {
//!     let mut w = vec![1u8, 1, 0, 0, 0];
//!     w.extend(x.to_le_bytes());
//!     w.extend(y.to_le_bytes());
//!     w
//! };
//! let schema = Arc::new(Schema::new(vec![
//!     Field::new("id", DataType::Int64, false),
//!     Field::new("geom", DataType::Binary, true),
//! ]));
//! let wkb: Vec<Vec<u8>> = (0..100).map(|i| point(i as f64 - 50.0, (i % 7) as f64)).collect();
//! let batch = RecordBatch::try_new(schema.clone(), vec![
//!     Arc::new(Int64Array::from_iter_values(0..100)),
//!     Arc::new(BinaryArray::from_iter_values(wkb.iter())),
//! ])?;
//! let input = dir.path().join("in.parquet");
//! let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&input)?, schema, None)?;
//! w.write(&batch)?;
//! w.close()?;
//! let size = std::fs::metadata(&input)?.len();
//!
//! let options = RewriteOptions::parse([("rewrite-all", "true")], None)?;
//! let inputs = [InputFile::new(input.display().to_string(), size, 100)];
//! let plan = plan_rewrite(&inputs, "geom", &HilbertSpec::wgs84(16)?, &options, &LocalFiles)?;
//! let out = dir.path().join("out");
//! std::fs::create_dir(&out)?;
//! let outcome = execute(&plan, &DirectoryStorage { dir: out, prefix: "run1".into() })?;
//! assert_eq!(outcome.result.rewritten_data_files_count, 1);
//! assert_eq!(outcome.added.iter().map(|f| f.record_count).sum::<u64>(), 100);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod columns;
mod dictionary;
mod error;
mod execute;
mod input;
mod keys;
mod lineage;
mod options;
mod plan;
mod planner;
mod row_order;
mod selection;
mod sizing;
mod source;
mod spill;
mod storage;
mod target_schema;
mod writer;

pub use columns::GeoColumns;
pub use dictionary::distinct_columns;
pub use error::RewriteError;
pub use execute::{RewriteOutcome, RewriteResult, execute, execute_tasks};
/// File, partition and curve bounds, and the curve: the CRS crate's types, re-exported so that
/// plans need no second import.
pub use geoberg_crs::{Extent, HilbertSpec};
pub use input::{DeletedRows, InputFile, PartitionKey, RowLineage};
pub use keys::{RowClass, RowKey, row_keys};
pub use lineage::{
    LAST_UPDATED_SEQUENCE_NUMBER_COLUMN, LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID, ROW_ID_COLUMN,
    ROW_ID_FIELD_ID, arrow_field_id, derive_lineage, is_lineage_field, lineage_fields,
};
pub use options::{
    DEFAULT_MAX_MEMORY_BYTES, DEFAULT_TARGET_FILE_SIZE_BYTES, OPTION_KEYS, OutputCodec,
    RewriteOptions,
};
pub use plan::{KeyRange, OversizeRule, PartitionPlan, RewritePlan, RewriteTask};
pub use planner::{plan_rewrite, plan_rewrite_ordered};
pub use row_order::{
    RowOrder, SortColumn, ZORDER_BYTES_PER_COLUMN, ZOrderTerm, interleave_bits, ordered_bytes,
    sort_indices,
};
pub use selection::{SelectionReason, overlap_depth};
pub use storage::{
    DirectoryStorage, InputStorage, LocalFile, LocalFiles, OutputStream, RandomAccess,
    RewriteStorage, local_path,
};
pub use target_schema::TargetSchema;
pub use writer::{ColumnMetrics, OutputFile};
