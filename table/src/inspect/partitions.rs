//! The `partitions` metadata table: the live files of the current snapshot grouped by
//! partition, with Iceberg's counts per content and when the partition last changed. An
//! unpartitioned table has one row (and no `partition` or `spec_id` column), as in Iceberg.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, TimestampMicrosecondArray};
use arrow_schema::{Field, Schema};
use iceberg::spec::{DataContentType, Struct};

use crate::error::Result;
use crate::inspect::partition_values::PartitionValues;
use crate::table::Table;

/// The totals of one partition.
#[derive(Default)]
struct Totals {
    record_count: i64,
    file_count: i32,
    data_bytes: i64,
    position_delete_records: i64,
    position_delete_files: i32,
    equality_delete_records: i64,
    equality_delete_files: i32,
    /// `(committed at in ms, snapshot id)` of the latest snapshot that added a file.
    last_updated: Option<(i64, i64)>,
}

/// `partitions`.
pub(crate) fn partitions(table: &Table) -> Result<RecordBatch> {
    let entries = table.live_entries()?;
    let metadata = table.metadata();
    let partition = PartitionValues::of(metadata);
    // Keyed by spec and the tuple's debug text (literals of floats are not `Ord`), in first-seen
    // order of a stable key.
    let mut groups: BTreeMap<(i32, String), (i32, &Struct, Totals)> = BTreeMap::new();
    for (spec, e) in &entries {
        let f = e.data_file();
        let key = match partition {
            Some(_) => (*spec, format!("{:?}", f.partition())),
            None => (0, String::new()),
        };
        let (_, _, t) = groups
            .entry(key)
            .or_insert_with(|| (*spec, f.partition(), Totals::default()));
        let records = f.record_count() as i64;
        match f.content_type() {
            DataContentType::Data => {
                t.record_count += records;
                t.file_count += 1;
                t.data_bytes += f.file_size_in_bytes() as i64;
            }
            DataContentType::PositionDeletes => {
                t.position_delete_records += records;
                t.position_delete_files += 1;
            }
            DataContentType::EqualityDeletes => {
                t.equality_delete_records += records;
                t.equality_delete_files += 1;
            }
        }
        if let Some(snapshot) = e.snapshot_id().and_then(|id| metadata.snapshot_by_id(id)) {
            let at = (snapshot.timestamp_ms(), snapshot.snapshot_id());
            if t.last_updated.is_none_or(|l| l < at) {
                t.last_updated = Some(at);
            }
        }
    }
    let rows: Vec<&(i32, &Struct, Totals)> = groups.values().collect();
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    let mut push = |name: &str, array: ArrayRef, nullable: bool| {
        fields.push(Field::new(name, array.data_type().clone(), nullable));
        columns.push(array);
    };
    if let Some(p) = &partition {
        let tuples: Vec<(i32, &Struct)> = rows.iter().map(|(s, t, _)| (*s, *t)).collect();
        push("partition", p.column(&tuples)?, false);
        push(
            "spec_id",
            Arc::new(Int32Array::from_iter_values(
                rows.iter().map(|(s, _, _)| *s),
            )),
            false,
        );
    }
    let long = |f: fn(&Totals) -> i64| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|(_, _, t)| f(t)),
        ))
    };
    let int = |f: fn(&Totals) -> i32| -> ArrayRef {
        Arc::new(Int32Array::from_iter_values(
            rows.iter().map(|(_, _, t)| f(t)),
        ))
    };
    push("record_count", long(|t| t.record_count), false);
    push("file_count", int(|t| t.file_count), false);
    push(
        "total_data_file_size_in_bytes",
        long(|t| t.data_bytes),
        false,
    );
    push(
        "position_delete_record_count",
        long(|t| t.position_delete_records),
        false,
    );
    push(
        "position_delete_file_count",
        int(|t| t.position_delete_files),
        false,
    );
    push(
        "equality_delete_record_count",
        long(|t| t.equality_delete_records),
        false,
    );
    push(
        "equality_delete_file_count",
        int(|t| t.equality_delete_files),
        false,
    );
    push(
        "last_updated_at",
        Arc::new(
            TimestampMicrosecondArray::from_iter(
                rows.iter()
                    .map(|(_, _, t)| t.last_updated.map(|(ms, _)| ms * 1000)),
            )
            .with_timezone("+00:00"),
        ),
        true,
    );
    push(
        "last_updated_snapshot_id",
        Arc::new(Int64Array::from_iter(
            rows.iter()
                .map(|(_, _, t)| t.last_updated.map(|(_, id)| id)),
        )),
        true,
    );
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}
