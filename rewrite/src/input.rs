//! What `table` hands the planner: data files with their manifest facts.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// An axis-aligned XY box, serializable so that plans and results carry it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Extent {
    /// Smallest X.
    pub min_x: f64,
    /// Smallest Y.
    pub min_y: f64,
    /// Largest X.
    pub max_x: f64,
    /// Largest Y.
    pub max_y: f64,
}

impl Extent {
    /// A box from its corners.
    pub const fn new(min_x: f64, min_y: f64, max_x: f64, max_y: f64) -> Self {
        Extent {
            min_x,
            min_y,
            max_x,
            max_y,
        }
    }

    /// The smallest box holding both.
    pub fn union(&self, o: &Extent) -> Extent {
        Extent::new(
            self.min_x.min(o.min_x),
            self.min_y.min(o.min_y),
            self.max_x.max(o.max_x),
            self.max_y.max(o.max_y),
        )
    }

    /// Whether `o` lies inside `self` (closed).
    pub fn contains(&self, o: &Extent) -> bool {
        self.min_x <= o.min_x
            && self.min_y <= o.min_y
            && o.max_x <= self.max_x
            && o.max_y <= self.max_y
    }

    /// Whether the boxes share a point (closed), the file-skipping test.
    pub fn intersects(&self, o: &Extent) -> bool {
        self.min_x <= o.max_x
            && o.min_x <= self.max_x
            && self.min_y <= o.max_y
            && o.min_y <= self.max_y
    }

    /// Width (X extent).
    pub fn width(&self) -> f64 {
        self.max_x - self.min_x
    }

    /// Height (Y extent).
    pub fn height(&self) -> f64 {
        self.max_y - self.min_y
    }

    /// Union of many boxes; `None` when there are none.
    pub fn union_all<'a>(boxes: impl IntoIterator<Item = &'a Extent>) -> Option<Extent> {
        boxes.into_iter().fold(None, |acc: Option<Extent>, b| {
            Some(acc.map_or(*b, |a| a.union(b)))
        })
    }
}

impl From<geoberg_geostats::BBox> for Extent {
    fn from(b: geoberg_geostats::BBox) -> Self {
        Extent::new(b.min_x, b.min_y, b.max_x, b.max_y)
    }
}

/// The partition a file belongs to, opaque to this crate: files are clustered within their
/// partition and output files inherit it. `table` uses its partition tuple's string form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct PartitionKey(pub String);

/// One data file as listed in the table's manifests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputFile {
    /// Local path of the Parquet file.
    pub path: PathBuf,
    /// `file_size_in_bytes` from the manifest.
    pub file_size_bytes: u64,
    /// `record_count` from the manifest.
    pub record_count: u64,
    /// The file's partition.
    pub partition: PartitionKey,
    /// Bounds of the geometry column from the manifest, when recorded.
    pub bbox: Option<Extent>,
    /// Iceberg v3 row lineage of the file. When any input of a partition has one, its output
    /// files carry the `_row_id` and `_last_updated_sequence_number` columns (see
    /// [`RowLineage`]); `None` everywhere (v1/v2 tables) writes the input columns unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<RowLineage>,
}

/// What a reader needs to derive the lineage of a file's rows when its `_row_id` or
/// `_last_updated_sequence_number` column is absent or null (Iceberg spec, "Row Lineage"):
/// `_row_id = first_row_id + position in the file` and `_last_updated_sequence_number = the
/// file's data sequence number`. The rewrite materializes both in its output files, so that the
/// rows keep them wherever they move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowLineage {
    /// The file's `first_row_id` (explicit or inherited from its manifest); `None` when the
    /// snapshot assigned none (a file from before an upgrade to v3), whose rows' ids are null.
    pub first_row_id: Option<i64>,
    /// The file's data sequence number (explicit or inherited from its manifest).
    pub data_sequence_number: i64,
}

impl InputFile {
    /// A file in the unpartitioned (empty) partition.
    pub fn new(path: impl Into<PathBuf>, file_size_bytes: u64, record_count: u64) -> Self {
        InputFile {
            path: path.into(),
            file_size_bytes,
            record_count,
            partition: PartitionKey::default(),
            bbox: None,
            lineage: None,
        }
    }

    /// The same file in `partition`.
    pub fn with_partition(mut self, partition: impl Into<String>) -> Self {
        self.partition = PartitionKey(partition.into());
        self
    }

    /// The same file with geometry bounds.
    pub fn with_bbox(mut self, bbox: Extent) -> Self {
        self.bbox = Some(bbox);
        self
    }

    /// The same file with its v3 row lineage (its rows keep their ids through the rewrite).
    pub fn with_lineage(mut self, lineage: RowLineage) -> Self {
        self.lineage = Some(lineage);
        self
    }
}
