//! Apache Iceberg tables with geometry columns: catalog, create, append, spatial scan.
//!
//! `geoberg-table` turns the leaf crates into real Iceberg tables that Java, pyiceberg and
//! DuckDB read: an embedded SQLite catalog in the JDBC/pyiceberg layout, v3 `geometry` /
//! `geography` columns whose CRS is enforced on every value, Parquet data files with the GEOMETRY
//! logical type, per-file bounding boxes in the manifests, and scans that skip files and row
//! groups outside a window. Planning decodes manifests in parallel and keeps a per-version
//! [`TableFileIndex`] (an R-tree from `geoberg-pruning`), so repeated scans plan in
//! microseconds; [`Table::expire_snapshots`] and [`Table::remove_orphan_files`] keep the table
//! small, and every file write, link and delete goes through the catalog's [`Storage`].
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
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod append;
mod avro;
pub mod bridge;
mod catalog;
mod entries;
mod error;
mod faults;
mod file_filter;
mod file_index;
mod ident;
mod lineage;
mod location;
mod maintenance;
mod metrics;
mod refine;
mod replace_commit;
mod rewrite;
mod scan;
mod schema;
mod snapshot_writer;
mod storage;
mod table;
mod typestring;

pub use append::{AppendReport, ROW_GROUP_ROWS_PROPERTY, SRID_FIELD_METADATA};
pub use bridge::GeoFields;
pub use catalog::{Catalog, MemoryCatalog, PostgresCatalog, SqliteCatalog};
pub use error::{Error, Result};
pub use file_index::TableFileIndex;
/// Fault injection for crash-consistency tests (not a stable API).
#[doc(hidden)]
pub mod testing {
    pub use crate::faults::{Fault, FaultyCatalog, FaultyStorage};
}
pub use geoberg_crs::{ColumnType, Crs, EdgeAlgorithm, Extent};
pub use geoberg_geostats::BBox;
pub use geoberg_pruning::{FileBounds, FileIndex, PruneError, PrunePlan, SpatialFilter};
pub use geoberg_rewrite::{RewriteOptions, RewritePlan};
pub use geoberg_sql::{Predicate, RewriteRequest};
pub use ident::TableIdent;
pub use maintenance::ExpireReport;
pub use metrics::{MetricsConfig, MetricsMode};
pub use replace_commit::COMMIT_RETRIES_PROPERTY;
pub use rewrite::{
    PlannedRewrite, Rewrite, RewriteReport, SPATIAL_INDEX_PROPERTY_PREFIX,
    SPATIAL_INDEX_SUMMARY_KEY, SpatialIndex, SpatialIndexSpec, execute_rewrite_statement,
};
pub use scan::{Scan, ScanExplain, ScanPlan};
pub use schema::{Column, DataType, PartitionField};
pub use storage::{LocalStorage, Storage};
pub use table::{
    BBOX_COLUMN_NAMES, BBOX_SOURCE_PROPERTY, CreateTable, GeoColumn, HILBERT_CELL_PROPERTY,
    HILBERT_CELL_SUFFIX, LEGACY_GEOMETRY_PROPERTY, PendingCommit, Table,
};
pub use typestring::{parse_type_string, render_type_string};
