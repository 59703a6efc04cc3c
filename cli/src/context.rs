//! The open warehouse: catalog, table-name resolution and the output mode.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use geoberg_sql::TableName;
use geoberg_table::{Catalog, GeoColumn, SqliteCatalog, Table, TableIdent};

use crate::args::GlobalArgs;
use crate::error::{CliError, Result};
use crate::output::Output;

/// Whether a command may create the catalog database when it is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads or changes existing tables only: a missing catalog is an error, and nothing is
    /// created on disk.
    Existing,
    /// Creates tables: the warehouse folder and catalog database are created when missing.
    Create,
}

/// A warehouse opened for one command.
#[derive(Debug)]
pub struct Context {
    /// The catalog.
    pub catalog: Arc<SqliteCatalog>,
    /// The catalog name, as `SHOW CREATE TABLE` prints it.
    pub catalog_name: String,
    /// Absolute warehouse folder.
    pub warehouse: PathBuf,
    /// Human or JSON output.
    pub output: Output,
}

impl Context {
    /// Opens the catalog named by the global options.
    pub fn open(args: &GlobalArgs, access: Access) -> Result<Context> {
        let warehouse = absolute(&args.warehouse)?;
        let db = match &args.catalog_db {
            Some(p) => absolute(p)?,
            None => warehouse.join("catalog.db"),
        };
        if access == Access::Existing && !db.is_file() {
            return Err(CliError::NoCatalog { path: db });
        }
        let catalog = SqliteCatalog::open(&db, &args.catalog_name, &warehouse)?;
        Ok(Context {
            catalog: Arc::new(catalog),
            catalog_name: args.catalog_name.clone(),
            warehouse,
            output: Output::new(args.json),
        })
    }

    /// The catalog as the trait object tables hold.
    pub fn dyn_catalog(&self) -> Arc<dyn Catalog> {
        self.catalog.clone()
    }

    /// Resolves a statement's table name: `ns.t`, or `<catalog>.ns.t` naming this catalog.
    pub fn resolve(&self, name: &TableName) -> Result<TableIdent> {
        if let Some(catalog) = name.catalog()
            && catalog != self.catalog_name
        {
            return Err(CliError::invalid(
                "catalog",
                catalog,
                format!(
                    "the open catalog is {:?}; write {}.{} or pass --catalog-name {catalog}",
                    self.catalog_name,
                    name.namespace().unwrap_or_default(),
                    name.name()
                ),
            ));
        }
        let Some(namespace) = name.namespace() else {
            return Err(CliError::invalid(
                "table name",
                name,
                format!("name the namespace too, e.g. db.{}", name.name()),
            ));
        };
        Ok(TableIdent::new(namespace, name.name())?)
    }

    /// Parses a command-line `namespace.table` argument.
    pub fn ident(&self, qualified: &str) -> Result<TableIdent> {
        Ok(TableIdent::parse(qualified)?)
    }

    /// Loads a table by its command-line name.
    pub fn load(&self, qualified: &str) -> Result<Table> {
        let ident = self.ident(qualified)?;
        Ok(Table::load(self.dyn_catalog(), &ident)?)
    }
}

/// The geometry column a command works on: the named one, else the table's first.
pub fn geo_column(table: &Table, name: Option<&str>) -> Result<GeoColumn> {
    match name {
        Some(n) => Ok(table.geo_column(n)?),
        None => table.geo_columns().first().cloned().ok_or_else(|| {
            CliError::invalid(
                "table",
                table.ident(),
                "it has no geometry or geography column; pass --column <binary WKB column>",
            )
        }),
    }
}

/// `path` made absolute against the working directory (the catalog needs absolute paths).
pub fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|e| CliError::io(path, e))
}
