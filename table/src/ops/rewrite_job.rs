//! A rewrite's tasks run by other processes (a cluster's executors): the job they are given, how
//! it splits into parts, what each part returns, and the coordinator's checks before its one
//! commit.
//!
//! The coordinator plans (reading only sampled keys), hands the plan's tasks to a
//! [`RewriteRunner`], and commits what the parts wrote exactly as a local rewrite does. A part
//! reopens the table version from its metadata file (no catalog is needed, only the object
//! store), runs its key-range tasks with `geoberg-rewrite` and returns its output files. Every
//! attempt of a part names its files after the rewrite and a fresh attempt id, so a retried
//! part never overwrites another's files, and the files of an attempt that died are orphans
//! that `remove-orphans` lists.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::Range;

use geoberg_rewrite::{RewriteError, RewriteOutcome, RewritePlan, execute_tasks};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::ident::TableIdent;
use crate::ops::rewrite_storage::TableRewriteStorage;
use crate::storage::Storage;
use crate::table::Table;

/// The tasks of one commit of a planned rewrite, as another process runs them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewriteJob {
    /// The table, `namespace.name` (in messages, and the reopened table's name).
    pub table: String,
    /// The metadata file of the table version the plan was made on.
    pub metadata_location: String,
    /// The rewrite's id: every output file's name starts with it.
    pub run: String,
    /// The whole plan (a part runs some of its tasks).
    pub plan: RewritePlan,
    /// The ids of the tasks to run, ascending.
    pub tasks: Vec<usize>,
}

/// What one part of a [`RewriteJob`] ran and wrote.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RewriteJobOutcome {
    /// The task ids it ran.
    pub tasks: Vec<usize>,
    /// Where it ran (`pid <n>`, or what the runner says), for the report.
    pub worker: String,
    /// Its output files and counts.
    pub outcome: RewriteOutcome,
}

/// Runs a rewrite's tasks somewhere else (a cluster); see [`crate::Rewrite::runner`].
///
/// ```no_run
/// use geoberg_table::{RewriteJob, RewriteJobOutcome, RewriteRunner, Storage};
///
/// /// Two parts, one after the other, each as an executor runs it.
/// #[derive(Debug)]
/// struct TwoParts;
///
/// impl RewriteRunner for TwoParts {
///     fn run(&self, job: &RewriteJob) -> geoberg_table::Result<Vec<RewriteJobOutcome>> {
///         let job = RewriteJob::from_json(&job.to_json()?)?; // what travels
///         job.split(2)
///             .iter()
///             .map(|part| job.run_tasks(&Storage::new(), part))
///             .collect()
///     }
/// }
/// # fn f(table: geoberg_table::Table) -> geoberg_table::Result<()> {
/// let (table, report) = table.rewrite().hilbert("geom", 16).runner(&TwoParts).execute()?;
/// assert!(report.workers.len() <= 2); // one part when the plan has one task
/// # Ok(()) }
/// ```
pub trait RewriteRunner: Send + Sync + fmt::Debug {
    /// Runs every task of `job`, in parts of the runner's choosing (e.g. [`RewriteJob::split`],
    /// each part by [`RewriteJob::run_tasks`]), and returns every part's outcome. An error
    /// commits nothing: the files of parts that finished are removed by the caller only when
    /// they are returned, else they are orphans for `remove-orphans`.
    fn run(&self, job: &RewriteJob) -> Result<Vec<RewriteJobOutcome>>;
}

impl RewriteJob {
    /// The job as JSON (what travels to a worker).
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| job_error(format!("cannot encode the job: {e}")))
    }

    /// A job from [`RewriteJob::to_json`]'s text.
    pub fn from_json(text: &str) -> Result<RewriteJob> {
        serde_json::from_str(text).map_err(|e| job_error(format!("not a rewrite job: {e}")))
    }

    /// The job's tasks in at most `parts` groups of consecutive tasks (tasks are ordered by
    /// partition and key, so a group reads few partitions' inputs), of about equal expected
    /// output bytes. Never an empty group.
    pub fn split(&self, parts: usize) -> Vec<Vec<usize>> {
        let weights: Vec<u64> = self
            .tasks
            .iter()
            .map(|&t| {
                self.plan
                    .tasks
                    .get(t)
                    .map_or(1, |t| t.expected_bytes.max(1))
            })
            .collect();
        split_by_weight(&weights, parts)
            .into_iter()
            .map(|r| self.tasks[r].to_vec())
            .collect()
    }

    /// Runs `tasks` (a part of this job): reopens the table version, reads its inputs and
    /// writes the output files through `storage`. On failure the files it wrote are removed.
    pub fn run_tasks(&self, storage: &Storage, tasks: &[usize]) -> Result<RewriteJobOutcome> {
        if let Some(t) = tasks.iter().find(|t| !self.tasks.contains(t)) {
            return Err(job_error(format!(
                "task {t} is not one of this job's tasks"
            )));
        }
        let ident = TableIdent::parse(&self.table)?;
        let table = Table::at_metadata_file(storage.clone(), ident, &self.metadata_location)?;
        let attempt = uuid::Uuid::new_v4().simple().to_string();
        let output =
            TableRewriteStorage::new(&table)?.with_run(format!("{}-{}", self.run, &attempt[..12]));
        let outcome = execute_tasks(&self.plan, tasks, &output)?;
        Ok(RewriteJobOutcome {
            tasks: tasks.to_vec(),
            worker: format!("pid {}", std::process::id()),
            outcome,
        })
    }

    /// The parts' outcomes as one, after checking that they ran every task of the job exactly
    /// once and wrote only this rewrite's files under `data_dir`.
    pub(crate) fn merge(
        &self,
        data_dir: &str,
        parts: &[RewriteJobOutcome],
    ) -> Result<RewriteOutcome> {
        let mut ran = BTreeMap::<usize, usize>::new();
        for part in parts {
            for &t in &part.tasks {
                *ran.entry(t).or_default() += 1;
            }
        }
        let wanted: BTreeSet<usize> = self.tasks.iter().copied().collect();
        let twice: Vec<usize> = ran
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(t, _)| *t)
            .collect();
        let missing: Vec<usize> = wanted
            .iter()
            .filter(|t| !ran.contains_key(t))
            .copied()
            .collect();
        let unknown: Vec<usize> = ran
            .keys()
            .filter(|t| !wanted.contains(t))
            .copied()
            .collect();
        if !(twice.is_empty() && missing.is_empty() && unknown.is_empty()) {
            return Err(job_error(format!(
                "the parts ran tasks {twice:?} more than once, missed {missing:?} and ran {unknown:?} \
                 which the job does not have"
            )));
        }
        let prefix = format!("{}/{}-", data_dir.trim_end_matches('/'), self.run);
        let mut added = Vec::new();
        for part in parts {
            for file in &part.outcome.added {
                if !part.tasks.contains(&file.task) || !file.location.starts_with(&prefix) {
                    return Err(job_error(format!(
                        "a part ({}) returned {} of task {}, which is not one of its tasks' \
                         files under {prefix}",
                        part.worker, file.location, file.task
                    )));
                }
                added.push(file.clone());
            }
        }
        // The order a local rewrite returns: by task (partition, class, key); a part returns
        // each task's files in key order, which the stable sort keeps.
        added.sort_by_key(|f| f.task);
        Ok(RewriteOutcome::of_tasks(
            &self.plan,
            &self.tasks,
            added,
            parts.iter().map(|p| p.outcome.spilled_bytes).sum(),
            parts
                .iter()
                .map(|p| p.outcome.peak_buffered_bytes)
                .max()
                .unwrap_or(0),
        ))
    }
}

/// `weights` cut into at most `parts` non-empty consecutive ranges, each closed once it reaches
/// its share of the total (or when every remaining range needs one of the remaining items).
fn split_by_weight(weights: &[u64], parts: usize) -> Vec<Range<usize>> {
    let parts = parts.clamp(1, weights.len().max(1));
    let total: u64 = weights.iter().sum();
    let mut ranges = Vec::with_capacity(parts);
    let (mut start, mut acc) = (0, 0u64);
    for (i, w) in weights.iter().enumerate() {
        acc += w;
        let ranges_after = parts - ranges.len() - 1;
        let share = total * (ranges.len() as u64 + 1) / parts as u64;
        if ranges_after > 0 && (acc >= share || weights.len() - i - 1 == ranges_after) {
            ranges.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < weights.len() {
        ranges.push(start..weights.len());
    }
    ranges
}

fn job_error(reason: String) -> Error {
    Error::from(RewriteError::InvalidPlan(reason))
}

#[cfg(test)]
mod tests {
    use super::split_by_weight;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// The ranges tile the items in order, none empty, as many as asked for (or items).
        #[test]
        fn splits_tile_the_tasks(
            weights in proptest::collection::vec(1u64..1_000_000, 0..60),
            parts in 1usize..20,
        ) {
            let ranges = split_by_weight(&weights, parts);
            let mut next = 0;
            for r in &ranges {
                prop_assert_eq!(r.start, next);
                prop_assert!(r.end > r.start);
                next = r.end;
            }
            prop_assert_eq!(next, weights.len());
            prop_assert_eq!(ranges.len(), parts.min(weights.len()));
            // No range but the last is heavier than its share plus one item.
            let total: u64 = weights.iter().sum();
            let heaviest = weights.iter().copied().max().unwrap_or(0);
            let n = ranges.len().max(1) as u64;
            for r in &ranges[..ranges.len().saturating_sub(1)] {
                let w: u64 = weights[r.clone()].iter().sum();
                prop_assert!(w <= total / n + heaviest + 1, "{w} of {total} in {n}");
            }
        }
    }
}
