//! Apache Iceberg tables with geometry columns: catalogs, storage, create, append, rewrite,
//! scan, maintenance.
//!
//! `geoberg-table` turns the leaf crates into real Iceberg tables that Java, pyiceberg and
//! DuckDB read: catalogs in the JDBC/pyiceberg layout, v3 `geometry` / `geography` columns whose
//! CRS is enforced on every value, Parquet data files with the GEOMETRY logical type, per-file
//! bounding boxes in the manifests, and scans that skip files and row groups outside a window.
//! Files live in any object store (local disk, S3, GCS, Azure) behind one [`Storage`].
//!
//! The crate, as a reader holding the Iceberg spec finds it:
//!
//! | module | spec section / idea |
//! |---|---|
//! | [`bridge`], `typestring`, `schema` | geo types in schemas and manifests; column types (every Iceberg type, nested ones with their own field ids) |
//! | `manifest`, `avro` | manifests and manifest lists: the one reader |
//! | `data_file` | a Parquet footer → a `data_file` entry, under the metrics modes (`metrics`) |
//! | `snapshot` | the snapshot producer and the one commit driver every change goes through (snapshots and metadata-only changes): manifests, summary, row lineage, metadata, validation, catalog swap and retry |
//! | `properties` | every table property geoberg reads, typed |
//! | `catalog` | the pointer store: SQLite (embedded default), memory |
//! | `storage` | one seam for every read and write: `object_store`, sync, fault-injectable |
//! | `create`, `ddl` | creating a table; `SHOW CREATE TABLE` |
//! | `write` | the write path: batch alignment, partition split, Parquet data files |
//! | `ops` | operations: append, rewrite (spatial index), row-level changes, schema and property changes, bbox-column backfill, maintenance |
//! | `bounds_index`, `box_rule` | the file-bounds index persisted with each snapshot (per-manifest boxes and sidecars), so a fresh process plans a window from a few small reads; how a file's box is chosen |
//! | `scan`, `file_index`, `bbox_columns` | the one scan planner (a [`ScanFilter`] → a [`FilePlan`] → [`ScanTask`]s any reader executes), spatial file pruning (on the column's bounds, or on bbox columns under any writer's names) |
//! | `geography_window`, `refine`, `row_filter` | what a window means on the sphere; exact refinement (planar, or spherical for geography); row-level predicates |
//! | [`import`] | a Parquet / GeoParquet file another tool wrote → a table, in one commit |
//! | `lineage`, `spatial_index` | v3 row lineage; the Hilbert curves a table records |
//! | `metadata_columns` | the reserved column names (`_file`, `_pos`, `_row_id`, `_last_updated_sequence_number`) |
//!
//! **Where a new operation goes:** one file in `ops/` (and a line in its table) that
//! implements `SnapshotOperation` (which files it adds and removes, and what it validates
//! against concurrent commits) or, for a change without a snapshot, `MetadataChange` (the next
//! metadata on the latest version), and hands it to `commit_with_retry` / `commit_metadata`:
//! the one driver re-applies it after a lost race under `commit.retry.*`.
//!
//! **Where a new scan consumer goes:** translate the consumer's condition into a
//! [`ScanFilter`] (column predicates and spatial relations over one box type), plan once with
//! [`Table::plan_files`] or [`Scan::plan_tasks`], and read each [`ScanTask`] with
//! [`Scan::read_task`] wherever the work runs; nothing re-reads the manifests per file. The
//! table's own scan, the DataFusion scan node and the row-position scan of DELETE, UPDATE and
//! MERGE all do this.
//!
//! ```
//! use std::{collections::HashMap, sync::Arc};
//! use arrow_array::{BinaryArray, Int64Array, RecordBatch};
//! use arrow_schema::{DataType as ArrowType, Field, Schema};
//! use geoberg_table::{BBox, Catalog, Column, CreateTable, DataType, SqliteCatalog, TableIdent};
//!
//! # fn main() -> geoberg_table::Result<()> {
//! let dir = std::env::temp_dir().join(format!("geoberg-doc-{}", std::process::id()));
//! let catalog = Arc::new(SqliteCatalog::open(dir.join("catalog.db"), "demo", dir.join("wh"))?);
//! catalog.create_namespace("test_db")?;
//! let table = CreateTable::new([
//!     Column::new("id", DataType::Long).required(),
//!     Column::new("geom", DataType::parse("geometry(4326)")?),
//! ])
//! .create(catalog, &TableIdent::new("test_db", "points")?)?;
//! assert!(table.show_create_table("demo").contains("geom GEOMETRY(4326)"));
//!
//! // ISO WKB points; the field metadata labels them SRID 4326 (EWKB would carry its own).
//! let wkb = |x: f64, y: f64| [&[1u8, 1, 0, 0, 0][..], &x.to_le_bytes(), &y.to_le_bytes()].concat();
//! let srid = HashMap::from([("srid".to_string(), "4326".to_string())]);
//! let batch = RecordBatch::try_new(
//!     Arc::new(Schema::new(vec![
//!         Field::new("id", ArrowType::Int64, false),
//!         Field::new("geom", ArrowType::Binary, true).with_metadata(srid),
//!     ])),
//!     vec![
//!         Arc::new(Int64Array::from(vec![1, 2])),
//!         Arc::new(BinaryArray::from_iter_values([wkb(1.0, 2.0), wkb(50.0, 50.0)])),
//!     ],
//! )?;
//! let (table, _report) = table.append(&[batch])?;
//!
//! let (batches, explain) = table
//!     .scan()
//!     .with_window("geom", BBox::new(0.0, 0.0, 2.0, 2.0))
//!     .execute()?;
//! assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
//! println!("{explain}");
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(())
//! # }
//! ```
//!
//! Seed 002's recipe ("Materializing Bbox Columns for Pushdown") on a table like this one: the
//! four bbox columns go right before the geometry with `full` metrics, every append derives
//! them from then on, and the backfill fills the older files one partition at a time (one
//! atomic `overwrite` commit each, safe to re-run), reporting the files a bbox-range query
//! reads before and after. In SQL it is
//! `CALL <catalog>.system.add_bbox_columns(table => 'db.t', column => 'geom')`.
//!
//! ```no_run
//! # fn f(table: geoberg_table::Table) -> geoberg_table::Result<()> {
//! let (table, added) = table.add_bbox_columns("geom", None)?;
//! let (table, report) = table
//!     .backfill_bbox_columns("geom")
//!     .where_sql("event_day < '2026-12-01'")
//!     .execute()?;
//! println!("{added}\n{report}"); // files read before and after, per seed 002
//! # Ok(()) }
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod avro;
mod bbox_columns;
mod bounds_index;
mod box_rule;
pub mod bridge;
mod cache;
mod catalog;
mod clustered_layout;
mod create;
mod data_file;
mod ddl;
mod deletes;
mod error;
mod faults;
mod file_columns;
mod file_index;
mod geography_window;
mod ident;
pub mod import;
mod ingest;
mod inspect;
mod lineage;
mod manifest;
mod manifest_bloat;
mod metadata_columns;
mod metrics;
mod metrics_position;
mod ops;
mod properties;
mod refine;
mod row_filter;
mod scan;
mod schema;
mod snapshot;
mod sort_order;
mod spatial_index;
mod storage;
mod table;
mod typestring;
mod write;

pub use bbox_columns::{
    BBOX_COLUMNS_PROPERTY_PREFIX, bbox_columns_property_value, parse_bbox_columns_property,
};
pub use bounds_index::{
    FILE_BOUNDS_INDEX_BLOB, FILE_BOUNDS_INDEX_SUMMARY_KEY, MANIFEST_BOUNDS_BLOB,
};
pub use bridge::GeoFields;
pub use catalog::{Catalog, MemoryCatalog, PostgresCatalog, SqliteCatalog, connect_catalog};
pub use clustered_layout::{CLUSTERED_LAYOUT_BLOB, ClusteredLayout, PartitionLayout, RangeFile};
pub use create::CreateTable;
pub use error::{Error, Result};
pub use file_index::TableFileIndex;
/// Fault injection for crash-consistency tests (not a stable API).
#[doc(hidden)]
pub mod testing {
    pub use crate::faults::{Fault, FaultyCatalog, FaultyStore};
}
pub use geoberg_crs::{ColumnType, Crs, EdgeAlgorithm, Extent, HilbertSpec};
pub use geoberg_geostats::{BBox, BBoxColumnNames};
pub use geoberg_pruning::{BoxFilter, FileBounds, FileIndex, PruneError, PrunePlan};
pub use geoberg_puffin::{DeletionVector, RowRun};
pub use geoberg_rewrite::{RewriteOptions, RewritePlan, RowOrder};
pub use geoberg_sql::{Predicate, RewriteRequest, SortOrder};
pub use ident::TableIdent;
pub use import::{ImportOptions, ImportReport, ImportSource, import_parquet};
pub use ingest::{IngestOptions, IngestProgress};
pub use inspect::MetadataTable;
pub use manifest_bloat::{MANIFEST_COUNT_WARNING_THRESHOLD, ManifestBloat};
pub use metadata_columns::{
    FILE_COLUMN, LAST_UPDATED_SEQUENCE_NUMBER_COLUMN, METADATA_COLUMNS, POS_COLUMN, ROW_ID_COLUMN,
};
pub use metrics::{MetricsConfig, MetricsMode};
pub use metrics_position::{MetricsModeWarning, MetricsPositionWarning, PruningRole};
pub use ops::append::AppendReport;
pub use ops::bbox_columns::{
    AddBBoxColumnsReport, BBoxBackfill, BackfillReport, DEFAULT_BACKFILL_GROUP_BYTES,
};
pub use ops::delete::{ColumnUpdate, DeleteRows, UpdateRows};
pub use ops::maintain::MaintainReport;
pub use ops::maintenance::ExpireReport;
pub use ops::overwrite::OverwriteReport;
pub use ops::rewrite::{
    PlannedRewrite, Rewrite, RewriteReport, SPATIAL_INDEX_SUMMARY_KEY, execute_rewrite_statement,
};
pub use ops::rewrite_job::{RewriteJob, RewriteJobOutcome, RewriteRunner};
pub use ops::rewrite_manifests::{
    DEFAULT_MANIFEST_TARGET_SIZE_BYTES, MANIFEST_TARGET_SIZE_PROPERTY, RewriteManifests,
    RewriteManifestsReport,
};
pub use ops::row_delta::{RowChangeKind, RowDelta, RowDeltaReport};
pub use ops::schema::{ColumnPosition, UpdateSchema};
pub use ops::upgrade_geometry::{UPGRADE_TARGET_SUFFIX, UpgradeReport};
pub use properties::{
    BBOX_SOURCE_PROPERTY, CLUSTER_MIN_FILE_ROWS_PROPERTY, CLUSTER_ON_WRITE_PROPERTY,
    COMMIT_MAX_WAIT_PROPERTY, COMMIT_MIN_WAIT_PROPERTY, COMMIT_RETRIES_PROPERTY,
    COMMIT_TOTAL_TIMEOUT_PROPERTY, CommitRetry, DEFAULT_CLUSTER_MIN_FILE_ROWS,
    DELETE_MODE_PROPERTY, HILBERT_CELL_PROPERTY, LEGACY_GEOMETRY_PROPERTY, MERGE_MODE_PROPERTY,
    METADATA_DELETE_AFTER_COMMIT_PROPERTY, ROW_GROUP_ROWS_PROPERTY, RowChangeMode,
    SORT_ORDER_PROPERTY, SOURCE_CRS_PROPERTY_PREFIX, SPATIAL_INDEX_PROPERTY_PREFIX,
    TARGET_FILE_SIZE_PROPERTY, TableProperties, UPDATE_MODE_PROPERTY,
};
pub use row_filter::RowFilter;
pub use scan::{
    FilePlan, Scan, ScanExplain, ScanFilter, ScanPlan, ScanTask, root_column, row_group_bounds,
};
pub use schema::{
    BBOX_COLUMN_NAMES, Column, DataType, PartitionField, data_type_from_arrow, declared_type,
};
pub use snapshot::PendingCommit;
pub use spatial_index::{HILBERT_CELL_SUFFIX, HilbertCell, SpatialIndex};
pub use storage::{
    FileInfo, Storage, StoreLayer, StreamWriter, normalize_location, split_location,
};
pub use table::{GeoColumn, Table};
pub use typestring::{parse_type_string, render_type_string};
pub use write::SRID_FIELD_METADATA;
