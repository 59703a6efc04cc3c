//! A table in S3 (a real SeaweedFS server started by the test kit) behind a PostgreSQL catalog
//! (a real server too), queried and changed through the engine: the scan reads through the
//! table's own configured client (endpoint, credentials), catalog lookups from inside the
//! engine's async runtime work, and an INSERT and a DELETE land their files in the bucket.

use std::sync::Arc;

use geoberg_datafusion::BlockingSession;
use geoberg_table::{Catalog, PostgresCatalog, Storage, Table, TableIdent};
use geoberg_testkit::{PostgresServer, S3Server};

use crate::common::{Row, append_files, create_points_in, ids, scalar_i64};

#[test]
fn an_s3_table_behind_postgresql_is_queried_and_changed_through_the_engine() {
    let s3 = S3Server::shared();
    let bucket = s3.fresh_bucket().unwrap();
    let url = PostgresServer::shared().fresh_database().unwrap();
    let catalog: Arc<dyn Catalog> = Arc::new(
        PostgresCatalog::connect(&url, "geoberg", format!("s3://{bucket}/wh"))
            .unwrap()
            .with_storage(Storage::with_options(s3.env())),
    );
    let table = create_points_in(&catalog, "t", 4326, 8);
    let files: Vec<Vec<Row>> = (0..3)
        .map(|f| {
            (0..30)
                .map(|i| Row {
                    id: f * 100 + i,
                    n: (i % 3) as i32,
                    x: i as f64,
                    state: None,
                    point: Some((f as f64 * 20.0 + (i % 6) as f64, (i / 6) as f64)),
                })
                .collect()
        })
        .collect();
    let table = append_files(table, &files, 4326);
    assert!(table.metadata_location().starts_with("s3://"));
    let all: Vec<&Row> = files.iter().flatten().collect();

    let session = BlockingSession::new(Arc::clone(&catalog), "geoberg").unwrap();
    let window = "ST_Intersects(geom, ST_MakeEnvelope(19, 1, 23, 3))";
    let expect: Vec<i64> = all
        .iter()
        .filter(|r| {
            let (x, y) = r.point.unwrap();
            (19.0..=23.0).contains(&x) && (1.0..=3.0).contains(&y)
        })
        .map(|r| r.id)
        .collect();
    assert!(!expect.is_empty());
    assert_eq!(
        ids(&session
            .sql(&format!("SELECT id FROM geo.t WHERE {window}"))
            .unwrap()),
        expect
    );
    assert_eq!(
        scalar_i64(
            &session
                .sql("SELECT count(*) FROM geo.t WHERE n = 1")
                .unwrap()
        ),
        all.iter().filter(|r| r.n == 1).count() as i64
    );

    session
        .sql("INSERT INTO geo.t (id, n, x, state, geom) VALUES (999, 1, 0.5, 'z', ST_SetSRID(ST_Point(21, 2), 4326))")
        .unwrap();
    let table = Table::load(Arc::clone(&catalog), &TableIdent::new("geo", "t").unwrap()).unwrap();
    assert!(
        table
            .data_files()
            .unwrap()
            .iter()
            .all(|f| f.file_path().starts_with(&format!("s3://{bucket}/"))),
        "every data file is in the bucket"
    );
    let mut with_new = expect.clone();
    with_new.push(999);
    assert_eq!(
        ids(&session
            .sql(&format!("SELECT id FROM geo.t WHERE {window}"))
            .unwrap()),
        with_new
    );
    // A Parquet file in the bucket, read by its URL through the catalog's client, and as an
    // external table: one of the data files, 30 rows. A fresh session, which has scanned no
    // table (a scan registers its table's store too).
    let first = table
        .data_files()
        .unwrap()
        .iter()
        .map(|f| (f.file_path().to_string(), f.record_count()))
        .find(|(_, rows)| *rows == 30)
        .unwrap();
    let fresh = BlockingSession::new(Arc::clone(&catalog), "geoberg").unwrap();
    assert_eq!(
        scalar_i64(
            &fresh
                .sql(&format!("SELECT count(*) FROM '{}'", first.0))
                .unwrap()
        ),
        30
    );
    let fresh = BlockingSession::new(Arc::clone(&catalog), "geoberg").unwrap();
    fresh
        .sql(&format!(
            "CREATE EXTERNAL TABLE in_bucket STORED AS PARQUET LOCATION '{}'",
            first.0
        ))
        .unwrap();
    assert_eq!(
        scalar_i64(&fresh.sql("SELECT count(*) FROM in_bucket").unwrap()),
        30
    );
    session
        .sql("DELETE FROM geo.t WHERE id = 999 OR n = 1")
        .unwrap();
    with_new.retain(|id| *id != 999 && all.iter().find(|r| r.id == *id).unwrap().n != 1);
    assert_eq!(
        ids(&session
            .sql(&format!("SELECT id FROM geo.t WHERE {window}"))
            .unwrap()),
        with_new
    );
}
