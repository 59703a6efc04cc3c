//! Streaming ingest (seed 003): newline-delimited JSON records into a table in micro-batches,
//! each one append (so cluster on write keeps a clustered table clustered).
//!
//! A record becomes one row: the point from two fields (default `location.lon`,
//! `location.lat`; numbers or numeric strings) in the CRS a third names (default
//! `location.crs`; absent: the column's), transformed to the column's CRS by `geoberg-crs`'s
//! rules; every other column from the field of its name (or a dotted path given for it, or the
//! path its underscores spell: `velocity_value` reads `velocity.value`), cast to the column's
//! type. An optional two-step filter (seed 003) keeps the points inside an envelope, then inside a
//! shape. A record that cannot become a row goes to the rejects sink with its line number and the
//! reason; nothing is dropped silently. A batch commits every `batch_rows` rows or
//! `batch_interval`, and at the end of the input or when `stop` is set (Ctrl-C): a crash loses
//! at most the batch in flight, and [`IngestProgress::committed_through_line`] says where to
//! replay from.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, sync_channel};
use std::time::{Duration, Instant};

use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch, StringArray, UInt32Array};
use arrow_cast::{CastOptions, cast_with_options};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geo::Contains;
use geoberg_crs::{ColumnType, Crs, Reprojection};
use geoberg_geostats::BBox;
use rayon::prelude::*;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::table::{GeoColumn, Table};
use crate::write::SRID_FIELD_METADATA;

/// How records become rows; see the module docs.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// The point column [default: the table's first geometry column].
    pub geometry_column: Option<String>,
    /// Dotted path of the longitude (x).
    pub lon: String,
    /// Dotted path of the latitude (y).
    pub lat: String,
    /// Dotted path of the record's CRS (`EPSG:4326`, `OGC:CRS84`, ...); `None`: the column's.
    pub crs: Option<String>,
    /// Column → dotted path, for columns whose field is not named after them.
    pub columns: BTreeMap<String, String>,
    /// Keep only points inside this box (in the column's CRS).
    pub envelope: Option<BBox>,
    /// Then only points inside this shape (in the column's CRS).
    pub within: Option<geo_types::Geometry<f64>>,
    /// Commit after this many rows.
    pub batch_rows: usize,
    /// Commit at least this often while rows are buffered.
    pub batch_interval: Duration,
    /// At the end of the input, wait for more (a growing file) until `stop` is set.
    pub follow: bool,
    /// Skip this many lines first (a replay after a crash).
    pub skip_lines: u64,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            geometry_column: None,
            lon: "location.lon".into(),
            lat: "location.lat".into(),
            crs: Some("location.crs".into()),
            columns: BTreeMap::new(),
            envelope: None,
            within: None,
            batch_rows: 100_000,
            batch_interval: Duration::from_secs(1),
            follow: false,
            skip_lines: 0,
        }
    }
}

/// Where an ingest stands after a commit (or at its end).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestProgress {
    /// Lines read (skipped ones included).
    pub lines: u64,
    /// Rows committed.
    pub rows_committed: u64,
    /// Records the envelope or shape filtered out.
    pub rows_filtered: u64,
    /// Records written to the rejects sink.
    pub rows_rejected: u64,
    /// Commits made.
    pub commits: u64,
    /// Every line up to this one (1-based) is committed, filtered or rejected: a replay
    /// starts after it (`skip_lines`).
    pub committed_through_line: u64,
    /// The last snapshot committed.
    pub snapshot_id: Option<i64>,
}

impl Table {
    /// Ingests the newline-delimited JSON records of `input` (see the module docs), writing
    /// rejected records to `rejects` as JSON lines (`line`, `reason`, `record`) and calling
    /// `on_commit` after each commit. Returns the table after the last commit.
    ///
    /// ```no_run
    /// # fn f(table: geoberg_table::Table) -> Result<(), Box<dyn std::error::Error>> {
    /// use std::sync::atomic::AtomicBool;
    /// use geoberg_table::IngestOptions;
    ///
    /// let input = std::io::BufReader::new(std::fs::File::open("telemetry.ndjson")?);
    /// let stop = AtomicBool::new(false);
    /// let (table, progress) =
    ///     table.ingest(input, &mut std::io::sink(), &IngestOptions::default(), &stop, |_| {})?;
    /// println!("{} rows in {} commits", progress.rows_committed, progress.commits);
    /// # Ok(()) }
    /// ```
    pub fn ingest(
        &self,
        input: impl BufRead + Send + 'static,
        rejects: &mut dyn Write,
        options: &IngestOptions,
        stop: &AtomicBool,
        mut on_commit: impl FnMut(&IngestProgress),
    ) -> Result<(Table, IngestProgress)> {
        let decoder = RecordDecoder::new(self, options)?;
        let batch_rows = options.batch_rows.max(1);
        // Lines come from a reader thread, so that a quiet input still commits on time.
        let (sender, lines) = sync_channel::<std::io::Result<String>>(batch_rows.min(65_536));
        let follow = options.follow;
        // Tells a following reader at the end of its input that nobody listens any more.
        let finished = ReaderDone(Arc::new(AtomicBool::new(false)));
        let done = finished.0.clone();
        std::thread::spawn(move || {
            let mut input = input;
            loop {
                let mut line = String::new();
                match input.read_line(&mut line) {
                    Ok(0) if follow && !done.load(Ordering::Relaxed) => {
                        std::thread::sleep(Duration::from_millis(100))
                    }
                    Ok(0) => return,
                    Ok(_) => {
                        if sender.send(Ok(line)).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = sender.send(Err(e));
                        return;
                    }
                }
            }
        });

        let mut table = self.clone();
        let mut progress = IngestProgress::default();
        // Lines are kept as text and parsed at commit time, on every core.
        let mut buffered: Vec<(u64, String)> = Vec::new();
        let mut last_commit = Instant::now();
        let flush = |table: &mut Table,
                     buffered: &mut Vec<(u64, String)>,
                     progress: &mut IngestProgress,
                     rejects: &mut dyn Write|
         -> Result<()> {
            let through = progress.lines;
            let parsed: Vec<(u64, std::result::Result<Value, String>)> = buffered
                .par_iter()
                .map(|(line, text)| {
                    let record =
                        serde_json::from_str::<Value>(text).map_err(|e| format!("not JSON: {e}"));
                    (*line, record)
                })
                .collect();
            let mut records = Vec::with_capacity(parsed.len());
            for ((line, record), (_, text)) in parsed.into_iter().zip(buffered.iter()) {
                match record {
                    Ok(r) => records.push((line, r)),
                    Err(reason) => {
                        write_reject(rejects, line, &reason, &Value::String(text.clone()))?;
                        progress.rows_rejected += 1;
                    }
                }
            }
            let (batch, rejected, filtered) = decoder.decode(&records)?;
            for (line, reason, record) in rejected {
                write_reject(rejects, line, &reason, &record)?;
                progress.rows_rejected += 1;
            }
            progress.rows_filtered += filtered;
            if batch.num_rows() > 0 {
                let (next, _) = table.append(std::slice::from_ref(&batch)).map_err(|e| {
                    Error::InvalidData(format!(
                        "{e}; lines after {} are not committed: replay them with skip_lines = {} \
                         (geoberg ingest --skip-lines {})",
                        progress.committed_through_line,
                        progress.committed_through_line,
                        progress.committed_through_line
                    ))
                })?;
                *table = next;
                progress.rows_committed += batch.num_rows() as u64;
                progress.commits += 1;
                progress.snapshot_id = table.metadata().current_snapshot_id();
            }
            progress.committed_through_line = through;
            buffered.clear();
            Ok(())
        };
        loop {
            let deadline = last_commit + options.batch_interval;
            let wait = deadline.saturating_duration_since(Instant::now());
            let next = if stop.load(Ordering::Relaxed) {
                Err(RecvTimeoutError::Disconnected)
            } else {
                // Wake at least every 100 ms to see `stop`.
                lines.recv_timeout(wait.min(Duration::from_millis(100)))
            };
            match next {
                Ok(line) => {
                    let line =
                        line.map_err(|e| Error::InvalidData(format!("reading input: {e}")))?;
                    progress.lines += 1;
                    if progress.lines <= options.skip_lines {
                        progress.committed_through_line = progress.lines;
                        continue;
                    }
                    let text = line.trim();
                    if !text.is_empty() {
                        buffered.push((progress.lines, text.to_string()));
                    }
                    // A steady stream never times out: the interval is checked here too.
                    if buffered.len() >= batch_rows
                        || (!buffered.is_empty()
                            && buffered.len().is_multiple_of(1024)
                            && Instant::now() >= deadline)
                    {
                        flush(&mut table, &mut buffered, &mut progress, rejects)?;
                        on_commit(&progress);
                        last_commit = Instant::now();
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    if Instant::now() >= deadline {
                        if !buffered.is_empty() {
                            flush(&mut table, &mut buffered, &mut progress, rejects)?;
                            on_commit(&progress);
                        }
                        last_commit = Instant::now();
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    flush(&mut table, &mut buffered, &mut progress, rejects)?;
                    on_commit(&progress);
                    rejects
                        .flush()
                        .map_err(|e| Error::InvalidData(format!("writing rejects: {e}")))?;
                    return Ok((table, progress));
                }
            }
        }
    }
}

/// Set when an ingest returns, however it returns.
struct ReaderDone(Arc<AtomicBool>);

impl Drop for ReaderDone {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn write_reject(out: &mut dyn Write, line: u64, reason: &str, record: &Value) -> Result<()> {
    let reject = serde_json::json!({"line": line, "reason": reason, "record": record});
    writeln!(out, "{reject}").map_err(|e| Error::InvalidData(format!("writing rejects: {e}")))
}

/// Records to batches of the table's columns.
struct RecordDecoder {
    geo: GeoColumn,
    srid: Option<i32>,
    column_crs: Option<Crs>,
    lon: Vec<String>,
    lat: Vec<String>,
    crs: Option<Vec<String>>,
    /// Other columns: name, Arrow type, the paths tried in order, required.
    columns: Vec<(String, ArrowType, Vec<Vec<String>>, bool)>,
    envelope: Option<BBox>,
    within: Option<geo_types::Geometry<f64>>,
}

fn path(dotted: &str) -> Vec<String> {
    dotted.split('.').map(str::to_string).collect()
}

fn lookup<'a>(record: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(record, |v, key| v.get(key))
        .filter(|v| !v.is_null())
}

impl RecordDecoder {
    fn new(table: &Table, options: &IngestOptions) -> Result<RecordDecoder> {
        let geo = match &options.geometry_column {
            Some(name) => table.geo_column(name)?,
            None => table.geo_columns().first().cloned().ok_or_else(|| {
                Error::InvalidData(format!(
                    "table {} has no geometry column to put the points in",
                    table.ident()
                ))
            })?,
        };
        let column_crs = geo.column_type.crs().cloned();
        let srid = match &geo.column_type {
            ColumnType::GeometryWithoutCrs => None,
            t => t.crs().and_then(Crs::srid),
        };
        let arrow = iceberg::arrow::schema_to_arrow_schema(table.metadata().current_schema())?;
        // Columns the table fills itself, from the geometry, and the other geometry columns
        // (left null) are not read from the records.
        let mut derived: Vec<String> = table.geo_columns().iter().map(|g| g.name.clone()).collect();
        if let Some((_, names)) = table.derived_bbox_columns()? {
            derived.extend(names.iter().map(|n| n.to_string()));
        }
        if let Some(cell) = table.properties()?.hilbert_cell {
            derived.push(cell.cell_column());
        }
        let mut columns = Vec::new();
        for field in table.metadata().current_schema().as_struct().fields() {
            if derived.contains(&field.name) {
                continue;
            }
            let ty = arrow.field_with_name(&field.name)?.data_type().clone();
            if !ty.is_primitive()
                && !matches!(
                    ty,
                    ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Boolean
                )
            {
                return Err(Error::Unsupported {
                    what: format!("ingesting JSON into column {:?} of type {ty}", field.name),
                    fix: "ingest into a table whose other columns are numbers, strings, \
                          booleans, dates or timestamps"
                        .into(),
                });
            }
            let paths = match options.columns.get(&field.name) {
                Some(dotted) => vec![path(dotted)],
                None => vec![
                    vec![field.name.clone()],
                    field.name.split('_').map(str::to_string).collect(),
                ],
            };
            columns.push((field.name.clone(), ty, paths, field.required));
        }
        for name in options.columns.keys() {
            if !columns.iter().any(|c| &c.0 == name) {
                return Err(table.no_such_column(name));
            }
        }
        Ok(RecordDecoder {
            geo,
            srid,
            column_crs,
            lon: path(&options.lon),
            lat: path(&options.lat),
            crs: options.crs.as_deref().map(path),
            columns,
            envelope: options.envelope,
            within: options.within.clone(),
        })
    }

    /// The rows of `records` that decode, the rejected ones (line, reason, record) and the
    /// number filtered out.
    #[allow(clippy::type_complexity)]
    fn decode(
        &self,
        records: &[(u64, Value)],
    ) -> Result<(RecordBatch, Vec<(u64, String, Value)>, u64)> {
        let mut rejected = Vec::new();
        let mut kept: Vec<usize> = Vec::new();
        let mut points: Vec<Vec<u8>> = Vec::new();
        let mut filtered = 0;
        for (i, (line, record)) in records.iter().enumerate() {
            match self.point(record) {
                Ok(Some((x, y))) => {
                    kept.push(i);
                    points.push(wkb_point(x, y));
                }
                Ok(None) => filtered += 1,
                Err(reason) => rejected.push((*line, reason, record.clone())),
            }
        }
        // Every other column as text, then cast; a value the cast turns into null is refused.
        let mut fields = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::new();
        let mut bad: Vec<Option<String>> = vec![None; kept.len()];
        for (name, ty, paths, required) in &self.columns {
            // The value of each row and the path it was found at.
            let found: Vec<Option<(usize, &Value)>> = kept
                .iter()
                .map(|&i| {
                    paths
                        .iter()
                        .enumerate()
                        .find_map(|(k, p)| lookup(&records[i].1, p).map(|v| (k, v)))
                })
                .collect();
            let text: StringArray = found
                .iter()
                .map(|f| f.map(|(_, v)| scalar_text(v)))
                .collect();
            let cast = cast_with_options(&text, ty, &CastOptions::default())?;
            for (row, slot) in bad.iter_mut().enumerate() {
                if slot.is_some() {
                    continue;
                }
                match found[row] {
                    Some((k, _)) if cast.is_null(row) => {
                        *slot = Some(format!(
                            "field {} = {:?} is not a {ty} for column {name:?}",
                            paths[k].join("."),
                            text.value(row)
                        ));
                    }
                    None if *required => {
                        *slot = Some(format!(
                            "field {} is missing, and column {name:?} is required",
                            paths[0].join(".")
                        ));
                    }
                    _ => {}
                }
            }
            fields.push(Field::new(name, ty.clone(), true));
            arrays.push(cast);
        }
        let mut geo_field = Field::new(&self.geo.name, ArrowType::Binary, true);
        if let Some(srid) = self.srid {
            geo_field = geo_field.with_metadata(
                [(SRID_FIELD_METADATA.to_string(), srid.to_string())]
                    .into_iter()
                    .collect(),
            );
        }
        fields.push(geo_field);
        arrays.push(Arc::new(BinaryArray::from_iter_values(points.iter())));
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?;
        let good: Vec<u32> = (0..kept.len() as u32)
            .filter(|&r| bad[r as usize].is_none())
            .collect();
        for (row, reason) in bad.into_iter().enumerate() {
            if let Some(reason) = reason {
                let (line, record) = &records[kept[row]];
                rejected.push((*line, reason, record.clone()));
            }
        }
        rejected.sort_by_key(|r| r.0);
        let batch = if good.len() == kept.len() {
            batch
        } else {
            arrow_select::take::take_record_batch(&batch, &UInt32Array::from(good))?
        };
        Ok((batch, rejected, filtered))
    }

    /// The record's point in the column's CRS; `None` when the filter drops it.
    fn point(&self, record: &Value) -> std::result::Result<Option<(f64, f64)>, String> {
        let coordinate = |path: &[String]| -> std::result::Result<f64, String> {
            let v = lookup(record, path).ok_or_else(|| format!("no field {}", path.join(".")))?;
            let n = match v {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().parse().ok(),
                _ => None,
            };
            n.filter(|n: &f64| n.is_finite())
                .ok_or_else(|| format!("field {} = {v} is not a number", path.join(".")))
        };
        let (mut x, mut y) = (coordinate(&self.lon)?, coordinate(&self.lat)?);
        if let (Some(crs_path), Some(target)) = (&self.crs, &self.column_crs)
            && let Some(v) = lookup(record, crs_path)
        {
            let text = v
                .as_str()
                .ok_or_else(|| format!("field {} is not a CRS name", crs_path.join(".")))?;
            let from: Crs = text
                .parse()
                .map_err(|e| format!("field {} = {text:?}: {e}", crs_path.join(".")))?;
            let reprojection = Reprojection::between(&from, target).map_err(|e| e.to_string())?;
            (x, y) = reprojection.transform(x, y).map_err(|e| e.to_string())?;
        }
        if let Some(b) = &self.envelope
            && !(b.min_x <= x && x <= b.max_x && b.min_y <= y && y <= b.max_y)
        {
            return Ok(None);
        }
        if let Some(shape) = &self.within
            && !shape.contains(&geo_types::Point::new(x, y))
        {
            return Ok(None);
        }
        Ok(Some((x, y)))
    }
}

/// A JSON scalar as the text a cast reads (objects and arrays as JSON).
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn wkb_point(x: f64, y: f64) -> Vec<u8> {
    let mut v = Vec::with_capacity(21);
    v.extend_from_slice(&[1, 1, 0, 0, 0]);
    v.extend_from_slice(&x.to_le_bytes());
    v.extend_from_slice(&y.to_le_bytes());
    v
}
