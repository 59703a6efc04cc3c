//! Data files matched to the table's current schema by Iceberg field id, not by name: a file
//! written before `ALTER TABLE ... RENAME COLUMN` holds the column under its old name, and a
//! file written before a column was dropped and a new one added under the same name holds the
//! old column's values under the new column's name (spec: "Column Projection" — columns are
//! resolved by field id).
//!
//! DataFusion's Parquet reader resolves columns by name through a
//! [`PhysicalExprAdapterFactory`]. This one renames each file column to the current name of its
//! field id (a dropped field to a name no table column has) before DataFusion's default adapter
//! resolves the projection and the predicate, then points the resolved columns back at the
//! file's own names, so that the reader's statistics and projection see the file as it is.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{Field, Schema, SchemaRef};
use datafusion::common::tree_node::{Transformed, TransformedResult, TreeNode};
use datafusion::error::Result;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_expr_adapter::{
    DefaultPhysicalExprAdapterFactory, PhysicalExprAdapter, PhysicalExprAdapterFactory,
};
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;

/// Resolves file columns by field id against the current names `names` (field id → name).
#[derive(Debug, Clone)]
pub(crate) struct FieldIdAdapterFactory {
    names: HashMap<i32, String>,
}

impl FieldIdAdapterFactory {
    /// For a table schema whose columns have these field ids, in order.
    pub(crate) fn new(schema: &Schema, field_ids: &[i32]) -> Self {
        let names = schema
            .fields()
            .iter()
            .zip(field_ids)
            .map(|(f, id)| (*id, f.name().clone()))
            .collect();
        FieldIdAdapterFactory { names }
    }

    /// The file schema with every column under its field id's current name; `None` when that
    /// changes nothing (no column renamed or dropped, or a file without field ids).
    fn renamed(&self, physical: &Schema) -> Option<Schema> {
        let mut changed = false;
        let fields: Vec<Field> = physical
            .fields()
            .iter()
            .map(|f| {
                let Some(id) = f
                    .metadata()
                    .get(PARQUET_FIELD_ID_META_KEY)
                    .and_then(|v| v.parse::<i32>().ok())
                else {
                    return f.as_ref().clone();
                };
                let name = match self.names.get(&id) {
                    Some(n) => n.clone(),
                    // Not in the current schema: a name no table column has.
                    None => format!("\u{0}geoberg dropped field {id}"),
                };
                changed |= &name != f.name();
                f.as_ref().clone().with_name(name)
            })
            .collect();
        changed.then(|| Schema::new_with_metadata(fields, physical.metadata().clone()))
    }
}

impl PhysicalExprAdapterFactory for FieldIdAdapterFactory {
    fn create(
        &self,
        logical_file_schema: SchemaRef,
        physical_file_schema: SchemaRef,
    ) -> Result<Arc<dyn PhysicalExprAdapter>> {
        let Some(renamed) = self.renamed(&physical_file_schema) else {
            return DefaultPhysicalExprAdapterFactory
                .create(logical_file_schema, physical_file_schema);
        };
        let inner =
            DefaultPhysicalExprAdapterFactory.create(logical_file_schema, Arc::new(renamed))?;
        Ok(Arc::new(FieldIdAdapter {
            inner,
            physical: physical_file_schema,
        }))
    }
}

/// DataFusion's default adapter over the renamed file schema, with column references put back
/// on the file's own names (same indices).
#[derive(Debug)]
struct FieldIdAdapter {
    inner: Arc<dyn PhysicalExprAdapter>,
    physical: SchemaRef,
}

impl PhysicalExprAdapter for FieldIdAdapter {
    fn rewrite(&self, expr: Arc<dyn PhysicalExpr>) -> Result<Arc<dyn PhysicalExpr>> {
        let resolved = self.inner.rewrite(expr)?;
        resolved
            .transform(|node| {
                let Some(column) = node.downcast_ref::<Column>() else {
                    return Ok(Transformed::no(node));
                };
                match self.physical.fields().get(column.index()) {
                    Some(f) if f.name() != column.name() => Ok(Transformed::yes(Arc::new(
                        Column::new(f.name(), column.index()),
                    )
                        as Arc<dyn PhysicalExpr>)),
                    _ => Ok(Transformed::no(node)),
                }
            })
            .data()
    }
}
