//! `file://` URIs and local paths: tables live on the local filesystem.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::storage::Storage;

/// Local path of a `file://` URI, `file:/` URI or bare absolute path.
pub(crate) fn local_path(location: &str) -> Result<PathBuf> {
    let path = if let Some(rest) = location.strip_prefix("file://") {
        rest
    } else if let Some(rest) = location.strip_prefix("file:") {
        rest
    } else if location.contains("://") {
        return Err(Error::InvalidLocation {
            location: location.to_string(),
            reason: "only local file:// locations are supported; use a local warehouse".into(),
        });
    } else {
        location
    };
    Ok(PathBuf::from(path))
}

/// `file://` URI of an absolute path (what Java, pyiceberg and DuckDB store).
pub(crate) fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Writes a file that must not exist yet; the write goes to a temporary name first so that a
/// crash never leaves a half-written file under the real name.
pub(crate) fn write_new_file(storage: &dyn Storage, path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| Error::io(path, std::io::Error::other("no parent directory")))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        uuid::Uuid::new_v4().simple()
    ));
    if let Err(e) = storage.write(&tmp, bytes) {
        // Best effort: a failed write may have left part of the file behind (an orphan if so).
        let _ = storage.delete(&tmp);
        return Err(Error::io(&tmp, e));
    }
    let linked = storage.link(&tmp, path);
    // If this delete fails, the temporary name stays behind as an orphan file.
    let removed = storage.delete(&tmp);
    linked.map_err(|e| Error::io(path, e))?;
    removed.map_err(|e| Error::io(&tmp, e))
}

/// Removes a file named by a location, best effort (cleanup of files nobody references).
pub(crate) fn delete_quietly(storage: &dyn Storage, location: &str) {
    if let Ok(path) = local_path(location) {
        let _ = storage.delete(&path);
    }
}

/// Reads a whole local file named by a location.
pub(crate) fn read_file(location: &str) -> Result<Vec<u8>> {
    let path = local_path(location)?;
    std::fs::read(&path).map_err(|e| Error::io(path, e))
}
