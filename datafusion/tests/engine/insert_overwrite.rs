//! `INSERT OVERWRITE` in SQL (seed 002's per-partition backfill): the partitions the query's
//! rows fall in are replaced in one `overwrite` snapshot, the others kept, re-running is
//! idempotent; on an unpartitioned table the whole table is replaced.

use crate::common::{Warehouse, ids, scalar_i64};

#[test]
fn insert_overwrite_replaces_the_partitions_of_its_rows() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql(
        "CREATE TABLE db.events (id bigint, day string, geom geometry(4326)) \
         USING iceberg PARTITIONED BY (day)",
    )
    .unwrap();
    let values = |ids: std::ops::Range<i64>, day: &str| -> String {
        ids.map(|i| format!("({i}, '{day}', ST_SetSRID(ST_Point({i}, 1), 4326))"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    s.sql(&format!(
        "INSERT INTO db.events VALUES {}, {}, {}",
        values(0..5, "d1"),
        values(5..10, "d2"),
        values(10..15, "d3")
    ))
    .unwrap();
    s.sql(&format!(
        "INSERT INTO db.events VALUES {}",
        values(15..18, "d2")
    ))
    .unwrap();

    // The backfill of day d2, from a query: rows 5..10 and 15..18 go, 100..103 come.
    s.sql(&format!(
        "CREATE TABLE db.staging AS SELECT * FROM (VALUES {}) t(id, day, geom)",
        values(100..103, "d2")
    ))
    .unwrap();
    let inserted = s
        .sql("INSERT OVERWRITE db.events SELECT id, day, geom FROM db.staging")
        .unwrap();
    assert_eq!(scalar_i64(&inserted), 3);
    let expected: Vec<i64> = (0..5).chain(10..15).chain(100..103).collect();
    assert_eq!(ids(&s.sql("SELECT id FROM db.events").unwrap()), expected);
    assert_eq!(
        scalar_i64(
            &s.sql("SELECT count(*) FROM db.events.snapshots WHERE operation = 'overwrite'")
                .unwrap()
        ),
        1
    );
    // Only day d2's files changed: d1 and d3 keep theirs, d2 has the one new file.
    assert_eq!(
        scalar_i64(
            &s.sql("SELECT count(*) FROM db.events.files WHERE partition.day = 'd2'")
                .unwrap()
        ),
        1
    );

    // Again (the Hive form with TABLE): idempotent.
    s.sql("INSERT OVERWRITE TABLE db.events SELECT id, day, geom FROM db.staging")
        .unwrap();
    assert_eq!(ids(&s.sql("SELECT id FROM db.events").unwrap()), expected);

    // A query with no rows replaces nothing.
    s.sql("INSERT OVERWRITE db.events SELECT id, day, geom FROM db.staging WHERE id < 0")
        .unwrap();
    assert_eq!(ids(&s.sql("SELECT id FROM db.events").unwrap()), expected);
}

#[test]
fn insert_overwrite_of_an_unpartitioned_table_replaces_it_whole() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE db.flat (id bigint, geom geometry(4326))")
        .unwrap();
    s.sql(
        "INSERT INTO db.flat VALUES (1, ST_SetSRID(ST_Point(1, 1), 4326)), \
         (2, ST_SetSRID(ST_Point(2, 2), 4326))",
    )
    .unwrap();
    s.sql("INSERT OVERWRITE db.flat VALUES (7, ST_SetSRID(ST_Point(7, 7), 4326))")
        .unwrap();
    assert_eq!(ids(&s.sql("SELECT id FROM db.flat").unwrap()), vec![7]);
    // The rows are checked as INSERT INTO checks them: a value in another CRS is refused and
    // the table is unchanged.
    let err = s
        .sql("INSERT OVERWRITE db.flat VALUES (8, ST_SetSRID(ST_Point(8, 8), 3857))")
        .unwrap_err()
        .to_string();
    assert!(err.contains("3857"), "{err}");
    assert_eq!(ids(&s.sql("SELECT id FROM db.flat").unwrap()), vec![7]);
}

#[test]
fn a_static_partition_is_replaced_by_its_rows_and_emptied_by_none() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql(
        "CREATE TABLE db.days (id bigint, day date, geom geometry(4326)) \
         USING iceberg PARTITIONED BY (day)",
    )
    .unwrap();
    let values = |ids: std::ops::Range<i64>, day: &str| -> String {
        ids.map(|i| format!("({i}, DATE '{day}', ST_SetSRID(ST_Point({i}, 1), 4326))"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    s.sql(&format!(
        "INSERT INTO db.days VALUES {}, {}",
        values(0..5, "2026-12-01"),
        values(5..10, "2026-12-02")
    ))
    .unwrap();
    s.sql(
        "CREATE TABLE db.fresh AS SELECT id, geom FROM (VALUES \
         (100, ST_SetSRID(ST_Point(100, 1), 4326)), (101, ST_SetSRID(ST_Point(101, 1), 4326))) \
         t(id, geom)",
    )
    .unwrap();

    // Seed 002's per-partition backfill as SQL: the query gives the other columns.
    let out = s
        .sql(
            "INSERT OVERWRITE TABLE db.days PARTITION (day = '2026-12-02') \
             SELECT id, geom FROM db.fresh",
        )
        .unwrap();
    assert_eq!(scalar_i64(&out), 2);
    let expected: Vec<i64> = (0..5).chain([100, 101]).collect();
    assert_eq!(ids(&s.sql("SELECT id FROM db.days").unwrap()), expected);
    assert_eq!(
        ids(&s
            .sql("SELECT id FROM db.days WHERE day = DATE '2026-12-02'")
            .unwrap()),
        vec![100, 101]
    );
    // Idempotent.
    s.sql(
        "INSERT OVERWRITE TABLE db.days PARTITION (day = '2026-12-02') \
         SELECT id, geom FROM db.fresh",
    )
    .unwrap();
    assert_eq!(ids(&s.sql("SELECT id FROM db.days").unwrap()), expected);
    // No rows empty the named partition (unlike the dynamic form).
    s.sql(
        "INSERT OVERWRITE db.days PARTITION (day = '2026-12-01') \
         SELECT id, geom FROM db.fresh WHERE id < 0",
    )
    .unwrap();
    assert_eq!(
        ids(&s.sql("SELECT id FROM db.days").unwrap()),
        vec![100, 101]
    );

    // A column that is not an identity partition column is refused, naming the ones there are.
    let err = s
        .sql("INSERT OVERWRITE db.days PARTITION (id = 1) SELECT day, geom FROM db.days")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("id is not an identity partition column") && err.contains("(day)"),
        "{err}"
    );
    assert_eq!(
        ids(&s.sql("SELECT id FROM db.days").unwrap()),
        vec![100, 101]
    );
}
