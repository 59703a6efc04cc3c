//! A table as the engine holds it between statements: its name and catalog, and the last
//! version loaded, reused while the catalog still points at it (so that its file index, built
//! once per version, serves every query of that version).

use std::sync::{Arc, Mutex};

use geoberg_table::{Catalog, Error, Result, Table, TableIdent};

/// The current version of one table, reloaded when the catalog pointer moves.
#[derive(Debug)]
pub(crate) struct TableHandle {
    catalog: Arc<dyn Catalog>,
    ident: TableIdent,
    last: Mutex<Option<Table>>,
}

impl TableHandle {
    pub(crate) fn new(catalog: Arc<dyn Catalog>, ident: TableIdent) -> Self {
        TableHandle {
            catalog,
            ident,
            last: Mutex::new(None),
        }
    }

    /// With a version already loaded.
    pub(crate) fn with_table(table: Table) -> Self {
        TableHandle {
            catalog: Arc::clone(table.catalog()),
            ident: table.ident().clone(),
            last: Mutex::new(Some(table)),
        }
    }

    pub(crate) fn ident(&self) -> &TableIdent {
        &self.ident
    }

    /// The table's current version (blocking: asks the catalog, may read metadata).
    pub(crate) fn current(&self) -> Result<Table> {
        let location = self
            .catalog
            .metadata_location(&self.ident)?
            .ok_or_else(|| Error::NoSuchTable(self.ident.to_string()))?;
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(table) = last.as_ref().filter(|t| t.metadata_location() == location) {
            return Ok(table.clone());
        }
        let table = Table::load(Arc::clone(&self.catalog), &self.ident)?;
        *last = Some(table.clone());
        Ok(table)
    }

    /// Remembers a version this process just committed.
    pub(crate) fn remember(&self, table: Table) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(table);
    }
}
