//! The data files of a table's current snapshot with the bounding box of one geometry column,
//! read from the manifests: what `inspect`, `audit`, `layout` and the demo's pictures show.

use geoberg_crs::ColumnType;
use geoberg_geostats::{BBox, GeoKind, decode_double_bound, decode_geospatial_bounds};
use geoberg_pruning::{Bounded, Bounds};
use geoberg_table::{BBOX_COLUMN_NAMES, GeoColumn, Table};
use iceberg::spec::{DataFile, Datum, PrimitiveLiteral};

use crate::error::Result;

/// One live data file and its box.
#[derive(Debug, Clone, PartialEq)]
pub struct FileMbr {
    /// `file://` location.
    pub path: String,
    /// Rows.
    pub records: u64,
    /// Bytes on disk.
    pub bytes: u64,
    /// Box of the geometry column; `None` when the manifest has no usable bounds.
    pub bbox: Option<BBox>,
    /// Every geometry of the file is null.
    pub all_null: bool,
}

/// Lets `geoberg-pruning`'s `FileIndex` index the files without copying them.
impl Bounded for FileMbr {
    fn bounds(&self) -> Bounds {
        match (self.all_null, self.bbox) {
            (true, _) => Bounds::AllNull,
            (false, Some(b)) => Bounds::Box(b),
            (false, None) => Bounds::Unknown,
        }
    }

    fn record_count(&self) -> u64 {
        self.records
    }

    fn size_in_bytes(&self) -> u64 {
        self.bytes
    }
}

/// The live files of `table` with the bounds of `column`: its v3 geometry bounds, else the
/// double bounds of the materialised bbox columns (tables whose geometry declares no CRS).
pub fn file_mbrs(table: &Table, column: &GeoColumn) -> Result<Vec<FileMbr>> {
    let kind = match column.column_type {
        ColumnType::Geography { .. } => GeoKind::Geography,
        _ => GeoKind::Geometry,
    };
    let schema = table.metadata().current_schema();
    let bbox_ids: Option<Vec<i32>> = BBOX_COLUMN_NAMES
        .iter()
        .map(|n| schema.field_by_name(n).map(|f| f.id))
        .collect();
    let files = table.data_files()?;
    Ok(files
        .iter()
        .map(|f| {
            let bbox = geo_bounds(f, column.field_id, kind)
                .or_else(|| bbox_ids.as_deref().and_then(|ids| bbox_column_bounds(f, ids)));
            let all_null = matches!(
                (f.value_counts().get(&column.field_id), f.null_value_counts().get(&column.field_id)),
                (Some(v), Some(n)) if *v > 0 && v == n
            );
            FileMbr {
                path: f.file_path().to_string(),
                records: f.record_count(),
                bytes: f.file_size_in_bytes(),
                bbox,
                all_null,
            }
        })
        .collect())
}

/// The union of the known boxes.
pub fn extent(files: &[FileMbr]) -> Option<BBox> {
    files
        .iter()
        .filter_map(|f| f.bbox)
        .reduce(|a, b| a.union(&b))
}

/// Mean number of files overlapping a grid cell (over cells that hold any file): about 1.6
/// for files that tile space, N for N files that each span everything.
pub fn overlap_depth(files: &[FileMbr]) -> f64 {
    let boxes: Vec<geoberg_rewrite::Extent> = files
        .iter()
        .filter_map(|f| f.bbox)
        .map(|b| geoberg_rewrite::Extent::new(b.min_x, b.min_y, b.max_x, b.max_y))
        .collect();
    geoberg_rewrite::overlap_depth(&boxes)
}

fn binary(d: &Datum) -> Option<&[u8]> {
    match d.literal() {
        PrimitiveLiteral::Binary(b) => Some(b),
        _ => None,
    }
}

fn geo_bounds(file: &DataFile, field_id: i32, kind: GeoKind) -> Option<BBox> {
    let lo = binary(file.lower_bounds().get(&field_id)?)?;
    let hi = binary(file.upper_bounds().get(&field_id)?)?;
    decode_geospatial_bounds(kind, lo, hi).ok()
}

fn bbox_column_bounds(file: &DataFile, ids: &[i32]) -> Option<BBox> {
    let double = |d: Option<&Datum>| match d?.literal() {
        PrimitiveLiteral::Double(v) => Some(v.0),
        PrimitiveLiteral::Binary(b) => decode_double_bound(b).ok(),
        _ => None,
    };
    let (lower, upper) = (file.lower_bounds(), file.upper_bounds());
    Some(BBox::new(
        double(lower.get(&ids[0]))?,
        double(lower.get(&ids[1]))?,
        double(upper.get(&ids[2]))?,
        double(upper.get(&ids[3]))?,
    ))
}
