//! The scan node: what geoberg planned (files, row groups, partitions, the pruning boxes and
//! counters) around DataFusion's own Parquet reader, which does the reading (projection,
//! limit, row-group statistics pruning with the ordinary filters, parallel partitions).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};

use arrow_schema::SchemaRef;
use datafusion::common::Statistics;
use datafusion::common::stats::Precision;
use datafusion::config::{ParquetOptions, TableParquetOptions};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::parquet::{
    CachedParquetFileReaderFactory, ParquetAccessPlan,
};
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::{
    Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use futures::TryStreamExt;
use geoberg_table::{BBox, Table};
use serde::{Deserialize, Serialize};

use crate::error::table_error;
use crate::field_id_adapter::FieldIdAdapterFactory;
use crate::join_bounds::{BuildSideBounds, JoinPruned, prune_row_groups};
use crate::options::GeobergOptions;
use crate::scan_plan::{FileSlice, PruningSummary, object_meta};
use crate::spatial_pruning::SpatialPruning;
use datafusion::common::internal_err;
use datafusion::execution::object_store::ObjectStoreUrl;

/// Everything a scan node is, apart from its schema and Parquet predicate: what
/// [`crate::GeobergPhysicalCodec`] ships to another process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanSpec {
    /// `namespace.table`.
    pub table: String,
    /// The metadata file of the table version planned.
    pub metadata_location: String,
    /// The object store the data files are read from (`file:///`, `s3://bucket/`); a process
    /// that decodes the node must have it registered in its runtime (a
    /// [`Session`](crate::Session) over the same catalog registers it when it plans a query).
    pub store_url: String,
    /// Columns of the table schema to return, by index (`None`: all).
    pub projection: Option<Vec<usize>>,
    /// The Iceberg field id of each column of the table schema, in order: data files are
    /// matched to the current schema by field id (renamed and dropped columns).
    #[serde(default)]
    pub field_ids: Vec<i32>,
    /// Rows to return at most (per partition, then overall above the scan).
    pub limit: Option<usize>,
    /// The files each partition reads.
    pub partitions: Vec<Vec<FileSlice>>,
    /// The spatial boxes files and row groups were pruned on.
    pub spatial: SpatialPruning,
    /// The condition on ordinary columns files were pruned on (as SQL), if any.
    pub columns: Option<String>,
    /// What was skipped, and why.
    pub summary: PruningSummary,
}

/// Reads a geoberg table: the data files and row groups geoberg kept, through DataFusion's
/// Parquet reader. `EXPLAIN` shows the pruning; `EXPLAIN ANALYZE` shows it as metrics
/// (`files_total`, `files_skipped`, `files_read`, `row_groups_total`, `row_groups_skipped`,
/// `bytes_total`, `bytes_skipped`, `bytes_read`) beside the reader's own.
#[derive(Debug, Clone)]
pub struct GeobergScanExec {
    spec: Arc<ScanSpec>,
    schema: SchemaRef,
    predicate: Option<Arc<dyn PhysicalExpr>>,
    parquet: ParquetOptions,
    inner: Arc<dyn ExecutionPlan>,
    metrics: ExecutionPlanMetricsSet,
    /// The table version planned, where this process has it (not after decoding): what a
    /// run-time filter looks file bounds up in.
    table: Option<Table>,
    /// A spatial join's build-side bounds to prune files on when the scan starts.
    join: Option<JoinPruning>,
}

/// A scan's run-time filter from a spatial join's build side (see [`crate::join_bounds`]).
#[derive(Debug, Clone)]
struct JoinPruning {
    /// What the bounds are, as `EXPLAIN` names them: `join_bounds` (the build side's rows, on
    /// the probe side's scan) or `probe_file_bounds` (the probe side's planned files, on the
    /// build side's scan of a file-pair join).
    label: &'static str,
    /// The table column the join compares (a planar geometry).
    column: String,
    bounds: Arc<BuildSideBounds>,
    files_skipped: Count,
    row_groups_skipped: Count,
    bytes_skipped: Count,
    /// The readers built at run time over the files kept, whose metrics the node reports.
    readers: Arc<Mutex<Vec<Arc<dyn ExecutionPlan>>>>,
}

impl GeobergScanExec {
    /// A scan of `spec` over `schema` (the table's full Arrow schema); `predicate`, over the
    /// same schema, lets the Parquet reader skip row groups on their statistics.
    pub fn try_new(
        spec: ScanSpec,
        schema: SchemaRef,
        predicate: Option<Arc<dyn PhysicalExpr>>,
        runtime: &RuntimeEnv,
        parquet: ParquetOptions,
    ) -> Result<Self> {
        let inner = build_reader(&spec, &schema, predicate.as_ref(), runtime, &parquet)?;
        let metrics = ExecutionPlanMetricsSet::new();
        let s = &spec.summary;
        let bytes_read_rg = s.bytes_read.saturating_sub(s.row_group_bytes_skipped);
        for (name, value) in [
            ("files_total", s.files_total as u64),
            (
                "files_skipped",
                (s.files_skipped_spatial + s.files_skipped_columns) as u64,
            ),
            ("files_read", s.files_read as u64),
            ("row_groups_total", s.row_groups_total as u64),
            ("row_groups_skipped", s.row_groups_skipped as u64),
            ("bytes_total", s.bytes_total),
            ("bytes_skipped", s.bytes_total - bytes_read_rg),
            ("bytes_read", bytes_read_rg),
        ] {
            MetricBuilder::new(&metrics)
                .global_counter(name)
                .add(usize::try_from(value).unwrap_or(usize::MAX));
        }
        Ok(GeobergScanExec {
            table: None,
            join: None,
            spec: Arc::new(spec),
            schema,
            predicate,
            parquet,
            inner,
            metrics,
        })
    }

    /// The same scan, knowing the table version it planned (for run-time filters).
    pub fn with_table(mut self, table: Table) -> Self {
        self.table = Some(table);
        self
    }

    /// The same scan, pruning its files when it starts on a spatial join's build-side
    /// `bounds` against its output column `index`; `None` when the column is no table column,
    /// the table version is not at hand, or the scan already prunes on other bounds.
    pub fn with_join_bounds(
        &self,
        index: usize,
        bounds: Arc<BuildSideBounds>,
    ) -> Option<GeobergScanExec> {
        self.with_run_time_bounds(index, bounds, "join_bounds")
    }

    /// The same scan, pruning its files when it starts on the boxes of the files the other
    /// side of a file-pair join planned (see [`crate::FilePairJoinExec`]), against its output
    /// column `index`; `None` as for [`Self::with_join_bounds`].
    pub fn with_probe_file_bounds(
        &self,
        index: usize,
        bounds: Arc<BuildSideBounds>,
    ) -> Option<GeobergScanExec> {
        self.with_run_time_bounds(index, bounds, "probe_file_bounds")
    }

    fn with_run_time_bounds(
        &self,
        index: usize,
        bounds: Arc<BuildSideBounds>,
        label: &'static str,
    ) -> Option<GeobergScanExec> {
        self.table.as_ref()?;
        if self.join.is_some() {
            return None;
        }
        let column = self.column_name(index)?;
        let metrics = ExecutionPlanMetricsSet::new();
        for metric in self.metrics.clone_inner().iter() {
            metrics.register(Arc::clone(metric));
        }
        let files_skipped = MetricBuilder::new(&metrics).global_counter("files_skipped_by_join");
        let row_groups_skipped =
            MetricBuilder::new(&metrics).global_counter("row_groups_skipped_by_join");
        let bytes_skipped = MetricBuilder::new(&metrics).global_counter("bytes_skipped_by_join");
        Some(GeobergScanExec {
            metrics,
            join: Some(JoinPruning {
                label,
                column,
                bounds,
                files_skipped,
                row_groups_skipped,
                bytes_skipped,
                readers: Arc::default(),
            }),
            ..self.clone()
        })
    }

    /// The table column behind output column `index`.
    pub fn column_name(&self, index: usize) -> Option<String> {
        let column = match &self.spec.projection {
            Some(projection) => *projection.get(index)?,
            None => index,
        };
        Some(self.schema.fields().get(column)?.name().clone())
    }

    /// The table version planned, where this process has it (not after decoding).
    pub fn table(&self) -> Option<&Table> {
        self.table.as_ref()
    }

    /// The same scan reading only the planned slices of `files` (by location), in one
    /// partition, without run-time pruning: one group of a file-pair join.
    pub(crate) fn restricted(
        &self,
        files: &HashSet<&str>,
        runtime: &RuntimeEnv,
    ) -> Result<GeobergScanExec> {
        let kept: Vec<FileSlice> = self
            .spec
            .partitions
            .iter()
            .flatten()
            .filter(|s| files.contains(s.location.as_str()))
            .cloned()
            .collect();
        let mut summary = self.spec.summary.clone();
        let mut locations: Vec<&str> = kept.iter().map(|s| s.location.as_str()).collect();
        locations.sort_unstable();
        locations.dedup();
        summary.files_read = locations.len();
        let spec = ScanSpec {
            partitions: vec![kept],
            summary,
            ..(*self.spec).clone()
        };
        let mut scan = GeobergScanExec::try_new(
            spec,
            Arc::clone(&self.schema),
            self.predicate.clone(),
            runtime,
            self.parquet.clone(),
        )?;
        scan.table = self.table.clone();
        Ok(scan)
    }

    /// The plan: files, boxes, counters.
    pub fn spec(&self) -> &ScanSpec {
        &self.spec
    }

    /// The table's full Arrow schema (before projection).
    pub fn table_schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The filter the Parquet reader prunes row groups with.
    pub fn predicate(&self) -> Option<&Arc<dyn PhysicalExpr>> {
        self.predicate.as_ref()
    }

    /// The Parquet options the reader was built with.
    pub fn parquet_options(&self) -> &ParquetOptions {
        &self.parquet
    }
}

/// DataFusion's Parquet reader over the planned slices: each slice's row groups as a
/// `ParquetAccessPlan`, footers through the runtime's metadata cache (planning filled it).
fn build_reader(
    spec: &ScanSpec,
    schema: &SchemaRef,
    predicate: Option<&Arc<dyn PhysicalExpr>>,
    runtime: &RuntimeEnv,
    parquet: &ParquetOptions,
) -> Result<Arc<dyn ExecutionPlan>> {
    let url = ObjectStoreUrl::parse(&spec.store_url)?;
    let store = runtime.object_store(&url)?;
    let cache = runtime.cache_manager.get_file_metadata_cache();
    let options = TableParquetOptions {
        global: parquet.clone(),
        ..TableParquetOptions::default()
    };
    let mut source = ParquetSource::new(Arc::clone(schema))
        .with_table_parquet_options(options)
        .with_parquet_file_reader_factory(Arc::new(CachedParquetFileReaderFactory::new(
            store, cache,
        )));
    if let Some(p) = predicate {
        source = source.with_predicate(Arc::clone(p));
    }
    // Row counts are exact only when the reader prunes nothing beyond what was planned (they
    // count deleted rows out).
    let exact_rows = predicate.is_none();
    let rows_of = |slices: &[FileSlice]| -> Option<usize> {
        slices
            .iter()
            .map(|s| s.rows.and_then(|r| usize::try_from(r).ok()))
            .sum()
    };
    let count = |rows: Option<usize>| match (exact_rows, rows) {
        (true, Some(n)) => Precision::Exact(n),
        (_, Some(n)) => Precision::Inexact(n),
        (_, None) => Precision::Absent,
    };
    let groups = spec
        .partitions
        .iter()
        .map(|slices| {
            let files = slices
                .iter()
                .map(|s| partitioned_file(s, schema, exact_rows))
                .collect::<Result<Vec<_>>>()?;
            let stats = Statistics::new_unknown(schema).with_num_rows(count(rows_of(slices)));
            Ok(FileGroup::new(files).with_statistics(Arc::new(stats)))
        })
        .collect::<Result<Vec<_>>>()?;
    let all: Vec<FileSlice> = spec.partitions.iter().flatten().cloned().collect();
    let statistics = Statistics::new_unknown(schema).with_num_rows(count(rows_of(&all)));
    let config = FileScanConfigBuilder::new(url, Arc::new(source))
        .with_file_groups(groups)
        .with_statistics(statistics)
        .with_projection_indices(spec.projection.clone())?
        .with_limit(spec.limit)
        .with_expr_adapter((spec.field_ids.len() == schema.fields().len()).then(|| {
            Arc::new(FieldIdAdapterFactory::new(schema, &spec.field_ids))
                as Arc<dyn datafusion::physical_expr_adapter::PhysicalExprAdapterFactory>
        }))
        .build();
    Ok(DataSourceExec::from_data_source(config))
}

fn partitioned_file(
    slice: &FileSlice,
    schema: &SchemaRef,
    exact_rows: bool,
) -> Result<PartitionedFile> {
    let mut file = PartitionedFile::new_from_meta(object_meta(&slice.location, slice.size)?);
    match (&slice.row_groups, &slice.deleted) {
        (Some(selection), deleted) => {
            let mut plan = ParquetAccessPlan::new_none(selection.count);
            for &i in &selection.read {
                plan.scan(i);
                let (start, rows) = selection.span(i);
                if let Some(live) = deleted.as_ref().and_then(|d| d.selection(start, rows)) {
                    plan.scan_selection(i, live);
                }
            }
            file = file.with_extension(plan);
        }
        (None, Some(_)) => {
            return internal_err!(
                "data file {} has deleted rows but its row groups were not planned",
                slice.location
            );
        }
        (None, None) => {}
    }
    if let (true, Some(rows)) = (exact_rows, slice.rows) {
        let rows = usize::try_from(rows).map_or(Precision::Absent, Precision::Exact);
        file = file.with_statistics(Arc::new(
            Statistics::new_unknown(schema).with_num_rows(rows),
        ));
    }
    Ok(file)
}

impl DisplayAs for GeobergScanExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.spec.summary;
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => {
                write!(
                    f,
                    "GeobergScanExec: table={}, files={} of {} read ({} skipped on spatial \
                     bounds, {} on column bounds)",
                    self.spec.table,
                    s.files_read,
                    s.files_total,
                    s.files_skipped_spatial,
                    s.files_skipped_columns
                )?;
                if s.footers_read {
                    write!(
                        f,
                        ", row_groups={} of {} read ({} skipped on geo statistics)",
                        s.row_groups_total - s.row_groups_skipped,
                        s.row_groups_total,
                        s.row_groups_skipped
                    )?;
                }
                write!(
                    f,
                    ", bytes={} of {}",
                    s.bytes_read - s.row_group_bytes_skipped,
                    s.bytes_total
                )?;
                if !self.spec.spatial.is_anything() {
                    write!(f, ", spatial=[{}]", self.spec.spatial)?;
                }
                if let Some(columns) = &self.spec.columns {
                    write!(f, ", columns=[{columns}]")?;
                }
                if let Some(limit) = self.spec.limit {
                    write!(f, ", limit={limit}")?;
                }
                if let Some(join) = &self.join {
                    write!(f, ", {}={}", join.label, join.column)?;
                    let started = !join
                        .readers
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .is_empty();
                    if started {
                        write!(
                            f,
                            " (skipped at run time: {} files, {} row groups)",
                            join.files_skipped.value(),
                            join.row_groups_skipped.value()
                        )?;
                    }
                }
                write!(f, ", partitions={}", self.spec.partitions.len())?;
                if !s.reasons.is_empty() {
                    write!(f, ", reasons=[{}]", s.reasons.join("; "))?;
                }
                if matches!(t, DisplayFormatType::Verbose) {
                    write!(f, ", reader=")?;
                    if let Some(inner) = self.inner.downcast_ref::<DataSourceExec>() {
                        inner.fmt_as(t, f)?;
                    }
                }
                Ok(())
            }
            DisplayFormatType::TreeRender => {
                writeln!(f, "table={}", self.spec.table)?;
                writeln!(f, "files={} of {}", s.files_read, s.files_total)?;
                write!(f, "partitions={}", self.spec.partitions.len())
            }
        }
    }
}

impl ExecutionPlan for GeobergScanExec {
    fn name(&self) -> &str {
        "GeobergScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.inner.properties()
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
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let (Some(join), Some(table)) = (self.join.clone(), self.table.clone()) else {
            return self.inner.execute(partition, context);
        };
        if !GeobergOptions::of(context.session_config()).join_pruning {
            return self.inner.execute(partition, context);
        }
        // Decided on the first poll: a join polls its probe side only once its build side
        // is complete.
        let this = self.clone();
        let started = futures::stream::once(async move {
            let Some(bounds) = join.bounds.index() else {
                return this.inner.execute(partition, context);
            };
            let Some(slices) = this.spec.partitions.get(partition) else {
                return this.inner.execute(partition, context);
            };
            let column = join.column.clone();
            let index = tokio::task::spawn_blocking(move || table.file_index(&column))
                .await
                .map_err(|e| DataFusionError::External(Box::new(e)))?
                .map_err(table_error)?;
            let boxes: HashMap<&str, (Option<BBox>, bool)> = index
                .files()
                .entries()
                .iter()
                .map(|f| (f.path.as_str(), (f.bbox, f.all_null)))
                .collect();
            let (kept, skipped): (Vec<FileSlice>, Vec<FileSlice>) = slices
                .iter()
                .cloned()
                .partition(|s| match boxes.get(s.location.as_str()) {
                    Some((Some(bbox), _)) => bounds.may_meet(bbox),
                    // Only NULL (or empty) geometries: nothing to match.
                    Some((None, true)) => false,
                    _ => true,
                });
            let runtime = context.runtime_env();
            let store = runtime.object_store(ObjectStoreUrl::parse(&this.spec.store_url)?)?;
            let cache = runtime.cache_manager.get_file_metadata_cache();
            let mut pruned = JoinPruned {
                files: skipped.len(),
                bytes: skipped.iter().map(|s| s.size).sum(),
                ..JoinPruned::default()
            };
            let kept =
                prune_row_groups(kept, &join.column, &bounds, &store, &cache, &mut pruned).await?;
            join.files_skipped.add(pruned.files);
            join.row_groups_skipped.add(pruned.row_groups);
            join.bytes_skipped
                .add(usize::try_from(pruned.bytes).unwrap_or(usize::MAX));
            let spec = ScanSpec {
                partitions: vec![kept],
                ..(*this.spec).clone()
            };
            let reader = build_reader(
                &spec,
                &this.schema,
                this.predicate.as_ref(),
                &context.runtime_env(),
                &this.parquet,
            )?;
            join.readers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(Arc::clone(&reader));
            reader.execute(0, context)
        })
        .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.inner.schema(),
            started,
        )))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        let mut set = self.metrics.clone_inner();
        let runtime_readers = self
            .join
            .as_ref()
            .map(|j| j.readers.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .unwrap_or_default();
        for reader in std::iter::once(&self.inner).chain(&runtime_readers) {
            for metric in reader.metrics().iter().flat_map(|m| m.iter()) {
                set.push(Arc::clone(metric));
            }
        }
        Some(set)
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        self.inner.partition_statistics(partition)
    }

    fn with_fetch(&self, limit: Option<usize>) -> Option<Arc<dyn ExecutionPlan>> {
        let inner = self.inner.with_fetch(limit)?;
        let mut spec = (*self.spec).clone();
        spec.limit = limit;
        Some(Arc::new(GeobergScanExec {
            spec: Arc::new(spec),
            inner,
            ..self.clone()
        }))
    }

    fn fetch(&self) -> Option<usize> {
        self.spec.limit
    }
}
