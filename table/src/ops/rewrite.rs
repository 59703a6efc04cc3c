//! `CREATE SPATIAL INDEX` / `rewrite_data_files`: the builder, the preflight, execution by
//! `geoberg-rewrite` and the REPLACE commit(s).
//!
//! On a v3 table the rows keep their row lineage, as the spec requires of rows moved to new
//! files: each input's `first_row_id` and data sequence number (after inheritance) go to the
//! rewrite, which writes every row's `_row_id` and `_last_updated_sequence_number` into the
//! reserved columns of the new files. The new files are still ADDED entries, so their manifest
//! takes an id range of their row count (`next-row-id` and the snapshot's `added-rows` grow by
//! it, as with Java's rewrite), which no row uses.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use geoberg_crs::{ColumnType, Extent, HilbertSpec, default_hilbert_bounds};
use geoberg_geostats::BBox;
use geoberg_rewrite::{
    DeletedRows, GeoColumns, InputFile, OutputFile, PartitionKey, RewriteError, RewriteOptions,
    RewriteOutcome, RewritePlan, execute_tasks,
};
use geoberg_rewrite::{RowOrder, plan_rewrite_ordered};
use geoberg_sql::{NullOrder, Predicate, RewriteRequest, RewriteStrategy, SortField, SortOrder};
use iceberg::spec::{DataFile, Operation, Struct};

use crate::clustered_layout::{ClusteredLayout, RewrittenRanges};
use crate::data_file::{WrittenFile, data_file_entry};
use crate::deletes::DeleteIndex;
use crate::error::{Error, Result};
use crate::file_index::file_geometry_bbox;
use crate::lineage::live_file_lineage;
use crate::metrics::MetricsConfig;
use crate::ops::incremental_clustering::IncrementalChoice;
use crate::ops::rewrite_job::{RewriteJob, RewriteRunner};
use crate::ops::rewrite_storage::TableRewriteStorage;
use crate::properties::SPATIAL_INDEX_PROPERTY_PREFIX;
use crate::scan::{ScanFilter, combined_predicate};
use crate::snapshot::{
    CommitFailure, ReadSet, SnapshotOperation, SnapshotProducer, commit_with_retry, validate_since,
};
use crate::sort_order::{row_order, table_sort_order};
use crate::spatial_index::SpatialIndex;
use crate::storage::StorageFile;
use crate::table::{GeoColumn, Table};

/// Snapshot summary key holding the index a rewrite clustered by (same JSON plus `column`).
pub const SPATIAL_INDEX_SUMMARY_KEY: &str = "geoberg.spatial-index";

/// What a rewrite did: Iceberg's `rewrite_data_files` result columns, then our details.
#[derive(Debug, Clone, PartialEq)]
pub struct RewriteReport {
    /// Data files replaced.
    pub rewritten_data_files_count: u64,
    /// Data files added.
    pub added_data_files_count: u64,
    /// Bytes of the replaced files (input bytes, as Iceberg counts them).
    pub rewritten_bytes_count: u64,
    /// Files of batches that failed under partial progress (0 otherwise: a failure fails all).
    pub failed_data_files_count: u64,
    /// Delete files removed: the deletion vectors of the replaced files.
    pub removed_delete_files_count: u64,
    /// Bytes of the added files.
    pub added_bytes_count: u64,
    /// Rows moved.
    pub rewritten_records_count: u64,
    /// Live data files before the rewrite.
    pub files_total: usize,
    /// Of those, the files the WHERE condition selected (all without one).
    pub files_matching_filter: usize,
    /// Snapshots committed (one, or one per batch under partial progress; none if nothing to do).
    pub snapshot_ids: Vec<i64>,
    /// Bytes that went through spill runs.
    pub spilled_bytes: u64,
    /// The Hilbert index the rows are clustered by, when [`RewriteReport::order`] is Hilbert
    /// (for other orders, the default index of the geometry column whose bounds the files
    /// report).
    pub index: SpatialIndex,
    /// The order the rows were written in.
    pub order: RowOrder,
    /// Where the parts of a rewrite given to a [`RewriteRunner`] ran (empty when it ran in
    /// this process).
    pub workers: Vec<String>,
}

impl RewriteReport {
    fn add(&mut self, batch: &RewriteReport) {
        self.rewritten_data_files_count += batch.rewritten_data_files_count;
        self.added_data_files_count += batch.added_data_files_count;
        self.rewritten_bytes_count += batch.rewritten_bytes_count;
        self.added_bytes_count += batch.added_bytes_count;
        self.rewritten_records_count += batch.rewritten_records_count;
        self.removed_delete_files_count += batch.removed_delete_files_count;
        self.spilled_bytes += batch.spilled_bytes;
        self.snapshot_ids.extend(&batch.snapshot_ids);
        self.workers.extend(batch.workers.iter().cloned());
    }
}

impl fmt::Display for RewriteReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "rewritten_data_files_count={} added_data_files_count={} rewritten_bytes_count={} \
             failed_data_files_count={} removed_delete_files_count={}",
            self.rewritten_data_files_count,
            self.added_data_files_count,
            self.rewritten_bytes_count,
            self.failed_data_files_count,
            self.removed_delete_files_count
        )?;
        let b = self.index.spec.bounds;
        match &self.order {
            RowOrder::Hilbert => write!(
                f,
                "clustered by hilbert({}, {}, {}, {}, {}, {})",
                self.index.column, self.index.spec.precision, b.min_x, b.min_y, b.max_x, b.max_y,
            )?,
            RowOrder::InputOrder => f.write_str("bin-packed (rows in input order)")?,
            order => write!(f, "sorted by {}", DisplayOrder(order))?,
        }
        write!(
            f,
            "; {} of {} files matched the filter; {} commit(s)",
            self.files_matching_filter,
            self.files_total,
            self.snapshot_ids.len()
        )
    }
}

/// A row order as a sort order reads.
struct DisplayOrder<'a>(&'a RowOrder);

impl fmt::Display for DisplayOrder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let order = match self.0 {
            RowOrder::Columns { columns } => SortOrder::Columns(
                columns
                    .iter()
                    .map(|c| {
                        let field = if c.descending {
                            SortField::desc(&c.column)
                        } else {
                            SortField::asc(&c.column)
                        };
                        field.nulls(if c.nulls_first {
                            NullOrder::First
                        } else {
                            NullOrder::Last
                        })
                    })
                    .collect(),
            ),
            RowOrder::ZOrder { terms } => {
                SortOrder::ZOrder(terms.iter().map(|t| t.column.clone()).collect())
            }
            RowOrder::Hilbert => return f.write_str("hilbert"),
            RowOrder::InputOrder => return f.write_str("input order"),
        };
        write!(f, "{order}")
    }
}

type Progress<'a> = Box<dyn Fn(u64, u64) + Send + Sync + 'a>;

/// A non-Hilbert order asked of a rewrite.
#[derive(Debug, Clone)]
enum SortOrOrder {
    Sort(SortOrder),
    BinPack,
}

/// A rewrite being configured; see [`Table::rewrite`].
pub struct Rewrite<'a> {
    table: &'a Table,
    hilbert: Option<(String, u8)>,
    bounds: Option<Extent>,
    /// A column sort, z-order or bin-pack instead of the Hilbert index.
    order: Option<SortOrOrder>,
    options: Vec<(String, String)>,
    filter: Option<Predicate>,
    filter_sql: Option<String>,
    progress: Option<Progress<'a>>,
    /// `CREATE SPATIAL INDEX` semantics: `rewrite-all` is true unless an option says otherwise.
    rewrite_all_default: bool,
    /// Runs the tasks elsewhere (a cluster); `None`: in this process.
    runner: Option<&'a dyn RewriteRunner>,
}

impl fmt::Debug for Rewrite<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rewrite")
            .field("table", self.table.ident())
            .field("hilbert", &self.hilbert)
            .field("order", &self.order)
            .field("bounds", &self.bounds)
            .field("options", &self.options)
            .field("filter", &self.filter)
            .finish_non_exhaustive()
    }
}

/// A planned rewrite: what [`Rewrite::plan`] returns and [`Rewrite::execute`] runs.
#[derive(Debug, Clone)]
pub struct PlannedRewrite {
    /// The serializable plan (`plan.to_json()` ships it to other workers).
    pub plan: RewritePlan,
    /// The index the plan clusters by.
    pub index: SpatialIndex,
    /// Live data files of the starting snapshot.
    pub files_total: usize,
    /// Files the WHERE condition selected.
    pub files_matching_filter: usize,
    starting: Option<(i64, i64)>,
    entries: HashMap<String, DataFile>,
    partitions: HashMap<PartitionKey, (i32, Struct)>,
    /// With the `incremental` option on a clustered table: the ranges re-clustered.
    incremental: Option<IncrementalChoice>,
}

impl Table {
    /// Starts a rewrite (`CREATE SPATIAL INDEX`): cluster the data files by the Hilbert key of a
    /// geometry column and commit them as one REPLACE snapshot. Like the statement, it rewrites
    /// every selected file (`rewrite-all` = true) unless the option says otherwise.
    ///
    /// ```no_run
    /// # fn f(table: geoberg_table::Table) -> geoberg_table::Result<()> {
    /// let (table, report) = table
    ///     .rewrite()
    ///     .hilbert("geom", 16)
    ///     .option("target-file-size-bytes", "134217728")
    ///     .where_sql("state = 'CA'")
    ///     .on_progress(|done, total| eprintln!("{done}/{total} bytes"))
    ///     .execute()?;
    /// println!("{report}");
    /// # Ok(()) }
    /// ```
    pub fn rewrite(&self) -> Rewrite<'_> {
        Rewrite {
            table: self,
            hilbert: None,
            bounds: None,
            order: None,
            options: Vec::new(),
            filter: None,
            filter_sql: None,
            progress: None,
            rewrite_all_default: true,
            runner: None,
        }
    }

    /// The rewrite a parsed `CREATE SPATIAL INDEX` / `CALL ... rewrite_data_files(...)` asks
    /// for, ready for [`Rewrite::on_progress`] and [`Rewrite::execute`].
    ///
    /// `strategy => 'sort'` without a `sort_order` uses the table's `write.sort-order`
    /// ([`Error::NoSortOrder`] without one); `strategy => 'binpack'` compacts without sorting.
    pub fn rewrite_request(&self, request: &RewriteRequest) -> Result<Rewrite<'_>> {
        // The request's options are complete: CREATE SPATIAL INDEX put `rewrite-all` in them.
        let mut rewrite = self.rewrite().options(request.options.clone());
        rewrite.rewrite_all_default = false;
        rewrite = match &request.strategy {
            RewriteStrategy::Hilbert(h) => rewrite.sort_order(SortOrder::Hilbert(h.clone())),
            RewriteStrategy::Sort(order) => rewrite.sort_order(order.clone()),
            // Iceberg: `sort` without a sort order uses the table's `write.sort-order`.
            RewriteStrategy::TableSortOrder => rewrite.sort_order(table_sort_order(self)?),
            RewriteStrategy::BinPack => rewrite.binpack(),
        };
        if let Some(f) = &request.filter {
            rewrite = rewrite.filter(f.clone());
        }
        Ok(rewrite)
    }

    /// Runs a parsed `CREATE SPATIAL INDEX` / `CALL ... rewrite_data_files(...)` on this table.
    pub fn execute_rewrite(&self, request: &RewriteRequest) -> Result<(Table, RewriteReport)> {
        self.rewrite_request(request)?.execute()
    }

    /// The spatial indexes recorded in the table properties, by column name.
    pub fn spatial_indexes(&self) -> Result<Vec<SpatialIndex>> {
        Ok(self.properties()?.spatial_indexes)
    }
}

impl<'a> Rewrite<'a> {
    /// Clusters by `hilbert(column, precision)`: the Hilbert index (precision bits per axis,
    /// 1..=32) of each geometry's bbox centre. Without [`Rewrite::bounds`] the curve spans the
    /// default bounds of the column's CRS (WGS84 for a WGS84 or undeclared-CRS column).
    ///
    /// A geography column is keyed by the lon/lat centre of each value's box on the sphere (the
    /// midpoint of its longitude arc, across the antimeridian where the box wraps), and every
    /// geography column of the new files gets bounds on the sphere (wrapping where that is
    /// narrower), whichever column is clustered.
    pub fn hilbert(mut self, column: impl Into<String>, precision: u8) -> Self {
        self.hilbert = Some((column.into(), precision));
        self.order = None;
        self
    }

    /// Sorts by `order` (`rewrite_data_files(strategy => 'sort', sort_order => ...)`): a column
    /// list, `zorder(...)`, or `hilbert(...)` (the same as [`Rewrite::hilbert`] and
    /// [`Rewrite::bounds`]). Columns are checked against the schema at [`Rewrite::plan`].
    ///
    /// A column sort is exact; the output files of a partition follow its first column (to 8
    /// bytes, the whole value for numbers), and each file holds rows in the full order.
    pub fn sort_order(mut self, order: SortOrder) -> Self {
        match order {
            SortOrder::Hilbert(h) => {
                self = self.hilbert(h.column, h.precision);
                self.bounds = h.bounds;
            }
            other => {
                self.hilbert = None;
                self.order = Some(SortOrOrder::Sort(other));
            }
        }
        self
    }

    /// `strategy => 'binpack'`: combine small files and split large ones without sorting; rows
    /// keep their input order (files in manifest order, rows in file order).
    pub fn binpack(mut self) -> Self {
        self.hilbert = None;
        self.order = Some(SortOrOrder::BinPack);
        self
    }

    /// Explicit curve bounds: `hilbert(geom, p, minX, minY, maxX, maxY)`. They must contain
    /// every value of the column (checked against the files' bounds before any data is read).
    pub fn bounds(mut self, bounds: Extent) -> Self {
        self.bounds = Some(bounds);
        self
    }

    /// One `rewrite_data_files` option (`target-file-size-bytes`, `partial-progress.enabled`,
    /// ...); unknown keys fail at [`Rewrite::plan`] and list the valid ones.
    pub fn option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.push((key.into(), value.into()));
        self
    }

    /// Several options at once.
    pub fn options<K: Into<String>, V: Into<String>>(
        mut self,
        options: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.options
            .extend(options.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Rewrites only the files that may hold rows matching `predicate` (by their statistics).
    pub fn filter(mut self, predicate: Predicate) -> Self {
        self.filter = Some(predicate);
        self
    }

    /// [`Rewrite::filter`] from SQL (`"state = 'CA' AND ST_Intersects(geom, ...)"`); parse
    /// errors surface at [`Rewrite::plan`].
    pub fn where_sql(mut self, condition: impl Into<String>) -> Self {
        self.filter_sql = Some(condition.into());
        self
    }

    /// Called with (input bytes done, input bytes total) after planning and after each batch
    /// of partitions is written (before its commit).
    pub fn on_progress(mut self, f: impl Fn(u64, u64) + Send + Sync + 'a) -> Self {
        self.progress = Some(Box::new(f));
        self
    }

    /// Runs the rewrite's tasks through `runner` (a cluster's executors) instead of in this
    /// process. Planning and the commit stay here, checked as for a local rewrite.
    pub fn runner(mut self, runner: &'a dyn RewriteRunner) -> Self {
        self.runner = Some(runner);
        self
    }

    /// Preflight and plan, reading only the sampled keys: nothing is written.
    pub fn plan(&self) -> Result<PlannedRewrite> {
        let table = self.table;
        let (index, order) = self.resolve_order()?;
        let geo = table.geo_column(&index.column)?;
        let mut options = self.parse_options()?;
        let filter = combined_predicate(self.filter.as_ref(), self.filter_sql.as_deref())?;

        let files = table.data_files()?;
        let mut selected = match &filter {
            Some(p) => table.select_data_files(&files, &ScanFilter::from_predicate(table, p)?)?,
            None => vec![true; files.len()],
        };
        let incremental = match options.incremental {
            false => None,
            true if !order.is_hilbert() => {
                return Err(Error::Unsupported {
                    what: "option incremental with a sort order other than hilbert(...)".into(),
                    fix: "use strategy => 'sort', sort_order => 'hilbert(<column>, <precision>)', \
                          or drop the option"
                        .into(),
                });
            }
            // Without a layout on this index (never clustered, or clustered otherwise since),
            // the whole table is clustered, which records one.
            true => match ClusteredLayout::current(table)
                .unwrap_or(None)
                .filter(|l| l.index().ok().as_ref() == Some(&index))
            {
                None => None,
                Some(layout) => {
                    let choice = IncrementalChoice::of(table, &layout, &files, &geo, &options)?;
                    for (s, chosen) in selected.iter_mut().zip(&choice.selected) {
                        *s &= *chosen;
                    }
                    options.rewrite_all = true;
                    Some(choice)
                }
            },
        };
        let mut inputs = Vec::new();
        let mut entries = HashMap::new();
        let mut partitions = HashMap::new();
        let spec_id = table.metadata().default_partition_spec_id();
        // v3: each input's first_row_id and data sequence number, so that its rows keep their
        // `_row_id` and `_last_updated_sequence_number` in the new files.
        let lineage = live_file_lineage(table)?;
        // Rows that deletes removed stay removed: the rewrite drops them, and the commit removes
        // the deletion vectors of the files it replaces.
        let deletes = DeleteIndex::of(table)?;
        for (file, _) in files.iter().zip(&selected).filter(|(_, s)| **s) {
            // Entries do not expose their spec id; a table without partition evolution has one.
            let key = PartitionKey(format!("{:?}", file.partition()));
            partitions.insert(key.clone(), (spec_id, file.partition().clone()));
            let bbox = file_geometry_bbox(table, file, geo.field_id, &geo.column_type);
            inputs.push(InputFile {
                location: file.file_path().to_string(),
                file_size_bytes: file.file_size_in_bytes(),
                record_count: file.record_count(),
                partition: key,
                bbox: bbox.map(Extent::from),
                lineage: lineage.get(file.file_path()).copied(),
                deleted: match deletes.deleted_positions(table.storage(), file.file_path())? {
                    Some(dv) => DeletedRows::from_sorted(dv.iter()),
                    None => DeletedRows::default(),
                },
            });
            entries.insert(file.file_path().to_string(), file.clone());
        }
        let storage = TableRewriteStorage::new(table)?;
        // The rewrite keys a geography column on the sphere and bounds every geography column
        // of its output files on the sphere.
        let columns = GeoColumns::new(index.column.as_str()).with_geography(
            table
                .geo_columns()
                .iter()
                .filter(|g| matches!(g.column_type, ColumnType::Geography { .. }))
                .map(|g| g.name.clone()),
        );
        let mut plan =
            plan_rewrite_ordered(&inputs, columns, &index.spec, &order, &options, &storage)?;
        if let Some(choice) = &incremental {
            for p in 0..plan.partitions.len() {
                if let Some(cuts) = choice.cuts.get(&plan.partitions[p].partition.0) {
                    plan.cut_tasks(p, cuts);
                }
            }
        }
        let starting = table
            .metadata()
            .current_snapshot()
            .map(|s| (s.snapshot_id(), s.sequence_number()));
        Ok(PlannedRewrite {
            plan,
            index,
            files_total: files.len(),
            files_matching_filter: inputs.len(),
            starting,
            entries,
            partitions,
            incremental,
        })
    }

    /// Plans, writes the clustered files and commits them as one REPLACE snapshot (one per
    /// batch of partitions with `partial-progress.enabled`).
    pub fn execute(self) -> Result<(Table, RewriteReport)> {
        let planned = self.plan()?;
        let table = self.table;
        let plan = &planned.plan;
        let mut report = RewriteReport {
            rewritten_data_files_count: 0,
            added_data_files_count: 0,
            rewritten_bytes_count: 0,
            failed_data_files_count: 0,
            removed_delete_files_count: 0,
            added_bytes_count: 0,
            rewritten_records_count: 0,
            files_total: planned.files_total,
            files_matching_filter: planned.files_matching_filter,
            snapshot_ids: Vec::new(),
            spilled_bytes: 0,
            index: planned.index.clone(),
            order: planned.plan.order.clone(),
            workers: Vec::new(),
        };
        let total_bytes = plan.input_bytes();
        let progress = |done: u64| {
            if let Some(f) = &self.progress {
                f(done, total_bytes)
            }
        };
        progress(0);
        let Some(starting) = planned.starting.filter(|_| !plan.is_empty()) else {
            return Ok((table.clone(), report));
        };
        let geo = table.geo_column(&planned.index.column)?;
        let metrics = table.metrics_config()?;
        let storage = TableRewriteStorage::new(table)?;

        // Batches: all partitions at once, or Iceberg's partial-progress commit groups.
        let partial = plan.options.partial_progress_enabled;
        let groups: BTreeSet<usize> = if partial {
            plan.partitions.iter().map(|p| p.commit_group).collect()
        } else {
            BTreeSet::from([0])
        };
        let mut current = table.clone();
        let mut done = 0u64;
        let mut first_error = None;
        for group in groups {
            let in_group = |p: usize| !partial || plan.partitions[p].commit_group == group;
            let tasks: Vec<usize> = plan
                .tasks
                .iter()
                .filter(|t| in_group(t.partition))
                .map(|t| t.id)
                .collect();
            let group_inputs: Vec<&InputFile> = (0..plan.partitions.len())
                .filter(|&p| in_group(p))
                .flat_map(|p| plan.partitions[p].inputs.iter().map(|&i| &plan.inputs[i]))
                .collect();
            let group_bytes: u64 = group_inputs.iter().map(|f| f.file_size_bytes).sum();
            let batch = Batch {
                planned: &planned,
                tasks: &tasks,
                storage: &storage,
                geo: &geo,
                metrics: &metrics,
                starting,
                runner: self.runner,
            };
            let result = batch.run(&current, || progress(done + group_bytes));
            done += group_bytes;
            match result {
                Ok((next, batch)) => {
                    current = next;
                    report.add(&batch);
                }
                Err(BatchError::Unknown(e)) => return Err(e),
                Err(BatchError::Definite(e)) if partial => {
                    report.failed_data_files_count += group_inputs.len() as u64;
                    first_error.get_or_insert(e);
                }
                Err(BatchError::Definite(e)) => return Err(e),
            }
        }
        if report.snapshot_ids.is_empty()
            && let Some(e) = first_error
        {
            return Err(e);
        }
        Ok((current, report))
    }

    /// The row order and the index of the geometry column the output files are bounded by:
    /// the Hilbert index for a Hilbert rewrite; for other orders the geometry column they read
    /// (else the table's first), with its default curve.
    fn resolve_order(&self) -> Result<(SpatialIndex, RowOrder)> {
        let order = match &self.order {
            None => return Ok((self.resolve_index()?, RowOrder::Hilbert)),
            Some(SortOrOrder::BinPack) => RowOrder::InputOrder,
            Some(SortOrOrder::Sort(order)) => row_order(self.table, order)?,
        };
        let geo_columns = self.table.geo_columns();
        let read = order.columns();
        let geo = geo_columns
            .iter()
            .find(|g| read.contains(&g.name.as_str()))
            .or_else(|| geo_columns.first())
            .ok_or_else(|| Error::Unsupported {
                what: format!(
                    "rewriting the data files of table {}, which has no geometry or geography \
                     column",
                    self.table.ident()
                ),
                fix: "geoberg rewrites tables with a geo column; use Iceberg's own \
                      rewrite_data_files for other tables"
                    .into(),
            })?;
        let bounds = default_hilbert_bounds(&geo.name, &geo.column_type)
            .unwrap_or_else(|_| Extent::new(-180.0, -90.0, 180.0, 90.0));
        let index = SpatialIndex {
            column: geo.name.clone(),
            spec: HilbertSpec::new(16, bounds)?,
        };
        Ok((index, order))
    }

    /// The index to cluster by: the builder's, else the one recorded on the table.
    fn resolve_index(&self) -> Result<SpatialIndex> {
        let Some((column, precision)) = &self.hilbert else {
            let recorded = self.table.spatial_indexes()?;
            return match &recorded[..] {
                [one] => Ok(one.clone()),
                [] => Err(Error::from(RewriteError::InvalidOption {
                    key: "sort_order".into(),
                    value: String::new(),
                    reason: format!(
                        "table {} has no spatial index yet; say which one to build: \
                         hilbert(<geometry column>, <precision>)",
                        self.table.ident()
                    ),
                })),
                many => Err(Error::from(RewriteError::InvalidOption {
                    key: "sort_order".into(),
                    value: String::new(),
                    reason: format!(
                        "table {} records spatial indexes on {}; name the column with \
                         hilbert(<column>, <precision>)",
                        self.table.ident(),
                        many.iter()
                            .map(|i| i.column.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                })),
            };
        };
        // A geography column is keyed by the lon/lat centre of each value's box on the sphere
        // (across the antimeridian where the box wraps; see `geoberg_rewrite::GeoColumns`),
        // with the WGS84 bounds by default.
        let geo = self.table.geo_column(column)?;
        let bounds = match self.bounds {
            Some(b) => b,
            None => default_hilbert_bounds(column, &geo.column_type)?,
        };
        Ok(SpatialIndex {
            column: column.clone(),
            spec: HilbertSpec::new(u32::from(*precision), bounds)?,
        })
    }

    fn parse_options(&self) -> Result<RewriteOptions> {
        let table_target = self.table.properties()?.target_file_size_bytes;
        let mut options = self.options.clone();
        if self.rewrite_all_default && !options.iter().any(|(k, _)| k.trim() == "rewrite-all") {
            options.insert(0, ("rewrite-all".into(), "true".into()));
        }
        Ok(RewriteOptions::parse(options, table_target)?)
    }
}

enum BatchError {
    Definite(Error),
    Unknown(Error),
}

/// One commit group of a rewrite: its tasks run, then one REPLACE commit.
struct Batch<'a> {
    planned: &'a PlannedRewrite,
    tasks: &'a [usize],
    storage: &'a TableRewriteStorage,
    geo: &'a GeoColumn,
    metrics: &'a MetricsConfig,
    starting: (i64, i64),
    runner: Option<&'a dyn RewriteRunner>,
}

impl Batch<'_> {
    /// Writes the batch's files and commits them; on a definite failure its files are removed.
    fn run(
        &self,
        current: &Table,
        written: impl Fn(),
    ) -> std::result::Result<(Table, RewriteReport), BatchError> {
        let planned = self.planned;
        let plan = &planned.plan;
        // On failure the rewrite crate (or the runner's parts) removed every file it wrote.
        let (outcome, workers) = match self.runner {
            None => (
                execute_tasks(plan, self.tasks, self.storage)
                    .map_err(|e| BatchError::Definite(e.into()))?,
                Vec::new(),
            ),
            Some(runner) => self.run_elsewhere(runner, current)?,
        };
        written();
        let cleanup = |table: &Table| {
            for f in &outcome.added {
                let _ = table.storage().delete(&f.location);
            }
        };
        let mut added = Vec::with_capacity(outcome.added.len());
        let nan_free = nan_free_columns(planned.entries.values());
        for out in &outcome.added {
            match self.output_entry(current, out, &nan_free) {
                Ok(f) => added.push(f),
                Err(e) => {
                    cleanup(current);
                    return Err(BatchError::Definite(e));
                }
            }
        }
        let mut read = ReadSet {
            starting_snapshot_id: self.starting.0,
            allow_new_equality_deletes: plan.options.use_starting_sequence_number,
            ..ReadSet::default()
        };
        for input in &outcome.rewritten {
            if !planned.entries.contains_key(&input.location) {
                cleanup(current);
                return Err(BatchError::Definite(Error::from(
                    RewriteError::InvalidPlan(format!(
                        "rewrote {} which the plan did not select",
                        input.location
                    )),
                )));
            }
            if let Some(l) = input.lineage {
                read.first_row_ids
                    .insert(input.location.clone(), l.first_row_id);
            }
            read.files.insert(input.location.clone());
        }
        let index = &planned.index;
        let deletes = DeleteIndex::of(current).map_err(BatchError::Definite)?;
        let removed_vectors: Vec<(String, i64)> = read
            .files
            .iter()
            .flat_map(|p| deletes.vectors_of(p))
            .filter_map(|d| Some((d.location.clone(), d.blob?.0)))
            .collect();
        let removed_delete_files = removed_vectors.len() as u64;
        let replace = ReplaceFiles {
            removed_vectors,
            read,
            starting_sequence_number: self.starting.1,
            use_starting_sequence_number: plan.options.use_starting_sequence_number,
            added,
            // Only a Hilbert rewrite records (and so replaces) the table's spatial index.
            summary: HashMap::from_iter(
                plan.order
                    .is_hilbert()
                    .then(|| (SPATIAL_INDEX_SUMMARY_KEY.to_string(), index.summary_value())),
            ),
            properties: HashMap::from_iter(plan.order.is_hilbert().then(|| {
                (
                    format!("{SPATIAL_INDEX_PROPERTY_PREFIX}{}", index.column),
                    index.property_value(),
                )
            })),
            layout: plan.order.is_hilbert().then(|| {
                let mut ranges = RewrittenRanges::new(index.clone(), plan, &outcome.added);
                if let Some(choice) = &planned.incremental {
                    // Rows merged outside the re-clustered ranges stay new, as deltas.
                    ranges.split_deltas(
                        |partition, range| choice.joins_layout(partition, range),
                        |partition| choice.delta_generation(partition),
                    );
                }
                ranges
            }),
        };
        match commit_with_retry(current, &replace) {
            Ok(table) => {
                let r = outcome.result;
                Ok((
                    table.clone(),
                    RewriteReport {
                        rewritten_data_files_count: r.rewritten_data_files_count,
                        added_data_files_count: r.added_data_files_count,
                        rewritten_bytes_count: r.rewritten_bytes_count,
                        failed_data_files_count: 0,
                        removed_delete_files_count: removed_delete_files,
                        added_bytes_count: outcome.added.iter().map(|f| f.file_size_bytes).sum(),
                        rewritten_records_count: outcome
                            .rewritten
                            .iter()
                            .map(|f| f.record_count)
                            .sum(),
                        files_total: 0,
                        files_matching_filter: 0,
                        snapshot_ids: table.metadata().current_snapshot_id().into_iter().collect(),
                        spilled_bytes: outcome.spilled_bytes,
                        index: index.clone(),
                        order: plan.order.clone(),
                        workers,
                    },
                ))
            }
            Err(CommitFailure::Definite(e)) => {
                cleanup(current);
                Err(BatchError::Definite(e))
            }
            Err(CommitFailure::Unknown(e)) => Err(BatchError::Unknown(e)),
        }
    }

    /// The batch's tasks run by `runner`, its parts' outcomes checked and merged; the files of
    /// parts that came back are removed when the parts do not add up.
    fn run_elsewhere(
        &self,
        runner: &dyn RewriteRunner,
        current: &Table,
    ) -> std::result::Result<(RewriteOutcome, Vec<String>), BatchError> {
        let job = RewriteJob {
            table: current.ident().to_string(),
            metadata_location: current.metadata_location().to_string(),
            run: self.storage.run.clone(),
            plan: self.planned.plan.clone(),
            tasks: self.tasks.to_vec(),
        };
        let parts = runner.run(&job).map_err(BatchError::Definite)?;
        match job.merge(&self.storage.data_dir, &parts) {
            Ok(outcome) => Ok((outcome, parts.into_iter().map(|p| p.worker).collect())),
            Err(e) => {
                for f in parts.iter().flat_map(|p| &p.outcome.added) {
                    let _ = current.storage().delete(&f.location);
                }
                Err(BatchError::Definite(e))
            }
        }
    }

    /// The manifest entry of a rewritten file: the clustered column's bounds from the
    /// rewrite's own bbox, the rest from the Parquet footer, under the table's metrics modes.
    fn output_entry(
        &self,
        table: &Table,
        out: &OutputFile,
        nan_free: &HashMap<i32, u64>,
    ) -> Result<(i32, DataFile)> {
        let (spec_id, partition) = self
            .planned
            .partitions
            .get(&out.partition)
            .cloned()
            .ok_or_else(|| {
                Error::corrupt(
                    &out.location,
                    format!("unknown partition {:?}", out.partition.0),
                )
            })?;
        let footer = match &out.footer {
            Some(f) => f.clone(),
            None => Arc::new(
                parquet::file::metadata::ParquetMetaDataReader::new()
                    .parse_and_finish(&StorageFile::open(table.storage(), &out.location)?)?,
            ),
        };
        let bbox = |e: &Option<Extent>| e.map(BBox::from);
        // The keyed column's box, and those of the other geography columns (on the sphere: the
        // footer's planar statistics do not hold them).
        let mut geo_boxes = HashMap::from([(self.geo.field_id, bbox(&out.bbox))]);
        for (name, b) in &out.geography_bboxes {
            if let Some(g) = table.geo_columns().iter().find(|g| g.name == *name) {
                geo_boxes.insert(g.field_id, bbox(b));
            }
        }
        let file = data_file_entry(
            table,
            self.metrics,
            WrittenFile {
                location: out.location.clone(),
                size: out.file_size_bytes,
                footer: &footer,
                partition,
                spec_id,
                // Counted while writing (top-level columns); nested ones by the inputs'.
                nan_counts: nan_free
                    .iter()
                    .map(|(id, n)| (*id, *n))
                    .chain(out.nan_counts.iter().map(|(id, n)| (*id, *n)))
                    .collect(),
                geo_boxes,
                sort_order_id: crate::sort_order::file_sort_order_id(
                    table,
                    &self.planned.plan.order,
                ),
            },
        )?;
        Ok((spec_id, file))
    }
}

/// NaN counts of a rewritten file. Its rows are some of the rewrite's input rows, so a float
/// column that no input holds a NaN in (each input's count known to be 0) holds none: count 0,
/// which lets readers prune on its bounds (a count left unknown means "may hold NaN", and
/// NaN sorts above every number, so no `>` / `>=` could skip the file). Other columns stay
/// unknown.
fn nan_free_columns<'a>(inputs: impl IntoIterator<Item = &'a DataFile>) -> HashMap<i32, u64> {
    let mut inputs = inputs.into_iter();
    let Some(first) = inputs.next() else {
        return HashMap::new();
    };
    let mut out: HashMap<i32, u64> = first
        .nan_value_counts()
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(id, _)| (*id, 0))
        .collect();
    for f in inputs {
        out.retain(|id, _| f.nan_value_counts().get(id) == Some(&0));
    }
    out
}

/// The REPLACE commit of a rewrite: the files it read are marked DELETED and the new ones
/// added, validated against the snapshot the rewrite started from (Iceberg Java's
/// `BaseRewriteFiles` + `MergingSnapshotProducer`).
struct ReplaceFiles {
    read: ReadSet,
    /// Deletion vectors of the replaced files (their rows are gone from the new files).
    removed_vectors: Vec<(String, i64)>,
    starting_sequence_number: i64,
    use_starting_sequence_number: bool,
    added: Vec<(i32, DataFile)>,
    summary: HashMap<String, String>,
    properties: HashMap<String, String>,
    /// The key ranges a Hilbert rewrite wrote, recorded as the new snapshot's clustered layout.
    layout: Option<RewrittenRanges>,
}

impl SnapshotOperation for ReplaceFiles {
    fn operation(&self) -> Operation {
        Operation::Replace
    }

    fn validate(&self, current: &Table) -> Result<()> {
        validate_since(current, &self.read)
    }

    fn apply(&self, producer: &mut SnapshotProducer<'_>) -> Result<()> {
        producer.add_data_files(self.added.iter().cloned());
        producer.remove_files(self.read.files.iter().cloned());
        producer.remove_deletion_vectors(self.removed_vectors.iter().cloned());
        // The new files carry the starting sequence number, so that equality deletes committed
        // meanwhile still apply to the rewritten rows.
        if self.use_starting_sequence_number {
            producer.data_sequence_number(self.starting_sequence_number);
        }
        for (k, v) in &self.summary {
            producer.summary_property(k, v);
        }
        producer.set_properties(self.properties.clone());
        if let Some(rewritten) = &self.layout {
            // On the version this attempt commits on: its layout may be another rewrite's. An
            // unreadable one is only a lost hint, which this rewrite's layout replaces.
            let previous = ClusteredLayout::current(producer.table()).unwrap_or(None);
            let layout = ClusteredLayout::after_rewrite(previous, rewritten, &self.read.files);
            let location = producer.statistics_location();
            let (snapshot, sequence) = (producer.snapshot_id(), producer.sequence_number());
            let statistics = layout.write(producer.table(), location, snapshot, sequence)?;
            producer.set_statistics(statistics);
        }
        Ok(())
    }
}

/// Loads the table a parsed rewrite statement names and runs it: what `geoberg sql` does with
/// `CREATE SPATIAL INDEX FOR db.t USING hilbert(geom, 16)`.
pub fn execute_rewrite_statement(
    catalog: Arc<dyn crate::Catalog>,
    request: &RewriteRequest,
) -> Result<(Table, RewriteReport)> {
    let ident = crate::TableIdent::from_name(&request.table, catalog.name())?;
    Table::load(catalog, &ident)?.execute_rewrite(request)
}
