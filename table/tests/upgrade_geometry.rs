//! `Table::upgrade_geometry` (seed 004, "Upgrade Existing Geometry Tables"): a format-version 2
//! table with a no-CRS geometry column copied into a v3 `geometry(<srid>)` table. Oracles: the
//! rows written to the source (ids, attributes, geometry bytes), the SRIDs the test put in the
//! values, and the source table's metadata file, which must not change.

mod common;

use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::*;
use geoberg_table::{
    Catalog, Column, ColumnType, CreateTable, DataType, Error, PartitionField, RowChangeMode,
    RowFilter, Table, TableIdent,
};

/// `id bigint NOT NULL, data string, geom GEOMETRY` (no CRS), format-version 2, partitioned by
/// `data`.
fn legacy_table(catalog: Arc<dyn Catalog>, name: &str) -> Table {
    CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
        Column::new("geom", DataType::LEGACY_GEOMETRY),
    ])
    .partition_by(PartitionField::identity("data"))
    .allow_undeclared_crs()
    .property("owner", "gis")
    .create(catalog, &TableIdent::new("test_db", name).unwrap())
    .unwrap()
}

/// A batch with no SRID label: the values say what they are.
fn batch(rows: &[(i64, &str, Option<Vec<u8>>)]) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("data", ArrowType::Utf8, true),
        Field::new("geom", ArrowType::Binary, true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(BinaryArray::from_iter(rows.iter().map(|r| r.2.as_deref()))),
        ],
    )
    .unwrap()
}

fn ident(name: &str) -> TableIdent {
    TableIdent::new("test_db", name).unwrap()
}

#[test]
fn copies_every_row_into_a_v3_geometry_4326_table_and_leaves_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = legacy_table(Arc::clone(&catalog), "legacy");
    assert_eq!(t.metadata().format_version() as u8, 2);
    let mut written = Vec::new();
    let mut t = t;
    for a in 0..3i64 {
        let rows: Vec<(i64, &str, Option<Vec<u8>>)> = (0..10)
            .map(|i| {
                let id = a * 10 + i;
                let (x, y) = (id as f64, -(id as f64) / 2.0);
                let geom = match id % 4 {
                    0 => Some(ewkb_point(x, y, 4326)),
                    1 => None,
                    _ => Some(wkb_point(x, y)),
                };
                (id, if id % 2 == 0 { "even" } else { "odd" }, geom)
            })
            .collect();
        written.extend(
            rows.iter()
                .map(|(id, d, g)| (*id, Some(d.to_string()), g.clone())),
        );
        t = t.append(&[batch(&rows)]).unwrap().0;
    }
    // A merge-on-read delete: the copy holds the live rows only.
    t = t
        .delete(RowFilter::from_predicate(
            geoberg_sql::parse_condition("id = 5").unwrap(),
        ))
        .mode(RowChangeMode::MergeOnRead)
        .execute()
        .unwrap()
        .0;
    written.retain(|r| r.0 != 5);
    written.sort();
    let source_metadata = t.metadata_location().to_string();

    let (v3, report) = t.upgrade_geometry("geom", 4326, None).unwrap();
    assert_eq!(report.target, "test_db.legacy_v3");
    assert_eq!(report.source_rows, written.len() as u64);
    assert_eq!(report.copied_rows, written.len() as u64);
    let nulls = written.iter().filter(|r| r.2.is_none()).count() as u64;
    let ewkb = written.iter().filter(|r| r.0 % 4 == 0).count() as u64;
    assert_eq!(report.null_values, nulls);
    assert_eq!(report.ewkb_values, ewkb);
    assert_eq!(report.labelled_values, written.len() as u64 - nulls - ewkb);

    // The new table: v3, geometry(4326), same partitioning and properties, the same rows.
    let v3 = Table::load(Arc::clone(&catalog), v3.ident()).unwrap();
    assert_eq!(v3.metadata().format_version() as u8, 3);
    assert_eq!(
        v3.geo_column("geom").unwrap().column_type,
        DataType::geometry(4326).column_type().unwrap()
    );
    assert!(matches!(
        v3.geo_column("geom").unwrap().column_type,
        ColumnType::Geometry { .. }
    ));
    assert_eq!(v3.metadata().default_partition_spec().fields().len(), 1);
    assert_eq!(
        v3.metadata().properties().get("owner").map(String::as_str),
        Some("gis")
    );
    // ... stored as plain WKB: the column declares the SRID, so EWKB values lose theirs.
    let plain: Vec<_> = written
        .iter()
        .map(|(id, data, g)| {
            let g = g
                .as_ref()
                .map(|g| geoberg_crs::wkb_without_srid(g).unwrap());
            (*id, data.clone(), g)
        })
        .collect();
    assert_eq!(rows(&v3), plain);
    // Window scans on the declared column skip files again: the 4326 bounds are there.
    let (hits, _) = v3
        .scan()
        .with_window("geom", geoberg_table::BBox::new(-0.5, -1.0, 2.5, 0.5))
        .exact(true)
        .execute()
        .unwrap();
    let mut expected: Vec<i64> = written
        .iter()
        .filter(|r| r.2.is_some() && r.0 <= 2)
        .map(|r| r.0)
        .collect();
    expected.sort();
    assert_eq!(ids_of(&hits), expected);

    // The source is untouched: same metadata file, same rows.
    let source = Table::load(Arc::clone(&catalog), &ident("legacy")).unwrap();
    assert_eq!(source.metadata_location(), source_metadata);
    assert_eq!(rows(&source), written);

    // A second run finds the target taken and says so.
    let err = source.upgrade_geometry("geom", 4326, None).unwrap_err();
    assert!(matches!(err, Error::TableAlreadyExists(_)), "{err}");
    // An explicit target works too.
    let (other, report) = source
        .upgrade_geometry("geom", 4326, Some(&ident("legacy_copy")))
        .unwrap();
    assert_eq!(other.ident().to_string(), "test_db.legacy_copy");
    assert_eq!(report.copied_rows, written.len() as u64);
}

#[test]
fn values_with_another_srid_are_counted_and_nothing_is_copied() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = legacy_table(Arc::clone(&catalog), "mixed");
    let (t, _) = t
        .append(&[batch(&[
            (1, "a", Some(wkb_point(1.0, 2.0))),
            (2, "a", Some(ewkb_point(500_000.0, 4_000_000.0, 3857))),
            (3, "b", Some(ewkb_point(600_000.0, 4_100_000.0, 3857))),
            (4, "b", Some(ewkb_point(3.0, 4.0, 0))),
            (5, "b", Some(ewkb_point(3.0, 4.0, 4326))),
        ])])
        .unwrap();
    let err = t.upgrade_geometry("geom", 4326, None).unwrap_err();
    match &err {
        Error::UpgradeSridMismatch {
            values,
            mismatched,
            by_srid,
            ..
        } => {
            assert_eq!((*values, *mismatched), (5, 3), "{err}");
            assert_eq!(by_srid, "1 with SRID 0, 2 with SRID 3857", "{err}");
        }
        other => panic!("expected an SRID mismatch, got {other}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("ST_SetSRID") && message.contains("ST_Transform"),
        "{message}"
    );
    assert!(
        catalog
            .metadata_location(&ident("mixed_v3"))
            .unwrap()
            .is_none(),
        "a refused upgrade creates no table"
    );
    // Asked for 3857: the plain WKB value is labelled 3857, the two EWKB 3857 values agree,
    // the SRID 0 and 4326 values do not.
    let err = t.upgrade_geometry("geom", 3857, None).unwrap_err();
    match &err {
        Error::UpgradeSridMismatch {
            mismatched,
            by_srid,
            ..
        } => assert_eq!(
            (*mismatched, by_srid.as_str()),
            (2, "1 with SRID 0, 1 with SRID 4326"),
            "{err}"
        ),
        other => panic!("expected an SRID mismatch, got {other}"),
    }
}

#[test]
fn malformed_wkb_names_its_file_and_bad_requests_name_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    // WKB in a plain binary column, as other engines write it: the writer does not read the
    // values, so a malformed one can get in.
    let t = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
        Column::new("geom", DataType::Binary),
    ])
    .format_version(2)
    .create(Arc::clone(&catalog), &ident("broken"))
    .unwrap();
    assert_eq!(
        t.geo_column("geom").unwrap().column_type,
        ColumnType::GeometryWithoutCrs
    );
    let (t, _) = t
        .append(&[batch(&[
            (1, "a", Some(wkb_point(1.0, 2.0))),
            (2, "a", Some(vec![1, 1, 0, 0])),
        ])])
        .unwrap();
    let file = t.data_files().unwrap()[0].file_path().to_string();
    let err = t.upgrade_geometry("geom", 4326, None).unwrap_err();
    match &err {
        Error::MalformedGeometry {
            file: f, position, ..
        } => {
            assert_eq!((f.as_str(), *position), (file.as_str(), 1), "{err}");
        }
        other => panic!("expected malformed geometry, got {other}"),
    }
    assert!(
        catalog
            .metadata_location(&ident("broken_v3"))
            .unwrap()
            .is_none()
    );

    // An SRID a geometry column cannot declare; a column that already declares one; a column
    // that is not there.
    let err = t.upgrade_geometry("geom", 32633, None).unwrap_err();
    assert!(err.to_string().contains("32633"), "{err}");
    let declared = points_table(Arc::clone(&catalog), "declared");
    let err = declared.upgrade_geometry("geom", 4326, None).unwrap_err();
    assert!(matches!(err, Error::WrongColumnType { .. }), "{err}");
    let err = t.upgrade_geometry("nope", 4326, None).unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
    let err = t
        .upgrade_geometry("geom", 4326, Some(&ident("broken")))
        .unwrap_err();
    assert!(err.to_string().contains("target"), "{err}");
}
