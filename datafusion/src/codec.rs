//! Shipping the scan node to another process (Ballista, datafusion-distributed): a
//! [`PhysicalExtensionCodec`] for [`GeobergScanExec`].
//!
//! The node travels in its own encoding: the plan (files, row-group selections, the spatial
//! boxes and counters) as JSON, the table schema and the Parquet predicate as DataFusion
//! protobuf. The boxes are carried as numbers, not as geometry literals: DataFusion 54's
//! protobuf drops literal field metadata (apache/datafusion#24613), so a geometry constant
//! would arrive as plain binary. The scan's Parquet predicate is written with
//! [`FieldPreservingConverter`] for the same reason, and this codec reads back every expression
//! that converter wraps, wherever in a plan it stands.

use std::sync::Arc;

use arrow_schema::Schema;
use datafusion::common::{exec_err, internal_err};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::PhysicalExpr;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use datafusion_proto::physical_plan::from_proto::parse_physical_expr;
use datafusion_proto::physical_plan::to_proto::serialize_physical_expr_with_converter;
use datafusion_proto::protobuf;
use prost::Message;

use crate::scan_exec::{GeobergScanExec, ScanSpec};
use crate::typed_exprs::{FieldPreservingConverter, is_typed_expr, restore_field};

/// First bytes of an encoded scan node (version 1 of the layout).
const MAGIC: &[u8; 8] = b"GBSCAN01";

/// Encodes and decodes [`GeobergScanExec`] nodes; other nodes are not its business.
#[derive(Debug, Default, Clone, Copy)]
pub struct GeobergPhysicalCodec;

impl PhysicalExtensionCodec for GeobergPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !inputs.is_empty() {
            return internal_err!("a geoberg scan has no inputs, got {}", inputs.len());
        }
        let Some(mut rest) = buf.strip_prefix(MAGIC.as_slice()) else {
            return exec_err!("not an encoded geoberg scan (wrong magic bytes)");
        };
        let spec = take(&mut rest)?;
        let schema = take(&mut rest)?;
        let predicate = take(&mut rest)?;
        if !rest.is_empty() {
            return exec_err!("encoded geoberg scan has {} trailing bytes", rest.len());
        }
        let spec: ScanSpec = serde_json::from_slice(spec)
            .map_err(|e| DataFusionError::Execution(format!("encoded geoberg scan: {e}")))?;
        let schema = protobuf::Schema::decode(schema)
            .map_err(|e| DataFusionError::Execution(format!("encoded geoberg scan schema: {e}")))?;
        let schema = Arc::new(Schema::try_from(&schema)?);
        let predicate = match predicate.is_empty() {
            true => None,
            false => {
                let node = protobuf::PhysicalExprNode::decode(predicate).map_err(|e| {
                    DataFusionError::Execution(format!("encoded geoberg scan predicate: {e}"))
                })?;
                Some(parse_physical_expr(&node, ctx, &schema, self)?)
            }
        };
        let parquet = ctx.session_config().options().execution.parquet.clone();
        Ok(Arc::new(GeobergScanExec::try_new(
            spec,
            schema,
            predicate,
            ctx.runtime_env().as_ref(),
            parquet,
        )?))
    }

    fn try_encode(&self, node: Arc<dyn ExecutionPlan>, buf: &mut Vec<u8>) -> Result<()> {
        let Some(scan) = node.downcast_ref::<GeobergScanExec>() else {
            return exec_err!("GeobergPhysicalCodec cannot encode {}", node.name());
        };
        let spec = serde_json::to_vec(scan.spec())
            .map_err(|e| DataFusionError::Execution(format!("encoding geoberg scan: {e}")))?;
        let schema = protobuf::Schema::try_from(scan.table_schema().as_ref())?.encode_to_vec();
        let predicate = match scan.predicate() {
            Some(p) => serialize_physical_expr_with_converter(p, self, &FieldPreservingConverter)?
                .encode_to_vec(),
            None => Vec::new(),
        };
        buf.extend_from_slice(MAGIC);
        for part in [&spec, &schema, &predicate] {
            let len = u32::try_from(part.len()).map_err(|_| {
                DataFusionError::Execution("geoberg scan too large to encode".into())
            })?;
            buf.extend_from_slice(&len.to_le_bytes());
            buf.extend_from_slice(part);
        }
        Ok(())
    }

    /// Reads back the expressions [`FieldPreservingConverter`] wrapped (their field metadata).
    fn try_decode_expr(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn PhysicalExpr>],
    ) -> Result<Arc<dyn PhysicalExpr>> {
        if !is_typed_expr(buf) {
            return exec_err!("GeobergPhysicalCodec cannot decode this expression");
        }
        restore_field(buf, inputs)
    }
}

/// The next length-prefixed part of `rest`.
fn take<'a>(rest: &mut &'a [u8]) -> Result<&'a [u8]> {
    let Some((len, tail)) = rest.split_first_chunk::<4>() else {
        return exec_err!("encoded geoberg scan is truncated");
    };
    let len = u32::from_le_bytes(*len) as usize;
    if tail.len() < len {
        return exec_err!("encoded geoberg scan is truncated");
    }
    let (part, tail) = tail.split_at(len);
    *rest = tail;
    Ok(part)
}
