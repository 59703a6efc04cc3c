//! Iceberg v3 row lineage through a rewrite: every row keeps its `_row_id` and
//! `_last_updated_sequence_number`, materialized as the reserved metadata columns of the output
//! files.
//!
//! The spec ("Row Lineage"): when an existing row moves to a new data file, its non-null
//! `_row_id` must be copied, and so must its `_last_updated_sequence_number` when the row is not
//! modified. A reader takes a row's values from these columns when present and non-null, else it
//! derives them: `_row_id = first_row_id + _pos` of the file, `_last_updated_sequence_number =`
//! the file's data sequence number. A rewrite reorders rows across files, so it must write both
//! columns explicitly.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;
use parquet::basic::{Repetition, Type as PhysicalType};
use parquet::schema::types::{SchemaDescriptor, Type};

use crate::{RewriteError, RowLineage};

/// Reserved field id of `_row_id` (Iceberg spec, "Reserved Field IDs").
pub const ROW_ID_FIELD_ID: i32 = 2_147_483_540;
/// Reserved field id of `_last_updated_sequence_number`.
pub const LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID: i32 = 2_147_483_539;
/// Name of the `_row_id` metadata column.
pub const ROW_ID_COLUMN: &str = "_row_id";
/// Name of the `_last_updated_sequence_number` metadata column.
pub const LAST_UPDATED_SEQUENCE_NUMBER_COLUMN: &str = "_last_updated_sequence_number";

/// The Parquet field id an Arrow field read from Parquet carries, if any.
pub fn arrow_field_id(field: &Field) -> Option<i32> {
    field
        .metadata()
        .get(PARQUET_FIELD_ID_META_KEY)
        .and_then(|v| v.parse().ok())
}

/// Whether an Arrow field (read from Parquet) is one of the two row-lineage columns, by field id.
pub fn is_lineage_field(field: &Field) -> bool {
    matches!(
        arrow_field_id(field),
        Some(ROW_ID_FIELD_ID | LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID)
    )
}

/// The two lineage columns as Arrow fields (nullable longs with their reserved field ids).
pub fn lineage_fields() -> [Field; 2] {
    let field = |name: &str, id: i32| {
        Field::new(name, DataType::Int64, true).with_metadata(HashMap::from([(
            PARQUET_FIELD_ID_META_KEY.to_string(),
            id.to_string(),
        )]))
    };
    [
        field(ROW_ID_COLUMN, ROW_ID_FIELD_ID),
        field(
            LAST_UPDATED_SEQUENCE_NUMBER_COLUMN,
            LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID,
        ),
    ]
}

/// The lineage of `rows` consecutive rows of a file starting at position `first_pos`: each value
/// from the file's own column where it is non-null (`stored_*`, `None` when the file has no such
/// column), else derived from the file's `lineage` (`first_row_id + position`, the data sequence
/// number). Values that cannot be derived (no lineage, or a file without a `first_row_id`) are
/// null, as the spec reads them.
pub fn derive_lineage(
    stored_row_id: Option<&Int64Array>,
    stored_seq: Option<&Int64Array>,
    lineage: Option<RowLineage>,
    first_pos: u64,
    rows: usize,
) -> (Int64Array, Int64Array) {
    let first_row_id = lineage.and_then(|l| l.first_row_id);
    let row_id = (0..rows).map(|i| match stored_row_id {
        Some(c) if c.is_valid(i) => Some(c.value(i)),
        _ => first_row_id.map(|f| f + (first_pos + i as u64) as i64),
    });
    let seq = lineage.map(|l| l.data_sequence_number);
    let seqs = (0..rows).map(|i| match stored_seq {
        Some(c) if c.is_valid(i) => Some(c.value(i)),
        _ => seq,
    });
    (row_id.collect(), seqs.collect())
}

/// Where the data and lineage columns of an input file are.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// File columns that are data (every column but the lineage ones), in file order.
    pub data: Vec<usize>,
    /// The file's `_row_id` column.
    pub row_id: Option<usize>,
    /// The file's `_last_updated_sequence_number` column.
    pub seq: Option<usize>,
}

impl Layout {
    /// The layout of `schema`; with `lineage` off every column is data (v1/v2 files are written
    /// back unchanged).
    pub fn of(schema: &Schema, lineage: bool) -> Layout {
        let mut layout = Layout {
            data: Vec::new(),
            row_id: None,
            seq: None,
        };
        for (i, f) in schema.fields().iter().enumerate() {
            match arrow_field_id(f) {
                Some(ROW_ID_FIELD_ID) if lineage => layout.row_id = Some(i),
                Some(LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID) if lineage => layout.seq = Some(i),
                _ => layout.data.push(i),
            }
        }
        layout
    }

    /// The data columns of `schema`.
    pub fn data_schema(&self, schema: &Schema) -> SchemaRef {
        Arc::new(Schema::new_with_metadata(
            self.data
                .iter()
                .map(|&i| schema.field(i).clone())
                .collect::<Vec<_>>(),
            schema.metadata().clone(),
        ))
    }

    /// `batch` (as read from the file) as its data columns followed by the two lineage columns,
    /// in `out` (the output schema); `first_pos` is the file position of its first row.
    pub fn with_lineage(
        &self,
        batch: &RecordBatch,
        lineage: Option<RowLineage>,
        first_pos: u64,
        out: &SchemaRef,
        path: &str,
    ) -> Result<RecordBatch, RewriteError> {
        let stored = |idx: Option<usize>| -> Result<Option<&Int64Array>, RewriteError> {
            let Some(i) = idx else { return Ok(None) };
            let column = batch.column(i);
            column
                .as_any()
                .downcast_ref::<Int64Array>()
                .map(Some)
                .ok_or_else(|| RewriteError::InvalidLineageColumn {
                    path: path.to_string(),
                    column: batch.schema().field(i).name().clone(),
                    found: column.data_type().to_string(),
                })
        };
        let (row_id, seq) = derive_lineage(
            stored(self.row_id)?,
            stored(self.seq)?,
            lineage,
            first_pos,
            batch.num_rows(),
        );
        let mut columns: Vec<ArrayRef> =
            self.data.iter().map(|&i| batch.column(i).clone()).collect();
        columns.push(Arc::new(row_id));
        columns.push(Arc::new(seq));
        RecordBatch::try_new(out.clone(), columns)
            .map_err(|e| RewriteError::arrow("adding the row-lineage columns", e))
    }
}

/// The output schemas of a partition whose rows carry lineage: the data columns of the first
/// input (Arrow and Parquet, so that field ids and logical types are kept) followed by
/// `_row_id` and `_last_updated_sequence_number`.
pub(crate) fn output_schemas(
    data_arrow: &SchemaRef,
    input_parquet: &SchemaDescriptor,
) -> Result<(SchemaRef, SchemaDescriptor), RewriteError> {
    let mut fields: Vec<Arc<Field>> = data_arrow.fields().iter().cloned().collect();
    fields.extend(lineage_fields().map(Arc::new));
    let arrow = Arc::new(Schema::new_with_metadata(
        fields,
        data_arrow.metadata().clone(),
    ));

    let root = input_parquet.root_schema();
    let mut parquet_fields: Vec<Arc<Type>> = root
        .get_fields()
        .iter()
        .filter(|f| {
            let info = f.get_basic_info();
            !(info.has_id()
                && matches!(
                    info.id(),
                    ROW_ID_FIELD_ID | LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID
                ))
        })
        .cloned()
        .collect();
    for (name, id) in [
        (ROW_ID_COLUMN, ROW_ID_FIELD_ID),
        (
            LAST_UPDATED_SEQUENCE_NUMBER_COLUMN,
            LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID,
        ),
    ] {
        let t = Type::primitive_type_builder(name, PhysicalType::INT64)
            .with_repetition(Repetition::OPTIONAL)
            .with_id(Some(id))
            .build()
            .map_err(|e| RewriteError::InvalidPlan(format!("lineage column {name}: {e}")))?;
        parquet_fields.push(Arc::new(t));
    }
    let root = Type::group_type_builder(root.name())
        .with_fields(parquet_fields)
        .build()
        .map_err(|e| RewriteError::InvalidPlan(format!("output schema: {e}")))?;
    Ok((arrow, SchemaDescriptor::new(Arc::new(root))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_values_win_and_nulls_are_derived() {
        let stored = Int64Array::from(vec![Some(7), None, Some(9)]);
        let seqs = Int64Array::from(vec![None, Some(2), None]);
        let lineage = RowLineage {
            first_row_id: Some(100),
            data_sequence_number: 5,
        };
        let (ids, s) = derive_lineage(Some(&stored), Some(&seqs), Some(lineage), 10, 3);
        assert_eq!(ids, Int64Array::from(vec![7, 111, 9]));
        assert_eq!(s, Int64Array::from(vec![5, 2, 5]));
        let (ids, s) = derive_lineage(None, None, Some(lineage), 0, 2);
        assert_eq!(ids, Int64Array::from(vec![100, 101]));
        assert_eq!(s, Int64Array::from(vec![5, 5]));
        // A file without a first_row_id (from before an upgrade to v3): ids stay null.
        let unassigned = RowLineage {
            first_row_id: None,
            data_sequence_number: 1,
        };
        let (ids, _) = derive_lineage(None, None, Some(unassigned), 0, 2);
        assert_eq!(ids.null_count(), 2);
        let (ids, s) = derive_lineage(None, None, None, 0, 1);
        assert_eq!((ids.null_count(), s.null_count()), (1, 1));
    }
}
