//! geoberg's scheduler: Ballista's, planning with geoberg's catalog and SedonaDB's engine.

use std::net::SocketAddr;
use std::sync::Arc;

use ballista_core::extension::SessionConfigExt;
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::{create_scheduler, start_grpc_service};
use datafusion::execution::session_state::{SessionState, SessionStateBuilder};
use datafusion::prelude::SessionConfig;
use datafusion_proto::protobuf::{LogicalPlanNode, PhysicalPlanNode};
use geoberg_datafusion::sedona_context;
use geoberg_table::Catalog;

use crate::cluster_config::{
    EXECUTOR_TIMEOUT_SECONDS, HEARTBEAT_SECONDS, SCHEDULING_POLICY, cluster_config,
};
use crate::codec::{GeobergClusterCodec, GeobergLogicalCodec};
use crate::error::{Error, Result};
use crate::keep_fields::KeepFieldTypes;
use crate::spatial_join::ClusterSpatialJoins;
use crate::typed_literal::TypedLiteral;

/// What a scheduler serves: its address and the catalog it plans against.
#[derive(Debug, Clone)]
pub struct SchedulerOptions {
    /// Where it listens (clients and executors connect here).
    pub bind: SocketAddr,
    /// The catalog whose tables queries read (a shared PostgreSQL catalog and an object-store
    /// warehouse, so that executors on other machines reach the same files).
    pub catalog: Arc<dyn Catalog>,
    /// The catalog's name in SQL.
    pub catalog_name: String,
}

/// Runs a scheduler until its server stops: clients send it queries, it plans them with
/// geoberg's catalog (files pruned once, here), splits them into stages and hands the tasks to
/// executors.
pub async fn run_scheduler(options: SchedulerOptions) -> Result<()> {
    let config = scheduler_config(&options).await?;
    let ballista = |e: ballista_core::error::BallistaError| Error::Ballista {
        component: "scheduler",
        message: e.to_string(),
    };
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(ballista)?;
    let server = create_scheduler::<LogicalPlanNode, PhysicalPlanNode>(cluster, Arc::new(config))
        .await
        .map_err(ballista)?;
    start_grpc_service(options.bind, server)
        .await
        .map_err(|e| Error::Ballista {
            component: "scheduler",
            message: format!("serving on {}: {e}", options.bind),
        })
}

/// `state` with the scheduler's physical optimizer rules around its own: first
/// [`ClusterSpatialJoins`] (spatial joins become the cluster's, before projections are pushed
/// into them), last [`KeepFieldTypes`] (what the executors receive).
pub fn with_cluster_rules(state: SessionState) -> SessionState {
    let rules = std::iter::once(Arc::new(ClusterSpatialJoins) as _)
        .chain(state.physical_optimizers().iter().cloned())
        .chain(std::iter::once(Arc::new(KeepFieldTypes) as _))
        .collect();
    SessionStateBuilder::new_from_existing(state)
        .with_physical_optimizer_rules(rules)
        .build()
}

/// Ballista's scheduler settings with geoberg's session, codecs and address.
async fn scheduler_config(options: &SchedulerOptions) -> Result<SchedulerConfig> {
    let (context, tables) =
        sedona_context(Arc::clone(&options.catalog), &options.catalog_name).await?;
    context.ctx.register_udf(TypedLiteral::udf());
    let logical = Arc::new(GeobergLogicalCodec::with_tables(tables));
    let physical = Arc::new(GeobergClusterCodec::default());
    let base = with_cluster_rules(context.ctx.state());
    let base_config = cluster_config(base.config().clone())
        .with_ballista_logical_extension_codec(logical.clone())
        .with_ballista_physical_extension_codec(physical.clone());
    let producer_config = base_config.clone();
    Ok(SchedulerConfig {
        bind_host: options.bind.ip().to_string(),
        external_host: options.bind.ip().to_string(),
        bind_port: options.bind.port(),
        override_config_producer: Some(Arc::new(move || producer_config.clone())),
        override_session_builder: Some(Arc::new(move |config: SessionConfig| {
            Ok(SessionStateBuilder::new_from_existing(base.clone())
                .with_config(config)
                .build())
        })),
        override_logical_codec: Some(logical),
        override_physical_codec: Some(physical),
        executor_timeout_seconds: EXECUTOR_TIMEOUT_SECONDS,
        scheduling_policy: SCHEDULING_POLICY,
        expire_dead_executor_interval_seconds: HEARTBEAT_SECONDS,
        ..SchedulerConfig::default()
    })
}
