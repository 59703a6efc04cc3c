//! The outcome of pruning: what to read, what was skipped, and why.

use std::fmt::Write as _;

use crate::error::PruneError;

/// Why an entry is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReadReason {
    /// Its box meets the query box: it may hold matching rows.
    Overlaps,
    /// It has no bounds: nothing is known, so it must be read.
    NoBounds,
    /// Its bounds break the bound rules (NaN, min above max where not allowed), so they cannot be
    /// trusted.
    InvalidBounds,
    /// The column's bounds cannot be used at all (see [`PrunePlan::note`]).
    ColumnCannotSkip,
}

/// Why an entry is skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// Its box does not meet the query box (or the window is an empty geometry).
    OutsideWindow,
    /// Every value of the column is null.
    AllNull,
    /// It has no rows.
    NoRows,
}

/// One entry the plan reads: its position in the indexed list, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedRead {
    /// Position of the entry in the list the index (or row-group call) was given.
    pub index: usize,
    /// Why it is read.
    pub reason: ReadReason,
}

/// Files, rows and bytes of a set of entries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Entries (files or row groups).
    pub files: u64,
    /// Rows.
    pub records: u64,
    /// Bytes.
    pub bytes: u64,
}

impl Tally {
    pub(crate) fn add(&mut self, records: u64, bytes: u64) {
        self.files += 1;
        self.records = self.records.saturating_add(records);
        self.bytes = self.bytes.saturating_add(bytes);
    }

    fn minus(self, other: Tally) -> Tally {
        Tally {
            files: self.files - other.files,
            records: self.records.saturating_sub(other.records),
            bytes: self.bytes.saturating_sub(other.bytes),
        }
    }
}

/// Which entries a spatial filter must read, with counts, bytes and reasons.
///
/// Entries are listed in their original order. `total = read + skipped` for files, records and
/// bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct PrunePlan {
    pub(crate) filter: String,
    pub(crate) target: String,
    pub(crate) reads: Vec<PlannedRead>,
    pub(crate) total: Tally,
    pub(crate) read: Tally,
    pub(crate) all_null: u64,
    pub(crate) no_rows: u64,
    pub(crate) note: Option<String>,
}

impl PrunePlan {
    /// The entries to read, in their original order.
    pub fn reads(&self) -> &[PlannedRead] {
        &self.reads
    }

    /// Positions of the entries to read, ascending.
    pub fn read_indices(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.reads.iter().map(|r| r.index)
    }

    /// Everything indexed.
    pub fn total(&self) -> Tally {
        self.total
    }

    /// What the plan reads.
    pub fn read(&self) -> Tally {
        self.read
    }

    /// What the plan skips.
    pub fn skipped(&self) -> Tally {
        self.total.minus(self.read)
    }

    /// Entries read for `reason`.
    pub fn read_count(&self, reason: ReadReason) -> u64 {
        self.reads.iter().filter(|r| r.reason == reason).count() as u64
    }

    /// Entries skipped for `reason`.
    pub fn skipped_count(&self, reason: SkipReason) -> u64 {
        match reason {
            SkipReason::AllNull => self.all_null,
            SkipReason::NoRows => self.no_rows,
            SkipReason::OutsideWindow => self.skipped().files - self.all_null - self.no_rows,
        }
    }

    /// A plan-wide remark, e.g. why no entry could be skipped.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// Share of entries read, in `[0, 1]`; 0 when there are none.
    pub fn scanned_fraction(&self) -> f64 {
        if self.total.files == 0 {
            0.0
        } else {
            self.read.files as f64 / self.total.files as f64
        }
    }

    /// Fails, naming scanned/total, when the plan reads more than `max_fraction` of the entries:
    /// the check to run in the pipeline that writes a table, so that a change that silently
    /// breaks pruning (bounds dropped, clustering lost) fails a build instead of a query.
    ///
    /// ```
    /// # use geoberg_pruning::*;
    /// # use geoberg_geostats::BBox;
    /// # use geoberg_crs::{ColumnType, Crs, FormatVersion};
    /// let files: Vec<FileBounds> = (0..100)
    ///     .map(|i| FileBounds::new(format!("f{i}"), 10, 100, Some(BBox::point(i as f64, 0.0))))
    ///     .collect();
    /// let index = FileIndex::build(files, &ColumnType::geometry(Crs::Epsg(4326)), FormatVersion::V3)?;
    /// let plan = index.plan(&BoxFilter::intersects(BBox::new(0.0, 0.0, 2.0, 1.0)))?;
    /// plan.assert_pruning(0.05)?; // 3 of 100 files
    /// let err = plan.assert_pruning(0.01).unwrap_err();
    /// assert!(err.to_string().contains("3/100 files scanned"));
    /// # Ok::<(), PruneError>(())
    /// ```
    pub fn assert_pruning(&self, max_fraction: f64) -> Result<(), PruneError> {
        if !(0.0..=1.0).contains(&max_fraction) {
            return Err(PruneError::InvalidFraction {
                value: max_fraction,
            });
        }
        let fraction = self.scanned_fraction();
        if fraction > max_fraction {
            return Err(PruneError::PruningRegressed {
                scanned: self.read.files,
                total: self.total.files,
                percent: fraction * 100.0,
                max_percent: max_fraction * 100.0,
            });
        }
        Ok(())
    }

    /// Why entries were read, one counted phrase per reason that occurred
    /// ("3 overlap the window", "1 have no bounds").
    pub fn read_summary(&self) -> Vec<String> {
        [
            (ReadReason::Overlaps, "overlap the window"),
            (ReadReason::NoBounds, "have no bounds"),
            (ReadReason::InvalidBounds, "have invalid bounds"),
            (
                ReadReason::ColumnCannotSkip,
                "cannot be skipped on this column",
            ),
        ]
        .into_iter()
        .filter_map(|(r, text)| {
            let n = self.read_count(r);
            (n > 0).then(|| format!("{n} {text}"))
        })
        .collect()
    }

    /// Why entries were skipped, one counted phrase per reason that occurred
    /// ("97 lie outside the window").
    pub fn skip_summary(&self) -> Vec<String> {
        [
            (SkipReason::OutsideWindow, "lie outside the window"),
            (SkipReason::AllNull, "hold only nulls"),
            (SkipReason::NoRows, "have no rows"),
        ]
        .into_iter()
        .filter_map(|(r, text)| {
            let n = self.skipped_count(r);
            (n > 0).then(|| format!("{n} {text}"))
        })
        .collect()
    }

    /// A short report for people; the same plan always renders the same text.
    pub fn explain(&self) -> String {
        let skipped = self.skipped();
        let pct = |part: u64, whole: u64| {
            if whole == 0 {
                0.0
            } else {
                part as f64 * 100.0 / whole as f64
            }
        };
        let mut s = String::new();
        let _ = writeln!(s, "spatial filter: {}", self.filter);
        let _ = writeln!(s, "target: {}", self.target);
        for (name, read, total, skip) in [
            ("files", self.read.files, self.total.files, skipped.files),
            (
                "records",
                self.read.records,
                self.total.records,
                skipped.records,
            ),
            ("bytes", self.read.bytes, self.total.bytes, skipped.bytes),
        ] {
            let _ = writeln!(
                s,
                "{name}: read {read} of {total} ({:.2}%), skipped {skip}",
                pct(read, total)
            );
        }
        let (reads, skips) = (self.read_summary(), self.skip_summary());
        if !reads.is_empty() {
            let _ = writeln!(s, "read: {}", reads.join(", "));
        }
        if !skips.is_empty() {
            let _ = writeln!(s, "skipped: {}", skips.join(", "));
        }
        if let Some(note) = &self.note {
            let _ = writeln!(s, "note: {note}");
        }
        s
    }
}
