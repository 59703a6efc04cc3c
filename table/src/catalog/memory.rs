//! A catalog held in memory, for tests and throwaway tables.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use super::{Catalog, conflict, validate_warehouse};
use crate::error::{Error, Result};
use crate::ident::{TableIdent, parse_namespace};
use crate::storage::Storage;

#[derive(Debug, Default)]
struct State {
    namespaces: BTreeSet<String>,
    tables: BTreeMap<TableIdent, String>,
}

/// A catalog whose pointers live in this process only; table files still go to `warehouse`.
#[derive(Debug)]
pub struct MemoryCatalog {
    name: String,
    warehouse: String,
    storage: Storage,
    state: Mutex<State>,
}

impl MemoryCatalog {
    /// A new, empty catalog placing tables under `warehouse`.
    pub fn new(name: &str, warehouse: impl AsRef<Path>) -> Result<Self> {
        Ok(Self {
            name: name.to_string(),
            warehouse: validate_warehouse(warehouse.as_ref())?,
            storage: Storage::new(),
            state: Mutex::default(),
        })
    }

    /// The same catalog reading and writing table files through `storage`.
    pub fn with_storage(mut self, storage: Storage) -> Self {
        self.storage = storage;
        self
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Catalog for MemoryCatalog {
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
        self.state().namespaces.insert(namespace.to_string());
        Ok(())
    }

    fn namespace_exists(&self, namespace: &str) -> Result<bool> {
        Ok(self.state().namespaces.contains(namespace))
    }

    fn list_namespaces(&self) -> Result<Vec<String>> {
        Ok(self.state().namespaces.iter().cloned().collect())
    }

    fn list_tables(&self, namespace: &str) -> Result<Vec<TableIdent>> {
        Ok(self
            .state()
            .tables
            .keys()
            .filter(|t| t.namespace_str() == namespace)
            .cloned()
            .collect())
    }

    fn metadata_location(&self, table: &TableIdent) -> Result<Option<String>> {
        Ok(self.state().tables.get(table).cloned())
    }

    fn register_table(&self, table: &TableIdent, metadata_location: &str) -> Result<()> {
        let mut state = self.state();
        let ns = table.namespace_str();
        if !state.namespaces.contains(&ns) {
            return Err(Error::NoSuchNamespace(ns));
        }
        if state.tables.contains_key(table) {
            return Err(Error::TableAlreadyExists(table.to_string()));
        }
        state
            .tables
            .insert(table.clone(), metadata_location.to_string());
        Ok(())
    }

    fn swap_metadata_location(&self, table: &TableIdent, expected: &str, new: &str) -> Result<()> {
        let mut state = self.state();
        match state.tables.get_mut(table) {
            Some(current) if current == expected => {
                *current = new.to_string();
                Ok(())
            }
            other => Err(conflict(table, expected, other.cloned())),
        }
    }

    fn drop_table(&self, table: &TableIdent) -> Result<bool> {
        Ok(self.state().tables.remove(table).is_some())
    }

    fn rename_table(&self, from: &TableIdent, to: &TableIdent) -> Result<()> {
        let mut state = self.state();
        if !state.tables.contains_key(from) {
            return Err(Error::NoSuchTable(from.to_string()));
        }
        let ns = to.namespace_str();
        if !state.namespaces.contains(&ns) {
            return Err(Error::NoSuchNamespace(ns));
        }
        if state.tables.contains_key(to) {
            return Err(Error::TableAlreadyExists(to.to_string()));
        }
        let location = state.tables.remove(from).expect("checked above");
        state.tables.insert(to.clone(), location);
        Ok(())
    }
}
