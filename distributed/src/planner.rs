//! A client's query planner: queries over tables go to the scheduler, the rest stays here.

use std::sync::Arc;

use async_trait::async_trait;
use ballista_core::planner::BallistaQueryPlanner;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{JoinConstraint, JoinType, NullEquality};
use datafusion::datasource::{MemTable, source_as_provider};
use datafusion::error::Result;
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::{Extension, Join, LogicalPlan};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::protobuf::LogicalPlanNode;

use crate::typed_literal::encode_typed_literals;

/// Plans on a client of a geoberg cluster. A query that reads a table is planned and run by
/// the scheduler and its executors (its geometry constants encoded so that they keep their
/// type, its spatial joins sent back as the joins SedonaDB's optimizer found them in, which the
/// scheduler's finds again); writes (INSERT, COPY), DDL, statements that read no table, plans
/// with other extension nodes and plans over rows held here (metadata tables) run here, on the
/// coordinator, with the local planner.
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
                || any_node(
                    plan,
                    |n| matches!(n, LogicalPlan::Extension(e) if unplanned_spatial_join(e).is_none()),
                )
                || any_node(plan, scans_session_rows)
        }
    }
}

/// Whether `node` scans rows held in this process (a `MemTable`: Iceberg's metadata tables,
/// read from the table's metadata when the statement was planned), which no executor has and
/// the scheduler's plan codec cannot carry.
fn scans_session_rows(node: &LogicalPlan) -> bool {
    let LogicalPlan::TableScan(scan) = node else {
        return false;
    };
    source_as_provider(&scan.source).is_ok_and(|p| p.downcast_ref::<MemTable>().is_some())
}

/// The logical join that SedonaDB's spatial join node `node` was made from (a join whose
/// filter holds the spatial predicate), if `node` is one. SedonaDB 0.5 keeps the node's type
/// private, so it is recognized by its name and its join type read from its EXPLAIN line; the
/// join is taken only when it has the node's schema.
fn unplanned_spatial_join(node: &Extension) -> Option<Join> {
    let node = &node.node;
    if node.name() != "SpatialJoin" {
        return None;
    }
    let ([left, right], [filter]) = (&node.inputs()[..], &node.expressions()[..]) else {
        return None;
    };
    struct Explain<'a>(&'a dyn datafusion::logical_expr::UserDefinedLogicalNode);
    impl std::fmt::Display for Explain<'_> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            self.0.fmt_for_explain(f)
        }
    }
    let explain = Explain(node.as_ref()).to_string();
    let name = explain.split("join_type=").nth(1)?.split(',').next()?;
    let join_type = [
        JoinType::Inner,
        JoinType::Left,
        JoinType::Right,
        JoinType::Full,
        JoinType::LeftSemi,
        JoinType::RightSemi,
        JoinType::LeftAnti,
        JoinType::RightAnti,
        JoinType::LeftMark,
        JoinType::RightMark,
    ]
    .into_iter()
    .find(|t| format!("{t:?}") == name)?;
    let join = Join::try_new(
        Arc::new((*left).clone()),
        Arc::new((*right).clone()),
        vec![],
        Some(filter.clone()),
        join_type,
        JoinConstraint::On,
        NullEquality::NullEqualsNothing,
        false,
    )
    .ok()?;
    (join.schema.as_ref() == node.schema().as_ref()).then_some(join)
}

/// `plan` with each of SedonaDB's spatial join nodes turned back into the join it was made
/// from, which the scheduler's optimizer turns into the same node again.
pub fn unplan_spatial_joins(plan: LogicalPlan) -> Result<LogicalPlan> {
    plan.transform_up(|node| {
        let LogicalPlan::Extension(extension) = &node else {
            return Ok(Transformed::no(node));
        };
        Ok(match unplanned_spatial_join(extension) {
            Some(join) => Transformed::yes(LogicalPlan::Join(join)),
            None => Transformed::no(node),
        })
    })
    .map(|t| t.data)
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
        let encoded = encode_typed_literals(unplan_spatial_joins(logical_plan.clone())?)?;
        self.remote
            .create_physical_plan(&encoded, session_state)
            .await
    }
}
