//! Commit validation (Java's `MergingSnapshotProducer.validate*`): an operation that read some
//! files and replaces or changes their rows is valid only if nothing committed since its starting
//! snapshot removed those files, added deletes against them, or gave their rows other ids.

use std::collections::{BTreeSet, HashMap, HashSet};

use iceberg::spec::{DataContentType, ManifestContentType, ManifestStatus};

use crate::error::{Error, Result};
use crate::lineage::inherited_first_row_ids;
use crate::manifest::read_manifest;
use crate::table::Table;

/// What an operation read, for [`validate_since`].
#[derive(Debug, Clone, Default)]
pub(crate) struct ReadSet {
    /// Snapshot the operation planned from.
    pub starting_snapshot_id: i64,
    /// Data files it read and now replaces or changes, by path.
    pub files: HashSet<String>,
    /// v3: the `first_row_id` (after inheritance) of each file when it was read; the new rows
    /// carry ids derived from it, so it must not have changed.
    pub first_row_ids: HashMap<String, Option<i64>>,
    /// Whether equality deletes committed meanwhile still apply to the new files (they carry
    /// the starting sequence number); otherwise such a delete is a conflict.
    pub allow_new_equality_deletes: bool,
}

/// Checks `current` against what happened since `read.starting_snapshot_id`; the error is
/// [`Error::RewriteConflict`], naming the file and the commit that changed it.
pub(crate) fn validate_since(current: &Table, read: &ReadSet) -> Result<()> {
    let md = current.metadata();
    let conflict = |reason: String| Error::RewriteConflict {
        table: current.ident().to_string(),
        reason,
    };
    if read.files.is_empty() || md.current_snapshot_id() == Some(read.starting_snapshot_id) {
        return Ok(());
    }
    // Snapshots committed since the start, found by walking back from the current one.
    let mut new_snapshots = HashSet::new();
    let mut cursor = md.current_snapshot();
    loop {
        let Some(s) = cursor else {
            return Err(conflict(format!(
                "the starting snapshot {} is no longer an ancestor of the current snapshot \
                 (the table was rolled back or its history rewritten)",
                read.starting_snapshot_id
            )));
        };
        if s.snapshot_id() == read.starting_snapshot_id {
            break;
        }
        new_snapshots.insert(s.snapshot_id());
        cursor = s.parent_snapshot_id().and_then(|p| md.snapshot_by_id(p));
    }

    let mut live = HashSet::new();
    for m in current.manifests()? {
        let entries = read_manifest(current.storage(), &m)?;
        match m.content {
            ManifestContentType::Data => {
                let first_row_ids = inherited_first_row_ids(&m, &entries);
                for (e, now) in entries.iter().zip(first_row_ids) {
                    if !e.is_alive() {
                        continue;
                    }
                    let path = e.file_path();
                    // Row ids are fixed once assigned; they can only appear (a concurrent
                    // commit on a table upgraded to v3 assigns ids to files that had none).
                    if let Some(&then) = read.first_row_ids.get(path)
                        && then != now
                    {
                        return Err(conflict(format!(
                            "the row ids of file {path} changed since it was read \
                             (first_row_id {then:?} -> {now:?}, a concurrent commit assigned \
                             them); run the operation again so that its rows keep their ids"
                        )));
                    }
                    live.insert(path.to_string());
                }
            }
            ManifestContentType::Deletes => {
                for e in entries
                    .iter()
                    .filter(|e| e.status() == ManifestStatus::Added)
                {
                    let added_by = e.snapshot_id().unwrap_or(m.added_snapshot_id);
                    if !new_snapshots.contains(&added_by) {
                        continue;
                    }
                    let file = e.data_file();
                    match file.content_type() {
                        DataContentType::PositionDeletes => {
                            let target = file.referenced_data_file();
                            if target.as_deref().is_none_or(|t| read.files.contains(t)) {
                                return Err(conflict(format!(
                                    "found new position delete file {} (snapshot {added_by}) for \
                                     {}",
                                    file.file_path(),
                                    target.map_or_else(
                                        || "data files that may include the ones read".into(),
                                        |t| format!("data file {t}")
                                    )
                                )));
                            }
                        }
                        DataContentType::EqualityDeletes if !read.allow_new_equality_deletes => {
                            return Err(conflict(format!(
                                "found new equality delete file {} (snapshot {added_by}); it \
                                 would not apply to the rewritten rows",
                                file.file_path()
                            )));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    let missing: BTreeSet<&str> = read
        .files
        .iter()
        .map(String::as_str)
        .filter(|p| !live.contains(*p))
        .collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(5).copied().collect();
        return Err(conflict(format!(
            "missing required files to delete: {} of the files read were removed by a \
             concurrent commit ({}{})",
            missing.len(),
            shown.join(", "),
            if missing.len() > shown.len() {
                ", ..."
            } else {
                ""
            }
        )));
    }
    Ok(())
}
