//! Building a [`RewritePlan`]: preflight, file selection, key sampling and global range cuts.

use arrow_array::{RecordBatch, UInt32Array};
use rayon::prelude::*;

use crate::keys::{key_rows, lon_width};
use crate::lineage::Layout;
use crate::row_order::{BoundOrder, input_order_key};
use crate::selection::{PartitionSelection, select};
use crate::sizing::{expected_output_files, partition_target_size};
use crate::source::{Source, same_columns};
use crate::storage::InputStorage;
use crate::{
    Extent, GeoColumns, HilbertSpec, InputFile, KeyRange, OversizeRule, PartitionPlan,
    RewriteError, RewriteOptions, RewritePlan, RewriteTask, RowClass, RowOrder,
};
use geoberg_geostats::{BBox, GeographyBBoxAccumulator};

/// Sampled keys per sort unit (output file or memory chunk); Spark's range-exchange hint.
const SAMPLES_PER_UNIT: u64 = 100;
const MIN_SAMPLE: u64 = 10_000;
const MAX_SAMPLE: u64 = 1_000_000;
/// Routing oversized rows apart pays only while they are few; beyond this share of the sample
/// the large boxes are the data itself and are clustered normally.
const MAX_OVERSIZED_SHARE: f64 = 0.25;
/// Guess of in-memory bytes per stored byte, used only to size the sample before footers are read.
const DECOMPRESSION_GUESS: u64 = 3;

/// One sampled row.
#[derive(Debug, Clone, Copy)]
struct Sample {
    key: u64,
    width: f64,
    height: f64,
    bbox: Option<Extent>,
    /// Output bytes this sample stands for.
    out_bytes: f64,
    /// In-memory bytes this sample stands for.
    mem_bytes: f64,
}

/// Plans a Hilbert-clustered rewrite of `files` (the data files matched by the WHERE clause),
/// clustered by `columns` (a column name for a planar geometry column, or [`GeoColumns`] naming
/// the geography columns).
///
/// Preflight runs before any data is read: the curve (precision 1..=32, finite bounds) and the
/// union of the files' recorded bounds against the curve bounds. Then each selected partition's
/// geometry column is sampled to cut global key ranges at byte-weighted quantiles. A geography
/// file box that wraps the antimeridian counts as spanning every longitude in the preflight and
/// the overlap metric.
pub fn plan_rewrite(
    files: &[InputFile],
    columns: impl Into<GeoColumns>,
    curve: &HilbertSpec,
    options: &RewriteOptions,
    storage: &dyn InputStorage,
) -> Result<RewritePlan, RewriteError> {
    plan_rewrite_ordered(files, columns, curve, &RowOrder::Hilbert, options, storage)
}

/// [`plan_rewrite`] for any [`RowOrder`]: a column sort, a z-order or the input order
/// (bin-pack). Orders other than Hilbert skip the curve preflight and the oversized and empty
/// row classes (every row is [`RowClass::Regular`]); `columns.cluster` is then the geometry
/// column whose bounds the output files report. Sampling reads the order's columns and cuts
/// ranges of its prefix keys (see [`RowOrder`]).
pub fn plan_rewrite_ordered(
    files: &[InputFile],
    columns: impl Into<GeoColumns>,
    curve: &HilbertSpec,
    order: &RowOrder,
    options: &RewriteOptions,
    storage: &dyn InputStorage,
) -> Result<RewritePlan, RewriteError> {
    order.validate()?;
    let hilbert_order = order.is_hilbert();
    let columns = columns.into();
    let geometry_column = columns.cluster.as_str();
    let sphere = columns.clusters_geography();
    // Selection and preflight compare planar extents: a wrapping box becomes its lon/lat band.
    let unwrapped: Vec<InputFile>;
    let planar_files = if sphere {
        unwrapped = files
            .iter()
            .map(|f| {
                let mut f = f.clone();
                f.bbox = f.bbox.map(|b| {
                    if b.min_x > b.max_x {
                        Extent::new(-180.0, b.min_y, 180.0, b.max_y)
                    } else {
                        b
                    }
                });
                f
            })
            .collect();
        &unwrapped[..]
    } else {
        files
    };
    let selected = select(planar_files, options);
    if hilbert_order {
        preflight(planar_files, &selected, geometry_column, curve)?;
    }
    let hilbert = crate::keys::hilbert_curve(curve)?;
    let pool = crate::execute::thread_pool(options)?;

    let mut inputs = Vec::new();
    let mut partitions = Vec::new();
    let mut tasks = Vec::new();
    let total_bytes: u64 = selected
        .iter()
        .flat_map(|s| s.files.iter().map(|&i| files[i].file_size_bytes))
        .sum();
    let chunk_mem = crate::execute::chunk_memory_limit(options) as f64;

    for sel in &selected {
        let first_input = inputs.len();
        inputs.extend(sel.files.iter().map(|&i| files[i].clone()));
        let part_files = &inputs[first_input..];
        let input_bytes: u64 = part_files.iter().map(|f| f.file_size_bytes).sum();
        let record_count: u64 = part_files.iter().map(|f| f.record_count).sum();
        let out_bytes = input_bytes as f64 * options.compression_factor;

        let target = partition_target_size(options, out_bytes as u64);
        let n_files = match options.target_file_count {
            Some(count) => {
                let share = count as f64 * input_bytes as f64 / total_bytes.max(1) as f64;
                (share.round() as usize).max(1)
            }
            None => expected_output_files(
                out_bytes as u64,
                target,
                (target as f64 * 0.75) as u64,
                options.write_max_file_size().max(target),
            ),
        };
        let units_guess =
            n_files as u64 + (input_bytes * DECOMPRESSION_GUESS) / chunk_mem.max(1.0) as u64;
        let want = (SAMPLES_PER_UNIT * units_guess).clamp(MIN_SAMPLE, MAX_SAMPLE);
        let stride = (record_count / want).max(1);

        let samples = pool.install(|| {
            sample_partition(
                storage,
                part_files,
                &Sampling {
                    column: geometry_column,
                    curve: &hilbert,
                    order,
                    geography: &columns.geography,
                    first_input: first_input as u64,
                },
                stride,
                options,
                &sel.partition.0,
                sphere,
            )
        })?;

        let data_extent = sample_extent(&samples, sphere);
        let oversize = data_extent
            .filter(|_| n_files > 1 && hilbert_order)
            .and_then(|e| {
                let side = (n_files as f64).sqrt();
                let rule = OversizeRule {
                    max_width: lon_width(e.min_x, e.max_x, sphere) / side,
                    max_height: e.height() / side,
                };
                let located = samples.iter().filter(|s| s.bbox.is_some()).count();
                let big = samples
                    .iter()
                    .filter(|s| s.bbox.is_some() && rule.is_oversized(s.width, s.height))
                    .count();
                (big > 0 && (big as f64) <= MAX_OVERSIZED_SHARE * located as f64).then_some(rule)
            });

        let class_of = |s: &Sample| match (s.bbox, oversize) {
            _ if !hilbert_order => RowClass::Regular,
            (None, _) => RowClass::Empty,
            (Some(_), Some(r)) if r.is_oversized(s.width, s.height) => RowClass::Oversized,
            _ => RowClass::Regular,
        };
        let partition_index = partitions.len();
        let mut expected_files = 0;
        for class in [RowClass::Regular, RowClass::Oversized, RowClass::Empty] {
            if class == RowClass::Oversized && oversize.is_none() {
                continue;
            }
            let mut class_samples: Vec<Sample> = samples
                .iter()
                .copied()
                .filter(|s| class_of(s) == class)
                .collect();
            let class_out: f64 = class_samples.iter().map(|s| s.out_bytes).sum();
            let class_mem: f64 = class_samples.iter().map(|s| s.mem_bytes).sum();
            let files_here = if class_samples.is_empty() {
                1
            } else if class == RowClass::Regular && options.target_file_count.is_some() {
                ((n_files as f64 * class_out / out_bytes.max(1.0)).round() as usize).max(1)
            } else {
                expected_output_files(
                    class_out as u64,
                    target,
                    (target as f64 * 0.75) as u64,
                    options.write_max_file_size().max(target),
                )
            };
            expected_files += usize::from(!class_samples.is_empty()) * files_here;
            let chunks_per_file = ((class_mem / files_here as f64) / chunk_mem)
                .ceil()
                .max(1.0) as usize;
            let starts = if class == RowClass::Empty {
                vec![0]
            } else {
                class_samples.sort_unstable_by_key(|s| s.key);
                cut_points(&class_samples, files_here * chunks_per_file)
            };
            // Group consecutive chunks into tasks of about one output file each.
            let file_starts: Vec<usize> = (0..files_here)
                .map(|f| f * starts.len() / files_here)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            for (j, &s) in file_starts.iter().enumerate() {
                let e = file_starts.get(j + 1).copied().unwrap_or(starts.len());
                let last = starts.get(e).map_or(u64::MAX, |&k| k - 1);
                tasks.push(RewriteTask {
                    id: tasks.len(),
                    partition: partition_index,
                    class,
                    key_range: KeyRange {
                        first: starts[s],
                        last,
                    },
                    chunk_starts: starts[s..e].to_vec(),
                    expected_bytes: (class_out / file_starts.len() as f64) as u64,
                });
            }
        }
        partitions.push(PartitionPlan {
            partition: sel.partition.clone(),
            inputs: (first_input..inputs.len()).collect(),
            reason: sel.reason,
            overlap_depth: sel.overlap_depth,
            input_bytes,
            record_count,
            target_file_size_bytes: target,
            expected_output_files: expected_files.max(1),
            oversize,
            data_extent,
            commit_group: 0,
        });
    }
    assign_commit_groups(&mut partitions, options);
    let plan = RewritePlan {
        geometry_column: geometry_column.to_string(),
        geography_columns: columns.geography.clone(),
        curve: *curve,
        order: order.clone(),
        options: options.clone(),
        inputs,
        partitions,
        tasks,
    };
    plan.validate()?;
    Ok(plan)
}

/// Checks the curve against the recorded bounds of the selected files, before reading data.
fn preflight(
    files: &[InputFile],
    selected: &[PartitionSelection],
    column: &str,
    curve: &HilbertSpec,
) -> Result<(), RewriteError> {
    HilbertSpec::new(u32::from(curve.precision), curve.bounds)?;
    let data = Extent::union_all(
        selected
            .iter()
            .flat_map(|s| s.files.iter().filter_map(|&i| files[i].bbox.as_ref())),
    );
    let Some(data) = data else { return Ok(()) };
    let c = curve.bounds;
    if c.contains(&data) {
        return Ok(());
    }
    let s = c.union(&data);
    Err(RewriteError::DataOutsideCurveBounds {
        column: column.to_string(),
        precision: curve.precision,
        data_min_x: data.min_x,
        data_min_y: data.min_y,
        data_max_x: data.max_x,
        data_max_y: data.max_y,
        curve_min_x: c.min_x,
        curve_min_y: c.min_y,
        curve_max_x: c.max_x,
        curve_max_y: c.max_y,
        suggest_min_x: s.min_x,
        suggest_min_y: s.min_y,
        suggest_max_x: s.max_x,
        suggest_max_y: s.max_y,
    })
}

/// Union of the sampled boxes: planar, or on the sphere (X may wrap) for geography.
fn sample_extent(samples: &[Sample], sphere: bool) -> Option<Extent> {
    let boxes = samples.iter().filter_map(|s| s.bbox.as_ref());
    if !sphere {
        return Extent::union_all(boxes);
    }
    let mut acc = GeographyBBoxAccumulator::new();
    for b in boxes {
        acc.add(Some(BBox::from(*b)));
    }
    acc.finish().map(Extent::from)
}

/// What the samples are keyed by.
struct Sampling<'a> {
    /// The geometry column.
    column: &'a str,
    curve: &'a geoberg_hilbert::HilbertCurve,
    order: &'a RowOrder,
    geography: &'a [String],
    /// Plan input index of the partition's first file (input-order keys).
    first_input: u64,
}

/// Reads the key columns of every file (in parallel) and keeps every `stride`-th row.
fn sample_partition(
    storage: &dyn InputStorage,
    files: &[InputFile],
    sampling: &Sampling<'_>,
    stride: u64,
    options: &RewriteOptions,
    partition: &str,
    sphere: bool,
) -> Result<Vec<Sample>, RewriteError> {
    let per_file: Vec<(arrow_schema::SchemaRef, Vec<Sample>)> = files
        .par_iter()
        .enumerate()
        .map(|(i, f)| {
            sample_file(
                storage,
                f,
                sampling,
                sampling.first_input + i as u64,
                stride,
                options,
                sphere,
            )
        })
        .collect::<Result<_, _>>()?;
    // With row lineage, files are compared on their data columns: whether a file already carries
    // the lineage columns (written by an earlier rewrite) does not matter.
    let lineage = files.iter().any(|f| f.lineage.is_some());
    let data = |s: &arrow_schema::SchemaRef| Layout::of(s, lineage).data_schema(s);
    // Inputs read as a target schema may differ: each is made into the target's columns.
    if storage.target_schema().is_none()
        && let Some(first) = per_file.first().map(|(s, _)| data(s))
        && let Some(i) = per_file
            .iter()
            .position(|(s, _)| !same_columns(&data(s), &first))
    {
        return Err(RewriteError::SchemaMismatch {
            partition: partition.to_string(),
            first: files[0].location.clone(),
            other: files[i].location.clone(),
        });
    }
    Ok(per_file.into_iter().flat_map(|(_, s)| s).collect())
}

/// The batch's rows whose file position (`row0` + index) is a multiple of `stride`; `None`
/// when it has none.
fn every_stride(
    batch: &RecordBatch,
    row0: u64,
    stride: u64,
) -> Result<Option<RecordBatch>, RewriteError> {
    let first = (stride - row0 % stride) % stride;
    let picks: Vec<u32> = (first..batch.num_rows() as u64)
        .step_by(stride as usize)
        .map(|i| i as u32)
        .collect();
    if picks.is_empty() {
        return Ok(None);
    }
    arrow_select::take::take_record_batch(batch, &UInt32Array::from(picks))
        .map(Some)
        .map_err(|e| RewriteError::arrow("sampling sort keys", e))
}

/// Every `stride`-th row's prefix key of `order`, read from all of the file's columns made
/// into the target's.
fn sample_conformed(
    source: &Source,
    target: &dyn crate::TargetSchema,
    order: &RowOrder,
    sampling: &Sampling<'_>,
    input_index: u64,
    stride: u64,
) -> Result<Vec<u64>, RewriteError> {
    let path = source.location();
    let n_groups = source.metadata.metadata().num_row_groups();
    let reader = source.reader((0..n_groups).collect(), false)?;
    let mut keys = Vec::new();
    let mut row0 = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| RewriteError::arrow(format!("reading '{path}'"), e))?;
        let n = batch.num_rows() as u64;
        if let Some(picked) = every_stride(&batch, row0, stride)? {
            let picked = target.conform(path, &picked)?;
            let bound = BoundOrder::bind(order, &picked.schema(), sampling.geography, path)?;
            keys.extend(bound.prefix_keys(&picked, true, input_index, row0)?);
        }
        row0 += n;
    }
    Ok(keys)
}

fn sample_file(
    storage: &dyn InputStorage,
    input: &InputFile,
    sampling: &Sampling<'_>,
    input_index: u64,
    stride: u64,
    options: &RewriteOptions,
    sphere: bool,
) -> Result<(arrow_schema::SchemaRef, Vec<Sample>), RewriteError> {
    let (column, curve) = (sampling.column, sampling.curve);
    let path = input.location.as_str();
    let source = Source::open(storage, path, column)?;
    let rows: u64 = source.row_group_rows().iter().sum();
    let file_bytes = input.file_size_bytes;
    let out_per_row = file_bytes as f64 * options.compression_factor / rows.max(1) as f64;
    let mem_per_row = source.uncompressed_bytes() as f64 / rows.max(1) as f64;
    let n_groups = source.metadata.metadata().num_row_groups();
    let sample = |key: u64| Sample {
        key,
        width: 0.0,
        height: 0.0,
        bbox: None,
        out_bytes: out_per_row * stride as f64,
        mem_bytes: mem_per_row * stride as f64,
    };
    match sampling.order {
        RowOrder::Hilbert => {}
        // Keys are positions: the footer says it all.
        RowOrder::InputOrder => {
            let samples = (0..rows)
                .step_by(stride as usize)
                .map(|r| sample(input_order_key(input_index, r)))
                .collect();
            return Ok((source.schema().clone(), samples));
        }
        order => {
            let bound = match (
                BoundOrder::bind(order, source.schema(), sampling.geography, path),
                storage.target_schema(),
            ) {
                (Ok(bound), _) => bound,
                // A file from before a schema change (a sort column added or renamed since):
                // its rows as the target's columns.
                (Err(RewriteError::MissingSortColumn { .. }), Some(target)) => {
                    return sample_conformed(&source, target, order, sampling, input_index, stride)
                        .map(|keys| {
                            (
                                source.schema().clone(),
                                keys.into_iter().map(sample).collect(),
                            )
                        });
                }
                (Err(e), _) => return Err(e),
            };
            let reader = source.reader_columns((0..n_groups).collect(), bound.indices())?;
            let mut samples = Vec::with_capacity((rows / stride + 1) as usize);
            let mut row0 = 0u64;
            for batch in reader {
                let batch =
                    batch.map_err(|e| RewriteError::arrow(format!("reading '{path}'"), e))?;
                let n = batch.num_rows() as u64;
                if let Some(picked) = every_stride(&batch, row0, stride)? {
                    let keys = bound.prefix_keys(&picked, true, input_index, row0)?;
                    samples.extend(keys.into_iter().map(sample));
                }
                row0 += n;
            }
            return Ok((source.schema().clone(), samples));
        }
    }
    let reader = source.reader((0..n_groups).collect(), true)?;
    let mut samples = Vec::with_capacity((rows / stride + 1) as usize);
    let mut row0 = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| RewriteError::arrow(format!("reading '{path}'"), e))?;
        let n = batch.num_rows() as u64;
        let first = (stride - row0 % stride) % stride;
        let picks: Vec<u32> = (first..n)
            .step_by(stride as usize)
            .map(|i| i as u32)
            .collect();
        if !picks.is_empty() {
            let geometry =
                arrow_select::take::take(batch.column(0), &UInt32Array::from(picks), None)
                    .map_err(|e| RewriteError::arrow("sampling geometries", e))?;
            let keyed = key_rows(geometry.as_ref(), curve, column, path, row0, sphere)?;
            for i in 0..geometry.len() {
                let located = keyed.is_located(i);
                let (width, height) = if located { keyed.size(i) } else { (0.0, 0.0) };
                let b = &keyed.bboxes;
                samples.push(Sample {
                    key: keyed.keys[i],
                    width,
                    height,
                    bbox: located.then(|| {
                        Extent::new(
                            b.min_x.value(i),
                            b.min_y.value(i),
                            b.max_x.value(i),
                            b.max_y.value(i),
                        )
                    }),
                    out_bytes: out_per_row * stride as f64,
                    mem_bytes: mem_per_row * stride as f64,
                });
            }
        }
        row0 += n;
    }
    Ok((source.schema().clone(), samples))
}

/// First keys of `pieces` ranges that split the weight of `sorted` evenly; the first is 0 so
/// that the ranges cover every key. Cuts that fall on equal keys merge, so a key never spans two
/// ranges.
fn cut_points(sorted: &[Sample], pieces: usize) -> Vec<u64> {
    let mut starts = vec![0u64];
    let total: f64 = sorted.iter().map(|s| s.out_bytes).sum();
    if pieces <= 1 || sorted.is_empty() || total <= 0.0 {
        return starts;
    }
    let mut acc = 0.0;
    let mut next = 1;
    for s in sorted {
        if next >= pieces {
            break;
        }
        if acc >= total * next as f64 / pieces as f64 {
            if s.key > *starts.last().unwrap() {
                starts.push(s.key);
            }
            next += 1;
        }
        acc += s.out_bytes;
    }
    starts
}

/// Partial progress, as Iceberg batches it: every partition is at least one file group (one
/// per `max-file-group-size-bytes` of input), and each commit takes
/// `ceil(file groups / max-commits)` groups, in order.
fn assign_commit_groups(partitions: &mut [PartitionPlan], options: &RewriteOptions) {
    if !options.partial_progress_enabled || partitions.is_empty() {
        return;
    }
    let file_groups: Vec<usize> = partitions
        .iter()
        .map(|p| {
            p.input_bytes
                .div_ceil(options.max_file_group_size_bytes)
                .max(1) as usize
        })
        .collect();
    let total: usize = file_groups.iter().sum();
    let per_commit = total
        .div_ceil(options.partial_progress_max_commits.max(1))
        .max(1);
    let mut acc = 0usize;
    for (p, n) in partitions.iter_mut().zip(file_groups) {
        p.commit_group = acc / per_commit;
        acc += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(key: u64) -> Sample {
        Sample {
            key,
            width: 0.0,
            height: 0.0,
            bbox: None,
            out_bytes: 1.0,
            mem_bytes: 1.0,
        }
    }

    #[test]
    fn cuts_split_weight_evenly_and_merge_ties() {
        let v: Vec<Sample> = (0..100).map(s).collect();
        assert_eq!(cut_points(&v, 4), vec![0, 25, 50, 75]);
        let ties: Vec<Sample> = (0..100).map(|i| s(if i < 90 { 7 } else { i })).collect();
        let c = cut_points(&ties, 4);
        assert!(c.windows(2).all(|w| w[0] < w[1]), "{c:?}");
        assert_eq!(cut_points(&v, 1), vec![0]);
        assert_eq!(cut_points(&[], 3), vec![0]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        #[test]
        fn cuts_start_at_zero_increase_and_stay_within_pieces(
            mut keys in proptest::collection::vec(0u64..1000, 0..400),
            pieces in 1usize..40,
        ) {
            keys.sort_unstable();
            let v: Vec<Sample> = keys.iter().map(|&k| s(k)).collect();
            let c = cut_points(&v, pieces);
            proptest::prop_assert_eq!(c[0], 0);
            proptest::prop_assert!(c.len() <= pieces);
            proptest::prop_assert!(c.windows(2).all(|w| w[0] < w[1]));
            proptest::prop_assert!(c.iter().all(|k| *k == 0 || keys.contains(k)));
        }
    }
}
