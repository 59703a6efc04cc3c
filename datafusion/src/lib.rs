//! geoberg tables in a real SQL engine: SedonaDB on Apache DataFusion, with geoberg's spatial
//! and column pruning pushed into the scan.
//!
//! A geoberg [`Catalog`](geoberg_table::Catalog) becomes a DataFusion catalog
//! ([`GeobergCatalogProvider`]): namespaces are schemas, tables are
//! [`GeobergTableProvider`]s whose geometry and geography columns are SedonaDB geometry
//! types carrying the declared CRS. A scan plans in geoberg (which files, on the Iceberg
//! bounds and partition values; which row groups, on the Parquet geo statistics) and reads
//! with DataFusion's Parquet reader ([`GeobergScanExec`]); `EXPLAIN ANALYZE` shows what was
//! skipped. `INSERT` appends through the table crate, one commit per statement, with every
//! SRID check of `Table::append`. [`Session`] runs any statement: geoberg's own table
//! operations (`CREATE SPATIAL INDEX`, `SHOW CREATE TABLE`, ...) through the table crate,
//! everything else through the engine.
//!
//! Three lines to query a warehouse:
//!
//! ```
//! # use std::sync::Arc;
//! # use geoberg_table::{Catalog, SqliteCatalog};
//! # fn main() -> geoberg_datafusion::Result<()> {
//! # let dir = tempfile::tempdir().map_err(geoberg_datafusion::Error::Runtime)?;
//! # let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(dir.path().join("catalog.db"), "geoberg", dir.path().join("wh"))?);
//! let session = geoberg_datafusion::BlockingSession::new(catalog, "geoberg")?;
//! session.sql("CREATE TABLE geo.points (id bigint, state string, geom geometry(4326))")?;
//! session.sql(
//!     "INSERT INTO geo.points VALUES \
//!      (1, 'CA', ST_SetSRID(ST_Point(-122.4, 37.8), 4326)), \
//!      (2, 'NY', ST_SetSRID(ST_Point(-74.0, 40.7), 4326))",
//! )?;
//! let batches = session.sql(
//!     "SELECT state, count(*) AS n FROM geo.points \
//!      WHERE ST_Intersects(geom, ST_MakeEnvelope(-125, 30, -110, 45)) GROUP BY state",
//! )?;
//! let text = geoberg_datafusion::pretty_format(&batches)?;
//! assert!(text.contains("| CA    | 1 |"), "{text}");
//! # Ok(())
//! # }
//! ```
//!
//! From async code, [`Session`] has the same methods, async; [`sedona_context`] gives the
//! SedonaDB context itself for the DataFrame API.
//!
//! How a statement runs: [`route`] sends `CREATE SPATIAL INDEX`, `CALL ... rewrite_data_files`
//! / `expire_snapshots` / `remove_orphan_files` / `rewrite_manifests` / `upgrade_geometry` /
//! `add_bbox_columns`, `ALTER TABLE ... SET` / `UNSET TBLPROPERTIES`,
//! `ALTER TABLE ... ADD COLUMN[S]` / `DROP COLUMN` / `RENAME COLUMN` / `RENAME TO`, `DROP TABLE
//! [PURGE]`, `SHOW CREATE TABLE`, `SHOW TBLPROPERTIES`, `SHOW TABLES IN <namespace>`,
//! `DESCRIBE` and Spark-style `CREATE TABLE` (with `USING iceberg`, `PARTITIONED BY`,
//! `TBLPROPERTIES`) to the table crate, and `CREATE TABLE ... [USING iceberg] [TBLPROPERTIES
//! (...)] AS <query>` too, its query run by the engine; queries, `EXPLAIN [ANALYZE]`, `INSERT`,
//! `CREATE SCHEMA` and `SET` to the engine. Scripts are split at top-level `;` into the text
//! as written, so strings keep their escapes (`'it''s'`). Statements that leave a bbox, sort-order or spatial index column past
//! `write.metadata.metrics.max-inferred-column-defaults` return a warning notice naming the fix.
//!
//! Row-level changes: `DELETE`, `UPDATE` and `MERGE INTO` (with Iceberg's `UPDATE SET *` and
//! `INSERT *`, every target column from the source column of the same name) on geoberg tables
//! run as one engine query over the target's rows with their positions, then one row delta in
//! the table crate
//! (copy-on-write or merge-on-read by `write.{delete,update,merge}.mode`; deletion vectors on
//! format-version 3, `_row_id` kept by updates). Deleted rows are skipped by every scan (row
//! selections of the Parquet reader) and counted out of `count(*)`. The metadata columns
//! `_file`, `_pos`, `_row_id` and `_last_updated_sequence_number` can be queried by name.
//! Tables in object storage are read through the table's own configured client.
//!
//! Geography columns mean the sphere: `ST_Intersects`, `ST_Contains`, `ST_Within`,
//! `ST_Covers`, `ST_CoveredBy`, `ST_DWithin` (metres) and `ST_Distance` (metres) on geography
//! arguments run `geoberg-geography`'s exact spherical kernels (great-circle edges, S2's
//! semantics; SedonaDB's own geography kernels need its C++ `s2geography` feature, not built
//! here). Write constants with `ST_GeogFromText` (`ST_GeogFromWKB`, `ST_GeogPoint`); a constant
//! geometry such as `ST_MakeEnvelope(175, -5, -175, 5)` against a geography column is read with
//! the same coordinates and great-circle edges, an envelope running east from `min_x` to
//! `max_x` (so `min_x > max_x` crosses the antimeridian), as the table crate reads a geography
//! window. These predicates with a constant region also prune files on the sphere: the
//! region's bounds (great-circle edges, wrapping the antimeridian) against the files' geography
//! bounds, which the table crate computes on the sphere; the kernels then decide every row read.
//!
//! Spatial joins (`ST_Intersects`, `ST_Contains`, `ST_Within`, `ST_Covers`, `ST_DWithin`,
//! `ST_Distance(a, b) < d`, `ST_KNN`) run as SedonaDB's join operator (an R-tree over the
//! build side, refinement with TG/GEOS, spill and spatial partitioning past memory), with
//! GEOS built in, so GEOS's functions (`ST_Buffer`, `ST_Union`, `ST_Intersection`,
//! `ST_ConvexHull`, `ST_Area`, ...) are there too. geoberg adds pruning from the build side
//! ([`JoinBoundsPruning`]): once the join has read its build side, a geoberg table on the
//! probe side reads only the data files and row groups whose bounds meet a build geometry's
//! box (expanded by an `ST_DWithin` distance); `EXPLAIN ANALYZE` counts the rest as
//! `files_skipped_by_join` and `row_groups_skipped_by_join`.
//! Columns in different CRSs do not join (the error names `ST_Transform`).
//!
//! ```
//! # use std::sync::Arc;
//! # use geoberg_table::{Catalog, SqliteCatalog};
//! # fn main() -> geoberg_datafusion::Result<()> {
//! # let dir = tempfile::tempdir().map_err(geoberg_datafusion::Error::Runtime)?;
//! # let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(dir.path().join("catalog.db"), "geoberg", dir.path().join("wh"))?);
//! let session = geoberg_datafusion::BlockingSession::new(catalog, "geoberg")?;
//! session.sql("CREATE TABLE geo.points (id bigint, geom geometry(4326))")?;
//! session.sql("CREATE TABLE geo.zones (id bigint, geom geometry(4326))")?;
//! session.sql("INSERT INTO geo.points VALUES (1, ST_SetSRID(ST_Point(1, 1), 4326)), (2, ST_SetSRID(ST_Point(9, 9), 4326))")?;
//! session.sql("INSERT INTO geo.zones VALUES (7, ST_SetSRID(ST_Buffer(ST_Point(0, 0), 2), 4326))")?;
//! let plan = geoberg_datafusion::pretty_format(&session.sql(
//!     "EXPLAIN SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_Intersects(p.geom, z.geom)",
//! )?)?;
//! assert!(plan.contains("SpatialJoinExec") && plan.contains("join_bounds=geom"), "{plan}");
//! # Ok(())
//! # }
//! ```
//!
//! What is not there yet: geography row groups are not pruned (the Parquet geo statistics of
//! files other writers wrote bound the vertices only); comparisons on timestamp columns prune
//! only row groups (DataFusion's statistics), not files; an `INSERT` holds its rows in memory
//! until its one commit; geography joins are nested loops over the spherical kernels (SedonaDB's join operator declines
//! geography).
//!
//! Constant geometries in spatial predicates may omit their CRS: `ST_Intersects(geom,
//! ST_GeomFromText('POLYGON (...)'))` against a `geometry(4326)` column takes the polygon in
//! the column's CRS (seed 004's query shapes), in `WHERE`, projections, `ORDER BY` and join
//! conditions alike; see [`ConstantGeometryCrs`]. Writes are strict:
//! a value without SRID is refused by a `geometry(4326)` column with the table's message.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod add_bbox_columns;
mod catalog;
mod codec;
mod constructor_forms;
mod create;
mod crs_literal;
mod deleted_rows;
mod describe;
mod error;
mod field_id_adapter;
mod file_pair_join;
mod file_pairs;
mod function_aliases;
mod geo_schema;
mod geography_kernels;
mod geography_measures;
mod geography_pushdown;
mod handle;
mod insert;
mod join_bounds;
mod join_bounds_rule;
mod maintain;
mod merge_star;
mod metadata_tables;
mod options;
mod output;
mod proj;
mod provider;
mod pushdown;
mod rectangle_kernel;
mod rewrite_manifests;
mod route;
mod row_change;
mod row_positions;
mod s2_cell_ids;
mod scan_exec;
mod scan_plan;
mod schema_statements;
mod session;
mod session_view;
mod spatial_pruning;
mod sql_text;
mod statement_support;
mod statements;
mod static_overwrite;
mod store;
mod subdivide;
mod type_planner;
mod typed_exprs;
mod upgrade_geometry;
mod values_type;

pub use catalog::{GeobergCatalogProvider, GeobergSchemaProvider};
pub use codec::GeobergPhysicalCodec;
pub use crs_literal::{ConstantGeometryCrs, CrsDeferredPredicate};
pub use error::{Error, Result};
pub use file_pair_join::{FilePairJoinExec, FilePairJoins};
pub use geo_schema::table_arrow_schema;
pub use join_bounds::{BoundsIndex, BuildSideBounds};
pub use join_bounds_rule::{BuildBoundsExec, JoinBoundsPruning};
pub use options::GeobergOptions;
pub use output::{json_rows, pretty_format};
pub use proj::PROJ_LIBRARY_ENV;
pub use provider::GeobergTableProvider;
pub use route::{Route, route, split_statements};
pub use scan_exec::{GeobergScanExec, ScanSpec};
pub use scan_plan::{FileSlice, PruningSummary, RowGroupSelection};
pub use session::{
    BlockingSession, ScanReport, Session, StatementOutput, engine_context, sedona_context,
};
pub use spatial_pruning::SpatialPruning;
pub use type_planner::GeobergTypePlanner;
pub use typed_exprs::FieldPreservingConverter;
pub use values_type::ValuesGeometryType;
