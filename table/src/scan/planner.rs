//! The one file planner: which live data files of a table version may hold a row passing a
//! [`ScanFilter`]. Spatial leaves are decided by the table's cached file index of their column
//! (`pruning`'s R-tree over the manifest bounds), column leaves by each file's column bounds,
//! null and NaN counts (as Iceberg's inclusive metrics evaluator decides). The table's own
//! scan, `files_matching`, the rewrite and backfill procedures, the row-level changes and the
//! DataFusion scan nodes all plan here.

use std::collections::{HashMap, HashSet};

use geoberg_pruning::{FileBounds, PrunePlan};
use geoberg_sql::Predicate;
use iceberg::spec::DataFile;

use super::column_stats::ColumnLeaf;
use super::filter::ScanFilter;
use crate::error::Result;
use crate::file_index::TableFileIndex;
use crate::table::Table;

/// The files a filter keeps, decided once from the manifests, with what was skipped and why.
#[derive(Debug, Clone, Default)]
pub struct FilePlan {
    /// Data files to read, in manifest order, each with its box on the filter's first spatial
    /// column (`None` without a spatial leaf).
    pub files: Vec<FileBounds>,
    /// Live data files of the version.
    pub files_total: usize,
    /// Files skipped on their spatial bounds.
    pub files_skipped_spatial: usize,
    /// Files (of those the spatial bounds keep) skipped on column bounds or null counts.
    pub files_skipped_columns: usize,
    /// Bytes of all live data files.
    pub bytes_total: u64,
    /// Rows of all live data files (their `record_count`).
    pub records_total: u64,
    /// How the decisions were made: the bounds used, per spatial column what was read and
    /// skipped, or why every file is read.
    pub reasons: Vec<String>,
    /// The file-pruning plan when the filter is one spatial leaf (its per-file decisions).
    /// Planned from the persisted file-bounds index, it covers only the files of the manifests
    /// not skipped whole on their boxes (the others count in `files_total`, not here).
    pub pruning: Option<PrunePlan>,
}

impl FilePlan {
    /// Files read.
    pub fn files_read(&self) -> usize {
        self.files.len()
    }

    /// Bytes of the files read.
    pub fn bytes_read(&self) -> u64 {
        self.files.iter().map(|f| f.size_in_bytes).sum()
    }

    /// Rows of the files read (their `record_count`, deletes not subtracted).
    pub fn records_read(&self) -> u64 {
        self.files.iter().map(|f| f.record_count).sum()
    }
}

impl Table {
    /// Plans `filter` against this version's live data files: the files that may hold a
    /// matching row, read from the cached file index when the filter is spatial (no manifest is
    /// read twice for one version), and from every column's statistics when it compares
    /// ordinary columns. Fails on a filter the table cannot take (a column it lacks, a window
    /// in another CRS, a literal of the wrong type).
    pub fn plan_files(&self, filter: &ScanFilter) -> Result<FilePlan> {
        let mut reasons = Vec::new();
        let mut fallback = None;
        // One window and nothing else, on a version whose file index is not in memory yet: the
        // persisted file-bounds index reads a few small files instead of every manifest.
        if let ScanFilter::Spatial {
            column,
            filter: window,
        } = filter
            && self.metadata().current_snapshot().is_some()
            && self
                .derived()
                .get::<TableFileIndex>(&format!("file-index/{column}"))
                .is_none()
        {
            match self.plan_from_bounds_index(column, window)? {
                Ok(p) => {
                    return Ok(FilePlan {
                        files_skipped_spatial: p.files_total - p.files.len(),
                        files: p.files,
                        files_total: p.files_total,
                        files_skipped_columns: 0,
                        bytes_total: p.bytes_total,
                        records_total: p.records_total,
                        reasons: p.reasons,
                        pruning: Some(p.pruning),
                    });
                }
                Err(why) => fallback = Some(format!("{why}; planned from the manifests")),
            }
        }
        // One window on an index in memory: the plan's positions are the files, with no path
        // looked up (at 1 M files a lookup per file costs more than the plan).
        if let ScanFilter::Spatial {
            column,
            filter: window,
        } = filter
        {
            let index = self.file_index(column)?;
            let plan = index.plan(window)?;
            note_spatial_reasons(column, &index, &plan, &mut reasons);
            reasons.extend(fallback);
            let entries = index.files().entries();
            let files: Vec<FileBounds> = plan.read_indices().map(|i| entries[i].clone()).collect();
            return Ok(FilePlan {
                files_total: entries.len(),
                files_skipped_spatial: entries.len() - files.len(),
                files_skipped_columns: 0,
                bytes_total: entries.iter().map(|f| f.size_in_bytes).sum(),
                records_total: entries.iter().map(|f| f.record_count).sum(),
                files,
                reasons,
                pruning: Some(plan),
            });
        }
        let spatial = filter.spatial_columns();
        let files: Vec<FileBounds> = match spatial.first() {
            Some(column) => self.file_index(column)?.files().entries().to_vec(),
            None => self.live_files()?,
        };
        let stats: HashMap<String, DataFile> = if filter.has_column_leaves() {
            self.data_files()?
                .into_iter()
                .map(|f| (f.file_path().to_string(), f))
                .collect()
        } else {
            HashMap::new()
        };
        let mut pruning = None;
        let decided = decide(self, filter, &mut reasons, &mut pruning)?;
        if !matches!(decided, Decided::Skips(_)) {
            pruning = None;
        }
        if filter.is_anything() {
            reasons.push("no filter the files' bounds can decide: every file is read".into());
        }
        reasons.extend(fallback);
        let mut plan = FilePlan {
            files_total: files.len(),
            reasons,
            pruning,
            ..FilePlan::default()
        };
        for file in files {
            plan.bytes_total += file.size_in_bytes;
            plan.records_total += file.record_count;
            let data_file = stats.get(&file.path);
            if !decided.may_match(&file.path, None) {
                plan.files_skipped_spatial += 1;
            } else if !decided.may_match(&file.path, Some(data_file)) {
                plan.files_skipped_columns += 1;
            } else {
                plan.files.push(file);
            }
        }
        Ok(plan)
    }

    /// For each of `files` (live data files of this version, fully decoded), whether it may
    /// hold a row passing `filter`: [`Table::plan_files`] for callers that hold the manifest
    /// entries already (a rewrite keeps their partitions and statistics).
    pub(crate) fn select_data_files(
        &self,
        files: &[DataFile],
        filter: &ScanFilter,
    ) -> Result<Vec<bool>> {
        let decided = decide(self, filter, &mut Vec::new(), &mut None)?;
        Ok(files
            .iter()
            .map(|f| decided.may_match(f.file_path(), Some(Some(f))))
            .collect())
    }

    /// Live data files of the current snapshot that may hold a row matching `predicate`,
    /// decided from their statistics alone (column bounds, null counts, partition values and
    /// spatial bounds), as Iceberg's inclusive metrics evaluator decides: a file is dropped only
    /// when its statistics prove that no row matches.
    pub fn files_matching(&self, predicate: &Predicate) -> Result<Vec<DataFile>> {
        let filter = ScanFilter::from_predicate(self, predicate)?;
        let files = self.data_files()?;
        let keep = self.select_data_files(&files, &filter)?;
        Ok(files
            .into_iter()
            .zip(keep)
            .filter_map(|(f, k)| k.then_some(f))
            .collect())
    }
}

/// A filter with its spatial leaves decided: each holds the files its column's index skips.
enum Decided {
    Anything,
    Nothing,
    And(Vec<Decided>),
    Or(Vec<Decided>),
    Column(ColumnLeaf),
    /// Paths the leaf's file index proved hold no match; any other file may match (a file the
    /// index does not list is never skipped).
    Skips(HashSet<String>),
}

/// Plans every spatial leaf once against its column's file index, noting the index's reasons
/// (once per column) and what each leaf read and skipped. `pruning` receives the last leaf's
/// plan.
fn decide(
    table: &Table,
    filter: &ScanFilter,
    reasons: &mut Vec<String>,
    pruning: &mut Option<PrunePlan>,
) -> Result<Decided> {
    Ok(match filter {
        ScanFilter::Anything => Decided::Anything,
        ScanFilter::Nothing => Decided::Nothing,
        ScanFilter::And(ps) => Decided::And(
            ps.iter()
                .map(|p| decide(table, p, reasons, pruning))
                .collect::<Result<_>>()?,
        ),
        ScanFilter::Or(ps) => Decided::Or(
            ps.iter()
                .map(|p| decide(table, p, reasons, pruning))
                .collect::<Result<_>>()?,
        ),
        ScanFilter::Column(p) => Decided::Column(ColumnLeaf::new(table, p)?),
        ScanFilter::Spatial { column, filter } => {
            let index = table.file_index(column)?;
            let plan = index.plan(filter)?;
            note_spatial_reasons(column, &index, &plan, reasons);
            let entries = index.files().entries();
            let mut skips: HashSet<String> = entries.iter().map(|e| e.path.clone()).collect();
            for i in plan.read_indices() {
                skips.remove(&entries[i].path);
            }
            *pruning = Some(plan);
            Decided::Skips(skips)
        }
    })
}

/// The index's reasons (once) and what the plan of a window on `column` read and skipped.
fn note_spatial_reasons(
    column: &str,
    index: &TableFileIndex,
    plan: &PrunePlan,
    reasons: &mut Vec<String>,
) {
    for r in index.reasons() {
        if !reasons.contains(r) {
            reasons.push(r.clone());
        }
    }
    let (read, skipped) = (plan.read_summary(), plan.skip_summary());
    if !read.is_empty() {
        reasons.push(format!("{column}: files read: {}", read.join(", ")));
    }
    if !skipped.is_empty() {
        reasons.push(format!("{column}: files skipped: {}", skipped.join(", ")));
    }
}

impl Decided {
    /// Whether a row of the file at `path` may pass. `stats`: `None` leaves column conditions
    /// undecided (the spatial part alone); `Some(file)` decides them on the file's statistics
    /// (`Some(None)`: the file has none, and may match).
    fn may_match(&self, path: &str, stats: Option<Option<&DataFile>>) -> bool {
        match self {
            Decided::Anything => true,
            Decided::Nothing => false,
            Decided::And(ps) => ps.iter().all(|p| p.may_match(path, stats)),
            Decided::Or(ps) => ps.iter().any(|p| p.may_match(path, stats)),
            Decided::Column(p) => match stats {
                Some(Some(file)) => p.may_match(file),
                _ => true,
            },
            Decided::Skips(skips) => !skips.contains(path),
        }
    }
}
