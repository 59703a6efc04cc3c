//! Column sorts, z-order and bin-pack rewrites, each checked against an ordering computed here
//! by brute force, independently of the crate's keys and routing.

use std::cmp::Ordering;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{Array, BinaryArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use geoberg_rewrite::{
    DirectoryStorage, HilbertSpec, InputFile, LocalFiles, RewriteOptions, RowOrder, SortColumn,
    ZOrderTerm, execute, interleave_bits, ordered_bytes, plan_rewrite_ordered,
};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use proptest::prelude::*;

mod common;

use common::{Rng, point_wkb};

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

/// One row as the test sees it.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    id: i64,
    point: Option<(f64, f64)>,
    name: Option<String>,
    value: Option<f64>,
}

/// Writes `files` files of `rows` rows: values with many ties and nulls, names sharing a
/// prefix longer than 8 bytes (so the full order decides past the prefix key), some null
/// geometries. Returns the inputs and their rows in input order.
fn write_inputs(dir: &Path, files: usize, rows: usize, seed: u64) -> (Vec<InputFile>, Vec<Row>) {
    let mut rng = Rng(seed);
    let mut inputs = Vec::new();
    let mut all = Vec::new();
    for f in 0..files {
        let batch_rows: Vec<Row> = (0..rows)
            .map(|r| Row {
                id: (f * rows + r) as i64,
                point: (!rng.next().is_multiple_of(13))
                    .then(|| (rng.unit() * 360.0 - 180.0, rng.unit() * 170.0 - 85.0)),
                name: (!rng.next().is_multiple_of(6))
                    .then(|| format!("station-{:03}", rng.next() % 40)),
                value: (!rng.next().is_multiple_of(9))
                    .then(|| ((rng.unit() * 20.0 - 10.0) * 4.0).round() / 4.0),
            })
            .collect();
        let wkb: Vec<Option<Vec<u8>>> = batch_rows
            .iter()
            .map(|r| r.point.map(|(x, y)| point_wkb(x, y)))
            .collect();
        let batch = RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(Int64Array::from_iter_values(
                    batch_rows.iter().map(|r| r.id),
                )),
                Arc::new(BinaryArray::from_iter(wkb.iter().map(|g| g.as_deref()))),
                Arc::new(StringArray::from_iter(
                    batch_rows.iter().map(|r| r.name.as_deref()),
                )),
                Arc::new(Float64Array::from_iter(batch_rows.iter().map(|r| r.value))),
            ],
        )
        .unwrap();
        let path = dir.join(format!("in-{f}.parquet"));
        let mut w = ArrowWriter::try_new(File::create(&path).unwrap(), schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        inputs.push(InputFile::new(
            path.display().to_string(),
            size,
            rows as u64,
        ));
        all.extend(batch_rows);
    }
    (inputs, all)
}

fn read_rows(path: &str) -> Vec<Row> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for b in reader {
        let b = b.unwrap();
        let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        let g = b.column(1).as_any().downcast_ref::<BinaryArray>().unwrap();
        let n = b.column(2).as_any().downcast_ref::<StringArray>().unwrap();
        let v = b.column(3).as_any().downcast_ref::<Float64Array>().unwrap();
        for r in 0..b.num_rows() {
            let point = g.is_valid(r).then(|| {
                let w = g.value(r);
                let f = |o: usize| f64::from_le_bytes(w[o..o + 8].try_into().unwrap());
                (f(5), f(13))
            });
            out.push(Row {
                id: id.value(r),
                point,
                name: n.is_valid(r).then(|| n.value(r).to_string()),
                value: v.is_valid(r).then(|| v.value(r)),
            });
        }
    }
    out
}

/// Rewrites with `order` into several files and returns the output rows in file order.
fn rewrite(dir: &Path, inputs: &[InputFile], order: &RowOrder) -> (Vec<Row>, usize) {
    let options = RewriteOptions::parse(
        [
            ("rewrite-all", "true"),
            ("target-file-count", "6"),
            ("row-group-rows", "700"),
        ],
        None,
    )
    .unwrap();
    let plan = plan_rewrite_ordered(
        inputs,
        "geom",
        &HilbertSpec::wgs84(16).unwrap(),
        order,
        &options,
        &LocalFiles,
    )
    .unwrap();
    // The plan survives JSON (it is shipped to workers).
    let plan = geoberg_rewrite::RewritePlan::from_json(&plan.to_json().unwrap()).unwrap();
    assert_eq!(&plan.order, order);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let outcome = execute(
        &plan,
        &DirectoryStorage {
            dir: out,
            prefix: "t".into(),
        },
    )
    .unwrap();
    let rows = outcome
        .added
        .iter()
        .flat_map(|f| read_rows(&f.location))
        .collect();
    (rows, outcome.added.len())
}

fn ids(rows: &[Row]) -> Vec<i64> {
    rows.iter().map(|r| r.id).collect()
}

/// The rows as a multiset (sorted by id, which is unique).
fn multiset(rows: &[Row]) -> Vec<Row> {
    let mut v = rows.to_vec();
    v.sort_by_key(|r| r.id);
    v
}

/// SQL ordering of one nullable value: direction, then where nulls go.
fn compare_nullable<T>(
    a: &Option<T>,
    b: &Option<T>,
    descending: bool,
    nulls_first: bool,
    cmp: impl Fn(&T, &T) -> Ordering,
) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) if nulls_first => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) if nulls_first => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(a), Some(b)) if descending => cmp(b, a),
        (Some(a), Some(b)) => cmp(a, b),
    }
}

#[test]
fn a_column_sort_writes_the_brute_force_order() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rows) = write_inputs(dir.path(), 4, 2500, 7);
    for (columns, name) in [
        (
            vec![
                SortColumn {
                    column: "value".into(),
                    descending: true,
                    nulls_first: false,
                },
                SortColumn {
                    column: "name".into(),
                    descending: false,
                    nulls_first: true,
                },
            ],
            "value DESC NULLS LAST, name ASC NULLS FIRST",
        ),
        (
            vec![
                SortColumn {
                    column: "name".into(),
                    descending: false,
                    nulls_first: false,
                },
                SortColumn {
                    column: "value".into(),
                    descending: false,
                    nulls_first: true,
                },
            ],
            "name ASC NULLS LAST, value ASC NULLS FIRST",
        ),
    ] {
        let out_dir = dir.path().join(name.replace([' ', ','], "_"));
        let order = RowOrder::Columns {
            columns: columns.clone(),
        };
        let (out, files) = rewrite(&out_dir, &inputs, &order);
        // Brute force: a stable sort of the input rows in input order by the order's columns.
        let mut expected = rows.clone();
        expected.sort_by(|a, b| {
            columns
                .iter()
                .map(|c| match c.column.as_str() {
                    "value" => {
                        compare_nullable(&a.value, &b.value, c.descending, c.nulls_first, |x, y| {
                            x.total_cmp(y)
                        })
                    }
                    "name" => {
                        compare_nullable(&a.name, &b.name, c.descending, c.nulls_first, |x, y| {
                            x.as_bytes().cmp(y.as_bytes())
                        })
                    }
                    other => unreachable!("{other}"),
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        });
        assert!(files > 1, "{name}: one output file tests no cut");
        assert_eq!(ids(&out), ids(&expected), "{name}");
        assert_eq!(multiset(&out), multiset(&rows), "{name}");
    }
}

/// The z-order reference: Iceberg's byte rules written out per value, bits interleaved through
/// a string of '0'/'1' characters (how Iceberg's `TestZOrderByteUtil` checks its interleave).
fn naive_zorder(dims: &[[u8; 8]]) -> String {
    let bits: Vec<String> = dims
        .iter()
        .map(|d| d.iter().map(|b| format!("{b:08b}")).collect())
        .collect();
    let mut out = String::new();
    for i in 0..64 {
        for b in &bits {
            out.push(b.as_bytes()[i] as char);
        }
    }
    out
}

fn naive_double(v: Option<f64>) -> [u8; 8] {
    match v {
        None => [0; 8],
        // Negative numbers: every bit flipped; others: the sign bit set.
        Some(v) if v.is_sign_negative() => (!v.to_bits()).to_be_bytes(),
        Some(v) => (v.to_bits() | (1 << 63)).to_be_bytes(),
    }
}

fn naive_string(v: &Option<String>) -> [u8; 8] {
    let mut b = [0u8; 8];
    if let Some(s) = v {
        let s = s.as_bytes();
        let n = s.len().min(8);
        b[..n].copy_from_slice(&s[..n]);
    }
    b
}

#[test]
fn a_zorder_writes_the_naive_interleave_order() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rows) = write_inputs(dir.path(), 3, 3000, 11);
    let order = RowOrder::ZOrder {
        terms: vec![
            ZOrderTerm {
                column: "geom".into(),
                geometry: true,
            },
            ZOrderTerm {
                column: "value".into(),
                geometry: false,
            },
            ZOrderTerm {
                column: "name".into(),
                geometry: false,
            },
        ],
    };
    let (out, files) = rewrite(dir.path(), &inputs, &order);
    let key = |r: &Row| {
        naive_zorder(&[
            naive_double(r.point.map(|p| p.0)),
            naive_double(r.point.map(|p| p.1)),
            naive_double(r.value),
            naive_string(&r.name),
        ])
    };
    let mut expected = rows.clone();
    expected.sort_by_cached_key(key);
    assert!(files > 1);
    assert_eq!(ids(&out), ids(&expected));
    assert_eq!(multiset(&out), multiset(&rows));
}

#[test]
fn binpack_keeps_the_input_order() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, rows) = write_inputs(dir.path(), 5, 1500, 3);
    let (out, files) = rewrite(dir.path(), &inputs, &RowOrder::InputOrder);
    assert!(files > 1);
    assert_eq!(out, rows);
}

#[test]
fn a_missing_sort_column_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (inputs, _) = write_inputs(dir.path(), 1, 10, 1);
    let order = RowOrder::Columns {
        columns: vec![SortColumn {
            column: "nope".into(),
            descending: false,
            nulls_first: true,
        }],
    };
    let options = RewriteOptions::parse([("rewrite-all", "true")], None).unwrap();
    let e = plan_rewrite_ordered(
        &inputs,
        "geom",
        &HilbertSpec::wgs84(16).unwrap(),
        &order,
        &options,
        &LocalFiles,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("'nope'"), "{e}");
}

/// Iceberg Java's `TestZOrderByteUtil` vectors for `interleaveBits`.
#[test]
fn interleave_matches_icebergs_test_vectors() {
    const I: u8 = 0b1111_1111;
    const IOIOIOIO: u8 = 0b1010_1010;
    const OIOIOIOI: u8 = 0b0101_0101;
    const OOOOIIII: u8 = 0b0000_1111;
    const OOOOOOOI: u8 = 0b0000_0001;
    const O: u8 = 0;
    // testInterleaveEmptyBits
    let empty = [[0u8; 10]; 4];
    let cols: Vec<&[u8]> = empty.iter().map(|c| &c[..]).collect();
    assert_eq!(interleave_bits(&cols, 40), vec![0u8; 40]);
    // testInterleaveFullBits
    let full: [&[u8]; 4] = [&[I, I], &[I], &[], &[I, I, I]];
    assert_eq!(interleave_bits(&full, 6), vec![I; 6]);
    // testInterleaveMixedBits
    let mixed: [&[u8]; 4] = [
        &[OOOOOOOI, I, O, OOOOIIII],
        &[OOOOOOOI, O, I],
        &[OOOOOOOI],
        &[OOOOOOOI],
    ];
    assert_eq!(
        interleave_bits(&mixed, 9),
        vec![
            O, O, O, OOOOIIII, IOIOIOIO, IOIOIOIO, OIOIOIOI, OIOIOIOI, OOOOIIII
        ]
    );
}

/// The string interleave of `TestZOrderByteUtil.interleaveStrings`: one character of each
/// string in turn, skipping strings that ran out.
fn interleave_strings(strings: &[String]) -> String {
    let longest = strings.iter().map(String::len).max().unwrap_or(0);
    let mut out = String::new();
    for i in 0..longest {
        for s in strings {
            if let Some(c) = s.as_bytes().get(i) {
                out.push(*c as char);
            }
        }
    }
    out
}

fn bit_string(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:08b}")).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn interleave_matches_the_string_reference(
        columns in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..20), 1..6),
    ) {
        let size: usize = columns.iter().map(Vec::len).sum();
        let refs: Vec<&[u8]> = columns.iter().map(Vec::as_slice).collect();
        let expected = interleave_strings(&columns.iter().map(|c| bit_string(c)).collect::<Vec<_>>());
        prop_assert_eq!(bit_string(&interleave_bits(&refs, size)), expected);
    }

    #[test]
    fn ordered_bytes_order_like_the_values(
        a in any::<i64>(), b in any::<i64>(),
        x in any::<f64>(), y in any::<f64>(),
        s in "\\PC{0,12}", t in "\\PC{0,12}",
    ) {
        let ints = ordered_bytes(&Int64Array::from(vec![a, b]), 8, "c").unwrap();
        prop_assert_eq!(ints[..8].cmp(&ints[8..]), a.cmp(&b));
        let i32s = ordered_bytes(&arrow_array::Int32Array::from(vec![a as i32, b as i32]), 8, "c").unwrap();
        prop_assert_eq!(i32s[..8].cmp(&i32s[8..]), (a as i32).cmp(&(b as i32)));
        let floats = ordered_bytes(&Float64Array::from(vec![x, y]), 8, "c").unwrap();
        prop_assert_eq!(floats[..8].cmp(&floats[8..]), x.total_cmp(&y));
        prop_assert_eq!(&floats[..8], &naive_double(Some(x))[..]);
        // Strings: their first 8 bytes, zero-padded, never out of order.
        let strings = ordered_bytes(&StringArray::from(vec![s.as_str(), t.as_str()]), 8, "c").unwrap();
        if s.as_bytes() < t.as_bytes() {
            prop_assert!(strings[..8] <= strings[8..]);
        }
        prop_assert_eq!(&strings[..8], &naive_string(&Some(s.clone()))[..]);
    }
}
