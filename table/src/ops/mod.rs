//! Table operations, one file each, every one a builder or method on [`crate::Table`] that
//! commits through the one commit driver ([`crate::snapshot`]): a snapshot operation through
//! the snapshot producer, a metadata-only change as a `MetadataChange`. A new operation is one
//! more file here.
//!
//! | file | operation | snapshot |
//! |---|---|---|
//! | `append.rs` | [`Table::append`](crate::Table::append), imports | `append` |
//! | `rewrite.rs` | [`Table::rewrite`](crate::Table::rewrite): `CREATE SPATIAL INDEX`, `rewrite_data_files` | `replace` |
//! | `rewrite_job.rs` | [`Rewrite::runner`](crate::Rewrite::runner): a rewrite's tasks run by other processes (a cluster), committed here | `replace` |
//! | `incremental_clustering.rs` | the `incremental` option of [`Table::rewrite`](crate::Table::rewrite): only the key ranges new rows have grown | `replace` |
//! | `overwrite.rs` | [`Table::overwrite_partitions`](crate::Table::overwrite_partitions): `INSERT OVERWRITE`, the partitions new rows fall in replaced | `overwrite` |
//! | `row_delta.rs` | [`Table::row_delta`](crate::Table::row_delta): rows out by position, rows in; copy-on-write or merge-on-read | `overwrite` / `delete` |
//! | `delete.rs` | [`Table::delete`](crate::Table::delete), [`Table::update`](crate::Table::update) | through `row_delta` |
//! | `maintain.rs` | [`Table::maintain`](crate::Table::maintain): `geoberg maintain`, the maintenance that is due (incremental clustering, manifests, expiry) | through the others |
//! | `maintenance.rs` | [`Table::expire_snapshots`](crate::Table::expire_snapshots), orphan files | metadata only |
//! | `rewrite_manifests.rs` | [`Table::rewrite_manifests`](crate::Table::rewrite_manifests): `CALL ... rewrite_manifests`, manifests regrouped by partition | `replace` (no data change) |
//! | `bbox_columns.rs` | [`Table::add_bbox_columns`](crate::Table::add_bbox_columns), [`Table::backfill_bbox_columns`](crate::Table::backfill_bbox_columns): seed 002's bbox columns, added before the geometry and backfilled per partition | metadata only; `overwrite` per partition |
//! | `upgrade_geometry.rs` | [`Table::upgrade_geometry`](crate::Table::upgrade_geometry): `CALL ... upgrade_geometry`, a no-CRS table copied to a v3 `geometry(<srid>)` table | `append` on the new table |
//! | `schema.rs` | [`Table::update_schema`](crate::Table::update_schema): `ALTER TABLE ... ADD / DROP / RENAME COLUMN` | metadata only |
//! | `properties.rs` | [`Table::set_properties`](crate::Table::set_properties), [`Table::unset_properties`](crate::Table::unset_properties): `ALTER TABLE ... SET / UNSET TBLPROPERTIES` | metadata only |

pub(crate) mod append;
pub(crate) mod bbox_columns;
pub(crate) mod delete;
pub(crate) mod incremental_clustering;
pub(crate) mod maintain;
pub(crate) mod maintenance;
pub(crate) mod overwrite;
pub(crate) mod properties;
pub(crate) mod rewrite;
pub(crate) mod rewrite_job;
pub(crate) mod rewrite_manifests;
pub(crate) mod rewrite_storage;
pub(crate) mod row_delta;
pub(crate) mod schema;
pub(crate) mod upgrade_geometry;
