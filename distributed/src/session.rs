//! Sessions on a cluster: geoberg's [`Session`], its queries planned and run by a scheduler.

use std::sync::Arc;
use std::time::Duration;

use ballista_core::extension::SessionConfigExt;
use ballista_core::planner::BallistaQueryPlanner;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion_proto::protobuf::LogicalPlanNode;
use geoberg_datafusion::Session;
use geoberg_table::Catalog;

use crate::cluster_config::cluster_config;
use crate::codec::GeobergLogicalCodec;
use crate::error::{Error, Result};
use crate::planner::ClusterQueryPlanner;
use crate::rewrite_tasks::ClusterRewriteRunner;

/// Partitions (tasks per stage) a cluster session plans by default, as Ballista's own remote
/// sessions do: a scan's files and row groups are split into this many tasks for the
/// executors to share (`SET datafusion.execution.target_partitions = n` changes it).
const CLUSTER_PARTITIONS: usize = 16;

/// How long [`connect`] waits for the scheduler to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A [`Session`] over `catalog` whose queries run on the cluster of the scheduler at
/// `scheduler` (`df://host:port`), as do the tasks of `CREATE SPATIAL INDEX` and
/// `rewrite_data_files` (planned and committed here); writes, DDL and the other table
/// operations run in this process, as without a cluster. Fails at once when nothing answers at
/// the address.
pub async fn connect(
    scheduler: &str,
    catalog: Arc<dyn Catalog>,
    catalog_name: &str,
) -> Result<Session> {
    let address = scheduler_address(scheduler)?;
    match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(&address)).await {
        Ok(Ok(_)) => {}
        Ok(Err(source)) => return Err(Error::SchedulerUnreachable { address, source }),
        Err(_) => {
            return Err(Error::SchedulerUnreachable {
                address,
                source: std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no answer within {CONNECT_TIMEOUT:?}"),
                ),
            });
        }
    }
    let url = format!("http://{address}");
    let session = Session::with_state(catalog, catalog_name, move |state| {
        let codec = Arc::new(GeobergLogicalCodec::client());
        let config = cluster_config(state.config().clone())
            .with_target_partitions(CLUSTER_PARTITIONS)
            .with_ballista_logical_extension_codec(codec.clone());
        let remote = BallistaQueryPlanner::<LogicalPlanNode>::with_extension(
            url,
            config.ballista_config(),
            codec,
        );
        let planner = ClusterQueryPlanner::new(Arc::clone(state.query_planner()), remote);
        Ok(SessionStateBuilder::new_from_existing(state)
            .with_config(config)
            .with_query_planner(Arc::new(planner))
            .build())
    })
    .await?;
    let runner = ClusterRewriteRunner::new(
        session.context().ctx.clone(),
        address,
        tokio::runtime::Handle::current(),
    );
    Ok(session
        .with_rewrite_runner(Arc::new(runner))
        .with_write_notice(
            "ran on the coordinator (this process): writes are not distributed; their scans \
             and CREATE SPATIAL INDEX are",
        ))
}

/// `host:port` of a scheduler written `df://host:port` (or `host:port`).
pub fn scheduler_address(scheduler: &str) -> Result<String> {
    let invalid = |reason: &str| Error::SchedulerAddress {
        address: scheduler.to_string(),
        reason: reason.to_string(),
    };
    let rest = match scheduler.split_once("://") {
        Some(("df", rest)) => rest,
        Some((scheme, _)) => return Err(invalid(&format!("unknown scheme {scheme:?}"))),
        None => scheduler,
    };
    let rest = rest.trim_end_matches('/');
    let Some((host, port)) = rest.rsplit_once(':') else {
        return Err(invalid("no port"));
    };
    if host.is_empty() {
        return Err(invalid("no host"));
    }
    port.parse::<u16>()
        .map_err(|_| invalid(&format!("port {port:?} is not a number from 1 to 65535")))?;
    Ok(rest.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_addresses() {
        assert_eq!(
            scheduler_address("df://127.0.0.1:50050").unwrap(),
            "127.0.0.1:50050"
        );
        assert_eq!(scheduler_address("localhost:1/").unwrap(), "localhost:1");
        for bad in [
            "http://h:1",
            "df://h",
            "df://:5",
            "df://h:99999",
            "df://h:x",
        ] {
            let e = scheduler_address(bad).unwrap_err().to_string();
            assert!(e.contains("df://host:port"), "{bad}: {e}");
        }
    }
}
