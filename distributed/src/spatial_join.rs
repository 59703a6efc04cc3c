//! Spatial joins on a cluster: SedonaDB's join operator, one task per probe partition.
//!
//! SedonaDB's [`SpatialJoinExec`] reads its whole build side into one index, shared by the
//! probe partitions of one process, and has no plan encoding. On a cluster the scheduler's
//! first physical rule, [`ClusterSpatialJoins`], replaces each one with a
//! [`ClusterSpatialJoinExec`], which geoberg's codec sends to the executors
//! (`spatial_join_codec`). Each task of its stage runs SedonaDB's join over the whole build
//! side and its own partition of the probe side: a broadcast join whose broadcast is every
//! task reading the build side from the warehouse, with geoberg's join pruning
//! ([`JoinBoundsPruning`]: the probe side skips the files and row groups that no build row's
//! box meets) in each task.
//!
//! A join that outputs build rows no probe row matched (LEFT, FULL, LEFT SEMI / ANTI / MARK
//! with the probe side on the right) needs every probe row in one place: it requires its probe
//! side in one partition, which DataFusion gathers (Ballista: a stage of its own), and runs as
//! one task.

use std::fmt;
use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{JoinSide, JoinType, internal_err};
use datafusion::error::Result;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::Distribution;
use datafusion::physical_plan::joins::utils::JoinFilter;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricsSet};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, Partitioning,
    PlanProperties,
};
use geoberg_datafusion::JoinBoundsPruning;
use sedona_spatial_join::{ProbeShuffleExec, SedonaOptions, SpatialJoinExec, SpatialPredicate};

/// A spatial join run by a cluster, one task per partition of its probe side (see the
/// [module docs](self)).
#[derive(Debug, Clone)]
pub struct ClusterSpatialJoinExec {
    left: Arc<dyn ExecutionPlan>,
    right: Arc<dyn ExecutionPlan>,
    on: SpatialPredicate,
    filter: Option<JoinFilter>,
    join_type: JoinType,
    properties: Arc<PlanProperties>,
    /// Shared by the joins the tasks of this process run.
    metrics: ExecutionPlanMetricsSet,
}

impl ClusterSpatialJoinExec {
    /// The join of `left` (the build side, except for a KNN join whose probe side is the
    /// left) and `right` on `on`, with `filter` applied to each pair, as SedonaDB's
    /// [`SpatialJoinExec::try_new`] takes them.
    pub fn try_new(
        left: Arc<dyn ExecutionPlan>,
        right: Arc<dyn ExecutionPlan>,
        on: SpatialPredicate,
        filter: Option<JoinFilter>,
        join_type: JoinType,
    ) -> Result<Self> {
        let template = SpatialJoinExec::try_new(
            Arc::clone(&left),
            Arc::clone(&right),
            on.clone(),
            filter.clone(),
            &join_type,
            None,
            &Default::default(),
        )?;
        let probe = [&left, &right][probe_index(&on)];
        let partitions = probe.output_partitioning().partition_count();
        let template = template.properties();
        let properties = PlanProperties::new(
            template.equivalence_properties().clone(),
            Partitioning::UnknownPartitioning(partitions),
            template.emission_type,
            template.boundedness,
        );
        Ok(ClusterSpatialJoinExec {
            left,
            right,
            on,
            filter,
            join_type,
            properties: Arc::new(properties),
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    /// `join` run by a cluster, SedonaDB's probe-side shuffle dropped (each task reads its
    /// own probe partition); `None` for a join with an embedded projection (the cluster rule
    /// runs before projections are pushed into joins).
    pub fn from_join(join: &SpatialJoinExec) -> Result<Option<Self>> {
        if join.contains_projection() {
            return Ok(None);
        }
        let unshuffled =
            |side: &Arc<dyn ExecutionPlan>| match side.downcast_ref::<ProbeShuffleExec>() {
                Some(shuffle) => Arc::clone(shuffle.children()[0]),
                None => Arc::clone(side),
            };
        let (left, right) = (unshuffled(&join.left), unshuffled(&join.right));
        Self::try_new(
            left,
            right,
            join.on.clone(),
            join.filter.clone(),
            join.join_type,
        )
        .map(Some)
    }

    /// The build side, unless the predicate is a KNN whose probe side is the left.
    pub fn left(&self) -> &Arc<dyn ExecutionPlan> {
        &self.left
    }

    /// The probe side, unless the predicate is a KNN whose probe side is the left.
    pub fn right(&self) -> &Arc<dyn ExecutionPlan> {
        &self.right
    }

    /// The spatial predicate.
    pub fn on(&self) -> &SpatialPredicate {
        &self.on
    }

    /// The filter applied to each pair the predicate matches.
    pub fn filter(&self) -> Option<&JoinFilter> {
        self.filter.as_ref()
    }

    /// The join type.
    pub fn join_type(&self) -> JoinType {
        self.join_type
    }

    /// The join one task runs: SedonaDB's, over the whole build side and probe partition
    /// `partition` (as its only one), pruned by the build side as in one process.
    fn task_join(&self, partition: usize, config: &ConfigOptions) -> Result<SpatialJoinExec> {
        let options = config
            .extensions
            .get::<SedonaOptions>()
            .map(|o| o.spatial_join.clone())
            .unwrap_or_default();
        let whole = SpatialJoinExec::try_new(
            Arc::clone(&self.left),
            Arc::clone(&self.right),
            self.on.clone(),
            self.filter.clone(),
            &self.join_type,
            None,
            &options,
        )?;
        let pruned = JoinBoundsPruning.optimize(Arc::new(whole), config)?;
        let Some(pruned) = pruned.downcast_ref::<SpatialJoinExec>() else {
            return internal_err!("join pruning replaced the spatial join of a cluster task");
        };
        let one = |side: &Arc<dyn ExecutionPlan>| -> Arc<dyn ExecutionPlan> {
            Arc::new(ProbePartitionExec::new(Arc::clone(side), partition))
        };
        let (left, right) = match probe_index(&self.on) {
            0 => (one(&pruned.left), Arc::clone(&pruned.right)),
            _ => (Arc::clone(&pruned.left), one(&pruned.right)),
        };
        let mut join = SpatialJoinExec::try_new(
            left,
            right,
            self.on.clone(),
            self.filter.clone(),
            &self.join_type,
            None,
            &options,
        )?;
        join.metrics = self.metrics.clone();
        Ok(join)
    }
}

/// The side whose rows are probed against the other side's index.
fn probe_side(on: &SpatialPredicate) -> JoinSide {
    match on {
        SpatialPredicate::KNearestNeighbors(knn) => knn.probe_side,
        _ => JoinSide::Right,
    }
}

/// Which child is the probe side.
fn probe_index(on: &SpatialPredicate) -> usize {
    match probe_side(on) {
        JoinSide::Left => 0,
        _ => 1,
    }
}

/// Whether the join's output is the union of its probe partitions' outputs, each joined with
/// the whole build side: false where build rows that no probe row matched are output (they
/// are known only once every probe row was seen).
fn runs_per_probe_partition(on: &SpatialPredicate, join_type: JoinType) -> bool {
    use JoinType::*;
    let build_rows_unmatched = match probe_side(on) {
        JoinSide::Left => matches!(join_type, Right | Full | RightSemi | RightAnti | RightMark),
        _ => matches!(join_type, Left | Full | LeftSemi | LeftAnti | LeftMark),
    };
    !build_rows_unmatched
}

impl DisplayAs for ClusterSpatialJoinExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GeobergClusterSpatialJoinExec: join_type={:?}, on={}, tasks={}",
            self.join_type,
            self.on,
            self.properties.partitioning.partition_count()
        )?;
        if let Some(filter) = &self.filter {
            write!(f, ", filter={}", filter.expression())?;
        }
        Ok(())
    }
}

impl ExecutionPlan for ClusterSpatialJoinExec {
    fn name(&self) -> &str {
        "GeobergClusterSpatialJoinExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.left, &self.right]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![false, false]
    }

    /// The probe side in one partition where the join type needs every probe row in one
    /// place (DataFusion's distribution rule then gathers it, which Ballista makes a stage).
    fn required_input_distribution(&self) -> Vec<Distribution> {
        let mut sides = vec![Distribution::UnspecifiedDistribution; 2];
        if !runs_per_probe_partition(&self.on, self.join_type) {
            sides[probe_index(&self.on)] = Distribution::SinglePartition;
        }
        sides
    }

    /// Tasks follow the probe side's own partitions (the scan's files and row groups): a
    /// shuffle would only move rows, and every task reads the whole build side anyway.
    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false, false]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let [left, right] = <[_; 2]>::try_from(children)
            .map_err(|_| datafusion::error::DataFusionError::Internal("two children".into()))?;
        Ok(Arc::new(ClusterSpatialJoinExec::try_new(
            left,
            right,
            self.on.clone(),
            self.filter.clone(),
            self.join_type,
        )?))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let partitions = self.properties.partitioning.partition_count();
        if partitions > 1 && !runs_per_probe_partition(&self.on, self.join_type) {
            return internal_err!(
                "a {} spatial join on a cluster runs as one task over one probe partition, \
                 not {partitions}",
                self.join_type
            );
        }
        let join = self.task_join(partition, context.session_config().options())?;
        join.execute(0, context)
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
}

/// Partition `partition` of `input` as the only partition of a plan: what a task of a
/// cluster join hands SedonaDB's join as its probe side. Built by the task, never sent.
#[derive(Debug)]
struct ProbePartitionExec {
    input: Arc<dyn ExecutionPlan>,
    partition: usize,
    properties: Arc<PlanProperties>,
}

impl ProbePartitionExec {
    fn new(input: Arc<dyn ExecutionPlan>, partition: usize) -> Self {
        let properties = input
            .properties()
            .as_ref()
            .clone()
            .with_partitioning(Partitioning::UnknownPartitioning(1));
        ProbePartitionExec {
            input,
            partition,
            properties: Arc::new(properties),
        }
    }
}

impl DisplayAs for ProbePartitionExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ProbePartitionExec: partition={}", self.partition)
    }
}

impl ExecutionPlan for ProbePartitionExec {
    fn name(&self) -> &str {
        "ProbePartitionExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(ProbePartitionExec::new(
            children.swap_remove(0),
            self.partition,
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return internal_err!("a probe partition has one partition, not {partition}");
        }
        self.input.execute(self.partition, context)
    }
}

/// The scheduler's first physical optimizer rule: every [`SpatialJoinExec`] becomes a
/// [`ClusterSpatialJoinExec`] (before projections are pushed into joins, which would hide
/// the join's output columns from the codec).
#[derive(Debug, Default)]
pub struct ClusterSpatialJoins;

impl PhysicalOptimizerRule for ClusterSpatialJoins {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let Some(join) = node.downcast_ref::<SpatialJoinExec>() else {
                return Ok(Transformed::no(node));
            };
            Ok(match ClusterSpatialJoinExec::from_join(join)? {
                Some(cluster) => Transformed::yes(Arc::new(cluster) as Arc<dyn ExecutionPlan>),
                None => Transformed::no(node),
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "geoberg_cluster_spatial_joins"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
