//! `ALTER TABLE ... ADD COLUMN[S] / DROP COLUMN / RENAME COLUMN / RENAME TO` and `DROP TABLE
//! [IF EXISTS] ... [PURGE]`, run by the table crate.

use std::sync::Arc;

use arrow_array::RecordBatch;
use geoberg_sql::{AlterSchemaRequest, ColumnPlacement, SchemaAlteration, TableName};
use geoberg_table::{Catalog, Column, ColumnPosition, Table};

use crate::error::{Error, Result};
use crate::statement_support::{one_row_of_counts, resolve};

/// `ALTER TABLE t ADD COLUMN[S] / DROP COLUMN / RENAME COLUMN`: one schema change, one commit.
/// Returns the table at its new version (`None`: nothing changed, e.g. `DROP COLUMN IF
/// EXISTS` of a missing column).
pub(crate) fn alter_schema(
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    request: &AlterSchemaRequest,
    notices: &mut Vec<String>,
) -> Result<Option<Table>> {
    let ident = resolve(catalog_name, &request.table)?;
    let table = Table::load(Arc::clone(catalog), &ident)?;
    let mut update = table.update_schema();
    let done = match &request.change {
        SchemaAlteration::AddColumns(columns) => {
            for added in columns {
                let c = &added.column;
                if c.comment.is_some() {
                    return Err(geoberg_table::Error::Schema(format!(
                        "COMMENT on column {}: column comments are not stored yet; remove the \
                         COMMENT clause",
                        c.name
                    ))
                    .into());
                }
                // The table crate checks the CRS against the table's format version.
                let data_type = geoberg_table::declared_type(&c.name, &c.data_type)?;
                let column = Column::new(&c.name, data_type);
                let column = if c.required {
                    column.required()
                } else {
                    column
                };
                let position = match &added.placement {
                    ColumnPlacement::Last => ColumnPosition::Last,
                    ColumnPlacement::First => ColumnPosition::First,
                    ColumnPlacement::After(other) => ColumnPosition::After(other.clone()),
                };
                update = update.add_column(column, position);
            }
            let names: Vec<&str> = columns.iter().map(|c| c.column.name.as_str()).collect();
            format!("added column{} {}", plural(names.len()), names.join(", "))
        }
        SchemaAlteration::DropColumn { column, if_exists } => {
            let exists = table
                .metadata()
                .current_schema()
                .as_struct()
                .fields()
                .iter()
                .any(|f| &f.name == column);
            if !exists && *if_exists {
                notices.push(format!("table {ident} has no column {column}, unchanged"));
                return Ok(None);
            }
            update = update.drop_column(column);
            format!("dropped column {column}")
        }
        SchemaAlteration::RenameColumn { from, to } => {
            update = update.rename_column(from, to);
            format!("renamed column {from} to {to}")
        }
    };
    let table = update.commit()?;
    notices.push(format!(
        "{done} of {ident}; no data file was rewritten (files written before read the new \
         schema by field id)"
    ));
    Ok(Some(table))
}

/// `ALTER TABLE t RENAME TO u`: one atomic catalog update; the files stay where they are.
pub(crate) fn rename_table(
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    table: &TableName,
    to: &TableName,
    notices: &mut Vec<String>,
) -> Result<()> {
    let from = resolve(catalog_name, table)?;
    // Spark's `RENAME TO u` without a namespace keeps the table's namespace.
    let to = match to.namespace() {
        Some(_) => resolve(catalog_name, to)?,
        None => geoberg_table::TableIdent::new(&from.namespace_str(), to.name())?,
    };
    catalog.rename_table(&from, &to)?;
    notices.push(format!(
        "renamed table {from} to {to}; its files stay at their location"
    ));
    Ok(())
}

/// `DROP TABLE [IF EXISTS] t [PURGE]`: the catalog entry goes; with `PURGE`, then every file of
/// the table too (data, delete and metadata files). The result is one row, `deleted_files_count`.
pub(crate) fn drop_table(
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    name: &TableName,
    if_exists: bool,
    purge: bool,
    notices: &mut Vec<String>,
) -> Result<Vec<RecordBatch>> {
    let ident = resolve(catalog_name, name)?;
    let table = match Table::load(Arc::clone(catalog), &ident) {
        Ok(t) => t,
        Err(geoberg_table::Error::NoSuchTable(_)) if if_exists => {
            notices.push(format!("table {ident} does not exist, nothing dropped"));
            return Ok(Vec::new());
        }
        Err(e) => return Err(Error::Table(e)),
    };
    let deleted = table.drop_table(purge)?;
    notices.push(match purge {
        true => format!(
            "dropped table {ident} and purged its files: deleted {} file{}",
            deleted.len(),
            plural(deleted.len())
        ),
        false => format!(
            "dropped table {ident} from the catalog; its data and metadata files stay in the \
             warehouse (DROP TABLE ... PURGE deletes them)"
        ),
    });
    one_row_of_counts(&[("deleted_files_count", deleted.len() as u64)])
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
