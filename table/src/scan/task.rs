//! A planned scan's unit of work: one data file with what reading it needs from the manifests
//! (its deleted rows, its row lineage), so that any reader (the table's own, the engine's
//! row-position scan of a DELETE, UPDATE or MERGE) reads it without planning again.

use geoberg_pruning::FileBounds;
use geoberg_puffin::DeletionVector;
use geoberg_rewrite::RowLineage;

/// One data file of a planned scan; see [`crate::Scan::plan_tasks`] and
/// [`crate::Scan::read_task`].
#[derive(Debug, Clone, PartialEq)]
pub struct ScanTask {
    /// The file: path, rows, bytes, and its box on the scan's spatial column.
    pub file: FileBounds,
    /// Rows that deletes removed (deletion vectors, position delete files); `None`: none.
    pub deleted: Option<DeletionVector>,
    /// The file's row lineage (format-version 3, when the scan returns lineage and the
    /// manifests give it).
    pub lineage: Option<RowLineage>,
}

impl ScanTask {
    /// The data file's location.
    pub fn path(&self) -> &str {
        &self.file.path
    }
}
