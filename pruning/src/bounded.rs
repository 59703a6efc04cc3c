//! What an index entry must tell the planner: its bounds, its rows and its bytes.

use geoberg_geostats::BBox;

/// What is known about the values of the filtered column in one entry (file or row group).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bounds {
    /// Every non-null value lies in this box. For geography the X range may wrap the antimeridian
    /// (`min_x > max_x`).
    Box(BBox),
    /// Nothing is known (no statistics, metrics mode `none`, an undecodable bound): the entry is
    /// always read.
    Unknown,
    /// Every value of the column is null: no spatial predicate can match, so the entry is always
    /// skipped.
    AllNull,
}

impl Bounds {
    /// What an entry's statistics say: all null wins, then a box if one is known.
    pub fn from_stats(bbox: Option<BBox>, all_null: bool) -> Self {
        match (all_null, bbox) {
            (true, _) => Bounds::AllNull,
            (false, Some(b)) => Bounds::Box(b),
            (false, None) => Bounds::Unknown,
        }
    }
}

/// Anything the planner can index: a manifest entry, a Parquet row group, a simulated file.
///
/// In the spirit of rstar's `RTreeObject`: implement it for your own type and [`FileIndex`]
/// indexes it without copying it into a struct of ours.
///
/// [`FileIndex`]: crate::FileIndex
pub trait Bounded {
    /// Bounds of the filtered geometry column in this entry.
    fn bounds(&self) -> Bounds;

    /// Rows in the entry. An entry with zero rows is skipped, as Iceberg's metrics evaluator does.
    fn record_count(&self) -> u64;

    /// Bytes read when the entry is scanned (file size, or a row group's compressed size).
    fn size_in_bytes(&self) -> u64;
}

impl<T: Bounded + ?Sized> Bounded for &T {
    fn bounds(&self) -> Bounds {
        (**self).bounds()
    }
    fn record_count(&self) -> u64 {
        (**self).record_count()
    }
    fn size_in_bytes(&self) -> u64 {
        (**self).size_in_bytes()
    }
}

/// A data file (or row group) as the planner sees it: the plain struct to fill from a manifest
/// entry when no type of your own fits.
#[derive(Debug, Clone, PartialEq)]
pub struct FileBounds {
    /// File path (or any identifier), for the caller to find the file again.
    pub path: String,
    /// Rows in the file (`record_count` in the manifest).
    pub record_count: u64,
    /// File size in bytes (`file_size_in_bytes`).
    pub size_in_bytes: u64,
    /// Bounds of the geometry column; `None` when the manifest has none.
    pub bbox: Option<BBox>,
    /// Whether every value of the column is null (`null_value_counts == value_counts`).
    pub all_null: bool,
}

impl FileBounds {
    /// A file with known bounds.
    pub fn new(
        path: impl Into<String>,
        record_count: u64,
        size_in_bytes: u64,
        bbox: Option<BBox>,
    ) -> Self {
        FileBounds {
            path: path.into(),
            record_count,
            size_in_bytes,
            bbox,
            all_null: false,
        }
    }

    /// The same file marked as holding only nulls in the geometry column.
    pub fn with_all_null(mut self, all_null: bool) -> Self {
        self.all_null = all_null;
        self
    }
}

impl Bounded for FileBounds {
    fn bounds(&self) -> Bounds {
        Bounds::from_stats(self.bbox, self.all_null)
    }
    fn record_count(&self) -> u64 {
        self.record_count
    }
    fn size_in_bytes(&self) -> u64 {
        self.size_in_bytes
    }
}
