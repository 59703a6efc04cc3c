//! Making a staged snapshot visible: the catalog swap, and the retry loop around it.
//!
//! A commit is one compare-and-swap of the catalog pointer. When another writer swapped first,
//! the operation is validated against what that writer committed and, if still valid,
//! re-applied on the new metadata after Iceberg's jittered exponential backoff
//! (`commit.retry.*`). When a swap fails in a way whose outcome is unknown (a lost reply, a
//! dropped connection), the pointer is read again: if it names our metadata the commit
//! happened; otherwise the attempt's files are kept (the swap might still land) and the next
//! attempt first checks whether the table's history already holds that attempt's snapshot, so
//! that nothing is ever committed twice.

use std::collections::HashSet;
use std::time::Instant;

use iceberg::spec::{Operation, TableMetadata};

use super::SnapshotProducer;
use crate::bridge::{self, GeoFields};
use crate::error::{Error, Result};
use crate::table::{Table, metadata_location, metadata_version};

/// A new table version whose files are all written but which no reader can see yet.
///
/// Dropping it without [`PendingCommit::commit`] is what a crash before the catalog swap looks
/// like: the table stays at its previous snapshot and the written files become orphans.
#[derive(Debug)]
#[must_use = "nothing is visible until commit() swaps the catalog pointer"]
pub struct PendingCommit {
    base: Table,
    location: String,
    metadata: TableMetadata,
    geo: GeoFields,
}

impl PendingCommit {
    /// Writes `metadata` at `location` as the next version of `base`, not yet visible.
    pub(crate) fn stage_at(
        base: &Table,
        metadata: TableMetadata,
        location: String,
    ) -> Result<PendingCommit> {
        PendingCommit::stage_with_geo(base, metadata, location, base.geo_fields().clone())
    }

    /// Writes `metadata` at `location` as the next version of `base` whose geo fields are
    /// `geo` (a schema change adds or keeps them), not yet visible.
    pub(crate) fn stage_with_geo(
        base: &Table,
        metadata: TableMetadata,
        location: String,
        geo: GeoFields,
    ) -> Result<PendingCommit> {
        let bytes = bridge::metadata_to_json(&metadata, &geo)?;
        base.storage().write_new(&location, bytes)?;
        Ok(PendingCommit {
            base: base.clone(),
            location,
            metadata,
            geo,
        })
    }

    /// Location of the staged metadata file.
    pub fn metadata_location(&self) -> &str {
        &self.location
    }

    /// Swaps the catalog pointer from the base version to the staged one, atomically, once.
    ///
    /// On [`Error::CommitConflict`] the staged metadata file is removed; reload the table and
    /// repeat the operation. When the swap fails in a way that does not say whether it happened
    /// (a lost reply), the pointer is read again: if it names the staged metadata, the commit
    /// happened and this returns the new table. Otherwise the error comes back and the file is
    /// kept (the swap might still land; if not, `remove_orphan_files` finds it).
    pub fn commit(self) -> Result<Table> {
        match self.swap() {
            Ok(table) => Ok(table),
            Err((e @ Error::CommitConflict { .. }, pending)) => {
                let _ = pending.base.storage().delete(&pending.location);
                Err(e)
            }
            Err((e, pending)) => match pending.landed() {
                Some(true) => Ok(pending.into_table()),
                _ => Err(e),
            },
        }
    }

    /// Whether the catalog now points at the staged metadata (`None`: it cannot be read).
    fn landed(&self) -> Option<bool> {
        let found = self
            .base
            .catalog()
            .metadata_location(self.base.ident())
            .ok()?;
        Some(found.as_deref() == Some(self.location.as_str()))
    }

    /// The swap alone; on failure the commit comes back with the error, files untouched.
    fn swap(self) -> std::result::Result<Table, (Error, Box<PendingCommit>)> {
        let base = &self.base;
        match base.catalog().swap_metadata_location(
            base.ident(),
            base.metadata_location(),
            &self.location,
        ) {
            Ok(()) => Ok(self.into_table()),
            Err(e) => Err((e, Box::new(self))),
        }
    }

    fn into_table(self) -> Table {
        self.base
            .next_version_with_geo(self.location, self.metadata, self.geo)
    }
}

/// Where the next metadata version of `base` goes:
/// `<table>/metadata/<version:05>-<uuid>.metadata.json` (the Java naming).
pub(crate) fn next_metadata_location(base: &Table, metadata: &TableMetadata) -> String {
    let version = metadata_version(base.metadata_location()).map_or(0, |v| v + 1);
    metadata_location(metadata, version)
}

/// An operation that commits one snapshot: what [`commit_with_retry`] re-applies on newer
/// metadata after losing a race.
pub(crate) trait SnapshotOperation {
    /// The snapshot's operation (`append`, `replace`, `overwrite`, `delete`).
    fn operation(&self) -> Operation;

    /// Checks the operation still holds on `current` (its base may have moved on): a rewrite
    /// whose inputs a concurrent commit removed is a conflict; an append never is.
    fn validate(&self, current: &Table) -> Result<()>;

    /// Says which files the snapshot adds and removes, on `producer`'s version of the table.
    fn apply(&self, producer: &mut SnapshotProducer<'_>) -> Result<()>;
}

/// A change that writes the next metadata version without adding a snapshot (properties, a
/// schema, expired snapshots): what [`commit_with_retry`] re-decides on newer metadata after
/// losing a race.
pub(crate) trait MetadataChange {
    /// Whether the change, decided on an older version, may be re-applied on `current` (the
    /// latest metadata after a lost race); `false` ends the commit with the conflict.
    fn reapplies_on(&self, _current: &Table) -> bool {
        true
    }

    /// The change applied on `current`: the next metadata and its geo fields, validated;
    /// `None` when it changes nothing there.
    fn apply(&self, current: &Table) -> Result<Option<(TableMetadata, GeoFields)>>;
}

/// Anything [`commit_with_retry`] commits: a [`SnapshotOperation`] or a [`MetadataChange`]
/// (wrapped in [`ChangeMetadata`]).
pub(crate) trait CommitAction {
    /// Checks the action still holds on `current`: a retryable error reloads the metadata and
    /// tries again; any other ends the commit.
    fn validate(&self, current: &Table) -> Result<()>;

    /// Whether, after losing a race, the action may be re-applied on `current` at all.
    fn reapplies_on(&self, current: &Table) -> bool;

    /// Writes the next metadata version of `current`, not yet visible; `None` when the action
    /// changes nothing on it. On error, the files this attempt wrote are gone.
    fn stage(&self, current: &Table) -> Result<Option<Staged>>;
}

/// One attempt's staged version: the commit, every file it wrote (metadata included) and the
/// snapshot it adds, if any.
pub(crate) struct Staged {
    pending: PendingCommit,
    written: Vec<String>,
    snapshot_id: Option<i64>,
}

impl<T: SnapshotOperation + ?Sized> CommitAction for T {
    fn validate(&self, current: &Table) -> Result<()> {
        SnapshotOperation::validate(self, current)
    }

    fn reapplies_on(&self, _current: &Table) -> bool {
        true
    }

    fn stage(&self, current: &Table) -> Result<Option<Staged>> {
        let mut producer = SnapshotProducer::new(current, self.operation());
        match self.apply(&mut producer).and_then(|()| producer.stage()) {
            Ok(pending) => Ok(Some(Staged {
                pending,
                written: producer.written().to_vec(),
                snapshot_id: Some(producer.snapshot_id()),
            })),
            Err(e) => {
                discard(current, producer.written());
                Err(e)
            }
        }
    }
}

/// A [`MetadataChange`] as a [`CommitAction`].
pub(crate) struct ChangeMetadata<'a, C: MetadataChange + ?Sized>(pub(crate) &'a C);

impl<C: MetadataChange + ?Sized> CommitAction for ChangeMetadata<'_, C> {
    fn validate(&self, _current: &Table) -> Result<()> {
        Ok(())
    }

    fn reapplies_on(&self, current: &Table) -> bool {
        self.0.reapplies_on(current)
    }

    fn stage(&self, current: &Table) -> Result<Option<Staged>> {
        let Some((metadata, geo)) = self.0.apply(current)? else {
            return Ok(None);
        };
        let location = next_metadata_location(current, &metadata);
        let pending = PendingCommit::stage_with_geo(current, metadata, location.clone(), geo)?;
        Ok(Some(Staged {
            pending,
            written: vec![location],
            snapshot_id: None,
        }))
    }
}

/// Why a commit did not happen, split by what the caller may clean up.
#[derive(Debug)]
pub(crate) enum CommitFailure {
    /// Nothing was committed: the operation's own files (its data files) may be deleted.
    Definite(Error),
    /// The catalog may or may not hold the new version: every file must stay.
    Unknown(Error),
}

impl CommitFailure {
    pub(crate) fn into_error(self) -> Error {
        match self {
            CommitFailure::Definite(e) | CommitFailure::Unknown(e) => e,
        }
    }
}

/// Commits a [`MetadataChange`] through [`commit_with_retry`]; the table as it was when the
/// change changes nothing.
pub(crate) fn commit_metadata(base: &Table, change: &impl MetadataChange) -> Result<Table> {
    commit_with_retry(base, &ChangeMetadata(change)).map_err(CommitFailure::into_error)
}

/// The one commit driver: validates, stages and swaps `action` on `base`, re-applying it on
/// newer metadata when another writer committed first, under the table's `commit.retry.*`
/// properties (the defaults when those do not parse: they may be what is being fixed).
pub(crate) fn commit_with_retry<A: CommitAction + ?Sized>(
    base: &Table,
    action: &A,
) -> std::result::Result<Table, CommitFailure> {
    let retry = base
        .properties()
        .map(|p| p.commit_retry)
        .unwrap_or_default();
    let started = Instant::now();
    let mut current = base.clone();
    // Attempts whose swap outcome was unknown, by the snapshot they add and their metadata
    // location: if one shows up in the history, that attempt committed.
    let mut uncertain = Uncertain::default();
    let mut last_error = None;
    for attempt in 0..=retry.num_retries {
        if attempt > 0 {
            if started.elapsed() + retry.backoff(attempt) > retry.total_timeout {
                break;
            }
            std::thread::sleep(retry.backoff(attempt));
            current = base.refresh().map_err(|e| uncertain.failure(e))?;
            if uncertain.landed_in(&current) {
                return Ok(current);
            }
            if !action.reapplies_on(&current) {
                break;
            }
        }
        // A retryable error here is a base that moved on and whose snapshot was expired:
        // re-applying on the reloaded metadata is the fix, as for a lost swap.
        if let Err(e) = action.validate(&current) {
            if e.is_retryable() && attempt < retry.num_retries {
                last_error = Some(e);
                continue;
            }
            return Err(uncertain.failure(e));
        }
        let staged = match action.stage(&current) {
            Ok(Some(staged)) => staged,
            Ok(None) => return Ok(current),
            Err(e) if e.is_retryable() && attempt < retry.num_retries => {
                last_error = Some(e);
                continue;
            }
            Err(e) => return Err(uncertain.failure(e)),
        };
        let Staged {
            pending,
            written,
            snapshot_id,
        } = staged;
        match pending.swap() {
            Ok(table) => {
                delete_dropped_metadata(&current, &table);
                return Ok(table);
            }
            Err((e @ Error::CommitConflict { .. }, _)) => {
                discard(&current, &written);
                last_error = Some(e);
            }
            Err((e, pending)) => {
                // The outcome is unknown: find it out by reading the pointer again.
                match pending.landed() {
                    Some(true) => {
                        let table = pending.into_table();
                        delete_dropped_metadata(&current, &table);
                        return Ok(table);
                    }
                    Some(false) => {
                        uncertain.snapshots.extend(snapshot_id);
                        uncertain.locations.push(pending.location.clone());
                        last_error = Some(e);
                    }
                    None => return Err(CommitFailure::Unknown(e)),
                }
            }
        }
    }
    let e = last_error.unwrap_or_else(|| Error::CommitConflict {
        table: base.ident().to_string(),
        expected: base.metadata_location().to_string(),
        found: "<unknown>".into(),
    });
    Err(uncertain.failure(e))
}

/// Attempts whose catalog swap may still land.
#[derive(Default)]
struct Uncertain {
    snapshots: HashSet<i64>,
    locations: Vec<String>,
}

impl Uncertain {
    /// Whether `current` holds one of the attempts: its snapshot in the history, or its
    /// metadata file as the current one or in the metadata log.
    fn landed_in(&self, current: &Table) -> bool {
        let md = current.metadata();
        md.snapshots()
            .any(|s| self.snapshots.contains(&s.snapshot_id()))
            || self.locations.iter().any(|l| {
                l == current.metadata_location()
                    || md.metadata_log().iter().any(|m| &m.metadata_file == l)
            })
    }

    /// A failure is definite unless an attempt's swap outcome is still unknown.
    fn failure(&self, e: Error) -> CommitFailure {
        if self.locations.is_empty() {
            CommitFailure::Definite(e)
        } else {
            CommitFailure::Unknown(e)
        }
    }
}

/// Iceberg's `write.metadata.delete-after-commit.enabled`: the metadata files of `base`'s log
/// that `committed`'s log no longer holds (it keeps `write.metadata.previous-versions-max`) are
/// deleted, as Iceberg Java does after a commit. Best effort: a file left behind is an orphan.
fn delete_dropped_metadata(base: &Table, committed: &Table) {
    let enabled = committed
        .properties()
        .is_ok_and(|p| p.metadata_delete_after_commit);
    if !enabled {
        return;
    }
    let kept: HashSet<&str> = committed
        .metadata()
        .metadata_log()
        .iter()
        .map(|m| m.metadata_file.as_str())
        .chain([committed.metadata_location()])
        .collect();
    for m in base.metadata().metadata_log() {
        if !kept.contains(m.metadata_file.as_str()) {
            let _ = base.storage().delete(&m.metadata_file);
        }
    }
}

/// Removes the files of an attempt that did not commit (best effort: leftovers are orphans).
fn discard(table: &Table, locations: &[String]) {
    for l in locations {
        let _ = table.storage().delete(l);
    }
}
