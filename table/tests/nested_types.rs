//! Every Iceberg column type through create, append, metrics, scan, rewrite and
//! `SHOW CREATE TABLE`: structs, lists and maps with their own field ids, decimals, uuids,
//! fixed, time and nanosecond timestamps, beside a geometry column.
//!
//! Oracles: the rows as the test built them (printed with Arrow's display, independent of the
//! table's code), counts and minima/maxima computed from those rows, and the Parquet footers
//! read with the `parquet` crate.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, Int32Builder, ListBuilder, MapBuilder, StringBuilder};
use arrow_array::{
    Array, ArrayRef, BinaryArray, Decimal128Array, FixedSizeBinaryArray, Int32Array, Int64Array,
    RecordBatch, StringArray, StructArray, Time64MicrosecondArray, TimestampNanosecondArray,
};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::{sqlite_catalog, wkb_point};
use geoberg_table::{
    BBox, Column, CreateTable, DataType, ROW_GROUP_ROWS_PROPERTY, Table, TableIdent,
};
use iceberg::spec::{Datum, PrimitiveLiteral};
use parquet::basic::LogicalType;
use parquet::file::reader::{FileReader, SerializedFileReader};

const ROWS: usize = 300;

fn columns() -> Vec<Column> {
    vec![
        Column::new("id", DataType::Long).required(),
        Column::new(
            "s",
            DataType::struct_of([
                Column::new("a", DataType::Int),
                Column::new("b", DataType::String).required(),
            ]),
        ),
        Column::new("tags", DataType::list(DataType::String)),
        Column::new("attrs", DataType::map(DataType::String, DataType::Double)),
        Column::new("price", DataType::decimal(10, 2)),
        Column::new("big", DataType::decimal(38, 6)),
        Column::new("uid", DataType::Uuid),
        Column::new("raw", DataType::Fixed(4)),
        Column::new("t", DataType::Time),
        Column::new("ns", DataType::TimestampNs),
        Column::new("geom", DataType::geometry(4326)),
    ]
}

/// The rows, as a batch in the shapes a user builds (no field ids, Arrow's default names).
fn batch(ids: std::ops::Range<usize>) -> RecordBatch {
    let n = ids.len();
    let ids: Vec<usize> = ids.collect();
    let a: Int32Array = ids
        .iter()
        .map(|&i| (i % 7 != 3).then_some(i as i32 * 3 - 400))
        .collect();
    let b = StringArray::from_iter_values(ids.iter().map(|i| format!("name-{i:04}")));
    let s = StructArray::from(vec![
        (
            Arc::new(Field::new("a", ArrowType::Int32, true)),
            Arc::new(a) as ArrayRef,
        ),
        (
            Arc::new(Field::new("b", ArrowType::Utf8, false)),
            Arc::new(b) as ArrayRef,
        ),
    ]);
    let mut tags = ListBuilder::new(StringBuilder::new());
    for &i in &ids {
        if i % 5 == 0 {
            tags.append_null();
        } else {
            for k in 0..i % 3 {
                tags.values().append_value(format!("t{k}"));
            }
            tags.append(true);
        }
    }
    let mut attrs = MapBuilder::new(None, StringBuilder::new(), Float64Builder::new());
    for &i in &ids {
        attrs.keys().append_value("w");
        attrs.values().append_value(i as f64 / 2.0);
        if i % 4 == 0 {
            attrs.keys().append_value("h");
            attrs.values().append_null();
        }
        attrs.append(true).unwrap();
    }
    let price = Decimal128Array::from_iter_values(ids.iter().map(|&i| i as i128 * 125 - 9_999))
        .with_precision_and_scale(10, 2)
        .unwrap();
    let big =
        Decimal128Array::from_iter_values(ids.iter().map(|&i| (i as i128 - 150) * 10i128.pow(30)))
            .with_precision_and_scale(38, 6)
            .unwrap();
    let uid = FixedSizeBinaryArray::try_from_iter(
        ids.iter()
            .map(|&i| uuid::Uuid::from_u128(i as u128 * 0x1234_5678_9abc).into_bytes()),
    )
    .unwrap();
    let raw = FixedSizeBinaryArray::try_from_sparse_iter_with_size(
        ids.iter()
            .map(|&i| (i % 9 != 0).then(|| (i as u32 * 77).to_be_bytes())),
        4,
    )
    .unwrap();
    let t = Time64MicrosecondArray::from_iter_values(ids.iter().map(|&i| i as i64 * 1_000_003));
    let ns = TimestampNanosecondArray::from_iter_values(
        ids.iter()
            .map(|&i| 1_700_000_000_000_000_000 + i as i64 * 999),
    );
    let geom = BinaryArray::from_iter_values(
        ids.iter()
            .map(|&i| wkb_point((i % 30) as f64, (i / 30) as f64)),
    );
    let srid = HashMap::from([("srid".to_string(), "4326".to_string())]);
    let arrays: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(ids.iter().map(|&i| i as i64))),
        Arc::new(s),
        Arc::new(tags.finish()),
        Arc::new(attrs.finish()),
        Arc::new(price),
        Arc::new(big),
        Arc::new(uid),
        Arc::new(raw),
        Arc::new(t),
        Arc::new(ns),
        Arc::new(geom),
    ];
    let names = [
        "id", "s", "tags", "attrs", "price", "big", "uid", "raw", "t", "ns", "geom",
    ];
    let fields: Vec<Field> = names
        .iter()
        .zip(&arrays)
        .map(|(name, a)| {
            let f = Field::new(*name, a.data_type().clone(), *name != "id");
            if *name == "geom" {
                f.with_metadata(srid.clone())
            } else {
                f
            }
        })
        .collect();
    assert_eq!(n, arrays[0].len());
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

/// Every row as text, keyed by id: the values as Arrow prints them.
fn rows(batches: &[RecordBatch]) -> BTreeMap<i64, Vec<String>> {
    let mut out = BTreeMap::new();
    let options = FormatOptions::default().with_null("NULL");
    for b in batches {
        let ids = b
            .column_by_name("id")
            .unwrap()
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        let formatters: Vec<_> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for r in 0..b.num_rows() {
            out.insert(
                ids.value(r),
                formatters.iter().map(|f| f.value(r).to_string()).collect(),
            );
        }
    }
    out
}

fn create(dir: &std::path::Path, name: &str) -> Table {
    CreateTable::new(columns())
        .property(ROW_GROUP_ROWS_PROPERTY, "40")
        .property("write.metadata.metrics.default", "full")
        .create(
            sqlite_catalog(dir),
            &TableIdent::new("test_db", name).unwrap(),
        )
        .unwrap()
}

fn field_id(table: &Table, name: &str) -> i32 {
    table
        .metadata()
        .current_schema()
        .field_by_name(name)
        .unwrap_or_else(|| panic!("no field {name}"))
        .id
}

#[test]
fn show_create_table_parses_back_to_the_same_table() {
    let dir = tempfile::tempdir().unwrap();
    let table = create(dir.path(), "nested");
    let ddl = table.show_create_table("geoberg");
    for part in [
        "s STRUCT<a: INT, b: STRING NOT NULL>",
        "tags ARRAY<STRING>",
        "attrs MAP<STRING, DOUBLE>",
        "price DECIMAL(10, 2)",
        "big DECIMAL(38, 6)",
        "uid UUID",
        "raw FIXED(4)",
        "t TIME",
        "ns TIMESTAMP_NTZ_NS",
        "geom GEOMETRY(4326)",
    ] {
        assert!(ddl.contains(part), "{part} missing from\n{ddl}");
    }
    let again = ddl.replace("geoberg.test_db.nested", "test_db.again");
    let geoberg_sql::Statement::CreateTable(request) = geoberg_sql::parse(&again).unwrap() else {
        panic!("{again}")
    };
    let copy = CreateTable::from_request(&request)
        .unwrap()
        .create(
            table.catalog().clone(),
            &TableIdent::new("test_db", "again").unwrap(),
        )
        .unwrap();
    assert_eq!(
        copy.show_create_table("geoberg")
            .replace("test_db.again", "test_db.nested"),
        ddl
    );
    // Every field has its own id, nested ones included, and the types are Iceberg's.
    let schema = table.metadata().current_schema();
    let ids: Vec<i32> = schema.field_id_to_name_map().keys().copied().collect();
    let unique: std::collections::HashSet<i32> = ids.iter().copied().collect();
    assert_eq!(ids.len(), unique.len());
    for name in ["s.a", "s.b", "tags.element", "attrs.key", "attrs.value"] {
        assert!(schema.field_by_name(name).is_some(), "{name}");
    }
    // The same types through DataType::parse (Iceberg's names).
    let parsed = DataType::parse("struct<a: int, b: string not null>").unwrap();
    assert_eq!(parsed, columns()[1].data_type);
    assert_eq!(
        DataType::parse("map<string, double>").unwrap(),
        columns()[3].data_type
    );
    assert_eq!(DataType::parse("fixed[4]").unwrap(), DataType::Fixed(4));
    let e = DataType::parse("list<geometry(4326)>")
        .unwrap_err()
        .to_string();
    assert!(e.contains("top-level"), "{e}");
    let e = CreateTable::new([Column::new(
        "s",
        DataType::struct_of([Column::new("g", DataType::geometry(4326))]),
    )])
    .create(
        table.catalog().clone(),
        &TableIdent::new("test_db", "bad").unwrap(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("\"s.g\"") && e.contains("top-level"), "{e}");
}

#[test]
fn nested_columns_append_scan_and_rewrite_with_their_values_and_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let table = create(dir.path(), "nested");
    let input = [batch(0..ROWS / 2), batch(ROWS / 2..ROWS)];
    let (table, report) = table.append(&input).unwrap();
    assert_eq!(report.rows, ROWS as u64);
    let expected = rows(&input);
    let (scanned, _) = table.scan().execute().unwrap();
    assert_eq!(rows(&scanned), expected);

    // Metrics: counts for every leaf; bounds for struct leaves and primitives, none for
    // list elements and map entries (Iceberg Java stores none there).
    let files = table.data_files().unwrap();
    assert_eq!(files.len(), 1);
    let f = &files[0];
    let id = |n: &str| field_id(&table, n);
    let a_values: Vec<Option<i32>> = (0..ROWS)
        .map(|i| (i % 7 != 3).then_some(i as i32 * 3 - 400))
        .collect();
    assert_eq!(f.value_counts()[&id("s.a")], ROWS as u64);
    assert_eq!(
        f.null_value_counts()[&id("s.a")],
        a_values.iter().filter(|v| v.is_none()).count() as u64
    );
    let a_min = a_values.iter().flatten().min().unwrap();
    let a_max = a_values.iter().flatten().max().unwrap();
    assert_eq!(f.lower_bounds()[&id("s.a")], Datum::int(*a_min));
    assert_eq!(f.upper_bounds()[&id("s.a")], Datum::int(*a_max));
    assert_eq!(f.lower_bounds()[&id("s.b")], Datum::string("name-0000"));
    let tag_values: usize = (0..ROWS)
        .map(|i| if i % 5 == 0 { 1 } else { (i % 3).max(1) })
        .sum();
    assert_eq!(f.value_counts()[&id("tags.element")], tag_values as u64);
    let entries: usize = (0..ROWS).map(|i| if i % 4 == 0 { 2 } else { 1 }).sum();
    assert_eq!(f.value_counts()[&id("attrs.key")], entries as u64);
    assert_eq!(
        f.null_value_counts()[&id("attrs.value")],
        (0..ROWS).filter(|i| i % 4 == 0).count() as u64
    );
    for leaf in ["tags.element", "attrs.key", "attrs.value"] {
        assert!(!f.lower_bounds().contains_key(&id(leaf)), "{leaf}");
        assert!(!f.upper_bounds().contains_key(&id(leaf)), "{leaf}");
    }
    let decimal = |d: &Datum| match d.literal() {
        PrimitiveLiteral::Int128(v) => *v,
        other => panic!("{other:?}"),
    };
    assert_eq!(decimal(&f.lower_bounds()[&id("price")]), -9_999);
    assert_eq!(
        decimal(&f.upper_bounds()[&id("price")]),
        (ROWS as i128 - 1) * 125 - 9_999
    );
    assert_eq!(
        decimal(&f.lower_bounds()[&id("big")]),
        -150 * 10i128.pow(30)
    );
    assert_eq!(
        decimal(&f.upper_bounds()[&id("big")]),
        (ROWS as i128 - 151) * 10i128.pow(30)
    );
    assert_eq!(
        f.upper_bounds()[&id("uid")],
        Datum::uuid(uuid::Uuid::from_u128((ROWS as u128 - 1) * 0x1234_5678_9abc))
    );
    assert_eq!(f.lower_bounds()[&id("t")], Datum::time_micros(0).unwrap());
    assert_eq!(
        f.upper_bounds()[&id("ns")],
        Datum::timestamp_nanos(1_700_000_000_000_000_000 + (ROWS as i64 - 1) * 999)
    );
    let raw_max = (0..ROWS)
        .filter(|i| i % 9 != 0)
        .map(|i| (i as u32 * 77).to_be_bytes())
        .max()
        .unwrap();
    assert_eq!(
        f.upper_bounds()[&id("raw")].literal(),
        &PrimitiveLiteral::Binary(raw_max.to_vec())
    );

    // The Parquet file: every leaf carries its field id, the uuid leaf the UUID logical type.
    let path = f.file_path().strip_prefix("file://").unwrap();
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let descr = reader.metadata().file_metadata().schema_descr();
    let mut leaf_ids = Vec::new();
    for i in 0..descr.num_columns() {
        let c = descr.column(i);
        let info = c.self_type().get_basic_info();
        assert!(info.has_id(), "leaf {} has no field id", c.path());
        leaf_ids.push(info.id());
        if c.path().string() == "uid" {
            assert_eq!(c.logical_type_ref(), Some(&LogicalType::Uuid));
        }
    }
    let mut expected_ids: Vec<i32> = [
        "id",
        "s.a",
        "s.b",
        "tags.element",
        "attrs.key",
        "attrs.value",
        "price",
        "big",
        "uid",
        "raw",
        "t",
        "ns",
        "geom",
    ]
    .iter()
    .map(|n| id(n))
    .collect();
    expected_ids.sort_unstable();
    leaf_ids.sort_unstable();
    assert_eq!(leaf_ids, expected_ids);

    // A window scan prunes row groups on the geometry leaf (after the nested leaves) and
    // returns exactly the rows inside.
    let window = BBox::new(2.0, 1.0, 5.0, 3.0);
    let (hits, explain) = table.scan().with_window("geom", window).execute().unwrap();
    let inside: Vec<i64> = (0..ROWS)
        .filter(|i| (2..=5).contains(&(i % 30)) && (1..=3).contains(&(i / 30)))
        .map(|i| i as i64)
        .collect();
    assert_eq!(rows(&hits).keys().copied().collect::<Vec<_>>(), inside);
    assert!(explain.row_groups_skipped > 0, "{explain}");

    // CREATE SPATIAL INDEX copies whole batches: same rows, nested metrics still there.
    let (table, _) = table.rewrite().hilbert("geom", 8).execute().unwrap();
    let (scanned, _) = table.scan().execute().unwrap();
    assert_eq!(rows(&scanned), expected);
    let files = table.data_files().unwrap();
    let total: u64 = files
        .iter()
        .map(|f| f.value_counts()[&id("tags.element")])
        .sum();
    assert_eq!(total, tag_values as u64);
    assert!(
        files
            .iter()
            .all(|f| f.lower_bounds().contains_key(&id("s.a")))
    );
    assert!(
        files
            .iter()
            .all(|f| !f.lower_bounds().contains_key(&id("attrs.key")))
    );
}

#[test]
fn appends_fill_missing_nullable_fields_and_refuse_wrong_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let table = create(dir.path(), "nested");
    // `s` without its nullable field `a`; the other columns missing (nullable) altogether.
    let s = StructArray::from(vec![(
        Arc::new(Field::new("b", ArrowType::Utf8, false)),
        Arc::new(StringArray::from(vec!["x", "y"])) as ArrayRef,
    )]);
    let partial = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("s", s.data_type().clone(), true),
        ])),
        vec![Arc::new(Int64Array::from(vec![1, 2])), Arc::new(s)],
    )
    .unwrap();
    let (table, _) = table.append(&[partial]).unwrap();
    let (scanned, _) = table.scan().select(["id", "s"]).execute().unwrap();
    let got = rows(&scanned);
    assert_eq!(got[&1][1], "{a: NULL, b: x}");

    // A struct missing a required field, and a list where the table has a struct.
    let s = StructArray::from(vec![(
        Arc::new(Field::new("a", ArrowType::Int32, true)),
        Arc::new(Int32Array::from(vec![1])) as ArrayRef,
    )]);
    let missing = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("s", s.data_type().clone(), true),
        ])),
        vec![Arc::new(Int64Array::from(vec![1])), Arc::new(s)],
    )
    .unwrap();
    let e = table.append(&[missing]).unwrap_err().to_string();
    assert!(e.contains("\"s.b\"") && e.contains("required"), "{e}");
    let mut list = ListBuilder::new(Int32Builder::new());
    list.values().append_value(1);
    list.append(true);
    let list = list.finish();
    let wrong = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("s", list.data_type().clone(), true),
        ])),
        vec![Arc::new(Int64Array::from(vec![1])), Arc::new(list)],
    )
    .unwrap();
    let e = table.append(&[wrong]).unwrap_err().to_string();
    assert!(e.contains("\"s\"") && e.contains("table's shape"), "{e}");
    assert_eq!(table.refresh().unwrap().data_files().unwrap().len(), 1);
}

/// Partitioned tables take nested columns too: the partition source is found by field id.
#[test]
fn a_partitioned_table_with_nested_columns_appends_and_scans() {
    let dir = tempfile::tempdir().unwrap();
    let table = CreateTable::new(columns())
        .partition_by(geoberg_table::PartitionField::bucket("id", 4))
        .create(
            sqlite_catalog(dir.path()),
            &TableIdent::new("test_db", "parted").unwrap(),
        )
        .unwrap();
    let input = [batch(0..100)];
    let (table, report) = table.append(&input).unwrap();
    assert_eq!(report.data_files, 4);
    let (scanned, _) = table.scan().execute().unwrap();
    assert_eq!(rows(&scanned), rows(&input));
}

mod sql_round_trip {
    use super::*;
    use proptest::prelude::*;

    fn leaf() -> impl Strategy<Value = DataType> {
        prop_oneof![
            prop::sample::select(vec![
                DataType::Boolean,
                DataType::Int,
                DataType::Long,
                DataType::Float,
                DataType::Double,
                DataType::String,
                DataType::Uuid,
                DataType::Binary,
                DataType::Date,
                DataType::Time,
                DataType::Timestamp,
                DataType::Timestamptz,
                DataType::TimestampNs,
                DataType::TimestamptzNs,
            ]),
            (1u32..=38)
                .prop_flat_map(|p| (Just(p), 0..=p))
                .prop_map(|(p, s)| DataType::decimal(p, s)),
            (1u64..100).prop_map(DataType::Fixed),
        ]
    }

    fn data_type() -> impl Strategy<Value = DataType> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec((inner.clone(), any::<bool>()), 1..4).prop_map(|fields| {
                    DataType::struct_of(fields.into_iter().enumerate().map(|(i, (t, r))| {
                        let name = if i % 2 == 0 {
                            format!("f{i}")
                        } else {
                            format!("odd name {i}")
                        };
                        let c = Column::new(name, t);
                        if r { c.required() } else { c }
                    }))
                }),
                (inner.clone(), any::<bool>()).prop_map(|(e, r)| DataType::List {
                    element: Box::new(e),
                    element_required: r,
                }),
                (inner.clone(), inner, any::<bool>()).prop_map(|(k, v, r)| DataType::Map {
                    key: Box::new(k),
                    value: Box::new(v),
                    value_required: r,
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// SHOW CREATE TABLE's spelling of a type (its Display) parses, through geoberg-sql's
        /// statement parser, back to the same type.
        #[test]
        fn show_create_spelling_parses_back(t in data_type()) {
            let sql = format!("CREATE TABLE db.t (c {t})");
            let parsed = geoberg_sql::parse(&sql).map_err(|e| TestCaseError::fail(format!("{sql}: {e}")))?;
            let geoberg_sql::Statement::CreateTable(r) = parsed else {
                return Err(TestCaseError::fail(sql));
            };
            let back = geoberg_table::declared_type("c", &r.columns[0].data_type).unwrap();
            prop_assert_eq!(back, t, "{}", sql);
        }
    }
}

/// `write.metadata.metrics.column.<name>` applies to nested fields by their dotted names.
#[test]
fn metrics_modes_apply_to_nested_fields_by_dotted_name() {
    let dir = tempfile::tempdir().unwrap();
    let table = CreateTable::new(columns())
        .property("write.metadata.metrics.column.s.b", "counts")
        .property("write.metadata.metrics.column.attrs.value", "none")
        .create(
            sqlite_catalog(dir.path()),
            &TableIdent::new("test_db", "modes").unwrap(),
        )
        .unwrap();
    let (table, _) = table.append(&[batch(0..20)]).unwrap();
    let f = &table.data_files().unwrap()[0];
    let (b, a, v) = (
        field_id(&table, "s.b"),
        field_id(&table, "s.a"),
        field_id(&table, "attrs.value"),
    );
    assert!(f.value_counts().contains_key(&b) && !f.lower_bounds().contains_key(&b));
    assert!(
        f.lower_bounds().contains_key(&a),
        "the default truncate(16) keeps bounds"
    );
    assert!(!f.value_counts().contains_key(&v) && !f.null_value_counts().contains_key(&v));
}

/// NaN counts of float fields inside structs count the values under non-null structs only.
#[test]
fn nan_counts_reach_into_structs() {
    let dir = tempfile::tempdir().unwrap();
    let table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new(
            "s",
            DataType::struct_of([Column::new("v", DataType::Double)]),
        ),
    ])
    .create(
        sqlite_catalog(dir.path()),
        &TableIdent::new("test_db", "nans").unwrap(),
    )
    .unwrap();
    let v = arrow_array::Float64Array::from(vec![Some(1.0), Some(f64::NAN), None, Some(f64::NAN)]);
    // Row 3's struct is null: its NaN is no value.
    let nulls = arrow_buffer::NullBuffer::from(vec![true, true, true, false]);
    let fields = arrow_schema::Fields::from(vec![Field::new("v", ArrowType::Float64, true)]);
    let s = StructArray::new(fields, vec![Arc::new(v) as ArrayRef], Some(nulls));
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("s", s.data_type().clone(), true),
        ])),
        vec![Arc::new(Int64Array::from(vec![1, 2, 3, 4])), Arc::new(s)],
    )
    .unwrap();
    let (table, _) = table.append(&[batch]).unwrap();
    let f = &table.data_files().unwrap()[0];
    assert_eq!(f.nan_value_counts()[&field_id(&table, "s.v")], 1);
}
