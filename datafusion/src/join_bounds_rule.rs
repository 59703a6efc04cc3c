//! The physical optimizer rule that sets up join pruning (see `join_bounds`):
//! - [`JoinBoundsPruning`]: for each inner [`SpatialJoinExec`] on a spatial relation
//!   (`ST_Intersects`, `ST_Contains`, `ST_Within`, `ST_Covers`, ...) or a constant distance
//!   (`ST_DWithin(a, b, d)`, `ST_Distance(a, b) < d`) whose probe geometry is a column of a
//!   [`GeobergScanExec`] (through projections, filters and repartitions, SedonaDB's probe
//!   shuffle among them), it wraps the build side in a [`BuildBoundsExec`] and hands the scan
//!   the bounds to wait for.
//! - [`BuildBoundsExec`]: passes the build side's batches through unchanged and records the box
//!   of every geometry into [`BuildSideBounds`], until each of its partitions has ended.
//!
//! The file-pair rule (`file_pair_join`) finds its scans with the same walk down a join side
//! ([`attach`], [`scan_under`]).
//!
//! Only inner joins are pruned (an outer join keeps unmatched probe rows); KNN joins are not
//! (their nearest neighbours may lie anywhere); geography is not (SedonaDB's join operator
//! declines it, so no [`SpatialJoinExec`] is planned for it).

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{JoinType, ScalarValue};
use datafusion::error::Result;
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};
use futures::Stream;
use geoberg_geostats::bbox_of_wkb;
use sedona_query_planner::probe_shuffle_exec::ProbeShuffleExec;
use sedona_query_planner::spatial_predicate::SpatialPredicate;
use sedona_schema::datatypes::{Edges, SedonaType};
use sedona_spatial_join::exec::SpatialJoinExec;

use crate::join_bounds::BuildSideBounds;
use crate::scan_exec::GeobergScanExec;

/// The build side of a spatial join, unchanged, recording the box of each value of
/// `geometry` (an expression over its batches) into [`BuildSideBounds`].
#[derive(Debug)]
pub struct BuildBoundsExec {
    input: Arc<dyn ExecutionPlan>,
    geometry: Arc<dyn PhysicalExpr>,
    bounds: Arc<BuildSideBounds>,
}

impl BuildBoundsExec {
    /// Records `geometry` of `input`'s batches into `bounds`.
    pub fn new(
        input: Arc<dyn ExecutionPlan>,
        geometry: Arc<dyn PhysicalExpr>,
        bounds: Arc<BuildSideBounds>,
    ) -> Self {
        BuildBoundsExec {
            input,
            geometry,
            bounds,
        }
    }
}

impl DisplayAs for BuildBoundsExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GeobergBuildBoundsExec: geometry={}", self.geometry)?;
        if self.bounds.expand() > 0.0 {
            write!(f, ", expanded_by={}", self.bounds.expand())?;
        }
        if let Some(Some(index)) = self.bounds.built() {
            write!(f, ", boxes={}", index.boxes())?;
        }
        Ok(())
    }
}

impl ExecutionPlan for BuildBoundsExec {
    fn name(&self) -> &str {
        "GeobergBuildBoundsExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let input = children.swap_remove(0);
        // New inputs may have other partitions: new bounds (the scan keeps the old ones and
        // finds them incomplete, so it prunes nothing rather than wrongly).
        let partitions = input.output_partitioning().partition_count();
        let bounds = if partitions == self.bounds.partitions() {
            Arc::clone(&self.bounds)
        } else {
            Arc::new(BuildSideBounds::new(partitions, self.bounds.expand()))
        };
        Ok(Arc::new(BuildBoundsExec {
            input,
            geometry: Arc::clone(&self.geometry),
            bounds,
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        Ok(Box::pin(RecordingStream {
            input: self.input.execute(partition, context)?,
            geometry: Arc::clone(&self.geometry),
            bounds: Arc::clone(&self.bounds),
            partition,
        }))
    }
}

struct RecordingStream {
    input: SendableRecordBatchStream,
    geometry: Arc<dyn PhysicalExpr>,
    bounds: Arc<BuildSideBounds>,
    partition: usize,
}

impl RecordingStream {
    fn record(&self, batch: &RecordBatch) {
        let array = self
            .geometry
            .evaluate(batch)
            .and_then(|v| v.into_array(batch.num_rows()));
        let Ok(array) = array else {
            return self.bounds.record(Vec::new(), true);
        };
        let mut boxes = Vec::with_capacity(array.len());
        let mut unusable = false;
        let mut add = |wkb: Option<&[u8]>| match wkb.map(bbox_of_wkb) {
            None | Some(Ok(None)) => {}
            Some(Ok(Some(b))) => boxes.push([b.min_x, b.min_y, b.max_x, b.max_y]),
            Some(Err(_)) => unusable = true,
        };
        match array.data_type() {
            DataType::Binary => array.as_binary::<i32>().iter().for_each(&mut add),
            DataType::LargeBinary => array.as_binary::<i64>().iter().for_each(&mut add),
            DataType::BinaryView => array.as_binary_view().iter().for_each(&mut add),
            _ => unusable = true,
        }
        self.bounds.record(boxes, unusable);
    }
}

impl Stream for RecordingStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.input.as_mut().poll_next(cx);
        match &polled {
            Poll::Ready(Some(Ok(batch))) => self.record(batch),
            Poll::Ready(None) => self.bounds.finish(self.partition),
            // An error ends the query; the bounds stay incomplete.
            Poll::Ready(Some(Err(_))) | Poll::Pending => {}
        }
        polled
    }
}

impl RecordBatchStream for RecordingStream {
    fn schema(&self) -> SchemaRef {
        self.input.schema()
    }
}

/// The physical optimizer rule described in the [module docs](self).
#[derive(Debug, Default)]
pub struct JoinBoundsPruning;

impl PhysicalOptimizerRule for JoinBoundsPruning {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        add_join_bounds(plan)
    }

    fn name(&self) -> &str {
        "geoberg_join_bounds_pruning"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// `plan` with every spatial join the rule applies to set up for join pruning.
pub(crate) fn add_join_bounds(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        let pruned = match node.downcast_ref::<SpatialJoinExec>() {
            Some(join) => prune_probe_side(&node, join)?,
            None => None,
        };
        Ok(match pruned {
            Some(plan) => Transformed::yes(plan),
            None => Transformed::no(node),
        })
    })
    .map(|t| t.data)
}

/// The build-side geometry, the probe-side geometry column and the distance (0 for a
/// relation) of an inner spatial join on a relation (`ST_Intersects`, `ST_Contains`, ...) or
/// a constant distance between planar geometries: a join whose pairs lie within the distance
/// of each other's boxes, which the layout of the tables can prune.
pub(crate) fn prunable_join(
    join: &SpatialJoinExec,
) -> Option<(&Arc<dyn PhysicalExpr>, &Column, f64)> {
    if join.join_type != JoinType::Inner {
        return None;
    }
    let (build_geometry, probe_geometry, distance) = match &join.on {
        SpatialPredicate::Relation(r) => (&r.left, &r.right, 0.0),
        SpatialPredicate::Distance(d) => (&d.left, &d.right, constant_distance(&d.distance)?),
        SpatialPredicate::KNearestNeighbors(_) => return None,
    };
    let column = probe_geometry.downcast_ref::<Column>()?;
    let planar = is_planar_geometry(build_geometry, &join.left.schema())
        && is_planar_geometry(probe_geometry, &join.right.schema());
    planar.then_some((build_geometry, column, distance))
}

/// The join with its build side recording bounds and its probe-side scan pruning on them, or
/// `None` when the join is not one the rule applies to.
fn prune_probe_side(
    plan: &Arc<dyn ExecutionPlan>,
    join: &SpatialJoinExec,
) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    let Some((build_geometry, column, expand)) = prunable_join(join) else {
        return Ok(None);
    };
    let partitions = join.left.output_partitioning().partition_count();
    let bounds = Arc::new(BuildSideBounds::new(partitions, expand));
    let attach_bounds =
        |scan: &GeobergScanExec, index| scan.with_join_bounds(index, Arc::clone(&bounds));
    let Some(probe) = attach(&join.right, column.index(), &attach_bounds)? else {
        return Ok(None);
    };
    let build: Arc<dyn ExecutionPlan> = Arc::new(BuildBoundsExec::new(
        Arc::clone(&join.left),
        Arc::clone(build_geometry),
        bounds,
    ));
    Ok(Some(
        Arc::clone(plan).with_new_children(vec![build, probe])?,
    ))
}

/// `plan` with the scan that produces its output column `index` replaced by `with(scan, its
/// column index)`, when the column reaches the scan unchanged (see [`pass_through`]); `None`
/// when it does not, or `with` declines.
pub(crate) fn attach(
    plan: &Arc<dyn ExecutionPlan>,
    index: usize,
    with: &dyn Fn(&GeobergScanExec, usize) -> Option<GeobergScanExec>,
) -> Result<Option<Arc<dyn ExecutionPlan>>> {
    if let Some(scan) = plan.downcast_ref::<GeobergScanExec>() {
        return Ok(with(scan, index).map(|s| Arc::new(s) as Arc<dyn ExecutionPlan>));
    }
    let Some((child, input_index)) = pass_through(plan, index) else {
        return Ok(None);
    };
    match attach(child, input_index, with)? {
        Some(child) => Ok(Some(Arc::clone(plan).with_new_children(vec![child])?)),
        None => Ok(None),
    }
}

/// The scan producing `plan`'s output column `index` unchanged, with the column's index in
/// the scan's output.
pub(crate) fn scan_under(
    plan: &Arc<dyn ExecutionPlan>,
    index: usize,
) -> Option<(&GeobergScanExec, usize)> {
    if let Some(scan) = plan.downcast_ref::<GeobergScanExec>() {
        return Some((scan, index));
    }
    let (child, input_index) = pass_through(plan, index)?;
    scan_under(child, input_index)
}

/// The only child of `plan` and the index there of `plan`'s output column `index`, when
/// `plan` passes every row's value of that column on unchanged: projections, filters,
/// repartitions (SedonaDB's probe shuffle among them), [`BuildBoundsExec`].
fn pass_through(
    plan: &Arc<dyn ExecutionPlan>,
    index: usize,
) -> Option<(&Arc<dyn ExecutionPlan>, usize)> {
    let input_index = if let Some(p) = plan.downcast_ref::<ProjectionExec>() {
        p.expr().get(index)?.expr.downcast_ref::<Column>()?.index()
    } else if let Some(f) = plan.downcast_ref::<FilterExec>() {
        match f.projection() {
            Some(projection) => *projection.get(index)?,
            None => index,
        }
    } else if only_moves_rows(plan) {
        index
    } else {
        return None;
    };
    let [child] = plan.children()[..] else {
        return None;
    };
    Some((child, input_index))
}

/// Whether `plan` hands its input's rows on as they are, only across partitions (or, for
/// [`BuildBoundsExec`], recording their boxes on the way).
pub(crate) fn only_moves_rows(plan: &Arc<dyn ExecutionPlan>) -> bool {
    plan.downcast_ref::<RepartitionExec>().is_some()
        || plan.downcast_ref::<ProbeShuffleExec>().is_some()
        || plan.downcast_ref::<CoalescePartitionsExec>().is_some()
        || plan.downcast_ref::<BuildBoundsExec>().is_some()
}

/// A constant, finite, non-negative distance.
fn constant_distance(expr: &Arc<dyn PhysicalExpr>) -> Option<f64> {
    let literal = expr.downcast_ref::<Literal>()?;
    match literal.value().cast_to(&DataType::Float64).ok()? {
        ScalarValue::Float64(Some(d)) if d.is_finite() && d >= 0.0 => Some(d),
        _ => None,
    }
}

/// Whether `expr` over `schema` is a geometry with planar edges.
fn is_planar_geometry(expr: &Arc<dyn PhysicalExpr>, schema: &SchemaRef) -> bool {
    let Ok(field) = expr.return_field(schema) else {
        return false;
    };
    matches!(
        SedonaType::from_storage_field(&field),
        Ok(SedonaType::Wkb(Edges::Planar, _)
            | SedonaType::WkbLarge(Edges::Planar, _)
            | SedonaType::WkbView(Edges::Planar, _))
    )
}
