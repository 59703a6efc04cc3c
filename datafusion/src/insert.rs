//! `INSERT INTO` and `INSERT OVERWRITE`: the rows of the statement, labelled with the SRID
//! their SedonaDB type carries, appended (or replacing the partitions they fall in) by the table
//! crate in one commit. Every SRID rule and its message is the
//! table's (`Table::append`); this module only says which SRID the values have.

use std::fmt;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::datasource::sink::DataSink;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};
use futures::StreamExt;
use geoberg_crs::ColumnType;
use geoberg_table::{HILBERT_CELL_PROPERTY, HILBERT_CELL_SUFFIX, SRID_FIELD_METADATA, Table};

use crate::error::table_error;
use crate::geo_schema::{FieldSrid, field_srid};
use crate::handle::TableHandle;

/// What a sink does with the statement's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SinkMode {
    /// `INSERT INTO`: a fast append.
    Append,
    /// `INSERT OVERWRITE`: the rows replace the partitions they fall in
    /// (`Table::overwrite_partitions`).
    OverwritePartitions,
}

/// Collects a statement's rows and writes them to the table's current version in one commit.
#[derive(Debug)]
pub(crate) struct GeobergSink {
    handle: Arc<TableHandle>,
    schema: SchemaRef,
    mode: SinkMode,
}

impl GeobergSink {
    pub(crate) fn new(handle: Arc<TableHandle>, schema: SchemaRef, mode: SinkMode) -> Self {
        GeobergSink {
            handle,
            schema,
            mode,
        }
    }
}

impl DisplayAs for GeobergSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GeobergSink: table={}", self.handle.ident())?;
        if self.mode == SinkMode::OverwritePartitions {
            write!(f, ", overwrite=partitions")?;
        }
        Ok(())
    }
}

#[async_trait]
impl DataSink for GeobergSink {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    async fn write_all(
        &self,
        mut data: SendableRecordBatchStream,
        _context: &Arc<TaskContext>,
    ) -> Result<u64> {
        // The table crate appends a slice of batches as one snapshot, so the statement's rows
        // are held until its end (a streaming append is a table-crate addition).
        let mut batches = Vec::new();
        let mut rows = 0u64;
        while let Some(batch) = data.next().await {
            let batch = batch?;
            if batch.num_rows() > 0 {
                rows += batch.num_rows() as u64;
                batches.push(batch);
            }
        }
        if rows == 0 {
            return Ok(0);
        }
        let handle = Arc::clone(&self.handle);
        let mode = self.mode;
        tokio::task::spawn_blocking(move || {
            let table = handle.current()?;
            let labelled = label_batches(&table, &batches)?;
            let table = match mode {
                SinkMode::Append => table.append(&labelled)?.0,
                SinkMode::OverwritePartitions => table.overwrite_partitions(&labelled)?.0,
            };
            handle.remember(table);
            Ok::<_, geoberg_table::Error>(())
        })
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))?
        .map_err(table_error)?;
        Ok(rows)
    }
}

/// `batches` with each geometry field labelled with the SRID of its SedonaDB type, the way
/// [`Table::append`] reads it (`srid` field metadata): a value typed with no CRS (what
/// `ST_GeomFromText` and `ST_Point` give) is SRID 0 for a geometry column, as the seeds count
/// it, and unset for a geography column (which stores it under the column CRS).
///
/// Columns the table derives on append (the bbox columns, a Hilbert-cell partition column) are
/// dropped when the statement left them NULL (`INSERT INTO t (id, geom) ...`), so that the
/// append fills them in.
pub(crate) fn label_batches(
    table: &Table,
    batches: &[RecordBatch],
) -> geoberg_table::Result<Vec<RecordBatch>> {
    let derived = derived_columns(table);
    batches
        .iter()
        .map(|b| label_batch(table, b, &derived))
        .collect()
}

/// The columns `Table::append` computes from the geometry.
pub(crate) fn derived_columns(table: &Table) -> Vec<String> {
    let properties = table.metadata().properties();
    let mut out = Vec::new();
    // A table whose properties do not parse fails its append with the reason.
    if let Ok(Some((_, names))) = table.derived_bbox_columns() {
        out.extend(names);
    }
    if let Some(spec) = properties.get(HILBERT_CELL_PROPERTY)
        && let Ok(spec) = serde_json::from_str::<serde_json::Value>(spec)
        && let Some(column) = spec.get("column").and_then(|c| c.as_str())
    {
        out.push(format!("{column}{HILBERT_CELL_SUFFIX}"));
    }
    out
}

fn label_batch(
    table: &Table,
    batch: &RecordBatch,
    derived: &[String],
) -> geoberg_table::Result<RecordBatch> {
    let schema = batch.schema();
    let mut changed = false;
    let mut fields: Vec<Field> = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(schema.fields().len());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if derived.iter().any(|d| d == field.name()) && column.null_count() == column.len() {
            changed = true;
            continue;
        }
        columns.push(Arc::clone(column));
        let geo = table.geo_columns().iter().find(|g| g.name == *field.name());
        let label = match geo {
            Some(g) => srid_label(&g.name, &g.column_type, field)?,
            None => None,
        };
        let mut field = field.as_ref().clone();
        if let Some(srid) = label {
            let mut metadata = field.metadata().clone();
            metadata.insert(SRID_FIELD_METADATA.to_string(), srid.to_string());
            field = field.with_metadata(metadata);
            changed = true;
        }
        fields.push(field);
    }
    if !changed {
        return Ok(batch.clone());
    }
    let schema = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    Ok(RecordBatch::try_new_with_options(
        schema,
        columns,
        &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )?)
}

/// The SRID label of one incoming geometry field, `None` to leave it unlabelled.
fn srid_label(
    column: &str,
    column_type: &ColumnType,
    field: &Field,
) -> geoberg_table::Result<Option<i32>> {
    let srid = field_srid(field)
        .map_err(|e| geoberg_table::Error::InvalidData(format!("column {column:?}: {e}")))?;
    Ok(match (srid, column_type) {
        // A column without a CRS keeps each value's SRID in the value (written as EWKB).
        (FieldSrid::Srid(n), ColumnType::GeometryWithoutCrs) => Some(n),
        (_, ColumnType::GeometryWithoutCrs) | (FieldSrid::NotGeometry, _) => None,
        (FieldSrid::Unset, ColumnType::Geography { .. }) => None,
        (FieldSrid::Unset, ColumnType::Geometry { .. }) => Some(0),
        (FieldSrid::Srid(n), _) => Some(n),
        (FieldSrid::NoSrid(crs), _) => {
            return Err(geoberg_table::Error::InvalidData(format!(
                "column {column:?}: the values are in CRS {crs}, which has no SRID, so they \
                 cannot be checked against the column's; reproject them with ST_Transform to \
                 the column's CRS"
            )));
        }
    })
}
