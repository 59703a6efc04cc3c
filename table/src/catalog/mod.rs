//! Catalogs: where a table's current metadata pointer lives, and the compare-and-swap on it.

mod memory;
mod postgres;
mod sqlite;

use std::path::{Path, PathBuf};

pub use memory::MemoryCatalog;
pub use postgres::PostgresCatalog;
pub use sqlite::SqliteCatalog;

use crate::error::{Error, Result};
use crate::ident::TableIdent;
use crate::storage::{LocalStorage, Storage};

/// The pointer store behind tables.
///
/// A catalog only maps names to the location of the current metadata file; all table state is in
/// files. `swap_metadata_location` is the single atomic step of every commit.
pub trait Catalog: Send + Sync + std::fmt::Debug {
    /// Catalog name (rows of the SQL catalog are keyed by it).
    fn name(&self) -> &str;
    /// Root directory under which new tables are placed (`<warehouse>/<ns>/<table>`).
    fn warehouse(&self) -> &Path;
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
    /// Where tables of this catalog write, link and delete files (default: the local
    /// filesystem). Wrappers override it to observe or fail single steps.
    fn storage(&self) -> &dyn Storage {
        &LocalStorage
    }
}

/// Default location of a new table: `<warehouse>/<ns levels>/<table>`.
pub(crate) fn default_table_location(warehouse: &Path, table: &TableIdent) -> PathBuf {
    let mut p = warehouse.to_path_buf();
    p.extend(table.namespace());
    p.push(table.name());
    p
}

/// Absolute, normalised warehouse root; rejects relative paths and `..` components.
pub(crate) fn validate_warehouse(warehouse: &Path) -> Result<PathBuf> {
    let bad = |reason: &str| Error::InvalidLocation {
        location: warehouse.display().to_string(),
        reason: reason.to_string(),
    };
    let path = crate::location::local_path(&warehouse.to_string_lossy())?;
    if !path.is_absolute() {
        return Err(bad("the warehouse must be an absolute path or file:// URI"));
    }
    if path
        .components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(bad("the warehouse path must not contain '..'"));
    }
    Ok(path)
}

fn conflict(table: &TableIdent, expected: &str, found: Option<String>) -> Error {
    Error::CommitConflict {
        table: table.to_string(),
        expected: expected.to_string(),
        found: found.unwrap_or_else(|| "<none>".into()),
    }
}
