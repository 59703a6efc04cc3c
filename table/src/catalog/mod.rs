//! Catalogs: where a table's current metadata pointer lives, and the compare-and-swap on it.

mod memory;
mod postgres;
mod sqlite;

use std::path::Path;

pub use memory::MemoryCatalog;
pub use postgres::PostgresCatalog;
pub use sqlite::SqliteCatalog;

use crate::error::{Error, Result};
use crate::ident::TableIdent;
use crate::storage::{Storage, join, normalize_location, parse_location};

/// The pointer store behind tables.
///
/// A catalog only maps names to the location of the current metadata file; all table state is in
/// files. `swap_metadata_location` is the single atomic step of every commit.
pub trait Catalog: Send + Sync + std::fmt::Debug {
    /// Catalog name (rows of the SQL catalog are keyed by it).
    fn name(&self) -> &str;
    /// Root location under which new tables are placed (`<warehouse>/<ns>/<table>`): a URI
    /// such as `file:///data/warehouse` or `s3://bucket/prefix`.
    fn warehouse(&self) -> &str;
    /// Creates a namespace; creating an existing one is not an error.
    fn create_namespace(&self, namespace: &str) -> Result<()>;
    /// True if the namespace exists.
    fn namespace_exists(&self, namespace: &str) -> Result<bool>;
    /// All namespaces, dot-joined, sorted.
    fn list_namespaces(&self) -> Result<Vec<String>>;
    /// Tables of a namespace, sorted.
    fn list_tables(&self, namespace: &str) -> Result<Vec<TableIdent>>;
    /// Current metadata location of a table, `None` if there is no such table.
    fn metadata_location(&self, table: &TableIdent) -> Result<Option<String>>;
    /// Adds a table pointing at its first metadata file; fails if the name is taken.
    fn register_table(&self, table: &TableIdent, metadata_location: &str) -> Result<()>;
    /// Atomically replaces `expected` with `new`; [`Error::CommitConflict`] if the pointer moved.
    fn swap_metadata_location(&self, table: &TableIdent, expected: &str, new: &str) -> Result<()>;
    /// Removes the table from the catalog (files are left alone); false if it did not exist.
    fn drop_table(&self, table: &TableIdent) -> Result<bool>;
    /// Renames a table in one atomic step (`ALTER TABLE t RENAME TO u`): its files stay where
    /// they are. [`Error::NoSuchTable`] if `from` does not exist, [`Error::NoSuchNamespace`] if
    /// `to`'s namespace does not, [`Error::TableAlreadyExists`] if `to` is taken.
    fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()>;
    /// Where tables of this catalog read and write their files. Wrappers return a layered
    /// storage to observe or fail single steps.
    fn storage(&self) -> &Storage;
}

/// Opens the catalog a URI names, placing new tables under `warehouse` (a path or an
/// object-store URI) and reading and writing table files through `storage`:
///
/// | URI | catalog |
/// |---|---|
/// | `sqlite:///abs/path/catalog.db`, or a plain path | [`SqliteCatalog`] (created if missing) |
/// | `postgresql://user[:password]@host:port/db` (`postgres://`) | [`PostgresCatalog`] |
/// | `memory:` | [`MemoryCatalog`] (this process only) |
///
/// Both SQL catalogs use the JDBC / pyiceberg `SqlCatalog` layout, so Java, pyiceberg and DuckDB
/// open the same catalog.
pub fn connect_catalog(
    uri: &str,
    name: &str,
    warehouse: &str,
    storage: Storage,
) -> Result<std::sync::Arc<dyn Catalog>> {
    let uri = uri.trim();
    let warehouse = Path::new(warehouse);
    if uri.starts_with("postgresql://") || uri.starts_with("postgres://") {
        return Ok(std::sync::Arc::new(
            PostgresCatalog::connect(uri, name, warehouse)?.with_storage(storage),
        ));
    }
    if uri == "memory:" || uri == "memory://" {
        return Ok(std::sync::Arc::new(
            MemoryCatalog::new(name, warehouse)?.with_storage(storage),
        ));
    }
    let path = match uri.strip_prefix("sqlite://") {
        // sqlite:///abs/path (three slashes: an absolute path), sqlite://relative/path.
        Some(rest) => rest,
        None if uri.contains("://") => {
            return Err(Error::InvalidLocation {
                location: uri.to_string(),
                reason: "unknown catalog URI; use sqlite:///path/catalog.db or \
                         postgresql://user@host:port/database"
                    .into(),
            });
        }
        None => uri.strip_prefix("sqlite:").unwrap_or(uri),
    };
    Ok(std::sync::Arc::new(
        SqliteCatalog::open(path, name, warehouse)?.with_storage(storage),
    ))
}

/// The tables of the JDBC / pyiceberg SQL catalog, as both SQL catalogs create them.
pub(crate) const SQL_CATALOG_DDL: &str = "
CREATE TABLE IF NOT EXISTS iceberg_tables (
    catalog_name VARCHAR(255) NOT NULL,
    table_namespace VARCHAR(255) NOT NULL,
    table_name VARCHAR(255) NOT NULL,
    metadata_location VARCHAR(1000),
    previous_metadata_location VARCHAR(1000),
    iceberg_type VARCHAR(5),
    PRIMARY KEY (catalog_name, table_namespace, table_name)
);
CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
    catalog_name VARCHAR(255) NOT NULL,
    namespace VARCHAR(255) NOT NULL,
    property_key VARCHAR(255) NOT NULL,
    property_value VARCHAR(1000) NOT NULL,
    PRIMARY KEY (catalog_name, namespace, property_key)
);";

/// Default location of a new table: `<warehouse>/<ns levels>/<table>`.
pub(crate) fn default_table_location(warehouse: &str, table: &TableIdent) -> String {
    let mut location = warehouse.trim_end_matches('/').to_string();
    for part in table
        .namespace()
        .iter()
        .map(String::as_str)
        .chain([table.name()])
    {
        location = join(&location, part);
    }
    location
}

/// The warehouse root as a location URI: an absolute path (or `file://` URI) or an object-store
/// URI (`s3://bucket/prefix`, `gs://`, `az://`); rejects relative paths and `..`.
pub(crate) fn validate_warehouse(warehouse: &Path) -> Result<String> {
    let text = warehouse.to_string_lossy();
    let location = normalize_location(&text).map_err(|_| Error::InvalidLocation {
        location: text.to_string(),
        reason: "the warehouse must be an absolute path, a file:// URI or an object-store URI \
                 such as s3://bucket/prefix"
            .into(),
    })?;
    parse_location(&location)?;
    Ok(location.trim_end_matches('/').to_string())
}

fn conflict(table: &TableIdent, expected: &str, found: Option<String>) -> Error {
    Error::CommitConflict {
        table: table.to_string(),
        expected: expected.to_string(),
        found: found.unwrap_or_else(|| "<none>".into()),
    }
}
