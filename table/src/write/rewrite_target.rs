//! The schema a rewrite writes on a table whose schema evolved: files from before and after a
//! change sit in one partition, so each input batch is made into the current columns the way an
//! append makes its batches (columns matched by field id, nulls for a column the file predates,
//! derived bbox columns and Hilbert cells computed from the geometry), and every output file
//! has the current columns. A rewrite is then also a backfill of derived columns.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema as ArrowSchema, SchemaRef};
use geoberg_rewrite::{RewriteError, TargetSchema, is_lineage_field};
use parquet::schema::types::SchemaDescriptor;

use super::BatchAligner;
use super::parquet::parquet_schema;
use crate::error::Result;
use crate::file_columns::FileColumns;
use crate::ops::row_delta::labelled;
use crate::table::Table;

/// The current columns of one table version, as a rewrite's [`TargetSchema`].
pub(crate) struct RewriteTarget {
    table: Table,
    aligner: BatchAligner,
    parquet: SchemaDescriptor,
}

impl RewriteTarget {
    /// The target of `table`'s rewrites, when its schema ever changed (`None`: every file has
    /// the one schema, and outputs keep their inputs' columns).
    pub(crate) fn of(table: &Table) -> Result<Option<RewriteTarget>> {
        if table.metadata().schemas_iter().len() < 2 {
            return Ok(None);
        }
        let aligner = BatchAligner::with_lineage(table, false)?;
        let parquet = parquet_schema(&aligner.columns, &aligner.schema)?;
        Ok(Some(RewriteTarget {
            table: table.clone(),
            aligner,
            parquet,
        }))
    }

    /// Whether the batch's data columns are the target's already (then it is passed through).
    fn fits(&self, batch: &RecordBatch) -> bool {
        let want = self.aligner.schema.fields();
        let schema = batch.schema();
        let data: Vec<_> = schema
            .fields()
            .iter()
            .filter(|f| !is_lineage_field(f))
            .collect();
        let lineage_last = schema.fields()[..want.len().min(schema.fields().len())]
            .iter()
            .all(|f| !is_lineage_field(f));
        lineage_last
            && data.len() == want.len()
            && data.iter().zip(want.iter()).all(|(a, b)| {
                a.name() == b.name()
                    && a.data_type() == b.data_type()
                    && geoberg_rewrite::arrow_field_id(a) == geoberg_rewrite::arrow_field_id(b)
            })
    }

    fn conform_batch(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let schema = batch.schema();
        let columns = FileColumns::new(self.table.metadata().current_schema(), &schema);
        let roots: Vec<usize> = (0..schema.fields().len()).collect();
        let wanted: Vec<usize> = (0..columns.len()).collect();
        let lineage: Vec<usize> = roots
            .iter()
            .copied()
            .filter(|&i| is_lineage_field(schema.field(i)))
            .collect();
        let current = columns.conform(batch, &roots, &wanted, &lineage)?;
        let aligned = self.aligner.align(&labelled(&self.table, &current)?)?;
        let mut fields: Vec<_> = aligned.schema().fields().iter().cloned().collect();
        let mut arrays = aligned.columns().to_vec();
        let kept = current.num_columns() - lineage.len();
        for i in kept..current.num_columns() {
            fields.push(current.schema().fields()[i].clone());
            arrays.push(current.column(i).clone());
        }
        Ok(RecordBatch::try_new(
            Arc::new(ArrowSchema::new(fields)),
            arrays,
        )?)
    }
}

impl TargetSchema for RewriteTarget {
    fn arrow_schema(&self) -> SchemaRef {
        self.aligner.schema.clone()
    }

    fn parquet_schema(&self) -> SchemaDescriptor {
        self.parquet.clone()
    }

    fn conform(&self, location: &str, batch: &RecordBatch) -> Result<RecordBatch, RewriteError> {
        if self.fits(batch) {
            return Ok(batch.clone());
        }
        self.conform_batch(batch)
            .map_err(|e| RewriteError::Conform {
                path: location.to_string(),
                reason: e.to_string(),
            })
    }
}
