//! The one row-group planner: which row groups of a data file may hold a row passing a
//! [`ScanFilter`], decided from the file's Parquet footer (each geometry chunk's geo statistics
//! and null count; on the sphere for geography, whose statistics geoberg's writers bound with
//! the great-circle edges). The table's own reader, the DataFusion scan node and a join's
//! run-time pruning all read row-group bounds here.

use geoberg_geostats::BBox;
use geoberg_pruning::{RowGroupBounds, prune_row_groups};
use parquet::file::metadata::ParquetMetaData;

use super::filter::ScanFilter;
use crate::error::Result;
use crate::table::Table;

/// The index (in the file's Parquet schema) of the top-level field with Parquet field id
/// `field_id`; for a file written without field ids (or when no id is given), the one named
/// `name`. `None` when the file does not hold the column (it was added after the file was
/// written).
pub fn root_column(footer: &ParquetMetaData, field_id: Option<i32>, name: &str) -> Option<usize> {
    let root = footer.file_metadata().schema_descr().root_schema();
    let fields = root.get_fields();
    let has_ids = fields.iter().any(|f| f.get_basic_info().has_id());
    match field_id {
        Some(id) if has_ids => fields.iter().position(|f| {
            let info = f.get_basic_info();
            info.has_id() && info.id() == id
        }),
        _ => fields.iter().position(|f| f.name() == name),
    }
}

/// The bounds of the top-level field `root`'s chunk in every row group of a file: the box of
/// its geo statistics (none when the writer stored none), its rows and compressed bytes, and
/// whether every value is null. Nested columns before it have several leaves; the field's own
/// leaf is found by its root.
pub fn row_group_bounds(footer: &ParquetMetaData, root: usize) -> Vec<RowGroupBounds> {
    let schema = footer.file_metadata().schema_descr();
    let leaf = (0..schema.num_columns()).find(|&l| schema.get_column_root_idx(l) == root);
    footer
        .row_groups()
        .iter()
        .map(|rg| {
            let rows = rg.num_rows().max(0) as u64;
            let chunk = leaf.and_then(|l| rg.columns().get(l));
            let bbox = chunk
                .and_then(|c| c.geo_statistics())
                .and_then(|g| g.bounding_box())
                .map(|b| BBox::new(b.get_xmin(), b.get_ymin(), b.get_xmax(), b.get_ymax()));
            let all_null = chunk
                .and_then(|c| c.statistics())
                .and_then(|s| s.null_count_opt())
                .is_some_and(|nulls| rows > 0 && nulls == rows);
            RowGroupBounds::new(rows, rg.compressed_size().max(0) as u64, bbox)
                .with_all_null(all_null)
        })
        .collect()
}

impl ScanFilter {
    /// For each row group of the data file whose footer this is, whether it may hold a row
    /// passing the filter: spatial leaves are decided on the row groups' geo statistics,
    /// column leaves keep every row group (the reader filters rows). A leaf on a column the
    /// file lacks keeps every row group.
    pub fn select_row_groups(&self, table: &Table, footer: &ParquetMetaData) -> Result<Vec<bool>> {
        let n = footer.num_row_groups();
        Ok(match self {
            ScanFilter::Anything | ScanFilter::Column(_) => vec![true; n],
            ScanFilter::Nothing => vec![false; n],
            ScanFilter::And(parts) => {
                let mut keep = vec![true; n];
                for p in parts {
                    for (k, p) in keep.iter_mut().zip(p.select_row_groups(table, footer)?) {
                        *k &= p;
                    }
                }
                keep
            }
            ScanFilter::Or(parts) => {
                let mut keep = vec![false; n];
                for p in parts {
                    for (k, p) in keep.iter_mut().zip(p.select_row_groups(table, footer)?) {
                        *k |= p;
                    }
                }
                keep
            }
            ScanFilter::Spatial { column, filter } => {
                let geo = table.geo_column(column)?;
                let Some(root) = root_column(footer, Some(geo.field_id), column) else {
                    return Ok(vec![true; n]);
                };
                let groups = row_group_bounds(footer, root);
                let plan = prune_row_groups(&geo.column_type, filter, &groups)?;
                let mut keep = vec![false; n];
                for i in plan.read_indices() {
                    keep[i] = true;
                }
                keep
            }
        })
    }
}
