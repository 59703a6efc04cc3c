//! `geoberg cluster scheduler|executor`: the processes of a geoberg cluster
//! (`geoberg_distributed`), served until Ctrl-C.

use std::net::{SocketAddr, ToSocketAddrs};

use geoberg_distributed::{
    ExecutorOptions, SchedulerOptions, run_executor, run_scheduler, scheduler_address,
};

use crate::args::{ExecutorArgs, GlobalArgs, SchedulerArgs};
use crate::context::{Access, Context, warehouse};
use crate::error::{CliError, Result};

/// The scheduler an executor registers with when `--scheduler` is not given.
const DEFAULT_SCHEDULER: &str = "127.0.0.1:50050";

/// Serves a scheduler over the catalog the global options name.
pub fn scheduler(global: &GlobalArgs, args: &SchedulerArgs) -> Result<()> {
    let ctx = Context::open(global, Access::Existing)?;
    let options = SchedulerOptions {
        bind: args.bind,
        catalog: ctx.dyn_catalog(),
        catalog_name: ctx.catalog_name.clone(),
    };
    crate::cluster_log::install();
    eprintln!(
        "geoberg scheduler on {} (catalog {:?}, warehouse {}); Ctrl-C stops it",
        args.bind, ctx.catalog_name, ctx.warehouse
    );
    serve(run_scheduler(options))
}

/// Serves an executor for the warehouse the global options name.
pub fn executor(global: &GlobalArgs, args: &ExecutorArgs) -> Result<()> {
    let (warehouse, _) = warehouse(global)?;
    let given = global.scheduler.as_deref().unwrap_or(DEFAULT_SCHEDULER);
    let scheduler = resolve(&scheduler_address(given)?)?;
    let options = ExecutorOptions {
        scheduler,
        bind: args.bind,
        concurrent_tasks: args.concurrent_tasks,
        warehouse: warehouse.clone(),
        work_dir: args.work_dir.clone(),
    };
    crate::cluster_log::install();
    eprintln!(
        "geoberg executor on {} for scheduler {scheduler} (warehouse {warehouse}); Ctrl-C stops it",
        args.bind
    );
    serve(run_executor(options))
}

/// Runs `server` on a multi-threaded runtime until it ends or Ctrl-C.
fn serve(server: impl std::future::Future<Output = geoberg_distributed::Result<()>>) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::io("tokio runtime", e))?;
    runtime.block_on(async {
        tokio::select! {
            result = server => Ok(result?),
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    })
}

fn resolve(address: &str) -> Result<SocketAddr> {
    address
        .to_socket_addrs()
        .map_err(|e| CliError::invalid("--scheduler", address, format!("{e}; give host:port")))?
        .next()
        .ok_or_else(|| CliError::invalid("--scheduler", address, "the host has no address"))
}
