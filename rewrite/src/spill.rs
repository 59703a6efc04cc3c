//! Per-chunk row buffers that spill to Arrow IPC runs when the memory budget is reached.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use arrow_array::RecordBatch;
use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;

use crate::RewriteError;

/// Write buffer of one spill run. Every chunk that spills keeps one open until it is written, so
/// this is kept small: with hundreds of chunks, 1 MiB buffers would outgrow the budget.
const SPILL_BUFFER_BYTES: usize = 64 * 1024;

/// Rows of one input batch routed to one chunk, in input order. `seq` is the tie-break sequence
/// of the batch's first row: pieces of a chunk come from distinct batches, so ordering them by
/// `seq` and their rows by position orders every row by its sequence.
pub(crate) struct Piece {
    pub seq: u64,
    pub batch: RecordBatch,
}

struct SpillRun {
    path: PathBuf,
    writer: StreamWriter<BufWriter<File>>,
    /// `seq` of each spilled piece, in the order the run holds them.
    seqs: Vec<u64>,
}

#[derive(Default)]
struct Slot {
    pieces: Vec<Piece>,
    run: Option<SpillRun>,
}

/// Rows routed to sort chunks. Buffered bytes never exceed `limit`: a piece is buffered only
/// once there is room for it (buffers are spilled to their chunks' runs to make room, and a piece
/// that still does not fit goes straight to its run), so memory is bounded by the budget and not
/// by the table, whatever the batch sizes.
///
/// Chunks are written in slot order, so the buffers spilled are those of the highest slots: the
/// first chunks stay in memory and are written (and freed) before the spilled ones are read back.
pub(crate) struct Router {
    slots: Vec<Mutex<Slot>>,
    slot_bytes: Vec<AtomicUsize>,
    buffered: AtomicUsize,
    limit: usize,
    /// Buffers smaller than this are spilled only when no larger one is left, so that a spill is
    /// never a trickle of tiny IPC messages.
    min_spill: usize,
    dir: PathBuf,
    spilled_bytes: AtomicU64,
    /// High-water mark of `buffered`.
    peak: AtomicUsize,
}

impl Router {
    pub fn new(slots: usize, limit: usize, dir: PathBuf) -> Router {
        Router {
            slots: (0..slots).map(|_| Mutex::default()).collect(),
            slot_bytes: (0..slots).map(|_| AtomicUsize::new(0)).collect(),
            buffered: AtomicUsize::new(0),
            limit,
            min_spill: (limit / (4 * slots.max(1))).max(1 << 20),
            dir,
            spilled_bytes: AtomicU64::new(0),
            peak: AtomicUsize::new(0),
        }
    }

    /// The most bytes buffered at any one time so far (Arrow memory size of the buffered
    /// pieces); at most the limit.
    pub fn peak_buffered_bytes(&self) -> u64 {
        self.peak.load(Ordering::Relaxed) as u64
    }

    /// Bytes written to spill runs so far.
    pub fn spilled_bytes(&self) -> u64 {
        self.spilled_bytes.load(Ordering::Relaxed)
    }

    /// Adds a piece to `slot`. Room for it is reserved first, spilling buffers until it fits;
    /// when nothing is left to spill (the piece alone exceeds the limit, or the rest is other
    /// threads' reservations), the piece is written to its run instead of buffered.
    pub fn push(&self, slot: usize, piece: Piece) -> Result<(), RewriteError> {
        let bytes = piece.batch.get_array_memory_size();
        loop {
            let now = self.buffered.load(Ordering::Relaxed);
            if now + bytes <= self.limit {
                if self
                    .buffered
                    .compare_exchange_weak(now, now + bytes, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    self.peak.fetch_max(now + bytes, Ordering::Relaxed);
                    break;
                }
                continue;
            }
            match self.victim() {
                Some(victim) => self.spill(victim)?,
                None => {
                    let mut s = self.slots[slot].lock().unwrap_or_else(|e| e.into_inner());
                    return self.write_run(slot, &mut s, std::slice::from_ref(&piece));
                }
            }
        }
        let mut s = self.slots[slot].lock().unwrap_or_else(|e| e.into_inner());
        s.pieces.push(piece);
        self.slot_bytes[slot].fetch_add(bytes, Ordering::Relaxed);
        Ok(())
    }

    /// The highest slot holding at least `min_spill` bytes, else the largest non-empty one.
    fn victim(&self) -> Option<usize> {
        let bytes = |i: usize| self.slot_bytes[i].load(Ordering::Relaxed);
        (0..self.slots.len())
            .rev()
            .find(|&i| bytes(i) >= self.min_spill)
            .or_else(|| {
                (0..self.slots.len())
                    .max_by_key(|&i| bytes(i))
                    .filter(|&i| bytes(i) > 0)
            })
    }

    fn spill(&self, slot: usize) -> Result<(), RewriteError> {
        let mut s = self.slots[slot].lock().unwrap_or_else(|e| e.into_inner());
        if s.pieces.is_empty() {
            return Ok(());
        }
        let pieces = std::mem::take(&mut s.pieces);
        self.write_run(slot, &mut s, &pieces)?;
        let freed: usize = pieces.iter().map(|p| p.batch.get_array_memory_size()).sum();
        drop(pieces);
        self.slot_bytes[slot].fetch_sub(freed, Ordering::Relaxed);
        self.buffered.fetch_sub(freed, Ordering::Relaxed);
        Ok(())
    }

    /// Appends `pieces` to the spill run of `slot` (whose lock the caller holds as `s`).
    fn write_run(&self, slot: usize, s: &mut Slot, pieces: &[Piece]) -> Result<(), RewriteError> {
        let Some(first) = pieces.first() else {
            return Ok(());
        };
        if s.run.is_none() {
            let path = self.dir.join(format!("chunk-{slot:06}.arrows"));
            let file = File::create(&path)
                .map_err(|e| RewriteError::io("cannot create spill file", path.display(), e))?;
            let writer = StreamWriter::try_new(
                BufWriter::with_capacity(SPILL_BUFFER_BYTES, file),
                &first.batch.schema(),
            )
            .map_err(|e| RewriteError::arrow("starting a spill run", e))?;
            s.run = Some(SpillRun {
                path,
                writer,
                seqs: Vec::new(),
            });
        }
        let run = s.run.as_mut().expect("spill run was just created");
        let mut written = 0;
        for p in pieces {
            run.writer
                .write(&p.batch)
                .map_err(|e| RewriteError::arrow("writing a spill run", e))?;
            run.seqs.push(p.seq);
            written += p.batch.get_array_memory_size();
        }
        self.spilled_bytes
            .fetch_add(written as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Removes and returns every piece of `slot`: spilled ones first, then buffered ones.
    pub fn take(&self, slot: usize) -> Result<Vec<Piece>, RewriteError> {
        let mut s = self.slots[slot].lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        if let Some(SpillRun {
            path,
            mut writer,
            seqs,
        }) = s.run.take()
        {
            writer
                .finish()
                .map_err(|e| RewriteError::arrow("finishing a spill run", e))?;
            drop(writer);
            let file = File::open(&path)
                .map_err(|e| RewriteError::io("cannot open spill file", path.display(), e))?;
            let mut reader = StreamReader::try_new(BufReader::with_capacity(1 << 20, file), None)
                .map_err(|e| RewriteError::arrow("reading a spill run", e))?;
            out.reserve(seqs.len() + s.pieces.len());
            for seq in seqs {
                let batch = reader
                    .next()
                    .ok_or_else(|| {
                        RewriteError::io(
                            "spill run ended early",
                            path.display(),
                            std::io::ErrorKind::UnexpectedEof.into(),
                        )
                    })?
                    .map_err(|e| RewriteError::arrow("reading a spill run", e))?;
                out.push(Piece { seq, batch });
            }
            let _ = std::fs::remove_file(&path);
        }
        let pieces = std::mem::take(&mut s.pieces);
        let bytes = self.slot_bytes[slot].swap(0, Ordering::Relaxed);
        self.buffered.fetch_sub(bytes, Ordering::Relaxed);
        out.extend(pieces);
        Ok(out)
    }
}
