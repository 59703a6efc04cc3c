//! When another Parquet geo statistics factory was installed first (parquet's own default here,
//! which writes none for GEOGRAPHY), writes fall back quietly: geography files still get their
//! Iceberg bounds and scans stay correct; only row-group skipping on geography is lost. Its own
//! test binary, because the factory is one per process.

mod common;

use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::{ids_of, sqlite_catalog, wkb_point};
use geoberg_geostats::{GeoStatsInstall, install_parquet_geo_stats};
use geoberg_table::{BBox, Column, CreateTable, DataType, TableIdent};
use parquet::geospatial::accumulator::{
    DefaultGeoStatsAccumulatorFactory, init_geo_stats_accumulator_factory,
};

#[test]
fn geography_writes_fall_back_quietly_when_the_factory_is_taken() {
    init_geo_stats_accumulator_factory(Arc::new(DefaultGeoStatsAccumulatorFactory::default()))
        .unwrap();
    assert_eq!(install_parquet_geo_stats(), GeoStatsInstall::TakenByAnother);

    let dir = tempfile::tempdir().unwrap();
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geog", DataType::parse("geography(4326)").unwrap()),
    ])
    .property("geoberg.parquet.row-group-rows", "2")
    .create(
        sqlite_catalog(dir.path()),
        &TableIdent::new("test_db", "taken").unwrap(),
    )
    .unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("geog", ArrowType::Binary, true),
    ]));
    for (first, xs) in [
        (0i64, [175.0, -175.0, 0.0, 1.0]),
        (4, [90.0, 91.0, 92.0, 93.0]),
    ] {
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values(first..first + 4)),
                Arc::new(BinaryArray::from_iter_values(
                    xs.iter().map(|&x| wkb_point(x, 0.0)),
                )),
            ],
        )
        .unwrap();
        table = table.append(&[batch]).unwrap().0;
    }
    let (batches, explain) = table
        .scan()
        .with_window("geog", BBox::new(170.0, -1.0, -170.0, 1.0))
        .exact(true)
        .execute()
        .unwrap();
    assert_eq!(ids_of(&batches), [0, 1], "{explain}");
    // The file-level bounds still skip the file far from the window ...
    assert_eq!(
        (explain.files_read, explain.files_total),
        (1, 2),
        "{explain}"
    );
    // ... but its row groups have no geography statistics to skip on.
    assert_eq!(explain.row_groups_skipped, 0, "{explain}");
}
