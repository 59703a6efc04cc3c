//! The table's current columns in one data file: matched by Iceberg field id (the spec's
//! "Column Projection"), so a file written before a schema change reads under the current
//! names, a column added since reads as nulls, and a dropped column is not returned.
//!
//! Files without field ids (written by a tool that records none) are matched by name, as
//! before any schema change there is nothing else to go by.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, new_null_array};
use arrow_schema::{Field, Schema as ArrowSchema};
use geoberg_rewrite::arrow_field_id;
use iceberg::spec::{NestedFieldRef, Schema};
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;

use crate::error::Result;
use crate::schema::file_arrow_type;

/// Where each current top-level column is in one file's Arrow schema.
pub(crate) struct FileColumns {
    /// The current schema's top-level fields, in order, and their root index in the file.
    columns: Vec<(NestedFieldRef, Option<usize>)>,
}

impl FileColumns {
    /// Matches `schema`'s top-level fields against a file's Arrow schema.
    pub(crate) fn new(schema: &Schema, file: &ArrowSchema) -> FileColumns {
        let by_id: HashMap<i32, usize> = file
            .fields()
            .iter()
            .enumerate()
            .filter_map(|(i, f)| arrow_field_id(f).map(|id| (id, i)))
            .collect();
        let columns = schema
            .as_struct()
            .fields()
            .iter()
            .map(|f| {
                let index = if by_id.is_empty() {
                    file.index_of(&f.name).ok()
                } else {
                    by_id.get(&f.id).copied()
                };
                (f.clone(), index)
            })
            .collect();
        FileColumns { columns }
    }

    /// Position of a current column in the schema, `None` when the table has no such column.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|(f, _)| f.name == name)
    }

    /// The file's root index of current column `position`; `None` when the file predates it.
    pub(crate) fn file_index(&self, position: usize) -> Option<usize> {
        self.columns[position].1
    }

    /// Number of current columns.
    pub(crate) fn len(&self) -> usize {
        self.columns.len()
    }

    /// A batch read from the file with projection `roots` (file root indices, sorted) as the
    /// current schema sees it: current columns `wanted` (positions, sorted) under their current
    /// names, nulls where the file has none, then `extra` file roots (the stored lineage
    /// columns) as they were read.
    pub(crate) fn conform(
        &self,
        batch: &RecordBatch,
        roots: &[usize],
        wanted: &[usize],
        extra: &[usize],
    ) -> Result<RecordBatch> {
        let schema = batch.schema();
        let column_of = |root: usize| roots.iter().position(|&r| r == root);
        let mut fields: Vec<Field> = Vec::with_capacity(wanted.len() + extra.len());
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(wanted.len() + extra.len());
        for &p in wanted {
            let (field, index) = &self.columns[p];
            match index.and_then(column_of) {
                Some(c) => {
                    let f = schema.field(c).clone().with_name(&field.name);
                    fields.push(f);
                    arrays.push(batch.column(c).clone());
                }
                None => {
                    let ty = file_arrow_type(&field.field_type);
                    arrays.push(new_null_array(&ty, batch.num_rows()));
                    fields.push(
                        Field::new(&field.name, ty, true).with_metadata(HashMap::from([(
                            PARQUET_FIELD_ID_META_KEY.to_string(),
                            field.id.to_string(),
                        )])),
                    );
                }
            }
        }
        for &root in extra {
            if let Some(c) = column_of(root) {
                fields.push(schema.field(c).clone());
                arrays.push(batch.column(c).clone());
            }
        }
        let out = Arc::new(ArrowSchema::new_with_metadata(
            fields,
            schema.metadata().clone(),
        ));
        Ok(RecordBatch::try_new_with_options(
            out,
            arrays,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
        )?)
    }
}
