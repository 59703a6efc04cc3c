//! Physical expressions whose Arrow field carries extension metadata (a geometry constant, a
//! function returning geometry) sent to another process with that metadata intact.
//!
//! DataFusion 54's protobuf drops it (apache/datafusion#24613): a literal travels as its bare
//! value and a scalar function as its return *type*, so on a remote executor a geometry constant
//! or `ST_Point(x, y)` arrives as plain binary and SedonaDB's kernels no longer match it.
//! [`FieldPreservingConverter`] serializes a plan as DataFusion does, except that each such
//! expression is wrapped in an extension node holding its field; [`restore_field`] (called by
//! [`GeobergPhysicalCodec`](crate::GeobergPhysicalCodec)'s `try_decode_expr`) puts the field
//! back on the decoded expression. A receiver needs only the codec, not the converter.

use std::sync::Arc;

use arrow_schema::{Field, Schema};
use datafusion::common::exec_err;
use datafusion::common::metadata::FieldMetadata;
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_expr::ScalarFunctionExpr;
use datafusion::physical_expr::expressions::Literal;
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr};
use datafusion_proto::physical_plan::to_proto::serialize_physical_expr_with_converter;
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf;
use prost::Message;

/// First bytes of an encoded field-carrying expression (version 1 of the layout).
pub(crate) const TYPED_EXPR_MAGIC: &[u8; 8] = b"GBFIELD1";

/// Serializes plans and expressions as DataFusion does, keeping the field metadata of literals
/// and scalar functions (see the module docs). Decoding needs no converter: the extension nodes
/// it writes are read back by [`GeobergPhysicalCodec`](crate::GeobergPhysicalCodec).
#[derive(Debug, Default, Clone, Copy)]
pub struct FieldPreservingConverter;

impl PhysicalProtoConverterExtension for FieldPreservingConverter {
    fn proto_to_execution_plan(
        &self,
        proto: &protobuf::PhysicalPlanNode,
        ctx: &PhysicalPlanDecodeContext<'_>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.default_proto_to_execution_plan(proto, ctx)
    }

    fn execution_plan_to_proto(
        &self,
        plan: &Arc<dyn ExecutionPlan>,
        codec: &dyn PhysicalExtensionCodec,
    ) -> Result<protobuf::PhysicalPlanNode> {
        protobuf::PhysicalPlanNode::try_from_physical_plan_with_converter(
            Arc::clone(plan),
            codec,
            self,
        )
    }

    fn proto_to_physical_expr(
        &self,
        proto: &protobuf::PhysicalExprNode,
        input_schema: &Schema,
        ctx: &PhysicalPlanDecodeContext<'_>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        self.default_proto_to_physical_expr(proto, input_schema, ctx)
    }

    fn physical_expr_to_proto(
        &self,
        expr: &Arc<dyn PhysicalExpr>,
        codec: &dyn PhysicalExtensionCodec,
    ) -> Result<protobuf::PhysicalExprNode> {
        // Children go through `self` too, so a constant nested in a call keeps its field.
        let node = serialize_physical_expr_with_converter(expr, codec, self)?;
        let Some(field) = field_with_metadata(expr) else {
            return Ok(node);
        };
        let mut buf = TYPED_EXPR_MAGIC.to_vec();
        buf.extend(protobuf::Field::try_from(field.as_ref())?.encode_to_vec());
        Ok(protobuf::PhysicalExprNode {
            expr_id: None,
            expr_type: Some(protobuf::physical_expr_node::ExprType::Extension(
                protobuf::PhysicalExtensionExprNode {
                    expr: buf,
                    inputs: vec![node],
                },
            )),
        })
    }
}

/// The field of `expr` when it is a literal or a scalar function whose field has metadata
/// (the two expressions DataFusion's protobuf strips it from).
fn field_with_metadata(expr: &Arc<dyn PhysicalExpr>) -> Option<Arc<Field>> {
    let field = if let Some(literal) = expr.downcast_ref::<Literal>() {
        literal.return_field(&Schema::empty()).ok()?
    } else if let Some(function) = expr.downcast_ref::<ScalarFunctionExpr>() {
        function.return_field(&Schema::empty()).ok()?
    } else {
        return None;
    };
    (!field.metadata().is_empty()).then_some(field)
}

/// Whether `buf` is an expression [`FieldPreservingConverter`] wrapped.
pub(crate) fn is_typed_expr(buf: &[u8]) -> bool {
    buf.starts_with(TYPED_EXPR_MAGIC)
}

/// The decoded expression `inputs[0]` with the field encoded in `buf` put back.
pub(crate) fn restore_field(
    buf: &[u8],
    inputs: &[Arc<dyn PhysicalExpr>],
) -> Result<Arc<dyn PhysicalExpr>> {
    let Some(encoded) = buf.strip_prefix(TYPED_EXPR_MAGIC.as_slice()) else {
        return exec_err!("not an encoded geoberg field (wrong magic bytes)");
    };
    let [inner] = inputs else {
        return exec_err!(
            "an encoded geoberg field wraps one expression, got {}",
            inputs.len()
        );
    };
    let field = protobuf::Field::decode(encoded)
        .map_err(|e| DataFusionError::Execution(format!("encoded geoberg field: {e}")))?;
    let field = Arc::new(Field::try_from(&field)?);
    if let Some(literal) = inner.downcast_ref::<Literal>() {
        let metadata = FieldMetadata::from(field.as_ref());
        return Ok(Arc::new(Literal::new_with_metadata(
            literal.value().clone(),
            Some(metadata),
        )));
    }
    if let Some(function) = inner.downcast_ref::<ScalarFunctionExpr>() {
        let restored = ScalarFunctionExpr::new(
            function.name(),
            Arc::new(function.fun().clone()),
            function.args().to_vec(),
            field,
            Arc::new(function.config_options().clone()),
        )
        .with_nullable(function.nullable());
        return Ok(Arc::new(restored));
    }
    exec_err!("an encoded geoberg field wraps {inner}, not a literal or a function call")
}
