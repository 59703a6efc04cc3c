//! Parses geoberg's table statements into typed requests, without executing anything.
//!
//! `geoberg sql "<statement>"` and the `table` crate hand statement text here and get back a
//! [`Statement`]: a [`RewriteRequest`] for `CREATE SPATIAL INDEX` and its equivalent
//! `CALL <catalog>.system.rewrite_data_files(...)` (with any [`SortOrder`]: columns with
//! `ASC`/`DESC` and `NULLS FIRST`/`LAST`, `zorder(...)` or `hilbert(...)`, which
//! [`parse_sort_order`] also reads from the `write.sort-order` property), a [`CreateTableRequest`] for `CREATE TABLE`
//! with `geometry(<srid>)` / `geography(<crs>)` columns, a [`CreateTableAsSelectRequest`] for
//! `CREATE TABLE ... [USING iceberg] [TBLPROPERTIES (...)] AS <query>` (the query kept as
//! written, for the SQL engine), `SHOW TABLES IN <namespace>` ([`ShowTablesRequest`]),
//! `ALTER TABLE ... SET / UNSET
//! TBLPROPERTIES`, Iceberg's maintenance procedures (`CALL ... expire_snapshots(...)`,
//! `CALL ... remove_orphan_files(...)`, `CALL ... rewrite_manifests(...)`, as an
//! [`ExpireSnapshotsRequest`] / [`RemoveOrphanFilesRequest`] / [`RewriteManifestsRequest`]),
//! geoberg's `CALL ... upgrade_geometry(...)` ([`UpgradeGeometryRequest`]) and
//! `CALL ... add_bbox_columns(...)` ([`AddBBoxColumnsRequest`]), and the `SHOW` / `DESCRIBE`
//! forms.
//! WHERE conditions (a rewrite's `where => "..."`, the table crate's row filter,
//! `geoberg audit --where`) go through [`parse_condition`] and become a [`Predicate`] tree
//! whose spatial leaves carry the query window as WKB and bbox, so that a scan can prune files
//! by their bounds ([`Predicate::spatial_filters`]).
//!
//! Expressions, literals and names are parsed by `sqlparser` (Spark SQL lexing: a quote inside
//! a string is doubled, `'it''s'`, or backslash-escaped); a small front handles the statement
//! keywords. Every request renders back to a canonical statement
//! (`to_sql()`), and parsing that gives an equal request. Bad or hostile input gets a
//! [`SqlError`] naming the problem and the fix, never a panic; length, nesting and operator
//! count are limited before parsing.
//!
//! This is a table tool, not an SQL engine: queries (`SELECT`, `EXPLAIN`, `INSERT`, `DELETE`,
//! `UPDATE`, `MERGE`) run in SedonaDB / DataFusion (`geoberg sql`, `geoberg_datafusion::Session`)
//! and parse here to [`SqlError::Unsupported`], like anything else that is not a table
//! statement.
//!
//! ```
//! use geoberg_sql::{parse, parse_condition, RewriteStrategy, SqlError, Statement};
//!
//! let create = parse("CREATE SPATIAL INDEX FOR cat.db.t USING hilbert(geom, 10) WHERE state = 'CA'")?;
//! let call = parse(
//!     "CALL cat.system.rewrite_data_files(table => 'db.t', strategy => 'sort', \
//!      sort_order => 'hilbert(geom, 10)', where => \"state = 'CA'\", \
//!      options => map('rewrite-all', 'true'))",
//! )?;
//! assert_eq!(create, call);
//!
//! let Statement::Rewrite(request) = &create else { unreachable!() };
//! let RewriteStrategy::Hilbert(index) = &request.strategy else { unreachable!() };
//! assert_eq!((index.column.as_str(), index.precision), ("geom", 10));
//! assert_eq!(parse(&create.to_sql())?, create);
//!
//! let filter =
//!     parse_condition("id > 5 AND ST_Intersects(geom, ST_MakeEnvelope(0, 0, 10, 10, 4326))")?;
//! assert_eq!(filter.spatial_filters()[0].pruning_bbox().max_x, 10.0);
//! assert_eq!(filter.non_spatial().unwrap().to_sql(), "id > 5");
//! assert_eq!(parse_condition(&filter.to_sql())?, filter);
//!
//! // Seed 001's compaction: a column sort order (Iceberg's defaults: ASC, NULLS FIRST).
//! let Statement::Rewrite(seed) = parse(
//!     "CALL cat.system.rewrite_data_files(table => 'db.t', strategy => 'sort', \
//!      sort_order => 'bbox_min_x ASC, bbox_min_y ASC')",
//! )? else { unreachable!() };
//! let RewriteStrategy::Sort(order) = &seed.strategy else { unreachable!() };
//! assert_eq!(order.to_string(), "bbox_min_x ASC NULLS FIRST, bbox_min_y ASC NULLS FIRST");
//!
//! // Table properties and maintenance procedures.
//! let alter = parse("ALTER TABLE db.t SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')")?;
//! assert!(matches!(alter, Statement::SetTblProperties { .. }));
//! let Statement::ExpireSnapshots(expire) = parse(
//!     "CALL cat.system.expire_snapshots(table => 'db.t', \
//!      older_than => TIMESTAMP '2026-01-01 00:00:00', retain_last => 5)",
//! )? else { unreachable!() };
//! assert_eq!((expire.table.to_string().as_str(), expire.retain_last), ("cat.db.t", Some(5)));
//! assert!(matches!(
//!     parse("CALL cat.system.remove_orphan_files('db.t', dry_run => true)")?,
//!     Statement::RemoveOrphanFiles(r) if r.is_dry_run()
//! ));
//!
//! // Seed 002's recipe: bbox columns before the geometry, backfilled where the condition holds.
//! let Statement::AddBBoxColumns(seed) = parse(
//!     "CALL cat.system.add_bbox_columns(table => 'spatial.telemetry', column => 'geom', \
//!      where => 'event_day < ''2026-12-01''', window => array(-10, 35, 30, 60))",
//! )? else { unreachable!() };
//! assert_eq!((seed.column.as_str(), seed.window), ("geom", Some([-10.0, 35.0, 30.0, 60.0])));
//!
//! // Queries belong to the SQL engine.
//! assert!(matches!(parse("SELECT count(*) FROM db.t"), Err(SqlError::Unsupported { .. })));
//! # Ok::<(), geoberg_sql::SqlError>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod add_bbox_columns;
mod alter_schema;
mod alter_table;
mod create_table;
mod create_table_as_select;
mod data_type;
mod error;
mod front;
mod hilbert_index;
mod maintenance;
mod name;
mod predicate;
mod procedure;
mod properties;
mod rewrite;
mod rewrite_manifests;
mod router;
mod show_tables;
mod sort_order;
mod spatial;
mod statement;
mod upgrade_geometry;

pub use add_bbox_columns::AddBBoxColumnsRequest;
pub use alter_schema::{AddedColumn, AlterSchemaRequest, ColumnPlacement, SchemaAlteration};
pub use create_table::{
    COLUMN_DEFAULT_REFUSED, CreateTableRequest, PartitionField, PartitionTransform,
};
pub use create_table_as_select::CreateTableAsSelectRequest;
pub use data_type::{Column, DataType, VARIANT_REFUSED};
pub use error::{Position, SUPPORTED_CONDITIONS, SUPPORTED_STATEMENTS, SqlError};
pub use front::{MAX_NESTING_DEPTH, MAX_OPERATORS, MAX_STATEMENT_BYTES};
pub use geoberg_crs::{Crs, EdgeAlgorithm};
pub use hilbert_index::HilbertIndex;
pub use maintenance::{
    EXPIRE_SNAPSHOTS_DEFAULT_AGE, EXPIRE_SNAPSHOTS_DEFAULT_RETAIN_LAST, ExpireSnapshotsRequest,
    MaintainRequest, OlderThan, REMOVE_ORPHAN_FILES_DEFAULT_AGE, RemoveOrphanFilesRequest,
    TIMESTAMP_FORMAT,
};
pub use name::TableName;
pub use predicate::{CompareOp, Literal, Predicate};
pub use procedure::SUPPORTED_PROCEDURES;
pub use rewrite::{REWRITE_ALL, RewriteRequest, RewriteStrategy};
pub use rewrite_manifests::RewriteManifestsRequest;
pub use router::parse;
pub use show_tables::ShowTablesRequest;
pub use sort_order::{
    NullOrder, SORT_ORDER_FORMS, SortDirection, SortField, SortOrder, parse_sort_order,
};
pub use spatial::{SpatialFilter, SpatialRelation, Window};
pub use statement::Statement;
pub use upgrade_geometry::UpgradeGeometryRequest;

/// Parses a WHERE condition on its own (as `where => "..."` holds it), e.g. for the table
/// crate's row filter or `geoberg audit --where`. The limits of [`parse`] apply; an optional
/// trailing `;` is allowed.
pub fn parse_condition(sql: &str) -> Result<Predicate, SqlError> {
    let mut front = front::Front::new(sql)?;
    let expr = front.expr()?;
    front.finish()?;
    predicate::predicate_from_expr(&expr)
}
