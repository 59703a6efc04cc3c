//! The columns of the output files when the inputs' columns differ: a table whose schema
//! evolved has files written before and after the change in one partition. The caller (who
//! knows the table's current schema) gives the output schema and turns each input batch into
//! it; without one, every input of a partition must have the same columns, and the outputs
//! keep them.

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::schema::types::SchemaDescriptor;

use crate::RewriteError;

/// The schema every output file of a rewrite has, and how an input batch becomes it.
pub trait TargetSchema: Send + Sync {
    /// The output files' data columns (Arrow fields with their Parquet field ids), without the
    /// row-lineage columns.
    fn arrow_schema(&self) -> SchemaRef;

    /// The same columns as Parquet writes them (logical types such as GEOMETRY included).
    fn parquet_schema(&self) -> SchemaDescriptor;

    /// A batch read from input `location` (all its columns) as [`TargetSchema::arrow_schema`]'s
    /// columns, followed by the batch's stored row-lineage columns (`_row_id`,
    /// `_last_updated_sequence_number`, by field id) where it has them. Rows stay in order.
    fn conform(&self, location: &str, batch: &RecordBatch) -> Result<RecordBatch, RewriteError>;
}
