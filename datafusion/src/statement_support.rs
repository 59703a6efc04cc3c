//! What every statement runner needs: table names resolved against the session's catalog and
//! loaded, and a procedure's counts as its one result row.

use std::sync::Arc;

use arrow_array::{RecordBatch, UInt64Array};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_sql::TableName;
use geoberg_table::{Catalog, Table, TableIdent};

use crate::error::{Error, Result};

/// `ns.t`, or `<catalog>.ns.t` naming this catalog.
pub(crate) fn resolve(catalog_name: &str, name: &TableName) -> Result<TableIdent> {
    if let Some(catalog) = name.catalog()
        && catalog != catalog_name
    {
        return Err(Error::Invalid {
            what: "catalog",
            value: catalog.to_string(),
            fix: format!(
                "the session's catalog is {catalog_name:?}; write {}.{} or {catalog_name}.{}.{}",
                name.namespace().unwrap_or_default(),
                name.name(),
                name.namespace().unwrap_or_default(),
                name.name()
            ),
        });
    }
    let Some(namespace) = name.namespace() else {
        return Err(Error::Invalid {
            what: "table name",
            value: name.to_string(),
            fix: format!("name the namespace too, e.g. db.{}", name.name()),
        });
    };
    Ok(TableIdent::new(namespace, name.name())?)
}

/// The table `name` names in this catalog, loaded.
pub(crate) fn load(
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    name: &TableName,
) -> Result<Table> {
    Ok(Table::load(
        Arc::clone(catalog),
        &resolve(catalog_name, name)?,
    )?)
}

/// One row of named counts (a procedure's result).
pub(crate) fn one_row_of_counts(counts: &[(&str, u64)]) -> Result<Vec<RecordBatch>> {
    let schema = Schema::new(
        counts
            .iter()
            .map(|(name, _)| Field::new(*name, ArrowType::UInt64, false))
            .collect::<Vec<_>>(),
    );
    let columns = counts
        .iter()
        .map(|(_, v)| Arc::new(UInt64Array::from(vec![*v])) as _)
        .collect();
    Ok(vec![RecordBatch::try_new(Arc::new(schema), columns)?])
}
