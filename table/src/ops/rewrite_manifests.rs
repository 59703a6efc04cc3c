//! `CALL <catalog>.system.rewrite_manifests(table => ...)`: regroup the current snapshot's
//! manifests so that planning reads few, partition-clustered manifests instead of one small
//! manifest per append.
//!
//! The rules follow Iceberg Java's `RewriteManifests` (core `BaseRewriteManifests`, Spark's
//! `RewriteManifestsSparkAction`):
//! - data manifests and delete manifests are rewritten separately (an entry never changes
//!   content type), and so is each partition spec;
//! - the live entries (ADDED and EXISTING; a DELETED entry is a tombstone that a rewritten
//!   manifest drops, as Java does) are ordered by partition and cut into
//!   `ceil(bytes / commit.manifest.target-size-bytes)` manifests (default 8 MB), the bytes
//!   estimated from the size per entry of the manifests they come from;
//! - each entry keeps its snapshot id, data and file sequence numbers, and (v3) its first row
//!   id, made explicit where it was inherited; it is written as EXISTING;
//! - a group that is already one manifest of the target size or less is kept as it is;
//! - the commit is a `replace` snapshot with no data change, summary keys
//!   `manifests-created`, `manifests-replaced`, `manifests-kept`, `entries-processed`
//!   (Java's `SnapshotSummary`), through the snapshot producer; a lost race re-plans on the
//!   winner's manifests.
//!
//! On a v3 table the new data manifests take no `first_row_id` of their own; the manifest list
//! assigns them a fresh range (as Java's manifest list writer does), which no row uses: every
//! entry carries its own first row id.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};

use iceberg::spec::{
    FormatVersion, Manifest, ManifestContentType, ManifestFile, ManifestStatus, Operation,
};

use crate::bridge;
use crate::error::{Error, Result};
use crate::lineage::inherited_first_row_ids;
use crate::manifest::fetch_and_decode;
use crate::properties::parse_positive;
use crate::snapshot::{
    CommitFailure, ExistingEntry, ManifestGroup, ManifestRewrite, SnapshotOperation,
    SnapshotProducer, commit_with_retry, with_first_row_id,
};
use crate::table::Table;

/// Table property: the size a rewritten manifest aims at (Iceberg's
/// `commit.manifest.target-size-bytes`).
pub const MANIFEST_TARGET_SIZE_PROPERTY: &str = "commit.manifest.target-size-bytes";
/// Iceberg's default of [`MANIFEST_TARGET_SIZE_PROPERTY`]: 8 MB.
pub const DEFAULT_MANIFEST_TARGET_SIZE_BYTES: u64 = 8 * 1024 * 1024;

/// Snapshot summary keys of a manifest rewrite (Java's `SnapshotSummary`).
const CREATED_MANIFESTS: &str = "manifests-created";
const REPLACED_MANIFESTS: &str = "manifests-replaced";
const KEPT_MANIFESTS: &str = "manifests-kept";
const PROCESSED_ENTRIES: &str = "entries-processed";

/// What [`RewriteManifests::execute`] did: Iceberg's result columns, then our details.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RewriteManifestsReport {
    /// Manifests replaced (Iceberg's `rewritten_manifests_count`).
    pub rewritten_manifests_count: u64,
    /// Manifests written instead (Iceberg's `added_manifests_count`).
    pub added_manifests_count: u64,
    /// Manifests of the current snapshot before the rewrite.
    pub manifests_before: u64,
    /// Manifests of the current snapshot after it.
    pub manifests_after: u64,
    /// The `replace` snapshot committed; `None` when there was nothing to regroup.
    pub snapshot_id: Option<i64>,
}

/// A manifest rewrite being configured; see [`Table::rewrite_manifests`].
#[derive(Debug, Clone)]
pub struct RewriteManifests<'a> {
    table: &'a Table,
    target_size_bytes: Option<u64>,
}

impl Table {
    /// Starts a manifest rewrite (`CALL ... rewrite_manifests`): the current snapshot's
    /// manifests regrouped by partition into manifests of `commit.manifest.target-size-bytes`.
    ///
    /// ```no_run
    /// # fn f(table: geoberg_table::Table) -> geoberg_table::Result<()> {
    /// let (table, report) = table.rewrite_manifests().execute()?;
    /// println!(
    ///     "{} manifests replaced by {} ({} -> {})",
    ///     report.rewritten_manifests_count,
    ///     report.added_manifests_count,
    ///     report.manifests_before,
    ///     report.manifests_after
    /// );
    /// # Ok(()) }
    /// ```
    pub fn rewrite_manifests(&self) -> RewriteManifests<'_> {
        RewriteManifests {
            table: self,
            target_size_bytes: None,
        }
    }
}

impl RewriteManifests<'_> {
    /// The size each new manifest aims at, instead of the table's
    /// `commit.manifest.target-size-bytes`.
    pub fn target_size_bytes(mut self, bytes: u64) -> Self {
        self.target_size_bytes = Some(bytes.max(1));
        self
    }

    /// Regroups and commits; returns the new table version and the counts. Nothing is
    /// committed when every group is already one manifest of the target size or less.
    pub fn execute(self) -> Result<(Table, RewriteManifestsReport)> {
        let table = self.table;
        let target = match self.target_size_bytes {
            Some(t) => t,
            None => target_size(table)?,
        };
        let before = table.manifests()?.len() as u64;
        let plan = plan(table, target)?;
        if plan.groups.is_empty() {
            let report = RewriteManifestsReport {
                manifests_before: before,
                manifests_after: before,
                ..RewriteManifestsReport::default()
            };
            return Ok((table.clone(), report));
        }
        let op = RewriteManifestsOp {
            target,
            planned: RefCell::new(Some((table.metadata_location().to_string(), plan))),
        };
        let committed = commit_with_retry(table, &op).map_err(CommitFailure::into_error)?;
        let snapshot = committed.metadata().current_snapshot();
        let count = |key: &str| {
            snapshot
                .and_then(|s| s.summary().additional_properties.get(key))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let report = RewriteManifestsReport {
            rewritten_manifests_count: count(REPLACED_MANIFESTS),
            added_manifests_count: count(CREATED_MANIFESTS),
            manifests_before: before,
            manifests_after: committed.manifests()?.len() as u64,
            snapshot_id: snapshot.map(|s| s.snapshot_id()),
        };
        Ok((committed, report))
    }
}

/// `commit.manifest.target-size-bytes`, or Iceberg's default.
fn target_size(table: &Table) -> Result<u64> {
    match table
        .metadata()
        .properties()
        .get(MANIFEST_TARGET_SIZE_PROPERTY)
    {
        Some(v) => parse_positive(MANIFEST_TARGET_SIZE_PROPERTY, v, "a size in bytes"),
        None => Ok(DEFAULT_MANIFEST_TARGET_SIZE_BYTES),
    }
}

/// The `replace` commit; re-planned on every attempt, so that a lost race regroups the
/// winner's manifests (a manifest rewrite changes no data: it never conflicts).
struct RewriteManifestsOp {
    target: u64,
    /// The plan made on the starting version, used if the first attempt commits on it.
    planned: RefCell<Option<(String, ManifestRewrite)>>,
}

impl SnapshotOperation for RewriteManifestsOp {
    fn operation(&self) -> Operation {
        Operation::Replace
    }

    fn validate(&self, _current: &Table) -> Result<()> {
        Ok(())
    }

    fn apply(&self, producer: &mut SnapshotProducer<'_>) -> Result<()> {
        let table = producer.table();
        let kept = table.manifests()?.len();
        let plan = match self.planned.borrow_mut().take() {
            Some((base, plan)) if base == table.metadata_location() => plan,
            _ => plan(table, self.target)?,
        };
        let created = plan.groups.len();
        let replaced = plan.replaced.len();
        let entries: usize = plan.groups.iter().map(|g| g.entries.len()).sum();
        producer.summary_property(CREATED_MANIFESTS, created.to_string());
        producer.summary_property(REPLACED_MANIFESTS, replaced.to_string());
        producer.summary_property(KEPT_MANIFESTS, (kept - replaced).to_string());
        producer.summary_property(PROCESSED_ENTRIES, entries.to_string());
        producer.rewrite_manifests(plan);
        Ok(())
    }
}

/// One group of manifests rewritten together: same content, same partition spec.
type GroupKey = (u8, i32);

/// The manifests to replace and the new ones, on `table`'s current snapshot.
fn plan(table: &Table, target: u64) -> Result<ManifestRewrite> {
    let manifests = table.manifests()?;
    let mut groups: BTreeMap<GroupKey, Vec<ManifestFile>> = BTreeMap::new();
    for m in manifests {
        let content = match m.content {
            ManifestContentType::Data => 0,
            ManifestContentType::Deletes => 1,
        };
        groups
            .entry((content, m.partition_spec_id))
            .or_default()
            .push(m);
    }
    let mut rewrite = ManifestRewrite::default();
    for ((_, spec_id), group) in groups {
        let bytes: u64 = group.iter().map(|m| m.manifest_length.max(0) as u64).sum();
        let wanted = bytes.div_ceil(target).max(1);
        // Java's no-op: one manifest that a rewrite would write again as one.
        if group.len() == 1 && wanted == 1 {
            continue;
        }
        let (entries, total_entries) = live_entries(table, &group)?;
        // The new manifests' size, from the bytes per entry of those they replace.
        let live_bytes = bytes as f64 * entries.len() as f64 / total_entries.max(1) as f64;
        let count = ((live_bytes / target as f64).ceil() as usize).clamp(1, entries.len().max(1));
        if group.len() == 1 && count == 1 {
            continue;
        }
        let content = group[0].content;
        rewrite
            .replaced
            .extend(group.iter().map(|m| m.manifest_path.clone()));
        let per_manifest = entries.len().div_ceil(count).max(1);
        let mut clustered = entries;
        // Ordered by partition (stable: within a partition the entries keep their order).
        clustered.sort_by(|a, b| a.0.cmp(&b.0));
        let mut chunk = Vec::with_capacity(per_manifest);
        for (_, e) in clustered {
            chunk.push(e);
            if chunk.len() == per_manifest {
                rewrite.groups.push(ManifestGroup {
                    spec_id,
                    content,
                    entries: std::mem::take(&mut chunk),
                });
            }
        }
        if !chunk.is_empty() {
            rewrite.groups.push(ManifestGroup {
                spec_id,
                content,
                entries: chunk,
            });
        }
    }
    Ok(rewrite)
}

/// The live entries of `manifests` keyed by partition (its rendering: equal partitions have
/// equal keys), with inheritance made explicit; and the number of entries read, DELETED ones
/// included.
fn live_entries(
    table: &Table,
    manifests: &[ManifestFile],
) -> Result<(Vec<(String, ExistingEntry)>, usize)> {
    let v3 = table.metadata().format_version() >= FormatVersion::V3;
    let locations: Vec<&str> = manifests.iter().map(|m| m.manifest_path.as_str()).collect();
    let per_manifest = fetch_and_decode(table.storage(), &locations, |i, location, bytes| {
        let m = &manifests[i];
        let bytes = bridge::manifest_to_binary(&bytes, location)?;
        let entries = Manifest::parse_avro(&bytes)
            .map_err(|e| Error::corrupt(location, e.to_string()))?
            .into_parts()
            .0;
        let first_row_ids = match (v3, m.content) {
            (true, ManifestContentType::Data) => inherited_first_row_ids(m, &entries),
            _ => vec![None; entries.len()],
        };
        let total = entries.len();
        let mut out = Vec::with_capacity(total);
        for (e, first_row_id) in entries.iter().zip(first_row_ids) {
            if e.status() == ManifestStatus::Deleted {
                continue;
            }
            let mut file = e.data_file().clone();
            if let (None, Some(id)) = (file.first_row_id(), first_row_id) {
                file = with_first_row_id(&file, id, m.partition_spec_id)?;
            }
            let key = format!("{:?}", file.partition());
            out.push((
                key,
                ExistingEntry {
                    file,
                    snapshot_id: e.snapshot_id().unwrap_or(m.added_snapshot_id),
                    data_sequence_number: e.sequence_number().unwrap_or(m.sequence_number),
                    file_sequence_number: e.file_sequence_number.unwrap_or(m.sequence_number),
                },
            ));
        }
        Ok((out, total))
    })?;
    let mut entries = Vec::new();
    let mut total = 0;
    let mut seen = HashSet::new();
    for (list, n) in per_manifest {
        total += n;
        for (key, e) in list {
            if !seen.insert((e.file.file_path().to_string(), e.file.content_offset())) {
                return Err(Error::corrupt(
                    e.file.file_path(),
                    "the file is live in two manifests of the current snapshot; rewriting the \
                     manifests would keep one copy and hide the damage, so nothing was rewritten",
                ));
            }
            entries.push((key, e));
        }
    }
    Ok((entries, total))
}
