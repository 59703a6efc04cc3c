//! Running a plan: stream inputs, key rows, route them to sort chunks (spilling within the
//! budget), sort each chunk and write rolled Parquet files.

use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use arrow_array::{BooleanArray, RecordBatch, UInt32Array};
use arrow_schema::SchemaRef;
use arrow_select::filter::filter_record_batch;
use arrow_select::interleave::interleave_record_batch;
use arrow_select::take::take_record_batch;
use parquet::schema::types::ColumnPath;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::dictionary::plain_columns;
use crate::keys::key_rows;
use crate::lineage::{Layout, ROW_ID_COLUMN, output_schemas};
use crate::row_order::{BoundOrder, ROW_BITS, RowOrder};
use crate::source::{Source, same_columns};
use crate::spill::{ChunkRows, Keyed, Router};
use crate::storage::RewriteStorage;
use crate::writer::{RollingWriter, WriterConfig};
use crate::{InputFile, OutputFile, RewriteError, RewriteOptions, RewritePlan, RowClass};

/// Iceberg's `rewrite_data_files` result columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RewriteResult {
    /// Input files replaced.
    pub rewritten_data_files_count: u64,
    /// Output files added.
    pub added_data_files_count: u64,
    /// Bytes of the replaced files.
    pub rewritten_bytes_count: u64,
    /// Files that could not be rewritten (0 on success: a failure fails the whole rewrite).
    pub failed_data_files_count: u64,
    /// Delete files removed (this crate never removes delete files; `table` may).
    pub removed_delete_files_count: u64,
}

/// What a rewrite produced: the files to add and the files they replace.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RewriteOutcome {
    /// New files, ordered by partition, class and key.
    pub added: Vec<OutputFile>,
    /// Input files that the added files replace.
    pub rewritten: Vec<InputFile>,
    /// The procedure's counts.
    pub result: RewriteResult,
    /// Bytes written to spill files, IPC-encoded (0 when everything fit in the budget).
    pub spilled_bytes: u64,
    /// The most bytes of routed rows held in memory at once while the inputs were read (the
    /// Arrow memory size of the buffered batches and their keys, the largest over partitions).
    /// The router spills before it would pass the budget's routing share (`max_memory_bytes`
    /// less what the chunks being written may read back), so this never exceeds
    /// `max_memory_bytes`. Not counted: the chunk being sorted and written (sized by the plan
    /// from samples) and reader/writer buffers.
    #[serde(default)]
    pub peak_buffered_bytes: u64,
}

impl RewriteOutcome {
    /// The outcome of running `task_ids` of `plan` (here, or in parts elsewhere): the `added`
    /// files, and as rewritten every input of the partitions those tasks belong to.
    pub fn of_tasks(
        plan: &RewritePlan,
        task_ids: &[usize],
        added: Vec<OutputFile>,
        spilled_bytes: u64,
        peak_buffered_bytes: u64,
    ) -> RewriteOutcome {
        let partitions: std::collections::BTreeSet<usize> =
            task_ids.iter().map(|&t| plan.tasks[t].partition).collect();
        let rewritten: Vec<InputFile> = partitions
            .iter()
            .flat_map(|&p| plan.partitions[p].inputs.iter())
            .map(|&i| plan.inputs[i].clone())
            .collect();
        let result = RewriteResult {
            rewritten_data_files_count: rewritten.len() as u64,
            added_data_files_count: added.len() as u64,
            rewritten_bytes_count: rewritten.iter().map(|f| f.file_size_bytes).sum(),
            failed_data_files_count: 0,
            removed_delete_files_count: 0,
        };
        RewriteOutcome {
            added,
            rewritten,
            result,
            spilled_bytes,
            peak_buffered_bytes,
        }
    }
}

/// Rayon pool with the configured number of threads.
pub(crate) fn thread_pool(options: &RewriteOptions) -> Result<rayon::ThreadPool, RewriteError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(options.effective_threads())
        .build()
        .map_err(|e| RewriteError::InvalidOption {
            key: "threads".into(),
            value: options.effective_threads().to_string(),
            reason: format!("cannot start the worker pool: {e}"),
        })
}

/// Largest in-memory size of one sort chunk: a quarter of the budget is for the `threads`
/// chunks being written (a chunk is gathered in sorted order one row group at a time, so it
/// needs little more than itself).
pub(crate) fn chunk_memory_limit(options: &RewriteOptions) -> u64 {
    options.max_memory_bytes / (4 * options.effective_threads() as u64)
}

/// Bytes of routed rows held in memory before the last chunks spill: the budget less what the
/// chunks being written may read back from spill runs.
fn routing_memory_limit(options: &RewriteOptions) -> u64 {
    options.max_memory_bytes - options.effective_threads() as u64 * chunk_memory_limit(options)
}

/// Executes every task of `plan`. On failure every file written so far is deleted.
pub fn execute(
    plan: &RewritePlan,
    storage: &dyn RewriteStorage,
) -> Result<RewriteOutcome, RewriteError> {
    execute_tasks(plan, &(0..plan.tasks.len()).collect::<Vec<_>>(), storage)
}

/// Executes the given tasks of `plan` (e.g. on another worker). Rows that belong to other tasks
/// are read and dropped. On failure every file written by this call is deleted.
pub fn execute_tasks(
    plan: &RewritePlan,
    task_ids: &[usize],
    storage: &dyn RewriteStorage,
) -> Result<RewriteOutcome, RewriteError> {
    plan.validate()?;
    // Sound row-group boxes for GEOGRAPHY columns in the output files (a no-op after the first
    // call; when another factory was installed first, files still get their bounds from this
    // writer, only row-group statistics of geography columns are what that factory writes).
    geoberg_geostats::install_parquet_geo_stats();
    if let Some(&t) = task_ids.iter().find(|&&t| t >= plan.tasks.len()) {
        return Err(RewriteError::InvalidPlan(format!(
            "task {t} is not in the plan ({} tasks)",
            plan.tasks.len()
        )));
    }
    let written = Mutex::new(Vec::<String>::new());
    let pool = thread_pool(&plan.options)?;
    let run = || -> Result<(Vec<OutputFile>, u64, u64), RewriteError> {
        let mut added = Vec::new();
        let (mut spilled, mut peak) = (0, 0);
        for p in 0..plan.partitions.len() {
            let tasks: Vec<usize> = task_ids
                .iter()
                .copied()
                .filter(|&t| plan.tasks[t].partition == p)
                .collect();
            if tasks.is_empty() {
                continue;
            }
            let (files, s, k) =
                pool.install(|| run_partition(plan, p, &tasks, storage, &written))?;
            added.extend(files);
            spilled += s;
            peak = peak.max(k);
        }
        Ok((added, spilled, peak))
    };
    match run() {
        Ok((added, spilled_bytes, peak_buffered_bytes)) => Ok(RewriteOutcome::of_tasks(
            plan,
            task_ids,
            added,
            spilled_bytes,
            peak_buffered_bytes,
        )),
        Err(e) => {
            remove_all(storage, &written.lock().unwrap_or_else(|e| e.into_inner()));
            Err(e)
        }
    }
}

/// Removes the output files of a failed rewrite; errors are ignored because the original error
/// matters more (a file left behind is unreferenced: the table's orphan listing finds it).
fn remove_all(storage: &dyn RewriteStorage, locations: &[String]) {
    for l in locations {
        let _ = storage.remove(l);
    }
}

/// Where each row of a partition goes: (class, chunk start key) -> slot.
struct Routing {
    /// Per class: ascending chunk start keys and their slot (None = task not run here).
    starts: [Vec<(u64, Option<usize>)>; 3],
    /// Per slot: (task, chunk index within task).
    slots: Vec<usize>,
}

impl Routing {
    fn new(plan: &RewritePlan, partition: usize, run: &[usize]) -> Routing {
        let mut starts: [Vec<(u64, Option<usize>)>; 3] = Default::default();
        let mut slots = Vec::new();
        for t in plan.tasks.iter().filter(|t| t.partition == partition) {
            let active = run.contains(&t.id);
            for &k in &t.chunk_starts {
                let slot = active.then(|| {
                    slots.push(t.id);
                    slots.len() - 1
                });
                starts[class_index(t.class)].push((k, slot));
            }
        }
        for s in &mut starts {
            s.sort_by_key(|&(k, _)| k);
        }
        Routing { starts, slots }
    }

    #[inline]
    fn slot(&self, class: RowClass, key: u64) -> Option<usize> {
        let s = &self.starts[class_index(class)];
        let i = s.partition_point(|&(k, _)| k <= key);
        if i == 0 { None } else { s[i - 1].1 }
    }
}

fn class_index(c: RowClass) -> usize {
    match c {
        RowClass::Regular => 0,
        RowClass::Oversized => 1,
        RowClass::Empty => 2,
    }
}

fn run_partition(
    plan: &RewritePlan,
    partition: usize,
    tasks: &[usize],
    storage: &dyn RewriteStorage,
    written: &Mutex<Vec<String>>,
) -> Result<(Vec<OutputFile>, u64, u64), RewriteError> {
    let part = &plan.partitions[partition];
    let options = &plan.options;
    let curve = crate::keys::hilbert_curve(&plan.curve)?;
    let column = plan.geometry_column.as_str();
    let routing = Routing::new(plan, partition, tasks);

    // Open every input once: footers, schema check, units of work (file, row group).
    let sources: Vec<(usize, Source)> = part
        .inputs
        .par_iter()
        .map(|&i| Source::open(storage, &plan.inputs[i].location, column).map(|s| (i, s)))
        .collect::<Result<_, _>>()?;
    let Some((first_input, first)) = sources.first() else {
        return Ok((Vec::new(), 0, 0));
    };
    // v3 row lineage: inputs are compared and written on their data columns, and every output
    // file gets `_row_id` and `_last_updated_sequence_number` (inputs differ in whether they
    // already carry them: a file written by an earlier rewrite does, an appended one does not).
    let lineage = part
        .inputs
        .iter()
        .any(|&i| plan.inputs[i].lineage.is_some());
    let target = storage.target_schema();
    let layouts: Vec<Layout> = sources
        .iter()
        .map(|(_, s)| Layout::of(s.schema(), lineage))
        .collect();
    let data_schemas: Vec<SchemaRef> = layouts
        .iter()
        .zip(&sources)
        .map(|(l, (_, s))| l.data_schema(s.schema()))
        .collect();
    if target.is_none()
        && let Some(k) =
            (1..sources.len()).find(|&k| !same_columns(&data_schemas[k], &data_schemas[0]))
    {
        return Err(RewriteError::SchemaMismatch {
            partition: part.partition.0.clone(),
            first: plan.inputs[*first_input].location.clone(),
            other: plan.inputs[sources[k].0].location.clone(),
        });
    }
    let mut plain = plain_columns(first.metadata.metadata().row_groups().first());
    let (arrow_schema, parquet_schema, geometry_index) = if let Some(target) = target {
        // Every input batch is conformed to the target, lineage columns after its data columns.
        let data = target.arrow_schema();
        let geometry = data
            .index_of(column)
            .map_err(|_| RewriteError::MissingGeometryColumn {
                path: plan.inputs[*first_input].location.clone(),
                column: column.to_string(),
                found: "a target schema without it".into(),
            })?;
        let parquet = target.parquet_schema();
        if lineage {
            plain.push(ColumnPath::new(vec![ROW_ID_COLUMN.to_string()]));
            let (arrow, parquet) = output_schemas(&data, &parquet)?;
            (arrow, parquet, geometry)
        } else {
            (data, parquet, geometry)
        }
    } else if lineage {
        let input_parquet = first.metadata.metadata().file_metadata().schema_descr();
        let (arrow, parquet) = output_schemas(&data_schemas[0], input_parquet)?;
        let g = layouts[0]
            .data
            .iter()
            .position(|&c| c == first.geometry_index)
            .ok_or_else(|| RewriteError::MissingGeometryColumn {
                path: plan.inputs[*first_input].location.clone(),
                column: column.to_string(),
                found: "only row-lineage columns of that name".into(),
            })?;
        // Row ids are (nearly) unique: a dictionary would only be built to be dropped.
        plain.push(ColumnPath::new(vec![ROW_ID_COLUMN.to_string()]));
        (arrow, parquet, g)
    } else {
        (
            first.schema().clone(),
            first
                .metadata
                .metadata()
                .file_metadata()
                .schema_descr()
                .clone(),
            first.geometry_index,
        )
    };
    // Other geography columns, by name in the output schema (a name the inputs lack has no
    // values to bound).
    let geography: Vec<(usize, String)> = plan
        .geography_columns
        .iter()
        .filter(|c| **c != plan.geometry_column)
        .filter_map(|c| arrow_schema.index_of(c).ok().map(|i| (i, c.clone())))
        .collect();
    let config = WriterConfig {
        arrow_schema: arrow_schema.clone(),
        parquet_schema,
        geometry_index,
        geometry_on_sphere: plan.keys_geography(),
        geography,
        codec: options.compression_codec,
        row_group_rows: options.row_group_rows,
        roll_bytes: (part.target_file_size_bytes as f64 * options.write_max_file_size() as f64
            / options.target_file_size_bytes as f64) as u64,
        plain_columns: plain,
    };
    let spill_parent = options.spill_dir.clone().unwrap_or_else(std::env::temp_dir);
    let spill_dir = tempfile::Builder::new()
        .prefix("geoberg-rewrite-")
        .tempdir_in(&spill_parent)
        .map_err(|e| {
            RewriteError::io(
                "cannot create spill directory in",
                spill_parent.display(),
                e,
            )
        })?;
    let router = Router::new(
        routing.slots.len(),
        routing_memory_limit(options) as usize,
        part.record_count,
        spill_dir.path().to_path_buf(),
        arrow_schema.clone(),
    );

    // Pass 1: route.
    let units: Vec<(usize, usize, u64)> = sources
        .iter()
        .enumerate()
        .flat_map(|(si, (_, s))| {
            let mut row0 = 0u64;
            s.row_group_rows()
                .into_iter()
                .enumerate()
                .map(move |(rg, n)| {
                    let u = (si, rg, row0);
                    row0 += n;
                    u
                })
                .collect::<Vec<_>>()
        })
        .collect();
    units.par_iter().try_for_each(|&(si, rg, row0)| {
        let (input, source) = &sources[si];
        let path = source.location();
        let reader = source.reader(vec![rg], false)?;
        // File position of the batch's first row: row groups are read whole and no row is
        // filtered, so positions are the file's (what `first_row_id + _pos` needs).
        let mut row = row0;
        for batch in reader {
            let batch = batch.map_err(|e| RewriteError::arrow(format!("reading '{path}'"), e))?;
            let n = batch.num_rows() as u64;
            let (batch, geometry_index) = match target {
                Some(target) => {
                    let batch = target.conform(path, &batch)?;
                    if lineage {
                        let layout = Layout::of(&batch.schema(), true);
                        let lineage = plan.inputs[*input].lineage;
                        let out = &config.arrow_schema;
                        (
                            layout.with_lineage(&batch, lineage, row, out, path)?,
                            geometry_index,
                        )
                    } else {
                        (batch, geometry_index)
                    }
                }
                None if lineage => {
                    let lineage = plan.inputs[*input].lineage;
                    let batch = layouts[si].with_lineage(
                        &batch,
                        lineage,
                        row,
                        &config.arrow_schema,
                        path,
                    )?;
                    (batch, config.geometry_index)
                }
                None => (batch, source.geometry_index),
            };
            // Deleted rows go now, after lineage was derived from their file positions.
            let deleted = &plan.inputs[*input].deleted;
            let batch = if deleted.is_empty() {
                batch
            } else {
                let keep: BooleanArray = (0..n).map(|i| Some(!deleted.contains(row + i))).collect();
                filter_record_batch(&batch, &keep)
                    .map_err(|e| RewriteError::arrow("dropping deleted rows", e))?
            };
            route_batch(
                &batch,
                *input as u64,
                row,
                geometry_index,
                part.oversize,
                &routing,
                &router,
                &curve,
                column,
                path,
                plan.keys_geography(),
                &plan.order,
                &plan.geography_columns,
            )?;
            row += n;
        }
        Ok::<(), RewriteError>(())
    })?;
    router.seal();

    // Pass 2: per task, sort each chunk and write.
    let concurrency = options
        .effective_threads()
        .min(options.max_concurrent_file_group_rewrites)
        .max(1);
    let next_task = AtomicUsize::new(0);
    // Set by the first failed task, so that the other workers stop taking tasks.
    let failed = AtomicBool::new(false);
    let task_slots: Vec<(usize, Vec<usize>)> = tasks
        .iter()
        .map(|&t| {
            (
                t,
                (0..routing.slots.len())
                    .filter(|&s| routing.slots[s] == t)
                    .collect(),
            )
        })
        .collect();
    let results: Vec<Result<Vec<OutputFile>, RewriteError>> = (0..concurrency)
        .into_par_iter()
        .map(|_| {
            let mut out = Vec::new();
            while !failed.load(Ordering::Relaxed) {
                let i = next_task.fetch_add(1, Ordering::Relaxed);
                let Some((t, slots)) = task_slots.get(i) else {
                    break;
                };
                match write_task(plan, *t, slots, &router, &config, storage, written) {
                    Ok(files) => out.push((i, files)),
                    Err(e) => {
                        failed.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                }
            }
            Ok(out)
        })
        .map(|r: Result<Vec<(usize, Vec<OutputFile>)>, RewriteError>| {
            r.map(|v| {
                let mut v = v;
                v.sort_by_key(|(i, _)| *i);
                v.into_iter().flat_map(|(_, f)| f).collect()
            })
        })
        .collect();
    let mut files = Vec::new();
    for r in results {
        files.extend(r?);
    }
    files.sort_by_key(|f| (f.task, f.key_range.first));
    Ok((files, router.spilled_bytes(), router.peak_buffered_bytes()))
}

/// The keys of a batch's rows: Hilbert keys with their boxes, or another order's prefix keys.
enum RowKeys {
    Hilbert(Box<crate::keys::KeyedRows>),
    Prefix(Vec<u64>),
}

#[allow(clippy::too_many_arguments)]
fn route_batch(
    batch: &RecordBatch,
    input: u64,
    row0: u64,
    geometry_index: usize,
    oversize: Option<crate::OversizeRule>,
    routing: &Routing,
    router: &Router,
    curve: &geoberg_hilbert::HilbertCurve,
    column: &str,
    path: &str,
    sphere: bool,
    order: &RowOrder,
    geography: &[String],
) -> Result<(), RewriteError> {
    let n = batch.num_rows();
    let mut keyed = if order.is_hilbert() {
        RowKeys::Hilbert(Box::new(key_rows(
            batch.column(geometry_index).as_ref(),
            curve,
            column,
            path,
            row0,
            sphere,
        )?))
    } else {
        let bound = BoundOrder::bind(order, &batch.schema(), geography, path)?;
        RowKeys::Prefix(bound.prefix_keys(batch, false, input, row0)?)
    };
    // Empty geometries join the regular files (see `borrow_keys_for_empty_rows`).
    let borrowed = match &mut keyed {
        RowKeys::Hilbert(k) => {
            k.borrow_keys_for_empty_rows(batch.column(geometry_index).as_ref(), |k, i| {
                k.is_located(i)
                    && oversize.is_none_or(|rule| {
                        let (w, h) = k.size(i);
                        !rule.is_oversized(w, h)
                    })
            })
        }
        RowKeys::Prefix(_) => Vec::new(),
    };
    let mut slots = vec![u32::MAX; n];
    for (i, s) in slots.iter_mut().enumerate() {
        let keyed = match &keyed {
            RowKeys::Hilbert(k) => k,
            RowKeys::Prefix(keys) => {
                if let Some(slot) = routing.slot(RowClass::Regular, keys[i]) {
                    *s = slot as u32;
                }
                continue;
            }
        };
        let class = if borrowed.get(i) == Some(&true) {
            RowClass::Regular
        } else if !keyed.is_located(i) {
            RowClass::Empty
        } else if let Some(rule) = oversize {
            let (w, h) = keyed.size(i);
            if rule.is_oversized(w, h) {
                RowClass::Oversized
            } else {
                RowClass::Regular
            }
        } else {
            RowClass::Regular
        };
        if let Some(slot) = routing.slot(class, keyed.keys[i]) {
            *s = slot as u32;
        }
    }
    let keys = match keyed {
        RowKeys::Hilbert(k) => k.keys,
        RowKeys::Prefix(k) => k,
    };
    // Counting sort of row indices by slot (stable: rows keep input order), then each slot's
    // rows by key (stable), so that one `take` groups the batch by slot in key order.
    let n_slots = routing.slots.len();
    let mut offsets = vec![0u32; n_slots + 1];
    for &s in &slots {
        if s != u32::MAX {
            offsets[s as usize + 1] += 1;
        }
    }
    for s in 0..n_slots {
        offsets[s + 1] += offsets[s];
    }
    let mut rows = vec![0u32; offsets[n_slots] as usize];
    let mut fill = offsets.clone();
    for (i, &s) in slots.iter().enumerate() {
        if s != u32::MAX {
            rows[fill[s as usize] as usize] = i as u32;
            fill[s as usize] += 1;
        }
    }
    for s in 0..n_slots {
        let (a, b) = (offsets[s] as usize, offsets[s + 1] as usize);
        if b - a > 1 {
            rows[a..b].sort_by_key(|&r| keys[r as usize]);
        }
    }
    let taken = take_record_batch(batch, &UInt32Array::from(rows.clone()))
        .map_err(|e| RewriteError::arrow("routing rows", e))?;
    router.push(Keyed {
        input_rows: n as u64,
        seq: (input << ROW_BITS) | row0,
        batch: taken,
        keys: rows.iter().map(|&r| keys[r as usize]).collect(),
        rows,
        offsets,
    })
}

fn write_task(
    plan: &RewritePlan,
    task: usize,
    slots: &[usize],
    router: &Router,
    config: &WriterConfig,
    storage: &dyn RewriteStorage,
    written: &Mutex<Vec<String>>,
) -> Result<Vec<OutputFile>, RewriteError> {
    let t = &plan.tasks[task];
    let partition = &plan.partitions[t.partition].partition;
    let refine = match BoundOrder::bind(
        &plan.order,
        &config.arrow_schema,
        &plan.geography_columns,
        partition.0.as_str(),
    ) {
        Ok(b) if b.needs_refine() => Some(b),
        Ok(_) => None,
        Err(e) => return Err(e),
    };
    let mut seq = 0;
    let mut writer = RollingWriter::new(config, partition.clone(), task, t.class, || {
        let path = storage.locate(partition, task, seq);
        seq += 1;
        let created = storage.create(&path);
        // A create that failed may have left part of a file, which the cleanup removes; but a
        // file that was there already is someone else's.
        if !matches!(&created, Err(e) if e.kind() == io::ErrorKind::AlreadyExists) {
            written
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(path.clone());
        }
        let file = created.map_err(|e| RewriteError::io("cannot create output file", &path, e))?;
        Ok((path, file))
    });
    for &slot in slots {
        let ChunkRows {
            batches: data,
            order,
        } = router.take(slot)?;
        if order.is_empty() {
            continue;
        }
        let data: Vec<&RecordBatch> = data.iter().collect();
        if let Some(bound) = refine.as_ref() {
            // Rows that share a prefix key are ordered by the full sort order: the chunk is
            // gathered whole (it is sized to the memory budget), permuted, then written.
            let at: Vec<(usize, usize)> = order
                .iter()
                .map(|&(_, at)| ((at >> 32) as usize, (at & u64::from(u32::MAX)) as usize))
                .collect();
            let gathered = interleave_record_batch(&data, &at)
                .map_err(|e| RewriteError::arrow("gathering sorted rows", e))?;
            let permutation = bound.refine(&gathered)?;
            let sorted = take_record_batch(&gathered, &permutation)
                .map_err(|e| RewriteError::arrow("ordering rows by the sort order", e))?;
            let keys: Vec<u64> = permutation
                .values()
                .iter()
                .map(|&p| order[p as usize].0)
                .collect();
            debug_assert!(keys.windows(2).all(|w| w[0] <= w[1]));
            let mut start = 0;
            while start < keys.len() {
                let len = config.row_group_rows.min(keys.len() - start);
                writer.write(&sorted.slice(start, len), &keys[start..start + len])?;
                start += len;
            }
            continue;
        }
        let mut indices = Vec::with_capacity(config.row_group_rows.min(order.len()));
        let mut keys = Vec::with_capacity(config.row_group_rows.min(order.len()));
        for rows in order.chunks(config.row_group_rows) {
            indices.clear();
            indices.extend(
                rows.iter()
                    .map(|&(_, at)| ((at >> 32) as usize, (at & u64::from(u32::MAX)) as usize)),
            );
            let sorted = interleave_record_batch(&data, &indices)
                .map_err(|e| RewriteError::arrow("gathering sorted rows", e))?;
            keys.clear();
            keys.extend(rows.iter().map(|&(k, _)| k));
            writer.write(&sorted, &keys)?;
        }
    }
    writer.close_current()?;
    Ok(writer.finished)
}
