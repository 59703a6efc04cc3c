//! The data files of a table's current snapshot with the bounding box of one geometry column,
//! read from the manifests: what `inspect`, `audit`, `layout` and the demo's pictures show.

use geoberg_geostats::BBox;
use geoberg_pruning::FileBounds;
use geoberg_table::{GeoColumn, Table};

use crate::error::Result;
use crate::svg::pieces;

/// The live files of `table` with the bounds of `column` exactly as the table's planner sees
/// them (the cached file index of this table version), so that pictures, audits and the
/// planner agree on every box.
pub fn file_bounds(table: &Table, column: &GeoColumn) -> Result<Vec<FileBounds>> {
    Ok(table.file_index(&column.name)?.files().entries().to_vec())
}

/// The union of the known boxes (of their plain pieces: a geography box that wraps the
/// antimeridian reaches both edges of the map).
pub fn extent(files: &[FileBounds]) -> Option<BBox> {
    files
        .iter()
        .filter_map(|f| f.bbox)
        .flat_map(pieces)
        .reduce(|a, b| a.union(&b))
}

/// Mean number of files overlapping a grid cell (over cells that hold any file): about 1.6
/// for files that tile space, N for N files that each span everything.
pub fn overlap_depth(files: &[FileBounds]) -> f64 {
    let boxes: Vec<geoberg_rewrite::Extent> = files
        .iter()
        .filter_map(|f| f.bbox)
        .flat_map(pieces)
        .map(geoberg_rewrite::Extent::from)
        .collect();
    geoberg_rewrite::overlap_depth(&boxes)
}
