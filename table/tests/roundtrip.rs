//! Create → append → scan over real files in a temporary warehouse.

mod common;

use common::*;
use geoberg_table::{BBox, Table, TableIdent};

#[test]
fn create_append_scan_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let table = points_table(catalog.clone(), "points");
    assert!(table.metadata().current_snapshot().is_none());

    let (table, report) = table
        .append(&[points_batch(0..100, |i| (i as f64, i as f64 / 2.0))])
        .unwrap();
    assert_eq!((report.data_files, report.rows), (1, 100));
    let (table, _) = table
        .append(&[points_batch(100..150, |i| (i as f64, -(i as f64) / 2.0))])
        .unwrap();

    // A fresh load from the catalog sees both snapshots and the real column types.
    let loaded = Table::load(
        catalog.clone(),
        &TableIdent::new("test_db", "points").unwrap(),
    )
    .unwrap();
    assert_eq!(loaded.metadata_location(), table.metadata_location());
    assert_eq!(loaded.metadata().snapshots().count(), 2);
    assert_eq!(loaded.metadata().next_row_id(), 150);
    let geo = loaded.geo_column("geom").unwrap();
    assert_eq!(geo.column_type.crs().and_then(|c| c.srid()), Some(4326));

    let (batches, explain) = loaded.scan().execute().unwrap();
    assert_eq!(ids_of(&batches), (0..150).collect::<Vec<_>>());
    assert_eq!(explain.files_total, 2);

    // The metadata file on disk holds the real type string, not `binary`.
    let json =
        std::fs::read_to_string(loaded.metadata_location().trim_start_matches("file://")).unwrap();
    assert!(json.contains("\"type\": \"geometry\""), "{json}");

    // Window x in [10, 20]: only the first file, and only ids 10..=20.
    let (batches, explain) = loaded
        .scan()
        .with_window("geom", BBox::new(10.0, 0.0, 20.0, 100.0))
        .execute()
        .unwrap();
    assert_eq!(ids_of(&batches), (10..=20).collect::<Vec<_>>());
    assert_eq!((explain.files_read, explain.files_skipped), (1, 1));
}
