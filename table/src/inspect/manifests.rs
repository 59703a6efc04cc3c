//! The `manifests` metadata table: one row per manifest of the current snapshot, with its file
//! counts by content and a readable summary of each partition field.

use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, ListBuilder, StringBuilder, StructBuilder};
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use iceberg::spec::{Datum, ManifestContentType, ManifestFile, PrimitiveType, Type};

use crate::error::Result;
use crate::table::Table;

fn summary_fields() -> Fields {
    Fields::from(vec![
        Field::new("contains_null", DataType::Boolean, false),
        Field::new("contains_nan", DataType::Boolean, true),
        Field::new("lower_bound", DataType::Utf8, true),
        Field::new("upper_bound", DataType::Utf8, true),
    ])
}

/// The partition field types of each manifest's spec, in the spec's order.
fn partition_types(table: &Table, m: &ManifestFile) -> Vec<Option<PrimitiveType>> {
    let metadata = table.metadata();
    let Some(spec) = metadata.partition_spec_by_id(m.partition_spec_id) else {
        return Vec::new();
    };
    match spec.partition_type(metadata.current_schema()) {
        Ok(t) => t
            .fields()
            .iter()
            .map(|f| match f.field_type.as_ref() {
                Type::Primitive(p) => Some(p.clone()),
                _ => None,
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// A serialized partition bound as text, or `None` when it cannot be decoded.
fn readable(bytes: Option<&[u8]>, ty: Option<&PrimitiveType>) -> Option<String> {
    let datum = Datum::try_from_bytes(bytes?, ty?.clone()).ok()?;
    Some(match datum.literal() {
        iceberg::spec::PrimitiveLiteral::String(s) => s.clone(),
        _ => datum.to_string(),
    })
}

/// `manifests`.
pub(crate) fn manifests(table: &Table) -> Result<RecordBatch> {
    let list = table.manifests()?;
    let data = |m: &ManifestFile| m.content == ManifestContentType::Data;
    let count = |of_data: bool, n: fn(&ManifestFile) -> Option<u32>| -> ArrayRef {
        Arc::new(Int32Array::from_iter_values(list.iter().map(|m| {
            if data(m) == of_data {
                n(m).unwrap_or(0) as i32
            } else {
                0
            }
        })))
    };
    let mut summaries = ListBuilder::new(StructBuilder::from_fields(summary_fields(), 0))
        .with_field(Field::new(
            "item",
            DataType::Struct(summary_fields()),
            false,
        ));
    for m in &list {
        let types = partition_types(table, m);
        for (i, s) in m.partitions.iter().flatten().enumerate() {
            let ty = types.get(i).and_then(Option::as_ref);
            let b = summaries.values();
            b.field_builder::<BooleanBuilder>(0)
                .expect("field 0 is boolean")
                .append_value(s.contains_null);
            b.field_builder::<BooleanBuilder>(1)
                .expect("field 1 is boolean")
                .append_option(s.contains_nan);
            b.field_builder::<StringBuilder>(2)
                .expect("field 2 is text")
                .append_option(readable(s.lower_bound.as_deref().map(|v| &**v), ty));
            b.field_builder::<StringBuilder>(3)
                .expect("field 3 is text")
                .append_option(readable(s.upper_bound.as_deref().map(|v| &**v), ty));
            b.append(true);
        }
        summaries.append(true);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(
            list.iter().map(|m| m.content as i32),
        )),
        Arc::new(StringArray::from_iter_values(
            list.iter().map(|m| m.manifest_path.as_str()),
        )),
        Arc::new(Int64Array::from_iter_values(
            list.iter().map(|m| m.manifest_length),
        )),
        Arc::new(Int32Array::from_iter_values(
            list.iter().map(|m| m.partition_spec_id),
        )),
        Arc::new(Int64Array::from_iter_values(
            list.iter().map(|m| m.added_snapshot_id),
        )),
        count(true, |m| m.added_files_count),
        count(true, |m| m.existing_files_count),
        count(true, |m| m.deleted_files_count),
        count(false, |m| m.added_files_count),
        count(false, |m| m.existing_files_count),
        count(false, |m| m.deleted_files_count),
        Arc::new(summaries.finish()),
    ];
    let names = [
        "content",
        "path",
        "length",
        "partition_spec_id",
        "added_snapshot_id",
        "added_data_files_count",
        "existing_data_files_count",
        "deleted_data_files_count",
        "added_delete_files_count",
        "existing_delete_files_count",
        "deleted_delete_files_count",
        "partition_summaries",
    ];
    let fields: Vec<Field> = names
        .iter()
        .zip(&columns)
        .map(|(n, c)| Field::new(*n, c.data_type().clone(), *n == "partition_summaries"))
        .collect();
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}
