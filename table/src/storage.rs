//! The storage seam: every file the table crate creates, links or deletes goes through
//! [`Storage`], so that a test can fail any single step and check what the table looks like after.

use std::fmt::Debug;
use std::io::{self, Write};
use std::path::Path;

/// The filesystem operations a table writes with.
///
/// Files are created under a temporary name with [`Storage::write`], published with
/// [`Storage::link`] (which must fail if the target exists) and removed with [`Storage::delete`].
/// Data files too large to hold in memory (a rewrite's output) are streamed to their final name
/// with [`Storage::create`]: they are unreferenced until a commit names them.
/// Reads go straight to the filesystem: they change nothing, so there is nothing to inject.
pub trait Storage: Send + Sync + Debug {
    /// Creates or truncates `path` (parent directories are created) and writes `bytes` to it.
    fn write(&self, path: &Path, bytes: &[u8]) -> io::Result<()>;
    /// Creates `path` (parent directories are created; fails with `AlreadyExists` if it exists)
    /// and returns a writer for its bytes. The file is complete once the writer's `flush` has
    /// returned `Ok`; callers buffer, so the writer sees large blocks.
    fn create(&self, path: &Path) -> io::Result<Box<dyn Write + Send>>;
    /// Makes `to` name the file `from`; fails with `AlreadyExists` if `to` exists.
    fn link(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes the file `path` (never a directory, never through a symlink's target).
    fn delete(&self, path: &Path) -> io::Result<()>;
}

/// The local filesystem through `std::fs`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalStorage;

impl Storage for LocalStorage {
    fn write(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, bytes)
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn Write + Send>> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Box::new(std::fs::File::create_new(path)?))
    }

    fn link(&self, from: &Path, to: &Path) -> io::Result<()> {
        // hard_link fails if the target exists: a new file never replaces another.
        std::fs::hard_link(from, to)
    }

    fn delete(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }
}
