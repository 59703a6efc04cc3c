//! File and row-group skipping on real tables, and the explain report.

mod common;

use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::*;
use geoberg_table::{
    BBox, Column, CreateTable, DataType, PartitionField, ROW_GROUP_ROWS_PROPERTY, Table, TableIdent,
};

/// 16 files, each one cell of a 4×4 grid over [0, 40]², 100 points each.
fn grid_table(table: Table) -> Table {
    let mut table = table;
    for cell in 0..16i64 {
        let (cx, cy) = ((cell % 4) as f64 * 10.0, (cell / 4) as f64 * 10.0);
        let ids = cell * 100..cell * 100 + 100;
        let batch = points_batch(ids, |i| {
            (
                cx + (i % 10) as f64 + 0.5,
                cy + ((i / 10) % 10) as f64 + 0.5,
            )
        });
        table = table.append(&[batch]).unwrap().0;
    }
    table
}

#[test]
fn small_window_reads_few_files() {
    let dir = tempfile::tempdir().unwrap();
    let table = grid_table(points_table(sqlite_catalog(dir.path()), "grid"));
    let window = BBox::new(12.0, 12.0, 14.0, 14.0);
    let (batches, explain) = table.scan().with_window("geom", window).execute().unwrap();
    assert_eq!(explain.files_total, 16);
    assert_eq!(explain.files_read, 1, "{explain}");
    assert_eq!(explain.files_skipped, 15);
    assert!(explain.bytes_read * 10 < explain.bytes_total, "{explain}");
    assert!(
        explain.reasons.iter().any(|r| r.contains("declares CRS")),
        "{explain}"
    );
    // Rows 12.5, 13.5 on both axes in cell 5.
    assert_eq!(ids_of(&batches).len(), 4);
    // Exact refinement agrees for points.
    let (exact, _) = table
        .scan()
        .with_window("geom", window)
        .exact(true)
        .execute()
        .unwrap();
    assert_eq!(ids_of(&exact), ids_of(&batches));
    // Projection without the geometry still filters on it.
    let (projected, _) = table
        .scan()
        .with_window("geom", window)
        .select(["id"])
        .execute()
        .unwrap();
    assert_eq!(projected[0].num_columns(), 1);
    assert_eq!(ids_of(&projected), ids_of(&batches));
}

#[test]
fn row_groups_are_skipped_on_parquet_geo_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .property(ROW_GROUP_ROWS_PROPERTY, "100")
    .create(catalog, &TableIdent::new("test_db", "rg").unwrap())
    .unwrap();
    // One file of 1000 points sorted by x: 10 row groups, each a band of x.
    let (table, _) = table
        .append(&[points_batch(0..1000, |i| (i as f64, 0.0))])
        .unwrap();
    let (batches, explain) = table
        .scan()
        .with_window("geom", BBox::new(250.0, -1.0, 260.0, 1.0))
        .execute()
        .unwrap();
    assert_eq!(explain.files_read, 1);
    assert_eq!(explain.row_groups_total, 10);
    assert_eq!(explain.row_groups_skipped, 9, "{explain}");
    assert_eq!(ids_of(&batches), (250..=260).collect::<Vec<_>>());
}

/// The one row-group planner on a filter tree: `window A OR window B` keeps the union of the row
/// groups each window keeps, `AND` their intersection, a column leaf keeps everything; checked
/// against the rows themselves (a row group holding a matching row is always kept).
#[test]
fn row_groups_are_selected_on_a_filter_tree() {
    use geoberg_table::{BoxFilter, ScanFilter};
    let dir = tempfile::tempdir().unwrap();
    let table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .property(ROW_GROUP_ROWS_PROPERTY, "100")
    .create(
        sqlite_catalog(dir.path()),
        &TableIdent::new("test_db", "tree").unwrap(),
    )
    .unwrap();
    // One file, 10 row groups: row group g holds x in [100 g, 100 g + 99].
    let (table, _) = table
        .append(&[points_batch(0..1000, |i| (i as f64, 0.0))])
        .unwrap();
    let path = table.data_files().unwrap()[0].file_path().to_string();
    let local = path.strip_prefix("file://").unwrap_or(&path);
    let footer = parquet::file::metadata::ParquetMetaDataReader::new()
        .parse_and_finish(&std::fs::File::open(local).unwrap())
        .unwrap();
    let window = |x0: f64, x1: f64| {
        ScanFilter::spatial("geom", BoxFilter::intersects(BBox::new(x0, -1.0, x1, 1.0)))
    };
    let kept = |f: &ScanFilter| -> Vec<usize> {
        let keep = f.select_row_groups(&table, &footer).unwrap();
        (0..keep.len()).filter(|&i| keep[i]).collect()
    };
    // The rows' own row groups: x = id, 100 rows per group.
    let holding = |x0: f64, x1: f64| -> Vec<usize> {
        let mut groups: Vec<usize> = (0..1000)
            .filter(|&i| (i as f64) >= x0 && (i as f64) <= x1)
            .map(|i| i / 100)
            .collect();
        groups.dedup();
        groups
    };
    assert_eq!(kept(&window(150.0, 160.0)), holding(150.0, 160.0));
    let either = ScanFilter::or([window(150.0, 160.0), window(720.0, 830.0)]);
    let mut union = holding(150.0, 160.0);
    union.extend(holding(720.0, 830.0));
    assert_eq!(kept(&either), union);
    assert_eq!(kept(&either), [1, 7, 8]);
    let both = ScanFilter::and([window(0.0, 450.0), window(380.0, 999.0)]);
    assert_eq!(kept(&both), holding(380.0, 450.0));
    let column =
        ScanFilter::from_predicate(&table, &geoberg_sql::parse_condition("id < 5").unwrap())
            .unwrap();
    assert_eq!(kept(&ScanFilter::and([column, window(150.0, 160.0)])), [1]);
    assert_eq!(kept(&ScanFilter::Nothing), Vec::<usize>::new());
}

fn legacy_batch(ids: std::ops::Range<i64>, xy: impl Fn(i64) -> (f64, f64)) -> RecordBatch {
    let geom: Vec<Vec<u8>> = ids
        .clone()
        .map(|i| {
            let (x, y) = xy(i);
            ewkb_point(x, y, 32633)
        })
        .collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("geom", ArrowType::Binary, true),
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values(ids)),
            Arc::new(BinaryArray::from_iter_values(geom.iter())),
        ],
    )
    .unwrap()
}

#[test]
fn legacy_v2_table_prunes_on_bbox_columns() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::LEGACY_GEOMETRY),
    ])
    .allow_undeclared_crs()
    .with_bbox_columns("geom")
    .create(catalog, &TableIdent::new("test_db", "legacy").unwrap())
    .unwrap();
    assert_eq!(table.metadata().format_version() as u8, 2);
    let names = column_names(&table);
    assert_eq!(
        names,
        [
            "id",
            "bbox_min_x",
            "bbox_min_y",
            "bbox_max_x",
            "bbox_max_y",
            "geom"
        ]
    );
    for f in 0..8i64 {
        let x0 = 500_000.0 + f as f64 * 1000.0;
        table = table
            .append(&[legacy_batch(f * 10..f * 10 + 10, |i| {
                (x0 + (i % 10) as f64 * 10.0, 4_649_776.0)
            })])
            .unwrap()
            .0;
    }
    let (batches, explain) = table
        .scan()
        .with_window(
            "geom",
            BBox::new(502_000.0, 4_649_000.0, 502_050.0, 4_650_000.0),
        )
        .execute()
        .unwrap();
    assert_eq!(
        (explain.files_total, explain.files_read),
        (8, 1),
        "{explain}"
    );
    assert!(
        explain.reasons.iter().any(|r| r.contains("bbox_min_x")),
        "{explain}"
    );
    assert_eq!(ids_of(&batches), (20..26).collect::<Vec<_>>());
    // The bbox columns were filled from the geometry.
    let b = &batches[0];
    let min_x = b
        .column(1)
        .as_any()
        .downcast_ref::<arrow_array::Float64Array>()
        .unwrap();
    assert_eq!(min_x.value(0), 502_000.0);
}

#[test]
fn undeclared_crs_on_v3_reads_every_file_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::LEGACY_GEOMETRY),
    ])
    .allow_undeclared_crs()
    .format_version(3)
    .create(catalog, &TableIdent::new("test_db", "v3legacy").unwrap())
    .unwrap();
    for f in 0..3i64 {
        table = table
            .append(&[legacy_batch(f * 10..f * 10 + 10, |i| {
                (i as f64 * 100.0, 0.0)
            })])
            .unwrap()
            .0;
    }
    let explain = table
        .scan()
        .with_window("geom", BBox::new(0.0, -1.0, 1.0, 1.0))
        .explain()
        .unwrap();
    assert_eq!(
        (
            explain.files_total,
            explain.files_read,
            explain.files_skipped
        ),
        (3, 3, 0)
    );
    assert!(
        explain
            .reasons
            .iter()
            .any(|r| r.contains("no declared CRS on a v3 table: every file is read")),
        "{explain}"
    );
    assert_eq!(explain.rows_returned, 1);
}

#[test]
fn bucket_partitioned_table_writes_a_file_per_bucket_and_shows_create() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let table = CreateTable::new([
        Column::new("id", DataType::parse("bigint").unwrap()),
        Column::new("data", DataType::String),
        Column::new("geom", DataType::parse("geometry(4326)").unwrap()),
    ])
    .partition_by(PartitionField::bucket("id", 4))
    .create(
        catalog.clone(),
        &TableIdent::new("test_db", "test_table").unwrap(),
    )
    .unwrap();
    let ddl = table.show_create_table("org_catalog");
    assert!(ddl.contains("geom GEOMETRY(4326)"), "{ddl}");
    assert!(ddl.contains("id BIGINT"), "{ddl}");
    assert!(ddl.contains("PARTITIONED BY (bucket(4, id))"), "{ddl}");
    let (table, report) = table
        .append(&[points_batch(0..200, |i| (i as f64 / 10.0, 0.0))])
        .unwrap();
    assert_eq!(report.data_files, 4);
    let (batches, _) = table.scan().execute().unwrap();
    assert_eq!(ids_of(&batches), (0..200).collect::<Vec<_>>());
    let err = CreateTable::new([Column::new("geom", DataType::geometry(4326))])
        .partition_by(PartitionField::identity("geom"))
        .create(catalog, &TableIdent::new("test_db", "bad").unwrap())
        .unwrap_err();
    assert!(err.to_string().contains("Hilbert"), "{err}");
}

/// A plain `binary` WKB column of a table another engine wrote carries Iceberg's binary bounds:
/// byte-wise WKB prefixes, which decode as 16 bytes but are no box. A window scan must not
/// trust them (it would skip matching files); it reads every file and says why.
#[test]
fn binary_prefix_bounds_of_a_foreign_wkb_column_are_not_boxes() {
    let dir = tempfile::tempdir().unwrap();
    let table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::Binary),
    ])
    .format_version(2)
    .create(
        sqlite_catalog(dir.path()),
        &TableIdent::new("test_db", "foreign").unwrap(),
    )
    .unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("geom", ArrowType::Binary, true),
    ]));
    let mut table = table;
    for file in 0..4i64 {
        // Points spread over the world in every file: each file's box is large.
        let ids: Vec<i64> = (file * 50..file * 50 + 50).collect();
        let geom: Vec<Vec<u8>> = ids
            .iter()
            .map(|&i| wkb_point((i * 37 % 360 - 180) as f64, (i * 11 % 170 - 85) as f64))
            .collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(BinaryArray::from_iter_values(geom.iter())),
            ],
        )
        .unwrap();
        table = table.append(&[batch]).unwrap().0;
    }
    let window = BBox::new(-60.0, -30.0, 60.0, 30.0);
    let (batches, explain) = table.scan().with_window("geom", window).execute().unwrap();
    assert_eq!(explain.files_read, 4, "{explain}");
    assert!(
        explain
            .reasons
            .iter()
            .any(|r| r.contains("WKB byte prefixes")),
        "{explain}"
    );
    let expected: Vec<i64> = (0..200i64)
        .filter(|i| {
            let (x, y) = ((i * 37 % 360 - 180) as f64, (i * 11 % 170 - 85) as f64);
            (-60.0..=60.0).contains(&x) && (-30.0..=30.0).contains(&y)
        })
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(ids_of(&batches), expected);
}
