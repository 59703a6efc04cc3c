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
//! - merges every other new row, in key order, into delta files of the target size between the
//!   re-clustered ranges: a few files with small boxes instead of many appended ones, still new
//!   to the next run;
//! - leaves every other clustered file alone, and does nothing when no range grew enough and
//!   nothing was appended since the last run.
//!
//! Partitions the layout does not know are clustered whole.

use std::collections::{HashMap, HashSet};

use geoberg_crs::ColumnType;
use geoberg_rewrite::{KeyRange, RowKey, row_keys};
use iceberg::spec::DataFile;

use crate::clustered_layout::ClusteredLayout;
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
}

impl IncrementalChoice {
    /// Chooses the ranges to re-cluster among `files` (the live data files) of `table`.
    pub(crate) fn of(
        table: &Table,
        layout: &ClusteredLayout,
        files: &[DataFile],
        geo: &GeoColumn,
        min_new_data_ratio: f64,
    ) -> Result<IncrementalChoice> {
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
            let deltas: HashSet<&str> = part.deltas.iter().map(|f| f.path.as_str()).collect();
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
            let appended = new_here.iter().any(|f| !deltas.contains(f.file_path()));
            if grown.is_empty() && !appended {
                continue;
            }
            chosen.extend(grown.iter().map(|&i| part.files[i].path.clone()));
            chosen.extend(new_here.iter().map(|f| f.file_path().to_string()));
            let firsts: Vec<u64> = part.files.iter().map(|f| f.first).collect();
            let ranges: Vec<KeyRange> = grown
                .iter()
                .map(|&i| KeyRange {
                    first: if i == 0 { 0 } else { firsts[i] },
                    last: firsts.get(i + 1).map_or(u64::MAX, |&next| next - 1),
                })
                .collect();
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
