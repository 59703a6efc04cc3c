//! Tables in object storage: a real S3 server (SeaweedFS, started by the test harness), the
//! whole life of a table through it — create, append, window scan, CREATE SPATIAL INDEX,
//! merge-on-read DELETE, expire, orphans — and the storage's promises: create-if-absent, ranged
//! reads, multipart uploads, listing.

mod common;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use common::*;
use geoberg_table::{
    BBox, Catalog, RowChangeMode, RowFilter, SqliteCatalog, Storage, Table, TableIdent,
};
use geoberg_testkit::S3Server;

fn s3_catalog(dir: &std::path::Path, s3: &S3Server, bucket: &str) -> Arc<dyn Catalog> {
    let storage = Storage::with_options(s3.env());
    let catalog = SqliteCatalog::open(
        dir.join("catalog.db"),
        "geoberg",
        format!("s3://{bucket}/warehouse"),
    )
    .unwrap()
    .with_storage(storage);
    catalog.create_namespace("test_db").unwrap();
    Arc::new(catalog)
}

#[test]
fn a_table_lives_in_s3_from_create_to_orphan_removal() {
    let s3 = S3Server::shared();
    let bucket = s3.fresh_bucket().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let catalog = s3_catalog(dir.path(), s3, &bucket);
    let mut t = points_table(catalog.clone(), "points");
    assert!(
        t.metadata()
            .location()
            .starts_with(&format!("s3://{bucket}/warehouse/test_db/points"))
    );
    for a in 0..4i64 {
        t = t
            .append(&[points_batch(a * 100..(a + 1) * 100, uniform(5))])
            .unwrap()
            .0;
    }
    let all: Vec<i64> = (0..400).collect();
    let (batches, _) = t.scan().execute().unwrap();
    assert_eq!(ids_of(&batches), all);
    let window = BBox::new(-60.0, -30.0, 0.0, 30.0);
    let expect = |t: &Table| {
        let (b, _) = t.scan().execute().unwrap();
        let mut ids = Vec::new();
        use arrow_array::cast::AsArray;
        for b in &b {
            let g = b.column(2).as_binary::<i32>();
            let id = b.column(0).as_primitive::<arrow_array::types::Int64Type>();
            for r in 0..b.num_rows() {
                let w = g.value(r);
                let x = f64::from_le_bytes(w[5..13].try_into().unwrap());
                let y = f64::from_le_bytes(w[13..21].try_into().unwrap());
                if window.min_x <= x && x <= window.max_x && window.min_y <= y && y <= window.max_y
                {
                    ids.push(id.value(r));
                }
            }
        }
        ids.sort();
        ids
    };
    let want = expect(&t);
    let (batches, _) = t.scan().with_window("geom", window).execute().unwrap();
    assert_eq!(ids_of(&batches), want);

    // CREATE SPATIAL INDEX streams its outputs as multipart uploads and commits in S3.
    let (t, report) = t
        .rewrite()
        .hilbert("geom", 12)
        .option("target-file-count", "8")
        .execute()
        .unwrap();
    assert_eq!(report.rewritten_data_files_count, 4, "{report}");
    let (batches, explain) = t.scan().with_window("geom", window).execute().unwrap();
    assert_eq!(ids_of(&batches), want);
    assert!(explain.files_skipped > 0, "{explain}");

    // A merge-on-read delete writes a Puffin file to S3; reads apply it.
    let filter = RowFilter::from_predicate(geoberg_sql::parse_condition("id < 50").unwrap());
    let (t, _) = t
        .delete(filter)
        .mode(RowChangeMode::MergeOnRead)
        .execute()
        .unwrap();
    let (batches, _) = t.scan().execute().unwrap();
    assert_eq!(ids_of(&batches), (50..400).collect::<Vec<_>>());
    assert!(
        t.delete_files().unwrap()[0]
            .file_path()
            .starts_with("s3://")
    );

    // Another process (another catalog handle on the same database and bucket) sees it all.
    let other: Arc<dyn Catalog> = Arc::new(
        SqliteCatalog::open(
            dir.path().join("catalog.db"),
            "geoberg",
            format!("s3://{bucket}/warehouse"),
        )
        .unwrap()
        .with_storage(Storage::with_options(s3.env())),
    );
    let seen = Table::load(other, &TableIdent::new("test_db", "points").unwrap()).unwrap();
    let (batches, _) = seen.scan().execute().unwrap();
    assert_eq!(ids_of(&batches).len(), 350);

    // Expiry deletes the replaced files in S3; a stray object is an orphan, then gone.
    let future = SystemTime::now() + Duration::from_secs(3600);
    let (t, expired) = t.expire_snapshots(future, 1).unwrap();
    assert!(
        expired
            .deleted_files
            .iter()
            .any(|f| f.ends_with(".parquet")),
        "{expired:?}"
    );
    assert!(expired.undeleted_files.is_empty(), "{expired:?}");
    let stray = format!("{}/data/stray.parquet", t.metadata().location());
    t.storage()
        .write_new(&stray, b"not referenced".to_vec())
        .unwrap();
    assert_eq!(t.orphan_files(future).unwrap(), vec![stray.clone()]);
    assert_eq!(t.remove_orphan_files(future).unwrap(), vec![stray.clone()]);
    assert!(t.storage().head(&stray).unwrap_err().is_not_found());
    let (batches, _) = t.refresh().unwrap().scan().execute().unwrap();
    assert_eq!(ids_of(&batches), (50..400).collect::<Vec<_>>());
}

#[test]
fn s3_storage_never_overwrites_and_reads_ranges() {
    let s3 = S3Server::shared();
    let bucket = s3.fresh_bucket().unwrap();
    let storage = Storage::with_options(s3.env());
    let location = format!("s3://{bucket}/x/file.bin");
    let bytes: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    storage.write_new(&location, bytes.clone()).unwrap();
    let again = storage.write_new(&location, b"other".to_vec()).unwrap_err();
    assert!(
        again.to_string().contains("exists") || again.to_string().contains("Exists"),
        "{again}"
    );
    assert_eq!(storage.read(&location).unwrap(), bytes);
    assert_eq!(
        storage.read_range(&location, 100..200).unwrap(),
        &bytes[100..200]
    );
    assert_eq!(storage.head(&location).unwrap().size, 10_000);

    // A streamed file (multipart upload, several parts) is invisible until finished.
    use std::io::Write;
    let big = format!("s3://{bucket}/x/big.bin");
    let mut w = storage.create(&big).unwrap();
    let chunk = vec![7u8; 1 << 20];
    for _ in 0..20 {
        w.write_all(&chunk).unwrap();
    }
    assert!(storage.head(&big).unwrap_err().is_not_found());
    assert_eq!(w.finish().unwrap(), 20 << 20);
    assert_eq!(storage.head(&big).unwrap().size, 20 << 20);
    // An unfinished upload leaves nothing.
    let dropped = format!("s3://{bucket}/x/dropped.bin");
    let mut w = storage.create(&dropped).unwrap();
    w.write_all(&chunk).unwrap();
    drop(w);
    assert!(storage.head(&dropped).unwrap_err().is_not_found());

    let listed: Vec<String> = storage
        .list(&format!("s3://{bucket}/x"))
        .unwrap()
        .into_iter()
        .map(|f| f.location)
        .collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
    storage.delete(&location).unwrap();
    storage.delete(&location).unwrap(); // a missing file is no error
    // Secrets stay out of Debug output.
    let debug = format!("{storage:?}");
    let secret = s3
        .env()
        .into_iter()
        .find(|(k, _)| *k == "AWS_SECRET_ACCESS_KEY")
        .unwrap()
        .1;
    assert!(!debug.contains(&secret), "{debug}");
}
