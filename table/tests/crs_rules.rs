//! Every `crs` rule surfaced through the table API.

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::*;
use geoberg_table::{Column, CreateTable, DataType, Error, TableIdent};

fn create(columns: Vec<Column>, version: Option<u8>) -> Result<geoberg_table::Table, Error> {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let mut c = CreateTable::new(columns);
    if let Some(v) = version {
        c = c.format_version(v);
    }
    c.create(catalog, &TableIdent::new("test_db", "t").unwrap())
}

fn code(e: &Error) -> &'static str {
    match e {
        Error::Crs(c) => c.code(),
        _ => "not a crs error",
    }
}

#[test]
fn declarations_are_checked_on_create() {
    let utm = create(vec![Column::new("geom", DataType::geometry(32633))], None).unwrap_err();
    assert_eq!(code(&utm), "ST_INVALID_SRID_VALUE");
    assert!(utm.to_string().contains("geometry(0)"), "{utm}");

    let geog = create(
        vec![Column::new(
            "g",
            DataType::parse("geography(3857)").unwrap(),
        )],
        None,
    )
    .unwrap_err();
    assert_eq!(code(&geog), "ST_INVALID_SRID_VALUE");

    let v2 = create(vec![Column::new("geom", DataType::geometry(4326))], Some(2)).unwrap_err();
    assert_eq!(code(&v2), "ST_CRS_NEEDS_FORMAT_V3");

    let bare = create(
        vec![Column::new("geom", DataType::parse("geometry").unwrap())],
        Some(2),
    )
    .unwrap_err();
    assert_eq!(code(&bare), "ST_CRS_NOT_DECLARED");

    for srid in [0, 3857, 4326] {
        create(vec![Column::new("geom", DataType::geometry(srid))], None).unwrap();
    }
    create(
        vec![Column::new(
            "g",
            DataType::parse("geography(4326)").unwrap(),
        )],
        None,
    )
    .unwrap();
}

fn geom_batch(values: Vec<Vec<u8>>, label: Option<&str>) -> RecordBatch {
    let mut field = Field::new("geom", ArrowType::Binary, true);
    if let Some(l) = label {
        field = field.with_metadata(HashMap::from([("srid".to_string(), l.to_string())]));
    }
    let n = values.len() as i64;
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            field,
        ])),
        vec![
            Arc::new(Int64Array::from_iter_values(0..n)),
            Arc::new(BinaryArray::from_iter_values(values.iter())),
        ],
    )
    .unwrap()
}

#[test]
fn value_srids_are_checked_on_append() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let cols = |t: DataType| vec![Column::new("id", DataType::Long), Column::new("geom", t)];
    let t4326 = CreateTable::new(cols(DataType::geometry(4326)))
        .create(catalog.clone(), &TableIdent::new("test_db", "a").unwrap())
        .unwrap();
    // Unlabelled ISO WKB has no SRID: rejected by a geometry column.
    let err = t4326
        .append(&[geom_batch(vec![wkb_point(1.0, 2.0)], None)])
        .unwrap_err();
    assert!(err.to_string().contains("SRID"), "{err}");
    // EWKB SRID 0 into a 4326 column: rejected, naming both SRIDs and the fixes.
    let err = t4326
        .append(&[geom_batch(
            vec![ewkb_point(1.0, 2.0, 4326), ewkb_point(1.0, 2.0, 0)],
            None,
        )])
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("row 1") && msg.contains('0') && msg.contains("4326"),
        "{msg}"
    );
    // A value's own EWKB SRID wins over the batch label, which only fills in missing SRIDs.
    let (t4326, _) = t4326
        .append(&[geom_batch(vec![ewkb_point(1.0, 2.0, 4326)], Some("0"))])
        .unwrap();
    let (t4326, _) = t4326
        .append(&[geom_batch(vec![wkb_point(1.0, 2.0)], Some("4326"))])
        .unwrap();
    let err = t4326
        .append(&[geom_batch(vec![wkb_point(1.0, 2.0)], Some("3857"))])
        .unwrap_err();
    assert!(err.to_string().contains("3857"), "{err}");

    // Geography accepts unset SRIDs.
    let geog = CreateTable::new(cols(DataType::parse("geography(4326)").unwrap()))
        .create(catalog.clone(), &TableIdent::new("test_db", "g").unwrap())
        .unwrap();
    geog.append(&[geom_batch(vec![wkb_point(1.0, 2.0)], None)])
        .unwrap();
    let err = geog
        .append(&[geom_batch(vec![ewkb_point(1.0, 2.0, 3857)], None)])
        .unwrap_err();
    assert!(err.to_string().contains("3857"), "{err}");

    // The legacy no-CRS column checks nothing.
    let legacy = CreateTable::new(cols(DataType::LEGACY_GEOMETRY))
        .allow_undeclared_crs()
        .create(catalog, &TableIdent::new("test_db", "l").unwrap())
        .unwrap();
    assert_eq!(legacy.metadata().format_version() as u8, 2);
    legacy
        .append(&[geom_batch(
            vec![ewkb_point(500000.0, 4649776.0, 32633), wkb_point(1.0, 2.0)],
            None,
        )])
        .unwrap();
}
