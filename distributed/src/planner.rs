//! A client's query planner: queries over tables go to the scheduler, the rest stays here.

use std::sync::Arc;

use async_trait::async_trait;
use ballista_core::planner::BallistaQueryPlanner;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::Result;
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::protobuf::LogicalPlanNode;

use crate::typed_literal::encode_typed_literals;

/// Plans on a client of a geoberg cluster. A query that reads a table is planned and run by
/// the scheduler and its executors (its geometry constants encoded so that they keep their
/// type); writes (INSERT, COPY), DDL, statements that read no table and spatial joins (SedonaDB's
/// join node has no plan encoding yet) run here, on the coordinator, with the local planner.
#[derive(Debug)]
pub struct ClusterQueryPlanner {
    local: Arc<dyn QueryPlanner + Send + Sync>,
    remote: BallistaQueryPlanner<LogicalPlanNode>,
}

impl ClusterQueryPlanner {
    /// Sends queries to `remote`, runs the rest with `local` (the session's own planner).
    pub fn new(
        local: Arc<dyn QueryPlanner + Send + Sync>,
        remote: BallistaQueryPlanner<LogicalPlanNode>,
    ) -> Self {
        ClusterQueryPlanner { local, remote }
    }
}

/// Whether `plan` runs on the coordinator rather than on the cluster.
pub fn runs_on_coordinator(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Dml(_)
        | LogicalPlan::Ddl(_)
        | LogicalPlan::Copy(_)
        | LogicalPlan::Statement(_)
        | LogicalPlan::DescribeTable(_) => true,
        _ => {
            !any_node(plan, |n| matches!(n, LogicalPlan::TableScan(_)))
                || any_node(plan, |n| matches!(n, LogicalPlan::Extension(_)))
        }
    }
}

fn any_node(plan: &LogicalPlan, test: impl Fn(&LogicalPlan) -> bool) -> bool {
    let mut found = false;
    let _ = plan.apply_with_subqueries(|node| {
        if test(node) {
            found = true;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    });
    found
}

#[async_trait]
impl QueryPlanner for ClusterQueryPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session_state: &SessionState,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if runs_on_coordinator(logical_plan) {
            return self
                .local
                .create_physical_plan(logical_plan, session_state)
                .await;
        }
        let encoded = encode_typed_literals(logical_plan.clone())?;
        self.remote
            .create_physical_plan(&encoded, session_state)
            .await
    }
}
