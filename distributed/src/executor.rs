//! geoberg's executor: Ballista's, running plan fragments with SedonaDB's functions and reading
//! the warehouse through geoberg's storage.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use ballista_core::extension::SessionConfigExt;
use ballista_core::registry::BallistaFunctionRegistry;
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use geoberg_datafusion::engine_context;
use geoberg_table::{Storage, split_location};

use crate::cluster_config::{HEARTBEAT_SECONDS, SCHEDULING_POLICY, cluster_config};
use crate::codec::{GeobergClusterCodec, GeobergLogicalCodec};
use crate::error::{Error, Result};
use crate::typed_literal::TypedLiteral;

/// What an executor runs with.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    /// The scheduler it registers with and takes tasks from.
    pub scheduler: SocketAddr,
    /// The host and port it serves shuffle data on (Arrow Flight); the gRPC port is the next one.
    pub bind: SocketAddr,
    /// Tasks run at once (0: one per core).
    pub concurrent_tasks: usize,
    /// The warehouse the tables live in (`s3://bucket/path`, `file:///path`): its object store
    /// is opened once, with credentials from the environment, and every scan reads through it.
    pub warehouse: String,
    /// Where shuffle files are written (a fresh temporary folder when `None`).
    pub work_dir: Option<PathBuf>,
}

/// Runs an executor until it is stopped (Ctrl-C, SIGTERM, or the scheduler's request).
pub async fn run_executor(options: ExecutorOptions) -> Result<()> {
    let (store, _) = Storage::new()
        .object_store(&options.warehouse)
        .map_err(|source| Error::Warehouse {
            warehouse: options.warehouse.clone(),
            source: Box::new(source),
        })?;
    let (store_url, _) = split_location(&options.warehouse).map_err(|source| Error::Warehouse {
        warehouse: options.warehouse.clone(),
        source: Box::new(source),
    })?;
    let context = engine_context().await?;
    context.ctx.register_udf(TypedLiteral::udf());
    let state = context.ctx.state();
    let physical = Arc::new(GeobergClusterCodec::default());
    let logical = Arc::new(GeobergLogicalCodec::client());
    let base_config = cluster_config(state.config().clone())
        .with_ballista_logical_extension_codec(logical.clone())
        .with_ballista_physical_extension_codec(physical.clone());
    let work_dir = match &options.work_dir {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("geoberg-executor-{}", std::process::id())),
    };
    std::fs::create_dir_all(&work_dir).map_err(|e| Error::Ballista {
        component: "executor",
        message: format!("work dir {}: {e}", work_dir.display()),
    })?;
    let temp_dir = work_dir.clone();
    let config = ExecutorProcessConfig {
        bind_host: options.bind.ip().to_string(),
        external_host: Some(options.bind.ip().to_string()),
        port: options.bind.port(),
        grpc_port: options.bind.port().wrapping_add(1),
        scheduler_host: options.scheduler.ip().to_string(),
        scheduler_port: options.scheduler.port(),
        scheduler_connect_timeout_seconds: 10,
        concurrent_tasks: options.concurrent_tasks,
        work_dir: Some(work_dir.display().to_string()),
        print_thread_info: false,
        override_function_registry: Some(Arc::new(BallistaFunctionRegistry::from(&state))),
        override_config_producer: Some(Arc::new(move || base_config.clone())),
        override_runtime_producer: Some(Arc::new(move |_| {
            let runtime = RuntimeEnvBuilder::new()
                .with_temp_file_path(temp_dir.clone())
                .build()?;
            runtime.register_object_store(&store_url, Arc::clone(&store));
            Ok(Arc::new(runtime))
        })),
        override_logical_codec: Some(logical),
        override_physical_codec: Some(physical),
        executor_heartbeat_interval_seconds: HEARTBEAT_SECONDS,
        task_scheduling_policy: SCHEDULING_POLICY,
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(|e| Error::Ballista {
            component: "executor",
            message: format!(
                "{e} (scheduler {}; start it first with `geoberg cluster scheduler`)",
                options.scheduler
            ),
        })
}
