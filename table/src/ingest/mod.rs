//! Streaming ingest (seed 003): records into a table in micro-batches, each one append (so
//! cluster on write keeps a clustered table clustered). Two input formats, one committer:
//!
//! * newline-delimited JSON ([`Table::ingest`]): one record a line;
//! * Arrow IPC ([`Table::ingest_arrow`]): the record batches of an IPC stream (an IPC file is
//!   read as the stream it holds), one record a row.
//!
//! A record becomes one row. Its geometry is a point from two fields (default `location.lon`,
//! `location.lat`; numbers or numeric strings; in Arrow, dotted paths go into struct columns)
//! in the CRS a third names (default `location.crs`; absent: the column's), transformed to the
//! column's CRS by `geoberg-crs`'s rules. An Arrow batch may instead carry the geometry column
//! itself as binary WKB (its SRID from the field metadata `srid`, as [`Table::append`] reads it,
//! or the value's EWKB SRID; one in another CRS is transformed too). Every other column comes
//! from the field of its name (or a dotted path given for it, or the path its underscores spell:
//! `velocity_value` reads `velocity.value`), cast to the column's type. An optional two-step
//! filter (seed 003) keeps the geometries inside an envelope (a WKB value: its box), then
//! inside a shape; an empty geometry is inside neither, a null one is rejected.
//!
//! A record that cannot become a row goes to the rejects sink, one JSON line with the reason
//! and where it was (JSON: `line`; Arrow: `record_number`, and `batch` and `row` in the stream);
//! nothing is dropped silently. An Arrow schema that has neither the geometry nor the point's
//! fields, lacks a field named for a column, or has no field for a required column is an error
//! that lists its fields, before anything is committed. A batch commits every `batch_rows` rows or
//! `batch_interval`, and at the end of the input or when `stop` is set (Ctrl-C): a crash loses
//! at most the batch in flight, and [`IngestProgress::committed_through_line`] (JSON) or
//! [`IngestProgress::committed_through_record`] (Arrow) says where to replay from.
//!
//! The format is chosen by the caller, not guessed: with `--follow` on a file that is still
//! empty there is nothing to guess from. Each reader recognises the other format's first bytes
//! and fails naming the right one.

mod arrow_ipc;
mod commit;
mod json;
mod target;

use std::collections::BTreeMap;
use std::io::{BufRead, Read, Write};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use geoberg_geostats::BBox;

use crate::error::Result;
use crate::table::Table;
use commit::Unit;
use target::Target;

/// How records become rows; see the module docs.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// The geometry column [default: the table's first geometry column].
    pub geometry_column: Option<String>,
    /// Dotted path of the longitude (x).
    pub lon: String,
    /// Dotted path of the latitude (y).
    pub lat: String,
    /// Dotted path of the record's CRS (`EPSG:4326`, `OGC:CRS84`, ...); `None`: the column's.
    pub crs: Option<String>,
    /// Column → dotted path, for columns whose field is not named after them.
    pub columns: BTreeMap<String, String>,
    /// Keep only geometries inside this box (in the column's CRS).
    pub envelope: Option<BBox>,
    /// Then only geometries inside this shape (in the column's CRS).
    pub within: Option<geo_types::Geometry<f64>>,
    /// Commit after this many rows.
    pub batch_rows: usize,
    /// Commit at least this often while rows are buffered.
    pub batch_interval: Duration,
    /// At the end of the input, wait for more (a growing file) until `stop` is set, or for
    /// Arrow IPC until the stream's end-of-stream marker. A JSON line counts once its newline
    /// is written.
    pub follow: bool,
    /// JSON: skip this many lines first (a replay after a crash).
    pub skip_lines: u64,
    /// Arrow IPC: skip this many records (rows, counted over every batch of the stream) first
    /// (a replay after a crash).
    pub skip_records: u64,
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
            skip_records: 0,
        }
    }
}

/// Where an ingest stands after a commit (or at its end).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestProgress {
    /// JSON: lines read (skipped ones included); 0 for Arrow IPC.
    pub lines: u64,
    /// Arrow IPC: records (rows of every batch) read, skipped ones included; 0 for JSON.
    pub records: u64,
    /// Rows committed.
    pub rows_committed: u64,
    /// Records the envelope or shape filtered out.
    pub rows_filtered: u64,
    /// Records written to the rejects sink.
    pub rows_rejected: u64,
    /// Commits made.
    pub commits: u64,
    /// JSON: every line up to this one (1-based) is committed, filtered or rejected: a replay
    /// starts after it (`skip_lines`).
    pub committed_through_line: u64,
    /// Arrow IPC: every record up to this one (1-based, counted over every batch) is
    /// committed, filtered or rejected: a replay starts after it (`skip_records`).
    pub committed_through_record: u64,
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
        on_commit: impl FnMut(&IngestProgress),
    ) -> Result<(Table, IngestProgress)> {
        let decoder = json::JsonDecoder::new(
            Target::new(self, options)?,
            &options.lon,
            &options.lat,
            options.crs.as_deref(),
        )?;
        let follow = options.follow;
        commit::run(
            self,
            decoder,
            Unit::Line,
            options.batch_rows.clamp(1, 65_536),
            move |sender, done| json::read_lines(input, follow, done, sender),
            rejects,
            options,
            stop,
            on_commit,
        )
    }

    /// Ingests the record batches of the Arrow IPC stream `input` (or of an Arrow IPC file,
    /// read from the start like a stream), one record a row (see the module docs). Rejected
    /// records go to `rejects` as JSON lines (`record_number`, 1-based over the stream; `batch`
    /// and `row`, 0-based; `reason`; `record`, the row as JSON), and `on_commit` is called after
    /// each commit. Returns the table after the last commit.
    ///
    /// ```no_run
    /// # fn f(table: geoberg_table::Table) -> Result<(), Box<dyn std::error::Error>> {
    /// use std::sync::atomic::AtomicBool;
    /// use geoberg_table::IngestOptions;
    ///
    /// // Batches with a struct column `position {x, y}`, in the column's CRS, and an `id` column.
    /// let options = IngestOptions {
    ///     lon: "position.x".into(),
    ///     lat: "position.y".into(),
    ///     crs: None,
    ///     ..IngestOptions::default()
    /// };
    /// let input = std::fs::File::open("telemetry.arrows")?;
    /// let stop = AtomicBool::new(false);
    /// let (_, progress) = table.ingest_arrow(input, &mut std::io::sink(), &options, &stop, |_| {})?;
    /// println!("committed through record {}", progress.committed_through_record);
    /// # Ok(()) }
    /// ```
    pub fn ingest_arrow(
        &self,
        input: impl Read + Send + 'static,
        rejects: &mut dyn Write,
        options: &IngestOptions,
        stop: &AtomicBool,
        on_commit: impl FnMut(&IngestProgress),
    ) -> Result<(Table, IngestProgress)> {
        let decoder = arrow_ipc::ArrowDecoder::new(Target::new(self, options)?, options);
        let follow = options.follow;
        commit::run(
            self,
            decoder,
            Unit::Record,
            // Batches in flight: a few, they may be large.
            4,
            move |sender, done| arrow_ipc::read_stream(input, follow, done, sender),
            rejects,
            options,
            stop,
            on_commit,
        )
    }
}
