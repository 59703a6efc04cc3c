//! One version of a geoberg table with its metadata columns: every column, then `_file` and
//! `_pos` (the data file a row lives in and its position there), and on format-version 3
//! `_row_id` and `_last_updated_sequence_number` (row lineage). Row-level changes read the
//! rows they change through it (`_file` and `_pos` say which rows to delete), and queries that
//! name a metadata column read the table through it.
//!
//! The files are planned once, by the table crate's file planner on the pushed filters, into
//! scan tasks (each file with its deleted rows and lineage); each partition reads its tasks
//! through the table crate's reader (deletes applied, lineage derived as the spec says) without
//! reading a manifest again. DataFusion applies the filters to the rows. The version is pinned: a change planned on it commits against it, and the
//! snapshot producer detects concurrent changes to the same files.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::Session as EngineSession;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
};
use futures::StreamExt;
use geoberg_table::{
    FILE_COLUMN, LAST_UPDATED_SEQUENCE_NUMBER_COLUMN, POS_COLUMN, ROW_ID_COLUMN, ScanTask, Table,
};

use crate::error::table_error;
use crate::geo_schema::table_arrow_schema;
use crate::pushdown::{PushedFilters, TableColumns};
use crate::scan_plan::choose_files;

/// A pinned table version with its metadata columns, as a DataFusion table.
#[derive(Debug)]
pub(crate) struct RowPositionsProvider {
    table: Table,
    schema: SchemaRef,
    columns: TableColumns,
    lineage: bool,
    /// The most data files one scan of this provider chose (what a change reports as scanned).
    files_read: Arc<AtomicUsize>,
}

impl RowPositionsProvider {
    /// The provider of `table`'s version (lineage columns on format-version 3).
    pub(crate) fn try_new(table: Table) -> Result<Self> {
        let lineage = table.metadata().format_version() as u8 >= 3;
        let base = table_arrow_schema(&table)?;
        let mut fields: Vec<Field> = base.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.push(Field::new(FILE_COLUMN, DataType::Utf8, false));
        fields.push(Field::new(POS_COLUMN, DataType::Int64, false));
        if lineage {
            fields.push(Field::new(ROW_ID_COLUMN, DataType::Int64, true));
            fields.push(Field::new(
                LAST_UPDATED_SEQUENCE_NUMBER_COLUMN,
                DataType::Int64,
                true,
            ));
        }
        Ok(RowPositionsProvider {
            columns: TableColumns::of(&table),
            schema: Arc::new(Schema::new(fields)),
            table,
            lineage,
            files_read: Arc::default(),
        })
    }

    /// The most data files one scan of the provider read so far.
    pub(crate) fn files_read(&self) -> usize {
        self.files_read.load(Ordering::Relaxed)
    }
}

#[async_trait]
impl TableProvider for RowPositionsProvider {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(PushedFilters::support(filters, &self.columns))
    }

    async fn scan(
        &self,
        state: &dyn EngineSession,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let pushed = PushedFilters::new(filters, &self.columns);
        let (table, lineage) = (self.table.clone(), self.lineage);
        // Planned once: the files, their deletes and lineage; executors read the tasks.
        let tasks = tokio::task::spawn_blocking(move || {
            let files = choose_files(&table, &pushed)?.files;
            row_scan(&table, lineage).tasks_of(files)
        })
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))?
        .map_err(table_error)?;
        self.files_read.fetch_max(tasks.len(), Ordering::Relaxed);
        let n = state
            .config()
            .target_partitions()
            .clamp(1, tasks.len().max(1));
        let mut partitions = vec![Vec::new(); n];
        for (i, task) in tasks.into_iter().enumerate() {
            partitions[i % n].push(task);
        }
        let schema = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => Arc::clone(&self.schema),
        };
        Ok(Arc::new(RowPositionsExec {
            properties: Arc::new(PlanProperties::new(
                EquivalenceProperties::new(Arc::clone(&schema)),
                Partitioning::UnknownPartitioning(partitions.len()),
                EmissionType::Incremental,
                Boundedness::Bounded,
            )),
            table: self.table.clone(),
            full_schema: Arc::clone(&self.schema),
            projection: projection.cloned(),
            schema,
            partitions,
            lineage: self.lineage,
        }))
    }
}

/// Reads the rows of some data files of a pinned version, with their metadata columns.
#[derive(Debug)]
pub(crate) struct RowPositionsExec {
    table: Table,
    full_schema: SchemaRef,
    projection: Option<Vec<usize>>,
    schema: SchemaRef,
    partitions: Vec<Vec<ScanTask>>,
    lineage: bool,
    properties: Arc<PlanProperties>,
}

impl DisplayAs for RowPositionsExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RowPositionsExec: table={}, files={}, partitions={}",
            self.table.ident(),
            self.partitions.iter().map(Vec::len).sum::<usize>(),
            self.partitions.len()
        )
    }
}

impl ExecutionPlan for RowPositionsExec {
    fn name(&self) -> &str {
        "RowPositionsExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let files = self.partitions.get(partition).cloned().unwrap_or_default();
        let (table, full, projection, lineage) = (
            self.table.clone(),
            Arc::clone(&self.full_schema),
            self.projection.clone(),
            self.lineage,
        );
        let stream = futures::stream::iter(files)
            .then(move |task| {
                let (table, full, projection) =
                    (table.clone(), Arc::clone(&full), projection.clone());
                async move {
                    tokio::task::spawn_blocking(move || {
                        read_task(&table, &task, &full, projection.as_deref(), lineage)
                    })
                    .await
                    .map_err(|e| DataFusionError::External(Box::new(e)))?
                }
            })
            .flat_map(|batches: Result<Vec<RecordBatch>>| {
                futures::stream::iter(match batches {
                    Ok(b) => b.into_iter().map(Ok).collect::<Vec<_>>(),
                    Err(e) => vec![Err(e)],
                })
            });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.schema),
            stream,
        )))
    }
}

/// The scan whose tasks this provider reads: every column, `_file` and `_pos`, and the row
/// lineage on format-version 3.
fn row_scan(table: &Table, lineage: bool) -> geoberg_table::Scan<'_> {
    table
        .scan()
        .with_file_position(true)
        .with_row_lineage(lineage)
}

/// The live rows of one planned data file in `full`'s column order (then projected), each
/// column cast to its type there (the table scan and the engine agree on every type but may
/// differ in field metadata).
fn read_task(
    table: &Table,
    task: &ScanTask,
    full: &SchemaRef,
    projection: Option<&[usize]>,
    lineage: bool,
) -> Result<Vec<RecordBatch>> {
    let file = task.path();
    let batches = row_scan(table, lineage)
        .read_task(task)
        .map_err(table_error)?;
    let wanted: Vec<usize> = match projection {
        Some(p) => p.to_vec(),
        None => (0..full.fields().len()).collect(),
    };
    let schema = Arc::new(full.project(&wanted)?);
    batches
        .iter()
        .map(|batch| {
            let columns = wanted
                .iter()
                .map(|&i| {
                    let field = full.field(i);
                    let column = batch.column_by_name(field.name()).ok_or_else(|| {
                        DataFusionError::Internal(format!(
                            "the scan of {file} returned no column {:?}",
                            field.name()
                        ))
                    })?;
                    conform(column, field.data_type())
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(RecordBatch::try_new_with_options(
                Arc::clone(&schema),
                columns,
                &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
            )?)
        })
        .collect()
}

fn conform(column: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    if column.data_type() == to {
        return Ok(Arc::clone(column));
    }
    Ok(arrow::compute::cast(column, to)?)
}
