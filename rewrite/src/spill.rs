//! Routed rows held within the memory budget. Each input batch is grouped by chunk slot with
//! one `take` (rows of a slot in key order) and buffered whole; a full buffer is spilled one
//! slot at a time, merging that slot's rows from every buffered batch into one sorted segment.
//!
//! An earlier router cut every input batch into one piece per chunk and buffered and spilled
//! the pieces one by one. Past about 10× the budget the plan has hundreds of chunks, so a 32 k-row
//! batch became pieces of ~30 rows, and per-piece costs (a `take`, an IPC message, its decode,
//! the allocations) dominated. A spilled segment is now the whole buffer's share of a chunk,
//! hundreds of times larger than a piece (BENCHMARKS.md, "rewrite").

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use arrow_array::{Array, ArrayRef, RecordBatch, UInt64Array};
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use arrow_select::interleave::interleave_record_batch;

use crate::RewriteError;

/// Most rows of one spilled message: a chunk's segment is written in messages of this size so
/// that encoding it never needs much more memory than the segment's own rows.
const SEGMENT_ROWS: usize = 64 * 1024;

/// One routed input batch: its routed rows grouped by chunk slot and, within a slot, in key
/// order (one `take` of the whole batch), with each row's key and its position in the input
/// batch. Row `i` has the sequence `seq + rows[i]`; sequences of different batches never
/// overlap, so they order ties between equal keys as the input does.
pub(crate) struct Keyed {
    /// Input rows the batch was routed from (routed or not): the router's progress.
    pub input_rows: u64,
    pub seq: u64,
    pub batch: RecordBatch,
    pub keys: Vec<u64>,
    pub rows: Vec<u32>,
    /// Slot `s` holds rows `offsets[s]..offsets[s + 1]`.
    pub offsets: Vec<u32>,
}

impl Keyed {
    /// The rows of slots below `slot`, copied so that the rest can be freed (`None` when there
    /// are none).
    fn prefix(self, slot: usize) -> Result<Option<Keyed>, RewriteError> {
        let n = self.offsets[slot] as usize;
        if n == 0 {
            return Ok(None);
        }
        if n == self.keys.len() {
            return Ok(Some(self));
        }
        let indices = arrow_array::UInt32Array::from_iter_values(0..n as u32);
        let batch = arrow_select::take::take_record_batch(&self.batch, &indices)
            .map_err(|e| RewriteError::arrow("keeping rows in memory", e))?;
        let mut offsets = self.offsets;
        for o in &mut offsets[slot..] {
            *o = n as u32;
        }
        let (mut keys, mut rows) = (self.keys, self.rows);
        keys.truncate(n);
        keys.shrink_to_fit();
        rows.truncate(n);
        rows.shrink_to_fit();
        Ok(Some(Keyed {
            input_rows: self.input_rows,
            seq: self.seq,
            batch,
            keys,
            rows,
            offsets,
        }))
    }

    fn bytes(&self) -> usize {
        self.batch.get_array_memory_size() + self.keys.len() * 12 + self.offsets.len() * 4
    }

    /// `(key, sequence, batch << 32 | row)` of the rows of `slot`, with `batch` as this
    /// batch's index.
    fn entries(&self, slot: usize, batch: usize) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        let (a, b) = (self.offsets[slot] as usize, self.offsets[slot + 1] as usize);
        (a..b).map(move |i| {
            (
                self.keys[i],
                self.seq + u64::from(self.rows[i]),
                at(batch, i),
            )
        })
    }

    fn slot_len(&self, slot: usize) -> usize {
        (self.offsets[slot + 1] - self.offsets[slot]) as usize
    }
}

/// The rows of one chunk, ready to gather: source batches (data columns only) and the rows in
/// (key, sequence) order as `(key, batch << 32 | row)`.
pub(crate) struct ChunkRows {
    pub batches: Vec<RecordBatch>,
    pub order: Vec<(u64, u64)>,
}

/// Where `at` points: batch index in the high 32 bits, row in the low.
#[inline]
fn at(batch: usize, row: usize) -> u64 {
    ((batch as u64) << 32) | row as u64
}

#[inline]
fn split(at: u64) -> (usize, usize) {
    ((at >> 32) as usize, (at & u64::from(u32::MAX)) as usize)
}

#[derive(Default)]
struct Buffer {
    rows: Vec<Keyed>,
    /// Bytes of `rows`, and of the job's rows while a spill runs.
    bytes: usize,
    /// The spill under way; nothing is buffered until it ends.
    job: Option<Arc<SpillJob>>,
    /// The spilled job's rows are being freed and its kept rows copied; nothing is buffered
    /// until that ends.
    compacting: bool,
}

/// The spill of a full buffer's highest slots, shared by every thread that needs room: each
/// takes the next slot until none is left.
struct SpillJob {
    rows: Vec<Keyed>,
    /// Slots `first..` are spilled; the rows of lower slots stay in memory.
    first: usize,
    next: AtomicUsize,
    /// Slots not written yet.
    pending: AtomicUsize,
    error: Mutex<Option<RewriteError>>,
}

/// The spill file of one slot: one IPC stream, encoded in memory a message at a time and
/// appended to the file with one write per message.
struct SlotFile {
    path: PathBuf,
    file: File,
    encoder: StreamWriter<Vec<u8>>,
}

/// Routed rows of one partition, at most `limit` bytes of them in memory (a batch of more than
/// half the limit is spilled on its own). A full buffer spills its highest slots and keeps the
/// rows of the lowest ones, as many as the rows still to come leave room for (`room_to_keep`):
/// chunks are written in slot order, so the kept ones are written from memory and freed before
/// the spilled ones are read back.
///
/// Spilling runs on the threads that push, not through rayon: a rayon wait inside a pass-1 job
/// could steal another pass-1 job and push from within a spill. Threads that find no room help
/// the spill under way, slot by slot.
pub(crate) struct Router {
    data_schema: SchemaRef,
    spill_schema: SchemaRef,
    buffer: Mutex<Buffer>,
    /// Signalled when a spill ends and its room is free.
    room: Condvar,
    limit: usize,
    expected_rows: u64,
    /// Input rows pushed so far, and the bytes of their routed rows.
    seen_rows: AtomicU64,
    seen_bytes: AtomicU64,
    slot_files: Vec<Mutex<Option<SlotFile>>>,
    /// Rows still in memory after routing (`seal`).
    sealed: OnceLock<Vec<Keyed>>,
    dir: PathBuf,
    spilled_bytes: AtomicU64,
    /// High-water mark of the buffered bytes (a spill's rows count until they are freed).
    peak: AtomicUsize,
}

/// Column names of a spilled segment's key and sequence, after the data columns.
const KEY_COLUMN: &str = "__geoberg_key";
const SEQ_COLUMN: &str = "__geoberg_seq";

impl Router {
    /// A router for `slots` chunks of rows with `data_schema`, holding at most `limit` bytes and
    /// spilling into `dir`; `expected_rows` (the inputs' row count) tells a spill how much is
    /// still to come.
    pub fn new(
        slots: usize,
        limit: usize,
        expected_rows: u64,
        dir: PathBuf,
        data_schema: SchemaRef,
    ) -> Router {
        let mut fields: Vec<Arc<Field>> = data_schema.fields().iter().cloned().collect();
        fields.push(Arc::new(Field::new(KEY_COLUMN, DataType::UInt64, false)));
        fields.push(Arc::new(Field::new(SEQ_COLUMN, DataType::UInt64, false)));
        Router {
            spill_schema: Arc::new(Schema::new(fields)),
            data_schema,
            buffer: Mutex::default(),
            room: Condvar::new(),
            limit,
            expected_rows,
            seen_rows: AtomicU64::new(0),
            seen_bytes: AtomicU64::new(0),
            slot_files: (0..slots).map(|_| Mutex::new(None)).collect(),
            sealed: OnceLock::new(),
            dir,
            spilled_bytes: AtomicU64::new(0),
            peak: AtomicUsize::new(0),
        }
    }

    /// The most bytes held in memory at any one time while routing (Arrow memory size of the
    /// buffered batches plus their keys); at most the limit unless one batch exceeded it.
    pub fn peak_buffered_bytes(&self) -> u64 {
        self.peak.load(Ordering::Relaxed) as u64
    }

    /// Bytes written to spill files so far (IPC-encoded).
    pub fn spilled_bytes(&self) -> u64 {
        self.spilled_bytes.load(Ordering::Relaxed)
    }

    /// Buffers a keyed batch, spilling (or helping the spill under way) until there is room.
    pub fn push(&self, keyed: Keyed) -> Result<(), RewriteError> {
        // Every batch is gathered with the others under one schema: the output's.
        let batch = RecordBatch::try_new(self.data_schema.clone(), keyed.batch.columns().to_vec())
            .map_err(|e| RewriteError::arrow("routing rows", e))?;
        let keyed = Keyed { batch, ..keyed };
        let bytes = keyed.bytes();
        self.seen_rows
            .fetch_add(keyed.input_rows, Ordering::Relaxed);
        self.seen_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        if keyed.keys.is_empty() {
            return Ok(());
        }
        if bytes > self.limit / 2 {
            let job = SpillJob::new(vec![keyed], 0, self.slot_files.len());
            self.work(&job);
            return job
                .error
                .into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .map_or(Ok(()), Err);
        }
        let mut buffer = self.lock_buffer();
        loop {
            if let Some(job) = buffer.job.clone() {
                drop(buffer);
                self.work(&job);
                let id = Arc::as_ptr(&job);
                drop(job);
                buffer = self.lock_buffer();
                while buffer.job.as_ref().is_some_and(|j| Arc::as_ptr(j) == id) {
                    buffer = self.room.wait(buffer).unwrap_or_else(|e| e.into_inner());
                }
                continue;
            }
            if buffer.compacting {
                buffer = self.room.wait(buffer).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            if buffer.bytes + bytes <= self.limit {
                buffer.bytes += bytes;
                buffer.rows.push(keyed);
                self.peak.fetch_max(buffer.bytes, Ordering::Relaxed);
                return Ok(());
            }
            let rows = std::mem::take(&mut buffer.rows);
            let keep = self.room_to_keep(buffer.bytes);
            let first = first_spilled_slot(&rows, buffer.bytes - keep, self.slot_files.len());
            let job = Arc::new(SpillJob::new(rows, first, self.slot_files.len()));
            buffer.job = Some(job.clone());
            drop(buffer);
            self.work(&job);
            let job = self.wait_alone(job);
            let error = job.error.lock().unwrap_or_else(|e| e.into_inner()).take();
            let kept: Result<Vec<Keyed>, RewriteError> = job
                .rows
                .into_iter()
                .filter_map(|r| r.prefix(first).transpose())
                .collect();
            buffer = self.lock_buffer();
            buffer.compacting = false;
            match kept {
                Ok(kept) => {
                    buffer.bytes = kept.iter().map(Keyed::bytes).sum();
                    buffer.rows = kept;
                }
                Err(e) => {
                    buffer.bytes = 0;
                    self.room.notify_all();
                    return Err(e);
                }
            }
            self.room.notify_all();
            if let Some(e) = error {
                return Err(e);
            }
        }
    }

    /// Bytes of a full buffer (`buffered`) to keep in memory, its lowest slots: what the rows
    /// still to come leave free, so that the last spill keeps what fits and earlier ones (the
    /// input many times the limit) spill everything, making each slot's segments as large as
    /// the buffer allows. At least a quarter of the buffer is spilled, so that an estimate that
    /// proves short costs one more spill, not a train of small ones.
    fn room_to_keep(&self, buffered: usize) -> usize {
        let rows = self.seen_rows.load(Ordering::Relaxed).max(1);
        let per_row = self.seen_bytes.load(Ordering::Relaxed) as f64 / rows as f64;
        let to_come = self.expected_rows.saturating_sub(rows) as f64 * per_row;
        let free = (self.limit as f64 - to_come).max(0.0) as usize;
        free.min(buffered / 4 * 3)
    }

    /// Spills slots of `job` until none is left to take.
    fn work(&self, job: &SpillJob) {
        let slots = self.slot_files.len();
        loop {
            let slot = job.first + job.next.fetch_add(1, Ordering::AcqRel);
            if slot >= slots {
                return;
            }
            if let Err(e) = self.spill_slot(&job.rows, slot) {
                job.error
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(e);
            }
            if job.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                let _buffer = self.lock_buffer();
                self.room.notify_all();
            }
        }
    }

    /// Waits until every slot of `job` is written and no helper holds it, then owns it (the
    /// buffer is left `compacting`).
    fn wait_alone(&self, mut job: Arc<SpillJob>) -> SpillJob {
        let mut buffer = self.lock_buffer();
        while job.pending.load(Ordering::Acquire) > 0 {
            buffer = self.room.wait(buffer).unwrap_or_else(|e| e.into_inner());
        }
        buffer.job = None;
        buffer.compacting = true;
        self.room.notify_all();
        drop(buffer);
        // Helpers drop their handle right after their last slot.
        loop {
            match Arc::try_unwrap(job) {
                Ok(job) => return job,
                Err(shared) => {
                    job = shared;
                    std::thread::yield_now();
                }
            }
        }
    }

    fn lock_buffer(&self) -> MutexGuard<'_, Buffer> {
        self.buffer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends the rows of `slot` in `rows` to its spill file, merged in (key, sequence) order.
    fn spill_slot(&self, rows: &[Keyed], slot: usize) -> Result<(), RewriteError> {
        let mut entries = Vec::new();
        for (b, r) in rows.iter().enumerate() {
            entries.extend(r.entries(slot, b));
        }
        if entries.is_empty() {
            return Ok(());
        }
        // Each batch's rows are a sorted run: the stable sort merges them, and the gather reads
        // every batch front to back.
        entries.sort();
        let batches: Vec<&RecordBatch> = rows.iter().map(|r| &r.batch).collect();
        for part in entries.chunks(SEGMENT_ROWS) {
            let indices: Vec<(usize, usize)> = part.iter().map(|&(_, _, a)| split(a)).collect();
            let data = interleave_record_batch(&batches, &indices)
                .map_err(|e| RewriteError::arrow("gathering rows to spill", e))?;
            let mut columns: Vec<ArrayRef> = data.columns().to_vec();
            columns.push(Arc::new(UInt64Array::from_iter_values(
                part.iter().map(|&(k, _, _)| k),
            )));
            columns.push(Arc::new(UInt64Array::from_iter_values(
                part.iter().map(|&(_, s, _)| s),
            )));
            let segment = RecordBatch::try_new(self.spill_schema.clone(), columns)
                .map_err(|e| RewriteError::arrow("gathering rows to spill", e))?;
            self.append(slot, &segment)?;
        }
        Ok(())
    }

    /// Appends one segment to the spill file of `slot`.
    fn append(&self, slot: usize, segment: &RecordBatch) -> Result<(), RewriteError> {
        let mut s = self.slot_files[slot]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if s.is_none() {
            let path = self.dir.join(format!("chunk-{slot:06}.arrows"));
            let file = File::create(&path)
                .map_err(|e| RewriteError::io("cannot create spill file", path.display(), e))?;
            let encoder = StreamWriter::try_new(Vec::new(), &self.spill_schema)
                .map_err(|e| RewriteError::arrow("starting a spill file", e))?;
            *s = Some(SlotFile {
                path,
                file,
                encoder,
            });
        }
        let s = s.as_mut().expect("spill file was just created");
        s.encoder
            .write(segment)
            .map_err(|e| RewriteError::arrow("encoding a spill segment", e))?;
        self.flush_encoded(s)
    }

    /// Moves what the encoder holds to the file.
    fn flush_encoded(&self, s: &mut SlotFile) -> Result<(), RewriteError> {
        let bytes = std::mem::take(s.encoder.get_mut());
        s.file
            .write_all(&bytes)
            .map_err(|e| RewriteError::io("cannot write spill file", s.path.display(), e))?;
        self.spilled_bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Ends routing: the rows still buffered stay in memory for `take`. Called once.
    pub fn seal(&self) {
        let buffer = std::mem::take(&mut *self.lock_buffer());
        let _ = self.sealed.set(buffer.rows);
    }

    /// The rows of `slot`: its spilled segments (read back and deleted) merged with its rows
    /// still in memory, in (key, sequence) order. Call after `seal`, once per slot.
    pub fn take(&self, slot: usize) -> Result<ChunkRows, RewriteError> {
        let sealed = self.sealed.get().map_or(&[][..], Vec::as_slice);
        let mut batches: Vec<RecordBatch> = Vec::new();
        let mut entries: Vec<(u64, u64, u64)> = Vec::new();
        for r in sealed.iter().filter(|r| r.slot_len(slot) > 0) {
            entries.extend(r.entries(slot, batches.len()));
            batches.push(r.batch.clone());
        }
        let key_column = self.data_schema.fields().len();
        for segment in self.read_segments(slot)? {
            let b = batches.len();
            let keys = u64_column(&segment, key_column);
            let seqs = u64_column(&segment, key_column + 1);
            entries.extend(
                keys.values()
                    .iter()
                    .zip(seqs.values().iter())
                    .enumerate()
                    .map(|(row, (&k, &s))| (k, s, at(b, row))),
            );
            let mut columns = segment.columns().to_vec();
            columns.truncate(key_column);
            batches.push(
                RecordBatch::try_new(self.data_schema.clone(), columns)
                    .map_err(|e| RewriteError::arrow("restoring the input schema", e))?,
            );
        }
        // Every source is a sorted run: the stable sort merges them.
        entries.sort();
        Ok(ChunkRows {
            batches,
            order: entries.into_iter().map(|(k, _, a)| (k, a)).collect(),
        })
    }

    /// Reads back and deletes the spill file of `slot`.
    fn read_segments(&self, slot: usize) -> Result<Vec<RecordBatch>, RewriteError> {
        let Some(mut s) = self.slot_files[slot]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        else {
            return Ok(Vec::new());
        };
        s.encoder
            .finish()
            .map_err(|e| RewriteError::arrow("finishing a spill file", e))?;
        self.flush_encoded(&mut s)?;
        let SlotFile { path, file, .. } = s;
        drop(file);
        let file = File::open(&path)
            .map_err(|e| RewriteError::io("cannot open spill file", path.display(), e))?;
        let reader = StreamReader::try_new(BufReader::with_capacity(1 << 20, file), None)
            .map_err(|e| RewriteError::arrow("reading a spill file", e))?;
        let out = reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| RewriteError::arrow("reading a spill file", e))?;
        let _ = std::fs::remove_file(&path);
        Ok(out)
    }
}

impl SpillJob {
    fn new(rows: Vec<Keyed>, first: usize, slots: usize) -> SpillJob {
        SpillJob {
            rows,
            first,
            next: AtomicUsize::new(0),
            pending: AtomicUsize::new(slots.saturating_sub(first)),
            error: Mutex::new(None),
        }
    }
}

/// The lowest slot such that slots from it up hold at least `want` bytes of `rows` (each
/// batch's bytes shared evenly by its rows).
fn first_spilled_slot(rows: &[Keyed], want: usize, slots: usize) -> usize {
    let per_row: Vec<f64> = rows
        .iter()
        .map(|r| r.bytes() as f64 / r.keys.len().max(1) as f64)
        .collect();
    let mut acc = 0.0;
    for slot in (0..slots).rev() {
        acc += rows
            .iter()
            .zip(&per_row)
            .map(|(r, p)| r.slot_len(slot) as f64 * p)
            .sum::<f64>();
        if acc >= want as f64 {
            return slot;
        }
    }
    0
}

fn u64_column(batch: &RecordBatch, i: usize) -> &UInt64Array {
    batch
        .column(i)
        .as_any()
        .downcast_ref::<UInt64Array>()
        .expect("spilled segments end with key and sequence columns")
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Int64Array;

    /// A batch of `n` rows with `id = seq + i`, keys cycling through few values (many ties)
    /// and slots cycling through `slots`, grouped as `route_batch` groups them.
    fn keyed(seq: u64, n: usize, slots: usize, schema: &SchemaRef) -> Keyed {
        let key = |i: usize| key_of(i, slots);
        let slot = |i: usize| (i % slots) as u32;
        let mut rows: Vec<u32> = (0..n as u32).collect();
        rows.sort_by_key(|&i| (slot(i as usize), key(i as usize)));
        let ids = Int64Array::from_iter_values(rows.iter().map(|&i| (seq + u64::from(i)) as i64));
        let mut offsets = vec![0u32; slots + 1];
        for &r in &rows {
            offsets[slot(r as usize) as usize + 1] += 1;
        }
        for s in 0..slots {
            offsets[s + 1] += offsets[s];
        }
        Keyed {
            input_rows: n as u64,
            seq,
            batch: RecordBatch::try_new(schema.clone(), vec![Arc::new(ids)]).unwrap(),
            keys: rows.iter().map(|&i| key(i as usize)).collect(),
            rows,
            offsets,
        }
    }

    /// The key of row `i` of a test batch.
    fn key_of(i: usize, slots: usize) -> u64 {
        ((i * 7919) % 5) as u64 * 10 + ((i % slots) as u64) * 1000
    }

    /// Spilling and keeping never change what a slot returns: every row once, in (key,
    /// sequence) order, whatever the limit and however many threads push.
    #[test]
    fn every_row_comes_back_once_in_key_then_input_order() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        let (slots, batches, n) = (7, 40, 500);
        for limit in [1 << 30, 64 << 10, 16 << 10, 4 << 10] {
            for threads in [1, 3] {
                let dir = tempfile::tempdir().unwrap();
                let router = Router::new(
                    slots,
                    limit,
                    (batches * n) as u64,
                    dir.path().to_path_buf(),
                    schema.clone(),
                );
                std::thread::scope(|scope| {
                    for t in 0..threads {
                        let router = &router;
                        let schema = &schema;
                        scope.spawn(move || {
                            for b in (t..batches).step_by(threads) {
                                router
                                    .push(keyed((b as u64) << 20, n, slots, schema))
                                    .unwrap();
                            }
                        });
                    }
                });
                router.seal();
                let mut seen = std::collections::HashSet::new();
                for slot in 0..slots {
                    let rows = router.take(slot).unwrap();
                    let data: Vec<&RecordBatch> = rows.batches.iter().collect();
                    let at: Vec<(usize, usize)> =
                        rows.order.iter().map(|&(_, a)| split(a)).collect();
                    let out = interleave_record_batch(&data, &at).unwrap();
                    let ids = out.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                    let got: Vec<(u64, i64)> = rows
                        .order
                        .iter()
                        .map(|&(k, _)| k)
                        .zip(ids.values().iter().copied())
                        .collect();
                    let mut want = got.clone();
                    want.sort();
                    assert_eq!(got, want, "slot {slot}, limit {limit}, {threads} threads");
                    for &(k, id) in &got {
                        // The row's own key (its position in its batch is the low 20 bits).
                        assert_eq!(k, key_of(id as usize & ((1 << 20) - 1), slots));
                        assert_eq!(k / 1000, slot as u64);
                        assert!(seen.insert(id), "row {id} came back twice");
                    }
                }
                assert_eq!(seen.len(), batches * n, "limit {limit}");
                assert_eq!(router.spilled_bytes() > 0, limit < 1 << 30, "limit {limit}");
                assert!(
                    router.peak_buffered_bytes() <= limit as u64,
                    "limit {limit}"
                );
            }
        }
    }
}
