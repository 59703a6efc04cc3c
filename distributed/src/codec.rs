//! The codecs of a geoberg cluster: Ballista's own nodes and file formats, geoberg's tables and
//! scan node, and geoberg's typed expressions, told apart by a leading tag byte.

use std::sync::Arc;

use arrow_schema::SchemaRef;
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::common::{TableReference, exec_err, plan_err};
use datafusion::datasource::TableProvider;
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use geoberg_datafusion::{
    GeobergCatalogProvider, GeobergPhysicalCodec, GeobergScanExec, GeobergTableProvider,
};
use geoberg_table::TableIdent;

use crate::keep_fields::KeepFieldsExec;
use crate::rewrite_tasks::{RewriteTasks, RewriteTasksExec, RewriteTasksTable};
use crate::spatial_join::ClusterSpatialJoinExec;
use crate::spatial_join_codec::{decode_spatial_join, encode_spatial_join};

/// Tag of what Ballista's codecs encoded.
const BALLISTA: u8 = b'B';
/// Tag of what geoberg's codecs encoded.
const GEOBERG: u8 = b'G';
/// Tag of a node written with its fields kept ([`KeepFieldsExec`]).
const KEEP_FIELDS: u8 = b'T';
/// Tag of a rewrite's tasks ([`RewriteTasksTable`], [`RewriteTasksExec`]).
const REWRITE: u8 = b'R';
/// Tag of a spatial join ([`ClusterSpatialJoinExec`]).
const SPATIAL_JOIN: u8 = b'J';
/// geoberg's version, written after the tag of every geoberg node: a process of another
/// version refuses the node by name instead of misreading it.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Writes [`VERSION`], length-prefixed.
fn write_version(buf: &mut Vec<u8>) {
    buf.push(VERSION.len() as u8);
    buf.extend_from_slice(VERSION.as_bytes());
}

/// The bytes after the version `rest` starts with, if it is this process's.
fn check_version(rest: &[u8]) -> Result<&[u8]> {
    let Some((&len, rest)) = rest.split_first() else {
        return exec_err!("encoded geoberg node is truncated");
    };
    let Some((version, rest)) = rest.split_at_checked(len as usize) else {
        return exec_err!("encoded geoberg node is truncated");
    };
    if version != VERSION.as_bytes() {
        return exec_err!(
            "this plan was made by geoberg {} and this process runs geoberg {VERSION}: run the \
             same geoberg version on the scheduler and every executor",
            String::from_utf8_lossy(version)
        );
    }
    Ok(rest)
}

/// Logical plans from a client to the scheduler: a geoberg table travels as its name and is
/// opened again from the scheduler's catalog (its current version, as a local query reads it); a
/// rewrite's tasks travel whole ([`RewriteTasksTable`]); everything else is Ballista's.
#[derive(Debug, Default)]
pub struct GeobergLogicalCodec {
    ballista: BallistaLogicalExtensionCodec,
    tables: Option<GeobergCatalogProvider>,
}

impl GeobergLogicalCodec {
    /// A codec that encodes only (a client).
    pub fn client() -> GeobergLogicalCodec {
        GeobergLogicalCodec::default()
    }

    /// A codec that also decodes geoberg tables, from `tables` (the scheduler).
    pub fn with_tables(tables: GeobergCatalogProvider) -> GeobergLogicalCodec {
        GeobergLogicalCodec {
            ballista: BallistaLogicalExtensionCodec::default(),
            tables: Some(tables),
        }
    }
}

impl LogicalExtensionCodec for GeobergLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.ballista.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.ballista.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        match buf.split_first() {
            Some((&GEOBERG, name)) => {
                let Some(tables) = &self.tables else {
                    return plan_err!(
                        "table {table_ref} is a geoberg table, and this process has no geoberg \
                         catalog to open it from; plans with geoberg tables are decoded by a \
                         scheduler started with `geoberg cluster scheduler`"
                    );
                };
                let name = std::str::from_utf8(name)
                    .map_err(|e| DataFusionError::Plan(format!("encoded geoberg table: {e}")))?;
                let ident = TableIdent::parse(name)
                    .map_err(|e| DataFusionError::Plan(format!("encoded geoberg table: {e}")))?;
                let provider = tables
                    .table(&ident)
                    .map_err(|e| DataFusionError::Plan(e.to_string()))?;
                Ok(Arc::new(provider))
            }
            Some((&REWRITE, rest)) => Ok(Arc::new(RewriteTasksTable::new(RewriteTasks::decode(
                check_version(rest)?,
            )?))),
            Some((&BALLISTA, rest)) => self
                .ballista
                .try_decode_table_provider(rest, table_ref, schema, ctx),
            _ => plan_err!("encoded table {table_ref} has no geoberg codec tag"),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        if let Some(table) = node.downcast_ref::<GeobergTableProvider>() {
            buf.push(GEOBERG);
            buf.extend_from_slice(table.ident().to_string().as_bytes());
            return Ok(());
        }
        if let Some(rewrite) = node.downcast_ref::<RewriteTasksTable>() {
            buf.push(REWRITE);
            write_version(buf);
            buf.extend(rewrite.tasks().encode()?);
            return Ok(());
        }
        buf.push(BALLISTA);
        self.ballista
            .try_encode_table_provider(table_ref, node, buf)
            .map_err(|e| {
                DataFusionError::Plan(format!(
                    "table {table_ref} cannot be sent to the scheduler ({e}); a distributed \
                     query reads geoberg tables and files (Parquet, CSV, JSON) only: run it \
                     without --scheduler"
                ))
            })
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.ballista.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.ballista.try_encode_file_format(buf, node)
    }
}

/// Physical plans from the scheduler to executors: Ballista's shuffle nodes, geoberg's scan
/// node, a rewrite's tasks ([`RewriteTasksExec`]), spatial joins
/// ([`ClusterSpatialJoinExec`]), nodes whose fields must be kept
/// ([`KeepFieldsExec`]) and typed expressions; any other
/// extension node is refused with its name.
#[derive(Debug, Default)]
pub struct GeobergClusterCodec {
    ballista: BallistaPhysicalExtensionCodec,
    geoberg: GeobergPhysicalCodec,
}

impl PhysicalExtensionCodec for GeobergClusterCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match buf.split_first() {
            Some((&GEOBERG, rest)) => self.geoberg.try_decode(check_version(rest)?, inputs, ctx),
            Some((&KEEP_FIELDS, rest)) => {
                KeepFieldsExec::decode_node(check_version(rest)?, inputs, ctx, self)
            }
            Some((&REWRITE, rest)) => Ok(Arc::new(RewriteTasksExec::new(Arc::new(
                RewriteTasks::decode(check_version(rest)?)?,
            )))),
            Some((&SPATIAL_JOIN, rest)) => Ok(Arc::new(decode_spatial_join(
                check_version(rest)?,
                inputs,
                ctx,
                self,
            )?)),
            Some((&BALLISTA, rest)) => self.ballista.try_decode(rest, inputs, ctx),
            _ => exec_err!("encoded plan node has no geoberg codec tag"),
        }
    }

    fn try_encode(&self, node: Arc<dyn ExecutionPlan>, buf: &mut Vec<u8>) -> Result<()> {
        if node.downcast_ref::<GeobergScanExec>().is_some() {
            buf.push(GEOBERG);
            write_version(buf);
            return self.geoberg.try_encode(node, buf);
        }
        if let Some(rewrite) = node.downcast_ref::<RewriteTasksExec>() {
            buf.push(REWRITE);
            write_version(buf);
            buf.extend(rewrite.tasks().encode()?);
            return Ok(());
        }
        if let Some(join) = node.downcast_ref::<ClusterSpatialJoinExec>() {
            buf.push(SPATIAL_JOIN);
            write_version(buf);
            buf.extend(encode_spatial_join(join, self)?);
            return Ok(());
        }
        if let Some(keep) = node.downcast_ref::<KeepFieldsExec>() {
            buf.push(KEEP_FIELDS);
            write_version(buf);
            buf.extend(keep.encode_node(self)?);
            return Ok(());
        }
        let name = node.name().to_string();
        buf.push(BALLISTA);
        self.ballista.try_encode(node, buf).map_err(|e| {
            DataFusionError::Plan(format!(
                "the plan node {name} cannot be sent to an executor ({e}); geoberg distributes \
                 scans, filters, projections, aggregates, sorts, hash joins and spatial joins: \
                 run this query without --scheduler"
            ))
        })
    }

    fn try_decode_expr(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn PhysicalExpr>],
    ) -> Result<Arc<dyn PhysicalExpr>> {
        self.geoberg.try_decode_expr(buf, inputs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_of_another_version_is_refused_by_name() {
        let mut buf = Vec::new();
        write_version(&mut buf);
        buf.extend_from_slice(b"rest");
        assert_eq!(check_version(&buf).unwrap(), b"rest");
        let other = [&[5u8][..], b"0.0.9", b"rest"].concat();
        let e = check_version(&other).unwrap_err().to_string();
        assert!(
            e.contains("geoberg 0.0.9") && e.contains("same geoberg version"),
            "{e}"
        );
        assert!(check_version(&[9, b'x']).is_err());
        assert!(check_version(&[]).is_err());
    }
}
