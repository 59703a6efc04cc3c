//! File-pair joins of two geoberg tables: a spatial join whose two sides both scan a geoberg
//! table reads only the pairs of files whose boxes meet (see `file_pairs`).
//! - [`FilePairJoins`], the physical optimizer rule: each inner [`SpatialJoinExec`] that
//!   join pruning applies to (see `join_bounds_rule`) whose build geometry is also a column of
//!   a [`GeobergScanExec`] is wrapped in a [`FilePairJoinExec`], and its build-side scan
//!   waits for the probe side's file boxes.
//! - [`FilePairJoinExec`]: when it starts, it looks both sides' planned files up in the
//!   tables' file indexes (no data read) and pairs them. When the build files fit one group
//!   (`geoberg.join_group_bytes`), it runs the join it wraps, whose build-side scan skips the
//!   files and row groups that meet no probe file (and whose probe side is pruned by the build
//!   rows, as in any pruned join). Otherwise it joins group by group, each group's build files
//!   with the probe files they meet, in one partition each and the partitions side by side:
//!   memory is bounded by the largest groups in flight, not by the tables, with no sampling
//!   and no shuffle. Where the pairs are too dense for that to pay (groups would read the
//!   probe side more than twice over, as on tables in arrival order), it runs the join whole
//!   and leaves larger-than-memory build sides to SedonaDB's own spilling partitions.
//!
//! `EXPLAIN ANALYZE` shows `file_pairs` of `file_pairs_total` and the `groups` run.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::internal_err;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::metrics::{
    Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::{StreamExt, TryStreamExt};
use sedona_spatial_join::exec::SpatialJoinExec;
use tokio::sync::OnceCell;

use crate::error::table_error;
use crate::file_pairs::{FilePairPlan, SideFile};
use crate::join_bounds::BuildSideBounds;
use crate::join_bounds_rule::{
    add_join_bounds, attach, only_moves_rows, prunable_join, scan_under,
};
use crate::options::GeobergOptions;
use crate::scan_exec::GeobergScanExec;

/// A spatial join of two geoberg tables run by file pairs (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct FilePairJoinExec {
    /// The [`SpatialJoinExec`], its build-side scan pruned by `probe_files`.
    join: Arc<dyn ExecutionPlan>,
    build: JoinSide,
    probe: JoinSide,
    /// The `ST_DWithin` distance (0 for a relation).
    distance: f64,
    /// The probe side's file boxes, filled when the join starts.
    probe_files: Arc<BuildSideBounds>,
    started: Arc<OnceCell<Arc<Started>>>,
    metrics: FilePairMetrics,
}

/// One side's scan and the table column it joins on.
#[derive(Debug, Clone)]
struct JoinSide {
    scan: GeobergScanExec,
    column: String,
}

/// What the join decided when it started.
#[derive(Debug)]
struct Started {
    plan: FilePairPlan,
    build: Vec<SideFile>,
    probe: Vec<SideFile>,
    /// Run by groups (else whole).
    grouped: bool,
}

#[derive(Debug, Clone)]
struct FilePairMetrics {
    set: ExecutionPlanMetricsSet,
    pairs: Count,
    total: Count,
    groups: Count,
    build_files_read: Count,
    probe_files_read: Count,
    output_rows: Count,
}

impl FilePairMetrics {
    fn new() -> Self {
        let set = ExecutionPlanMetricsSet::new();
        let counter = |name: &'static str| MetricBuilder::new(&set).global_counter(name);
        FilePairMetrics {
            pairs: counter("file_pairs"),
            total: counter("file_pairs_total"),
            groups: counter("groups"),
            build_files_read: counter("build_files_read"),
            probe_files_read: counter("probe_files_read"),
            output_rows: counter("output_rows"),
            set,
        }
    }
}

impl FilePairJoinExec {
    /// `plan`, a [`SpatialJoinExec`], run by file pairs; `None` when its two sides do not both
    /// join a planar geometry column of a geoberg table scan (with the table at hand).
    pub fn try_wrap(plan: &Arc<dyn ExecutionPlan>) -> Result<Option<FilePairJoinExec>> {
        let Some(join) = plan.downcast_ref::<SpatialJoinExec>() else {
            return Ok(None);
        };
        let Some((build_geometry, probe_column, distance)) = prunable_join(join) else {
            return Ok(None);
        };
        let Some(build_column) = build_geometry.downcast_ref::<Column>() else {
            return Ok(None);
        };
        let Some(probe) = side(&join.right, probe_column.index()) else {
            return Ok(None);
        };
        let probe_files = Arc::new(BuildSideBounds::new(1, distance));
        let with_bounds = |scan: &GeobergScanExec, index| {
            scan.with_probe_file_bounds(index, Arc::clone(&probe_files))
        };
        let Some(left) = attach(&join.left, build_column.index(), &with_bounds)? else {
            return Ok(None);
        };
        let Some(build) = side(&left, build_column.index()) else {
            return Ok(None);
        };
        let right = Arc::clone(&join.right);
        Ok(Some(FilePairJoinExec {
            join: Arc::clone(plan).with_new_children(vec![left, right])?,
            build,
            probe,
            distance,
            probe_files,
            started: Arc::default(),
            metrics: FilePairMetrics::new(),
        }))
    }

    /// Pairs the two sides' planned files, once for all partitions.
    async fn start(&self, context: &TaskContext) -> Result<Arc<Started>> {
        let options = GeobergOptions::of(context.session_config());
        let build = side_files(&self.build).await?;
        let probe = side_files(&self.probe).await?;
        let plan = FilePairPlan::new(&build, &probe, self.distance, options.join_group_bytes);
        let (read, distinct) = plan.probe_bytes(&probe);
        let grouped =
            options.join_pruning && plan.groups.len() > 1 && read <= distinct.saturating_mul(2);
        if options.join_pruning && !grouped {
            // The build side skips what meets no probe file.
            let unknown = probe.iter().any(|f| f.bbox.is_none() && !f.all_null);
            let boxes = probe
                .iter()
                .filter_map(|f| f.bbox.as_ref())
                .map(|b| [b.min_x, b.min_y, b.max_x, b.max_y])
                .collect();
            self.probe_files.record(boxes, unknown);
            self.probe_files.finish(0);
        }
        let m = &self.metrics;
        m.pairs.add(plan.pairs);
        m.total.add(plan.total);
        if grouped {
            m.groups.add(plan.groups.len());
            m.build_files_read
                .add(plan.groups.iter().map(|g| g.build.len()).sum());
            m.probe_files_read
                .add(plan.groups.iter().map(|g| g.probe.len()).sum());
        }
        Ok(Arc::new(Started {
            plan,
            build,
            probe,
            grouped,
        }))
    }

    /// Group `index` as a plan of its own: the join over the group's files, in one partition,
    /// its probe side pruned by the group's build rows.
    fn group_plan(
        &self,
        started: &Started,
        index: usize,
        runtime: &RuntimeEnv,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let group = &started.plan.groups[index];
        let files = |side: &[SideFile], picked: &[usize]| -> HashSet<String> {
            picked.iter().map(|&i| side[i].location.clone()).collect()
        };
        let (build, probe) = (
            files(&started.build, &group.build),
            files(&started.probe, &group.probe),
        );
        let Some(join) = self.join.downcast_ref::<SpatialJoinExec>() else {
            return internal_err!("a file-pair join wraps a spatial join");
        };
        let left = one_partition(&join.left, &build, runtime)?;
        let right = one_partition(&join.right, &probe, runtime)?;
        add_join_bounds(Arc::clone(&self.join).with_new_children(vec![left, right])?)
    }
}

/// The scan under `plan`'s output column `index` and the table column it reads, when the
/// scan knows its table version (what its file boxes are looked up in).
fn side(plan: &Arc<dyn ExecutionPlan>, index: usize) -> Option<JoinSide> {
    let (scan, index) = scan_under(plan, index)?;
    scan.table()?;
    Some(JoinSide {
        column: scan.column_name(index)?,
        scan: scan.clone(),
    })
}

/// The files a side's scan planned, with their boxes on the joined column from the table's
/// file index (built from the manifests, or cached).
async fn side_files(side: &JoinSide) -> Result<Vec<SideFile>> {
    let Some(table) = side.scan.table().cloned() else {
        return internal_err!("a file-pair join side without its table");
    };
    let column = side.column.clone();
    let index = tokio::task::spawn_blocking(move || table.file_index(&column))
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))?
        .map_err(table_error)?;
    let boxes: HashMap<&str, _> = index
        .files()
        .entries()
        .iter()
        .map(|f| (f.path.as_str(), (f.bbox, f.all_null)))
        .collect();
    let mut files: Vec<SideFile> = Vec::new();
    let mut seen = HashSet::new();
    for slice in side.scan.spec().partitions.iter().flatten() {
        if !seen.insert(slice.location.as_str()) {
            continue;
        }
        let (bbox, all_null) = boxes
            .get(slice.location.as_str())
            .copied()
            .unwrap_or((None, false));
        files.push(SideFile {
            location: slice.location.clone(),
            bytes: slice.size,
            bbox,
            all_null,
        });
    }
    Ok(files)
}

/// `plan` (a path of [`pass_through`](crate::join_bounds_rule) nodes down to a scan) in one
/// partition over `files` only: the scan restricted, the nodes that only move rows dropped
/// (the build-side recorder among them: the group's own is added after).
fn one_partition(
    plan: &Arc<dyn ExecutionPlan>,
    files: &HashSet<String>,
    runtime: &RuntimeEnv,
) -> Result<Arc<dyn ExecutionPlan>> {
    if let Some(scan) = plan.downcast_ref::<GeobergScanExec>() {
        let files: HashSet<&str> = files.iter().map(String::as_str).collect();
        return Ok(Arc::new(scan.restricted(&files, runtime)?));
    }
    let [child] = plan.children()[..] else {
        return internal_err!(
            "a file-pair join side that is not a path to a scan: {}",
            plan.name()
        );
    };
    let child = one_partition(child, files, runtime)?;
    if only_moves_rows(plan) {
        Ok(child)
    } else {
        Arc::clone(plan).with_new_children(vec![child])
    }
}

impl DisplayAs for FilePairJoinExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GeobergFilePairJoinExec: build={}.{}, probe={}.{}",
            self.build.scan.spec().table,
            self.build.column,
            self.probe.scan.spec().table,
            self.probe.column
        )?;
        if self.distance > 0.0 {
            write!(f, ", distance={}", self.distance)?;
        }
        if let Some(s) = self.started.get() {
            write!(f, ", file_pairs={} of {}", s.plan.pairs, s.plan.total)?;
            match s.grouped {
                // The nodes below show the plan each group ran a copy of, not the groups' work.
                true => write!(
                    f,
                    ", ran as {} groups of the plan below",
                    s.plan.groups.len()
                )?,
                false => write!(f, ", ran whole")?,
            }
        }
        Ok(())
    }
}

impl ExecutionPlan for FilePairJoinExec {
    fn name(&self) -> &str {
        "GeobergFilePairJoinExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.join.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.join]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(FilePairJoinExec {
            join: children.swap_remove(0),
            started: Arc::default(),
            metrics: FilePairMetrics::new(),
            ..(*self).clone()
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let this = self.clone();
        let schema = self.schema();
        let partitions = self.join.output_partitioning().partition_count().max(1);
        let stream = futures::stream::once(async move {
            let started = Arc::clone(
                this.started
                    .get_or_try_init(|| this.start(&context))
                    .await?,
            );
            if !started.grouped {
                return this.join.execute(partition, context);
            }
            // Partition p joins groups p, p + partitions, ... one after the other.
            let schema = this.schema();
            let groups = (partition..started.plan.groups.len()).step_by(partitions);
            let rows = this.metrics.output_rows.clone();
            let streams = futures::stream::iter(groups).map(move |g| {
                let plan = this.group_plan(&started, g, &context.runtime_env())?;
                plan.execute(0, Arc::clone(&context))
            });
            let streams = streams
                .try_flatten()
                .inspect_ok(move |batch| rows.add(batch.num_rows()));
            Ok(Box::pin(RecordBatchStreamAdapter::new(schema, streams))
                as SendableRecordBatchStream)
        })
        .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.set.clone_inner())
    }
}

/// The physical optimizer rule described in the [module docs](self); it runs after
/// [`JoinBoundsPruning`](crate::JoinBoundsPruning), whose pruning each group repeats.
#[derive(Debug, Default)]
pub struct FilePairJoins;

impl PhysicalOptimizerRule for FilePairJoins {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            Ok(match FilePairJoinExec::try_wrap(&node)? {
                Some(wrapped) => Transformed::yes(Arc::new(wrapped) as Arc<dyn ExecutionPlan>),
                None => Transformed::no(node),
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "geoberg_file_pair_joins"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
