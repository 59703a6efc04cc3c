//! How a [`ClusterSpatialJoinExec`] travels from the scheduler to executors: its predicate,
//! filter and join type in protobuf, expressions written with geoberg's
//! [`FieldPreservingConverter`] (a geometry constant keeps its type); its two children are
//! written by DataFusion as any node's.

use std::sync::Arc;

use arrow_schema::Schema;
use datafusion::common::{JoinSide, JoinType, exec_err};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::joins::utils::{ColumnIndex, JoinFilter};
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr};
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf;
use geoberg_datafusion::FieldPreservingConverter;
use prost::Message;
use sedona_spatial_join::SpatialPredicate;
use sedona_spatial_join::spatial_predicate::{
    DistancePredicate, KNNPredicate, RelationPredicate, SpatialRelationType,
};

use crate::spatial_join::ClusterSpatialJoinExec;

/// The encoded join (its children apart).
#[derive(Clone, PartialEq, Message)]
struct SpatialJoinNode {
    /// `protobuf::JoinType`.
    #[prost(int32, tag = "1")]
    join_type: i32,
    #[prost(oneof = "Predicate", tags = "2, 3, 4")]
    predicate: Option<Predicate>,
    #[prost(message, optional, tag = "5")]
    filter: Option<protobuf::JoinFilter>,
}

// Built once per plan sent: the size of a variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, PartialEq, prost::Oneof)]
enum Predicate {
    #[prost(message, tag = "2")]
    Relation(Relation),
    #[prost(message, tag = "3")]
    Distance(Distance),
    #[prost(message, tag = "4")]
    Knn(Knn),
}

#[derive(Clone, PartialEq, Message)]
struct Relation {
    #[prost(message, optional, tag = "1")]
    left: Option<protobuf::PhysicalExprNode>,
    #[prost(message, optional, tag = "2")]
    right: Option<protobuf::PhysicalExprNode>,
    /// SedonaDB's function name, e.g. `st_intersects`.
    #[prost(string, tag = "3")]
    function: String,
}

#[derive(Clone, PartialEq, Message)]
struct Distance {
    #[prost(message, optional, tag = "1")]
    left: Option<protobuf::PhysicalExprNode>,
    #[prost(message, optional, tag = "2")]
    right: Option<protobuf::PhysicalExprNode>,
    #[prost(message, optional, tag = "3")]
    distance: Option<protobuf::PhysicalExprNode>,
    /// `protobuf::JoinSide` of the distance expression.
    #[prost(int32, tag = "4")]
    distance_side: i32,
}

#[derive(Clone, PartialEq, Message)]
struct Knn {
    #[prost(message, optional, tag = "1")]
    left: Option<protobuf::PhysicalExprNode>,
    #[prost(message, optional, tag = "2")]
    right: Option<protobuf::PhysicalExprNode>,
    #[prost(uint32, tag = "3")]
    k: u32,
    #[prost(bool, tag = "4")]
    use_spheroid: bool,
    /// `protobuf::JoinSide` of the probe side.
    #[prost(int32, tag = "5")]
    probe_side: i32,
}

/// `join` without its children, in protobuf.
pub fn encode_spatial_join(
    join: &ClusterSpatialJoinExec,
    codec: &dyn PhysicalExtensionCodec,
) -> Result<Vec<u8>> {
    let expr = |e: &Arc<dyn PhysicalExpr>| {
        FieldPreservingConverter
            .physical_expr_to_proto(e, codec)
            .map(Some)
    };
    let side = |s: JoinSide| protobuf::JoinSide::from(s) as i32;
    let predicate = match join.on() {
        SpatialPredicate::Relation(r) => Predicate::Relation(Relation {
            left: expr(&r.left)?,
            right: expr(&r.right)?,
            function: format!("st_{}", r.relation_type),
        }),
        SpatialPredicate::Distance(d) => Predicate::Distance(Distance {
            left: expr(&d.left)?,
            right: expr(&d.right)?,
            distance: expr(&d.distance)?,
            distance_side: side(d.distance_side),
        }),
        SpatialPredicate::KNearestNeighbors(k) => Predicate::Knn(Knn {
            left: expr(&k.left)?,
            right: expr(&k.right)?,
            k: k.k,
            use_spheroid: k.use_spheroid,
            probe_side: side(k.probe_side),
        }),
    };
    let filter = join
        .filter()
        .map(|f| -> Result<protobuf::JoinFilter> {
            Ok(protobuf::JoinFilter {
                expression: expr(f.expression())?,
                column_indices: f
                    .column_indices()
                    .iter()
                    .map(|c| protobuf::ColumnIndex {
                        index: c.index as u32,
                        side: side(c.side),
                    })
                    .collect(),
                schema: Some(f.schema().as_ref().try_into()?),
            })
        })
        .transpose()?;
    Ok(SpatialJoinNode {
        join_type: protobuf::JoinType::from(join.join_type()) as i32,
        predicate: Some(predicate),
        filter,
    }
    .encode_to_vec())
}

/// The join [`encode_spatial_join`] wrote, over `children` (left, right).
pub fn decode_spatial_join(
    encoded: &[u8],
    children: &[Arc<dyn ExecutionPlan>],
    ctx: &TaskContext,
    codec: &dyn PhysicalExtensionCodec,
) -> Result<ClusterSpatialJoinExec> {
    let invalid = |what: &str| DataFusionError::Execution(format!("encoded spatial join: {what}"));
    let node = SpatialJoinNode::decode(encoded).map_err(|e| invalid(&e.to_string()))?;
    let [left, right] = children else {
        return exec_err!("encoded spatial join: {} children, not 2", children.len());
    };
    let decode = PhysicalPlanDecodeContext::new(ctx, codec);
    let expr = |e: &Option<protobuf::PhysicalExprNode>, schema: &Schema| {
        let Some(e) = e else {
            return Err(invalid("an expression is missing"));
        };
        FieldPreservingConverter.proto_to_physical_expr(e, schema, &decode)
    };
    let side = |s: i32| -> Result<JoinSide> {
        protobuf::JoinSide::try_from(s)
            .map(JoinSide::from)
            .map_err(|_| invalid(&format!("join side {s}")))
    };
    let (left_schema, right_schema) = (left.schema(), right.schema());
    let on = match &node.predicate {
        Some(Predicate::Relation(r)) => {
            let Some(relation_type) = SpatialRelationType::from_name(&r.function) else {
                return Err(invalid(&format!("relation {:?}", r.function)));
            };
            SpatialPredicate::Relation(RelationPredicate {
                left: expr(&r.left, &left_schema)?,
                right: expr(&r.right, &right_schema)?,
                relation_type,
            })
        }
        Some(Predicate::Distance(d)) => {
            let distance_side = side(d.distance_side)?;
            let distance_schema = match distance_side {
                JoinSide::Right => &right_schema,
                _ => &left_schema,
            };
            SpatialPredicate::Distance(DistancePredicate::new(
                expr(&d.left, &left_schema)?,
                expr(&d.right, &right_schema)?,
                expr(&d.distance, distance_schema)?,
                distance_side,
            ))
        }
        Some(Predicate::Knn(k)) => {
            let probe_side = side(k.probe_side)?;
            if probe_side == JoinSide::None {
                return Err(invalid("a KNN join without a probe side"));
            }
            SpatialPredicate::KNearestNeighbors(KNNPredicate::new(
                expr(&k.left, &left_schema)?,
                expr(&k.right, &right_schema)?,
                k.k,
                k.use_spheroid,
                probe_side,
            ))
        }
        None => return Err(invalid("no predicate")),
    };
    let filter = node
        .filter
        .as_ref()
        .map(|f| -> Result<JoinFilter> {
            let Some(schema) = &f.schema else {
                return Err(invalid("a filter without its schema"));
            };
            let schema = Arc::new(Schema::try_from(schema)?);
            let expression = expr(&f.expression, &schema)?;
            let columns = f
                .column_indices
                .iter()
                .map(|c| {
                    Ok(ColumnIndex {
                        index: c.index as usize,
                        side: side(c.side)?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(JoinFilter::new(expression, columns, schema))
        })
        .transpose()?;
    let join_type = protobuf::JoinType::try_from(node.join_type)
        .map(JoinType::from)
        .map_err(|_| invalid(&format!("join type {}", node.join_type)))?;
    ClusterSpatialJoinExec::try_new(Arc::clone(left), Arc::clone(right), on, filter, join_type)
}
