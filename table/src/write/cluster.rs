//! Cluster on write: on a table a Hilbert rewrite clustered, appended rows are keyed on the
//! rewrite's curve and cut at the key ranges it recorded ([`ClusteredLayout`]), so that each new
//! file holds the rows of one range (or of a few neighbouring ones, when one range would get
//! fewer than `geoberg.write.cluster-on-write.min-file-rows`) and its box stays small. Without it
//! every appended file covers the whole extent of its rows, and every window reads it.
//!
//! Rows a rewrite keeps apart are kept apart here too: rows whose bbox is larger than the
//! partition's oversize rule go to one file, rows without a location (null, empty, or outside the
//! curve's bounds) to another.

use std::collections::HashMap;

use arrow_array::{RecordBatch, UInt32Array};
use arrow_select::concat::concat_batches;
use arrow_select::take::take_record_batch;
use geoberg_crs::{ColumnType, HilbertSpec};
use geoberg_rewrite::{OversizeRule, RowKey, row_keys};
use iceberg::spec::Struct;

use crate::clustered_layout::ClusteredLayout;
use crate::error::{Error, Result};
use crate::table::Table;

/// How one table's appends are cut along its clustered layout.
#[derive(Debug, Clone)]
pub(crate) struct ClusterOnWrite {
    column: String,
    spec: HilbertSpec,
    sphere: bool,
    min_file_rows: usize,
    /// First keys of each partition's ranges (ascending) and its oversize rule.
    partitions: HashMap<String, (Vec<u64>, Option<OversizeRule>)>,
}

impl ClusterOnWrite {
    /// The cutter of `table`'s appends: when cluster on write is on (the default) and the table
    /// has a clustered layout.
    pub(crate) fn of(table: &Table) -> Result<Option<ClusterOnWrite>> {
        let properties = table.properties()?;
        if !properties.cluster_on_write {
            return Ok(None);
        }
        let Some(layout) = ClusteredLayout::current(table)? else {
            return Ok(None);
        };
        // A plain binary column of WKB counts too (tables other engines wrote).
        let Ok(geo) = table.geo_column(&layout.column) else {
            return Ok(None);
        };
        Ok(Some(ClusterOnWrite {
            column: layout.column.clone(),
            spec: layout.index()?.spec,
            sphere: matches!(geo.column_type, ColumnType::Geography { .. }),
            min_file_rows: properties.cluster_min_file_rows,
            partitions: layout
                .partitions
                .into_iter()
                .map(|p| {
                    let firsts = p.files.iter().map(|f| f.first).collect();
                    (p.partition, (firsts, p.oversize))
                })
                .collect(),
        }))
    }

    /// The rows of one partition's `batches`, cut into files: one per group of neighbouring key
    /// ranges (each sorted by key), then the oversized rows, then the unlocated ones. A
    /// partition the layout does not know is one file sorted by key.
    pub(crate) fn files(
        &self,
        partition: &Struct,
        batches: Vec<RecordBatch>,
    ) -> Result<Vec<Vec<RecordBatch>>> {
        let Some(first) = batches.first() else {
            return Ok(Vec::new());
        };
        let all = concat_batches(&first.schema(), &batches)?;
        let geometry = all.column_by_name(&self.column).ok_or_else(|| {
            Error::InvalidData(format!("appended rows have no column {:?}", self.column))
        })?;
        let keys = row_keys(geometry.as_ref(), &self.spec, self.sphere, &self.column)
            .map_err(|e| Error::Rewrite(Box::new(e)))?;
        let (firsts, oversize) = match self.partitions.get(&format!("{partition:?}")) {
            Some((firsts, oversize)) => (firsts.as_slice(), *oversize),
            None => (&[][..], None),
        };
        // Rows by range (a key before the first range goes to the first), then the two apart.
        let ranges = firsts.len().max(1);
        let (oversized, unlocated) = (ranges, ranges + 1);
        let mut buckets: Vec<Vec<(u64, u32)>> = vec![Vec::new(); ranges + 2];
        for (row, key) in keys.iter().enumerate() {
            let row = row as u32;
            match *key {
                RowKey::Located { key, width, height } => {
                    if oversize.is_some_and(|r| r.is_oversized(width, height)) {
                        buckets[oversized].push((key, row));
                    } else {
                        let range = firsts.partition_point(|&f| f <= key).saturating_sub(1);
                        buckets[range].push((key, row));
                    }
                }
                RowKey::Unlocated | RowKey::OutsideCurve => buckets[unlocated].push((0, row)),
            }
        }
        let apart = buckets.split_off(ranges);
        let mut files = Vec::new();
        for group in group_ranges(buckets, self.min_file_rows)
            .into_iter()
            .chain(apart)
        {
            if group.is_empty() {
                continue;
            }
            files.push(vec![take_sorted(&all, group)?]);
        }
        Ok(files)
    }
}

/// Neighbouring ranges' rows merged until each group holds at least `min_rows` rows (a last
/// group short of it joins the one before); empty ranges add nothing.
fn group_ranges(ranges: Vec<Vec<(u64, u32)>>, min_rows: usize) -> Vec<Vec<(u64, u32)>> {
    let mut groups: Vec<Vec<(u64, u32)>> = Vec::new();
    let mut open: Vec<(u64, u32)> = Vec::new();
    for rows in ranges {
        open.extend(rows);
        if open.len() >= min_rows.max(1) {
            groups.push(std::mem::take(&mut open));
        }
    }
    if !open.is_empty() {
        match groups.last_mut() {
            Some(last) => last.extend(open),
            None => groups.push(open),
        }
    }
    groups
}

/// The rows of `group` taken from `all`, by key (ties in input order).
fn take_sorted(all: &RecordBatch, mut group: Vec<(u64, u32)>) -> Result<RecordBatch> {
    group.sort_unstable();
    let indices = UInt32Array::from_iter_values(group.into_iter().map(|(_, row)| row));
    Ok(take_record_batch(all, &indices)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(keys: &[u64]) -> Vec<(u64, u32)> {
        keys.iter().map(|&k| (k, k as u32)).collect()
    }

    #[test]
    fn ranges_are_grouped_until_a_group_is_big_enough() {
        let ranges = vec![
            rows(&[1, 2]),
            rows(&[]),
            rows(&[5]),
            rows(&[7, 8, 9]),
            rows(&[11]),
        ];
        let sizes = |g: &[Vec<(u64, u32)>]| g.iter().map(Vec::len).collect::<Vec<_>>();
        assert_eq!(sizes(&group_ranges(ranges.clone(), 1)), [2, 1, 3, 1]);
        assert_eq!(sizes(&group_ranges(ranges.clone(), 3)), [3, 4]);
        assert_eq!(sizes(&group_ranges(ranges.clone(), 100)), [7]);
        assert!(group_ranges(vec![rows(&[]), rows(&[])], 1).is_empty());
    }
}
