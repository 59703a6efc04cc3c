//! Spatial partitioning by a derived Hilbert-cell column (seed 000's S2 example): files split
//! by cell, and window scans still skip files on geometry bounds without a cell predicate.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use arrow_array::{Array, BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::*;
use geoberg_hilbert::HilbertCurve;
use geoberg_table::{
    BBox, Column, CreateTable, DataType, Error, HILBERT_CELL_PROPERTY, Table, TableIdent,
};
use iceberg::spec::{Datum, Literal, PrimitiveLiteral};

const N: i64 = 2000;

fn spatial_table(catalog: Arc<dyn geoberg_table::Catalog>, name: &str, precision: u8) -> Table {
    CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .spatial_partition("geom", precision)
    .create(catalog, &TableIdent::new("test_db", name).unwrap())
    .unwrap()
}

fn cell_of(literal: Option<&Literal>) -> Option<i64> {
    match literal {
        Some(Literal::Primitive(PrimitiveLiteral::Long(v))) => Some(*v),
        None => None,
        other => panic!("unexpected partition value {other:?}"),
    }
}

#[test]
fn files_are_split_by_hilbert_cell_with_partition_values_in_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let table = spatial_table(sqlite_catalog(dir.path()), "cells", 2);
    let xy = uniform(7);
    let (table, report) = table.append(&[points_batch(0..N, &xy)]).unwrap();

    let curve = HilbertCurve::wgs84(2).unwrap();
    let expected: BTreeSet<i64> = (0..N)
        .map(|i| {
            let (x, y) = xy(i);
            curve.encode(x, y).unwrap() as i64
        })
        .collect();
    assert_eq!(report.data_files, expected.len());
    assert_eq!(report.rows, N as u64);

    let cell_id = table
        .metadata()
        .current_schema()
        .field_by_name("geom_hilbert_cell")
        .unwrap()
        .id;
    let files = table.data_files().unwrap();
    let mut seen = BTreeSet::new();
    for f in &files {
        assert_eq!(f.partition().fields().len(), 1);
        let cell = cell_of(f.partition().iter().next().unwrap()).unwrap();
        assert!(seen.insert(cell), "two files for cell {cell}");
        // The file holds that one cell value: its column bounds collapse to it.
        assert_eq!(f.lower_bounds().get(&cell_id), Some(&Datum::long(cell)));
        assert_eq!(f.upper_bounds().get(&cell_id), Some(&Datum::long(cell)));
    }
    assert_eq!(seen, expected);

    // The derived column is readable like any other.
    let (batches, _) = table.scan().execute().unwrap();
    let mut total = 0;
    for b in &batches {
        let cells = b.column(b.schema().index_of("geom_hilbert_cell").unwrap());
        let cells = cells.as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(cells.null_count(), 0);
        total += b.num_rows();
    }
    assert_eq!(total, N as usize);
}

#[test]
fn window_scan_skips_files_without_a_predicate_on_the_cell_column() {
    let dir = tempfile::tempdir().unwrap();
    let table = spatial_table(sqlite_catalog(dir.path()), "skip", 3);
    let xy = uniform(11);
    let (table, _) = table.append(&[points_batch(0..N, &xy)]).unwrap();
    let window = BBox::new(10.0, 10.0, 40.0, 30.0);
    let (batches, explain) = table.scan().with_window("geom", window).execute().unwrap();
    assert!(explain.files_total > 8, "{explain}");
    assert!(explain.files_read < explain.files_total / 4, "{explain}");
    let expected: Vec<i64> = (0..N)
        .filter(|&i| {
            let (x, y) = xy(i);
            (10.0..=40.0).contains(&x) && (10.0..=30.0).contains(&y)
        })
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(ids_of(&batches), expected);
}

#[test]
fn show_create_table_shows_the_cell_partition_and_its_derivation() {
    let dir = tempfile::tempdir().unwrap();
    let table = spatial_table(sqlite_catalog(dir.path()), "ddl", 6);
    let ddl = table.show_create_table("org_catalog");
    assert!(ddl.contains("geom_hilbert_cell BIGINT"), "{ddl}");
    assert!(ddl.contains("PARTITIONED BY (geom_hilbert_cell)"), "{ddl}");
    assert!(ddl.contains(HILBERT_CELL_PROPERTY), "{ddl}");
    let prop: serde_json::Value =
        serde_json::from_str(&table.metadata().properties()[HILBERT_CELL_PROPERTY]).unwrap();
    assert_eq!(
        prop,
        serde_json::json!({"column": "geom", "precision": 6, "bounds": [-180.0, -90.0, 180.0, 90.0]})
    );
}

#[test]
fn web_mercator_and_no_crs_columns_use_their_extents() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = CreateTable::new([Column::new("g", DataType::geometry(3857))])
        .spatial_partition("g", 4)
        .create(
            catalog.clone(),
            &TableIdent::new("test_db", "merc").unwrap(),
        )
        .unwrap();
    let prop = &t.metadata().properties()[HILBERT_CELL_PROPERTY];
    assert!(prop.contains("20037508"), "{prop}");
    let t = CreateTable::new([Column::new("g", DataType::LEGACY_GEOMETRY)])
        .allow_undeclared_crs()
        .spatial_partition("g", 4)
        .create(catalog, &TableIdent::new("test_db", "legacy").unwrap())
        .unwrap();
    let prop = &t.metadata().properties()[HILBERT_CELL_PROPERTY];
    assert!(prop.contains("[-180.0,-90.0,180.0,90.0]"), "{prop}");
}

#[test]
fn bad_requests_fail_at_create_naming_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let create = |cols: Vec<Column>, geom: &str, precision: u8| {
        CreateTable::new(cols)
            .spatial_partition(geom, precision)
            .create(catalog.clone(), &TableIdent::new("test_db", "bad").unwrap())
            .unwrap_err()
            .to_string()
    };
    let base = || {
        vec![
            Column::new("id", DataType::Long),
            Column::new("geom", DataType::geometry(4326)),
        ]
    };
    for p in [0, 17] {
        let e = create(base(), "geom", p);
        assert!(e.contains("precision must be 1..=16"), "{e}");
    }
    let e = create(base(), "nope", 4);
    assert!(e.contains("no geometry or geography column"), "{e}");
    let e = create(base(), "id", 4);
    assert!(e.contains("no geometry or geography column"), "{e}");
    let mut cols = base();
    cols.push(Column::new("geom_hilbert_cell", DataType::Long));
    let e = create(cols, "geom", 4);
    assert!(e.contains("already exists"), "{e}");
    let e = create(vec![Column::new("geom", DataType::geometry(0))], "geom", 4);
    assert!(e.contains("no known extent"), "{e}");
    assert!(e.contains("geometry(4326)"), "{e}");
}

fn batch_with_cells(
    ids: &[i64],
    geoms: Vec<Option<Vec<u8>>>,
    cells: Option<Vec<i64>>,
) -> RecordBatch {
    let srid = HashMap::from([("srid".to_string(), "4326".to_string())]);
    let mut fields = vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("geom", ArrowType::Binary, true).with_metadata(srid),
    ];
    let mut columns: Vec<Arc<dyn Array>> = vec![
        Arc::new(Int64Array::from(ids.to_vec())),
        Arc::new(BinaryArray::from_iter(geoms)),
    ];
    if let Some(cells) = cells {
        fields.push(Field::new("geom_hilbert_cell", ArrowType::Int64, true));
        columns.push(Arc::new(Int64Array::from(cells)));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

#[test]
fn given_cells_are_verified_and_null_or_empty_geometry_gets_a_null_cell() {
    let dir = tempfile::tempdir().unwrap();
    let table = spatial_table(sqlite_catalog(dir.path()), "verify", 4);
    let curve = HilbertCurve::wgs84(4).unwrap();
    let right = curve.encode(10.0, 20.0).unwrap() as i64;

    let ok = batch_with_cells(&[1], vec![Some(wkb_point(10.0, 20.0))], Some(vec![right]));
    let (table, report) = table.append(&[ok]).unwrap();
    assert_eq!(report.data_files, 1);

    let wrong = batch_with_cells(
        &[2],
        vec![Some(wkb_point(10.0, 20.0))],
        Some(vec![right + 1]),
    );
    match table.append(&[wrong]).unwrap_err() {
        Error::HilbertCellMismatch {
            column,
            geometry,
            row,
            given,
            derived,
        } => {
            assert_eq!(
                (column.as_str(), geometry.as_str(), row, given, derived),
                ("geom_hilbert_cell", "geom", 0, Some(right + 1), Some(right))
            );
        }
        e => panic!("expected HilbertCellMismatch, got {e}"),
    }

    let empty_line = vec![1u8, 2, 0, 0, 0, 0, 0, 0, 0];
    let nulls = batch_with_cells(&[3, 4], vec![None, Some(empty_line)], None);
    let (table, report) = table.append(&[nulls]).unwrap();
    assert_eq!(report.data_files, 1);
    let files = table.data_files().unwrap();
    let cells: BTreeSet<Option<i64>> = files
        .iter()
        .map(|f| cell_of(f.partition().iter().next().unwrap()))
        .collect();
    assert_eq!(cells, BTreeSet::from([None, Some(right)]));
    assert_eq!(ids_of(&table.scan().execute().unwrap().0), vec![1, 3, 4]);
}
