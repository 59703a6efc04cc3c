//! Scan: a [`ScanFilter`] (a spatial window, column conditions) → the one file planner
//! (`planner`: the manifest bounds through `pruning`'s file index, the column statistics) →
//! [`ScanTask`]s (a file with its deletes and lineage) → row-group pruning on Parquet geo
//! statistics → Arrow batches, optionally refined row by row.
//!
//! A new scan consumer plans once ([`Scan::plan_tasks`]) and reads each task where it likes
//! ([`Scan::read_task`]): the engine's row-position scan spreads the tasks over its partitions.
//!
//! On a geography column the window is the region on the sphere its box means (the polygon
//! through its corners with great-circle edges; see `geography_window`): files and row groups
//! are pruned against that region's spherical bounds, and rows are refined with
//! `geoberg-geography`'s exact predicate.

pub(crate) mod column_stats;
mod filter;
mod planner;
mod row_groups;
mod task;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch};
use arrow_schema::Schema;
use futures::TryStreamExt;
use geoberg_crs::ColumnType;
use geoberg_geostats::{BBox, bbox_columns, geography_bbox_columns, geography_boxes_meet};
use geoberg_pruning::{BoxFilter, FileBounds, PrunePlan, prune_row_groups};
use geoberg_puffin::DeletionVector;
use geoberg_rewrite::{
    RowLineage, arrow_field_id, derive_lineage, is_lineage_field, lineage_fields,
};
use iceberg::spec::{DataFile, FormatVersion, ManifestStatus};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::arrow::async_reader::ParquetObjectReader;
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};

pub(crate) use column_stats::datum;
pub use filter::ScanFilter;

use crate::metadata_columns::{
    FILE_COLUMN, LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID, POS_COLUMN, ROW_ID_FIELD_ID,
    is_lineage_column, is_position_column,
};
pub(crate) use filter::combined_predicate;
pub use planner::FilePlan;
pub use row_groups::{root_column, row_group_bounds};
pub use task::ScanTask;

use crate::deletes::DeleteIndex;
use crate::error::{Error, Result};
use crate::file_columns::FileColumns;
use crate::geography_window::{GeographyWindow, wrapping_window_on_planar_column};
use crate::lineage::live_file_lineage;
use crate::manifest::read_manifest;
use crate::storage::block_on;
use crate::table::Table;

/// What a scan read and skipped, and why; the answer to "did my filter prune anything?".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanExplain {
    /// Live data files in the snapshot.
    pub files_total: usize,
    /// Files skipped on their bounds.
    pub files_skipped: usize,
    /// Files opened.
    pub files_read: usize,
    /// Bytes of all live data files.
    pub bytes_total: u64,
    /// Bytes of the files opened.
    pub bytes_read: u64,
    /// Rows in all live data files (their `record_count`).
    pub records_total: u64,
    /// Rows in the files opened.
    pub records_read: u64,
    /// Row groups in the opened files.
    pub row_groups_total: usize,
    /// Row groups skipped on their Parquet geo statistics.
    pub row_groups_skipped: usize,
    /// Rows returned.
    pub rows_returned: usize,
    /// Rows of the files read that deletes removed (deletion vectors, position deletes).
    pub rows_deleted: u64,
    /// How the decisions were made (the bounds used, or why every file is read).
    pub reasons: Vec<String>,
}

impl fmt::Display for ScanExplain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "files: {} total, {} skipped, {} read ({} of {} bytes)",
            self.files_total,
            self.files_skipped,
            self.files_read,
            self.bytes_read,
            self.bytes_total
        )?;
        writeln!(
            f,
            "records: {} of {} in the files read",
            self.records_read, self.records_total
        )?;
        writeln!(
            f,
            "row groups: {} in files read, {} skipped",
            self.row_groups_total, self.row_groups_skipped
        )?;
        writeln!(f, "rows returned: {}", self.rows_returned)?;
        for r in &self.reasons {
            writeln!(f, "- {r}")?;
        }
        Ok(())
    }
}

/// A scan being configured; see [`Table::scan`].
#[derive(Debug, Clone)]
pub struct Scan<'a> {
    table: &'a Table,
    filter: Option<(String, BBox)>,
    pruning: ScanFilter,
    exact: bool,
    columns: Option<Vec<String>>,
    row_lineage: bool,
    file_position: bool,
    only: Option<std::collections::HashSet<String>>,
}

/// A scan's window, resolved against its column.
struct ResolvedWindow<'s> {
    column: &'s str,
    window: ScanWindow,
    column_type: ColumnType,
}

/// What the window box means on its column.
enum ScanWindow {
    /// Geometry: the planar box.
    Planar(BBox),
    /// Geography: a region on the sphere.
    Sphere(GeographyWindow),
}

impl ScanWindow {
    /// The filter files and row groups are pruned with.
    fn pruning(&self) -> Result<BoxFilter> {
        match self {
            ScanWindow::Planar(b) => Ok(BoxFilter::intersects(*b)),
            ScanWindow::Sphere(w) => w.filter(geoberg_pruning::BoxPredicate::Intersects),
        }
    }
}

/// Arrow's field metadata keys of an extension type.
const EXTENSION_NAME: &str = "ARROW:extension:name";
const EXTENSION_METADATA: &str = "ARROW:extension:metadata";

/// The files a scan opens, with the explain counters so far.
#[derive(Debug, Clone)]
pub struct ScanPlan {
    /// Data files to read, in manifest order, with the box they were kept on.
    pub files: Vec<FileBounds>,
    /// Counters and reasons.
    pub explain: ScanExplain,
    /// The file-pruning plan, when the scan has a spatial filter.
    pub pruning: Option<PrunePlan>,
}

impl Table {
    /// Starts a scan of the current snapshot (all rows, all columns).
    pub fn scan(&self) -> Scan<'_> {
        Scan {
            table: self,
            filter: None,
            pruning: ScanFilter::Anything,
            exact: false,
            columns: None,
            row_lineage: false,
            file_position: false,
            only: None,
        }
    }

    /// Live data files of the current snapshot, fully decoded by `iceberg` (every metric of
    /// every column); planning uses [`Table::file_index`], which reads only what it needs.
    pub fn data_files(&self) -> Result<Vec<DataFile>> {
        let mut out = Vec::new();
        for m in self.data_manifests()? {
            let entries = read_manifest(self.storage(), &m)?;
            out.extend(
                entries
                    .iter()
                    .filter(|e| e.status() != ManifestStatus::Deleted)
                    .map(|e| e.data_file().clone()),
            );
        }
        Ok(out)
    }
}

impl<'a> Scan<'a> {
    /// Keeps rows whose `column` bounding box intersects `window` ([`Scan::exact`]: whose value
    /// does).
    ///
    /// On a **geometry** column the window is the planar box; `min_x > max_x` is an error that
    /// says so. On a **geography** column it is the region on the sphere the lon/lat box means:
    /// the polygon through its corners with great-circle edges (what `ST_MakeEnvelope` means on
    /// geography in S2-based engines), whose sides along parallels bulge poleward. Its longitudes
    /// run east from `min_x` to `max_x`, so `min_x > max_x` is a window across the antimeridian
    /// (`BBox::new(170.0, -10.0, -170.0, 10.0)` is the 20 degrees around ±180); a box 180
    /// degrees wide or wider is split into the fewest equal pieces narrower than that, each the
    /// polygon through its corners (the whole world, -180..180 by -90..90, into three lunes).
    /// Without `exact`, a row is kept when its bounds on the sphere meet the window's.
    pub fn with_window(mut self, column: impl Into<String>, window: BBox) -> Self {
        self.filter = Some((column.into(), window));
        self
    }

    /// Refines rows exactly: a row is kept only if its geometry intersects the window, not
    /// just its bounding box (planar for geometry, on the sphere for geography).
    pub fn exact(mut self, exact: bool) -> Self {
        self.exact = exact;
        self
    }

    /// Plans with `filter` besides the window: files (and nothing else) are skipped where
    /// their statistics prove no row passes it. Rows are not filtered by it: the caller applies
    /// the condition to the rows read (the engine's scans do).
    pub fn with_filter(mut self, filter: ScanFilter) -> Self {
        self.pruning = filter;
        self
    }

    /// Reads only these columns. On a v3 table, `_row_id` and `_last_updated_sequence_number`
    /// name the rows' lineage (see [`Scan::with_row_lineage`]).
    pub fn select(mut self, columns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.columns = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// Adds each row's Iceberg v3 row lineage as two trailing long columns, `_row_id` and
    /// `_last_updated_sequence_number`: the value stored in the data file where present and
    /// non-null (files written by a rewrite store both), else derived as the spec says (the
    /// file's `first_row_id` plus the row's position in the file, the file's data sequence
    /// number). Without it the stored lineage columns are never returned. v1 and v2 tables
    /// have no row lineage: the scan fails.
    pub fn with_row_lineage(mut self, on: bool) -> Self {
        self.row_lineage = on;
        self
    }

    /// Adds each row's data file and position in it as two trailing columns, `_file` (string)
    /// and `_pos` (long): what a row-level change needs to say which rows it deletes.
    pub fn with_file_position(mut self, on: bool) -> Self {
        self.file_position = on;
        self
    }

    /// Reads only these data files (of those the scan would read).
    pub fn files(mut self, paths: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.only = Some(paths.into_iter().map(Into::into).collect());
        self
    }

    /// Decides which files to read from the manifests alone (through the cached
    /// [`Table::file_index`] when there is a spatial filter).
    pub fn plan(&self) -> Result<ScanPlan> {
        self.plan_with(self.resolve()?.as_ref())
    }

    /// The window resolved against its column's type.
    fn resolve(&self) -> Result<Option<ResolvedWindow<'_>>> {
        let Some((column, window)) = &self.filter else {
            return Ok(None);
        };
        let column_type = self.table.geo_column(column)?.column_type;
        let window = match &column_type {
            ColumnType::Geography { .. } => ScanWindow::Sphere(GeographyWindow::from_box(window)?),
            planar if window.min_x > window.max_x => {
                return Err(wrapping_window_on_planar_column(
                    column,
                    planar,
                    window,
                    &format!(
                        "give min x <= max x, or run one scan per side of the antimeridian (x {} \
                         .. 180 and -180 .. {})",
                        window.min_x, window.max_x
                    ),
                ));
            }
            _ => ScanWindow::Planar(*window),
        };
        Ok(Some(ResolvedWindow {
            column,
            window,
            column_type,
        }))
    }

    fn plan_with(&self, window: Option<&ResolvedWindow<'_>>) -> Result<ScanPlan> {
        let spatial = match window {
            Some(w) => ScanFilter::spatial(w.column, w.window.pruning()?),
            None => ScanFilter::Anything,
        };
        let filter = ScanFilter::and([spatial, self.pruning.clone()]);
        let mut planned = self.table.plan_files(&filter)?;
        if let Some(only) = &self.only {
            planned.files.retain(|f| only.contains(&f.path));
            planned
                .reasons
                .push(format!("restricted to {} named files", only.len()));
        }
        let explain = ScanExplain {
            files_total: planned.files_total,
            files_skipped: planned.files_total - planned.files_read(),
            files_read: planned.files_read(),
            bytes_total: planned.bytes_total,
            bytes_read: planned.bytes_read(),
            records_total: planned.records_total,
            records_read: planned.records_read(),
            reasons: std::mem::take(&mut planned.reasons),
            ..ScanExplain::default()
        };
        Ok(ScanPlan {
            files: planned.files,
            explain,
            pruning: planned.pruning,
        })
    }

    /// Plans, then gathers what reading each file needs from the manifests (its deleted rows,
    /// its row lineage when the scan returns it): the tasks any reader executes with
    /// [`Scan::read_task`], without reading a manifest again.
    pub fn plan_tasks(&self) -> Result<(Vec<ScanTask>, ScanExplain)> {
        let ScanPlan { files, explain, .. } = self.plan()?;
        Ok((self.tasks_of(files)?, explain))
    }

    /// The tasks of files planned elsewhere (by [`Table::plan_files`]): each file with its
    /// deleted rows and, when this scan returns lineage, its row lineage. The manifests are
    /// read once for all of them.
    pub fn tasks_of(&self, files: Vec<FileBounds>) -> Result<Vec<ScanTask>> {
        let lineage = match self.returns_lineage()? {
            true => live_file_lineage(self.table)?,
            false => HashMap::new(),
        };
        let deletes = DeleteIndex::of(self.table)?;
        files
            .into_iter()
            .map(|file| {
                Ok(ScanTask {
                    deleted: deletes.deleted_positions(self.table.storage(), &file.path)?,
                    lineage: lineage.get(&file.path).copied(),
                    file,
                })
            })
            .collect()
    }

    /// Reads one planned task with this scan's window, columns and metadata columns (its
    /// filter only planned the task: rows are not filtered by it).
    pub fn read_task(&self, task: &ScanTask) -> Result<Vec<RecordBatch>> {
        let window = self.resolve()?;
        let lineage = self.returns_lineage()?.then_some(task.lineage);
        let mut out = Vec::new();
        self.read_file(
            &task.file,
            window.as_ref(),
            lineage,
            task.deleted.as_ref(),
            &mut out,
            &mut ScanExplain::default(),
        )?;
        Ok(out)
    }

    /// Plans, then reads the surviving files and row groups.
    pub fn execute(&self) -> Result<(Vec<RecordBatch>, ScanExplain)> {
        let window = self.resolve()?;
        let (tasks, mut explain) = self.plan_tasks()?;
        let returns_lineage = self.returns_lineage()?;
        let mut out = Vec::new();
        for task in &tasks {
            if let Some(d) = &task.deleted {
                explain.rows_deleted += d.len();
            }
            self.read_file(
                &task.file,
                window.as_ref(),
                returns_lineage.then_some(task.lineage),
                task.deleted.as_ref(),
                &mut out,
                &mut explain,
            )?;
        }
        explain.rows_returned = out.iter().map(RecordBatch::num_rows).sum();
        Ok((out, explain))
    }

    /// Runs the scan and reports what it read and skipped (the batches are discarded).
    pub fn explain(&self) -> Result<ScanExplain> {
        Ok(self.execute()?.1)
    }

    /// Whether the scan returns row lineage (asked for, or a lineage column selected on a v3
    /// table); asking for it on a v1 or v2 table fails.
    fn returns_lineage(&self) -> Result<bool> {
        let v3 = self.table.metadata().format_version() >= FormatVersion::V3;
        let named = self.columns.iter().flatten().any(|c| is_lineage_column(c));
        if self.row_lineage && !v3 {
            return Err(Error::Schema(format!(
                "table {} is format version {}: row lineage (_row_id) needs version 3",
                self.table.ident(),
                self.table.metadata().format_version()
            )));
        }
        Ok(self.row_lineage || (v3 && named))
    }

    /// Reads one file. `lineage` is `Some` when the rows' lineage is returned (with the file's
    /// own, `None` if the manifests gave it none).
    fn read_file(
        &self,
        file: &FileBounds,
        filter: Option<&ResolvedWindow<'_>>,
        lineage: Option<Option<RowLineage>>,
        deleted: Option<&DeletionVector>,
        out: &mut Vec<RecordBatch>,
        explain: &mut ScanExplain,
    ) -> Result<()> {
        // Ranged reads: the footer first, then only the kept row groups' projected columns.
        let (store, object) = self.table.storage().object_store(&file.path)?;
        let mut reader = ParquetObjectReader::new(store, object).with_file_size(file.size_in_bytes);
        let (reader, footer) = block_on(async move {
            let footer =
                ArrowReaderMetadata::load_async(&mut reader, ArrowReaderOptions::new()).await;
            footer.map(|f| (reader, f))
        })
        .map_err(|e| self.table.conflict_if_moved(Error::from(e)))?;
        let arrow_schema = footer.schema().clone();
        let metadata = footer.metadata().clone();
        let parquet_schema = metadata.file_metadata().schema_descr();
        let row_groups = metadata.row_groups();
        explain.row_groups_total += row_groups.len();

        // Current columns by field id: renamed ones read under their new names, ones added
        // since the file was written read as nulls.
        let layout = FileColumns::new(self.table.metadata().current_schema(), &arrow_schema);
        let filter_col = match filter {
            Some(f) => {
                let position = layout
                    .position(f.column)
                    .ok_or_else(|| self.table.no_such_column(f.column))?;
                // A geometry column added after the file was written is null in every row of
                // it, and a null geometry meets no window.
                let Some(idx) = layout.file_index(position) else {
                    explain.row_groups_skipped += row_groups.len();
                    return Ok(());
                };
                Some((idx, f))
            }
            None => None,
        };
        // Row groups are pruned on their Parquet geo statistics (the one row-group planner's
        // bounds), on the sphere for geography.
        let keep_groups: Vec<usize> = match filter_col {
            Some((idx, f)) => {
                let groups = row_group_bounds(&metadata, idx);
                let plan = prune_row_groups(&f.column_type, &f.window.pruning()?, &groups)?;
                plan.read_indices().collect()
            }
            None => (0..row_groups.len()).collect(),
        };
        explain.row_groups_skipped += row_groups.len() - keep_groups.len();
        if keep_groups.is_empty() {
            return Ok(());
        }
        // The stored lineage columns (of files written by a rewrite) are metadata: returned
        // only as the derived lineage, never as data columns.
        let stored_id = |id: i32| {
            arrow_schema
                .fields()
                .iter()
                .position(|f| arrow_field_id(f) == Some(id))
        };
        let stored = [
            stored_id(ROW_ID_FIELD_ID),
            stored_id(LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID),
        ];
        // The current columns returned (positions in the current schema).
        let mut wanted: Vec<usize> = match &self.columns {
            None => (0..layout.len()).collect(),
            Some(cols) => cols
                .iter()
                .filter(|c| !(lineage.is_some() && is_lineage_column(c)))
                .filter(|c| !(self.file_position && is_position_column(c)))
                .map(|c| {
                    layout
                        .position(c)
                        .ok_or_else(|| self.table.no_such_column(c))
                })
                .collect::<Result<_>>()?,
        };
        // The filter column is read for refinement; the final projection drops it if unselected.
        if let Some(f) = filter {
            wanted.extend(layout.position(f.column));
        }
        wanted.sort_unstable();
        wanted.dedup();
        let extra: Vec<usize> = if lineage.is_some() {
            stored.iter().flatten().copied().collect()
        } else {
            Vec::new()
        };
        let mut roots: Vec<usize> = wanted
            .iter()
            .filter_map(|&p| layout.file_index(p))
            .chain(extra.iter().copied())
            .collect();
        if roots.is_empty() {
            // Every wanted column postdates the file: read one column for the row count.
            roots.push(0);
        }
        roots.sort_unstable();
        roots.dedup();
        // File positions of the rows the reader returns: the kept row groups, in order.
        let mut runs = Vec::with_capacity(keep_groups.len());
        let mut start = 0u64;
        let mut group_starts = Vec::with_capacity(row_groups.len());
        for rg in row_groups {
            group_starts.push(start);
            start += rg.num_rows().max(0) as u64;
        }
        for &g in &keep_groups {
            runs.push((group_starts[g], row_groups[g].num_rows().max(0) as u64));
        }
        let mask = ProjectionMask::roots(parquet_schema, roots.iter().copied());
        let batches: Vec<RecordBatch> = block_on(async move {
            ParquetRecordBatchStreamBuilder::new_with_metadata(reader, footer)
                .with_row_groups(keep_groups)
                .with_projection(mask)
                .build()?
                .try_collect()
                .await
        })?;
        let positional = deleted.is_some() || self.file_position;
        let mut read = 0u64;
        let mut marked = None;
        for batch in batches {
            let batch = layout.conform(&batch, &roots, &wanted, &extra)?;
            let batch = self.mark_geography(batch, &mut marked)?;
            let first = read;
            read += batch.num_rows() as u64;
            let positions = positional.then(|| row_positions(&runs, first, batch.num_rows()));
            let batch = match lineage {
                Some(l) => add_lineage(&batch, l, &runs, first, &file.path)?,
                None => batch,
            };
            let mut keep: Option<BooleanArray> = match (deleted, &positions) {
                (Some(d), Some(p)) => Some(p.iter().map(|&p| Some(!d.contains(p))).collect()),
                _ => None,
            };
            if let Some((_, f)) = filter_col {
                let col = batch.column(batch.schema().index_of(f.column)?).clone();
                let mask = self.row_mask(col.as_ref(), &f.window)?;
                keep = Some(match keep {
                    Some(k) => arrow_arith::boolean::and(&k, &mask)?,
                    None => mask,
                });
            }
            let batch = match (&positions, self.file_position) {
                (Some(p), true) => with_file_position(&batch, &file.path, p)?,
                _ => batch,
            };
            let batch = match keep {
                Some(mask) => arrow_select::filter::filter_record_batch(&batch, &mask)?,
                None => batch,
            };
            if batch.num_rows() == 0 {
                continue;
            }
            let batch = match &self.columns {
                Some(cols) => {
                    let mut idx: Vec<usize> = cols
                        .iter()
                        .filter(|c| !(self.file_position && is_position_column(c)))
                        .map(|c| batch.schema().index_of(c))
                        .collect::<std::result::Result<_, _>>()?;
                    if self.file_position {
                        let tail = batch.num_columns();
                        idx.extend([tail - 2, tail - 1]);
                    }
                    batch.project(&idx)?
                }
                None => batch,
            };
            out.push(batch);
        }
        Ok(())
    }

    /// `batch` with GeoArrow's `geoarrow.wkb` extension and its edges on every geography column
    /// that lacks an extension (parquet's reader drops it when the file embeds its Arrow
    /// schema), so that a consumer (the row filter of a DELETE or UPDATE, an engine) knows the
    /// column is geography. `marked` caches the schema for the batches of one file.
    fn mark_geography(
        &self,
        batch: RecordBatch,
        marked: &mut Option<arrow_schema::SchemaRef>,
    ) -> Result<RecordBatch> {
        let schema = match marked {
            Some(s) => s.clone(),
            None => {
                let schema = batch.schema();
                let fields: Vec<arrow_schema::FieldRef> =
                    schema
                        .fields()
                        .iter()
                        .map(|f| {
                            let edges = self.table.geo_columns().iter().find_map(|g| {
                                match &g.column_type {
                                    ColumnType::Geography { edges, .. } if g.name == *f.name() => {
                                        Some(edges.name())
                                    }
                                    _ => None,
                                }
                            });
                            match edges {
                                Some(edges) if !f.metadata().contains_key(EXTENSION_NAME) => {
                                    let mut md = f.metadata().clone();
                                    md.insert(EXTENSION_NAME.into(), "geoarrow.wkb".into());
                                    md.insert(
                                        EXTENSION_METADATA.into(),
                                        format!(r#"{{"edges":"{edges}"}}"#),
                                    );
                                    Arc::new(f.as_ref().clone().with_metadata(md))
                                }
                                _ => f.clone(),
                            }
                        })
                        .collect();
                let s = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
                *marked = Some(s.clone());
                s
            }
        };
        Ok(RecordBatch::try_new(schema, batch.columns().to_vec())?)
    }

    /// Rows whose bbox intersects the window; with `exact`, whose geometry does.
    fn row_mask(&self, geometry: &dyn Array, window: &ScanWindow) -> Result<BooleanArray> {
        let window = match window {
            ScanWindow::Planar(b) => b,
            ScanWindow::Sphere(w) if self.exact => {
                return crate::refine::intersects_on_sphere(geometry, w.query());
            }
            ScanWindow::Sphere(w) => {
                let Some(window) = w.bbox() else {
                    return Ok(BooleanArray::from(vec![false; geometry.len()]));
                };
                let b = geography_bbox_columns(geometry)?;
                return Ok((0..geometry.len())
                    .map(|row| {
                        Some(
                            b.min_x.is_valid(row)
                                && geography_boxes_meet(
                                    &BBox::new(
                                        b.min_x.value(row),
                                        b.min_y.value(row),
                                        b.max_x.value(row),
                                        b.max_y.value(row),
                                    ),
                                    &window,
                                ),
                        )
                    })
                    .collect());
            }
        };
        let b = bbox_columns(geometry)?;
        let mut keep = Vec::with_capacity(geometry.len());
        for row in 0..geometry.len() {
            let hit = b.min_x.is_valid(row)
                && b.min_x.value(row) <= window.max_x
                && b.max_x.value(row) >= window.min_x
                && b.min_y.value(row) <= window.max_y
                && b.max_y.value(row) >= window.min_y;
            let hit = hit && (!self.exact || crate::refine::intersects(geometry, row, window)?);
            keep.push(hit);
        }
        Ok(BooleanArray::from(keep))
    }
}

/// File positions of `n` rows starting at the reader's row `first`, over `runs` (the kept row
/// groups as (file position, rows)).
fn row_positions(runs: &[(u64, u64)], first: u64, n: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(n);
    // Reader row index where the current run starts.
    let mut run_start = 0u64;
    for &(pos, rows) in runs {
        let run_end = run_start + rows;
        while out.len() < n {
            let at = first + out.len() as u64;
            if at >= run_end {
                break;
            }
            out.push(pos + (at - run_start));
        }
        if out.len() == n {
            break;
        }
        run_start = run_end;
    }
    out
}

/// `batch` with `_file` and `_pos` appended.
fn with_file_position(batch: &RecordBatch, path: &str, positions: &[u64]) -> Result<RecordBatch> {
    let schema = batch.schema();
    let mut fields: Vec<arrow_schema::FieldRef> = schema.fields().iter().cloned().collect();
    fields.push(Arc::new(arrow_schema::Field::new(
        FILE_COLUMN,
        arrow_schema::DataType::Utf8,
        false,
    )));
    fields.push(Arc::new(arrow_schema::Field::new(
        POS_COLUMN,
        arrow_schema::DataType::Int64,
        false,
    )));
    let mut columns = batch.columns().to_vec();
    columns.push(Arc::new(arrow_array::StringArray::from(vec![
        path;
        positions
            .len()
    ])));
    columns.push(Arc::new(Int64Array::from_iter_values(
        positions.iter().map(|&p| p as i64),
    )));
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
        columns,
    )?)
}

/// `batch` (rows `first..` of the reader over `runs`, the kept row groups as (file position,
/// rows)) with its stored lineage columns replaced by the rows' lineage: the stored value where
/// non-null, else derived from the file's `lineage` and the row's position in the file.
fn add_lineage(
    batch: &RecordBatch,
    lineage: Option<RowLineage>,
    runs: &[(u64, u64)],
    first: u64,
    path: &str,
) -> Result<RecordBatch> {
    let schema = batch.schema();
    let stored = |id: i32| -> Result<Option<Int64Array>> {
        let Some(i) = schema
            .fields()
            .iter()
            .position(|f| arrow_field_id(f) == Some(id))
        else {
            return Ok(None);
        };
        batch
            .column(i)
            .as_any()
            .downcast_ref::<Int64Array>()
            .cloned()
            .map(Some)
            .ok_or_else(|| {
                Error::corrupt(
                    path,
                    format!(
                        "row-lineage column {:?} is {}, not long",
                        schema.field(i).name(),
                        batch.column(i).data_type()
                    ),
                )
            })
    };
    let (row_id, seq) = (
        stored(ROW_ID_FIELD_ID)?,
        stored(LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID)?,
    );
    let n = batch.num_rows();
    let (mut ids, mut seqs) = (Vec::with_capacity(n), Vec::with_capacity(n));
    // Split the batch where it crosses from one kept row group to the next.
    let (mut offset, mut run_start) = (0usize, 0u64);
    for &(pos, rows) in runs {
        let run_end = run_start + rows;
        let from = (first + offset as u64).max(run_start);
        if offset < n && from < run_end {
            let len = ((run_end - from) as usize).min(n - offset);
            let (a, b) = derive_lineage(
                row_id.as_ref().map(|c| c.slice(offset, len)).as_ref(),
                seq.as_ref().map(|c| c.slice(offset, len)).as_ref(),
                lineage,
                pos + (from - run_start),
                len,
            );
            ids.extend(a.iter());
            seqs.extend(b.iter());
            offset += len;
        }
        run_start = run_end;
    }
    if offset != n {
        return Err(Error::corrupt(
            path,
            "the reader returned more rows than the row groups hold",
        ));
    }
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (f, c) in schema.fields().iter().zip(batch.columns()) {
        if !is_lineage_field(f) {
            fields.push(f.as_ref().clone());
            columns.push(c.clone());
        }
    }
    fields.extend(lineage_fields());
    columns.push(Arc::new(Int64Array::from(ids)));
    columns.push(Arc::new(Int64Array::from(seqs)));
    let schema = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
    Ok(RecordBatch::try_new(schema, columns)?)
}
