//! Table maintenance: expire old snapshots (and delete the files only they referenced), list and
//! remove orphan files (files under the table location that no metadata references).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::SystemTime;

use iceberg::spec::{ManifestFile, TableMetadata, TableMetadataBuilder};

use crate::bounds_index;
use crate::bridge::GeoFields;
use crate::error::{Error, Result};
use crate::manifest::{read_entries, read_manifest_list};
use crate::snapshot::{MetadataChange, commit_metadata};
use crate::storage::{Storage, parse_location};
use crate::table::Table;

/// What [`Table::expire_snapshots`] removed. The counts are the result columns of Iceberg's
/// `expire_snapshots` procedure; each counts files actually deleted (a failed delete is in
/// [`ExpireReport::undeleted_files`] instead).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpireReport {
    /// Ids of the snapshots removed from the metadata.
    pub expired_snapshots: Vec<i64>,
    /// Files deleted: data and delete files, statistics files, manifests and manifest lists
    /// that no remaining snapshot references.
    pub deleted_files: Vec<String>,
    /// Unreferenced files whose deletion failed, with the error. They are orphans now:
    /// [`Table::remove_orphan_files`] removes them later.
    pub undeleted_files: Vec<(String, String)>,
    /// Data files deleted.
    pub deleted_data_files_count: u64,
    /// Position delete files deleted (v2 position delete files and v3 deletion-vector Puffin
    /// files, each file once however many vectors it holds).
    pub deleted_position_delete_files_count: u64,
    /// Equality delete files deleted.
    pub deleted_equality_delete_files_count: u64,
    /// Manifests deleted.
    pub deleted_manifest_files_count: u64,
    /// Manifest lists deleted.
    pub deleted_manifest_lists_count: u64,
    /// Statistics files (table and partition statistics) of expired snapshots deleted, and
    /// their file-bounds index files (roots, and sidecars no remaining snapshot names).
    pub deleted_statistics_files_count: u64,
}

/// What kind of file an expiry deletes, for [`ExpireReport`]'s counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Doomed {
    Data,
    PositionDeletes,
    EqualityDeletes,
    Statistics,
    Manifest,
    ManifestList,
}

impl Doomed {
    /// The kind of a manifest entry's file, by its `content` (0 data, 1 position deletes,
    /// 2 equality deletes).
    fn of_content(content: i32) -> Doomed {
        match content {
            1 => Doomed::PositionDeletes,
            2 => Doomed::EqualityDeletes,
            _ => Doomed::Data,
        }
    }
}

impl ExpireReport {
    fn count(&mut self, kind: Doomed) {
        let counter = match kind {
            Doomed::Data => &mut self.deleted_data_files_count,
            Doomed::PositionDeletes => &mut self.deleted_position_delete_files_count,
            Doomed::EqualityDeletes => &mut self.deleted_equality_delete_files_count,
            Doomed::Statistics => &mut self.deleted_statistics_files_count,
            Doomed::Manifest => &mut self.deleted_manifest_files_count,
            Doomed::ManifestList => &mut self.deleted_manifest_lists_count,
        };
        *counter += 1;
    }
}

impl Table {
    /// Removes snapshots older than `older_than` from the table metadata, keeping the current
    /// snapshot, every snapshot a branch or tag points to, and the `retain_last` most recent
    /// snapshots; then deletes the files that only the removed snapshots referenced.
    ///
    /// The new metadata goes through the normal atomic commit: until the catalog swap nothing
    /// changes, and files are deleted only after the swap succeeded. A failed delete does not
    /// fail the operation; it is listed in [`ExpireReport::undeleted_files`].
    pub fn expire_snapshots(
        &self,
        older_than: SystemTime,
        retain_last: usize,
    ) -> Result<(Table, ExpireReport)> {
        let metadata = self.metadata();
        let horizon = millis(older_than);
        let mut keep: HashSet<i64> = ref_snapshot_ids(metadata)?;
        keep.extend(metadata.current_snapshot_id());
        let mut by_age: Vec<_> = metadata.snapshots().collect();
        by_age.sort_by_key(|s| std::cmp::Reverse((s.timestamp_ms(), s.sequence_number())));
        keep.extend(by_age.iter().take(retain_last).map(|s| s.snapshot_id()));
        let mut expired: Vec<i64> = by_age
            .iter()
            .filter(|s| s.timestamp_ms() < horizon && !keep.contains(&s.snapshot_id()))
            .map(|s| s.snapshot_id())
            .collect();
        if expired.is_empty() {
            return Ok((self.clone(), ExpireReport::default()));
        }
        expired.sort_unstable();

        // What becomes unreferenced is decided before the commit, from this version.
        let (mut expired_lists, mut kept_lists) = (Vec::new(), Vec::new());
        for s in metadata.snapshots() {
            if expired.contains(&s.snapshot_id()) {
                expired_lists.push(s.manifest_list().to_owned());
            } else {
                kept_lists.push(s.manifest_list().to_owned());
            }
        }
        let kept_manifests = self
            .manifests_of(&kept_lists, false)
            .map_err(|e| self.conflict_if_moved(e))?;
        let kept_manifest_paths: HashSet<&str> = kept_manifests
            .iter()
            .map(|m| m.manifest_path.as_str())
            .collect();
        let dropped_manifests: Vec<ManifestFile> = self
            .manifests_of(&expired_lists, true)?
            .into_iter()
            .filter(|m| !kept_manifest_paths.contains(m.manifest_path.as_str()))
            .collect();
        let mut manifest_paths: Vec<String> = dropped_manifests
            .iter()
            .map(|m| m.manifest_path.clone())
            .collect();
        manifest_paths.sort();
        // A DELETED entry (the REPLACE of a rewrite) does not keep its file alive.
        let storage = self.storage();
        let kept_files = live_paths(storage, &kept_manifests)?;
        let content_files: BTreeMap<String, Doomed> =
            read_entries(storage, &existing(storage, dropped_manifests), &[])?
                .into_iter()
                .filter(|e| !kept_files.contains(&e.path))
                .map(|e| (e.path, Doomed::of_content(e.content)))
                .collect();
        // Statistics files of the expired snapshots go with them (Java drops their entries from
        // the metadata too), unless a remaining snapshot's entry names the same file.
        let is_expired = |id: i64| expired.binary_search(&id).is_ok();
        let statistics: Vec<(i64, &str)> = metadata
            .statistics_iter()
            .map(|s| (s.snapshot_id, s.statistics_path.as_str()))
            .chain(
                metadata
                    .partition_statistics_iter()
                    .map(|s| (s.snapshot_id, s.statistics_path.as_str())),
            )
            .collect();
        let kept_statistics: HashSet<&str> = statistics
            .iter()
            .filter(|(id, _)| !is_expired(*id))
            .map(|(_, p)| *p)
            .collect();
        let statistics_files: BTreeSet<String> = statistics
            .iter()
            .filter(|(id, p)| is_expired(*id) && !kept_statistics.contains(p))
            .map(|(_, p)| (*p).to_string())
            .collect();
        // The file-bounds index files of the expired snapshots (their roots and the sidecars
        // no remaining root names), counted as statistics files.
        let (mut expired_roots, mut kept_roots) = (Vec::new(), Vec::new());
        for s in metadata.snapshots() {
            if let Some(root) = bounds_index::root_of(s) {
                match is_expired(s.snapshot_id()) {
                    true => expired_roots.push(root.clone()),
                    false => kept_roots.push(root.clone()),
                }
            }
        }
        let kept_index: HashSet<String> = bounds_index::index_files(storage, &kept_roots)
            .into_iter()
            .collect();
        let index_files: BTreeSet<String> = bounds_index::index_files(storage, &expired_roots)
            .into_iter()
            .filter(|p| !kept_index.contains(p))
            .collect();
        // Data and delete files first, manifest lists last: a cleanup cut short leaves only
        // unreferenced files behind, which the orphan listing finds.
        let mut doomed: Vec<(String, Doomed)> = content_files.into_iter().collect();
        doomed.extend(
            statistics_files
                .into_iter()
                .map(|p| (p, Doomed::Statistics)),
        );
        doomed.extend(index_files.into_iter().map(|p| (p, Doomed::Statistics)));
        doomed.extend(manifest_paths.into_iter().map(|p| (p, Doomed::Manifest)));
        doomed.extend(expired_lists.into_iter().map(|p| (p, Doomed::ManifestList)));

        let table = commit_metadata(self, &ExpireChange { expired: &expired })?;

        let mut report = ExpireReport {
            expired_snapshots: expired,
            ..ExpireReport::default()
        };
        for (location, kind) in doomed {
            match storage.delete(&location) {
                Ok(()) => {
                    report.count(kind);
                    report.deleted_files.push(location);
                }
                Err(e) => report.undeleted_files.push((location, e.to_string())),
            }
        }
        Ok((table, report))
    }

    /// Files under the table location that no metadata references and that were last modified
    /// before `older_than`, sorted.
    ///
    /// Referenced are: the current metadata file and those in its metadata log, every
    /// snapshot's manifest list, every manifest those lists name and every file those manifests
    /// list as live (a DELETED entry does not keep its file: the snapshots that still read it
    /// list it as live themselves), statistics files, and every snapshot's file-bounds index (its
    /// root and the sidecars the root names). The listing reloads the table
    /// first; on local disk, symbolic links are neither followed nor listed. Choose a horizon
    /// well before the start of any write still in progress (Java's default is 3 days): a
    /// running writer's files are unreferenced until it commits.
    pub fn orphan_files(&self, older_than: SystemTime) -> Result<Vec<String>> {
        let current = self.refresh()?;
        let referenced = current.referenced_paths()?;
        let mut out: Vec<String> = current
            .storage()
            .list(current.metadata().location())?
            .into_iter()
            .filter(|f| f.last_modified < older_than)
            .filter(|f| !referenced.contains(&file_key(&f.location)))
            .map(|f| f.location)
            .collect();
        out.sort();
        Ok(out)
    }

    /// Deletes [`Table::orphan_files`]`(older_than)` and returns them. Stops at the first
    /// failed delete (the files deleted before it are gone; run it again).
    pub fn remove_orphan_files(&self, older_than: SystemTime) -> Result<Vec<String>> {
        let orphans = self.orphan_files(older_than)?;
        for location in &orphans {
            self.storage().delete(location)?;
        }
        Ok(orphans)
    }

    /// Every file the metadata of this version references, as (store, path) keys.
    fn referenced_paths(&self) -> Result<HashSet<(String, String)>> {
        let metadata = self.metadata();
        let mut locations = vec![self.metadata_location().to_owned()];
        locations.extend(
            metadata
                .metadata_log()
                .iter()
                .map(|l| l.metadata_file.clone()),
        );
        locations.extend(
            metadata
                .statistics_iter()
                .map(|s| s.statistics_path.clone()),
        );
        locations.extend(
            metadata
                .partition_statistics_iter()
                .map(|s| s.statistics_path.clone()),
        );
        let roots: Vec<String> = metadata
            .snapshots()
            .filter_map(|s| bounds_index::root_of(s).cloned())
            .collect();
        locations.extend(bounds_index::index_files(self.storage(), &roots));
        let lists: Vec<String> = metadata
            .snapshots()
            .map(|s| s.manifest_list().to_owned())
            .collect();
        let manifests = self.manifests_of(&lists, false)?;
        locations.extend(live_paths(self.storage(), &manifests)?);
        locations.extend(manifests.into_iter().map(|m| m.manifest_path));
        locations.extend(lists);
        Ok(locations.iter().map(|l| file_key(l)).collect())
    }

    /// The distinct manifests named by these manifest lists; with `tolerate_missing`, a list
    /// that no longer exists (deleted by an earlier, interrupted expiry) counts as empty.
    fn manifests_of(&self, lists: &[String], tolerate_missing: bool) -> Result<Vec<ManifestFile>> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for location in lists {
            let list = match read_manifest_list(
                self.storage(),
                location,
                self.metadata().format_version(),
            ) {
                Ok(l) => l,
                Err(e) if tolerate_missing && e.is_not_found() => continue,
                Err(e) => return Err(e),
            };
            for m in list {
                if seen.insert(m.manifest_path.clone()) {
                    out.push(m);
                }
            }
        }
        Ok(out)
    }
}

/// Files that a set of manifests lists as live (ADDED or EXISTING): a DELETED entry records
/// the removal of its file, which only the snapshots before it reference.
fn live_paths(storage: &Storage, manifests: &[ManifestFile]) -> Result<HashSet<String>> {
    Ok(read_entries(storage, manifests, &[])?
        .into_iter()
        .filter(|e| e.is_live())
        .map(|e| e.path)
        .collect())
}

/// Manifests that still exist (an interrupted expiry may have deleted some already).
fn existing(storage: &Storage, manifests: Vec<ManifestFile>) -> Vec<ManifestFile> {
    manifests
        .into_iter()
        .filter(|m| storage.head(&m.manifest_path).is_ok())
        .collect()
}

/// A location as (store, path), so that `file:/a`, `file:///a` and `/a` compare equal.
fn file_key(location: &str) -> (String, String) {
    match parse_location(location) {
        Ok(p) => (p.store_key, p.path.to_string()),
        Err(_) => (String::new(), location.to_string()),
    }
}

/// Snapshot ids that branches and tags point to (`refs` is not exposed by `iceberg`).
/// Snapshots leaving the metadata, as the commit driver applies them: on the latest metadata,
/// unless a branch or tag (the current snapshot included) now points at one of them.
struct ExpireChange<'e> {
    expired: &'e [i64],
}

impl MetadataChange for ExpireChange<'_> {
    fn reapplies_on(&self, current: &Table) -> bool {
        let md = current.metadata();
        let mut kept = ref_snapshot_ids(md).unwrap_or_default();
        kept.extend(md.current_snapshot_id());
        !self.expired.iter().any(|id| kept.contains(id))
    }

    fn apply(&self, current: &Table) -> Result<Option<(TableMetadata, GeoFields)>> {
        let md = current.metadata();
        // A concurrent expiry may have removed some already.
        let expired: Vec<i64> = self
            .expired
            .iter()
            .copied()
            .filter(|id| md.snapshot_by_id(*id).is_some())
            .collect();
        if expired.is_empty() {
            return Ok(None);
        }
        let mut builder = TableMetadataBuilder::new_from_metadata(
            md.clone(),
            Some(current.metadata_location().to_owned()),
        )
        .remove_snapshots(&expired);
        for id in &expired {
            builder = builder
                .remove_statistics(*id)
                .remove_partition_statistics(*id);
        }
        Ok(Some((
            builder.build()?.metadata,
            current.geo_fields().clone(),
        )))
    }
}

fn ref_snapshot_ids(metadata: &TableMetadata) -> Result<HashSet<i64>> {
    let doc = serde_json::to_value(metadata)
        .map_err(|e| Error::corrupt("<table metadata>", e.to_string()))?;
    Ok(doc
        .get("refs")
        .and_then(|r| r.as_object())
        .map(|refs| {
            refs.values()
                .filter_map(|r| r.get("snapshot-id").and_then(|v| v.as_i64()))
                .collect()
        })
        .unwrap_or_default())
}

fn millis(t: SystemTime) -> i64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

impl Table {
    /// `DROP TABLE` (`purge` = false: the files stay, as Iceberg's default for a SQL catalog) or
    /// `DROP TABLE ... PURGE` (every file under the table location is deleted after the catalog
    /// entry is gone). Returns the files deleted.
    pub fn drop_table(self, purge: bool) -> Result<Vec<String>> {
        let location = self.metadata().location().to_string();
        if !self.catalog().drop_table(self.ident())? {
            return Err(crate::Error::NoSuchTable(self.ident().to_string()));
        }
        if !purge {
            return Ok(Vec::new());
        }
        let mut deleted = Vec::new();
        for f in self.storage().list(&location)? {
            self.storage().delete(&f.location)?;
            deleted.push(f.location);
        }
        deleted.sort();
        Ok(deleted)
    }
}
