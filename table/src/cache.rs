//! The per-version cache of file indexes, shared by the clones of one [`crate::Table`] handle.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::file_index::TableFileIndex;

/// The file indexes built for one table version, by column.
#[derive(Debug, Default, Clone)]
pub(crate) struct IndexCache(Arc<Mutex<HashMap<String, Arc<TableFileIndex>>>>);

impl IndexCache {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<TableFileIndex>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn get(&self, column: &str) -> Option<Arc<TableFileIndex>> {
        self.lock().get(column).cloned()
    }

    /// Keeps the first index stored for `column` (two threads may build it at once).
    pub(crate) fn insert(&self, column: &str, index: Arc<TableFileIndex>) -> Arc<TableFileIndex> {
        self.lock()
            .entry(column.to_owned())
            .or_insert(index)
            .clone()
    }
}
