//! Planning a scan in geoberg's terms: which data files (the table crate's file planner, on
//! the pushed filters translated into its `ScanFilter`), which of their row groups (Parquet geo
//! statistics), and how the work spreads over DataFusion's partitions.

use std::sync::Arc;

use datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use datafusion::error::Result;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use futures::StreamExt;
use geoberg_pruning::FileBounds;
use geoberg_table::{ScanFilter, Table};
use object_store::{ObjectMeta, ObjectStore};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};
use serde::{Deserialize, Serialize};

use crate::deleted_rows::DeletedRows;
use crate::pushdown::PushedFilters;
use crate::store::object_path;

/// Footers read at once while planning.
const FOOTER_READS_IN_FLIGHT: usize = 16;

/// One file (or some of its row groups) that one partition reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSlice {
    /// The data file's location in the manifest (`file:///...`, `s3://...`).
    pub location: String,
    /// File size in bytes (from the manifest).
    pub size: u64,
    /// The row groups to read, when the footer was read at planning; `None`: all.
    pub row_groups: Option<RowGroupSelection>,
    /// Rows this slice returns, when known (the manifest's count, or the kept row groups'),
    /// deleted rows not counted.
    pub rows: Option<u64>,
    /// The file's deleted rows (from deletion vectors and position delete files), skipped by
    /// the reader; `None` when none are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted: Option<DeletedRows>,
}

/// The row groups of a file to read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowGroupSelection {
    /// Row groups in the file.
    pub count: usize,
    /// Indices to read, ascending.
    pub read: Vec<usize>,
    /// Rows of every row group of the file (where each starts: what deleted positions are
    /// relative to).
    pub rows: Vec<u64>,
}

impl RowGroupSelection {
    /// The file row where row group `index` starts, and its rows.
    pub fn span(&self, index: usize) -> (u64, u64) {
        let start = self.rows[..index].iter().sum();
        (start, self.rows[index])
    }
}

/// What planning skipped and why: the scan node's display and metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PruningSummary {
    /// Live data files of the snapshot.
    pub files_total: usize,
    /// Files skipped on their spatial bounds.
    pub files_skipped_spatial: usize,
    /// Files (of those not skipped spatially) skipped on column bounds or partition values.
    pub files_skipped_columns: usize,
    /// Files read.
    pub files_read: usize,
    /// Bytes of all live data files.
    pub bytes_total: u64,
    /// Bytes of the files read.
    pub bytes_read: u64,
    /// Row groups in the files read, when their footers were read at planning.
    pub row_groups_total: usize,
    /// Row groups skipped on their Parquet geo statistics.
    pub row_groups_skipped: usize,
    /// Compressed bytes of the skipped row groups.
    pub row_group_bytes_skipped: u64,
    /// Whether the footers of the files read were read at planning.
    pub footers_read: bool,
    /// How the decisions were made, and why nothing could be skipped where so.
    pub reasons: Vec<String>,
}

/// The files to read, before their footers are looked at, and the filter they were planned
/// with (which then selects their row groups).
#[derive(Debug, Clone)]
pub(crate) struct FileChoice {
    pub files: Vec<FileBounds>,
    pub summary: PruningSummary,
    pub filter: ScanFilter,
}

/// Chooses the data files of `table`'s current snapshot that may hold a row matching `pushed`:
/// the filters translated into the table crate's [`ScanFilter`], planned by its file planner.
/// A filter the planner refuses prunes nothing (the reasons say why): the engine applies every
/// filter to the rows again, so reading more is never wrong. Blocking (reads manifests): run it
/// off the async threads.
pub(crate) fn choose_files(
    table: &Table,
    pushed: &PushedFilters,
) -> geoberg_table::Result<FileChoice> {
    let (mut filter, refused) = pushed.scan_filter(table);
    let mut plan = match table.plan_files(&filter) {
        Ok(plan) => plan,
        Err(e) => {
            filter = ScanFilter::Anything;
            let mut plan = table.plan_files(&filter)?;
            plan.reasons = vec![format!("no file skipping on {}: {e}", pushed.spatial)];
            plan
        }
    };
    plan.reasons.extend(refused);
    let summary = PruningSummary {
        files_total: plan.files_total,
        files_skipped_spatial: plan.files_skipped_spatial,
        files_skipped_columns: plan.files_skipped_columns,
        files_read: plan.files_read(),
        bytes_total: plan.bytes_total,
        bytes_read: plan.bytes_read(),
        reasons: plan.reasons,
        ..PruningSummary::default()
    };
    Ok(FileChoice {
        files: plan.files,
        summary,
        filter,
    })
}

/// The object metadata a data file is read and cached under. Data files never change once
/// written, so the manifest's size and a fixed modification time identify them.
pub(crate) fn object_meta(location: &str, size: u64) -> Result<ObjectMeta> {
    Ok(ObjectMeta {
        location: object_path(location)?,
        last_modified: chrono::DateTime::UNIX_EPOCH,
        size,
        e_tag: None,
        version: None,
    })
}

/// Reads the footers of `files` (through DataFusion's file metadata cache, so that the scan
/// does not read them again).
pub(crate) async fn read_footers(
    store: &Arc<dyn ObjectStore>,
    cache: &Arc<dyn FileMetadataCache>,
    files: &[FileBounds],
) -> Result<Vec<Arc<ParquetMetaData>>> {
    let metas = files
        .iter()
        .map(|f| object_meta(&f.path, f.size_in_bytes))
        .collect::<Result<Vec<_>>>()?;
    let reads = metas.into_iter().map(|meta| {
        let store = Arc::clone(store);
        let cache = Arc::clone(cache);
        async move {
            DFParquetMetadata::new(store.as_ref(), &meta)
                .with_file_metadata_cache(Some(cache))
                .with_page_index_policy(Some(PageIndexPolicy::Skip))
                .fetch_metadata()
                .await
        }
    });
    futures::stream::iter(reads)
        .buffered(FOOTER_READS_IN_FLIGHT)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect()
}

/// What a file's footer told the planner: the row groups to read, and each row group's
/// compressed bytes and rows.
#[derive(Debug, Clone)]
pub(crate) struct FooterPlan {
    pub selection: RowGroupSelection,
    pub sizes: Vec<(u64, u64)>,
}

/// The row groups to read of each file whose footer was read, by the table's row-group planner
/// on the filter the files were chosen with (a filter it cannot decide keeps every row group),
/// counted into `summary`.
pub(crate) fn plan_row_groups(
    table: &Table,
    footers: &[Arc<ParquetMetaData>],
    filter: &ScanFilter,
    summary: &mut PruningSummary,
) -> Vec<Option<FooterPlan>> {
    summary.footers_read = true;
    footers
        .iter()
        .map(|footer| {
            let keep = filter
                .select_row_groups(table, footer)
                .unwrap_or_else(|_| vec![true; footer.num_row_groups()]);
            let sizes: Vec<(u64, u64)> = footer
                .row_groups()
                .iter()
                .map(|rg| {
                    (
                        rg.compressed_size().max(0) as u64,
                        rg.num_rows().max(0) as u64,
                    )
                })
                .collect();
            summary.row_groups_total += keep.len();
            for (k, (bytes, _)) in keep.iter().zip(&sizes) {
                if !k {
                    summary.row_groups_skipped += 1;
                    summary.row_group_bytes_skipped += bytes;
                }
            }
            let read = keep
                .iter()
                .enumerate()
                .filter_map(|(i, k)| k.then_some(i))
                .collect();
            Some(FooterPlan {
                selection: RowGroupSelection {
                    count: keep.len(),
                    read,
                    rows: sizes.iter().map(|&(_, rows)| rows).collect(),
                },
                sizes,
            })
        })
        .collect()
}

/// A unit of work: a whole file, or one row group of it.
struct Unit {
    file: usize,
    row_group: Option<usize>,
    bytes: u64,
    rows: Option<u64>,
}

/// Spreads the files (and, where their footers are known, their row groups) over at most
/// `target_partitions` partitions of about equal bytes, and of at least `partition_bytes`
/// each where that is more than 0 (one partition for a small scan), keeping each file's row groups in
/// order and together where they fall in one partition. `deleted` holds each file's deleted
/// rows: row groups with no live row are not read, and row counts leave deleted rows out.
pub(crate) fn partition(
    files: &[FileBounds],
    selections: &[Option<FooterPlan>],
    deleted: &[Option<DeletedRows>],
    target_partitions: usize,
    partition_bytes: u64,
) -> Vec<Vec<FileSlice>> {
    let mut units = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let deleted = deleted[i].as_ref();
        match &selections[i] {
            Some(FooterPlan { selection, sizes }) => {
                for &rg in &selection.read {
                    let (start, rows) = selection.span(rg);
                    let live = rows - deleted.map_or(0, |d| d.count_in(start, rows));
                    if live == 0 && rows > 0 {
                        continue;
                    }
                    units.push(Unit {
                        file: i,
                        row_group: Some(rg),
                        bytes: sizes[rg].0.max(1),
                        rows: Some(live),
                    });
                }
            }
            None => units.push(Unit {
                file: i,
                row_group: None,
                bytes: file.size_in_bytes.max(1),
                rows: deleted
                    .map(|d| {
                        file.record_count
                            .checked_sub(d.count_in(0, file.record_count))
                    })
                    .unwrap_or(Some(file.record_count)),
            }),
        }
    }
    let total: u64 = units.iter().map(|u| u.bytes).sum::<u64>().max(1);
    let mut n = target_partitions.max(1) as u128;
    if partition_bytes > 0 {
        n = n.min(u128::from(total.div_ceil(partition_bytes)));
    }
    let mut partitions: Vec<Vec<FileSlice>> = vec![Vec::new(); n as usize];
    let mut before = 0u64;
    for unit in units {
        // The partition of the unit's middle byte: contiguous runs of about total / n bytes.
        let middle = u128::from(before) + u128::from(unit.bytes) / 2;
        let p = ((middle * n / u128::from(total)) as usize).min(n as usize - 1);
        before += unit.bytes;
        let file = &files[unit.file];
        let current = &mut partitions[p];
        match (unit.row_group, current.last_mut()) {
            (Some(rg), Some(last)) if last.location == file.path && last.row_groups.is_some() => {
                if let Some(sel) = last.row_groups.as_mut() {
                    sel.read.push(rg);
                }
                last.rows = last.rows.zip(unit.rows).map(|(a, b)| a + b);
            }
            (row_group, _) => current.push(FileSlice {
                location: file.path.clone(),
                size: file.size_in_bytes,
                row_groups: row_group.map(|rg| RowGroupSelection {
                    read: vec![rg],
                    ..selections[unit.file]
                        .as_ref()
                        .map(|f| f.selection.clone())
                        .unwrap_or_else(|| RowGroupSelection {
                            count: 0,
                            read: Vec::new(),
                            rows: Vec::new(),
                        })
                }),
                rows: unit.rows,
                deleted: deleted[unit.file].clone(),
            }),
        }
    }
    partitions.retain(|p| !p.is_empty());
    if partitions.is_empty() {
        partitions.push(Vec::new());
    }
    partitions
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, bytes: u64) -> FileBounds {
        FileBounds::new(name, 10, bytes, None)
    }

    #[test]
    fn files_spread_by_size_and_row_groups_split_across_partitions() {
        let files = [
            file("a", 100),
            file("b", 100),
            file("c", 100),
            file("d", 100),
        ];
        let none = vec![None; 4];
        let parts = partition(&files, &none, &[None, None, None, None], 2, 0);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2]);

        // One file of four row groups, two of them kept, over four partitions.
        let one = [file("big", 400)];
        let sel = vec![Some(FooterPlan {
            selection: RowGroupSelection {
                count: 4,
                read: vec![0, 2, 3],
                rows: vec![5; 4],
            },
            sizes: vec![(100, 5), (100, 5), (100, 5), (100, 5)],
        })];
        let parts = partition(&one, &sel, &[None], 4, 0);
        let read: Vec<Vec<usize>> = parts
            .iter()
            .flat_map(|p| p.iter().map(|s| s.row_groups.clone().unwrap().read))
            .collect();
        assert_eq!(read, [vec![0], vec![2], vec![3]]);
        assert!(parts.iter().flatten().all(|s| s.rows == Some(5)));

        // Nothing to read: one empty partition.
        assert_eq!(
            partition(&[], &[], &[], 8, 0),
            vec![Vec::<FileSlice>::new()]
        );

        // Deleted rows: row group 2 (rows 10..15) entirely, one row of row group 3.
        let vector = geoberg_table::DeletionVector::from_positions([10, 11, 12, 13, 14, 16]);
        let deleted = [Some(DeletedRows::from_vector(&vector.unwrap()))];
        let parts = partition(&one, &sel, &deleted, 4, 0);
        let read: Vec<(Vec<usize>, Option<u64>)> = parts
            .iter()
            .flatten()
            .map(|s| (s.row_groups.clone().unwrap().read, s.rows))
            .collect();
        assert_eq!(read, [(vec![0], Some(5)), (vec![3], Some(4))]);
    }

    #[test]
    fn partitions_hold_at_least_the_bytes_asked_for() {
        let files: Vec<FileBounds> = (0..10).map(|i| file(&format!("f{i}"), 100)).collect();
        let none = vec![None; 10];
        let deleted = vec![None; 10];
        let count = |target, bytes| partition(&files, &none, &deleted, target, bytes).len();
        assert_eq!(count(8, 0), 8);
        assert_eq!(
            count(8, 250),
            4,
            "1,000 bytes in partitions of at least 250"
        );
        assert_eq!(count(8, 1_000), 1);
        assert_eq!(count(8, 1 << 30), 1, "a small scan is one partition");
        assert_eq!(count(2, 100), 2, "never more than the target");
        let all: Vec<String> = partition(&files, &none, &deleted, 8, 250)
            .into_iter()
            .flatten()
            .map(|s| s.location)
            .collect();
        assert_eq!(all.len(), 10, "every file once: {all:?}");
    }
}
