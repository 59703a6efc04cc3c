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
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use geoberg_crs::{ColumnType, default_hilbert_bounds};
use geoberg_geostats::{BBox, encode_geospatial_bounds};
use geoberg_rewrite::{
    CurveSpec, Extent, InputFile, OutputFile, OutputLocator, PartitionKey, RewriteError,
    RewriteOptions, RewritePlan, execute_tasks, plan_rewrite,
};
use geoberg_sql::{Predicate, RewriteRequest, RewriteStrategy};
use iceberg::spec::{DataContentType, DataFile, DataFileBuilder, DataFileFormat, Datum, Struct};
use parquet::file::metadata::ParquetMetaData;

use crate::error::{Error, Result};
use crate::file_filter::{file_geometry_bbox, select_files};
use crate::lineage::live_file_lineage;
use crate::location::{file_uri, local_path};
use crate::metrics::{MetricsConfig, MetricsMode, footer_bounds};
use crate::replace_commit::{CommitFailure, Replace, commit_replace};
use crate::storage::Storage;
use crate::table::{GeoColumn, Table};

/// Prefix of the table property that records a spatial index: `geoberg.spatial-index.<column>`
/// = `{"precision": p, "bounds": [minX, minY, maxX, maxY]}`. Later rewrites without an explicit
/// `hilbert(...)` reuse it, so compactions keep the clustering.
pub const SPATIAL_INDEX_PROPERTY_PREFIX: &str = "geoberg.spatial-index.";
/// Snapshot summary key holding the index a rewrite clustered by (same JSON plus `column`).
pub const SPATIAL_INDEX_SUMMARY_KEY: &str = "geoberg.spatial-index";
/// The table property whose value replaces the 512 MiB default target file size.
const TARGET_FILE_SIZE_PROPERTY: &str = "write.target-file-size-bytes";

/// A Hilbert spatial index: the curve a geometry column's rows are clustered by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpatialIndexSpec {
    /// Bits per axis, 1..=32.
    pub precision: u8,
    /// The curve's extent (WGS84 for the two-argument form).
    pub bounds: Extent,
}

/// A spatial index recorded on a table (see [`SPATIAL_INDEX_PROPERTY_PREFIX`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SpatialIndex {
    /// The geometry column.
    pub column: String,
    /// Its curve.
    pub spec: SpatialIndexSpec,
}

impl SpatialIndex {
    /// The property value: `{"precision":16,"bounds":[-180.0,-90.0,180.0,90.0]}`.
    pub fn property_value(&self) -> String {
        let b = self.spec.bounds;
        serde_json::json!({
            "precision": self.spec.precision,
            "bounds": [b.min_x, b.min_y, b.max_x, b.max_y],
        })
        .to_string()
    }

    fn summary_value(&self) -> String {
        let b = self.spec.bounds;
        serde_json::json!({
            "column": self.column,
            "strategy": "hilbert",
            "precision": self.spec.precision,
            "bounds": [b.min_x, b.min_y, b.max_x, b.max_y],
        })
        .to_string()
    }

    fn parse_property(column: &str, key: &str, value: &str) -> Result<SpatialIndex> {
        let bad = |reason: &str| Error::InvalidProperty {
            key: key.to_string(),
            value: value.to_string(),
            reason: format!(
                "{reason}; expected {{\"precision\": 1..=32, \"bounds\": [minX, minY, maxX, \
                 maxY]}} (rerun CREATE SPATIAL INDEX to rewrite it)"
            ),
        };
        let v: serde_json::Value = serde_json::from_str(value).map_err(|_| bad("not JSON"))?;
        let precision = v["precision"]
            .as_u64()
            .filter(|p| (1..=32).contains(p))
            .ok_or_else(|| bad("missing or out-of-range precision"))?;
        let b: Vec<f64> = v["bounds"]
            .as_array()
            .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
            .unwrap_or_default();
        let [min_x, min_y, max_x, max_y] = b[..] else {
            return Err(bad("bounds must be four numbers"));
        };
        Ok(SpatialIndex {
            column: column.to_string(),
            spec: SpatialIndexSpec {
                precision: precision as u8,
                bounds: Extent::new(min_x, min_y, max_x, max_y),
            },
        })
    }
}

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
    /// Delete files removed (always 0: tables here carry no delete files).
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
    /// The index the rows are clustered by.
    pub index: SpatialIndex,
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
        write!(
            f,
            "clustered by hilbert({}, {}, {}, {}, {}, {}); {} of {} files matched the filter; \
             {} commit(s)",
            self.index.column,
            self.index.spec.precision,
            self.index.spec.bounds.min_x,
            self.index.spec.bounds.min_y,
            self.index.spec.bounds.max_x,
            self.index.spec.bounds.max_y,
            self.files_matching_filter,
            self.files_total,
            self.snapshot_ids.len()
        )
    }
}

type Progress<'a> = Box<dyn Fn(u64, u64) + Send + Sync + 'a>;

/// A rewrite being configured; see [`Table::rewrite`].
pub struct Rewrite<'a> {
    table: &'a Table,
    hilbert: Option<(String, u32)>,
    bounds: Option<Extent>,
    options: Vec<(String, String)>,
    filter: Option<Predicate>,
    filter_sql: Option<String>,
    progress: Option<Progress<'a>>,
    /// `CREATE SPATIAL INDEX` semantics: `rewrite-all` is true unless an option says otherwise.
    rewrite_all_default: bool,
}

impl fmt::Debug for Rewrite<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rewrite")
            .field("table", self.table.ident())
            .field("hilbert", &self.hilbert)
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
    entries: HashMap<PathBuf, DataFile>,
    partitions: HashMap<PartitionKey, (i32, Struct)>,
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
            options: Vec::new(),
            filter: None,
            filter_sql: None,
            progress: None,
            rewrite_all_default: true,
        }
    }

    /// Runs a parsed `CREATE SPATIAL INDEX` / `CALL ... rewrite_data_files(...)` on this table.
    ///
    /// A bin-pack request on a table with a recorded spatial index re-clusters by that index
    /// (compaction keeps the clustering); without one it is refused.
    pub fn execute_rewrite(&self, request: &RewriteRequest) -> Result<(Table, RewriteReport)> {
        // The request's options are complete: CREATE SPATIAL INDEX put `rewrite-all` in them.
        let mut rewrite = self.rewrite().options(request.options.clone());
        rewrite.rewrite_all_default = false;
        match &request.strategy {
            RewriteStrategy::Hilbert(h) => {
                rewrite = rewrite.hilbert(&h.column, h.precision as u32);
                if let Some(b) = h.bounds {
                    rewrite = rewrite.bounds(Extent::new(b.min_x, b.min_y, b.max_x, b.max_y));
                }
            }
            RewriteStrategy::BinPack if !self.spatial_indexes()?.is_empty() => {}
            RewriteStrategy::BinPack => {
                return Err(Error::from(RewriteError::InvalidOption {
                    key: "strategy".into(),
                    value: "binpack".into(),
                    reason: format!(
                        "table {} has no spatial index to keep; use strategy => 'sort', \
                         sort_order => 'hilbert(<geom>, <precision>)' or CREATE SPATIAL INDEX",
                        self.ident()
                    ),
                }));
            }
        }
        if let Some(f) = &request.filter {
            rewrite = rewrite.filter(f.clone());
        }
        rewrite.execute()
    }

    /// The spatial indexes recorded in the table properties, by column name.
    pub fn spatial_indexes(&self) -> Result<Vec<SpatialIndex>> {
        let mut out: Vec<SpatialIndex> = self
            .metadata()
            .properties()
            .iter()
            .filter_map(|(k, v)| {
                let column = k.strip_prefix(SPATIAL_INDEX_PROPERTY_PREFIX)?;
                Some(SpatialIndex::parse_property(column, k, v))
            })
            .collect::<Result<_>>()?;
        out.sort_by(|a, b| a.column.cmp(&b.column));
        Ok(out)
    }
}

impl<'a> Rewrite<'a> {
    /// Clusters by `hilbert(column, precision)`: the Hilbert index (precision bits per axis,
    /// 1..=32) of each geometry's bbox centre. Without [`Rewrite::bounds`] the curve spans WGS84,
    /// which only a WGS84 (or undeclared-CRS) column accepts.
    pub fn hilbert(mut self, column: impl Into<String>, precision: u32) -> Self {
        self.hilbert = Some((column.into(), precision));
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

    /// Preflight and plan, reading only the sampled keys: nothing is written.
    pub fn plan(&self) -> Result<PlannedRewrite> {
        let table = self.table;
        let index = self.resolve_index()?;
        let geo = table.geo_column(&index.column)?;
        let options = self.parse_options()?;
        let filter = match (&self.filter, &self.filter_sql) {
            (Some(f), Some(sql)) => {
                let g = geoberg_sql::parse_condition(sql)?;
                Predicate::and(vec![f.clone(), g])
            }
            (Some(f), None) => Some(f.clone()),
            (None, Some(sql)) => Some(geoberg_sql::parse_condition(sql)?),
            (None, None) => None,
        };

        let files = table.data_files()?;
        let selected = match &filter {
            Some(p) => select_files(table, &files, p)?,
            None => vec![true; files.len()],
        };
        let mut inputs = Vec::new();
        let mut entries = HashMap::new();
        let mut partitions = HashMap::new();
        let spec_id = table.metadata().default_partition_spec_id();
        // v3: each input's first_row_id and data sequence number, so that its rows keep their
        // `_row_id` and `_last_updated_sequence_number` in the new files.
        let lineage = live_file_lineage(table)?;
        for (file, _) in files.iter().zip(&selected).filter(|(_, s)| **s) {
            let path = local_path(file.file_path())?;
            // Entries do not expose their spec id; a table without partition evolution has one.
            let key = PartitionKey(format!("{:?}", file.partition()));
            partitions.insert(key.clone(), (spec_id, file.partition().clone()));
            let bbox = file_geometry_bbox(table, file, geo.field_id, &geo.column_type);
            inputs.push(InputFile {
                path: path.clone(),
                file_size_bytes: file.file_size_in_bytes(),
                record_count: file.record_count(),
                partition: key,
                bbox: bbox.map(|b| Extent::new(b.min_x, b.min_y, b.max_x, b.max_y)),
                lineage: lineage.get(file.file_path()).copied(),
            });
            entries.insert(path, file.clone());
        }
        let curve = CurveSpec {
            precision: index.spec.precision,
            bounds: index.spec.bounds,
        };
        let plan = plan_rewrite(&inputs, &index.column, &curve, &options)?;
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
        };
        let total_bytes = plan.input_bytes();
        let progress = |done: u64| {
            if let Some(f) = &self.progress {
                f(done, total_bytes)
            }
        };
        progress(0);
        let Some((starting_id, starting_seq)) = planned.starting.filter(|_| !plan.is_empty())
        else {
            return Ok((table.clone(), report));
        };

        let geo = table.geo_column(&planned.index.column)?;
        let metrics = self.metrics_config()?;
        let locator = TableLocator {
            dir: local_path(table.metadata().location())?.join("data"),
            run: uuid::Uuid::now_v7().to_string(),
            storage: table.catalog().storage(),
        };
        std::fs::create_dir_all(&locator.dir).map_err(|e| Error::io(&locator.dir, e))?;

        // Batches: all partitions at once, or Iceberg's partial-progress commit groups.
        let groups: BTreeSet<usize> = if plan.options.partial_progress_enabled {
            plan.partitions.iter().map(|p| p.commit_group).collect()
        } else {
            BTreeSet::from([0])
        };
        let mut current = table.clone();
        let mut done = 0u64;
        let mut first_error = None;
        for group in groups {
            let tasks: Vec<usize> = plan
                .tasks
                .iter()
                .filter(|t| {
                    !plan.options.partial_progress_enabled
                        || plan.partitions[t.partition].commit_group == group
                })
                .map(|t| t.id)
                .collect();
            let group_inputs: Vec<&InputFile> = plan
                .partitions
                .iter()
                .filter(|p| !plan.options.partial_progress_enabled || p.commit_group == group)
                .flat_map(|p| p.inputs.iter().map(|&i| &plan.inputs[i]))
                .collect();
            let group_bytes: u64 = group_inputs.iter().map(|f| f.file_size_bytes).sum();
            let result = self.run_batch(
                &current,
                &planned,
                &tasks,
                &locator,
                &geo,
                &metrics,
                (starting_id, starting_seq),
                || progress(done + group_bytes),
            );
            done += group_bytes;
            match result {
                Ok((next, batch)) => {
                    current = next;
                    report.rewritten_data_files_count += batch.rewritten_data_files_count;
                    report.added_data_files_count += batch.added_data_files_count;
                    report.rewritten_bytes_count += batch.rewritten_bytes_count;
                    report.added_bytes_count += batch.added_bytes_count;
                    report.rewritten_records_count += batch.rewritten_records_count;
                    report.spilled_bytes += batch.spilled_bytes;
                    report.snapshot_ids.extend(batch.snapshot_ids);
                }
                Err(BatchError::Unknown(e)) => return Err(e),
                Err(BatchError::Definite(e)) if plan.options.partial_progress_enabled => {
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

    /// Writes one batch's files and commits them; on a definite failure its files are removed.
    #[allow(clippy::too_many_arguments)]
    fn run_batch(
        &self,
        current: &Table,
        planned: &PlannedRewrite,
        tasks: &[usize],
        locator: &TableLocator<'_>,
        geo: &GeoColumn,
        metrics: &MetricsConfig,
        (starting_id, starting_seq): (i64, i64),
        written: impl Fn(),
    ) -> std::result::Result<(Table, RewriteReport), BatchError> {
        let plan = &planned.plan;
        // On failure the rewrite crate has already removed every file it wrote.
        let outcome =
            execute_tasks(plan, tasks, locator).map_err(|e| BatchError::Definite(e.into()))?;
        written();
        let cleanup = |table: &Table| {
            for f in &outcome.added {
                let _ = table.catalog().storage().delete(&f.path);
            }
        };
        let mut added = Vec::with_capacity(outcome.added.len());
        for out in &outcome.added {
            match output_data_file(current, out, planned, geo, metrics) {
                Ok(f) => added.push(f),
                Err(e) => {
                    cleanup(current);
                    return Err(BatchError::Definite(e));
                }
            }
        }
        let mut replaced = Vec::with_capacity(outcome.rewritten.len());
        let mut replaced_first_row_ids = HashMap::new();
        for input in &outcome.rewritten {
            let Some(entry) = planned.entries.get(&input.path) else {
                cleanup(current);
                return Err(BatchError::Definite(Error::from(
                    RewriteError::InvalidPlan(format!(
                        "rewrote {} which the plan did not select",
                        input.path.display()
                    )),
                )));
            };
            if let Some(l) = input.lineage {
                replaced_first_row_ids.insert(entry.file_path().to_string(), l.first_row_id);
            }
            replaced.push(entry.clone());
        }
        let index = &planned.index;
        let replace = Replace {
            starting_snapshot_id: starting_id,
            starting_sequence_number: starting_seq,
            use_starting_sequence_number: plan.options.use_starting_sequence_number,
            replaced,
            added,
            replaced_first_row_ids,
            summary: HashMap::from([(
                SPATIAL_INDEX_SUMMARY_KEY.to_string(),
                index.summary_value(),
            )]),
            properties: HashMap::from([(
                format!("{SPATIAL_INDEX_PROPERTY_PREFIX}{}", index.column),
                index.property_value(),
            )]),
        };
        match commit_replace(current, &replace) {
            Ok(table) => {
                let snapshot_ids = table.metadata().current_snapshot_id().into_iter().collect();
                let r = outcome.result;
                Ok((
                    table,
                    RewriteReport {
                        rewritten_data_files_count: r.rewritten_data_files_count,
                        added_data_files_count: r.added_data_files_count,
                        rewritten_bytes_count: r.rewritten_bytes_count,
                        failed_data_files_count: 0,
                        removed_delete_files_count: 0,
                        added_bytes_count: outcome.added.iter().map(|f| f.file_size_bytes).sum(),
                        rewritten_records_count: outcome
                            .rewritten
                            .iter()
                            .map(|f| f.record_count)
                            .sum(),
                        files_total: 0,
                        files_matching_filter: 0,
                        snapshot_ids,
                        spilled_bytes: outcome.spilled_bytes,
                        index: index.clone(),
                    },
                ))
            }
            Err(CommitFailure::Definite(e)) => {
                cleanup(current);
                Err(BatchError::Definite(e))
            }
            Err(f @ CommitFailure::Unknown(_)) => Err(BatchError::Unknown(f.into_error())),
        }
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
        let geo = self.table.geo_column(column)?;
        if matches!(geo.column_type, ColumnType::Geography { .. }) {
            return Err(Error::Schema(format!(
                "cannot build a Hilbert spatial index on geography column {column:?}: the key is \
                 the planar bbox centre, which misplaces rows near the antimeridian and poles; \
                 cluster a geometry column (e.g. a geometry(4326) copy of it) instead"
            )));
        }
        let bounds = match self.bounds {
            Some(b) => b,
            None => default_hilbert_bounds(column, &geo.column_type)?,
        };
        let curve = CurveSpec::new(*precision, bounds)?;
        Ok(SpatialIndex {
            column: column.clone(),
            spec: SpatialIndexSpec {
                precision: curve.precision,
                bounds,
            },
        })
    }

    fn parse_options(&self) -> Result<RewriteOptions> {
        let props = self.table.metadata().properties();
        let table_target =
            match props.get(TARGET_FILE_SIZE_PROPERTY) {
                Some(v) => Some(v.trim().parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(
                    || Error::InvalidProperty {
                        key: TARGET_FILE_SIZE_PROPERTY.into(),
                        value: v.clone(),
                        reason: "expected a positive byte count".into(),
                    },
                )?),
                None => None,
            };
        let mut options = self.options.clone();
        if self.rewrite_all_default && !options.iter().any(|(k, _)| k.trim() == "rewrite-all") {
            options.insert(0, ("rewrite-all".into(), "true".into()));
        }
        Ok(RewriteOptions::parse(options, table_target)?)
    }

    fn metrics_config(&self) -> Result<MetricsConfig> {
        let md = self.table.metadata();
        let columns: Vec<(i32, String)> = md
            .current_schema()
            .as_struct()
            .fields()
            .iter()
            .map(|f| (f.id, f.name.clone()))
            .collect();
        let sort_ids: Vec<i32> = md
            .default_sort_order()
            .fields
            .iter()
            .map(|f| f.source_id)
            .collect();
        MetricsConfig::new(md.properties(), &columns, &sort_ids)
    }
}

enum BatchError {
    Definite(Error),
    Unknown(Error),
}

/// Output files go to `<table>/data/<run id>-<task>-<seq>.parquet`, written and removed through
/// the catalog's storage.
struct TableLocator<'a> {
    dir: PathBuf,
    run: String,
    storage: &'a dyn Storage,
}

impl OutputLocator for TableLocator<'_> {
    fn locate(&self, _partition: &PartitionKey, task: usize, seq: usize) -> PathBuf {
        self.dir
            .join(format!("{}-{task:05}-{seq:03}.parquet", self.run))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn Write + Send>> {
        self.storage.create(path)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        self.storage.delete(path)
    }
}

/// The manifest entry of a rewritten file: counts from the rewrite, geometry bounds from its
/// bbox, other bounds from the Parquet footer, all under the table's metrics modes.
fn output_data_file(
    table: &Table,
    out: &OutputFile,
    planned: &PlannedRewrite,
    clustered: &GeoColumn,
    metrics: &MetricsConfig,
) -> Result<(i32, DataFile)> {
    let location = out.path.display().to_string();
    let footer: Arc<ParquetMetaData> = match &out.footer {
        Some(f) => f.clone(),
        None => {
            let file = std::fs::File::open(&out.path).map_err(|e| Error::io(&out.path, e))?;
            parquet::arrow::arrow_reader::ArrowReaderMetadata::load(&file, Default::default())?
                .metadata()
                .clone()
        }
    };
    let descr = footer.file_metadata().schema_descr();
    let leaf_of: HashMap<i32, usize> = (0..descr.num_columns())
        .filter_map(|i| {
            let info = descr.column(i).self_type().get_basic_info().clone();
            info.has_id().then(|| (info.id(), i))
        })
        .collect();
    let (spec_id, partition) =
        planned
            .partitions
            .get(&out.partition)
            .cloned()
            .ok_or_else(|| {
                Error::corrupt(
                    &location,
                    format!("unknown partition {:?}", out.partition.0),
                )
            })?;

    let mut column_sizes = HashMap::new();
    let mut value_counts = HashMap::new();
    let mut null_counts = HashMap::new();
    let mut lower: HashMap<i32, Datum> = HashMap::new();
    let mut upper: HashMap<i32, Datum> = HashMap::new();
    for field in table.metadata().current_schema().as_struct().fields() {
        let id = field.id;
        let mode = metrics.mode(id);
        if mode == MetricsMode::None {
            continue;
        }
        let Some(c) = out.columns.iter().find(|c| c.field_id == Some(id)) else {
            continue;
        };
        column_sizes.insert(id, c.compressed_bytes);
        value_counts.insert(id, c.value_count);
        if let Some(n) = c.null_count {
            null_counts.insert(id, n);
        }
        if !matches!(mode, MetricsMode::Truncate(_) | MetricsMode::Full) {
            continue;
        }
        let geo = table.geo_columns().iter().find(|g| g.field_id == id);
        let (lo, hi) = match (geo, leaf_of.get(&id)) {
            (Some(_), _) if id == clustered.field_id => match out.bbox {
                Some(b) => point_bounds(BBox::new(b.min_x, b.min_y, b.max_x, b.max_y)),
                None => (None, None),
            },
            // Planar bounds of another geometry column, from the Parquet geo statistics.
            (Some(g), Some(&leaf)) if !matches!(g.column_type, ColumnType::Geography { .. }) => {
                footer_geo_bbox(&footer, leaf).map_or((None, None), point_bounds)
            }
            (Some(_), _) => (None, None),
            (None, Some(&leaf)) => match field.field_type.as_primitive_type() {
                Some(ty) => footer_bounds(&footer, leaf, ty, mode),
                None => (None, None),
            },
            (None, None) => (None, None),
        };
        if let Some(lo) = lo {
            lower.insert(id, lo);
        }
        if let Some(hi) = hi {
            upper.insert(id, hi);
        }
    }
    let split_offsets = footer
        .row_groups()
        .iter()
        .filter_map(|rg| {
            let first = rg.columns().first()?;
            Some(
                first
                    .dictionary_page_offset()
                    .unwrap_or_else(|| first.data_page_offset()),
            )
        })
        .collect();
    let file = DataFileBuilder::default()
        .content(DataContentType::Data)
        .file_path(file_uri(&out.path))
        .file_format(DataFileFormat::Parquet)
        .partition(partition)
        .partition_spec_id(spec_id)
        .record_count(out.record_count)
        .file_size_in_bytes(out.file_size_bytes)
        .column_sizes(column_sizes)
        .value_counts(value_counts)
        .null_value_counts(null_counts)
        .lower_bounds(lower)
        .upper_bounds(upper)
        .split_offsets(Some(split_offsets))
        .build()
        .map_err(|e| Error::InvalidData(format!("data file entry {location}: {e}")))?;
    Ok((spec_id, file))
}

fn point_bounds(b: BBox) -> (Option<Datum>, Option<Datum>) {
    let (lo, hi) = encode_geospatial_bounds(&b);
    (Some(Datum::binary(lo)), Some(Datum::binary(hi)))
}

/// Union of the row groups' Parquet geo-statistics boxes; `None` unless every row group with
/// values has one.
fn footer_geo_bbox(footer: &ParquetMetaData, leaf: usize) -> Option<BBox> {
    let mut acc: Option<BBox> = None;
    for rg in footer.row_groups() {
        let chunk = rg.columns().get(leaf)?;
        let b = chunk.geo_statistics()?.bounding_box()?;
        let b = BBox::new(b.get_xmin(), b.get_ymin(), b.get_xmax(), b.get_ymax());
        acc = Some(match acc {
            None => b,
            Some(a) => BBox::new(
                a.min_x.min(b.min_x),
                a.min_y.min(b.min_y),
                a.max_x.max(b.max_x),
                a.max_y.max(b.max_y),
            ),
        });
    }
    acc
}

/// Loads the table a parsed rewrite statement names and runs it: what `geoberg sql` does with
/// `CREATE SPATIAL INDEX FOR db.t USING hilbert(geom, 16)`.
pub fn execute_rewrite_statement(
    catalog: Arc<dyn crate::Catalog>,
    request: &RewriteRequest,
) -> Result<(Table, RewriteReport)> {
    let name = &request.table;
    let namespace = name.namespace().ok_or_else(|| Error::InvalidName {
        name: name.name().to_string(),
        reason: "name the table with its namespace, e.g. db.table".into(),
    })?;
    let ident = crate::TableIdent::new(namespace, name.name())?;
    Table::load(catalog, &ident)?.execute_rewrite(request)
}
