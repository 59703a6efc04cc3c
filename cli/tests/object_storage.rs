//! `geoberg` on a warehouse in S3 (a real SeaweedFS server) behind a shared PostgreSQL catalog
//! (a real server), configured the way users know: `--warehouse s3://...`, `--catalog-uri
//! postgresql://...` and the standard `AWS_*` variables. Secrets never show in output.

mod common;

use std::process::Command;

use common::*;
use geoberg_testkit::{PostgresServer, S3Server};

#[test]
fn a_warehouse_in_s3_with_a_postgresql_catalog() {
    let s3 = S3Server::shared();
    let pg = PostgresServer::shared();
    let remote = Remote::new(s3, pg);
    let points = scattered_points(2_000);
    let file = remote.dir.path().join("points.parquet");
    write_points(&file, &points, None);
    remote
        .run(&[
            "import",
            file.to_str().unwrap(),
            "--table",
            "db.points",
            "--rows-per-file",
            "500",
        ])
        .ok();
    let count = remote.run(&["sql", "SELECT count(*) FROM db.points"]).ok();
    assert_eq!(count.value(), points.len().to_string());
    remote
        .run(&[
            "sql",
            "CREATE SPATIAL INDEX FOR db.points USING hilbert(geometry, 12)",
        ])
        .ok();
    let j = remote.run(&["--json", "inspect", "db.points"]).ok().json();
    assert!(
        j["location"]
            .as_str()
            .unwrap()
            .starts_with(&format!("s3://{}/", remote.bucket)),
        "{j}"
    );
    let window = "SELECT count(*) FROM db.points WHERE ST_Intersects(geometry, ST_MakeEnvelope(0, 0, 90, 45, 4326))";
    let n: usize = remote.run(&["sql", window]).ok().value().parse().unwrap();
    let expected = points
        .iter()
        .filter(|(_, x, y)| (0.0..=90.0).contains(x) && (0.0..=45.0).contains(y))
        .count();
    assert_eq!(n, expected);
    // Nothing printed carries the secret or the password-free catalog URI is all there is.
    let secret = s3
        .env()
        .into_iter()
        .find(|(k, _)| *k == "AWS_SECRET_ACCESS_KEY")
        .unwrap()
        .1;
    let all = format!("{j}");
    assert!(!all.contains(&secret));

    // A remote warehouse without a shared catalog is refused, naming the fix.
    let out = Command::new(env!("CARGO_BIN_EXE_geoberg"))
        .args([
            "--warehouse",
            "s3://bucket/x",
            "sql",
            "SHOW TBLPROPERTIES db.points",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success());
    assert!(stderr.contains("--catalog-uri"), "{stderr}");
}
