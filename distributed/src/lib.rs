//! geoberg past one machine, on Apache DataFusion Ballista 54.
//!
//! A scheduler ([`run_scheduler`]) plans queries with geoberg's catalog and SedonaDB's engine
//! (files and row groups pruned once, there), splits them into stages and hands their tasks to
//! executors ([`run_executor`]), which read the warehouse's files through geoberg's storage and
//! run SedonaDB's functions. A [`connect`]ed [`Session`](geoberg_datafusion::Session) sends its
//! queries to the scheduler, runs the key-range tasks of `CREATE SPATIAL INDEX` and
//! `rewrite_data_files` on the executors ([`ClusterRewriteRunner`]; it plans and commits
//! them itself), and runs writes and the other table operations itself.
//!
//! Plans cross processes in DataFusion's protobuf with geoberg's codecs: tables travel by name
//! ([`GeobergLogicalCodec`]), the scan node with its planned files
//! ([`GeobergClusterCodec`]), and geometry constants and functions returning geometry keep
//! their type ([`TypedLiteral`] from client to scheduler, [`KeepFieldsExec`] from scheduler to
//! executors), which DataFusion 54's protobuf alone would drop. Spatial joins run on the
//! executors too ([`ClusterSpatialJoinExec`]: SedonaDB's join, a task per probe partition).
//!
//! ```no_run
//! # async fn f(catalog: std::sync::Arc<dyn geoberg_table::Catalog>) -> geoberg_distributed::Result<()> {
//! use geoberg_distributed::{ExecutorOptions, SchedulerOptions, connect, run_executor, run_scheduler};
//! let bind = "127.0.0.1:50050".parse().unwrap();
//! tokio::spawn(run_scheduler(SchedulerOptions {
//!     bind,
//!     catalog: catalog.clone(),
//!     catalog_name: "geoberg".into(),
//! }));
//! tokio::spawn(run_executor(ExecutorOptions {
//!     scheduler: bind,
//!     bind: "127.0.0.1:50051".parse().unwrap(),
//!     concurrent_tasks: 1,
//!     warehouse: "s3://bucket/warehouse".into(),
//!     work_dir: None,
//! }));
//! let session = connect("df://127.0.0.1:50050", catalog, "geoberg").await?;
//! let rows = session.sql("SELECT count(*) FROM geo.points").await?;
//! # Ok(()) }
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod cluster_config;
mod codec;
mod error;
mod executor;
mod keep_fields;
mod planner;
mod rewrite_tasks;
mod scheduler;
mod session;
mod spatial_join;
mod spatial_join_codec;
mod typed_literal;

pub use codec::{GeobergClusterCodec, GeobergLogicalCodec};
pub use error::{Error, Result};
pub use executor::{ExecutorOptions, run_executor};
pub use keep_fields::{KeepFieldTypes, KeepFieldsExec};
pub use planner::{ClusterQueryPlanner, runs_on_coordinator, unplan_spatial_joins};
pub use rewrite_tasks::{ClusterRewriteRunner, RewriteTasks, RewriteTasksExec, RewriteTasksTable};
pub use scheduler::{SchedulerOptions, run_scheduler, with_cluster_rules};
pub use session::{connect, scheduler_address};
pub use spatial_join::{ClusterSpatialJoinExec, ClusterSpatialJoins};
pub use typed_literal::{TYPED_LITERAL, TypedLiteral, encode_typed_literals};
