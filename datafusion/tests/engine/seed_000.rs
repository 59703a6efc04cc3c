//! Seed 000 ("Cluster Tables with a Spatial Index") as written, names adapted: its first example
//! on a small table (a few MB) now skips files, because without `target-file-count` a small
//! table still gets several files; the seed's `CALL rewrite_data_files` equivalent, its
//! `OPTIONS` and `WHERE` forms. The oracle for every count is the same query before the index.

use crate::common::{Warehouse, plan_text, scalar_i64, scan_metric};

#[test]
fn seed_000_a_small_table_skips_files_after_the_two_argument_index() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE geoberg.db.test_table (id bigint, state string, geom geometry(4326))")
        .unwrap();
    // 200,000 points spread over the world by a fixed hash of the id (no random()), in
    // arrival order: every appended file spans the map.
    for part in 0..4 {
        s.sql(&format!(
            "INSERT INTO geoberg.db.test_table SELECT value, \
             CASE WHEN value % 2 = 0 THEN 'CA' ELSE 'NV' END, \
             ST_SetSRID(ST_Point((value * 7919 % 36000) / 100.0 - 180.0, \
                                 (value * 104729 % 17000) / 100.0 - 85.0), 4326) \
             FROM generate_series({}, {})",
            part * 50_000,
            part * 50_000 + 49_999
        ))
        .unwrap();
    }
    // The seed's query: a 1° × 1° window.
    let query = "SELECT count(*) FROM geoberg.db.test_table WHERE \
                 ST_Contains(ST_GeomFromWKT('POLYGON ((0 0, 0 1, 1 1, 1 0, 0 0))'), geom)";
    let expected = scalar_i64(&s.sql(query).unwrap());
    assert!(expected > 0, "the window holds points");
    let files = |sql: &str| {
        let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {sql}")).unwrap());
        (
            scan_metric(&plan, "files_read"),
            scan_metric(&plan, "files_total"),
        )
    };
    let (read, total) = files(query);
    assert_eq!(
        (read, total),
        (4, 4),
        "arrival order: every file spans the map"
    );

    // The seed's example, two-argument form: WGS84 bounds, automatic file size.
    s.sql("CREATE SPATIAL INDEX FOR geoberg.db.test_table USING hilbert(geom, 10);")
        .unwrap();
    assert_eq!(scalar_i64(&s.sql(query).unwrap()), expected);
    let (read, total) = files(query);
    assert!(
        total >= 3,
        "a small table still gets several files: {total}"
    );
    assert!(read < total, "the window skips files: {read} of {total}");
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM geoberg.db.test_table").unwrap()),
        200_000
    );

    // "CREATE SPATIAL INDEX FOR is actually a syntax sugar for calling rewrite_data_files".
    s.sql(
        "CALL geoberg.system.rewrite_data_files(
            table => 'geoberg.db.test_table',
            strategy => 'sort',
            sort_order => 'hilbert(geom, 10)',
            options => map('rewrite-all', 'true')
        )",
    )
    .unwrap();
    assert_eq!(scalar_i64(&s.sql(query).unwrap()), expected);
    assert_eq!(files(query).1, total, "the same automatic size");

    // OPTIONS and WHERE, as the seed writes them.
    s.sql(
        "CREATE SPATIAL INDEX FOR geoberg.db.test_table USING hilbert(geom, 10)
         OPTIONS map('target-file-size-bytes', '10485760')",
    )
    .unwrap();
    s.sql(
        "CREATE SPATIAL INDEX FOR geoberg.db.test_table USING hilbert(geom, 10)
         WHERE state = 'CA'",
    )
    .unwrap();
    s.sql(
        "CREATE SPATIAL INDEX FOR geoberg.db.test_table USING hilbert(geom, 10)
         OPTIONS map('target-file-count', '8')",
    )
    .unwrap();
    assert_eq!(scalar_i64(&s.sql(query).unwrap()), expected);
    let (read, total) = files(query);
    assert!(total >= 8, "target-file-count 8: {total} files");
    assert!(read < total, "{read} of {total}");
}
