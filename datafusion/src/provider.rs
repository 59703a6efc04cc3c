//! A geoberg table as a DataFusion [`TableProvider`].

use std::sync::Arc;

use arrow_schema::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::Session as EngineSession;
use datafusion::common::{DFSchema, not_impl_err, plan_err};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use geoberg_table::{Table, TableIdent};

use crate::deleted_rows::DeletedRows;
use crate::error::table_error;
use crate::geo_schema::table_arrow_schema;
use crate::handle::TableHandle;
use crate::insert::{GeobergSink, SinkMode};
use crate::options::GeobergOptions;
use crate::pushdown::{PushedFilters, TableColumns};
use crate::scan_exec::{GeobergScanExec, ScanSpec};
use crate::scan_plan::{choose_files, partition, plan_row_groups, read_footers};
use crate::store::{object_store_url, register_table_store};

/// A geoberg table in DataFusion: scans prune files and row groups with the pushed filters,
/// `INSERT` appends through the table crate (one commit per statement).
///
/// Every scan and insert works on the table's current version, reloaded when the catalog
/// pointer has moved since the last statement.
#[derive(Debug)]
pub struct GeobergTableProvider {
    handle: Arc<TableHandle>,
    schema: SchemaRef,
    columns: TableColumns,
}

impl GeobergTableProvider {
    /// A provider for `table` (the version given serves until the catalog moves on).
    pub fn try_new(table: Table) -> Result<Self> {
        Self::from_handle(Arc::new(TableHandle::with_table(table)))
    }

    pub(crate) fn from_handle(handle: Arc<TableHandle>) -> Result<Self> {
        let table = handle.current().map_err(table_error)?;
        Ok(GeobergTableProvider {
            schema: table_arrow_schema(&table)?,
            columns: TableColumns::of(&table),
            handle,
        })
    }

    /// The table's name in its catalog.
    pub fn ident(&self) -> &TableIdent {
        self.handle.ident()
    }

    /// The table's current version.
    pub fn table(&self) -> Result<Table> {
        self.handle.current().map_err(table_error)
    }
}

#[async_trait]
impl TableProvider for GeobergTableProvider {
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
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let pushed = PushedFilters::new(filters, &self.columns);
        let handle = Arc::clone(&self.handle);
        let planned = pushed.clone();
        let (table, choice, deleted) = tokio::task::spawn_blocking(move || {
            let table = handle.current()?;
            let choice = choose_files(&table, &planned)?;
            let deleted = choice
                .files
                .iter()
                .map(|f| {
                    let positions = table.deleted_positions(&f.path)?;
                    Ok(positions.map(|p| DeletedRows::from_vector(&p)))
                })
                .collect::<geoberg_table::Result<Vec<_>>>()?;
            Ok::<_, geoberg_table::Error>((table, choice, deleted))
        })
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))?
        .map_err(table_error)?;
        let mut summary = choice.summary;
        let files = choice.files;
        let choice_filter = choice.filter;

        // Footers are worth reading at planning to skip row groups on their geo statistics,
        // and to split a few large files over the partitions by row group; deleted positions
        // need them to become row selections.
        let target_partitions = state.config().target_partitions();
        let needs_footers = !files.is_empty()
            && (!pushed.spatial.is_anything()
                || files.len() < target_partitions
                || deleted.iter().any(Option::is_some));
        let store_url = register_table_store(&table, state.runtime_env())?;
        for f in &files {
            let url = object_store_url(&f.path)?;
            if url != store_url {
                return plan_err!(
                    "data file {} of table {} is in the object store {url}, not in the table's \
                     store {store_url}; the engine reads a table's files from one store: rewrite \
                     the table (CALL system.rewrite_data_files) to bring its files home",
                    f.path,
                    table.ident()
                );
            }
        }
        let mut selections = vec![None; files.len()];
        if needs_footers {
            let runtime = state.runtime_env();
            let store = runtime.object_store(&store_url)?;
            let cache = runtime.cache_manager.get_file_metadata_cache();
            let footers = read_footers(&store, &cache, &files).await?;
            selections = plan_row_groups(&table, &footers, &choice_filter, &mut summary);
        }
        let partitions = partition(
            &files,
            &selections,
            &deleted,
            target_partitions,
            GeobergOptions::of(state.config()).scan_partition_bytes,
        );

        let predicate = match conjunction(pushed.parquet_exprs.iter().cloned()) {
            Some(expr) => {
                let df_schema = DFSchema::try_from(Arc::clone(&self.schema))?;
                Some(state.create_physical_expr(expr, &df_schema)?)
            }
            None => None,
        };
        let spec = ScanSpec {
            table: table.ident().to_string(),
            metadata_location: table.metadata_location().to_string(),
            store_url: store_url.to_string(),
            projection: projection.cloned(),
            field_ids: table
                .metadata()
                .current_schema()
                .as_struct()
                .fields()
                .iter()
                .map(|f| f.id)
                .collect(),
            limit,
            partitions,
            spatial: pushed.spatial,
            columns: pushed.columns.as_ref().map(|p| p.to_sql()),
            summary,
        };
        Ok(Arc::new(
            GeobergScanExec::try_new(
                spec,
                Arc::clone(&self.schema),
                predicate,
                state.runtime_env(),
                state.config_options().execution.parquet.clone(),
            )?
            .with_table(table),
        ))
    }

    async fn insert_into(
        &self,
        _state: &dyn EngineSession,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let mode = match insert_op {
            InsertOp::Append => SinkMode::Append,
            InsertOp::Overwrite => SinkMode::OverwritePartitions,
            InsertOp::Replace => {
                return not_impl_err!(
                    "{insert_op} into geoberg table {} is not supported; use INSERT INTO, or \
                     INSERT OVERWRITE to replace the partitions the rows fall in",
                    self.handle.ident()
                );
            }
        };
        let sink = GeobergSink::new(Arc::clone(&self.handle), Arc::clone(&self.schema), mode);
        Ok(Arc::new(DataSinkExec::new(input, Arc::new(sink), None)))
    }
}
