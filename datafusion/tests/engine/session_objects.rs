//! What a session keeps beside the catalog: views (`CREATE [OR REPLACE] [TEMPORARY] VIEW`,
//! seed 001), and Parquet files read in SQL (`SELECT ... FROM 'file.parquet'`, `CREATE
//! EXTERNAL TABLE`), checked against the row counts the files' writers recorded
//! (`shared/realdata`), joined with a geoberg table and loaded into one (CTAS).

use std::path::{Path, PathBuf};

use crate::common::{Warehouse, ids, scalar_i64};

fn realdata() -> PathBuf {
    let dir = std::env::var_os("GEOBERG_REALDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/realdata"));
    assert!(
        dir.join("parquet-testing").is_dir(),
        "real-data folder {} is missing; set GEOBERG_REALDATA to the shared/realdata folder",
        dir.display()
    );
    dir.canonicalize().unwrap()
}

#[test]
fn temporary_views_live_in_the_session() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE db.pts (id bigint, geom geometry(4326))")
        .unwrap();
    let values: Vec<String> = (0..10)
        .map(|i| format!("({i}, ST_SetSRID(ST_Point({i}, {i}), 4326))"))
        .collect();
    s.sql(&format!("INSERT INTO db.pts VALUES {}", values.join(", ")))
        .unwrap();

    // Seed 001's form.
    s.sql(
        "CREATE OR REPLACE TEMPORARY VIEW near AS SELECT id FROM db.pts \
         WHERE ST_Intersects(geom, ST_MakeEnvelope(0, 0, 3.5, 3.5))",
    )
    .unwrap();
    assert_eq!(
        ids(&s.sql("SELECT id FROM near").unwrap()),
        vec![0, 1, 2, 3]
    );
    // A view reads the table as it is when queried.
    s.sql("INSERT INTO db.pts VALUES (20, ST_SetSRID(ST_Point(1.5, 1.5), 4326))")
        .unwrap();
    assert_eq!(
        ids(&s.sql("SELECT id FROM near").unwrap()),
        vec![0, 1, 2, 3, 20]
    );
    // OR REPLACE replaces it; without it, an existing name is an error.
    s.sql("CREATE OR REPLACE TEMPORARY VIEW near AS SELECT id FROM db.pts WHERE id > 8")
        .unwrap();
    assert_eq!(ids(&s.sql("SELECT id FROM near").unwrap()), vec![9, 20]);
    assert!(s.sql("CREATE TEMPORARY VIEW near AS SELECT 1").is_err());
    // A plain CREATE VIEW of an unqualified name is a session view too.
    s.sql("CREATE VIEW ten AS SELECT count(*) AS n FROM db.pts")
        .unwrap();
    assert_eq!(scalar_i64(&s.sql("SELECT n FROM ten").unwrap()), 11);
    s.sql("DROP VIEW ten").unwrap();
    assert!(s.sql("SELECT n FROM ten").is_err());

    // Views are not stored in the catalog: a namespace-qualified one says what to write.
    let err = s
        .sql("CREATE TEMPORARY VIEW db.v AS SELECT 1")
        .unwrap_err()
        .to_string();
    assert!(err.contains("without one"), "{err}");
    let err = s
        .sql("CREATE VIEW db.v AS SELECT 1 AS one")
        .unwrap_err()
        .to_string();
    assert!(err.contains("CREATE TEMPORARY VIEW"), "{err}");
    assert!(
        !w.catalog
            .list_tables("db")
            .unwrap()
            .iter()
            .any(|t| t.name() == "v")
    );
    // Another session does not see them.
    let other = w.session();
    assert!(other.sql("SELECT id FROM near").is_err());
}

#[test]
fn parquet_files_are_tables_in_sql() {
    let dir = realdata().join("parquet-testing");
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("expected_row_group_stats.json")).unwrap())
            .unwrap();
    let w = Warehouse::new();
    let s = w.session();
    let mut checked = 0;
    for (file, stats) in expected.as_object().unwrap() {
        let rows = stats["rows"].as_i64().unwrap();
        let path = dir.join(file);
        let got = scalar_i64(
            &s.sql(&format!("SELECT count(*) FROM '{}'", path.display()))
                .unwrap(),
        );
        assert_eq!(got, rows, "{file}");
        checked += 1;
    }
    assert!(checked >= 5, "{checked} files");

    // An external table over a GeoParquet file, joined with a geoberg table.
    let points = dir.join("geospatial.parquet");
    s.sql(&format!(
        "CREATE EXTERNAL TABLE outside STORED AS PARQUET LOCATION '{}'",
        points.display()
    ))
    .unwrap();
    let outside = scalar_i64(&s.sql("SELECT count(*) FROM outside").unwrap());
    assert_eq!(
        outside,
        expected["geospatial.parquet"]["rows"].as_i64().unwrap()
    );
    // Joined with a geoberg table: the same rows as the file filtered by the table's point.
    s.sql("CREATE TABLE db.pts (id bigint, geom geometry(4326))")
        .unwrap();
    s.sql("INSERT INTO db.pts VALUES (1, ST_SetSRID(ST_Point(30, 10), 4326))")
        .unwrap();
    let joined = scalar_i64(
        &s.sql("SELECT count(*) FROM outside o JOIN db.pts p ON ST_Intersects(o.geometry, p.geom)")
            .unwrap(),
    );
    let filtered = scalar_i64(
        &s.sql(
            "SELECT count(*) FROM outside \
             WHERE ST_Intersects(ST_GeomFromText(wkt), ST_Point(30, 10))",
        )
        .unwrap(),
    );
    assert!(joined > 0);
    assert_eq!(joined, filtered);

    // A Parquet file loads into a new geoberg table in one statement.
    s.sql(&format!(
        "CREATE TABLE db.loaded AS SELECT * FROM '{}'",
        points.display()
    ))
    .unwrap();
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM db.loaded").unwrap()),
        outside
    );
    let described =
        geoberg_datafusion::pretty_format(&s.sql("DESCRIBE db.loaded").unwrap()).unwrap();
    // The file's GEOMETRY column (CRS OGC:CRS84) is a geometry(4326) column of the table.
    assert!(
        described.contains("| geometry | geometry(4326) |"),
        "{described}"
    );

    // In a namespace, an external table is refused with the session's form.
    let err = s
        .sql(&format!(
            "CREATE EXTERNAL TABLE db.outside STORED AS PARQUET LOCATION '{}'",
            points.display()
        ))
        .unwrap_err()
        .to_string();
    assert!(err.contains("CREATE EXTERNAL TABLE"), "{err}");
}
