//! The rewrite's invariants as properties, over random inputs (several Parquet files of points
//! and boxes, with null, empty and oversized geometries, in random partitions), random options
//! (sizes, file counts, `rewrite-all`, precision, row groups, threads, codecs) and random memory
//! budgets, many small enough to spill:
//!
//! - the multiset of rows out is the multiset of rows in (whole rows, every column);
//! - rows are sorted by Hilbert key within each file (ties in input order), and each file's
//!   reported key range is its rows' first and last key;
//! - the files of one partition and class have disjoint, ordered key ranges;
//! - null geometries land in `Empty` files, oversized ones (by the plan's rule) in `Oversized`
//!   files, and all others in `Regular` files; empty geometries join the `Regular` files (or
//!   `Empty` ones when a batch has no located row), so that every file but a file of nulls has
//!   a located row and bounds;
//! - the peak bytes buffered while routing stay within the memory budget.
//!
//! The oracles are computed here, not by the crate: each row's bbox comes from the geometry the
//! test generated (looked up by id), its key from `geoberg_hilbert::HilbertCurve::encode` of
//! the bbox centre, and the rows in from the generated values.
//!
//! `PROPTEST_CASES` raises the number of cases (default 40, about 15 s here in a debug build).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{Array, BinaryArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use geoberg_hilbert::{Bounds, HilbertCurve};
use geoberg_rewrite::{
    DirectoryStorage, HilbertSpec, InputFile, LocalFiles, RewriteOptions, RewriteOutcome,
    RewritePlan, RowClass, execute, plan_rewrite,
};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use proptest::prelude::*;

/// A generated geometry; its bbox is known without decoding WKB.
#[derive(Debug, Clone, Copy)]
enum Geom {
    Null,
    EmptyPoint,
    EmptyPolygon,
    Point(f64, f64),
    /// An axis-aligned box polygon: min corner, width, height.
    Box(f64, f64, f64, f64),
}

impl Geom {
    fn wkb(self) -> Option<Vec<u8>> {
        let point = |x: f64, y: f64| {
            let mut w = vec![1u8, 1, 0, 0, 0];
            w.extend(x.to_le_bytes());
            w.extend(y.to_le_bytes());
            w
        };
        match self {
            Geom::Null => None,
            Geom::EmptyPoint => Some(point(f64::NAN, f64::NAN)),
            Geom::EmptyPolygon => Some(vec![1, 3, 0, 0, 0, 0, 0, 0, 0]),
            Geom::Point(x, y) => Some(point(x, y)),
            Geom::Box(x0, y0, w, h) => {
                let (x1, y1) = (x0 + w, y0 + h);
                let mut b = vec![1u8, 3, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0];
                for (x, y) in [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)] {
                    b.extend(x.to_le_bytes());
                    b.extend(y.to_le_bytes());
                }
                Some(b)
            }
        }
    }

    /// (min x, min y, max x, max y), `None` for null and empty geometries.
    fn bbox(self) -> Option<[f64; 4]> {
        match self {
            Geom::Null | Geom::EmptyPoint | Geom::EmptyPolygon => None,
            Geom::Point(x, y) => Some([x, y, x, y]),
            Geom::Box(x0, y0, w, h) => Some([x0, y0, x0 + w, y0 + h]),
        }
    }
}

#[derive(Debug, Clone)]
struct Row {
    geom: Geom,
    name: Option<String>,
    value: Option<f64>,
}

#[derive(Debug, Clone)]
struct FileSpec {
    partition: &'static str,
    rows: Vec<Row>,
}

#[derive(Debug, Clone)]
struct Case {
    files: Vec<FileSpec>,
    precision: u32,
    options: Vec<(&'static str, String)>,
    /// Set on the parsed options directly: the parser's 16 MiB floor guards users, and inputs
    /// this small only spill below it.
    max_memory_bytes: u64,
}

fn geom() -> impl Strategy<Value = Geom> {
    // A few fixed spots, so that some rows share keys (ties) at any precision.
    let spot =
        (0usize..4).prop_map(|i| [(10.0, 45.0), (-120.5, 33.25), (0.0, 0.0), (179.0, -89.0)][i]);
    let point = prop_oneof![
        3 => (-180.0f64..180.0, -90.0f64..90.0),
        1 => spot,
    ];
    prop_oneof![
        1 => Just(Geom::Null),
        1 => Just(Geom::EmptyPoint),
        1 => Just(Geom::EmptyPolygon),
        12 => point.prop_map(|(x, y)| Geom::Point(x, y)),
        // Small boxes (regular) and large ones (oversized against a multi-file partition).
        3 => (0.0f64..2.0, 0.0f64..2.0, 0.0f64..1.0, 0.0f64..1.0).prop_map(|(w, h, fx, fy)| {
            Geom::Box(-180.0 + fx * (360.0 - w), -90.0 + fy * (180.0 - h), w, h)
        }),
        1 => (20.0f64..200.0, 20.0f64..120.0, 0.0f64..1.0, 0.0f64..1.0).prop_map(|(w, h, fx, fy)| {
            Geom::Box(-180.0 + fx * (360.0 - w), -90.0 + fy * (180.0 - h), w, h)
        }),
    ]
}

fn row() -> impl Strategy<Value = Row> {
    (
        geom(),
        proptest::option::weighted(0.8, "[a-z]{0,12}"),
        proptest::option::weighted(0.85, -1e6f64..1e6),
    )
        .prop_map(|(geom, name, value)| Row { geom, name, value })
}

fn case() -> impl Strategy<Value = Case> {
    let file = (
        prop_oneof![Just("a"), Just("b"), Just("c")],
        proptest::collection::vec(row(), 1..400),
    )
        .prop_map(|(partition, rows)| FileSpec { partition, rows });
    let sizing = prop_oneof![
        3 => (500u64..60_000).prop_map(|b| Some(("target-file-size-bytes", b.to_string()))),
        2 => (1usize..20).prop_map(|n| Some(("target-file-count", n.to_string()))),
        1 => Just(None),
    ];
    // Below 1 the planner expects smaller outputs than it gets, so tasks roll into several files.
    let compression_factor = prop_oneof![2 => Just("1.0"), 1 => Just("0.25"), 2 => Just("0.05")];
    (
        proptest::collection::vec(file, 1..6),
        // Coarse curves often: many rows share a key, at chunk, task and file boundaries.
        prop_oneof![1 => 1u32..=3, 2 => 4u32..=20],
        sizing,
        any::<bool>(),
        1usize..600,
        1usize..=2,
        (
            prop_oneof![Just("zstd"), Just("uncompressed")],
            compression_factor,
        ),
        // Budgets log-uniform from 1 KiB (every piece spills) to 64 MiB (nothing does), most
        // below the few hundred KiB the inputs take in memory.
        prop_oneof![3 => 10u32..18, 1 => 18u32..26]
            .prop_flat_map(|e| (Just(e), 0.0f64..1.0))
            .prop_map(|(e, f)| ((1u64 << e) as f64 * (1.0 + f)) as u64),
    )
        .prop_map(
            |(files, precision, sizing, rewrite_all, row_group_rows, threads, codecs, budget)| {
                let (codec, factor) = codecs;
                let mut options = vec![
                    ("rewrite-all", rewrite_all.to_string()),
                    ("row-group-rows", row_group_rows.to_string()),
                    ("threads", threads.to_string()),
                    ("compression-codec", codec.to_string()),
                    ("compression-factor", factor.to_string()),
                ];
                options.extend(sizing);
                Case {
                    files,
                    precision,
                    options,
                    max_memory_bytes: budget,
                }
            },
        )
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

/// A whole row as read back: id, WKB, name, value bits.
type Tuple = (i64, Option<Vec<u8>>, Option<String>, Option<u64>);

/// What the test knows of each generated row, by id: the row, its geometry, its partition.
type Generated = HashMap<i64, (Tuple, Geom, String)>;

/// Writes the case's files; returns them as inputs, and what was generated.
fn write_inputs(dir: &Path, case: &Case) -> (Vec<InputFile>, Generated) {
    let mut inputs = Vec::new();
    let mut rows = HashMap::new();
    let mut next_id = 0i64;
    for (f, spec) in case.files.iter().enumerate() {
        let ids: Vec<i64> = (next_id..next_id + spec.rows.len() as i64).collect();
        next_id += spec.rows.len() as i64;
        let wkb: Vec<Option<Vec<u8>>> = spec.rows.iter().map(|r| r.geom.wkb()).collect();
        let batch = RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(Int64Array::from(ids.clone())),
                Arc::new(BinaryArray::from_iter(wkb.iter().map(|g| g.as_deref()))),
                Arc::new(StringArray::from_iter(
                    spec.rows.iter().map(|r| r.name.as_deref()),
                )),
                Arc::new(Float64Array::from_iter(spec.rows.iter().map(|r| r.value))),
            ],
        )
        .unwrap();
        let path = dir.join(format!("in-{f}.parquet"));
        let mut w = ArrowWriter::try_new(File::create(&path).unwrap(), schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        inputs.push(
            InputFile::new(path.display().to_string(), size, spec.rows.len() as u64)
                .with_partition(spec.partition),
        );
        for ((id, r), g) in ids.iter().zip(&spec.rows).zip(wkb) {
            let tuple = (*id, g, r.name.clone(), r.value.map(f64::to_bits));
            rows.insert(*id, (tuple, r.geom, spec.partition.to_string()));
        }
    }
    (inputs, rows)
}

fn read_rows(path: &Path) -> Vec<Tuple> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for batch in reader {
        let b = batch.unwrap();
        assert_eq!(
            b.schema().fields(),
            schema().fields(),
            "{}: schema changed",
            path.display()
        );
        let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let g = b.column(1).as_any().downcast_ref::<BinaryArray>().unwrap();
        let n = b.column(2).as_any().downcast_ref::<StringArray>().unwrap();
        let v = b.column(3).as_any().downcast_ref::<Float64Array>().unwrap();
        for r in 0..b.num_rows() {
            out.push((
                id.value(r),
                g.is_valid(r).then(|| g.value(r).to_vec()),
                n.is_valid(r).then(|| n.value(r).to_string()),
                v.is_valid(r).then(|| v.value(r).to_bits()),
            ));
        }
    }
    out
}

/// Runs the case and checks every invariant; `Err` names the first one broken.
fn check(case: &Case) -> Result<(RewritePlan, RewriteOutcome), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, by_id) = write_inputs(dir.path(), case);
    let mut options =
        RewriteOptions::parse(case.options.iter().map(|(k, v)| (*k, v.as_str())), None).unwrap();
    options.max_memory_bytes = case.max_memory_bytes;
    options.spill_dir = Some(dir.path().to_path_buf());
    let spec = HilbertSpec::wgs84(case.precision).unwrap();
    let plan = plan_rewrite(&inputs, "geom", &spec, &options, &LocalFiles).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let outcome = execute(
        &plan,
        &DirectoryStorage {
            dir: out.clone(),
            prefix: "p".into(),
        },
    )
    .unwrap();

    // The budget.
    prop_assert!(
        outcome.peak_buffered_bytes <= case.max_memory_bytes,
        "peak buffered {} bytes > budget {}",
        outcome.peak_buffered_bytes,
        case.max_memory_bytes
    );

    // Rows in = rows out, as multisets of whole rows.
    let mut rows_in: Vec<Tuple> = Vec::new();
    for f in &outcome.rewritten {
        rows_in.extend(read_rows(Path::new(&f.location)));
    }
    let mut rows_out = Vec::new();
    let mut files = Vec::new();
    for f in &outcome.added {
        let rows = read_rows(Path::new(&f.location));
        prop_assert_eq!(rows.len() as u64, f.record_count);
        prop_assert!(!rows.is_empty(), "empty output file");
        rows_out.extend(rows.iter().cloned());
        files.push((f, rows));
    }
    // The rows read back from the inputs are the generated ones.
    for r in &rows_in {
        prop_assert_eq!(r, &by_id[&r.0].0);
    }
    rows_in.sort();
    rows_out.sort();
    prop_assert_eq!(&rows_out, &rows_in, "rows out differ from rows in");
    prop_assert_eq!(
        std::fs::read_dir(&out).unwrap().count(),
        outcome.added.len(),
        "stray files in the output directory"
    );

    // Classes, keys and ranges, from the generated geometries and an independent curve.
    let curve = HilbertCurve::new(
        case.precision as u8,
        Bounds::new(-180.0, -90.0, 180.0, 90.0).unwrap(),
    )
    .unwrap();
    let partition_plan: BTreeMap<&str, &geoberg_rewrite::PartitionPlan> = plan
        .partitions
        .iter()
        .map(|p| (p.partition.0.as_str(), p))
        .collect();
    // Per (partition, class): the key ranges of its files, in output order.
    let mut ranges: BTreeMap<(String, RowClass), Vec<(u64, u64)>> = BTreeMap::new();
    for (f, rows) in &files {
        let part = partition_plan[f.partition.0.as_str()];
        let mut keys = Vec::with_capacity(rows.len());
        let all_null = rows.iter().all(|r| matches!(by_id[&r.0].1, Geom::Null));
        if !all_null && f.class != RowClass::Empty {
            prop_assert!(
                f.bbox.is_some(),
                "{:?} file {} has no bounds",
                f.class,
                f.location
            );
        }
        for r in rows {
            let (_, geom, partition) = &by_id[&r.0];
            prop_assert_eq!(partition, &f.partition.0, "row {} left its partition", r.0);
            let class = match geom.bbox() {
                None if matches!(geom, Geom::Null) => RowClass::Empty,
                // An empty geometry borrows a located row's key when its batch has one.
                None if f.class == RowClass::Regular => RowClass::Regular,
                None => RowClass::Empty,
                Some([x0, y0, x1, y1]) => {
                    let oversized = part
                        .oversize
                        .is_some_and(|o| x1 - x0 > o.max_width || y1 - y0 > o.max_height);
                    keys.push((curve.encode(0.5 * (x0 + x1), 0.5 * (y0 + y1)).unwrap(), r.0));
                    if oversized {
                        RowClass::Oversized
                    } else {
                        RowClass::Regular
                    }
                }
            };
            prop_assert_eq!(
                class,
                f.class,
                "row {} ({:?}) in a {:?} file",
                r.0,
                geom,
                f.class
            );
        }
        if f.class == RowClass::Empty {
            continue;
        }
        // Sorted by key, ties in input order (ids grow with input and row ordinal).
        if let Some(w) = keys.windows(2).find(|w| w[0] >= w[1]) {
            return Err(TestCaseError::fail(format!(
                "rows not sorted by (key, input order) in {}: {:?} then {:?}",
                f.location, w[0], w[1]
            )));
        }
        let (first, last) = (keys[0].0, keys[keys.len() - 1].0);
        prop_assert_eq!((f.key_range.first, f.key_range.last), (first, last));
        ranges
            .entry((f.partition.0.clone(), f.class))
            .or_default()
            .push((first, last));
    }
    for ((partition, class), r) in &ranges {
        if let Some(w) = r.windows(2).find(|w| w[0].1 >= w[1].0) {
            return Err(TestCaseError::fail(format!(
                "{class:?} files of partition '{partition}' overlap or are out of order: key \
                 range {:?} then {:?}",
                w[0], w[1]
            )));
        }
    }
    Ok((plan, outcome))
}

fn cases() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    ProptestConfig {
        // Integration tests have no source file to persist regressions beside; a failure prints
        // its minimal case instead.
        failure_persistence: None,
        ..ProptestConfig::with_cases(cases)
    }
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn rewrites_keep_rows_sort_them_and_stay_within_the_budget(case in case()) {
        check(&case)?;
    }
}

/// The spill path is taken for sure: every row through runs, each buffered piece within 4 KiB.
#[test]
fn a_tiny_budget_spills_every_partition_and_keeps_every_invariant() {
    let rows = |n: usize, dx: f64| -> Vec<Row> {
        (0..n)
            .map(|i| Row {
                geom: match i % 50 {
                    0 => Geom::Null,
                    1 => Geom::Box(-170.0, -80.0, 150.0, 100.0),
                    _ => Geom::Point(
                        (i as f64 * 0.37 + dx) % 360.0 - 180.0,
                        (i as f64 * 0.11) % 180.0 - 90.0,
                    ),
                },
                name: Some(format!("n{i}")),
                value: Some(i as f64),
            })
            .collect()
    };
    let case = Case {
        files: vec![
            FileSpec {
                partition: "a",
                rows: rows(2000, 0.0),
            },
            FileSpec {
                partition: "a",
                rows: rows(1500, 7.0),
            },
            FileSpec {
                partition: "b",
                rows: rows(800, 3.0),
            },
        ],
        precision: 12,
        options: vec![
            ("rewrite-all", "true".into()),
            ("target-file-count", "6".into()),
            ("row-group-rows", "128".into()),
            ("threads", "2".into()),
        ],
        max_memory_bytes: 4096,
    };
    let (plan, outcome) = check(&case).unwrap();
    assert!(outcome.spilled_bytes > 0, "a 4 KiB budget must spill");
    assert!(outcome.peak_buffered_bytes <= 4096);
    assert!(plan.partitions.iter().any(|p| p.oversize.is_some()));
    for class in [RowClass::Regular, RowClass::Oversized, RowClass::Empty] {
        assert!(
            outcome.added.iter().any(|f| f.class == class),
            "no {class:?} file"
        );
    }
}

/// A file that reaches its roll size in the middle of a run of equal keys stays open until the
/// key changes: on a 4-cell curve, ~10 files over 4 keys would otherwise share keys.
#[test]
fn files_roll_only_where_the_key_changes() {
    let rows: Vec<Row> = (0..2000)
        .map(|i| Row {
            geom: Geom::Point((i * 7 % 360) as f64 - 179.5, (i * 3 % 180) as f64 - 89.5),
            name: None,
            value: Some(i as f64),
        })
        .collect();
    let case = Case {
        files: vec![FileSpec {
            partition: "a",
            rows,
        }],
        precision: 1,
        options: vec![
            ("rewrite-all", "true".into()),
            ("target-file-size-bytes", "3000".into()),
            ("compression-factor", "0.05".into()),
            ("row-group-rows", "50".into()),
            ("threads", "1".into()),
        ],
        max_memory_bytes: 64 << 20,
    };
    let (_, outcome) = check(&case).unwrap();
    let regular = outcome
        .added
        .iter()
        .filter(|f| f.class == RowClass::Regular);
    assert!(
        regular.count() >= 4,
        "{} files: the case must roll",
        outcome.added.len()
    );
}
