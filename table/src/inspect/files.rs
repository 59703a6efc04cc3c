//! The `files`, `data_files` and `delete_files` metadata tables: one row per live file of the
//! current snapshot, with Iceberg's columns (the manifest's metrics as maps keyed by field id,
//! bounds in Iceberg's single-value serialization) and `readable_metrics`, each column's
//! metrics under its name with its bounds typed as the column: geometry and geography bounds
//! as WKB points that SQL's `ST_X`, `ST_AsText` read.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, Int32Builder, Int64Builder, ListBuilder, MapBuilder, MapFieldNames,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, Int32Array, Int64Array, RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use iceberg::spec::{DataContentType, DataFile, Datum, PrimitiveLiteral, Type};

use crate::error::Result;
use crate::inspect::partition_values::PartitionValues;
use crate::inspect::values::literal_array;
use crate::metrics::inferred_metrics_order;
use crate::table::Table;

/// Which live files a files table lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    All,
    Data,
    Deletes,
}

/// The files table of `kind`.
pub(crate) fn files(table: &Table, kind: FileKind) -> Result<RecordBatch> {
    let entries = table.live_entries()?;
    let rows: Vec<(i32, &DataFile)> = entries
        .iter()
        .map(|(spec, e)| (*spec, e.data_file()))
        .filter(|(_, f)| match kind {
            FileKind::All => true,
            FileKind::Data => f.content_type() == DataContentType::Data,
            FileKind::Deletes => f.content_type() != DataContentType::Data,
        })
        .collect();

    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    let mut push = |name: &str, array: ArrayRef, nullable: bool| {
        fields.push(Field::new(name, array.data_type().clone(), nullable));
        columns.push(array);
    };
    push(
        "content",
        Arc::new(Int32Array::from_iter_values(
            rows.iter().map(|(_, f)| f.content_type() as i32),
        )),
        false,
    );
    push(
        "file_path",
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|(_, f)| f.file_path()),
        )),
        false,
    );
    push(
        "file_format",
        Arc::new(StringArray::from_iter_values(
            rows.iter()
                .map(|(_, f)| f.file_format().to_string().to_uppercase()),
        )),
        false,
    );
    push(
        "spec_id",
        Arc::new(Int32Array::from_iter_values(rows.iter().map(|(s, _)| *s))),
        false,
    );
    if let Some(partition) = PartitionValues::of(table.metadata()) {
        let tuples: Vec<(i32, &iceberg::spec::Struct)> =
            rows.iter().map(|(s, f)| (*s, f.partition())).collect();
        push("partition", partition.column(&tuples)?, false);
    }
    push(
        "record_count",
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|(_, f)| f.record_count() as i64),
        )),
        false,
    );
    push(
        "file_size_in_bytes",
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|(_, f)| f.file_size_in_bytes() as i64),
        )),
        false,
    );
    push(
        "column_sizes",
        count_map(&rows, DataFile::column_sizes)?,
        true,
    );
    push(
        "value_counts",
        count_map(&rows, DataFile::value_counts)?,
        true,
    );
    push(
        "null_value_counts",
        count_map(&rows, DataFile::null_value_counts)?,
        true,
    );
    push(
        "nan_value_counts",
        count_map(&rows, DataFile::nan_value_counts)?,
        true,
    );
    push(
        "lower_bounds",
        bound_map(&rows, DataFile::lower_bounds)?,
        true,
    );
    push(
        "upper_bounds",
        bound_map(&rows, DataFile::upper_bounds)?,
        true,
    );
    push(
        "key_metadata",
        Arc::new(BinaryArray::from_iter(
            rows.iter().map(|(_, f)| f.key_metadata()),
        )),
        true,
    );
    let mut offsets = ListBuilder::new(Int64Builder::new());
    for (_, f) in &rows {
        match f.split_offsets() {
            Some(o) => offsets.append_value(o.iter().map(|v| Some(*v))),
            None => offsets.append_null(),
        }
    }
    push("split_offsets", Arc::new(offsets.finish()), true);
    let mut equality = ListBuilder::new(Int32Builder::new());
    for (_, f) in &rows {
        match f.equality_ids() {
            Some(ids) => equality.append_value(ids.into_iter().map(Some)),
            None => equality.append_null(),
        }
    }
    push("equality_ids", Arc::new(equality.finish()), true);
    push(
        "sort_order_id",
        Arc::new(Int32Array::from_iter(
            rows.iter().map(|(_, f)| f.sort_order_id()),
        )),
        true,
    );
    push(
        "referenced_data_file",
        Arc::new(StringArray::from_iter(
            rows.iter().map(|(_, f)| f.referenced_data_file()),
        )),
        true,
    );
    push("readable_metrics", readable_metrics(table, &rows)?, false);
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

fn map_names() -> MapFieldNames {
    MapFieldNames {
        entry: "key_value".into(),
        key: "key".into(),
        value: "value".into(),
    }
}

/// A `map<int, long>` of per-column counts, keys in field id order.
fn count_map(
    rows: &[(i32, &DataFile)],
    counts: fn(&DataFile) -> &HashMap<i32, u64>,
) -> Result<ArrayRef> {
    let mut b = MapBuilder::new(Some(map_names()), Int32Builder::new(), Int64Builder::new());
    for (_, f) in rows {
        let mut entries: Vec<(&i32, &u64)> = counts(f).iter().collect();
        entries.sort();
        for (id, n) in entries {
            b.keys().append_value(*id);
            b.values().append_value(*n as i64);
        }
        b.append(true)?;
    }
    Ok(Arc::new(b.finish()))
}

/// A `map<int, binary>` of per-column bounds in Iceberg's single-value serialization.
fn bound_map(
    rows: &[(i32, &DataFile)],
    bounds: fn(&DataFile) -> &HashMap<i32, Datum>,
) -> Result<ArrayRef> {
    let mut b = MapBuilder::new(Some(map_names()), Int32Builder::new(), BinaryBuilder::new());
    for (_, f) in rows {
        let mut entries: Vec<(&i32, &Datum)> = bounds(f).iter().collect();
        entries.sort_by_key(|(id, _)| **id);
        for (id, d) in entries {
            let Ok(bytes) = d.to_bytes() else { continue };
            b.keys().append_value(*id);
            b.values().append_value(bytes.as_ref());
        }
        b.append(true)?;
    }
    Ok(Arc::new(b.finish()))
}

/// A geometry or geography bound (Iceberg's x, y[, z, m] doubles) as a WKB point; `None` when
/// the bytes are not a bound.
fn bound_as_wkb_point(bytes: &[u8]) -> Option<Vec<u8>> {
    let b = geoberg_geostats::GeospatialBound::from_bytes(bytes).ok()?;
    let (code, extra): (u32, Vec<f64>) = match (b.z, b.m) {
        (None, None) => (1, vec![]),
        (Some(z), None) => (1001, vec![z]),
        (None, Some(m)) => (2001, vec![m]),
        (Some(z), Some(m)) => (3001, vec![z, m]),
    };
    let mut wkb = Vec::with_capacity(37);
    wkb.push(1u8);
    wkb.extend_from_slice(&code.to_le_bytes());
    for v in [b.x, b.y].into_iter().chain(extra) {
        wkb.extend_from_slice(&v.to_le_bytes());
    }
    Some(wkb)
}

/// `readable_metrics`: a struct with one struct per primitive column (by its full name, in
/// metrics order) of `column_size`, `value_count`, `null_value_count`, `nan_value_count`,
/// `lower_bound`, `upper_bound`.
fn readable_metrics(table: &Table, rows: &[(i32, &DataFile)]) -> Result<ArrayRef> {
    let schema = table.metadata().current_schema();
    let geo = table.geo_fields();
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (id, name) in inferred_metrics_order(schema.as_struct()) {
        let Some(field) = schema.field_by_id(id) else {
            continue;
        };
        let Type::Primitive(ty) = field.field_type.as_ref() else {
            continue;
        };
        let count = |counts: fn(&DataFile) -> &HashMap<i32, u64>| -> ArrayRef {
            Arc::new(Int64Array::from_iter(
                rows.iter()
                    .map(|(_, f)| counts(f).get(&id).map(|n| *n as i64)),
            ))
        };
        let mut parts: Vec<(Field, ArrayRef)> = [
            ("column_size", count(DataFile::column_sizes)),
            ("value_count", count(DataFile::value_counts)),
            ("null_value_count", count(DataFile::null_value_counts)),
            ("nan_value_count", count(DataFile::nan_value_counts)),
        ]
        .into_iter()
        .map(|(n, a)| (Field::new(n, DataType::Int64, true), a))
        .collect();
        for (part, bounds) in [
            (
                "lower_bound",
                DataFile::lower_bounds as fn(&DataFile) -> &HashMap<i32, Datum>,
            ),
            ("upper_bound", DataFile::upper_bounds),
        ] {
            let (f, a): (Field, ArrayRef) = if geo.contains_key(&id) {
                let points = rows
                    .iter()
                    .map(|(_, f)| match bounds(f).get(&id)?.literal() {
                        PrimitiveLiteral::Binary(b) => bound_as_wkb_point(b),
                        _ => None,
                    });
                let mut md = HashMap::new();
                md.insert(
                    "ARROW:extension:name".to_string(),
                    "geoarrow.wkb".to_string(),
                );
                md.insert("ARROW:extension:metadata".to_string(), "{}".to_string());
                (
                    Field::new(part, DataType::Binary, true).with_metadata(md),
                    Arc::new(BinaryArray::from_iter(points)),
                )
            } else {
                let values: Vec<Option<&PrimitiveLiteral>> = rows
                    .iter()
                    .map(|(_, f)| bounds(f).get(&id).map(Datum::literal))
                    .collect();
                let a = literal_array(ty, &values)?;
                (Field::new(part, a.data_type().clone(), true), a)
            };
            parts.push((f, a));
        }
        let (part_fields, part_arrays): (Vec<Field>, Vec<ArrayRef>) = parts.into_iter().unzip();
        let column = StructArray::try_new(Fields::from(part_fields), part_arrays, None)?;
        fields.push(Field::new(name, column.data_type().clone(), false));
        arrays.push(Arc::new(column));
    }
    Ok(Arc::new(StructArray::try_new_with_length(
        Fields::from(fields),
        arrays,
        None,
        rows.len(),
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geo_bounds_read_as_wkb_points() {
        let mut xy = Vec::new();
        xy.extend_from_slice(&1.5f64.to_le_bytes());
        xy.extend_from_slice(&(-2.0f64).to_le_bytes());
        let wkb = bound_as_wkb_point(&xy).unwrap();
        let point = wkb::reader::read_wkb(&wkb).unwrap();
        use geo_traits::{CoordTrait, GeometryTrait, GeometryType, PointTrait};
        let GeometryType::Point(p) = point.as_type() else {
            panic!("not a point")
        };
        let c = p.coord().unwrap();
        assert_eq!((c.x(), c.y()), (1.5, -2.0));
        assert!(bound_as_wkb_point(&[0u8; 5]).is_none());
    }
}
