//! The committer every input format shares: a reader thread sends chunks of input over a
//! bounded channel (so a quiet input still commits on time and Ctrl-C is seen within 100 ms),
//! and this loop skips a replay's prefix, buffers, and commits every `batch_rows` rows, every
//! `batch_interval` while rows are buffered, at the end of the input and on `stop`.

use std::io::{self, BufRead, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, SyncSender, sync_channel};
use std::time::{Duration, Instant};

use arrow_array::RecordBatch;
use serde_json::Value;

use super::{IngestOptions, IngestProgress};
use crate::error::{Error, Result};
use crate::table::Table;

/// What an input counts its position in: lines of JSON, records (rows) of Arrow IPC.
#[derive(Debug, Clone, Copy)]
pub(super) enum Unit {
    Line,
    Record,
}

impl Unit {
    fn skip(self, options: &IngestOptions) -> u64 {
        match self {
            Unit::Line => options.skip_lines,
            Unit::Record => options.skip_records,
        }
    }

    fn set_read(self, progress: &mut IngestProgress, read: u64) {
        match self {
            Unit::Line => progress.lines = read,
            Unit::Record => progress.records = read,
        }
    }

    fn set_through(self, progress: &mut IngestProgress, through: u64) {
        match self {
            Unit::Line => progress.committed_through_line = through,
            Unit::Record => progress.committed_through_record = through,
        }
    }

    fn through(self, progress: &IngestProgress) -> u64 {
        match self {
            Unit::Line => progress.committed_through_line,
            Unit::Record => progress.committed_through_record,
        }
    }

    /// How to resume after a failed commit.
    fn replay_hint(self, n: u64) -> String {
        match self {
            Unit::Line => format!(
                "lines after {n} are not committed: replay them with skip_lines = {n} \
                 (geoberg ingest --skip-lines {n})"
            ),
            Unit::Record => format!(
                "records after {n} are not committed: replay them with skip_records = {n} \
                 (geoberg ingest --format arrow --skip-records {n})"
            ),
        }
    }
}

/// A piece of input as the reader thread sends it.
pub(super) trait Chunk: Send + 'static {
    /// Input positions it covers (a line; the rows of a record batch).
    fn span(&self) -> u64;
    /// Rows it may become, what `batch_rows` counts (a blank line: none). A chunk that spans
    /// more than one position has one row per position.
    fn rows(&self) -> u64;
    /// Splits off the first `n` positions, `0 < n < span()`, and returns them.
    fn split_front(&mut self, n: u64) -> Self;
}

/// A rejected record: its position (for ordering) and the JSON line written for it.
pub(super) struct Reject {
    pub position: u64,
    pub line: Value,
}

/// Buffered input decoded: the rows for `append`, the rejects and how many the filter dropped.
pub(super) struct Decoded {
    pub batch: Option<RecordBatch>,
    pub rejects: Vec<Reject>,
    pub filtered: u64,
}

/// Turns buffered chunks into rows of the table.
pub(super) trait Decoder {
    /// What the reader thread sends.
    type Chunk: Chunk;
    /// Sees each chunk as it arrives, skipped ones too: what can be refused early is refused
    /// here (an Arrow schema without a geometry), before anything is committed.
    fn arrived(&mut self, chunk: &Self::Chunk) -> Result<()>;
    /// The buffered chunks, each with the 1-based position of its first record.
    fn decode(&self, chunks: &[(u64, Self::Chunk)]) -> Result<Decoded>;
}

/// The reader thread's end of the channel: chunks, or an error message that ends the ingest.
pub(super) type Sender<C> = SyncSender<std::result::Result<C, String>>;

/// Runs an ingest: `read` runs on its own thread, sending chunks until its input ends (it gets
/// a flag set once the ingest has returned, for [`Follow`]); `capacity` bounds the chunks in
/// flight.
#[allow(clippy::too_many_arguments)]
pub(super) fn run<D: Decoder>(
    table: &Table,
    decoder: D,
    unit: Unit,
    capacity: usize,
    read: impl FnOnce(Sender<D::Chunk>, Arc<AtomicBool>) + Send + 'static,
    rejects: &mut dyn Write,
    options: &IngestOptions,
    stop: &AtomicBool,
    mut on_commit: impl FnMut(&IngestProgress),
) -> Result<(Table, IngestProgress)> {
    let (sender, chunks) = sync_channel(capacity.max(1));
    // Tells a following reader at the end of its input that nobody listens any more.
    let finished = ReaderDone(Arc::new(AtomicBool::new(false)));
    let done = finished.0.clone();
    std::thread::spawn(move || read(sender, done));

    let batch_rows = options.batch_rows.max(1) as u64;
    let skip = unit.skip(options);
    let mut c = Committer {
        table: table.clone(),
        decoder,
        unit,
        rejects,
        progress: IngestProgress::default(),
        buffered: Vec::new(),
        buffered_rows: 0,
    };
    let mut read_through = 0u64;
    // Positions read since the clock was last looked at.
    let mut unclocked = 0u64;
    let mut last_commit = Instant::now();
    loop {
        let deadline = last_commit + options.batch_interval;
        let wait = deadline.saturating_duration_since(Instant::now());
        let next = if stop.load(Ordering::Relaxed) {
            Err(RecvTimeoutError::Disconnected)
        } else {
            // Wake at least every 100 ms to see `stop`.
            chunks.recv_timeout(wait.min(Duration::from_millis(100)))
        };
        match next {
            Ok(chunk) => {
                let mut chunk = chunk.map_err(Error::InvalidData)?;
                c.decoder.arrived(&chunk)?;
                let span = chunk.span();
                if span == 0 {
                    continue;
                }
                let mut start = read_through + 1;
                read_through += span;
                unit.set_read(&mut c.progress, read_through);
                if read_through <= skip {
                    unit.set_through(&mut c.progress, read_through);
                    continue;
                }
                if start <= skip {
                    chunk.split_front(skip + 1 - start);
                    start = skip + 1;
                }
                // Commits fall every `batch_rows` rows, inside a chunk if need be.
                while chunk.rows() > batch_rows - c.buffered_rows {
                    let room = batch_rows - c.buffered_rows;
                    let front = chunk.split_front(room);
                    c.buffer(start, front);
                    start += room;
                    c.commit(start - 1)?;
                    on_commit(&c.progress);
                    last_commit = Instant::now();
                }
                c.buffer(start, chunk);
                // A steady stream never times out: the interval is checked here too, every
                // 1024 positions.
                unclocked += span;
                let mut due = false;
                if unclocked >= 1024 {
                    unclocked = 0;
                    due = c.buffered_rows > 0
                        && Instant::now() >= last_commit + options.batch_interval;
                }
                if c.buffered_rows >= batch_rows || due {
                    c.commit(read_through)?;
                    on_commit(&c.progress);
                    last_commit = Instant::now();
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                if Instant::now() >= deadline {
                    if c.buffered_rows > 0 {
                        c.commit(read_through)?;
                        on_commit(&c.progress);
                    }
                    last_commit = Instant::now();
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                c.commit(read_through)?;
                on_commit(&c.progress);
                c.rejects
                    .flush()
                    .map_err(|e| Error::InvalidData(format!("writing rejects: {e}")))?;
                return Ok((c.table, c.progress));
            }
        }
    }
}

/// The state between commits.
struct Committer<'a, D: Decoder> {
    table: Table,
    decoder: D,
    unit: Unit,
    rejects: &'a mut dyn Write,
    progress: IngestProgress,
    buffered: Vec<(u64, D::Chunk)>,
    buffered_rows: u64,
}

impl<D: Decoder> Committer<'_, D> {
    fn buffer(&mut self, start: u64, chunk: D::Chunk) {
        let rows = chunk.rows();
        if rows > 0 {
            self.buffered_rows += rows;
            self.buffered.push((start, chunk));
        }
    }

    /// Decodes and appends what is buffered; every position up to `through` is then done.
    fn commit(&mut self, through: u64) -> Result<()> {
        let decoded = self.decoder.decode(&self.buffered)?;
        let mut rejected = decoded.rejects;
        rejected.sort_by_key(|r| r.position);
        for r in &rejected {
            writeln!(self.rejects, "{}", r.line)
                .map_err(|e| Error::InvalidData(format!("writing rejects: {e}")))?;
        }
        self.progress.rows_rejected += rejected.len() as u64;
        self.progress.rows_filtered += decoded.filtered;
        if let Some(batch) = decoded.batch.filter(|b| b.num_rows() > 0) {
            let (next, _) = self
                .table
                .append(std::slice::from_ref(&batch))
                .map_err(|e| {
                    Error::InvalidData(format!(
                        "{e}; {}",
                        self.unit.replay_hint(self.unit.through(&self.progress))
                    ))
                })?;
            self.table = next;
            self.progress.rows_committed += batch.num_rows() as u64;
            self.progress.commits += 1;
            self.progress.snapshot_id = self.table.metadata().current_snapshot_id();
        }
        self.unit.set_through(&mut self.progress, through);
        self.buffered.clear();
        self.buffered_rows = 0;
        Ok(())
    }
}

/// Set when an ingest returns, however it returns.
struct ReaderDone(Arc<AtomicBool>);

impl Drop for ReaderDone {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// An input that, when following a growing file, waits at its end for more bytes (polling every
/// 100 ms) until `done`; otherwise it is `inner` as it is. A record cut by the writer
/// mid-write is read whole once the rest arrives.
pub(super) struct Follow<R> {
    inner: R,
    follow: bool,
    done: Arc<AtomicBool>,
}

impl<R> Follow<R> {
    pub(super) fn new(inner: R, follow: bool, done: Arc<AtomicBool>) -> Follow<R> {
        Follow {
            inner,
            follow,
            done,
        }
    }
}

impl<R: BufRead> BufRead for Follow<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.follow && self.inner.fill_buf()?.is_empty() && !self.done.load(Ordering::Relaxed)
        {
            std::thread::sleep(Duration::from_millis(100));
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.inner.consume(n)
    }
}

impl<R: BufRead> Read for Follow<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}
