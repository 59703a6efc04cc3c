//! `DESCRIBE [TABLE] [EXTENDED] t`: the columns of the current schema (geo columns as declared,
//! `geometry(4326)`), and with `EXTENDED` each column's statistics over the live data files
//! as the manifests record them: lower and upper bound (geo columns: the corners of the
//! files' boxes, as WKT points), null count, and how many files carry bounds for it. Seed 001
//! checks with it that the bbox columns are tracked (a column past the metrics window shows
//! no bounds).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_geostats::GeospatialBound;
use geoberg_table::Table;
use iceberg::spec::{DataFile, Datum, PrimitiveLiteral, Type};

use crate::error::Result;

/// One column's statistics over the live data files.
#[derive(Default)]
struct ColumnStats {
    lower: Option<String>,
    upper: Option<String>,
    null_count: Option<i64>,
    bounded_files: i64,
}

/// The rows of `DESCRIBE [EXTENDED]`; `type_sql` renders a geo column's type.
pub(crate) fn describe(
    table: &Table,
    extended: bool,
    type_sql: impl Fn(&geoberg_crs::ColumnType) -> String,
) -> Result<Vec<RecordBatch>> {
    let fields = table
        .metadata()
        .current_schema()
        .as_struct()
        .fields()
        .to_vec();
    let mut names = Vec::with_capacity(fields.len());
    let mut types = Vec::with_capacity(fields.len());
    let mut required = Vec::with_capacity(fields.len());
    for f in &fields {
        names.push(f.name.clone());
        types.push(
            match table.geo_columns().iter().find(|g| g.field_id == f.id) {
                Some(g) => type_sql(&g.column_type),
                None => f.field_type.to_string(),
            },
        );
        required.push(f.required);
    }
    let mut schema = vec![
        Field::new("col_name", ArrowType::Utf8, false),
        Field::new("data_type", ArrowType::Utf8, false),
        Field::new("required", ArrowType::Boolean, false),
    ];
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(names)),
        Arc::new(StringArray::from(types)),
        Arc::new(BooleanArray::from(required)),
    ];
    if extended {
        let files = table.data_files()?;
        let stats: Vec<ColumnStats> = fields
            .iter()
            .map(|f| {
                let geo = table.geo_columns().iter().any(|g| g.field_id == f.id);
                match f.field_type.as_ref() {
                    Type::Primitive(_) if geo => geo_stats(&files, f.id),
                    Type::Primitive(_) => column_stats(&files, f.id),
                    _ => ColumnStats::default(),
                }
            })
            .collect();
        schema.extend([
            Field::new("min", ArrowType::Utf8, true),
            Field::new("max", ArrowType::Utf8, true),
            Field::new("null_count", ArrowType::Int64, true),
            Field::new("files_with_bounds", ArrowType::Int64, false),
            Field::new("files", ArrowType::Int64, false),
        ]);
        columns.extend([
            Arc::new(StringArray::from_iter(
                stats.iter().map(|s| s.lower.clone()),
            )) as ArrayRef,
            Arc::new(StringArray::from_iter(
                stats.iter().map(|s| s.upper.clone()),
            )),
            Arc::new(Int64Array::from_iter(stats.iter().map(|s| s.null_count))),
            Arc::new(Int64Array::from_iter_values(
                stats.iter().map(|s| s.bounded_files),
            )),
            Arc::new(Int64Array::from_iter_values(
                stats.iter().map(|_| files.len() as i64),
            )),
        ]);
    }
    Ok(vec![RecordBatch::try_new(
        Arc::new(Schema::new(schema)),
        columns,
    )?])
}

/// The null count over `files`, when every file records one.
fn null_count(files: &[DataFile], id: i32) -> Option<i64> {
    files
        .iter()
        .map(|f| f.null_value_counts().get(&id).map(|n| *n as i64))
        .sum()
}

fn column_stats(files: &[DataFile], id: i32) -> ColumnStats {
    let mut lower: Option<&Datum> = None;
    let mut upper: Option<&Datum> = None;
    let mut bounded_files = 0;
    for f in files {
        let (Some(lo), Some(hi)) = (f.lower_bounds().get(&id), f.upper_bounds().get(&id)) else {
            continue;
        };
        bounded_files += 1;
        if lower.is_none_or(|l| lo < l) {
            lower = Some(lo);
        }
        if upper.is_none_or(|u| hi > u) {
            upper = Some(hi);
        }
    }
    let text = |d: &Datum| match d.literal() {
        PrimitiveLiteral::String(s) => s.clone(),
        _ => d.to_string(),
    };
    ColumnStats {
        lower: lower.map(text),
        upper: upper.map(text),
        null_count: null_count(files, id),
        bounded_files,
    }
}

/// A geo column: the lower-left and upper-right corners of the union of the files' boxes. A
/// box that crosses the antimeridian (`x` lower > upper, geography) spans every longitude.
fn geo_stats(files: &[DataFile], id: i32) -> ColumnStats {
    let bound = |bounds: &HashMap<i32, Datum>| match bounds.get(&id)?.literal() {
        PrimitiveLiteral::Binary(b) => GeospatialBound::from_bytes(b).ok(),
        _ => None,
    };
    let mut union: Option<[f64; 4]> = None;
    let mut bounded_files = 0;
    for f in files {
        let (Some(lo), Some(hi)) = (bound(f.lower_bounds()), bound(f.upper_bounds())) else {
            continue;
        };
        bounded_files += 1;
        let (x0, x1) = if lo.x > hi.x {
            (-180.0, 180.0)
        } else {
            (lo.x, hi.x)
        };
        let b = union.get_or_insert([x0, lo.y, x1, hi.y]);
        *b = [b[0].min(x0), b[1].min(lo.y), b[2].max(x1), b[3].max(hi.y)];
    }
    ColumnStats {
        lower: union.map(|b| format!("POINT ({} {})", b[0], b[1])),
        upper: union.map(|b| format!("POINT ({} {})", b[2], b[3])),
        null_count: null_count(files, id),
        bounded_files,
    }
}
