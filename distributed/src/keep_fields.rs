//! Plan nodes whose expressions carry field metadata (a geometry constant in a filter, a
//! function returning geometry in a projection), sent to executors with that metadata.
//!
//! DataFusion 54's protobuf drops it (apache/datafusion#24613), and Ballista 54 encodes every
//! stage with DataFusion's default converter, so geoberg cannot change how a `FilterExec` is
//! written. Instead the scheduler's last optimizer rule, [`KeepFieldTypes`], wraps each node
//! that needs it in a [`KeepFieldsExec`]; [`GeobergClusterCodec`](crate::GeobergClusterCodec)
//! writes the wrapped node (its children left to DataFusion) with geoberg's
//! [`FieldPreservingConverter`], and an executor reads it back as the plain node with every
//! field restored. Nodes without such expressions are left as they are.

use std::fmt;
use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::error::Result;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::execution_plan::{CardinalityEffect, Distribution};
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, Statistics,
};
use datafusion_proto::physical_plan::{
    AsExecutionPlan, DefaultPhysicalProtoConverter, PhysicalExtensionCodec,
    PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf::PhysicalPlanNode;
use geoberg_datafusion::{FieldPreservingConverter, GeobergScanExec};
use prost::Message;

/// A plan node to be written with [`FieldPreservingConverter`]; it runs and displays as the
/// node itself.
#[derive(Debug)]
pub struct KeepFieldsExec {
    node: Arc<dyn ExecutionPlan>,
}

impl KeepFieldsExec {
    /// Wraps `node`.
    pub fn new(node: Arc<dyn ExecutionPlan>) -> Self {
        KeepFieldsExec { node }
    }

    /// The wrapped node.
    pub fn node(&self) -> &Arc<dyn ExecutionPlan> {
        &self.node
    }

    /// The wrapped node with its children replaced by empty leaves of the same schemas, in
    /// protobuf written with [`FieldPreservingConverter`]: the node alone.
    pub fn encode_node(&self, codec: &dyn PhysicalExtensionCodec) -> Result<Vec<u8>> {
        encode_alone(&self.node, codec, &FieldPreservingConverter)
    }

    /// The node `encoded` by [`KeepFieldsExec::encode_node`], on `children`.
    pub fn decode_node(
        encoded: &[u8],
        children: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        codec: &dyn PhysicalExtensionCodec,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let node = PhysicalPlanNode::decode(encoded).map_err(|e| {
            datafusion::error::DataFusionError::Execution(format!("encoded geoberg node: {e}"))
        })?;
        let node = node.try_into_physical_plan(ctx, codec)?;
        node.with_new_children(children.to_vec())
    }
}

/// `node` with empty leaves for children, in protobuf written with `converter`.
fn encode_alone(
    node: &Arc<dyn ExecutionPlan>,
    codec: &dyn PhysicalExtensionCodec,
    converter: &dyn PhysicalProtoConverterExtension,
) -> Result<Vec<u8>> {
    let leaves = node
        .children()
        .into_iter()
        .map(|c| Arc::new(EmptyExec::new(c.schema())) as Arc<dyn ExecutionPlan>)
        .collect();
    let alone = Arc::clone(node).with_new_children(leaves)?;
    Ok(converter
        .execution_plan_to_proto(&alone, codec)?
        .encode_to_vec())
}

impl DisplayAs for KeepFieldsExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.node.fmt_as(t, f)
    }
}

impl ExecutionPlan for KeepFieldsExec {
    fn name(&self) -> &str {
        self.node.name()
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.node.properties()
    }

    fn required_input_distribution(&self) -> Vec<Distribution> {
        self.node.required_input_distribution()
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        self.node.maintains_input_order()
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        self.node.benefits_from_input_partitioning()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        self.node.children()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(KeepFieldsExec::new(
            Arc::clone(&self.node).with_new_children(children)?,
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        self.node.execute(partition, context)
    }

    fn metrics(&self) -> Option<MetricsSet> {
        self.node.metrics()
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        self.node.partition_statistics(partition)
    }

    fn cardinality_effect(&self) -> CardinalityEffect {
        self.node.cardinality_effect()
    }
}

/// The scheduler's last physical optimizer rule: wraps in [`KeepFieldsExec`] every node whose
/// expressions would lose field metadata in DataFusion's protobuf (found by writing the node
/// both ways and comparing).
#[derive(Debug, Default)]
pub struct KeepFieldTypes;

impl PhysicalOptimizerRule for KeepFieldTypes {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let codec = crate::GeobergClusterCodec::default();
        plan.transform_up(|node| {
            if node.downcast_ref::<GeobergScanExec>().is_some()
                || node.downcast_ref::<KeepFieldsExec>().is_some()
            {
                return Ok(Transformed::no(node));
            }
            let plain = encode_alone(&node, &codec, &DefaultPhysicalProtoConverter {});
            let keeping = encode_alone(&node, &codec, &FieldPreservingConverter);
            match (plain, keeping) {
                (Ok(plain), Ok(keeping)) if plain != keeping => {
                    Ok(Transformed::yes(Arc::new(KeepFieldsExec::new(node)) as _))
                }
                // Equal, or not encodable here (Ballista's nodes come later; others fail
                // with their name when the stage is sent).
                _ => Ok(Transformed::no(node)),
            }
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "geoberg_keep_field_types"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
