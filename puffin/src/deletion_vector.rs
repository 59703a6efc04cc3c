//! The deleted row positions of one data file, as a 64-bit Roaring bitmap.

use std::collections::BTreeMap;
use std::ops::Range;

use roaring::RoaringBitmap;

use crate::row_runs::{RowRun, keep_skip_runs};
use crate::{ErrorKind, Result};

/// The largest row position a deletion vector holds: Iceberg Java's
/// `RoaringPositionBitmap.MAX_POSITION` (key `i32::MAX - 1`, low half `0x8000_0000`). The spec
/// allows any position below 2⁶³; Java's reader is the strictest, so a vector written here is
/// one that every reader accepts. Real data files are nowhere near it.
pub const MAX_POSITION: u64 = ((i32::MAX as u64 - 1) << 32) | 0x8000_0000;

/// The largest bucket key (high 32 bits of a position) a reader accepts: Java's check.
pub(crate) const MAX_KEY: u32 = i32::MAX as u32 - 1;

/// The set of deleted row positions of one data file (Iceberg v3 "deletion vector").
///
/// Positions are split as the spec's `deletion-vector-v1` blob stores them: the high 32 bits
/// pick a bucket, and each bucket is a 32-bit [`RoaringBitmap`] of the low 32 bits. Empty buckets
/// are never kept, so two vectors with the same positions are equal.
///
/// A second delete of rows of the same data file must write one merged vector (the spec allows
/// one vector per data file per snapshot): [`DeletionVector::union_with`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeletionVector {
    buckets: BTreeMap<u32, RoaringBitmap>,
}

#[inline]
fn split(position: u64) -> (u32, u32) {
    ((position >> 32) as u32, position as u32)
}

#[inline]
fn join(key: u32, low: u32) -> u64 {
    (u64::from(key) << 32) | u64::from(low)
}

fn check(position: u64) -> Result<()> {
    if position > MAX_POSITION {
        return Err(ErrorKind::PositionTooLarge {
            position,
            max: MAX_POSITION,
        }
        .into());
    }
    Ok(())
}

impl DeletionVector {
    /// An empty vector (no row deleted).
    pub fn new() -> DeletionVector {
        DeletionVector::default()
    }

    /// A vector of `positions`, in any order, duplicates allowed.
    pub fn from_positions(positions: impl IntoIterator<Item = u64>) -> Result<DeletionVector> {
        let mut v = DeletionVector::new();
        for p in positions {
            v.insert(p)?;
        }
        Ok(v)
    }

    /// Marks the row at `position` deleted; `Ok(true)` when it was not deleted before.
    pub fn insert(&mut self, position: u64) -> Result<bool> {
        check(position)?;
        let (key, low) = split(position);
        Ok(self.buckets.entry(key).or_default().insert(low))
    }

    /// Marks every row of `positions` (half-open) deleted; returns how many were new.
    pub fn insert_range(&mut self, positions: Range<u64>) -> Result<u64> {
        if positions.is_empty() {
            return Ok(0);
        }
        check(positions.end - 1)?;
        let (first_key, first_low) = split(positions.start);
        let (last_key, last_low) = split(positions.end - 1);
        let mut added = 0;
        for key in first_key..=last_key {
            let lo = if key == first_key { first_low } else { 0 };
            let hi = if key == last_key { last_low } else { u32::MAX };
            added += self.buckets.entry(key).or_default().insert_range(lo..=hi);
        }
        Ok(added)
    }

    /// Whether the row at `position` is deleted.
    pub fn contains(&self, position: u64) -> bool {
        let (key, low) = split(position);
        self.buckets.get(&key).is_some_and(|b| b.contains(low))
    }

    /// Number of deleted rows (the blob's `cardinality` and the manifest's `record_count`).
    pub fn len(&self) -> u64 {
        self.buckets.values().map(RoaringBitmap::len).sum()
    }

    /// Whether no row is deleted.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Largest deleted position.
    pub fn max(&self) -> Option<u64> {
        let (&key, bitmap) = self.buckets.last_key_value()?;
        bitmap.max().map(|low| join(key, low))
    }

    /// Deleted positions in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.buckets
            .iter()
            .flat_map(|(&key, bitmap)| bitmap.iter().map(move |low| join(key, low)))
    }

    /// Adds every position of `other` (a second delete on the same data file).
    pub fn union_with(&mut self, other: &DeletionVector) {
        for (&key, bitmap) in &other.buckets {
            *self.buckets.entry(key).or_default() |= bitmap;
        }
    }

    /// The union of two vectors, as a new one.
    pub fn union(&self, other: &DeletionVector) -> DeletionVector {
        let mut merged = self.clone();
        merged.union_with(other);
        merged
    }

    /// Run-length keep/skip runs over the `num_rows` rows of the data file: what a Parquet
    /// reader's row selection needs (`keep == false` is a skip). Fails when a position is at or
    /// past `num_rows`, which means the vector belongs to another file.
    pub fn keep_skip_runs(&self, num_rows: u64) -> Result<Vec<RowRun>> {
        keep_skip_runs(self.iter(), num_rows)
    }

    /// The buckets, ascending by key, none empty.
    pub(crate) fn buckets(&self) -> &BTreeMap<u32, RoaringBitmap> {
        &self.buckets
    }

    /// A vector from decoded buckets (empty ones are dropped).
    pub(crate) fn from_buckets(buckets: impl IntoIterator<Item = (u32, RoaringBitmap)>) -> Self {
        DeletionVector {
            buckets: buckets.into_iter().filter(|(_, b)| !b.is_empty()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cross_buckets() {
        let mut v = DeletionVector::new();
        let start = (1u64 << 32) - 3;
        assert_eq!(v.insert_range(start..start + 6).unwrap(), 6);
        assert_eq!(
            v.iter().collect::<Vec<_>>(),
            (start..start + 6).collect::<Vec<_>>()
        );
        assert_eq!(v.insert_range(start..start + 2).unwrap(), 0);
        assert_eq!(v.max(), Some(start + 5));
        assert_eq!(v.insert_range(5..5).unwrap(), 0);
    }

    #[test]
    fn positions_past_the_java_limit_are_refused() {
        let mut v = DeletionVector::new();
        assert!(v.insert(MAX_POSITION).unwrap());
        let e = v.insert(MAX_POSITION + 1).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::PositionTooLarge { .. }),
            "{e}"
        );
        assert!(e.to_string().contains(&MAX_POSITION.to_string()));
        assert!(v.insert_range(MAX_POSITION..MAX_POSITION + 2).is_err());
        assert!(!v.contains(u64::MAX));
    }
}
