//! Embedded SQLite catalog in the layout of Java's JdbcCatalog (schema V1), pyiceberg's
//! `SqlCatalog` and `iceberg-catalog-sql`, so that all of them open the same file.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use super::{Catalog, SQL_CATALOG_DDL as DDL, conflict, validate_warehouse};
use crate::error::{Error, Result};
use crate::ident::{TableIdent, parse_namespace};
use crate::storage::Storage;

/// Rows of other catalog types (views) are invisible, as in the other implementations.
const TABLE_ROWS: &str = "(iceberg_type = 'TABLE' OR iceberg_type IS NULL)";

/// A catalog in one SQLite file; safe to share between threads and processes.
#[derive(Debug)]
pub struct SqliteCatalog {
    name: String,
    warehouse: String,
    storage: Storage,
    conn: Mutex<Connection>,
}

impl SqliteCatalog {
    /// Opens (creating if needed) the catalog database at `db_path`, for catalog `name`, placing
    /// new tables under `warehouse` (an absolute path, a `file://` URI or an object-store URI
    /// such as `s3://bucket/prefix`).
    pub fn open(
        db_path: impl AsRef<Path>,
        name: &str,
        warehouse: impl AsRef<Path>,
    ) -> Result<Self> {
        let warehouse = validate_warehouse(warehouse.as_ref())?;
        let db_path = db_path.as_ref();
        if let Some(dir) = db_path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let conn = Connection::open(db_path)?;
        conn.busy_timeout(Duration::from_secs(30))?;
        conn.execute_batch(DDL)?;
        Ok(Self {
            name: name.to_string(),
            warehouse,
            storage: Storage::new(),
            conn: Mutex::new(conn),
        })
    }

    /// The same catalog reading and writing table files through `storage` (object-store
    /// options, credentials, a fault layer).
    pub fn with_storage(mut self, storage: Storage) -> Self {
        self.storage = storage;
        self
    }

    fn with_conn<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        // A poisoned lock only means another thread panicked mid-call; SQLite kept its own
        // consistency, so the connection is still usable.
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        Ok(f(&conn)?)
    }
}

impl Catalog for SqliteCatalog {
    fn name(&self) -> &str {
        &self.name
    }

    fn warehouse(&self) -> &str {
        &self.warehouse
    }

    fn storage(&self) -> &Storage {
        &self.storage
    }

    fn create_namespace(&self, namespace: &str) -> Result<()> {
        parse_namespace(namespace)?;
        self.with_conn(|c| {
            c.execute(
                "INSERT OR IGNORE INTO iceberg_namespace_properties
                 (catalog_name, namespace, property_key, property_value) VALUES (?1, ?2, 'exists', 'true')",
                params![self.name, namespace],
            )
        })?;
        Ok(())
    }

    fn namespace_exists(&self, namespace: &str) -> Result<bool> {
        let sql = format!(
            "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ?1 AND namespace = ?2
             UNION ALL SELECT 1 FROM iceberg_tables WHERE catalog_name = ?1 AND table_namespace = ?2 AND {TABLE_ROWS}
             LIMIT 1"
        );
        self.with_conn(|c| {
            c.query_row(&sql, params![self.name, namespace], |_| Ok(()))
                .optional()
                .map(|r| r.is_some())
        })
    }

    fn list_namespaces(&self) -> Result<Vec<String>> {
        let sql = format!(
            "SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ?1
             UNION SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ?1 AND {TABLE_ROWS}
             ORDER BY 1"
        );
        self.with_conn(|c| {
            let mut stmt = c.prepare(&sql)?;
            let rows = stmt.query_map(params![self.name], |r| r.get(0))?;
            rows.collect()
        })
    }

    fn list_tables(&self, namespace: &str) -> Result<Vec<TableIdent>> {
        let sql = format!(
            "SELECT table_name FROM iceberg_tables WHERE catalog_name = ?1 AND table_namespace = ?2
             AND {TABLE_ROWS} ORDER BY table_name"
        );
        let names: Vec<String> = self.with_conn(|c| {
            let mut stmt = c.prepare(&sql)?;
            let rows = stmt.query_map(params![self.name, namespace], |r| r.get(0))?;
            rows.collect()
        })?;
        names
            .iter()
            .map(|n| TableIdent::new(namespace, n))
            .collect()
    }

    fn metadata_location(&self, table: &TableIdent) -> Result<Option<String>> {
        let sql = format!(
            "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ?1
             AND table_namespace = ?2 AND table_name = ?3 AND {TABLE_ROWS}"
        );
        self.with_conn(|c| {
            c.query_row(
                &sql,
                params![self.name, table.namespace_str(), table.name()],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()
            .map(Option::flatten)
        })
    }

    fn register_table(&self, table: &TableIdent, metadata_location: &str) -> Result<()> {
        let ns = table.namespace_str();
        if !self.namespace_exists(&ns)? {
            return Err(Error::NoSuchNamespace(ns));
        }
        let inserted = self.with_conn(|c| {
            c.execute(
                "INSERT OR IGNORE INTO iceberg_tables (catalog_name, table_namespace, table_name,
                 metadata_location, previous_metadata_location, iceberg_type)
                 VALUES (?1, ?2, ?3, ?4, NULL, 'TABLE')",
                params![self.name, ns, table.name(), metadata_location],
            )
        })?;
        if inserted == 0 {
            return Err(Error::TableAlreadyExists(table.to_string()));
        }
        Ok(())
    }

    fn swap_metadata_location(&self, table: &TableIdent, expected: &str, new: &str) -> Result<()> {
        let updated =
            self.with_conn(|c| {
                c.execute(
                "UPDATE iceberg_tables SET metadata_location = ?1, previous_metadata_location = ?2
                 WHERE catalog_name = ?3 AND table_namespace = ?4 AND table_name = ?5
                 AND metadata_location = ?2",
                params![new, expected, self.name, table.namespace_str(), table.name()],
            )
            })?;
        if updated == 1 {
            Ok(())
        } else {
            Err(conflict(table, expected, self.metadata_location(table)?))
        }
    }

    fn drop_table(&self, table: &TableIdent) -> Result<bool> {
        let sql = format!(
            "DELETE FROM iceberg_tables WHERE catalog_name = ?1 AND table_namespace = ?2
             AND table_name = ?3 AND {TABLE_ROWS}"
        );
        let n = self.with_conn(|c| {
            c.execute(
                &sql,
                params![self.name, table.namespace_str(), table.name()],
            )
        })?;
        Ok(n > 0)
    }

    /// One `UPDATE` of the row's key, as the JDBC catalog renames (`JdbcUtil.RENAME_TABLE_SQL`):
    /// the primary key refuses a taken name, atomically.
    fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        let ns = to.namespace_str();
        if !self.namespace_exists(&ns)? {
            return Err(Error::NoSuchNamespace(ns));
        }
        let sql = format!(
            "UPDATE iceberg_tables SET table_namespace = ?1, table_name = ?2
             WHERE catalog_name = ?3 AND table_namespace = ?4 AND table_name = ?5 AND {TABLE_ROWS}"
        );
        let renamed = self.with_conn(|c| {
            match c.execute(
                &sql,
                params![ns, to.name(), self.name, from.namespace_str(), from.name()],
            ) {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::ConstraintViolation =>
                {
                    Ok(None)
                }
                other => other.map(Some),
            }
        })?;
        match renamed {
            None => Err(Error::TableAlreadyExists(to.to_string())),
            Some(0) => Err(Error::NoSuchTable(from.to_string())),
            Some(_) => Ok(()),
        }
    }
}
