//! Deleted rows as the Parquet reader skips them: a data file's deletion vector (and position
//! delete files), planned by the table crate, becomes a row selection of each row group read.

use geoberg_table::DeletionVector;
use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use serde::{Deserialize, Serialize};

/// The deleted row positions of one data file, as ascending, disjoint, non-adjacent
/// `[start, end)` ranges: compact for runs (a DELETE of a region removes neighbours in a
/// clustered file) and cheap to ship in a [`ScanSpec`](crate::ScanSpec).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeletedRows {
    ranges: Vec<(u64, u64)>,
}

impl DeletedRows {
    /// The ranges of `vector`'s positions.
    pub fn from_vector(vector: &DeletionVector) -> DeletedRows {
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        for p in vector.iter() {
            match ranges.last_mut() {
                Some((_, end)) if *end == p => *end = p + 1,
                _ => ranges.push((p, p + 1)),
            }
        }
        DeletedRows { ranges }
    }

    /// Rows deleted within `[start, start + rows)`.
    pub fn count_in(&self, start: u64, rows: u64) -> u64 {
        self.overlapping(start, rows)
            .map(|(s, e)| e - s)
            .sum::<u64>()
    }

    /// The selection over the `rows` rows of a row group starting at file row `start`: `None`
    /// when none of them is deleted (read the row group whole).
    pub fn selection(&self, start: u64, rows: u64) -> Option<RowSelection> {
        let mut selectors = Vec::new();
        let mut at = start;
        for (s, e) in self.overlapping(start, rows) {
            if s > at {
                selectors.push(RowSelector::select(to_usize(s - at)));
            }
            selectors.push(RowSelector::skip(to_usize(e - s)));
            at = e;
        }
        if selectors.is_empty() {
            return None;
        }
        if at < start + rows {
            selectors.push(RowSelector::select(to_usize(start + rows - at)));
        }
        Some(RowSelection::from(selectors))
    }

    /// The deleted ranges clipped to `[start, start + rows)`.
    fn overlapping(&self, start: u64, rows: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let end = start + rows;
        let first = self.ranges.partition_point(|&(_, e)| e <= start);
        self.ranges[first..]
            .iter()
            .take_while(move |&&(s, _)| s < end)
            .map(move |&(s, e)| (s.max(start), e.min(end)))
    }
}

/// A row count of one row group: Parquet row groups hold at most `i64::MAX` rows, and a
/// row group this process reads fits in memory, so it fits in `usize`.
fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(positions: &[u64]) -> DeletedRows {
        DeletedRows::from_vector(
            &DeletionVector::from_positions(positions.iter().copied()).unwrap(),
        )
    }

    /// The rows a selection keeps, by brute force over the row group.
    fn kept(selection: Option<RowSelection>, start: u64, n: u64) -> Vec<u64> {
        let Some(selection) = selection else {
            return (start..start + n).collect();
        };
        let mut out = Vec::new();
        let mut at = start;
        for s in selection.iter() {
            if !s.skip {
                out.extend(at..at + s.row_count as u64);
            }
            at += s.row_count as u64;
        }
        assert_eq!(at, start + n, "the selection covers the row group exactly");
        out
    }

    #[test]
    fn selections_keep_exactly_the_live_rows_of_each_row_group() {
        let deleted = [0u64, 1, 2, 7, 9, 10, 11, 12, 19, 20, 35];
        let d = rows(&deleted);
        assert_eq!(d.ranges, [(0, 3), (7, 8), (9, 13), (19, 21), (35, 36)]);
        for (start, n) in [(0, 10), (10, 10), (20, 10), (30, 10), (40, 5), (0, 45)] {
            let expect: Vec<u64> = (start..start + n)
                .filter(|p| !deleted.contains(p))
                .collect();
            assert_eq!(kept(d.selection(start, n), start, n), expect, "{start}+{n}");
            assert_eq!(d.count_in(start, n), n - expect.len() as u64);
        }
        assert!(d.selection(40, 5).is_none());
        assert!(DeletedRows::default().selection(0, 10).is_none());
    }
}
