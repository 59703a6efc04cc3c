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
    /// Writes `metadata` as the next metadata version of `base`, not yet visible.
    pub(crate) fn stage(base: &Table, metadata: TableMetadata) -> Result<PendingCommit> {
        let location = next_metadata_location(base, &metadata);
        PendingCommit::stage_at(base, metadata, location)
    }

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

/// Why a commit did not happen, split by what the caller may clean up.
#[derive(Debug)]
pub(crate) enum CommitFailure {
    /// Nothing was committed: the operation's own files (its data files) may be deleted.
    Definite(Error),
    /// The catalog may or may not hold the new snapshot: every file must stay.
    Unknown(Error),
}

impl CommitFailure {
    pub(crate) fn into_error(self) -> Error {
        match self {
            CommitFailure::Definite(e) | CommitFailure::Unknown(e) => e,
        }
    }
}

/// Validates, stages and commits `op` on `base`, re-applying it on newer metadata when another
/// writer committed first, under the table's `commit.retry.*` properties.
pub(crate) fn commit_with_retry(
    base: &Table,
    op: &dyn SnapshotOperation,
) -> std::result::Result<Table, CommitFailure> {
    let retry = base
        .properties()
        .map_err(CommitFailure::Definite)?
        .commit_retry;
    let started = Instant::now();
    let mut current = base.clone();
    // Snapshots of attempts whose swap outcome was unknown: if one shows up in the history,
    // that attempt committed.
    let mut uncertain: HashSet<i64> = HashSet::new();
    let mut last_error = None;
    for attempt in 0..=retry.num_retries {
        if attempt > 0 {
            if started.elapsed() + retry.backoff(attempt) > retry.total_timeout {
                break;
            }
            std::thread::sleep(retry.backoff(attempt));
            current = base.refresh().map_err(|e| match uncertain.is_empty() {
                true => CommitFailure::Definite(e),
                false => CommitFailure::Unknown(e),
            })?;
            if current
                .metadata()
                .snapshots()
                .any(|s| uncertain.contains(&s.snapshot_id()))
            {
                return Ok(current);
            }
        }
        // A retryable error here is a base that moved on and whose snapshot was expired:
        // re-applying on the reloaded metadata is the fix, as for a lost swap.
        if let Err(e) = op.validate(&current) {
            if e.is_retryable() && attempt < retry.num_retries {
                last_error = Some(e);
                continue;
            }
            return Err(definite_unless(e, &uncertain));
        }
        let mut producer = SnapshotProducer::new(&current, op.operation());
        let staged = op.apply(&mut producer).and_then(|()| producer.stage());
        let pending = match staged {
            Ok(p) => p,
            Err(e) => {
                discard(&current, producer.written());
                if e.is_retryable() && attempt < retry.num_retries {
                    last_error = Some(e);
                    continue;
                }
                return Err(definite_unless(e, &uncertain));
            }
        };
        let written = producer.written().to_vec();
        let snapshot_id = producer.snapshot_id();
        match pending.swap() {
            Ok(table) => return Ok(table),
            Err((e @ Error::CommitConflict { .. }, _)) => {
                discard(&current, &written);
                last_error = Some(e);
            }
            Err((e, pending)) => {
                // The outcome is unknown: find it out by reading the pointer again.
                match pending.landed() {
                    Some(true) => return Ok(pending.into_table()),
                    Some(false) => {
                        uncertain.insert(snapshot_id);
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
    Err(definite_unless(e, &uncertain))
}

/// A failure is definite unless an attempt's swap outcome is still unknown.
fn definite_unless(e: Error, uncertain: &HashSet<i64>) -> CommitFailure {
    if uncertain.is_empty() {
        CommitFailure::Definite(e)
    } else {
        CommitFailure::Unknown(e)
    }
}

/// Removes the files of an attempt that did not commit (best effort: leftovers are orphans).
fn discard(table: &Table, locations: &[String]) {
    for l in locations {
        let _ = table.storage().delete(l);
    }
}
