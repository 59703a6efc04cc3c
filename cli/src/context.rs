//! The open warehouse: catalog, table-name resolution and the output mode.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use geoberg_sql::TableName;
use geoberg_table::{Catalog, GeoColumn, Storage, Table, TableIdent, connect_catalog};

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
    pub catalog: Arc<dyn Catalog>,
    /// The catalog name, as `SHOW CREATE TABLE` prints it.
    pub catalog_name: String,
    /// The warehouse location (a `file://` or object-store URI).
    pub warehouse: String,
    /// The warehouse folder, when it is on local disk.
    pub local_warehouse: Option<PathBuf>,
    /// Human or JSON output.
    pub output: Output,
}

impl Context {
    /// Opens the catalog named by the global options.
    pub fn open(args: &GlobalArgs, access: Access) -> Result<Context> {
        let (warehouse, local_warehouse) = warehouse(args)?;
        let uri = match (&args.catalog_uri, &args.catalog_db, &local_warehouse) {
            (Some(uri), _, _) => uri.clone(),
            (None, Some(db), _) => format!("sqlite://{}", absolute(db)?.display()),
            (None, None, Some(dir)) => format!("sqlite://{}", dir.join("catalog.db").display()),
            (None, None, None) => {
                return Err(CliError::invalid(
                    "--warehouse",
                    &args.warehouse,
                    "a warehouse in object storage needs a shared catalog: pass --catalog-uri \
                     postgresql://user@host:port/db (or sqlite:///path/catalog.db)",
                ));
            }
        };
        if let Some(path) = uri.strip_prefix("sqlite://")
            && access == Access::Existing
            && !Path::new(path).is_file()
        {
            return Err(CliError::NoCatalog {
                path: PathBuf::from(path),
            });
        }
        let catalog = connect_catalog(&uri, &args.catalog_name, &warehouse, Storage::new())?;
        Ok(Context {
            catalog,
            catalog_name: args.catalog_name.clone(),
            warehouse,
            local_warehouse,
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

/// The warehouse location as a URI (`file:///abs/dir` for a folder), and the folder when it is
/// on local disk.
pub fn warehouse(args: &GlobalArgs) -> Result<(String, Option<PathBuf>)> {
    let local = if args.warehouse.contains("://") {
        args.warehouse
            .strip_prefix("file://")
            .map(|p| absolute(Path::new(p)))
            .transpose()?
    } else {
        Some(absolute(Path::new(&args.warehouse))?)
    };
    let uri = match &local {
        Some(dir) => format!("file://{}", dir.display()),
        None => args.warehouse.clone(),
    };
    Ok((uri, local))
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
