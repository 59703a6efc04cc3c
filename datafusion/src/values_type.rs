//! `INSERT INTO t VALUES (..., ST_SetSRID(ST_Point(1, 2), 4326))`: DataFusion 54 types a
//! `VALUES` list from its expressions' data types alone, so the CRS SedonaDB attaches to a
//! geometry value (field metadata) is lost before the rows reach the table, and every value
//! would look unlabelled. This analyzer rule gives each `VALUES` column the field metadata
//! its expressions agree on (the CRS of `ST_SetSRID(.., 4326)`), and retypes the plan above.
//! Rows that disagree keep no metadata, so a mixed-CRS `VALUES` is refused by the table's
//! SRID check rather than relabelled; a `NULL` row agrees with any.

use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, TableReference};
use datafusion::error::Result;
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan, Values};
use datafusion::optimizer::AnalyzerRule;

/// The analyzer rule described in the module docs.
#[derive(Debug, Default)]
pub struct ValuesGeometryType;

impl AnalyzerRule for ValuesGeometryType {
    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(|node| {
            let LogicalPlan::Values(values) = node else {
                // A parent of a retyped VALUES list takes its new schema.
                return Ok(Transformed::no(node));
            };
            match typed(&values)? {
                Some(schema) => Ok(Transformed::yes(LogicalPlan::Values(Values {
                    schema: Arc::new(schema),
                    values: values.values,
                }))),
                None => Ok(Transformed::no(LogicalPlan::Values(values))),
            }
        })
        .and_then(|t| match t.transformed {
            true => retype(t.data),
            false => Ok(t.data),
        })
    }

    fn name(&self) -> &str {
        "geoberg_values_geometry_type"
    }
}

/// The schema of `values` with the metadata every row's expression gives each column, if
/// that changes anything.
fn typed(values: &Values) -> Result<Option<DFSchema>> {
    let empty = DFSchema::empty();
    let mut changed = false;
    let mut fields: Vec<(Option<TableReference>, Arc<arrow_schema::Field>)> = Vec::new();
    for (column, (qualifier, field)) in values.schema.iter().enumerate() {
        let mut agreed = None;
        let mut consistent = true;
        for row in &values.values {
            let Some(expr) = row.get(column) else {
                consistent = false;
                break;
            };
            if is_null_literal(expr) {
                continue; // a NULL has no CRS to disagree with
            }
            let Ok((_, f)) = expr.to_field(&empty) else {
                consistent = false;
                break;
            };
            match &agreed {
                None => agreed = Some(f.metadata().clone()),
                Some(m) if m == f.metadata() => {}
                Some(_) => {
                    consistent = false;
                    break;
                }
            }
        }
        let field = match agreed {
            Some(metadata)
                if consistent && !metadata.is_empty() && metadata != *field.metadata() =>
            {
                changed = true;
                Arc::new(field.as_ref().clone().with_metadata(metadata))
            }
            _ => Arc::clone(field),
        };
        fields.push((qualifier.cloned(), field));
    }
    if !changed {
        return Ok(None);
    }
    Ok(Some(DFSchema::new_with_metadata(
        fields,
        values.schema.metadata().clone(),
    )?))
}

/// `NULL`, possibly cast (`CAST(NULL AS BINARY)`, as type coercion writes it).
fn is_null_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Literal(value, _) => value.is_null(),
        Expr::Cast(cast) => is_null_literal(&cast.expr),
        Expr::TryCast(cast) => is_null_literal(&cast.expr),
        _ => false,
    }
}

/// Recomputes the schemas of every node above a retyped `VALUES`.
fn retype(plan: LogicalPlan) -> Result<LogicalPlan> {
    plan.transform_up_with_subqueries(|node| {
        if matches!(node, LogicalPlan::Values(_)) || node.inputs().is_empty() {
            return Ok(Transformed::no(node));
        }
        let before = Arc::clone(node.schema());
        let node = node.recompute_schema()?;
        let changed = node.schema() != &before;
        Ok(Transformed::new_transformed(node, changed))
    })
    .map(|t| t.data)
}
