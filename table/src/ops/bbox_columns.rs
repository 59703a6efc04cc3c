//! Seed 002's recipe as two operations: [`Table::add_bbox_columns`] puts the four bbox columns
//! of a geometry column right before it, with metrics that let every reader prune on them, and
//! [`Table::backfill_bbox_columns`] fills them in the files written before, one partition at a
//! time.
//!
//! Each partition is one `overwrite` snapshot that replaces its unfilled files with files
//! whose bbox columns are derived from the geometry (the append path's derivation, so the
//! null / empty / point policy is the same), sorted while rewriting. A failure leaves the
//! partitions committed so far filled and the others as they were; a re-run skips the filled
//! ones, so it is safe to repeat until it succeeds.
//!
//! A data file counts as filled when it stores the four columns (by field id) and no row group
//! has every bbox value null while its geometry has values (which is what another writer that
//! leaves the columns out writes).

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, Instant};

use arrow_array::{RecordBatch, new_null_array};
use arrow_schema::DataType as ArrowType;
use geoberg_geostats::BBox;
use geoberg_rewrite::RowOrder;

use crate::metadata_columns::LAST_UPDATED_SEQUENCE_NUMBER_COLUMN;
use geoberg_sql::{Predicate, SortField, SortOrder};
use iceberg::spec::{DataFile, FormatVersion, PrimitiveType};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use rayon::prelude::*;

use crate::ColumnPosition;
use crate::bbox_columns::{
    BBOX_COLUMNS_PROPERTY_PREFIX, bbox_columns_property_value, bound_as_f64,
};
use crate::error::{Error, Result};
use crate::lineage::live_file_lineage;
use crate::metrics::METRICS_COLUMN_PREFIX;
use crate::ops::row_delta::{labelled, replace_data_files};
use crate::properties::BBOX_SOURCE_PROPERTY;
use crate::scan::{ScanFilter, combined_predicate};
use crate::schema::{BBOX_COLUMN_NAMES, Column, DataType, quote_name};
use crate::snapshot::ReadSet;
use crate::sort_order::row_order;
use crate::storage::StorageFile;
use crate::table::Table;
use crate::write::{FileSorter, write_data_files_sorted};

/// What [`Table::add_bbox_columns`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddBBoxColumnsReport {
    /// The geometry column the bbox columns derive from.
    pub geometry: String,
    /// The four columns: min x, min y, max x, max y.
    pub columns: [String; 4],
    /// The columns this call added (none when they existed).
    pub added: Vec<String>,
    /// The table properties this call set (key, value); none when they were set already.
    pub properties: Vec<(String, String)>,
}

impl fmt::Display for AddBBoxColumnsReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.added.is_empty() {
            true => write!(f, "bbox columns {} exist", self.columns.join(", "))?,
            false => write!(
                f,
                "added {} before {}",
                self.added.join(", "),
                self.geometry
            )?,
        }
        if !self.properties.is_empty() {
            let set: Vec<String> = self
                .properties
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            write!(f, "; set {}", set.join(", "))?;
        }
        Ok(())
    }
}

/// What a backfill did, with seed 002's evidence: the files a bbox-column range query over
/// [`BackfillReport::window`] reads before and after (as an engine without geometry support
/// plans it, from the columns' bounds alone).
#[derive(Debug, Clone, PartialEq)]
pub struct BackfillReport {
    /// Partitions with data files the filter selected.
    pub partitions_total: usize,
    /// Partitions filled by this run (one commit each).
    pub partitions_backfilled: usize,
    /// Partitions whose files were all filled already.
    pub partitions_skipped: usize,
    /// Data files replaced.
    pub rewritten_data_files_count: u64,
    /// Data files written.
    pub added_data_files_count: u64,
    /// Rows rewritten.
    pub rewritten_records_count: u64,
    /// Bytes of the files written.
    pub added_bytes_count: u64,
    /// The snapshots committed, one per partition filled.
    pub snapshot_ids: Vec<i64>,
    /// The query window of the before/after counts.
    pub window: BBox,
    /// Live data files after the backfill.
    pub files_total: usize,
    /// Files the window's bbox-column query reads before the backfill (of the files then).
    pub files_read_before: usize,
    /// Files it reads after.
    pub files_read_after: usize,
    /// Wall time.
    pub elapsed: Duration,
}

impl fmt::Display for BackfillReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "backfilled {} of {} partitions ({} already filled): {} files ({} rows) rewritten \
             into {} files, {} bytes, {} commits, {:.1} s",
            self.partitions_backfilled,
            self.partitions_total,
            self.partitions_skipped,
            self.rewritten_data_files_count,
            self.rewritten_records_count,
            self.added_data_files_count,
            self.added_bytes_count,
            self.snapshot_ids.len(),
            self.elapsed.as_secs_f64()
        )?;
        let w = &self.window;
        write!(
            f,
            "window {}, {}, {}, {}: the bbox-column query reads {} files before, {} of {} after",
            w.min_x,
            w.min_y,
            w.max_x,
            w.max_y,
            self.files_read_before,
            self.files_read_after,
            self.files_total
        )
    }
}

type Progress<'a> = Box<dyn Fn(usize, usize) + Send + Sync + 'a>;

/// A backfill being configured; see [`Table::backfill_bbox_columns`].
pub struct BBoxBackfill<'a> {
    table: &'a Table,
    geometry: String,
    filter: Option<Predicate>,
    filter_sql: Option<String>,
    window: Option<BBox>,
    group_bytes: u64,
    progress: Option<Progress<'a>>,
}

/// Default of [`BBoxBackfill::group_bytes`].
pub const DEFAULT_BACKFILL_GROUP_BYTES: u64 = 256 * 1024 * 1024;

impl fmt::Debug for BBoxBackfill<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BBoxBackfill")
            .field("table", self.table.ident())
            .field("geometry", &self.geometry)
            .field("filter", &self.filter)
            .field("filter_sql", &self.filter_sql)
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl Table {
    /// Adds the four bbox columns of geometry column `geometry` right before it (seed 002:
    /// "add the columns before the geometry, not after it", so they stay inside
    /// `write.metadata.metrics.max-inferred-column-defaults`), as nullable doubles named
    /// `names` (min x, min y, max x, max y; default `bbox_min_x`, `bbox_min_y`, `bbox_max_x`,
    /// `bbox_max_y`). Then sets their metrics to `full`, a WKB-binary (v1/v2) geometry
    /// column's to `counts` (bounds of WKB bytes mean nothing, but its null counts are what
    /// tells a reader the bbox columns cover every geometry), and
    /// [`crate::BBOX_SOURCE_PROPERTY`], so that every append from now on derives the columns.
    ///
    /// Idempotent: existing columns are checked (doubles or floats) and kept, properties already
    /// set are not set again. Nothing is rewritten; [`Table::backfill_bbox_columns`] fills the
    /// files written before.
    ///
    /// ```
    /// # use geoberg_table::{Catalog, Column, CreateTable, DataType, MemoryCatalog, TableIdent};
    /// let dir = std::env::temp_dir().join(format!("geoberg-bbox-doc-{}", std::process::id()));
    /// let catalog = std::sync::Arc::new(MemoryCatalog::new("demo", &dir)?);
    /// catalog.create_namespace("db")?;
    /// let table = CreateTable::new([
    ///     Column::new("id", DataType::Long),
    ///     Column::new("geom", DataType::geometry(4326)),
    /// ])
    /// .create(catalog, &TableIdent::new("db", "t")?)?;
    /// let (table, report) = table.add_bbox_columns("geom", None)?;
    /// let names: Vec<&str> = table.metadata().current_schema().as_struct().fields()
    ///     .iter().map(|f| f.name.as_str()).collect();
    /// assert_eq!(names, ["id", "bbox_min_x", "bbox_min_y", "bbox_max_x", "bbox_max_y", "geom"]);
    /// assert_eq!(report.added.len(), 4);
    /// let (table, report) = table.backfill_bbox_columns("geom").execute()?;
    /// assert_eq!(report.partitions_backfilled, 0); // an empty table has nothing to fill
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), geoberg_table::Error>(())
    /// ```
    pub fn add_bbox_columns(
        &self,
        geometry: &str,
        names: Option<[String; 4]>,
    ) -> Result<(Table, AddBBoxColumnsReport)> {
        let geo = self.geo_column(geometry)?;
        let custom = names.is_some();
        let names = names.unwrap_or_else(|| BBOX_COLUMN_NAMES.map(str::to_string));
        let refuse = |reason: String| Error::SchemaChange {
            table: self.ident().to_string(),
            change: format!("add the bbox columns of {geometry:?}"),
            reason,
        };
        check_names(&names, geometry).map_err(refuse)?;
        let properties = self.properties()?;
        if let Some(source) = &properties.bbox_source
            && source != geometry
        {
            return Err(refuse(format!(
                "the table derives its bbox columns from {source:?} ({BBOX_SOURCE_PROPERTY}); \
                 one geometry column per table has them: unset the property first to move them"
            )));
        }
        if let Some((_, current)) = self.derived_bbox_columns()?
            && properties.bbox_source.is_some()
            && custom
            && current != names
        {
            return Err(refuse(format!(
                "the table already derives {} from {geometry:?}; rename those columns instead",
                current.join(", ")
            )));
        }

        // The columns: all four present (checked), or none (added before the geometry).
        let schema = self.metadata().current_schema();
        let present: Vec<&String> = names
            .iter()
            .filter(|n| schema.as_struct().field_by_name(n).is_some())
            .collect();
        let mut table = self.clone();
        let mut added = Vec::new();
        if present.is_empty() {
            let fields = schema.as_struct().fields();
            let at = fields
                .iter()
                .position(|f| f.id == geo.field_id)
                .ok_or_else(|| {
                    refuse(format!(
                        "{geometry:?} is not a top-level column; bbox columns derive from a \
                         top-level geometry column"
                    ))
                })?;
            let mut position = match at {
                0 => ColumnPosition::First,
                i => ColumnPosition::After(fields[i - 1].name.clone()),
            };
            let mut update = table.update_schema();
            for name in &names {
                update = update.add_column(Column::new(name, DataType::Double), position);
                position = ColumnPosition::After(name.clone());
            }
            table = update.commit()?;
            added = names.to_vec();
        } else if present.len() < 4 {
            let missing: Vec<&String> = names.iter().filter(|n| !present.contains(n)).collect();
            return Err(refuse(format!(
                "the table has {} but not {}; add the missing ones with ALTER TABLE ... ADD \
                 COLUMN ... AFTER, or drop the present ones and run this again",
                join(&present),
                join(&missing)
            )));
        } else {
            for name in &names {
                let field = schema.as_struct().field_by_name(name).expect("present");
                if !matches!(
                    field.field_type.as_primitive_type(),
                    Some(PrimitiveType::Double | PrimitiveType::Float)
                ) {
                    return Err(refuse(format!(
                        "column {name:?} is {}, not double; a bbox column holds numbers",
                        field.field_type
                    )));
                }
            }
        }

        // The properties: metrics where readers prune, and the derivation on append.
        let mut wanted: Vec<(String, String)> = names
            .iter()
            .map(|n| (format!("{METRICS_COLUMN_PREFIX}{n}"), "full".to_string()))
            .collect();
        // Before v3 a geometry column is WKB in a binary column (v3 has the geometry type,
        // whose bounds are the spec's boxes).
        if table.metadata().format_version() < FormatVersion::V3 {
            wanted.push((
                format!("{METRICS_COLUMN_PREFIX}{geometry}"),
                "counts".to_string(),
            ));
        }
        if custom {
            wanted.push((
                format!("{BBOX_COLUMNS_PROPERTY_PREFIX}{geometry}"),
                bbox_columns_property_value(&geoberg_geostats::BBoxColumnNames {
                    min_x: names[0].clone(),
                    min_y: names[1].clone(),
                    max_x: names[2].clone(),
                    max_y: names[3].clone(),
                }),
            ));
        }
        wanted.push((BBOX_SOURCE_PROPERTY.to_string(), geometry.to_string()));
        let current = table.metadata().properties();
        wanted.retain(|(k, v)| current.get(k) != Some(v));
        if !wanted.is_empty() {
            table = table.set_properties(wanted.clone())?;
        }
        Ok((
            table,
            AddBBoxColumnsReport {
                geometry: geometry.to_string(),
                columns: names,
                added,
                properties: wanted,
            },
        ))
    }

    /// Starts the backfill of the bbox columns of `geometry` (added by
    /// [`Table::add_bbox_columns`]): every partition with a data file whose columns are not
    /// filled gets one `overwrite` commit replacing those files with filled ones. Each file's
    /// rows are sorted by the table's `write.sort-order` when it has a column or z-order one,
    /// else by the first two bbox columns (seed 002's `sortWithinPartitions`); rows keep their
    /// v3 `_row_id` and count as updated. See [`BBoxBackfill::group_bytes`] for how the rows
    /// are cut into files.
    pub fn backfill_bbox_columns(&self, geometry: &str) -> BBoxBackfill<'_> {
        BBoxBackfill {
            table: self,
            geometry: geometry.to_string(),
            filter: None,
            filter_sql: None,
            window: None,
            group_bytes: DEFAULT_BACKFILL_GROUP_BYTES,
            progress: None,
        }
    }
}

fn join(names: &[&String]) -> String {
    names
        .iter()
        .map(|n| n.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The names must be four distinct top-level names other than the geometry's.
fn check_names(names: &[String; 4], geometry: &str) -> std::result::Result<(), String> {
    for (i, n) in names.iter().enumerate() {
        if n.trim().is_empty() || n.contains('.') {
            return Err(format!(
                "bbox column name {n:?} is not a top-level column name; give four plain names"
            ));
        }
        if n == geometry || names[..i].contains(n) {
            return Err(format!(
                "bbox column names must be four distinct columns other than the geometry, got {}",
                names.join(", ")
            ));
        }
    }
    Ok(())
}

impl<'a> BBoxBackfill<'a> {
    /// Backfills only the partitions with a data file that may hold a row matching
    /// `predicate` (decided from the files' statistics; seed 002: "backfill closed partitions
    /// and leave the current one").
    pub fn filter(mut self, predicate: Predicate) -> Self {
        self.filter = Some(predicate);
        self
    }

    /// [`BBoxBackfill::filter`] from SQL (`"event_day < '2026-01-01'"`); parse errors surface
    /// at [`BBoxBackfill::execute`].
    pub fn where_sql(mut self, condition: impl Into<String>) -> Self {
        self.filter_sql = Some(condition.into());
        self
    }

    /// The window of the before/after file counts; default the central 1% (a tenth of each
    /// side) of the extent the bbox columns give after the backfill.
    pub fn window(mut self, window: BBox) -> Self {
        self.window = Some(window);
        self
    }

    /// Input bytes (of a partition's unfilled data files) read and sorted together; default
    /// [`DEFAULT_BACKFILL_GROUP_BYTES`]. A group's rows are sorted as one and cut into files of
    /// about `write.target-file-size-bytes`, which then hold consecutive ranges of the sort
    /// order (what lets a range query skip files); a partition larger than this becomes several
    /// such groups. Memory is a few times this (decoded rows).
    pub fn group_bytes(mut self, bytes: u64) -> Self {
        self.group_bytes = bytes.max(1);
        self
    }

    /// Called with (partitions filled, partitions to fill) before the first partition and
    /// after each commit.
    pub fn on_partition(mut self, f: impl Fn(usize, usize) + Send + Sync + 'a) -> Self {
        self.progress = Some(Box::new(f));
        self
    }

    /// Fills the partitions, one commit each, and counts the files the window's bbox-column
    /// query reads before and after. On an error the partitions committed so far stay filled;
    /// run it again to finish.
    pub fn execute(self) -> Result<(Table, BackfillReport)> {
        let started = Instant::now();
        let before = self.table;
        let (source, names) = before
            .derived_bbox_columns()?
            .filter(|(source, _)| *source == self.geometry)
            .ok_or_else(|| Error::Unsupported {
                what: format!(
                    "backfilling bbox columns of {:?} in table {}, which derives none from it",
                    self.geometry,
                    before.ident()
                ),
                fix: format!(
                    "add them first: CALL <catalog>.system.add_bbox_columns(table => '{}', \
                     column => '{}'), or geoberg bbox-columns add",
                    before.ident(),
                    self.geometry
                ),
            })?;
        let schema = before.metadata().current_schema();
        let field_id = |name: &str| -> Result<i32> {
            schema
                .as_struct()
                .field_by_name(name)
                .map(|f| f.id)
                .ok_or_else(|| before.no_such_column(name))
        };
        let geometry_id = field_id(&source)?;
        let bbox_ids = [
            field_id(&names[0])?,
            field_id(&names[1])?,
            field_id(&names[2])?,
            field_id(&names[3])?,
        ];
        let filter = combined_predicate(self.filter.as_ref(), self.filter_sql.as_deref())?;

        // Partitions of the selected files, each with its unfilled files.
        let files = before.data_files()?;
        let selected = match &filter {
            Some(p) => before.select_data_files(&files, &ScanFilter::from_predicate(before, p)?)?,
            None => vec![true; files.len()],
        };
        let mut partitions: BTreeMap<String, Vec<DataFile>> = BTreeMap::new();
        for (file, _) in files.iter().zip(&selected).filter(|(_, s)| **s) {
            partitions
                .entry(format!("{:?}", file.partition()))
                .or_default();
        }
        // Footers are read only where the manifests cannot tell, in parallel (object stores).
        let candidates: Vec<&DataFile> = files
            .iter()
            .filter(|f| partitions.contains_key(&format!("{:?}", f.partition())))
            .collect();
        let filled: Vec<bool> = candidates
            .par_iter()
            .map(|f| is_filled(before, f, geometry_id, bbox_ids, &source, &names))
            .collect::<Result<_>>()?;
        for (file, filled) in candidates.into_iter().zip(filled) {
            if !filled && let Some(p) = partitions.get_mut(&format!("{:?}", file.partition())) {
                p.push(file.clone());
            }
        }
        let partitions_total = partitions.len();
        let to_fill: Vec<Vec<DataFile>> =
            partitions.into_values().filter(|f| !f.is_empty()).collect();
        let progress = |done: usize| {
            if let Some(f) = &self.progress {
                f(done, to_fill.len())
            }
        };
        progress(0);
        let sorter = backfill_sorter(before, &names)?;
        let mut report = BackfillReport {
            partitions_total,
            partitions_backfilled: 0,
            partitions_skipped: partitions_total - to_fill.len(),
            rewritten_data_files_count: 0,
            added_data_files_count: 0,
            rewritten_records_count: 0,
            added_bytes_count: 0,
            snapshot_ids: Vec::new(),
            window: BBox::new(0.0, 0.0, 0.0, 0.0),
            files_total: 0,
            files_read_before: 0,
            files_read_after: 0,
            elapsed: Duration::ZERO,
        };
        let mut current = before.clone();
        for (done, unfilled) in to_fill.iter().enumerate() {
            let (next, filled) = backfill_partition(&current, unfilled, &sorter, self.group_bytes)?;
            current = next;
            report.partitions_backfilled += 1;
            report.rewritten_data_files_count += unfilled.len() as u64;
            report.rewritten_records_count += filled.records;
            report.added_data_files_count += filled.files as u64;
            report.added_bytes_count += filled.bytes;
            report.snapshot_ids.extend(filled.snapshot_id);
            progress(done + 1);
        }

        // Seed 002's evidence: files a bbox-column range query reads, before and after.
        let after_files = current.data_files()?;
        report.window = match self.window {
            Some(w) => w,
            None => central_window(&after_files, bbox_ids),
        };
        let query = bbox_range_query(&names, &report.window)?;
        report.files_read_before = before.files_matching(&query)?.len();
        report.files_read_after = current.files_matching(&query)?.len();
        report.files_total = after_files.len();
        report.elapsed = started.elapsed();
        Ok((current, report))
    }
}

/// The row order of the backfilled files: the table's column or z-order `write.sort-order`,
/// else the first two bbox columns.
fn backfill_sorter(table: &Table, names: &[String; 4]) -> Result<FileSorter> {
    if let Some(s) = FileSorter::of(table)? {
        return Ok(s);
    }
    let order = row_order(
        table,
        &SortOrder::Columns(vec![SortField::asc(&names[0]), SortField::asc(&names[1])]),
    )?;
    debug_assert!(matches!(order, RowOrder::Columns { .. }));
    Ok(FileSorter::new(table, order))
}

/// The query an engine without geometry support runs for a window: ranges on the bbox columns.
fn bbox_range_query(names: &[String; 4], w: &BBox) -> Result<Predicate> {
    let [min_x, min_y, max_x, max_y] = names.each_ref().map(|n| quote_name(n));
    let sql = format!(
        "{max_x} >= {:?} AND {min_x} <= {:?} AND {max_y} >= {:?} AND {min_y} <= {:?}",
        w.min_x, w.max_x, w.min_y, w.max_y
    );
    Ok(geoberg_sql::parse_condition(&sql)?)
}

/// The central 1% of the extent of the files' bbox-column bounds (a tenth of each side);
/// the empty box at the origin when no file has bounds.
fn central_window(files: &[DataFile], [a, b, c, d]: [i32; 4]) -> BBox {
    let mut extent: Option<BBox> = None;
    for f in files {
        let lo = |id: i32| bound_as_f64(f.lower_bounds().get(&id));
        let hi = |id: i32| bound_as_f64(f.upper_bounds().get(&id));
        let (Some(x0), Some(y0), Some(x1), Some(y1)) = (lo(a), lo(b), hi(c), hi(d)) else {
            continue;
        };
        let e = extent.get_or_insert(BBox::new(x0, y0, x1, y1));
        e.min_x = e.min_x.min(x0);
        e.min_y = e.min_y.min(y0);
        e.max_x = e.max_x.max(x1);
        e.max_y = e.max_y.max(y1);
    }
    let Some(e) = extent else {
        return BBox::new(0.0, 0.0, 0.0, 0.0);
    };
    let (cx, cy) = ((e.min_x + e.max_x) / 2.0, (e.min_y + e.max_y) / 2.0);
    let (hx, hy) = ((e.max_x - e.min_x) / 20.0, (e.max_y - e.min_y) / 20.0);
    BBox::new(cx - hx, cy - hy, cx + hx, cy + hy)
}

/// Whether a data file's bbox columns are filled (see the module docs). Files without the
/// geometry column have nothing to derive.
fn is_filled(
    table: &Table,
    file: &DataFile,
    geometry_id: i32,
    bbox_ids: [i32; 4],
    geometry: &str,
    names: &[String; 4],
) -> Result<bool> {
    // Writers count values only of the columns a file stores: with counts for all four, the
    // manifest answers unless every bbox value is null.
    let rows = file.record_count();
    if bbox_ids
        .iter()
        .all(|id| file.value_counts().contains_key(id))
        && rows > 0
    {
        match (
            file.null_value_counts().get(&bbox_ids[0]),
            file.null_value_counts().get(&geometry_id),
        ) {
            (Some(&bbox_nulls), _) if bbox_nulls < rows => return Ok(true),
            (Some(_), Some(&geometry_nulls)) => return Ok(geometry_nulls == rows),
            _ => {}
        }
    }
    let reader =
        StorageFile::with_size(table.storage(), file.file_path(), file.file_size_in_bytes());
    let footer = ParquetMetaDataReader::new().parse_and_finish(&reader)?;
    let Some(g) = top_level_leaf(&footer, geometry_id, geometry) else {
        return Ok(true);
    };
    let mut leaves = Vec::with_capacity(4);
    for (id, name) in bbox_ids.iter().zip(names) {
        match top_level_leaf(&footer, *id, name) {
            Some(l) => leaves.push(l),
            None => return Ok(false),
        }
    }
    for rg in footer.row_groups() {
        let rows = rg.num_rows() as u64;
        let nulls = |leaf: usize| {
            rg.column(leaf)
                .statistics()
                .and_then(|s| s.null_count_opt())
        };
        let geometry_has_values = nulls(g).is_some_and(|n| n < rows);
        let bbox_all_null = nulls(leaves[0]) == Some(rows);
        if rows > 0 && geometry_has_values && bbox_all_null {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The leaf column of a top-level primitive field: by field id, or by name in a file that
/// records no field ids.
fn top_level_leaf(footer: &ParquetMetaData, field_id: i32, name: &str) -> Option<usize> {
    let descr = footer.file_metadata().schema_descr();
    let with_ids = descr
        .root_schema()
        .get_fields()
        .iter()
        .any(|f| f.get_basic_info().has_id());
    descr.columns().iter().position(|c| {
        let parts = c.path().parts();
        parts.len() == 1
            && match with_ids {
                true => {
                    let info = c.self_type().get_basic_info();
                    info.has_id() && info.id() == field_id
                }
                false => parts[0] == name,
            }
    })
}

/// One partition's commit.
struct FilledPartition {
    records: u64,
    files: usize,
    bytes: u64,
    snapshot_id: Option<i64>,
}

/// Replaces one partition's unfilled files with filled, sorted ones in one `overwrite`
/// commit; the files written are removed when nothing was committed.
fn backfill_partition(
    table: &Table,
    unfilled: &[DataFile],
    sorter: &FileSorter,
    group_bytes: u64,
) -> Result<(Table, FilledPartition)> {
    let v3 = table.metadata().format_version() >= FormatVersion::V3;
    let target = table
        .properties()?
        .target_file_size_bytes
        .unwrap_or(geoberg_rewrite::DEFAULT_TARGET_FILE_SIZE_BYTES);
    let mut written: Vec<DataFile> = Vec::new();
    let cleanup = |written: &[DataFile]| {
        for f in written {
            let _ = table.storage().delete(f.file_path());
        }
    };
    let mut records = 0u64;
    for group in size_groups(unfilled, group_bytes) {
        let result = (|| -> Result<Vec<DataFile>> {
            let (batches, _) = table
                .scan()
                .files(group.iter().map(|f| f.file_path().to_string()))
                .with_row_lineage(v3)
                .execute()?;
            let mut rows = Vec::with_capacity(batches.len());
            for batch in &batches {
                rows.push(updated(labelled(table, batch)?)?);
            }
            // Files of about the target size, by the input's bytes per row.
            let group_rows: u64 = rows.iter().map(|b| b.num_rows() as u64).sum();
            let group_size: u64 = group.iter().map(DataFile::file_size_in_bytes).sum();
            records += group_rows;
            let per_file =
                (group_rows as u128 * target as u128).div_ceil(group_size.max(1) as u128);
            let per_file = usize::try_from(per_file).unwrap_or(usize::MAX);
            write_data_files_sorted(table, &rows, sorter.clone(), per_file)
        })();
        match result {
            Ok(files) => written.extend(files),
            Err(e) => {
                cleanup(&written);
                return Err(e);
            }
        }
    }
    let paths: Vec<String> = unfilled.iter().map(|f| f.file_path().to_string()).collect();
    let mut read = ReadSet {
        starting_snapshot_id: table.metadata().current_snapshot_id().unwrap_or(-1),
        files: paths.iter().cloned().collect(),
        ..ReadSet::default()
    };
    if v3 {
        let lineage = match live_file_lineage(table) {
            Ok(l) => l,
            Err(e) => {
                cleanup(&written);
                return Err(e);
            }
        };
        read.first_row_ids = paths
            .iter()
            .filter_map(|p| Some((p.clone(), lineage.get(p)?.first_row_id)))
            .collect();
    }
    let next = replace_data_files(table, read, &written)?;
    let filled = FilledPartition {
        records,
        files: written.len(),
        bytes: written.iter().map(|f| f.file_size_in_bytes()).sum(),
        snapshot_id: next.metadata().current_snapshot_id(),
    };
    Ok((next, filled))
}

/// Consecutive files in groups of at most `target` bytes (or one file larger than that).
fn size_groups(files: &[DataFile], target: u64) -> Vec<&[DataFile]> {
    let mut groups = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, f) in files.iter().enumerate() {
        if i > start && bytes + f.file_size_in_bytes() > target {
            groups.push(&files[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += f.file_size_in_bytes();
    }
    if start < files.len() {
        groups.push(&files[start..]);
    }
    groups
}

/// Rows whose bbox columns change are updated rows: their `_last_updated_sequence_number`
/// becomes null, so that it inherits the new file's (the spec's row lineage for an update).
fn updated(batch: RecordBatch) -> Result<RecordBatch> {
    let Ok(i) = batch.schema().index_of(LAST_UPDATED_SEQUENCE_NUMBER_COLUMN) else {
        return Ok(batch);
    };
    let mut columns = batch.columns().to_vec();
    columns[i] = new_null_array(&ArrowType::Int64, batch.num_rows());
    let mut fields: Vec<arrow_schema::Field> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields[i] = fields[i].clone().with_nullable(true);
    Ok(RecordBatch::try_new(
        std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(
            fields,
            batch.schema().metadata().clone(),
        )),
        columns,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_four_distinct_plain_columns() {
        let n = |a: [&str; 4]| a.map(String::from);
        assert!(check_names(&n(["a", "b", "c", "d"]), "geom").is_ok());
        assert!(check_names(&n(["a", "b", "a", "d"]), "geom").is_err());
        assert!(check_names(&n(["a", "b", "geom", "d"]), "geom").is_err());
        let e = check_names(&n(["a", "s.b", "c", "d"]), "geom").unwrap_err();
        assert!(e.contains("\"s.b\""), "{e}");
        assert!(check_names(&n(["a", " ", "c", "d"]), "geom").is_err());
    }

    #[test]
    fn the_default_window_is_the_central_hundredth_of_the_extent() {
        assert_eq!(
            central_window(&[], [1, 2, 3, 4]),
            BBox::new(0.0, 0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn the_range_query_compares_each_bbox_column_with_the_window() {
        let names = BBOX_COLUMN_NAMES.map(str::to_string);
        let q = bbox_range_query(&names, &BBox::new(-1.5, 2.0, 3.0, 4.25)).unwrap();
        let text = q.to_string();
        for part in ["bbox_max_x", "-1.5", "bbox_min_y", "4.25"] {
            assert!(text.contains(part), "{text}");
        }
    }
}
