//! `INSERT OVERWRITE [TABLE] t PARTITION (c = v, ...) <query>`: Spark's static partition
//! overwrite, which DataFusion does not plan. The query supplies the other columns in table
//! order; the named identity partition is replaced in one commit by its rows, and emptied when
//! there are none (`Table::overwrite_partition`).

use std::sync::Arc;

use arrow_array::RecordBatch;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{Statement, TableObject};
use geoberg_sql::{CompareOp, Literal, Predicate};
use geoberg_table::{Catalog, Table};
use iceberg::spec::{PrimitiveType, Type};

use crate::error::{Error, Result};
use crate::insert::label_batches;
use crate::row_change::geoberg_ident;
use crate::statement_support::one_row_of_counts;

/// Runs `statement` when it is a static partition overwrite of a geoberg table; `None` for
/// every other statement.
pub(crate) async fn run(
    ctx: &SessionContext,
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    statement: &Statement,
) -> Result<Option<Vec<RecordBatch>>> {
    let Statement::Insert(insert) = statement else {
        return Ok(None);
    };
    let (true, Some(partition)) = (insert.overwrite, &insert.partitioned) else {
        return Ok(None);
    };
    let TableObject::TableName(name) = &insert.table else {
        return Ok(None);
    };
    let Some(ident) = geoberg_ident(name, catalog_name) else {
        return Ok(None);
    };
    let invalid = |fix: &str| Error::Invalid {
        what: "INSERT OVERWRITE ... PARTITION",
        value: statement.to_string(),
        fix: fix.to_string(),
    };
    if !insert.columns.is_empty() {
        return Err(invalid(
            "with a static PARTITION the query gives the other columns in table order; remove \
             the column list",
        ));
    }
    let Some(source) = &insert.source else {
        return Err(invalid("give the rows as a query or VALUES"));
    };
    let text: Vec<String> = partition.iter().map(ToString::to_string).collect();
    let condition = geoberg_sql::parse_condition(&text.join(" AND ")).map_err(|e| {
        invalid(&format!(
            "PARTITION takes column = value pairs ({e}); without values, leave PARTITION out to \
             replace the partitions the rows fall in"
        ))
    })?;
    let values = equalities(&condition).ok_or_else(|| {
        invalid(
            "PARTITION takes column = value pairs; without values, leave PARTITION out to \
             replace the partitions the rows fall in",
        )
    })?;
    let catalog_for_load = Arc::clone(catalog);
    let load_ident = ident.clone();
    let table = tokio::task::spawn_blocking(move || Table::load(catalog_for_load, &load_ident))
        .await
        .map_err(|e| invalid(&format!("it stopped unexpectedly ({e}); run it again")))??;

    // The query's columns, named after the table's non-static columns, then the static values
    // in their columns, in the table's order.
    let fields = table
        .metadata()
        .current_schema()
        .as_struct()
        .fields()
        .to_vec();
    let is_static = |c: &str| values.iter().any(|(s, _)| s.eq_ignore_ascii_case(c));
    let quote = |c: &str| format!("\"{}\"", c.replace('"', "\"\""));
    let free: Vec<String> = fields
        .iter()
        .filter(|f| !is_static(&f.name))
        .map(|f| quote(&f.name))
        .collect();
    let select: Vec<String> = fields
        .iter()
        .map(
            |f| match values.iter().find(|(s, _)| s.eq_ignore_ascii_case(&f.name)) {
                Some((_, v)) => format!("{} AS {}", sql_value(v, &f.field_type), quote(&f.name)),
                None => format!("__geoberg_rows.{}", quote(&f.name)),
            },
        )
        .collect();
    let query = format!(
        "SELECT {} FROM ({source}) AS __geoberg_rows({})",
        select.join(", "),
        free.join(", ")
    );
    let batches = ctx.sql(&query).await?.collect().await?;
    let rows: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
    tokio::task::spawn_blocking(move || {
        let labelled = label_batches(&table, &batches)?;
        table.overwrite_partition(&values, &labelled)
    })
    .await
    .map_err(|e| invalid(&format!("it stopped unexpectedly ({e}); run it again")))??;
    Ok(Some(one_row_of_counts(&[("count", rows)])?))
}

/// `c1 = v1 AND c2 = v2 ...` as its pairs; `None` for any other condition.
fn equalities(condition: &Predicate) -> Option<Vec<(String, Literal)>> {
    match condition {
        Predicate::Compare {
            column,
            op: CompareOp::Eq,
            value,
        } => Some(vec![(column.clone(), value.clone())]),
        Predicate::And(parts) => {
            let mut out = Vec::new();
            for p in parts {
                out.extend(equalities(p)?);
            }
            Some(out)
        }
        _ => None,
    }
}

/// A static value as SQL of the column's type (strings cast, so that a date or timestamp
/// partition takes `'2026-12-01'`).
fn sql_value(value: &Literal, ty: &Type) -> String {
    let literal = match value {
        Literal::String(s) => format!("'{}'", s.replace('\'', "''")),
        other => other.to_string(),
    };
    let cast = match ty {
        Type::Primitive(PrimitiveType::Date) => Some("DATE"),
        Type::Primitive(PrimitiveType::Timestamp) => Some("TIMESTAMP"),
        Type::Primitive(PrimitiveType::Int) => Some("INT"),
        Type::Primitive(PrimitiveType::Long) => Some("BIGINT"),
        Type::Primitive(PrimitiveType::String) => Some("VARCHAR"),
        _ => None,
    };
    match cast {
        Some(t) => format!("CAST({literal} AS {t})"),
        None => literal,
    }
}
