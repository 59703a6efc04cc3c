//! The `snapshots`, `history` and `refs` metadata tables: what the table metadata says about
//! its versions, with Iceberg's columns.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use arrow_array::builder::{MapBuilder, MapFieldNames, StringBuilder};
use arrow_array::{
    ArrayRef, BooleanArray, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use iceberg::spec::TableMetadata;

use crate::error::{Error, Result};

/// The time zone of Iceberg's `timestamptz` in Arrow, as `iceberg` writes it.
const UTC: &str = "+00:00";

fn timestamp_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()))
}

fn timestamps(millis: impl IntoIterator<Item = i64>) -> ArrayRef {
    Arc::new(
        TimestampMicrosecondArray::from_iter_values(millis.into_iter().map(|ms| ms * 1000))
            .with_timezone(UTC),
    )
}

/// A `map<string, string>` column, keys sorted.
pub(crate) fn string_map(rows: &[BTreeMap<&str, &str>]) -> Result<ArrayRef> {
    let names = MapFieldNames {
        entry: "key_value".into(),
        key: "key".into(),
        value: "value".into(),
    };
    let mut b = MapBuilder::new(Some(names), StringBuilder::new(), StringBuilder::new());
    for row in rows {
        for (k, v) in row {
            b.keys().append_value(k);
            b.values().append_value(v);
        }
        b.append(true)?;
    }
    Ok(Arc::new(b.finish()))
}

/// `snapshots`: one row per snapshot the metadata keeps, oldest first.
pub(crate) fn snapshots(metadata: &TableMetadata) -> Result<RecordBatch> {
    let mut list: Vec<_> = metadata.snapshots().collect();
    list.sort_by_key(|s| (s.timestamp_ms(), s.sequence_number()));
    let summaries: Vec<BTreeMap<&str, &str>> = list
        .iter()
        .map(|s| {
            s.summary()
                .additional_properties
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect()
        })
        .collect();
    let summary = string_map(&summaries)?;
    let schema = Schema::new(vec![
        Field::new("committed_at", timestamp_type(), false),
        Field::new("snapshot_id", DataType::Int64, false),
        Field::new("parent_id", DataType::Int64, true),
        Field::new("operation", DataType::Utf8, true),
        Field::new("manifest_list", DataType::Utf8, true),
        Field::new("summary", summary.data_type().clone(), true),
    ]);
    let columns: Vec<ArrayRef> = vec![
        timestamps(list.iter().map(|s| s.timestamp_ms())),
        Arc::new(Int64Array::from_iter_values(
            list.iter().map(|s| s.snapshot_id()),
        )),
        Arc::new(Int64Array::from_iter(
            list.iter().map(|s| s.parent_snapshot_id()),
        )),
        Arc::new(StringArray::from_iter_values(
            list.iter().map(|s| s.summary().operation.as_str()),
        )),
        Arc::new(StringArray::from_iter_values(
            list.iter().map(|s| s.manifest_list()),
        )),
        summary,
    ];
    Ok(RecordBatch::try_new(Arc::new(schema), columns)?)
}

/// `history`: the snapshot log, one row per time a snapshot became current, with whether it
/// is an ancestor of the current snapshot (false after a rollback).
pub(crate) fn history(metadata: &TableMetadata) -> Result<RecordBatch> {
    let mut ancestors = HashSet::new();
    let mut at = metadata.current_snapshot_id();
    while let Some(id) = at {
        if !ancestors.insert(id) {
            break;
        }
        at = metadata
            .snapshot_by_id(id)
            .and_then(|s| s.parent_snapshot_id());
    }
    let log = metadata.history();
    let schema = Schema::new(vec![
        Field::new("made_current_at", timestamp_type(), false),
        Field::new("snapshot_id", DataType::Int64, false),
        Field::new("parent_id", DataType::Int64, true),
        Field::new("is_current_ancestor", DataType::Boolean, false),
    ]);
    let columns: Vec<ArrayRef> = vec![
        timestamps(log.iter().map(|l| l.timestamp_ms)),
        Arc::new(Int64Array::from_iter_values(
            log.iter().map(|l| l.snapshot_id),
        )),
        Arc::new(Int64Array::from_iter(log.iter().map(|l| {
            metadata
                .snapshot_by_id(l.snapshot_id)
                .and_then(|s| s.parent_snapshot_id())
        }))),
        Arc::new(BooleanArray::from_iter(
            log.iter().map(|l| Some(ancestors.contains(&l.snapshot_id))),
        )),
    ];
    Ok(RecordBatch::try_new(Arc::new(schema), columns)?)
}

/// `refs`: the table's branches and tags, by name.
pub(crate) fn refs(metadata: &TableMetadata) -> Result<RecordBatch> {
    // `iceberg` keeps the refs map private; its serialized form is the spec's `refs`.
    let doc = serde_json::to_value(metadata)
        .map_err(|e| Error::corrupt("<table metadata>", e.to_string()))?;
    let empty = serde_json::Map::new();
    let refs = doc
        .get("refs")
        .and_then(|r| r.as_object())
        .unwrap_or(&empty);
    let mut rows: Vec<(&String, &serde_json::Value)> = refs.iter().collect();
    rows.sort_by(|a, b| a.0.cmp(b.0));
    let long = |key: &str| -> ArrayRef {
        Arc::new(Int64Array::from_iter(
            rows.iter()
                .map(|(_, r)| r.get(key).and_then(|v| v.as_i64())),
        ))
    };
    let schema = Schema::new(vec![
        Field::new("name", DataType::Utf8, false),
        Field::new("type", DataType::Utf8, false),
        Field::new("snapshot_id", DataType::Int64, false),
        Field::new("max_reference_age_in_ms", DataType::Int64, true),
        Field::new("min_snapshots_to_keep", DataType::Int32, true),
        Field::new("max_snapshot_age_in_ms", DataType::Int64, true),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|(n, _)| n.as_str()),
        )),
        Arc::new(StringArray::from_iter_values(rows.iter().map(|(_, r)| {
            match r.get("type").and_then(|t| t.as_str()) {
                Some("tag") => "TAG",
                _ => "BRANCH",
            }
        }))),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|(_, r)| {
            r.get("snapshot-id").and_then(|v| v.as_i64()).unwrap_or(-1)
        }))),
        long("max-ref-age-ms"),
        Arc::new(Int32Array::from_iter(rows.iter().map(|(_, r)| {
            r.get("min-snapshots-to-keep")
                .and_then(|v| v.as_i64())
                .and_then(|v| i32::try_from(v).ok())
        }))),
        long("max-snapshot-age-ms"),
    ];
    Ok(RecordBatch::try_new(Arc::new(schema), columns)?)
}
