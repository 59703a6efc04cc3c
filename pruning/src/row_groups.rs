//! Pruning the row groups of one Parquet file with the same rules as data files.

use geoberg_crs::ColumnType;
use geoberg_geostats::BBox;

use crate::bounded::{Bounded, Bounds};
use crate::column::ColumnRules;
use crate::error::PruneError;
use crate::filter::BoxFilter;
use crate::index::plan_by_scan;
use crate::plan::PrunePlan;

/// The statistics of one Parquet row group, as the caller read them from the footer.
///
/// Extraction is left to the caller (this crate does not depend on `parquet`): take the box from
/// the geometry column chunk's `GeospatialStatistics` (`ColumnChunkMetaData::geo_statistics()`,
/// `bounding_box()`), or from the min/max statistics of the four bbox columns with
/// [`RowGroupBounds::from_bbox_column_stats`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowGroupBounds {
    /// Rows in the row group.
    pub num_rows: u64,
    /// Compressed bytes of the row group.
    pub compressed_bytes: u64,
    /// Box of the geometry column; `None` without statistics.
    pub bbox: Option<BBox>,
    /// True when the column's null count equals `num_rows`.
    pub all_null: bool,
}

impl RowGroupBounds {
    /// A row group with the given box (from Parquet geospatial statistics).
    pub fn new(num_rows: u64, compressed_bytes: u64, bbox: Option<BBox>) -> Self {
        RowGroupBounds {
            num_rows,
            compressed_bytes,
            bbox,
            all_null: false,
        }
    }

    /// A row group whose box comes from the min/max statistics of the bbox columns:
    /// `min(bbox_min_x)`, `min(bbox_min_y)`, `max(bbox_max_x)`, `max(bbox_max_y)`. Any statistic
    /// missing or NaN, or a min above its max, leaves the box unknown (the group is read).
    pub fn from_bbox_column_stats(
        num_rows: u64,
        compressed_bytes: u64,
        min_x: Option<f64>,
        min_y: Option<f64>,
        max_x: Option<f64>,
        max_y: Option<f64>,
    ) -> Self {
        let bbox = match (min_x, min_y, max_x, max_y) {
            (Some(a), Some(b), Some(c), Some(d)) if a <= c && b <= d => Some(BBox::new(a, b, c, d)),
            _ => None,
        };
        Self::new(num_rows, compressed_bytes, bbox)
    }

    /// The same row group marked as holding only nulls in the geometry column.
    pub fn with_all_null(mut self, all_null: bool) -> Self {
        self.all_null = all_null;
        self
    }
}

impl Bounded for RowGroupBounds {
    fn bounds(&self) -> Bounds {
        Bounds::from_stats(self.bbox, self.all_null)
    }
    fn record_count(&self) -> u64 {
        self.num_rows
    }
    fn size_in_bytes(&self) -> u64 {
        self.compressed_bytes
    }
}

/// The row groups of one file that `filter` must read. A linear scan: files have few row groups.
///
/// The format-version rule of [`FileIndex`](crate::FileIndex) does not apply: Parquet statistics
/// come with the file whatever the table version. [`PlannedRead::index`](crate::PlannedRead) is
/// the row group ordinal.
///
/// ```
/// use geoberg_crs::{ColumnType, Crs};
/// use geoberg_geostats::BBox;
/// use geoberg_pruning::{prune_row_groups, RowGroupBounds, BoxFilter};
///
/// let groups = [
///     RowGroupBounds::new(1000, 4096, Some(BBox::new(0.0, 0.0, 10.0, 10.0))),
///     RowGroupBounds::from_bbox_column_stats(1000, 4096, Some(20.0), Some(0.0), Some(30.0), Some(10.0)),
/// ];
/// let column = ColumnType::geometry(Crs::Epsg(3857));
/// let plan = prune_row_groups(&column, &BoxFilter::intersects(BBox::new(25.0, 5.0, 26.0, 6.0)), &groups)?;
/// assert_eq!(plan.read_indices().collect::<Vec<_>>(), [1]);
/// # Ok::<(), geoberg_pruning::PruneError>(())
/// ```
pub fn prune_row_groups<T: Bounded>(
    column: &ColumnType,
    filter: &BoxFilter,
    row_groups: &[T],
) -> Result<PrunePlan, PruneError> {
    plan_by_scan(row_groups, &ColumnRules::for_row_groups(column), filter)
}
