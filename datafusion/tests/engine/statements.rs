//! Seed 004's statements as written, and the DDL of the engine over a geoberg catalog.

use crate::common::{Warehouse, ids, scalar_i64};
use geoberg_datafusion::{Error, pretty_format};

#[test]
fn seed_004_create_insert_and_query_run_as_written() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql(
        "CREATE TABLE IF NOT EXISTS geoberg.test_db.test_table (
            id bigint,
            data string,
            geom geometry(4326)
        ) USING iceberg
        PARTITIONED BY (bucket(4, id))",
    )
    .unwrap();
    let inserted = s
        .sql(
            "INSERT INTO geoberg.test_db.test_table
             VALUES (1, 'a', ST_SetSRID(ST_GeomFromText('POINT (1 2)'), 4326)),
                    (2, 'b', ST_SetSRID(ST_Point(2, 3), 4326))",
        )
        .unwrap();
    assert_eq!(scalar_i64(&inserted), 2);
    s.sql(
        "INSERT INTO geoberg.test_db.test_table
         SELECT 3, 'c', ST_SetSRID(ST_Point(3, 4), 4326)",
    )
    .unwrap();

    // A query shape without SRID is taken in the column's CRS.
    let rows = s
        .sql(
            "SELECT id FROM geoberg.test_db.test_table
             WHERE ST_Intersects(geom, ST_GeomFromText('POLYGON ((0 0, 0 2, 2 2, 2 0, 0 0))'))",
        )
        .unwrap();
    assert_eq!(ids(&rows), [1]);
    let rows = s
        .sql(
            "SELECT id FROM test_db.test_table
             WHERE ST_Contains(ST_GeomFromWKT('POLYGON ((0 0, 0 5, 5 5, 5 0, 0 0))'), geom)
             ORDER BY id",
        )
        .unwrap();
    assert_eq!(ids(&rows), [1, 2, 3]);

    // Writes stay strict: a constructor's value has SRID 0 and is refused by the table.
    let err = s
        .sql("INSERT INTO test_db.test_table VALUES (4, 'd', ST_GeomFromText('POINT (1 2)'))")
        .unwrap_err();
    assert!(matches!(err, Error::Table(_)), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("SRID 0") && message.contains("geom"),
        "{message}"
    );
    // Nothing of the refused statement is visible.
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM test_db.test_table").unwrap()),
        3
    );

    let ddl = s.sql("SHOW CREATE TABLE test_db.test_table").unwrap();
    let ddl = pretty_format(&ddl).unwrap();
    assert!(ddl.contains("geom GEOMETRY(4326)"), "{ddl}");
    assert!(ddl.contains("bucket(4, id)"), "{ddl}");
}

/// A `VALUES` list mixing labelled geometries and a bare `NULL` keeps the label.
#[test]
fn a_null_in_values_keeps_the_other_rows_srid() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE db.t (id bigint, geom geometry(4326))")
        .unwrap();
    s.sql(
        "INSERT INTO db.t VALUES (1, ST_SetSRID(ST_Point(1, 2), 4326)), (2, NULL), \
         (3, ST_SetSRID(ST_GeomFromText('POINT EMPTY'), 4326))",
    )
    .unwrap();
    assert_eq!(
        scalar_i64(
            &s.sql("SELECT count(*) FROM db.t WHERE geom IS NULL")
                .unwrap()
        ),
        1
    );
    assert_eq!(
        ids(&s.sql("SELECT id FROM db.t ORDER BY id").unwrap()),
        [1, 2, 3]
    );
    // Disagreeing labels are still refused.
    let err = s
        .sql(
            "INSERT INTO db.t VALUES (4, ST_SetSRID(ST_Point(1, 2), 4326)), \
             (5, ST_SetSRID(ST_Point(1, 2), 3857))",
        )
        .unwrap_err();
    assert!(err.to_string().contains("SRID"), "{err}");
}

#[test]
fn one_commit_per_insert_statement() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE db.t (id bigint, geom geometry(4326))")
        .unwrap();
    s.sql(
        "INSERT INTO db.t SELECT value, ST_SetSRID(ST_Point(value, value), 4326) \
         FROM generate_series(1, 5000)",
    )
    .unwrap();
    let table = geoberg_table::Table::load(
        w.catalog.clone(),
        &geoberg_table::TableIdent::new("db", "t").unwrap(),
    )
    .unwrap();
    assert_eq!(table.metadata().snapshots().count(), 1);
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM db.t").unwrap()),
        5000
    );
    // An empty insert commits nothing.
    let none = s
        .sql("INSERT INTO db.t SELECT 1, geom FROM db.t WHERE false")
        .unwrap();
    assert_eq!(scalar_i64(&none), 0);
    let table = table.refresh().unwrap();
    assert_eq!(table.metadata().snapshots().count(), 1);
}

#[test]
fn crs_rules_of_create_table_are_the_table_crates() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE SCHEMA geoberg.db").unwrap();
    // Through the engine's CREATE TABLE (no Spark clauses) and through geoberg's parser.
    for sql in [
        "CREATE TABLE db.bad (g geometry(4269))",
        "CREATE TABLE db.bad (g geometry(4269)) USING iceberg",
    ] {
        let err = s.sql(sql).unwrap_err().to_string();
        assert!(
            err.contains("4269") && err.contains("0, 3857 or 4326"),
            "{sql}: {err}"
        );
    }
    for sql in [
        "CREATE TABLE db.bare (g geometry)",
        "CREATE TABLE db.bare (g geometry) USING iceberg",
    ] {
        let err = s.sql(sql).unwrap_err().to_string();
        assert!(err.contains("bare geometry"), "{sql}: {err}");
    }
    let err = s
        .sql("CREATE TABLE db.v2 (g geometry(4326)) TBLPROPERTIES ('format-version' = '2')")
        .unwrap_err()
        .to_string();
    assert!(err.contains("format-version"), "{err}");

    s.sql("CREATE TABLE db.ok (id bigint NOT NULL, g geometry(0), h geography(4326))")
        .unwrap();
    let described = pretty_format(&s.sql("DESCRIBE db.ok").unwrap()).unwrap();
    assert!(described.contains("geometry(0)"), "{described}");
    assert!(described.contains("geography(4326"), "{described}");
    // geometry(0) takes values without SRID, as seed 004 says; geography stores them under
    // its CRS.
    s.sql("INSERT INTO db.ok VALUES (1, ST_GeomFromText('POINT (500000 4649776)'), NULL)")
        .unwrap();
    s.sql("INSERT INTO db.ok VALUES (2, NULL, ST_GeogFromWKT('POINT (-122.39 37.79)'))")
        .unwrap();
    let err = s
        .sql("INSERT INTO db.ok VALUES (3, ST_SetSRID(ST_Point(1, 2), 4326), NULL)")
        .unwrap_err()
        .to_string();
    assert!(err.contains("SRID 4326"), "{err}");
    assert_eq!(scalar_i64(&s.sql("SELECT count(*) FROM db.ok").unwrap()), 2);
}

#[test]
fn create_table_as_select_keeps_declared_crs_and_explains_missing_ones() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE db.src (id bigint, geom geometry(4326))")
        .unwrap();
    s.sql(
        "INSERT INTO db.src VALUES (1, ST_SetSRID(ST_Point(1, 1), 4326)), \
         (2, ST_SetSRID(ST_Point(5, 5), 4326))",
    )
    .unwrap();

    // A geometry read from a geometry(4326) column keeps its CRS.
    let out = s
        .execute("CREATE TABLE db.copy AS SELECT id, geom FROM db.src")
        .unwrap();
    assert_eq!(out[0].notices, ["created table db.copy"], "no CRS warning");
    let ddl = pretty_format(&s.sql("SHOW CREATE TABLE db.copy").unwrap()).unwrap();
    assert!(ddl.contains("geom GEOMETRY(4326)"), "{ddl}");
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM db.copy").unwrap()),
        2
    );

    // A geometry computed by an ST_ function without SRID has no declared CRS: say so.
    let out = s
        .execute("CREATE TABLE db.derived AS SELECT id, ST_Point(id, id) AS p FROM db.src")
        .unwrap();
    let notice = out[0].notices.join("\n");
    assert!(
        notice.contains("\"p\"") && notice.contains("no declared CRS"),
        "{notice}"
    );
    assert!(
        notice.contains("CREATE TABLE db.derived") && notice.contains("ST_SetSRID"),
        "{notice}"
    );
    let ddl = pretty_format(&s.sql("SHOW CREATE TABLE db.derived").unwrap()).unwrap();
    assert!(
        ddl.contains("p GEOMETRY") && !ddl.contains("p GEOMETRY("),
        "{ddl}"
    );
    assert!(ddl.contains("'format-version' = '2'"), "{ddl}");
    let rows = s
        .sql("SELECT id FROM db.derived WHERE ST_Intersects(p, ST_MakeEnvelope(0, 0, 1.5, 1.5))")
        .unwrap();
    assert_eq!(ids(&rows), [1]);

    // DROP TABLE removes it from the catalog.
    s.sql("DROP TABLE db.derived").unwrap();
    let err = s.sql("SELECT * FROM db.derived").unwrap_err().to_string();
    assert!(err.contains("not found"), "{err}");
}

/// `CREATE TABLE ... AS SELECT` maps the query's columns as an imported file's are mapped
/// (decimals, structs, lists, dictionary strings), with DataFusion's nanosecond timestamps
/// stored as microseconds, nested ones too; the rows read back equal.
#[test]
fn create_table_as_select_stores_nested_decimal_and_dictionary_columns() {
    let w = Warehouse::new();
    let s = w.session();
    s.execute(
        "CREATE TABLE db.typed AS SELECT \
           CAST(12.34 AS DECIMAL(10, 2)) AS price, \
           named_struct('a', 7, 'at', CAST('2026-12-07 10:00:00' AS TIMESTAMP)) AS s, \
           make_array(1.5, 2.5) AS xs, \
           arrow_cast('tag', 'Dictionary(Int32, Utf8)') AS tag, \
           CAST('2026-12-07 10:00:00.123456' AS TIMESTAMP) AS at",
    )
    .unwrap();
    let ddl = pretty_format(&s.sql("SHOW CREATE TABLE db.typed").unwrap()).unwrap();
    for column in [
        "price DECIMAL(10, 2)",
        "s STRUCT<a: BIGINT",
        "`at`: TIMESTAMP_NTZ",
        "xs ARRAY<DOUBLE",
        "tag STRING",
        "at TIMESTAMP_NTZ",
    ] {
        assert!(ddl.contains(column), "{column} in {ddl}");
    }
    let rows = pretty_format(
        &s.sql(
            "SELECT CAST(price AS VARCHAR) AS p, s['a'] AS a, CAST(s['at'] AS VARCHAR) AS sat, \
             xs[2] AS x2, tag, CAST(at AS VARCHAR) AS at FROM db.typed",
        )
        .unwrap(),
    )
    .unwrap();
    let row = "| 12.34 | 7 | 2026-12-07T10:00:00 | 2.5 | tag | 2026-12-07T10:00:00.123456 |";
    assert!(rows.contains(row), "{row} in\n{rows}");

    // A type no Iceberg column holds is refused with the casts that work.
    let err = s
        .sql("CREATE TABLE db.bad AS SELECT arrow_cast(1, 'Duration(Second)') AS d")
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"d\"") && err.contains("CAST it to"), "{err}");
}

#[test]
fn ordinary_sql_works_over_geoberg_tables() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE geo.points (id bigint, state string, geom geometry(4326))")
        .unwrap();
    s.sql(
        "INSERT INTO geo.points VALUES \
         (1, 'CA', ST_SetSRID(ST_Point(-122.4, 37.8), 4326)), \
         (2, 'CA', ST_SetSRID(ST_Point(-118.2, 34.0), 4326)), \
         (3, 'NY', ST_SetSRID(ST_Point(-74.0, 40.7), 4326))",
    )
    .unwrap();
    let text = pretty_format(
        &s.sql("SELECT state, count(*) AS n FROM geo.points GROUP BY state ORDER BY state")
            .unwrap(),
    )
    .unwrap();
    assert!(
        text.contains("| CA    | 2 |") && text.contains("| NY    | 1 |"),
        "{text}"
    );
    let rows = s
        .sql("SELECT id FROM geo.points WHERE state = 'CA' LIMIT 1")
        .unwrap();
    assert_eq!(rows.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    let text = pretty_format(
        &s.sql("SELECT id, ST_AsText(geom) AS wkt FROM geo.points WHERE id = 3")
            .unwrap(),
    )
    .unwrap();
    assert!(text.contains("POINT(-74 40.7)"), "{text}");
    let json = geoberg_datafusion::json_rows(
        &s.sql("SELECT id, geom FROM geo.points WHERE id = 1")
            .unwrap(),
    )
    .unwrap();
    assert_eq!(json[0]["geom"], "POINT(-122.4 37.8)");
}

#[test]
fn a_script_runs_in_order_and_a_syntax_error_runs_nothing() {
    let w = Warehouse::new();
    let s = w.session();
    let err = s
        .execute(
            "CREATE TABLE db.t (id bigint, geom geometry(4326));\n\
             SELEC * FROM db.t;",
        )
        .unwrap_err();
    assert!(err.to_string().contains("SELEC"), "{err}");
    assert!(
        s.sql("SELECT * FROM db.t").is_err(),
        "the CREATE must not have run"
    );
    let out = s
        .execute(
            "CREATE TABLE db.t (id bigint, geom geometry(4326));\n\
             INSERT INTO db.t VALUES (1, ST_SetSRID(ST_Point(0, 0), 4326));\n\
             SELECT count(*) FROM db.t;",
        )
        .unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(scalar_i64(&out[2].batches), 1);
}

#[test]
fn bad_input_gets_errors_not_panics() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE db.t (id bigint, geom geometry(4326))")
        .unwrap();
    s.sql("INSERT INTO db.t VALUES (1, ST_SetSRID(ST_Point(1, 1), 4326))")
        .unwrap();
    for (sql, expect) in [
        ("SELECT * FROM db.nope", "not found"),
        ("SELECT nope FROM db.t", "nope"),
        (
            "SELECT * FROM db.t WHERE ST_Intersects(geom, ST_GeomFromText('POINT (1 1)', 3857))",
            "Mismatched CRS",
        ),
        ("SHOW CREATE TABLE db.nope", "does not exist"),
        ("SHOW CREATE TABLE other.db.t", "catalog"),
        (
            "CREATE SPATIAL INDEX FOR db.t USING zorder(geom)",
            "hilbert",
        ),
        ("INSERT INTO db.t VALUES (2, 'not a geometry')", ""),
        (
            "SELECT * FROM db.t WHERE ST_Intersects(geom, ST_GeomFromText('POLYGON ((0 0'))",
            "",
        ),
        ("", "give a statement"),
    ] {
        let err = s.sql(sql).unwrap_err().to_string();
        assert!(err.contains(expect), "{sql}: {err}");
    }
    // A spatial argument that is not constant prunes nothing and is still right.
    let rows = s
        .sql("SELECT id FROM db.t WHERE ST_Intersects(geom, ST_Buffer(geom, 1))")
        .unwrap();
    assert_eq!(ids(&rows), [1]);
}

#[test]
fn insert_leaves_derived_columns_to_the_table() {
    let w = Warehouse::new();
    w.catalog.create_namespace("geo").unwrap();
    for (name, create) in [
        (
            "cells",
            geoberg_table::CreateTable::new([
                geoberg_table::Column::new("id", geoberg_table::DataType::Long),
                geoberg_table::Column::new("geom", geoberg_table::DataType::geometry(4326)),
            ])
            .spatial_partition("geom", 4),
        ),
        (
            "boxes",
            geoberg_table::CreateTable::new([
                geoberg_table::Column::new("id", geoberg_table::DataType::Long),
                geoberg_table::Column::new("geom", geoberg_table::DataType::geometry(4326)),
            ])
            .with_bbox_columns("geom"),
        ),
    ] {
        create
            .create(
                w.catalog.clone(),
                &geoberg_table::TableIdent::new("geo", name).unwrap(),
            )
            .unwrap();
    }
    let s = w.session();
    s.sql("INSERT INTO geo.cells (id, geom) VALUES (1, ST_SetSRID(ST_Point(10, 20), 4326))")
        .unwrap();
    let n = s
        .sql("SELECT count(*) FROM geo.cells WHERE geom_hilbert_cell IS NOT NULL")
        .unwrap();
    assert_eq!(scalar_i64(&n), 1);
    s.sql("INSERT INTO geo.boxes (id, geom) VALUES (1, ST_SetSRID(ST_Point(10, 20), 4326))")
        .unwrap();
    let n = s
        .sql("SELECT count(*) FROM geo.boxes WHERE bbox_min_x = 10 AND bbox_max_y = 20")
        .unwrap();
    assert_eq!(scalar_i64(&n), 1);
}

/// Seed 001/002's maintenance steps as statements: properties changed and removed, snapshots
/// expired with Iceberg's result columns, orphan files listed (dry run) and removed. The
/// oracle is the warehouse directory itself: which files exist before and after.
#[test]
fn properties_and_maintenance_procedures_change_the_table_as_iceberg_does() {
    use arrow::array::{AsArray, UInt64Array};

    let w = Warehouse::new();
    let s = w.session();
    s.sql(
        "CREATE TABLE db.m (id bigint, geom geometry(4326)) \
         TBLPROPERTIES ('format-version' = '3')",
    )
    .unwrap();
    for id in 1..=3 {
        s.sql(&format!(
            "INSERT INTO db.m VALUES ({id}, ST_SetSRID(ST_Point({id}, {id}), 4326))"
        ))
        .unwrap();
    }

    s.sql("ALTER TABLE db.m SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'owner' = 'gis')")
        .unwrap();
    let props = pretty_format(&s.sql("SHOW TBLPROPERTIES db.m").unwrap()).unwrap();
    assert!(
        props.contains("write.delete.mode") && props.contains("merge-on-read"),
        "{props}"
    );
    let out = s.execute("DELETE FROM db.m WHERE id = 1").unwrap();
    assert!(
        out[0].notices[0].contains("merge-on-read"),
        "{:?}",
        out[0].notices
    );
    s.sql("ALTER TABLE db.m UNSET TBLPROPERTIES ('owner')")
        .unwrap();
    let err = s
        .sql("ALTER TABLE db.m UNSET TBLPROPERTIES ('owner')")
        .unwrap_err()
        .to_string();
    assert!(err.contains("owner") && err.contains("IF EXISTS"), "{err}");
    s.sql("ALTER TABLE db.m UNSET TBLPROPERTIES IF EXISTS ('owner')")
        .unwrap();
    let err = s
        .sql("ALTER TABLE db.m SET TBLPROPERTIES ('write.delete.mode' = 'sometimes')")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("sometimes") && err.contains("merge-on-read"),
        "{err}"
    );
    // A malformed ALTER is geoberg's error, not the engine's.
    let err = s.sql("ALTER TABLE db.m SET TBLPROPERTIES").unwrap_err();
    assert!(matches!(err, Error::Sql(_)), "{err:?}");

    let table_dir = w
        .catalog
        .warehouse()
        .trim_start_matches("file://")
        .to_string()
        + "/db/m";
    let files = |sub: &str| -> usize {
        std::fs::read_dir(format!("{table_dir}/{sub}"))
            .map(|d| d.count())
            .unwrap_or(0)
    };
    let metadata_before = files("metadata");
    // Every snapshot but the current one is older than a horizon in the future.
    let expired = s
        .sql(
            "CALL geoberg.system.expire_snapshots(table => 'db.m', \
             older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)",
        )
        .unwrap();
    let count = |name: &str| {
        expired[0]
            .column_by_name(name)
            .unwrap_or_else(|| panic!("no column {name}"))
            .as_any()
            .downcast_ref::<UInt64Array>()
            .unwrap()
            .value(0)
    };
    // Four snapshots (three inserts, the delete) expire to one: three manifest lists go; the
    // inserts' manifests stay (the current snapshot lists their files), no data file is gone.
    assert_eq!(count("deleted_manifest_lists_count"), 3);
    assert_eq!(count("deleted_data_files_count"), 0);
    assert!(files("metadata") < metadata_before, "nothing was deleted");
    let rows = s.sql("SELECT id FROM db.m ORDER BY id").unwrap();
    assert_eq!(ids(&rows), [2, 3]);

    let stray = format!("{table_dir}/data/stray.parquet");
    std::fs::write(&stray, b"not referenced").unwrap();
    let listed = s
        .sql(
            "CALL geoberg.system.remove_orphan_files(table => 'db.m', \
             older_than => TIMESTAMP '2999-01-01 00:00:00', dry_run => true)",
        )
        .unwrap();
    let listed: Vec<String> = listed
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_string::<i32>()
                .iter()
                .map(|v| v.unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert!(listed[0].ends_with("stray.parquet"), "{listed:?}");
    assert!(
        std::path::Path::new(&stray).exists(),
        "a dry run deletes nothing"
    );
    s.sql(
        "CALL geoberg.system.remove_orphan_files(table => 'db.m', \
         older_than => TIMESTAMP '2999-01-01 00:00:00')",
    )
    .unwrap();
    assert!(!std::path::Path::new(&stray).exists());
    let rows = s.sql("SELECT id FROM db.m ORDER BY id").unwrap();
    assert_eq!(ids(&rows), [2, 3]);
}

/// `CALL ... rewrite_manifests` through the engine: one manifest per INSERT become one, with
/// Iceberg's result columns, and a query returns the inserted rows before and after.
#[test]
fn rewrite_manifests_procedure_keeps_the_rows_and_reports_iceberg_columns() {
    use arrow::array::UInt64Array;

    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE db.rm (id bigint, geom geometry(4326))")
        .unwrap();
    for id in 1..=6 {
        s.sql(&format!(
            "INSERT INTO db.rm VALUES ({id}, ST_SetSRID(ST_Point({id}, {id}), 4326))"
        ))
        .unwrap();
    }
    let select = "SELECT id FROM db.rm WHERE ST_Intersects(geom, \
                  ST_SetSRID(ST_MakeEnvelope(0, 0, 4.5, 4.5), 4326)) ORDER BY id";
    assert_eq!(ids(&s.sql(select).unwrap()), [1, 2, 3, 4]);
    let out = s
        .sql("CALL geoberg.system.rewrite_manifests(table => 'db.rm', use_caching => false)")
        .unwrap();
    let count = |name: &str| {
        out[0]
            .column_by_name(name)
            .unwrap_or_else(|| panic!("no column {name}"))
            .as_any()
            .downcast_ref::<UInt64Array>()
            .unwrap()
            .value(0)
    };
    assert_eq!(count("rewritten_manifests_count"), 6);
    assert_eq!(count("added_manifests_count"), 1);
    assert_eq!(ids(&s.sql(select).unwrap()), [1, 2, 3, 4]);
    assert_eq!(
        ids(&s.sql("SELECT id FROM db.rm ORDER BY id").unwrap()),
        [1, 2, 3, 4, 5, 6]
    );
    // A bad argument is a typed error naming the fix.
    let err = s
        .sql("CALL geoberg.system.rewrite_manifests(table => 'db.rm', use_caching => 'yes')")
        .unwrap_err()
        .to_string();
    assert!(err.contains("true or false"), "{err}");
}

/// `CALL ... maintain`: healthy by the table's thresholds it rewrites nothing; past them it runs
/// an incremental clustering that keeps every row, and says why in its notice.
#[test]
fn maintain_procedure_clusters_when_due_and_keeps_the_rows() {
    use arrow::array::UInt64Array;

    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE db.mt (id bigint, geom geometry(4326))")
        .unwrap();
    for id in 1..=8 {
        s.sql(&format!(
            "INSERT INTO db.mt VALUES ({id}, ST_SetSRID(ST_Point({id}, {id}), 4326)), \
             ({}, ST_SetSRID(ST_Point(-{id}, -{id}), 4326))",
            id + 100
        ))
        .unwrap();
    }
    s.sql("CREATE SPATIAL INDEX FOR db.mt USING hilbert(geom, 16)")
        .unwrap();
    s.sql("INSERT INTO db.mt VALUES (9, ST_SetSRID(ST_Point(9, 9), 4326))")
        .unwrap();
    let count = |out: &[arrow_array::RecordBatch], name: &str| {
        out[0]
            .column_by_name(name)
            .unwrap_or_else(|| panic!("no column {name}"))
            .as_any()
            .downcast_ref::<UInt64Array>()
            .unwrap()
            .value(0)
    };
    s.sql(
        "ALTER TABLE db.mt SET TBLPROPERTIES ('geoberg.maintain.max-overlap-depth' = '100', \
         'geoberg.maintain.max-new-files' = '100')",
    )
    .unwrap();
    let out = s
        .sql("CALL geoberg.system.maintain(table => 'db.mt')")
        .unwrap();
    assert_eq!(count(&out, "rewritten_data_files_count"), 0);
    s.sql("ALTER TABLE db.mt SET TBLPROPERTIES ('geoberg.maintain.max-new-files' = '0')")
        .unwrap();
    let out = s.execute("CALL geoberg.system.maintain('db.mt')").unwrap();
    assert!(count(&out[0].batches, "rewritten_data_files_count") > 0);
    assert!(
        out[0].notices.iter().any(|n| n.contains("new files")),
        "{:?}",
        out[0].notices
    );
    let all: Vec<i64> = (1..=9).chain(101..=108).collect();
    assert_eq!(
        ids(&s.sql("SELECT id FROM db.mt ORDER BY id").unwrap()),
        all
    );
    let err = s
        .sql("CALL geoberg.system.maintain(table => 'db.mt', dry_run => true)")
        .unwrap_err()
        .to_string();
    assert!(err.contains("dry_run"), "{err}");
}

/// `CALL ... upgrade_geometry` through the engine (seed 004): a format-version 2 table with WKB
/// in a no-CRS column, written with the table crate, copied to a v3 `geometry(4326)` table the
/// engine then filters spatially; a value in another SRID refuses the copy with the fix.
#[test]
fn upgrade_geometry_procedure_copies_a_no_crs_table_to_geometry_4326() {
    use arrow::array::{Int32Array, StringArray, UInt64Array};
    use arrow_array::{BinaryArray, Int64Array, RecordBatch};
    use arrow_schema::{DataType as ArrowType, Field, Schema};
    use geoberg_table::{Column, CreateTable, DataType, TableIdent};
    use std::sync::Arc;

    let w = Warehouse::new();
    w.catalog.create_namespace("db").unwrap();
    let legacy = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::LEGACY_GEOMETRY),
    ])
    .allow_undeclared_crs()
    .create(
        Arc::clone(&w.catalog),
        &TableIdent::new("db", "legacy").unwrap(),
    )
    .unwrap();
    let batch = |ids: &[i64], ewkb_srid: Option<u32>| {
        let geoms: Vec<Vec<u8>> = ids
            .iter()
            .map(|&i| {
                let mut v = vec![1u8];
                match ewkb_srid {
                    Some(s) => {
                        v.extend_from_slice(&(1u32 | 0x2000_0000).to_le_bytes());
                        v.extend_from_slice(&s.to_le_bytes());
                    }
                    None => v.extend_from_slice(&1u32.to_le_bytes()),
                }
                v.extend_from_slice(&(i as f64).to_le_bytes());
                v.extend_from_slice(&(i as f64).to_le_bytes());
                v
            })
            .collect();
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", ArrowType::Int64, false),
                Field::new("geom", ArrowType::Binary, true),
            ])),
            vec![
                Arc::new(Int64Array::from(ids.to_vec())),
                Arc::new(BinaryArray::from_iter_values(geoms.iter())),
            ],
        )
        .unwrap()
    };
    let (legacy, _) = legacy.append(&[batch(&[1, 2, 3], None)]).unwrap();
    let (legacy, _) = legacy.append(&[batch(&[4, 5], Some(4326))]).unwrap();
    let s = w.session();
    let out = s
        .sql(
            "CALL geoberg.system.upgrade_geometry(table => 'db.legacy', column => 'geom', \
             srid => 4326)",
        )
        .unwrap();
    let b = &out[0];
    let u64_of = |n: &str| {
        b.column_by_name(n)
            .unwrap()
            .as_any()
            .downcast_ref::<UInt64Array>()
            .unwrap()
            .value(0)
    };
    assert_eq!((u64_of("source_rows"), u64_of("copied_rows")), (5, 5));
    let target = b.column_by_name("target").unwrap();
    let target = target.as_any().downcast_ref::<StringArray>().unwrap();
    assert_eq!(target.value(0), "db.legacy_v3");
    let srid = b.column_by_name("srid").unwrap();
    assert_eq!(
        srid.as_any().downcast_ref::<Int32Array>().unwrap().value(0),
        4326
    );
    let ddl = pretty_format(&s.sql("SHOW CREATE TABLE db.legacy_v3").unwrap()).unwrap();
    assert!(
        ddl.contains("GEOMETRY(4326)") || ddl.contains("geometry(4326)"),
        "{ddl}"
    );
    let window = "SELECT id FROM db.legacy_v3 WHERE ST_Intersects(geom, \
                  ST_SetSRID(ST_MakeEnvelope(1.5, 1.5, 4.5, 4.5), 4326)) ORDER BY id";
    assert_eq!(ids(&s.sql(window).unwrap()), [2, 3, 4]);
    assert_eq!(
        ids(&s.sql("SELECT id FROM db.legacy ORDER BY id").unwrap()),
        [1, 2, 3, 4, 5]
    );

    // A value in Web Mercator: refused, with the two fixes, and no table created.
    legacy.append(&[batch(&[6], Some(3857))]).unwrap();
    let err = s
        .sql(
            "CALL geoberg.system.upgrade_geometry(table => 'db.legacy', column => 'geom', \
             srid => 4326, target => 'db.legacy_again')",
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("1 with SRID 3857")
            && err.contains("ST_SetSRID")
            && err.contains("ST_Transform"),
        "{err}"
    );
    assert!(
        w.catalog
            .metadata_location(&TableIdent::new("db", "legacy_again").unwrap())
            .unwrap()
            .is_none()
    );
}
