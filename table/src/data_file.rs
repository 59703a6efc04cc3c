//! A written Parquet file → its manifest entry (spec: "Manifests", `data_file`): counts, sizes
//! and bounds from the footer, under the table's metrics modes, for every writer (append,
//! rewrite, row-level changes, imports).

use std::collections::HashMap;

use geoberg_crs::ColumnType;
use geoberg_geostats::{BBox, encode_geospatial_bounds};
use iceberg::spec::{
    DataContentType, DataFile, DataFileBuilder, DataFileFormat, Datum, NestedField, Struct,
    StructType, Type,
};
use parquet::file::metadata::ParquetMetaData;

use crate::error::{Error, Result};
use crate::metrics::{MetricsConfig, MetricsMode, footer_bounds};
use crate::table::Table;

/// A data file just written, with what its writer knows beyond the footer.
#[derive(Debug, Clone)]
pub(crate) struct WrittenFile<'a> {
    /// Its location.
    pub location: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its footer.
    pub footer: &'a ParquetMetaData,
    /// The partition tuple of its rows.
    pub partition: Struct,
    /// The partition spec the tuple belongs to.
    pub spec_id: i32,
    /// NaN counts of float columns, by field id (Parquet footers have none).
    pub nan_counts: HashMap<i32, u64>,
    /// Boxes of geo columns the writer computed itself, by field id (`None`: every value null,
    /// empty or NaN, so no box). Geometry columns not listed take the footer's geo statistics.
    pub geo_boxes: HashMap<i32, Option<BBox>>,
    /// The table sort order its rows are sorted by (`sort_order_id` of the entry).
    pub sort_order_id: Option<i32>,
}

/// The manifest entry of `file` for `table`'s current schema, under `metrics`.
pub(crate) fn data_file_entry(
    table: &Table,
    metrics: &MetricsConfig,
    file: WrittenFile<'_>,
) -> Result<DataFile> {
    let footer = file.footer;
    let descr = footer.file_metadata().schema_descr();
    let leaf_of: HashMap<i32, usize> = (0..descr.num_columns())
        .filter_map(|i| {
            let info = descr.column(i).self_type().get_basic_info().clone();
            info.has_id().then(|| (info.id(), i))
        })
        .collect();
    let record_count: u64 = footer
        .row_groups()
        .iter()
        .map(|rg| rg.num_rows().max(0) as u64)
        .sum();

    let mut column_sizes = HashMap::new();
    let mut value_counts = HashMap::new();
    let mut null_counts = HashMap::new();
    let mut nan_counts = HashMap::new();
    let mut lower: HashMap<i32, Datum> = HashMap::new();
    let mut upper: HashMap<i32, Datum> = HashMap::new();
    for leaf_field in metric_leaves(table.metadata().current_schema().as_struct()) {
        let field = leaf_field.field;
        let id = field.id;
        let mode = metrics.mode(id);
        let Some(&leaf) = leaf_of.get(&id) else {
            continue;
        };
        if mode == MetricsMode::None {
            continue;
        }
        let (mut size, mut values, mut nulls) = (0u64, 0u64, Some(0u64));
        for rg in footer.row_groups() {
            let Some(c) = rg.columns().get(leaf) else {
                continue;
            };
            size += c.compressed_size().max(0) as u64;
            values += c.num_values().max(0) as u64;
            nulls = match (nulls, c.statistics().and_then(|s| s.null_count_opt())) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
        }
        column_sizes.insert(id, size);
        value_counts.insert(id, values);
        if let Some(n) = nulls {
            null_counts.insert(id, n);
        }
        if let Some(&n) = file.nan_counts.get(&id) {
            nan_counts.insert(id, n);
        }
        // Bounds only for leaves reached through structs alone, as Iceberg Java stores them
        // (`ParquetMetrics.shouldStoreBounds`): a list element's or map entry's bounds would
        // not bound the rows.
        if !matches!(mode, MetricsMode::Truncate(_) | MetricsMode::Full) || !leaf_field.bounds {
            continue;
        }
        let geo = table.geo_columns().iter().find(|g| g.field_id == id);
        let (lo, hi) = match geo {
            Some(g) => {
                let b = match file.geo_boxes.get(&id) {
                    Some(b) => *b,
                    // Planar bounds from the Parquet geo statistics; a geography box must be
                    // computed on the sphere, which the footer's planar boxes are not.
                    None if !matches!(g.column_type, ColumnType::Geography { .. }) => {
                        footer_geo_bbox(footer, leaf)
                    }
                    None => None,
                };
                b.map_or((None, None), point_bounds)
            }
            None => match field.field_type.as_primitive_type() {
                Some(ty) => footer_bounds(footer, leaf, ty, mode),
                None => (None, None),
            },
        };
        if let Some(lo) = lo {
            lower.insert(id, lo);
        }
        if let Some(hi) = hi {
            upper.insert(id, hi);
        }
    }
    let split_offsets = footer
        .row_groups()
        .iter()
        .filter_map(|rg| {
            let first = rg.columns().first()?;
            Some(
                first
                    .dictionary_page_offset()
                    .unwrap_or_else(|| first.data_page_offset()),
            )
        })
        .collect();
    let mut builder = DataFileBuilder::default();
    builder
        .content(DataContentType::Data)
        .file_path(file.location.clone())
        .file_format(DataFileFormat::Parquet)
        .partition(file.partition)
        .partition_spec_id(file.spec_id)
        .record_count(record_count)
        .file_size_in_bytes(file.size)
        .column_sizes(column_sizes)
        .value_counts(value_counts)
        .null_value_counts(null_counts)
        .nan_value_counts(nan_counts)
        .lower_bounds(lower)
        .upper_bounds(upper)
        .split_offsets(Some(split_offsets));
    if let Some(id) = file.sort_order_id {
        builder.sort_order_id(id);
    }
    builder
        .build()
        .map_err(|e| Error::corrupt(&file.location, format!("data file entry: {e}")))
}

/// A primitive field of the schema that metrics are kept for.
pub(crate) struct MetricLeaf<'a> {
    /// The field.
    pub field: &'a NestedField,
    /// Its name as `write.metadata.metrics.column.<name>` spells it (`a.b` inside structs,
    /// `l.element`, `m.key`, `m.value`).
    pub name: String,
    /// Reached through structs only: lower and upper bounds bound its rows.
    pub bounds: bool,
}

/// Every primitive field of `schema`, depth first, with its dotted name.
pub(crate) fn metric_leaves(schema: &StructType) -> Vec<MetricLeaf<'_>> {
    fn walk<'a>(f: &'a NestedField, name: String, bounds: bool, out: &mut Vec<MetricLeaf<'a>>) {
        match &*f.field_type {
            Type::Primitive(_) => out.push(MetricLeaf {
                field: f,
                name,
                bounds,
            }),
            Type::Struct(s) => {
                for c in s.fields() {
                    walk(c, format!("{name}.{}", c.name), bounds, out);
                }
            }
            Type::List(l) => walk(&l.element_field, format!("{name}.element"), false, out),
            Type::Map(m) => {
                walk(&m.key_field, format!("{name}.key"), false, out);
                walk(&m.value_field, format!("{name}.value"), false, out);
            }
        }
    }
    let mut out = Vec::new();
    for f in schema.fields() {
        walk(f, f.name.clone(), true, &mut out);
    }
    out
}

/// Spec Appendix D point bounds of a box; never raw WKB prefixes.
fn point_bounds(b: BBox) -> (Option<Datum>, Option<Datum>) {
    let (lo, hi) = encode_geospatial_bounds(&b);
    (Some(Datum::binary(lo)), Some(Datum::binary(hi)))
}

/// Union of the row groups' Parquet geo-statistics boxes; `None` unless every row group with
/// values has one.
pub(crate) fn footer_geo_bbox(footer: &ParquetMetaData, leaf: usize) -> Option<BBox> {
    let mut acc: Option<BBox> = None;
    for rg in footer.row_groups() {
        let chunk = rg.columns().get(leaf)?;
        let stats = chunk.statistics();
        let all_null = stats
            .and_then(|s| s.null_count_opt())
            .is_some_and(|n| n as i64 == chunk.num_values());
        let b = match chunk.geo_statistics().and_then(|g| g.bounding_box()) {
            Some(b) => BBox::new(b.get_xmin(), b.get_ymin(), b.get_xmax(), b.get_ymax()),
            None if all_null => continue,
            None => return None,
        };
        acc = Some(match acc {
            None => b,
            Some(a) => BBox::new(
                a.min_x.min(b.min_x),
                a.min_y.min(b.min_y),
                a.max_x.max(b.max_x),
                a.max_y.max(b.max_y),
            ),
        });
    }
    acc
}
