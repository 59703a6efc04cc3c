//! Values derived from one table version (file indexes, say), built once and shared by the
//! clones of its [`crate::Table`] handle. Keyed by name, type-erased so that this module depends
//! on nothing else in the crate.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

type Entries = HashMap<String, Arc<dyn Any + Send + Sync>>;

/// The derived values of one table version.
#[derive(Debug, Default, Clone)]
pub(crate) struct VersionCache(Arc<Mutex<Entries>>);

impl VersionCache {
    fn lock(&self) -> MutexGuard<'_, Entries> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value stored under `key`, if it is a `T`.
    pub(crate) fn get<T: Send + Sync + 'static>(&self, key: &str) -> Option<Arc<T>> {
        self.lock().get(key).cloned()?.downcast().ok()
    }

    /// Stores `value` under `key` unless a value is there already (two threads may build it
    /// at once), and returns the stored one.
    pub(crate) fn insert<T: Send + Sync + 'static>(&self, key: &str, value: Arc<T>) -> Arc<T> {
        let stored = self
            .lock()
            .entry(key.to_owned())
            .or_insert(value.clone())
            .clone();
        stored.downcast().unwrap_or(value)
    }
}
