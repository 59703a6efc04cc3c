//! End-to-end rewrites of random Parquet tables.

use std::collections::hash_map::DefaultHasher;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow_array::{Array, BinaryArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use geoberg_rewrite::{
    DirectoryStorage, Extent, HilbertSpec, InputFile, LocalFiles, OutputStream, PartitionKey,
    RewriteError, RewriteOptions, RewriteOutcome, RewritePlan, RewriteStorage, RowClass, execute,
    execute_tasks, plan_rewrite,
};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

mod common;

use common::{Rng, point_wkb};

fn box_wkb(x0: f64, y0: f64, x1: f64, y1: f64) -> Vec<u8> {
    let mut w = vec![1u8, 3, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0];
    for (x, y) in [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)] {
        w.extend(x.to_le_bytes());
        w.extend(y.to_le_bytes());
    }
    w
}

fn schema() -> SchemaRef {
    let id = |f: Field, i: i32| {
        f.with_metadata([("PARQUET:field_id".to_string(), i.to_string())].into())
    };
    Arc::new(Schema::new(vec![
        id(Field::new("id", DataType::Int64, false), 1),
        id(Field::new("geom", DataType::Binary, true), 2),
        id(Field::new("name", DataType::Utf8, true), 3),
        id(Field::new("value", DataType::Float64, true), 4),
    ]))
}

#[derive(Clone, Copy)]
struct Mix {
    null_every: u64,
    big_every: u64,
}

const PLAIN: Mix = Mix {
    null_every: 0,
    big_every: 0,
};

/// Writes `files` Parquet files of `rows` random rows each (uniform points over a region).
fn write_table(
    dir: &Path,
    files: usize,
    rows: usize,
    seed: u64,
    mix: Mix,
    partition: &str,
) -> Vec<InputFile> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for f in 0..files {
        let mut ids = Vec::new();
        let mut geoms: Vec<Option<Vec<u8>>> = Vec::new();
        let mut names = Vec::new();
        let mut values = Vec::new();
        let mut bbox: Option<Extent> = None;
        for r in 0..rows {
            let id = (f * rows + r) as i64 + seed as i64 * 1_000_000;
            let (x, y) = (rng.unit() * 360.0 - 180.0, rng.unit() * 170.0 - 85.0);
            let g = if mix.null_every > 0 && (id as u64).is_multiple_of(mix.null_every) {
                None
            } else if mix.big_every > 0 && (id as u64).is_multiple_of(mix.big_every) {
                let (x0, y0) = (x.min(100.0), y.min(20.0));
                let e = Extent::new(x0, y0, x0 + 60.0, y0 + 50.0);
                bbox = Some(bbox.map_or(e, |b| b.union(&e)));
                Some(box_wkb(x0, y0, x0 + 60.0, y0 + 50.0))
            } else {
                let e = Extent::new(x, y, x, y);
                bbox = Some(bbox.map_or(e, |b| b.union(&e)));
                Some(point_wkb(x, y))
            };
            ids.push(id);
            geoms.push(g);
            names.push((!rng.next().is_multiple_of(5)).then(|| format!("n{}", rng.next() % 1000)));
            values.push((!rng.next().is_multiple_of(7)).then(|| rng.unit()));
        }
        let batch = RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(BinaryArray::from_iter(geoms.iter().map(|g| g.as_deref()))),
                Arc::new(StringArray::from(names)),
                Arc::new(Float64Array::from(values)),
            ],
        )
        .unwrap();
        let path = dir.join(format!("{partition}-in-{seed}-{f}.parquet"));
        let mut w = ArrowWriter::try_new(File::create(&path).unwrap(), schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        let mut file =
            InputFile::new(path.display().to_string(), size, rows as u64).with_partition(partition);
        file.bbox = bbox;
        out.push(file);
    }
    out
}

fn read(path: &Path) -> RecordBatch {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    arrow_select::concat::concat_batches(&batches[0].schema(), &batches).unwrap()
}

/// Row count plus, per column and for whole rows, an order-independent sum of value hashes.
fn checksums(paths: &[PathBuf]) -> (usize, Vec<u64>) {
    let mut rows = 0;
    let mut sums = vec![0u64; 5];
    for p in paths {
        let b = read(p);
        rows += b.num_rows();
        let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let g = b.column(1).as_any().downcast_ref::<BinaryArray>().unwrap();
        let n = b.column(2).as_any().downcast_ref::<StringArray>().unwrap();
        let v = b.column(3).as_any().downcast_ref::<Float64Array>().unwrap();
        for r in 0..b.num_rows() {
            let hashes = [
                h(&id.value(r)),
                h(&(g.is_valid(r).then(|| g.value(r)))),
                h(&(n.is_valid(r).then(|| n.value(r)))),
                h(&(v.is_valid(r).then(|| v.value(r).to_bits()))),
            ];
            for (s, x) in sums.iter_mut().zip(hashes) {
                *s = s.wrapping_add(x);
            }
            sums[4] = sums[4].wrapping_add(h(&hashes));
        }
    }
    (rows, sums)
}

fn h<T: Hash>(t: &T) -> u64 {
    let mut s = DefaultHasher::new();
    t.hash(&mut s);
    s.finish()
}

fn opts(pairs: &[(&str, &str)]) -> RewriteOptions {
    RewriteOptions::parse(pairs.iter().copied(), None).unwrap()
}

fn run(plan: &RewritePlan, out: &Path) -> RewriteOutcome {
    std::fs::create_dir_all(out).unwrap();
    execute(
        plan,
        &DirectoryStorage {
            dir: out.to_path_buf(),
            prefix: "t".into(),
        },
    )
    .unwrap()
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

#[test]
fn rows_are_preserved_exactly_with_spilling_and_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let mix = Mix {
        null_every: 97,
        big_every: 1009,
    };
    let mut inputs = write_table(dir.path(), 4, 60_000, 1, mix, "a");
    inputs.extend(write_table(dir.path(), 3, 10_000, 2, mix, "b"));
    let options = opts(&[
        ("rewrite-all", "true"),
        ("target-file-size-bytes", "400000"),
        ("max-memory-bytes", "16777216"),
        ("threads", "2"),
        ("row-group-rows", "5000"),
    ]);
    let plan = plan_rewrite(
        &inputs,
        "geom",
        &HilbertSpec::wgs84(16).unwrap(),
        &options,
        &LocalFiles,
    )
    .unwrap();
    let out = dir.path().join("out");
    let outcome = run(&plan, &out);
    assert!(
        outcome.spilled_bytes > 0,
        "the 16 MiB budget should force spill runs"
    );
    let before = checksums(
        &inputs
            .iter()
            .map(|f| PathBuf::from(&f.location))
            .collect::<Vec<_>>(),
    );
    let after = checksums(
        &outcome
            .added
            .iter()
            .map(|f| PathBuf::from(&f.location))
            .collect::<Vec<_>>(),
    );
    assert_eq!(before, after);
    assert_eq!(before.0, 270_000);
    assert_eq!(outcome.result.rewritten_data_files_count, 7);
    assert_eq!(
        outcome.result.added_data_files_count as usize,
        outcome.added.len()
    );
    assert_eq!(
        outcome.result.rewritten_bytes_count,
        inputs.iter().map(|f| f.file_size_bytes).sum::<u64>()
    );
    assert_eq!(files_in(&out).len(), outcome.added.len(), "no stray files");
    // Reported statistics match the files.
    for f in &outcome.added {
        let b = read(Path::new(&f.location));
        assert_eq!(b.num_rows() as u64, f.record_count);
        assert_eq!(
            std::fs::metadata(&f.location).unwrap().len(),
            f.file_size_bytes
        );
        let ids = f.columns.iter().map(|c| c.field_id).collect::<Vec<_>>();
        assert_eq!(ids, vec![Some(1), Some(2), Some(3), Some(4)]);
        let geom = &f.columns[1];
        assert_eq!(geom.value_count, f.record_count);
        assert_eq!(geom.null_count, Some(b.column(1).null_count() as u64));
        assert_eq!(
            b.schema()
                .field(0)
                .metadata()
                .get("PARQUET:field_id")
                .map(String::as_str),
            Some("1")
        );
        match f.class {
            RowClass::Empty => assert!(f.bbox.is_none()),
            _ => assert!(f.bbox.is_some()),
        }
    }
    assert!(outcome.added.iter().any(|f| f.class == RowClass::Empty));
    assert!(outcome.added.iter().any(|f| f.class == RowClass::Oversized));
}

#[test]
fn output_files_have_disjoint_ordered_key_ranges_and_sorted_rows() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = write_table(
        dir.path(),
        5,
        20_000,
        3,
        Mix {
            null_every: 50,
            big_every: 0,
        },
        "p",
    );
    // A coarse curve (4096 cells for 100 000 rows): most keys are shared, so the tie-break
    // (input order) decides the order of most rows, across pieces, batches and files.
    let spec = HilbertSpec::wgs84(6).unwrap();
    let options = opts(&[
        ("rewrite-all", "true"),
        ("target-file-count", "12"),
        ("row-group-rows", "4096"),
        ("max-memory-bytes", "16777216"),
        ("threads", "2"),
    ]);
    let plan = plan_rewrite(&inputs, "geom", &spec, &options, &LocalFiles).unwrap();
    let outcome = run(&plan, &dir.path().join("out"));
    let regular: Vec<_> = outcome
        .added
        .iter()
        .filter(|f| f.class == RowClass::Regular)
        .collect();
    assert!((9..=15).contains(&regular.len()), "{} files", regular.len());
    for w in regular.windows(2) {
        assert!(
            w[0].key_range.last < w[1].key_range.first,
            "{:?} then {:?}",
            w[0].key_range,
            w[1].key_range
        );
    }
    let b = spec.bounds;
    let curve = geoberg_hilbert::HilbertCurve::new(
        spec.precision,
        geoberg_hilbert::Bounds::new(b.min_x, b.min_y, b.max_x, b.max_y).unwrap(),
    )
    .unwrap();
    for f in &regular {
        let b = read(Path::new(&f.location));
        let g = b.column(1).as_any().downcast_ref::<BinaryArray>().unwrap();
        let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let keys: Vec<(u64, i64)> = (0..b.num_rows())
            .map(|r| {
                let v = g.value(r);
                let x = f64::from_le_bytes(v[5..13].try_into().unwrap());
                let y = f64::from_le_bytes(v[13..21].try_into().unwrap());
                (curve.encode(x, y).unwrap(), id.value(r))
            })
            .collect();
        if let Some(w) = keys.windows(2).find(|w| w[0] > w[1]) {
            panic!("rows not sorted by (key, input order): {w:?}");
        }
        assert_eq!(keys.first().unwrap().0, f.key_range.first);
        assert_eq!(keys.last().unwrap().0, f.key_range.last);
    }
    // Null geometries come last, in their own file.
    let empty: Vec<_> = outcome
        .added
        .iter()
        .filter(|f| f.class == RowClass::Empty)
        .collect();
    assert_eq!(empty.len(), 1);
    assert_eq!(empty[0].record_count, 2_000);
    assert_eq!(outcome.added.last().unwrap().class, RowClass::Empty);
}

fn files_read(files: &[Extent], window: &Extent) -> usize {
    files.iter().filter(|b| b.intersects(window)).count()
}

#[test]
fn a_one_percent_window_reads_near_the_ideal_number_of_files() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = write_table(dir.path(), 40, 5_000, 4, PLAIN, "u");
    let n = 100usize;
    let options = opts(&[("rewrite-all", "true"), ("target-file-count", "100")]);
    let plan = plan_rewrite(
        &inputs,
        "geom",
        &HilbertSpec::wgs84(16).unwrap(),
        &options,
        &LocalFiles,
    )
    .unwrap();
    let outcome = run(&plan, &dir.path().join("out"));
    let after: Vec<Extent> = outcome.added.iter().filter_map(|f| f.bbox).collect();
    assert!((90..=110).contains(&after.len()), "{} files", after.len());
    let before: Vec<Extent> = inputs.iter().map(|f| f.bbox.unwrap()).collect();
    let mut rng = Rng(99);
    let (s, windows) = (0.1, 200);
    let (mut read_before, mut read_after) = (0, 0);
    for _ in 0..windows {
        let (w, hgt) = (360.0 * s, 170.0 * s);
        let x = -180.0 + rng.unit() * (360.0 - w);
        let y = -85.0 + rng.unit() * (170.0 - hgt);
        let win = Extent::new(x, y, x + w, y + hgt);
        read_before += files_read(&before, &win);
        read_after += files_read(&after, &win);
    }
    let mean_after = read_after as f64 / windows as f64;
    let mean_before = read_before as f64 / windows as f64;
    let ideal = (s + 1.0 / (n as f64).sqrt()).powi(2) * n as f64;
    assert!(
        mean_after <= 3.0 * ideal,
        "after {mean_after:.1} files, ideal {ideal:.1}"
    );
    assert!(
        mean_after * 4.0 < mean_before,
        "before {mean_before:.1}, after {mean_after:.1}"
    );
}

#[test]
fn preflight_errors_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = write_table(dir.path(), 1, 100, 5, PLAIN, "");
    let bounds = Extent::new(-180.0, -90.0, 180.0, 90.0);
    for p in [0, 33] {
        let e = HilbertSpec::new(p, bounds).unwrap_err();
        assert!(
            matches!(e, geoberg_crs::CrsError::InvalidPrecision { precision } if precision == p),
            "{e}"
        );
        assert!(e.to_string().contains("1..=32"));
    }
    assert!(matches!(
        HilbertSpec::new(16, Extent::new(1.0, 0.0, 0.0, 1.0)),
        Err(geoberg_crs::CrsError::InvalidBounds { .. })
    ));

    let narrow = HilbertSpec::new(10, Extent::new(-10.0, -10.0, 10.0, 10.0)).unwrap();
    let options = opts(&[("rewrite-all", "true")]);
    let e = plan_rewrite(&inputs, "geom", &narrow, &options, &LocalFiles).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, RewriteError::DataOutsideCurveBounds { .. }),
        "{msg}"
    );
    assert!(
        msg.contains("hilbert(geom, 10, -1"),
        "suggests widened bounds: {msg}"
    );

    // Without recorded bounds the check happens while reading, naming the row.
    let mut no_bbox = inputs.clone();
    no_bbox[0].bbox = None;
    let e = plan_rewrite(&no_bbox, "geom", &narrow, &options, &LocalFiles).unwrap_err();
    assert!(
        matches!(e, RewriteError::RowOutsideCurveBounds { .. }),
        "{e}"
    );

    let e = RewriteOptions::parse([("bogus", "1")], None).unwrap_err();
    assert!(
        e.to_string()
            .contains("valid options are: target-file-size-bytes"),
        "{e}"
    );

    let e = plan_rewrite(
        &inputs,
        "shape",
        &HilbertSpec::wgs84(10).unwrap(),
        &options,
        &LocalFiles,
    )
    .unwrap_err();
    assert!(
        matches!(e, RewriteError::MissingGeometryColumn { .. }),
        "{e}"
    );
    assert!(e.to_string().contains("geom (Binary)"), "{e}");
}

#[test]
fn a_failure_midway_leaves_no_output_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = write_table(dir.path(), 2, 5_000, 6, PLAIN, "a");
    inputs.extend(write_table(dir.path(), 2, 5_000, 7, PLAIN, "b"));
    let options = opts(&[("rewrite-all", "true"), ("target-file-size-bytes", "20000")]);
    let plan = plan_rewrite(
        &inputs,
        "geom",
        &HilbertSpec::wgs84(12).unwrap(),
        &options,
        &LocalFiles,
    )
    .unwrap();
    // Partition "a" is written first; then an input of "b" turns out unreadable.
    std::fs::write(&inputs[3].location, b"not a parquet file").unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let e = execute(
        &plan,
        &DirectoryStorage {
            dir: out.clone(),
            prefix: "t".into(),
        },
    )
    .unwrap_err();
    assert!(matches!(e, RewriteError::Parquet { .. }), "{e}");
    assert!(e.to_string().contains("b-in-7-1.parquet"), "{e}");
    assert!(
        files_in(&out).is_empty(),
        "left behind: {:?}",
        files_in(&out)
    );
}

/// Writes half of the first block it is given, then fails: a crash in the middle of a file.
struct HalfWriter(File);

impl OutputStream for HalfWriter {
    fn finish(&mut self) -> std::io::Result<()> {
        Err(std::io::Error::other("injected: disk gone"))
    }
}

impl Write for HalfWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write_all(&buf[..buf.len() / 2])?;
        Err(std::io::Error::other("injected: disk gone"))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Err(std::io::Error::other("injected: disk gone"))
    }
}

/// A [`DirectoryStorage`] whose `fail_at`-th created file fails half way through.
struct FailingLocator {
    inner: DirectoryStorage,
    fail_at: usize,
    created: Mutex<Vec<PathBuf>>,
    removed: Mutex<Vec<PathBuf>>,
}

impl geoberg_rewrite::InputStorage for FailingLocator {}

impl RewriteStorage for FailingLocator {
    fn locate(&self, partition: &PartitionKey, task: usize, seq: usize) -> String {
        self.inner.locate(partition, task, seq)
    }
    fn create(&self, location: &str) -> std::io::Result<Box<dyn OutputStream>> {
        let mut created = self.created.lock().unwrap();
        created.push(PathBuf::from(location));
        let file = File::create(location)?;
        if created.len() == self.fail_at {
            Ok(Box::new(HalfWriter(file)))
        } else {
            Ok(Box::new(PlainFile(file)))
        }
    }
    fn remove(&self, location: &str) -> std::io::Result<()> {
        self.removed.lock().unwrap().push(PathBuf::from(location));
        std::fs::remove_file(location)
    }
}

/// A local output file whose `finish` is a flush.
struct PlainFile(File);

impl Write for PlainFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl OutputStream for PlainFile {
    fn finish(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[test]
fn output_files_go_through_the_locator_and_a_failed_write_leaves_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = write_table(dir.path(), 2, 3_000, 11, PLAIN, "a");
    inputs.extend(write_table(dir.path(), 2, 3_000, 12, PLAIN, "b"));
    let options = opts(&[("rewrite-all", "true"), ("target-file-count", "6")]);
    let plan = plan_rewrite(
        &inputs,
        "geom",
        &HilbertSpec::wgs84(12).unwrap(),
        &options,
        &LocalFiles,
    )
    .unwrap();
    let expected = checksums(
        &inputs
            .iter()
            .map(|f| PathBuf::from(&f.location))
            .collect::<Vec<_>>(),
    );
    let mut k = 1;
    loop {
        let out = dir.path().join(format!("out-{k}"));
        std::fs::create_dir(&out).unwrap();
        let locator = FailingLocator {
            inner: DirectoryStorage {
                dir: out.clone(),
                prefix: "f".into(),
            },
            fail_at: k,
            created: Mutex::new(Vec::new()),
            removed: Mutex::new(Vec::new()),
        };
        let result = execute(&plan, &locator);
        let created = locator.created.into_inner().unwrap();
        let mut removed = locator.removed.into_inner().unwrap();
        match result {
            Ok(outcome) => {
                assert!(
                    created.len() < k,
                    "file {k} of {} was not failed",
                    created.len()
                );
                assert!(created.len() >= 4, "{} output files", created.len());
                assert!(removed.is_empty());
                let paths: Vec<PathBuf> = outcome
                    .added
                    .iter()
                    .map(|f| PathBuf::from(&f.location))
                    .collect();
                assert_eq!(checksums(&paths), expected);
                // Sizes come from the writer's count, which must match the disk.
                for f in &outcome.added {
                    assert_eq!(
                        std::fs::metadata(&f.location).unwrap().len(),
                        f.file_size_bytes
                    );
                }
                break;
            }
            Err(e) => {
                assert!(e.to_string().contains("injected"), "{k}: {e}");
                assert!(
                    files_in(&out).is_empty(),
                    "{k}: left behind {:?}",
                    files_in(&out)
                );
                let mut created = created;
                created.sort();
                removed.sort();
                assert_eq!(
                    removed, created,
                    "{k}: every created file is removed through the locator"
                );
            }
        }
        k += 1;
    }
}

/// A [`DirectoryStorage`] that never replaces a file.
struct CreateNewLocator(DirectoryStorage);

impl geoberg_rewrite::InputStorage for CreateNewLocator {}

impl RewriteStorage for CreateNewLocator {
    fn locate(&self, partition: &PartitionKey, task: usize, seq: usize) -> String {
        self.0.locate(partition, task, seq)
    }
    fn create(&self, location: &str) -> std::io::Result<Box<dyn OutputStream>> {
        Ok(Box::new(PlainFile(File::create_new(location)?)))
    }
}

#[test]
fn a_failed_rewrite_never_removes_a_file_it_did_not_create() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = write_table(dir.path(), 2, 2_000, 13, PLAIN, "");
    let options = opts(&[("rewrite-all", "true"), ("target-file-count", "4")]);
    let plan = plan_rewrite(
        &inputs,
        "geom",
        &HilbertSpec::wgs84(12).unwrap(),
        &options,
        &LocalFiles,
    )
    .unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let locator = CreateNewLocator(DirectoryStorage {
        dir: out.clone(),
        prefix: "x".into(),
    });
    // Another writer's file where the last task's first output would go.
    let last = plan
        .tasks
        .iter()
        .rfind(|t| t.class == RowClass::Regular)
        .unwrap();
    let partition = &plan.partitions[last.partition].partition;
    let theirs = locator.locate(partition, last.id, 0);
    std::fs::write(&theirs, b"not ours").unwrap();
    let e = execute(&plan, &locator).unwrap_err();
    assert!(e.to_string().contains("cannot create output file"), "{e}");
    assert_eq!(
        files_in(&out),
        vec![theirs.clone()],
        "ours are removed, theirs kept"
    );
    assert_eq!(std::fs::read(&theirs).unwrap(), b"not ours");
}

#[test]
fn plans_round_trip_through_json_and_tasks_run_separately() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = write_table(
        dir.path(),
        3,
        4_000,
        8,
        Mix {
            null_every: 10,
            big_every: 0,
        },
        "",
    );
    let options = opts(&[("rewrite-all", "true"), ("target-file-count", "4")]);
    let plan = plan_rewrite(
        &inputs,
        "geom",
        &HilbertSpec::wgs84(16).unwrap(),
        &options,
        &LocalFiles,
    )
    .unwrap();
    let json = plan.to_json().unwrap();
    let back = RewritePlan::from_json(&json).unwrap();
    assert_eq!(back, plan);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let mut added = Vec::new();
    for t in 0..plan.tasks.len() {
        let locator = DirectoryStorage {
            dir: out.clone(),
            prefix: format!("w{t}"),
        };
        added.extend(execute_tasks(&back, &[t], &locator).unwrap().added);
    }
    let together = run(&plan, &dir.path().join("together"));
    let paths = |v: &[geoberg_rewrite::OutputFile]| {
        v.iter()
            .map(|f| PathBuf::from(&f.location))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        checksums(&paths(&added)),
        checksums(&paths(&together.added))
    );
    assert_eq!(checksums(&paths(&added)).0, 12_000);
    assert!(RewritePlan::from_json("{").is_err());
}

#[test]
fn size_based_selection_skips_healthy_tidy_tables() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = write_table(dir.path(), 2, 1_000, 9, PLAIN, "");
    // Two files, min-input-files 5, no overlap rule triggered at depth threshold 1000.
    let options = opts(&[("min-overlap-depth", "1000")]);
    let plan = plan_rewrite(
        &inputs,
        "geom",
        &HilbertSpec::wgs84(10).unwrap(),
        &options,
        &LocalFiles,
    )
    .unwrap();
    assert!(plan.is_empty());
    let outcome = run(&plan, &dir.path().join("out"));
    assert_eq!(outcome.result.rewritten_data_files_count, 0);
    // The same files overlap completely: the clustering metric selects them.
    let plan = plan_rewrite(
        &inputs,
        "geom",
        &HilbertSpec::wgs84(10).unwrap(),
        &opts(&[("min-overlap-depth", "1.5")]),
        &LocalFiles,
    )
    .unwrap();
    assert_eq!(plan.partitions.len(), 1);
}

/// Rewrites an input file with row groups of `group_rows` rows and, when `stored` is given, the
/// two row-lineage columns (with their reserved field ids) holding `stored(id)`.
#[allow(clippy::type_complexity)]
fn with_lineage_columns(
    file: &InputFile,
    group_rows: usize,
    stored: Option<&dyn Fn(i64) -> (Option<i64>, Option<i64>)>,
) -> InputFile {
    let b = read(Path::new(&file.location));
    let mut fields: Vec<Field> = b
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    let mut columns = b.columns().to_vec();
    if let Some(stored) = stored {
        let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let (row_ids, seqs): (Vec<_>, Vec<_>) = ids.values().iter().map(|&i| stored(i)).unzip();
        fields.extend(geoberg_rewrite::lineage_fields());
        columns.push(Arc::new(Int64Array::from(row_ids)));
        columns.push(Arc::new(Int64Array::from(seqs)));
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(group_rows))
        .build();
    let mut w =
        ArrowWriter::try_new(File::create(&file.location).unwrap(), schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let mut out = file.clone();
    out.file_size_bytes = std::fs::metadata(&file.location).unwrap().len();
    out
}

type Lineage = (Option<i64>, Option<i64>);

/// Every row's (`_row_id`, `_last_updated_sequence_number`) as an Iceberg reader sees it: the
/// file's column where present and non-null, else `first_row_id + position` and the file's data
/// sequence number. Written here independently of the crate's own derivation.
fn reader_view(files: &[InputFile]) -> std::collections::BTreeMap<i64, Lineage> {
    let mut out = std::collections::BTreeMap::new();
    for f in files {
        let b = read(Path::new(&f.location));
        let schema = b.schema();
        let by_id = |want: &str| {
            schema.fields().iter().position(|x| {
                x.metadata().get("PARQUET:field_id").map(String::as_str) == Some(want)
            })
        };
        let col = |i: Option<usize>| {
            i.map(|i| {
                b.column(i)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .clone()
            })
        };
        let row_id = col(by_id("2147483540"));
        let seq = col(by_id("2147483539"));
        let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let lineage = f.lineage;
        for pos in 0..b.num_rows() {
            let stored = |c: &Option<Int64Array>| {
                c.as_ref().filter(|c| c.is_valid(pos)).map(|c| c.value(pos))
            };
            let r = stored(&row_id)
                .or_else(|| lineage.and_then(|l| l.first_row_id).map(|f| f + pos as i64));
            let s = stored(&seq).or(lineage.map(|l| l.data_sequence_number));
            assert!(out.insert(ids.value(pos), (r, s)).is_none());
        }
    }
    out
}

#[test]
fn row_lineage_is_kept_through_repeated_rewrites() {
    use geoberg_rewrite::RowLineage;
    let dir = tempfile::tempdir().unwrap();
    let mix = Mix {
        null_every: 97,
        big_every: 1009,
    };
    let mut inputs = write_table(dir.path(), 3, 12_000, 11, mix, "a");
    inputs.extend(write_table(dir.path(), 2, 4_000, 12, mix, "b"));
    // Input 0 was written by an earlier rewrite: it stores ids (for even row ids) and sequence
    // numbers (for a third of them); the others rely on inheritance. Several row groups each,
    // so that positions must be counted across them.
    let stored = |i: i64| {
        (
            (i % 2 == 0).then_some(5_000_000 + 3 * i),
            (i % 3 == 0).then_some(2),
        )
    };
    inputs[0] = with_lineage_columns(&inputs[0], 2_500, Some(&stored));
    inputs[1] = with_lineage_columns(&inputs[1], 3_000, None);
    for (k, f) in inputs.iter_mut().enumerate() {
        f.lineage = Some(RowLineage {
            // The last file has no first_row_id (from before an upgrade to v3).
            first_row_id: (k < 4).then_some(100_000 * k as i64),
            data_sequence_number: 10 + k as i64,
        });
    }
    let options = opts(&[
        ("rewrite-all", "true"),
        ("target-file-size-bytes", "200000"),
        ("max-memory-bytes", "16777216"),
        ("threads", "2"),
        ("row-group-rows", "4000"),
    ]);
    let curve = HilbertSpec::wgs84(16).unwrap();
    let plan = plan_rewrite(&inputs, "geom", &curve, &options, &LocalFiles).unwrap();
    let out = dir.path().join("out1");
    let first = run(&plan, &out);
    assert!(first.added.len() > 5, "{} files", first.added.len());
    let data_paths = |fs: &[PathBuf]| checksums(fs);
    let in_paths: Vec<PathBuf> = inputs.iter().map(|f| PathBuf::from(&f.location)).collect();
    let out_paths: Vec<PathBuf> = first
        .added
        .iter()
        .map(|f| PathBuf::from(&f.location))
        .collect();
    assert_eq!(
        data_paths(&in_paths),
        data_paths(&out_paths),
        "data unchanged"
    );

    let expected = reader_view(&inputs);
    // The outputs materialize every value: as new files with an unrelated first_row_id they
    // read the same (but for the rows whose ids were null, which stay null in the column).
    let as_inputs = |files: &[geoberg_rewrite::OutputFile], first_row_id: i64, seq: i64| {
        let mut next = first_row_id;
        files
            .iter()
            .map(|f| {
                let lineage = RowLineage {
                    first_row_id: Some(next),
                    data_sequence_number: seq,
                };
                next += f.record_count as i64;
                InputFile::new(f.location.clone(), f.file_size_bytes, f.record_count)
                    .with_partition(f.partition.0.clone())
                    .with_lineage(lineage)
            })
            .collect::<Vec<_>>()
    };
    let stored_view = |files: &[InputFile]| {
        let mut no_lineage = files.to_vec();
        for f in &mut no_lineage {
            f.lineage = None;
        }
        reader_view(&no_lineage)
    };
    let round1 = as_inputs(&first.added, 9_000_000, 77);
    assert_eq!(stored_view(&round1), expected);
    for f in &first.added {
        let b = read(Path::new(&f.location));
        let schema = b.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(
            names,
            [
                "id",
                "geom",
                "name",
                "value",
                "_row_id",
                "_last_updated_sequence_number"
            ]
        );
        let ids: Vec<Option<i32>> = f.columns.iter().map(|c| c.field_id).collect();
        assert_eq!(
            ids[4..],
            [Some(2_147_483_540), Some(2_147_483_539)],
            "reserved field ids in the Parquet schema"
        );
    }
    // Rows of the file without a first_row_id keep a null id; every other id is unique.
    let nulls = expected.values().filter(|(r, _)| r.is_none()).count();
    assert_eq!(nulls, 4_000);
    let mut seen = std::collections::HashSet::new();
    assert!(
        expected
            .values()
            .filter_map(|(r, _)| *r)
            .all(|r| seen.insert(r))
    );

    // A second rewrite of the rewritten files (which now carry the columns) keeps every
    // materialized value; the null ids are assigned from the new files' first_row_id, as a
    // reader of the first rewrite's files would have read them.
    let plan = plan_rewrite(&round1, "geom", &curve, &options, &LocalFiles).unwrap();
    let second = run(&plan, &dir.path().join("out2"));
    let round2 = as_inputs(&second.added, 20_000_000, 88);
    assert_eq!(stored_view(&round2), reader_view(&round1));
    let after = stored_view(&round2);
    for (id, v) in &expected {
        match v.0 {
            Some(_) => assert_eq!(&after[id], v),
            None => assert!(after[id].0.is_some_and(|r| r >= 9_000_000)),
        }
    }
}
