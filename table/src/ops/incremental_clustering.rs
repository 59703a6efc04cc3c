//! Incremental clustering (`rewrite_data_files(..., options => map('incremental', 'true'))`):
//! a Hilbert rewrite whose cost follows what arrived, not what is there.
//!
//! The table's [`ClusteredLayout`] cuts each partition's key space into ranges, one per clustered
//! file (a range runs from its file's first key to the next file's). Every live file the layout
//! does not list as clustered holds new rows: files appended since, and the deltas an earlier run
//! merged. Their rows are keyed on the layout's curve, and a run:
//! - re-clusters a range once its new rows reach `incremental.min-new-data-ratio` of its
//!   clustered rows: its clustered file and its new rows are rewritten into files of the target
//!   size inside the range (a range that grew past the target splits), which replace it in the
//!   layout, so key ranges stay globally disjoint;
//! - merges the appended rows outside those ranges, in key order, into delta files of the target
//!   size between the re-clustered ranges: a few files with small boxes instead of many appended
//!   ones, still new to the next run. The deltas of one run are a generation. By default every
//!   earlier delta is merged again (one generation, the fewest files per window); with
//!   `incremental.max-delta-generations` above 1, earlier generations are left alone
//!   (size-tiered, as in an LSM tree) unless they are no larger than what the run merges
//!   already or the cap would be passed, so a row is rewritten a few times before its range
//!   re-clusters instead of once per run;
//! - leaves every other clustered file alone, and does nothing when no range grew enough and
//!   nothing was appended since the last run.
//!
//! Partitions the layout does not know are clustered whole.

use std::collections::{BTreeMap, HashMap, HashSet};

use geoberg_crs::ColumnType;
use geoberg_rewrite::{KeyRange, RewriteOptions, RowKey, row_keys};
use iceberg::spec::DataFile;

use crate::clustered_layout::{ClusteredLayout, RangeFile};
use crate::error::{Error, Result};
use crate::table::{GeoColumn, Table};

/// What an incremental run rewrites.
#[derive(Debug, Clone, Default)]
pub(crate) struct IncrementalChoice {
    /// Per data file given to [`IncrementalChoice::of`]: whether it is rewritten.
    pub(crate) selected: Vec<bool>,
    /// Per partition: where the rewrite's tasks are cut (both ends of each re-clustered range).
    pub(crate) cuts: HashMap<String, Vec<u64>>,
    /// Per partition: the re-clustered ranges (output files inside them join the layout, the
    /// others are deltas); a partition the layout does not know is absent (clustered whole,
    /// everything written there joins the layout).
    pub(crate) reclustered: HashMap<String, Vec<KeyRange>>,
    /// Per partition: the generation of the deltas this run writes there.
    generations: HashMap<String, u64>,
}

impl IncrementalChoice {
    /// Chooses the ranges to re-cluster, and the deltas to merge again, among `files` (the live
    /// data files) of `table`, by the `incremental.*` options.
    pub(crate) fn of(
        table: &Table,
        layout: &ClusteredLayout,
        files: &[DataFile],
        geo: &GeoColumn,
        options: &RewriteOptions,
    ) -> Result<IncrementalChoice> {
        let min_new_data_ratio = options.incremental_min_new_data_ratio;
        let spec = layout.index()?.spec;
        let sphere = matches!(geo.column_type, ColumnType::Geography { .. });
        fn partition_of(f: &DataFile) -> String {
            format!("{:?}", f.partition())
        }
        let clustered: HashSet<&str> = layout
            .partitions
            .iter()
            .flat_map(|p| p.files.iter().map(|f| f.path.as_str()))
            .collect();
        let arrivals: Vec<&DataFile> = files
            .iter()
            .filter(|f| !clustered.contains(f.file_path()))
            .collect();

        // Rows of each arrival per range, from its keys.
        let paths: Vec<&str> = arrivals.iter().map(|f| f.file_path()).collect();
        let mut rows_in: HashMap<String, Vec<(usize, u64)>> = HashMap::new();
        if !paths.is_empty() {
            let scan = table.scan().select([geo.name.as_str()]).files(paths);
            let (tasks, _) = scan.plan_tasks()?;
            for task in &tasks {
                let Some(file) = arrivals.iter().find(|f| f.file_path() == task.path()) else {
                    continue;
                };
                let Some(part) = layout
                    .partitions
                    .iter()
                    .find(|p| p.partition == partition_of(file))
                else {
                    continue;
                };
                let firsts: Vec<u64> = part.files.iter().map(|f| f.first).collect();
                let mut counts: HashMap<usize, u64> = HashMap::new();
                for batch in scan.read_task(task)? {
                    let column = batch.column_by_name(&geo.name).ok_or_else(|| {
                        Error::corrupt(task.path(), format!("no column {:?}", geo.name))
                    })?;
                    let keys = row_keys(column.as_ref(), &spec, sphere, &geo.name)
                        .map_err(|e| Error::Rewrite(Box::new(e)))?;
                    for key in keys {
                        if let RowKey::Located { key, width, height } = key
                            && !part.oversize.is_some_and(|r| r.is_oversized(width, height))
                        {
                            let range = firsts.partition_point(|&f| f <= key).saturating_sub(1);
                            *counts.entry(range).or_default() += 1;
                        }
                    }
                }
                rows_in.insert(task.path().to_string(), counts.into_iter().collect());
            }
        }

        let live: HashSet<&str> = files.iter().map(DataFile::file_path).collect();
        let mut choice = IncrementalChoice::default();
        let mut chosen: HashSet<String> = HashSet::new();
        for part in &layout.partitions {
            let deltas: HashMap<&str, &RangeFile> =
                part.deltas.iter().map(|f| (f.path.as_str(), f)).collect();
            let new_here: Vec<&DataFile> = arrivals
                .iter()
                .copied()
                .filter(|f| partition_of(f) == part.partition)
                .collect();
            let mut new_rows = vec![0u64; part.files.len()];
            for f in &new_here {
                for &(range, n) in rows_in.get(f.file_path()).into_iter().flatten() {
                    new_rows[range] += n;
                }
            }
            let grown: Vec<usize> = (0..part.files.len())
                .filter(|&i| {
                    let file = &part.files[i];
                    let base = if live.contains(file.path.as_str()) {
                        file.rows
                    } else {
                        0
                    };
                    new_rows[i] > 0 && new_rows[i] as f64 >= min_new_data_ratio * base as f64
                })
                .collect();
            let appended = new_here.iter().any(|f| !deltas.contains_key(f.file_path()));
            if grown.is_empty() && !appended {
                continue;
            }
            chosen.extend(grown.iter().map(|&i| part.files[i].path.clone()));
            let firsts: Vec<u64> = part.files.iter().map(|f| f.first).collect();
            let ranges: Vec<KeyRange> = grown
                .iter()
                .map(|&i| KeyRange {
                    first: if i == 0 { 0 } else { firsts[i] },
                    last: firsts.get(i + 1).map_or(u64::MAX, |&next| next - 1),
                })
                .collect();
            // Appended files are merged, and so are the deltas with rows in a re-clustered range;
            // the other deltas by generation, as `generations_to_merge` decides.
            let in_reclustered = |d: &RangeFile| {
                ranges
                    .iter()
                    .any(|r| d.first <= r.last && r.first <= d.last)
            };
            // Sizes in rows: many small appended files hold fewer rows per byte than a delta.
            let (mut merged_rows, mut kept) = (0u64, Vec::new());
            for f in &new_here {
                match deltas.get(f.file_path()) {
                    Some(d) if !in_reclustered(d) => kept.push((d.generation, f)),
                    _ => {
                        merged_rows += f.record_count();
                        chosen.insert(f.file_path().to_string());
                    }
                }
            }
            let mut generation_rows: BTreeMap<u64, u64> = BTreeMap::new();
            for (generation, f) in &kept {
                *generation_rows.entry(*generation).or_default() += f.record_count();
            }
            let merged_generations = generations_to_merge(
                &generation_rows,
                merged_rows,
                options.incremental_max_delta_generations,
            );
            chosen.extend(
                kept.iter()
                    .filter(|(g, _)| merged_generations.contains(g))
                    .map(|(_, f)| f.file_path().to_string()),
            );
            let youngest = part.deltas.iter().map(|d| d.generation).max().unwrap_or(0);
            choice
                .generations
                .insert(part.partition.clone(), youngest + 1);
            // Cut at both ends of each re-clustered range; deltas fill the keys between.
            let mut cuts: Vec<u64> = ranges
                .iter()
                .flat_map(|r| [r.first, r.last.saturating_add(1)])
                .collect();
            cuts.sort_unstable();
            cuts.dedup();
            choice.cuts.insert(part.partition.clone(), cuts);
            choice.reclustered.insert(part.partition.clone(), ranges);
        }
        // New partitions are clustered whole.
        let known: HashSet<&str> = layout
            .partitions
            .iter()
            .map(|p| p.partition.as_str())
            .collect();
        choice.selected = files
            .iter()
            .map(|f| chosen.contains(f.file_path()) || !known.contains(partition_of(f).as_str()))
            .collect();
        Ok(choice)
    }

    /// The generation of the deltas this run writes in `partition`.
    pub(crate) fn delta_generation(&self, partition: &str) -> u64 {
        self.generations.get(partition).copied().unwrap_or(1)
    }

    /// Whether an output file of `partition` with keys `range` lies in a re-clustered range
    /// (or in a partition clustered whole), and so joins the layout.
    pub(crate) fn joins_layout(&self, partition: &str, range: KeyRange) -> bool {
        self.reclustered.get(partition).is_none_or(|ranges| {
            ranges
                .iter()
                .any(|r| r.first <= range.first && range.last <= r.last)
        })
    }
}

/// The generations of earlier deltas (`rows` by generation) a run that merges `merged_rows`
/// merges as well: the youngest ones while each is no larger than what is merged so far (so a
/// row is merged again only with at least as many rows as it already sits with: a few times in
/// all, not once per run), then the youngest of the rest while more than `max_generations` would
/// be left beside the run's own.
fn generations_to_merge(
    rows: &BTreeMap<u64, u64>,
    mut merged_rows: u64,
    max_generations: usize,
) -> HashSet<u64> {
    let youngest_first: Vec<(u64, u64)> = rows.iter().rev().map(|(&g, &n)| (g, n)).collect();
    let mut take = 0;
    while let Some(&(_, n)) = youngest_first.get(take)
        && n <= merged_rows
    {
        merged_rows += n;
        take += 1;
    }
    while youngest_first.len() - take + 1 > max_generations.max(1) {
        take += 1;
    }
    youngest_first[..take].iter().map(|&(g, _)| g).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merge(rows: &[(u64, u64)], merged: u64, max: usize) -> Vec<u64> {
        let rows: BTreeMap<u64, u64> = rows.iter().copied().collect();
        let mut g: Vec<u64> = generations_to_merge(&rows, merged, max)
            .into_iter()
            .collect();
        g.sort_unstable();
        g
    }

    #[test]
    fn younger_generations_no_larger_than_the_merge_join_it() {
        // 8 arrives over generations of 32, 16 and 8: 8 joins (16), then 16 joins (32), then
        // 32 joins (64).
        assert_eq!(merge(&[(1, 32), (2, 16), (3, 8)], 8, 8), vec![1, 2, 3]);
        // A larger younger generation stops the cascade.
        assert_eq!(merge(&[(1, 32), (2, 16), (3, 9)], 8, 8), Vec::<u64>::new());
        assert_eq!(merge(&[(1, 64), (2, 8)], 8, 8), vec![2]);
    }

    #[test]
    fn the_generation_cap_merges_the_youngest_first() {
        assert_eq!(merge(&[(1, 100), (2, 50), (3, 20)], 8, 3), vec![3]);
        assert_eq!(merge(&[(1, 100), (2, 50), (3, 20)], 8, 2), vec![2, 3]);
        // One generation at most: every earlier delta is merged again, every run.
        assert_eq!(merge(&[(1, 100), (2, 50)], 8, 1), vec![1, 2]);
        assert_eq!(merge(&[], 8, 1), Vec::<u64>::new());
    }
}
