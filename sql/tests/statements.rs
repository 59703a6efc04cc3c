//! Table-driven tests: valid statements and their requests, and every error with its fix.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use geoberg_sql::{
    CompareOp, Crs, DataType, EdgeAlgorithm, ExpireSnapshotsRequest, HilbertIndex, Literal,
    OlderThan, PartitionField, PartitionTransform, Predicate, RemoveOrphanFilesRequest,
    RewriteRequest, RewriteStrategy, SortField, SortOrder, SpatialRelation, SqlError, Statement,
    TableName, parse, parse_condition,
};

fn table(parts: &[&str]) -> TableName {
    TableName::new(parts.iter().map(|p| p.to_string()).collect()).unwrap()
}

fn rewrite(sql: &str) -> RewriteRequest {
    match parse(sql) {
        Ok(Statement::Rewrite(r)) => r,
        other => panic!("{sql}: {other:?}"),
    }
}

fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn hilbert(column: &str, precision: u8, bounds: Option<[f64; 4]>) -> RewriteStrategy {
    RewriteStrategy::Hilbert(HilbertIndex {
        column: column.to_string(),
        precision,
        bounds: bounds.map(|[a, b, c, d]| geoberg_crs::Extent::new(a, b, c, d)),
    })
}

/// Every supported statement parses, and its canonical text parses to the same request.
#[test]
fn valid_statements_round_trip() {
    let statements = [
        "CREATE SPATIAL INDEX FOR wherobots.db.test_table USING hilbert(geom, 10)",
        "create spatial index for db.t using HILBERT(geom, 10, -20037508.34, -20037508.34, 20037508.34, 20037508.34);",
        "CREATE SPATIAL INDEX FOR t USING hilbert(geom, 32, -1e3, -1E3, 1.5e3, 2e+3) WHERE state = 'CA' OPTIONS map('target-file-size-bytes', '10485760')",
        "CALL wherobots.system.rewrite_data_files(table => 'db.test_table', strategy => 'sort', sort_order => 'hilbert(geom, 10)')",
        "CALL system.rewrite_data_files('db.t', 'sort', 'hilbert(geom, 4)', map('min-input-files', 2), \"x IS NOT NULL\")",
        "CALL c.system.rewrite_data_files(table => 'db.t')",
        "CALL c.system.rewrite_data_files(table => 'db.t', strategy => 'binpack', options => map('rewrite-all', 'true'))",
        "CREATE TABLE IF NOT EXISTS org_catalog.test_db.test_table (id bigint, data string, geom geometry(4326)) PARTITIONED BY (bucket(4, id))",
        "CREATE TABLE db.t (id int NOT NULL COMMENT 'key', g geography('OGC:CRS84', karney), m geometry(EPSG:3857), u geometry, d decimal(10, 2), ts timestamp_ntz, b binary, f float, x double, ok boolean, day date, at timestamp, k uuid, l long) USING iceberg PARTITIONED BY (days(at), truncate(k, 4), l) TBLPROPERTIES ('write.target-file-size-bytes' = '1048576', 'format-version' = 3)",
        "CREATE TABLE `my db`.`t.1` (`select` string, geom geometry(0))",
        "CREATE TABLE db.n (s struct<a: int NOT NULL COMMENT 'x', b struct<c: array<array<double>>>>, l array<string NOT NULL>, m map<string, struct<v: decimal(38, 10)>>, mm map<int, map<string, bigint NOT NULL>>, f fixed(16), g fixed[4], t time, ns timestamptz_ns, nn timestamp_ntz_ns, u uuid, geom geometry(4326))",
        "SHOW CREATE TABLE org_catalog.test_db.test_table",
        "SHOW TBLPROPERTIES db.t ('format-version')",
        "SHOW TBLPROPERTIES db.t",
        "DESCRIBE TABLE db.t",
        "desc db.t",
        "ALTER TABLE prod.spatial_assets SET TBLPROPERTIES ('write.sort-order' = 'bbox_min_x ASC, bbox_min_y ASC')",
        "alter table lakehouse.spatial.telemetry set tblproperties ('write.metadata.metrics.column.bbox_min_x' = 'full', 'write.metadata.metrics.column.geom_wkb' = 'none', 'commit.retry.num-retries' = 8, 'x' = true);",
        "ALTER TABLE db.t UNSET TBLPROPERTIES ('write.delete.mode')",
        "ALTER TABLE `c`.db.t UNSET TBLPROPERTIES IF EXISTS ('a', 'b.c')",
        "CALL c.system.expire_snapshots(table => 'db.t')",
        "CALL c.system.expire_snapshots(table => 'db.t', older_than => TIMESTAMP '2026-01-01 00:00:00', retain_last => 3)",
        "CALL c.system.expire_snapshots('db.t', '2026-01-01 12:30:00.250', 1)",
        "CALL catalog.system.expire_snapshots('prod.spatial_assets', older_than => TIMESTAMPADD(DAY, -30, CURRENT_TIMESTAMP))",
        "CALL system.expire_snapshots(retain_last => 10, table => 'db.t')",
        "CALL c.system.remove_orphan_files(table => 'db.t')",
        "CALL c.system.remove_orphan_files(table => 'db.t', older_than => TIMESTAMP '2025-06-30T12:34:56.789', dry_run => true)",
        "CALL c.system.remove_orphan_files('db.t', TIMESTAMP '2026-01-01')",
        "CALL c.system.remove_orphan_files(dry_run => FALSE, table => 'c2.db.t')",
        "CALL c.system.maintain(table => 'db.t')",
        "CALL system.maintain('db.t')",
    ];
    for sql in statements {
        let parsed = parse(sql).unwrap_or_else(|e| panic!("{sql}\n  -> {e}"));
        let canonical = parsed.to_sql();
        let reparsed = parse(&canonical).unwrap_or_else(|e| panic!("{canonical}\n  -> {e}"));
        assert_eq!(reparsed, parsed, "{sql}\n  canonical: {canonical}");
        assert_eq!(reparsed.to_sql(), canonical, "canonical text is stable");
    }
}

/// Every supported condition form parses, and its canonical text parses to the same predicate.
#[test]
fn valid_conditions_round_trip() {
    let conditions = [
        "ST_Intersects(geom, ST_GeomFromText('POLYGON ((0 0, 0 2, 2 2, 2 0, 0 0))'))",
        "ST_Contains(ST_GeomFromWKT('POLYGON ((0 0, 0 1, 1 1, 1 0, 0 0))'), geom)",
        "id IN (1, 2, 3) AND name NOT IN ('a') OR x BETWEEN -1.5 AND 2e10",
        "NOT (a IS NULL) AND b <> 'x' AND c != 3 AND 5 < d AND e >= true",
        "ST_DWithin(geom, ST_MakeEnvelope(-10, -5, 10, 5, 4326), 0.5);",
        "ST_Within(ST_GeomFromText('POINT (1 2)', 4326), geom) AND ST_Intersects(geom, ST_GeomFromText('GEOMETRYCOLLECTION (POINT (1 1), LINESTRING (0 0, 3 4))'))",
        "s = 'it''s' AND r = \"dq\" AND q = 'back\\\\slash'",
    ];
    for sql in conditions {
        let parsed = parse_condition(sql).unwrap_or_else(|e| panic!("{sql}\n  -> {e}"));
        let canonical = parsed.to_sql();
        let reparsed =
            parse_condition(&canonical).unwrap_or_else(|e| panic!("{canonical}\n  -> {e}"));
        assert_eq!(reparsed, parsed, "{sql}\n  canonical: {canonical}");
        assert_eq!(reparsed.to_sql(), canonical, "canonical text is stable");
    }
    // The escapes are read, not kept: the literal is the text between the quotes.
    let Predicate::And(parts) = parse_condition(conditions[6]).unwrap() else {
        panic!()
    };
    let strings: Vec<&Literal> = parts
        .iter()
        .map(|p| match p {
            Predicate::Compare { value, .. } => value,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        strings,
        [
            &Literal::String("it's".into()),
            &Literal::String("dq".into()),
            &Literal::String("back\\slash".into()),
        ]
    );
}

/// Queries are the SQL engine's (`geoberg sql`, `geoberg_datafusion::Session`), not this
/// parser's: they are refused like any other statement that is not a table statement, and the
/// message says where they run.
#[test]
fn queries_belong_to_the_engine() {
    for (sql, kind) in [
        ("SELECT 1", "SELECT"),
        ("EXPLAIN SELECT 1", "EXPLAIN"),
        ("select count(*) from db.t where id > 5", "SELECT"),
        ("EXPLAIN ANALYZE SELECT * FROM db.t", "EXPLAIN"),
        ("WITH x AS (SELECT 1) SELECT * FROM x", "WITH"),
        ("UPDATE db.t SET a = 1", "UPDATE"),
        ("DELETE FROM db.t WHERE id = 1", "DELETE FROM"),
        ("MERGE INTO db.t USING s ON t.id = s.id", "MERGE INTO"),
    ] {
        match parse(sql) {
            Err(SqlError::Unsupported { statement }) => assert_eq!(statement, kind, "{sql}"),
            other => panic!("{sql}: {other:?}"),
        }
    }
    let message = error("SELECT 1").to_string();
    for part in [
        "SELECT is not supported",
        "SQL engine",
        "geoberg sql",
        "CREATE SPATIAL INDEX",
    ] {
        assert!(
            message.contains(part),
            "{message}\n  expected to contain: {part}"
        );
    }
    assert!(
        !geoberg_sql::SUPPORTED_STATEMENTS.contains("SELECT"),
        "{}",
        geoberg_sql::SUPPORTED_STATEMENTS
    );
}

/// The seed's pairs: each CREATE SPATIAL INDEX is the CALL it is sugar for.
#[test]
fn create_spatial_index_equals_call() {
    let pairs = [
        (
            "CREATE SPATIAL INDEX FOR wherobots.db.test_table USING hilbert(geom, 10)",
            "CALL wherobots.system.rewrite_data_files(table => 'wherobots.db.test_table', strategy => 'sort', sort_order => 'hilbert(geom, 10)', options => map('rewrite-all', 'true'))",
        ),
        (
            "CREATE SPATIAL INDEX FOR wherobots.db.test_table USING hilbert(geom, 10)\nOPTIONS map('target-file-size-bytes', '10485760')",
            "CALL wherobots.system.rewrite_data_files(\n table => 'db.test_table',\n strategy => 'sort',\n sort_order => 'hilbert(geom, 10)',\n options => map('target-file-size-bytes', '10485760', 'rewrite-all', 'true')\n)",
        ),
        (
            "CREATE SPATIAL INDEX FOR wherobots.db.test_table USING hilbert(geom, 10)\nWHERE state = 'CA'",
            "CALL wherobots.system.rewrite_data_files(table => 'wherobots.db.test_table', strategy => 'sort', sort_order => 'hilbert(geom, 10)', where => \"state = 'CA'\", options => map('rewrite-all', 'true'))",
        ),
        (
            "CREATE SPATIAL INDEX FOR c.db.t USING hilbert(geom, 12, -180, -90, 180, 90)",
            "CALL c.system.rewrite_data_files(sort_order => 'hilbert(geom, 12, -180.0, -90.0, 180.0, 90.0)', table => 'db.t', options => map('rewrite-all', 'true'))",
        ),
    ];
    for (create, call) in pairs {
        let create = rewrite(create);
        assert!(create.rewrite_all());
        assert_eq!(create, rewrite(call));
    }
    // Without rewrite-all the CALL is a different request.
    let call = rewrite(
        "CALL c.system.rewrite_data_files(table => 'db.t', strategy => 'sort', sort_order => 'hilbert(geom, 10)')",
    );
    assert!(!call.rewrite_all());
    assert_ne!(
        call,
        rewrite("CREATE SPATIAL INDEX FOR c.db.t USING hilbert(geom, 10)")
    );
}

#[test]
fn requests_hold_the_parsed_values() {
    let r = rewrite(
        "CREATE SPATIAL INDEX FOR `c`.db.t USING hilbert(`geom`, 16, -20037508.34, -2e7, 20037508.34, 2e7) \
         WHERE state = 'CA' OPTIONS map('target-file-count', 8, 'rewrite-all', 'false')",
    );
    assert_eq!(r.table, table(&["c", "db", "t"]));
    assert_eq!(
        r.strategy,
        hilbert("geom", 16, Some([-20037508.34, -2e7, 20037508.34, 2e7]))
    );
    assert_eq!(
        r.filter,
        Some(Predicate::Compare {
            column: "state".into(),
            op: CompareOp::Eq,
            value: Literal::String("CA".into()),
        })
    );
    // An explicit rewrite-all wins over the statement's default.
    assert_eq!(
        r.options,
        options(&[("target-file-count", "8"), ("rewrite-all", "false")])
    );
    assert!(r.to_sql().starts_with("CALL c.system.rewrite_data_files("));

    let binpack = rewrite("CALL system.rewrite_data_files(table => 'db.t')");
    assert_eq!(binpack.strategy, RewriteStrategy::BinPack);

    // Seed 001's compaction: a column sort order; `sort` alone uses the table's order.
    let seed = rewrite(
        "CALL catalog.system.rewrite_data_files(table => 'prod.spatial_assets', strategy => 'sort', \
         sort_order => 'bbox_min_x ASC, bbox_min_y ASC, bbox_max_x ASC, bbox_max_y ASC', \
         options => map('min-input-files', '10', 'target-file-size-bytes', '536870912'))",
    );
    assert_eq!(
        seed.strategy,
        RewriteStrategy::Sort(SortOrder::Columns(
            ["bbox_min_x", "bbox_min_y", "bbox_max_x", "bbox_max_y"]
                .map(SortField::asc)
                .to_vec()
        ))
    );
    assert_eq!(
        parse(&seed.to_sql()).unwrap(),
        Statement::Rewrite(seed.clone())
    );
    let z = rewrite(
        "CALL c.system.rewrite_data_files(table => 'db.t', strategy => 'sort', sort_order => 'zorder(x, y)')",
    );
    assert_eq!(
        z.strategy,
        RewriteStrategy::Sort(SortOrder::ZOrder(vec!["x".into(), "y".into()]))
    );
    let table_order =
        rewrite("CALL c.system.rewrite_data_files(table => 'db.t', strategy => 'sort')");
    assert_eq!(table_order.strategy, RewriteStrategy::TableSortOrder);
    assert_eq!(
        parse(&table_order.to_sql()).unwrap(),
        Statement::Rewrite(table_order.clone())
    );
    assert_eq!(binpack.table, table(&["db", "t"]));

    let Ok(Statement::CreateTable(c)) = parse(
        "CREATE TABLE IF NOT EXISTS org_catalog.test_db.test_table (id bigint, data string, \
         geom geometry(4326), g geography(4326, vincenty)) PARTITIONED BY (bucket(4, id), truncate(data, 3)) \
         TBLPROPERTIES ('format-version'='3')",
    ) else {
        panic!("create table")
    };
    assert!(c.if_not_exists);
    assert_eq!(
        c.columns[2].data_type,
        DataType::Geo(geoberg_crs::ColumnType::Geometry { crs: Crs::OgcCrs84 })
    );
    assert_eq!(
        c.columns[3].data_type,
        DataType::Geo(geoberg_crs::ColumnType::Geography {
            crs: Crs::OgcCrs84,
            edges: EdgeAlgorithm::Vincenty
        })
    );
    assert_eq!(
        c.partitioning,
        vec![
            PartitionField {
                column: "id".into(),
                transform: PartitionTransform::Bucket(4)
            },
            PartitionField {
                column: "data".into(),
                transform: PartitionTransform::Truncate(3)
            }
        ]
    );
    assert_eq!(c.properties, options(&[("format-version", "3")]));
}

/// `SystemTime` of a count of seconds (and milliseconds) since the epoch, computed by hand from
/// the calendar: 2026-01-01 is 56 years of 365 days plus 14 leap days after 1970-01-01.
fn at(seconds: u64, millis: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(seconds * 1000 + millis)
}

#[test]
fn maintenance_requests_hold_the_parsed_values() {
    let new_year_2026 = at((56 * 365 + 14) * 86_400, 0);
    let Ok(Statement::ExpireSnapshots(e)) = parse(
        "CALL c.system.expire_snapshots('db.t', TIMESTAMP '2026-01-01 00:00:00', retain_last => 7)",
    ) else {
        panic!("expire_snapshots")
    };
    assert_eq!(
        e,
        ExpireSnapshotsRequest {
            table: table(&["c", "db", "t"]),
            older_than: Some(OlderThan::At(new_year_2026)),
            retain_last: Some(7),
        }
    );
    // The string form, the ISO `T` and a date alone are the same instant.
    for form in [
        "'2026-01-01 00:00:00'",
        "TIMESTAMP '2026-01-01T00:00:00.000'",
        "'2026-01-01'",
    ] {
        let Ok(Statement::ExpireSnapshots(e)) = parse(&format!(
            "CALL c.system.expire_snapshots(table => 'db.t', older_than => {form})"
        )) else {
            panic!("{form}")
        };
        assert_eq!(e.older_than, Some(OlderThan::At(new_year_2026)), "{form}");
    }
    // A fraction is kept to the nanosecond (2025-06-30 12:34:56.789 UTC is 1751286896.789).
    let Ok(Statement::RemoveOrphanFiles(r)) = parse(
        "CALL c.system.remove_orphan_files(table => 'db.t', older_than => TIMESTAMP '2025-06-30 12:34:56.789', dry_run => true)",
    ) else {
        panic!("remove_orphan_files")
    };
    assert_eq!(
        r,
        RemoveOrphanFilesRequest {
            table: table(&["c", "db", "t"]),
            older_than: Some(OlderThan::At(at(1_751_286_896, 789))),
            dry_run: Some(true),
        }
    );
    assert!(r.is_dry_run());

    // Left out: None in the request, Iceberg's defaults from the helpers.
    let now = at(1_751_286_896, 0);
    let Ok(Statement::ExpireSnapshots(e)) = parse("CALL system.expire_snapshots(table => 'db.t')")
    else {
        panic!()
    };
    assert_eq!((e.older_than, e.retain_last), (None, None));
    assert_eq!(e.horizon(now), now - Duration::from_secs(5 * 86_400));
    assert_eq!(e.retain_last_or_default(), 1);
    assert_eq!(e.table, table(&["db", "t"]));
    let Ok(Statement::RemoveOrphanFiles(r)) =
        parse("CALL system.remove_orphan_files(table => 'db.t')")
    else {
        panic!()
    };
    assert_eq!((r.older_than, r.dry_run), (None, None));
    assert_eq!(r.horizon(now), now - Duration::from_secs(3 * 86_400));
    assert!(!r.is_dry_run());

    // The seed's relative form: 30 days before the procedure runs.
    let Ok(Statement::ExpireSnapshots(e)) = parse(
        "CALL catalog.system.expire_snapshots('prod.spatial_assets', older_than => TIMESTAMPADD(DAY, -30, CURRENT_TIMESTAMP))",
    ) else {
        panic!()
    };
    assert_eq!(
        e.older_than,
        Some(OlderThan::BeforeNow(Duration::from_secs(30 * 86_400)))
    );
    assert_eq!(e.horizon(now), now - Duration::from_secs(30 * 86_400));
    assert_eq!(e.table, table(&["catalog", "prod", "spatial_assets"]));
}

#[test]
fn alter_table_holds_the_parsed_values() {
    assert_eq!(
        parse(
            "ALTER TABLE db.t SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'n' = 8)"
        ),
        Ok(Statement::SetTblProperties {
            table: table(&["db", "t"]),
            properties: options(&[("write.delete.mode", "merge-on-read"), ("n", "8")]),
        })
    );
    assert_eq!(
        parse("ALTER TABLE db.t UNSET TBLPROPERTIES IF EXISTS ('b', 'a')"),
        Ok(Statement::UnsetTblProperties {
            table: table(&["db", "t"]),
            keys: vec!["b".into(), "a".into()],
            if_exists: true,
        })
    );
    assert_eq!(
        parse("ALTER TABLE t UNSET TBLPROPERTIES ('a')"),
        Ok(Statement::UnsetTblProperties {
            table: table(&["t"]),
            keys: vec!["a".into()],
            if_exists: false,
        })
    );
}

#[test]
fn spatial_predicates_carry_window_wkb_bbox_and_srid() {
    let p = parse_condition(
        "id > 5 AND ST_Contains(ST_GeomFromText('POLYGON ((0 0, 0 1, 2 1, 2 0, 0 0))', 4326), geom) \
         AND (ST_Intersects(geom, ST_MakeEnvelope(5, 5, 6, 6)) OR x = 1) AND ST_DWithin(ST_MakeEnvelope(1, 2, 3, 4), g2, 10)",
    )
    .unwrap();
    let filters = p.spatial_filters();
    assert_eq!(filters.len(), 2, "the filter under OR cannot prune alone");
    // ST_Contains(window, geom): the rows lie within the window.
    assert_eq!(filters[0].relation, SpatialRelation::Within);
    assert_eq!(filters[0].column, "geom");
    assert_eq!(filters[0].window.srid(), Some(4326));
    let b = filters[0].pruning_bbox();
    assert_eq!((b.min_x, b.min_y, b.max_x, b.max_y), (0.0, 0.0, 2.0, 1.0));
    let wkb = filters[0].window.wkb();
    assert_eq!((wkb[0], wkb[1]), (1, 3), "little-endian WKB polygon");
    assert_eq!(filters[1].relation, SpatialRelation::DWithin(10.0));
    let b = filters[1].pruning_bbox();
    assert_eq!(
        (b.min_x, b.min_y, b.max_x, b.max_y),
        (-9.0, -8.0, 13.0, 14.0)
    );
    let rest = p.non_spatial().unwrap();
    assert_eq!(
        rest.to_sql(),
        "id > 5 AND (ST_Intersects(geom, ST_MakeEnvelope(5.0, 5.0, 6.0, 6.0)) OR x = 1)"
    );
    // Reassembling the parts gives the condition back.
    let mut parts: Vec<Predicate> = filters
        .iter()
        .map(|f| Predicate::Spatial((*f).clone()))
        .collect();
    parts.push(rest);
    let Predicate::And(original) = &p else {
        panic!()
    };
    let Predicate::And(reassembled) = Predicate::and(parts).unwrap() else {
        panic!()
    };
    assert_eq!(reassembled.len(), original.len());
    for part in &reassembled {
        assert!(original.contains(part));
    }
}

fn error(sql: &str) -> SqlError {
    match parse(sql) {
        Err(e) => e,
        Ok(s) => panic!("{sql} parsed as {s:?}"),
    }
}

/// Each bad statement fails with a typed error whose message names the fix.
#[test]
fn errors_name_the_fix() {
    let cases: &[(&str, &str)] = &[
        (
            "CREATE SPATIAL INDEX FOR t USING hilbert(geom, 0)",
            "1..=32",
        ),
        (
            "CREATE SPATIAL INDEX FOR t USING hilbert(geom, 33)",
            "1..=32",
        ),
        (
            "CREATE SPATIAL INDEX FOR t USING hilbert(geom, 10.5)",
            "1..=32",
        ),
        (
            "CREATE SPATIAL INDEX FOR t USING hilbert(geom, 10, 1, 0, 0, 1)",
            "minX must be < maxX",
        ),
        (
            "CREATE SPATIAL INDEX FOR t USING hilbert(geom, 10, 0, 0, 1e999, 1)",
            "finite",
        ),
        (
            "CREATE SPATIAL INDEX FOR t USING hilbert(geom, 10, 0, 0, 1)",
            "2 or 6 arguments",
        ),
        (
            "CREATE SPATIAL INDEX FOR t USING hilbert(10, geom)",
            "geometry column",
        ),
        (
            "CREATE SPATIAL INDEX FOR t USING zorder(geom, 10)",
            "not supported",
        ),
        (
            "CREATE SPATIAL INDEX FOR t USING hilbert(geom, 10) OPTIONS map('a')",
            "key, value pairs",
        ),
        (
            "CREATE SPATIAL INDEX FOR t USING hilbert(geom, 10) OPTIONS map('a', '1', 'a', '2')",
            "given twice",
        ),
        (
            "CREATE SPATIAL INDEX FOR t USING hilbert(geom, 10) WHERE a LIKE 'x%'",
            "Supported conditions",
        ),
        (
            "CREATE SPATIAL INDEX FOR t USING hilbert(geom, 10) extra",
            "after the end",
        ),
        (
            "CREATE SPATIAL INDEX t USING hilbert(geom, 10)",
            "expected FOR",
        ),
        (
            "CALL c.system.rewrite_data_files(table => 'db.t', strategy => 'sort', sort_order => 'hilbert(geom, 40)')",
            "1..=32",
        ),
        (
            "CALL c.system.rewrite_data_files(table => 'db.t', strategy => 'sort', sort_order => 'id NULLS MIDDLE')",
            "FIRST or LAST after NULLS",
        ),
        (
            "CALL c.system.rewrite_data_files(table => 'db.t', strategy => 'binpack', sort_order => 'hilbert(g, 3)')",
            "drop sort_order",
        ),
        (
            "CALL c.system.rewrite_data_files(table => 'db.t', strategy => 'zorder')",
            "'sort'",
        ),
        (
            "CALL c.system.rewrite_data_files(table => 'db.t', sort_order => 'bucket(4, id)')",
            "is not a sort order",
        ),
        (
            "CALL c.system.rewrite_data_files(table => 'db.t', tabel => 'x')",
            "valid ones are table, strategy",
        ),
        (
            "CALL c.system.rewrite_data_files(strategy => 'sort')",
            "table => '<ns.table>'",
        ),
        (
            "CALL c.system.rewrite_data_files(table => 'db.t', table => 'db.u')",
            "given twice",
        ),
        (
            "CALL c.system.rewrite_data_files(table => 'db.t', where => 'a = = 1')",
            "in the `where` argument",
        ),
        (
            "CALL c.system.rewrite_position_delete_files(table => 'db.t')",
            "no procedure rewrite_position_delete_files; the supported ones are rewrite_data_files, expire_snapshots, remove_orphan_files, rewrite_manifests, upgrade_geometry",
        ),
        (
            "CALL c.system.expire_snapshots(table => 'db.t', retain => 1)",
            "argument `retain`: expire_snapshots has no such argument; valid ones are table, older_than, retain_last",
        ),
        (
            "CALL c.system.expire_snapshots(table => 'db.t', retain_last => 1, retain_last => 2)",
            "argument `retain_last`: it is given twice",
        ),
        (
            "CALL c.system.expire_snapshots('db.t', TIMESTAMP '2026-01-01', 1, 4)",
            "argument `max_concurrent_deletes`: Iceberg's expire_snapshots has it but geoberg does not support it",
        ),
        (
            "CALL c.system.rewrite_data_files('db.t', 'binpack', NULL, map(), 'a = 1', 6)",
            "at most 5 arguments",
        ),
        (
            "CALL c.system.expire_snapshots(table => 'db.t', retain_last => 0)",
            "0 is not a snapshot count; give a whole number from 1",
        ),
        (
            "CALL c.system.expire_snapshots(table => 'db.t', retain_last => '2')",
            "is not a snapshot count",
        ),
        (
            "CALL c.system.expire_snapshots(older_than => TIMESTAMP '2026-01-01')",
            "the table argument is missing; add table => '<ns.table>'",
        ),
        (
            "CALL c.system.expire_snapshots(table => 'db.t', older_than => TIMESTAMP '2026-13-01 00:00:00')",
            "'2026-13-01 00:00:00' is not a timestamp; write older_than => TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.fraction]' in UTC",
        ),
        (
            "CALL c.system.expire_snapshots(table => 'db.t', older_than => 'yesterday')",
            "'yesterday' is not a timestamp",
        ),
        (
            "CALL c.system.expire_snapshots(table => 'db.t', older_than => 1767225600000)",
            "expected a timestamp, found 1767225600000",
        ),
        (
            "CALL c.system.expire_snapshots(table => 'db.t', older_than => TIMESTAMPADD(DAY, 30, CURRENT_TIMESTAMP))",
            "a count of 0 or less",
        ),
        (
            "CALL c.system.expire_snapshots(table => 'db.t', older_than => TIMESTAMPADD(FORTNIGHT, -1, CURRENT_TIMESTAMP))",
            "a unit among SECOND, MINUTE, HOUR, DAY, WEEK",
        ),
        (
            "CALL c.system.remove_orphan_files(table => 'db.t', dry_run => 'yes')",
            "argument `dry_run`: expected true or false, found 'yes'",
        ),
        (
            "CALL c.system.remove_orphan_files(table => 'db.t', location => 's3://b/t')",
            "argument `location`: Iceberg's remove_orphan_files has it but geoberg does not support it yet; geoberg lists the whole table location",
        ),
        (
            "CALL c.system.remove_orphan_files(table => 'db.t', dry_run => true, dry_run => false)",
            "argument `dry_run`: it is given twice",
        ),
        (
            "CALL c.system.remove_orphan_files(table => 'db.t', older => 1)",
            "valid ones are table, older_than, dry_run",
        ),
        (
            "ALTER TABLE db.t SET TBLPROPERTIES ('a' = '1', 'a' = '2')",
            "table property 'a': it is set twice",
        ),
        (
            "ALTER TABLE db.t SET TBLPROPERTIES ()",
            "expected a quoted string",
        ),
        ("ALTER TABLE db.t SET TBLPROPERTIES ('a')", "expected ="),
        (
            "ALTER TABLE db.t UNSET TBLPROPERTIES ('a', 'a')",
            "table property 'a': it is unset twice",
        ),
        (
            "ALTER TABLE db.t UNSET TBLPROPERTIES IF EXISTS ()",
            "expected a quoted string",
        ),
        (
            "ALTER TABLE db.t ADD CONSTRAINT x",
            "ALTER TABLE ... ADD (geoberg alters: SET TBLPROPERTIES",
        ),
        ("ALTER TABLE db.t RENAME COLUMN a b", "TO"),
        (
            "ALTER TABLE db.t SET TBLPROPERTIES ('a' = '1') extra",
            "after the end of the statement",
        ),
        ("CREATE TABLE t (id int, id string)", "declared twice"),
        ("CREATE TABLE t (id varchar2)", "not a supported type"),
        (
            "CREATE TABLE t (g geography(4326, flat))",
            "spherical, vincenty",
        ),
        ("CREATE TABLE t (d decimal(40, 2))", "precision <= 38"),
        (
            "CREATE TABLE t (s struct<a: int, A: string>)",
            "declared twice",
        ),
        ("CREATE TABLE t (m map<int>)", "expected ,"),
        ("CREATE TABLE t (l array<int)", "expected >"),
        (
            "CREATE TABLE t (x timestamp_ns)",
            "timestamptz_ns (with zone)",
        ),
        ("CREATE TABLE t (f fixed(0))", "length of 1"),
        (
            "CREATE TABLE t (g geometry('EPSG'))",
            "invalid CRS of column `g`",
        ),
        (
            "CREATE TABLE t (g geometry(EPSG:x))",
            "the code must be an integer",
        ),
        (
            "CREATE TABLE t (id int) PARTITIONED BY (bucket(0, id))",
            "1..=",
        ),
        (
            "CREATE TABLE t (id int) PARTITIONED BY (zorder(id))",
            "bucket(<n>, <column>)",
        ),
        (
            "CREATE TABLE t (id int) PARTITIONED BY (nope)",
            "no column `nope`",
        ),
        (
            "CREATE TABLE t (id int) TBLPROPERTIES ('a' = '1', 'a' = '2')",
            "set it once",
        ),
        ("CREATE TABLE t (id int) USING parquet", "USING iceberg"),
        (
            "CREATE TABLE t",
            "expected ( and the columns, or AS <query>",
        ),
        ("CREATE TABLE t AS", "expected a query after AS"),
        ("CREATE TABLE t AS ;", "expected a query after AS"),
        (
            "CREATE TABLE t AS SELECT 1; SELECT 2",
            "after the end of the statement",
        ),
        ("CREATE TABLE t SELECT 1", "expected ( and the columns, or"),
        (
            "CREATE TABLE t (id int) AS SELECT 1",
            "a column list with AS SELECT",
        ),
        (
            "CREATE TABLE t PARTITIONED BY (id) AS SELECT 1",
            "PARTITIONED BY in CREATE TABLE ... AS SELECT",
        ),
        ("CREATE TABLE t USING parquet AS SELECT 1", "USING iceberg"),
        ("SHOW TABLES IN a.b.c", "<catalog>.<namespace>"),
        ("SHOW TABLES FROM db LIKE", "expected a quoted pattern"),
        (
            "SHOW TABLES IN db 'a' 'b'",
            "after the end of the statement",
        ),
        ("CREATE TABLE a.b.c.d (id int)", "catalog.namespace.table"),
        ("DROP VIEW t", "DROP VIEW is not supported"),
        ("DROP TABLE t PURGE x", "after the end of the statement"),
        ("INSERT INTO t VALUES (1)", "INSERT INTO is not supported"),
        ("", "empty statement"),
        ("EXPLAIN DELETE FROM t", "EXPLAIN is not supported"),
        ("SELECT * FROM t GROUP BY a", "SELECT is not supported"),
        (
            "; SELECT 1",
            "expected a statement keyword such as CREATE, ALTER, CALL",
        ),
        ("SHOW TABLES", "SHOW TABLES is not supported"),
    ];
    for (sql, expected) in cases {
        let message = error(sql).to_string();
        assert!(
            message.contains(expected),
            "{sql}\n  message: {message}\n  expected to contain: {expected}"
        );
    }
}

fn condition_error(sql: &str) -> SqlError {
    match parse_condition(sql) {
        Err(e) => e,
        Ok(p) => panic!("{sql} parsed as {p:?}"),
    }
}

/// Each bad WHERE condition fails with a typed error whose message names the fix.
#[test]
fn condition_errors_name_the_fix() {
    let cases: &[(&str, &str)] = &[
        ("a = b", "one column and one literal"),
        ("a = NULL", "IS NULL"),
        ("a = 99999999999999999999", "does not fit 64 bits"),
        ("a IN (SELECT 1)", "Supported conditions"),
        ("a LIKE 'x%'", "Supported conditions"),
        ("a + 1 > 2", "one column and one literal"),
        (
            "ST_Intersects(geom, ST_GeomFromText('POLYGON ((0 0, 1 1'))",
            "not valid WKT",
        ),
        (
            "ST_Intersects(geom, ST_GeomFromText('POLYGON EMPTY'))",
            "non-empty",
        ),
        (
            "ST_Intersects(geom, ST_MakeEnvelope(0, 1, 1, 0))",
            "minY <= maxY",
        ),
        (
            "ST_Intersects(geom, ST_MakeEnvelope(500, 0, 0, 1))",
            "window across the antimeridian (geography only), which needs longitudes in [-180, 180]",
        ),
        (
            "ST_Intersects(geom, ST_Buffer(x, 1))",
            "not a window constructor",
        ),
        (
            "ST_Intersects(geom, ST_GeomFromText('POINT (1 1)', -1))",
            "SRID must be a whole number",
        ),
        (
            "ST_DWithin(geom, ST_MakeEnvelope(0, 0, 1, 1), -1)",
            "distance >= 0",
        ),
        (
            "ST_Touches(geom, ST_MakeEnvelope(0, 0, 1, 1))",
            "not a supported spatial predicate",
        ),
        (
            "ST_Intersects(geom, ST_MakeEnvelope(0, 0, 1, 1), 3)",
            "takes 2 arguments",
        ),
        ("'unterminated", "syntax error at line 1"),
        ("a = 1 LIMIT 3", "after the end of the statement"),
        ("", "syntax error at line 1"),
    ];
    for (sql, expected) in cases {
        let message = condition_error(sql).to_string();
        assert!(
            message.contains(expected),
            "{sql}\n  message: {message}\n  expected to contain: {expected}"
        );
    }
}

#[test]
fn errors_carry_position_and_snippet() {
    match condition_error("id > 5\nAND a = = 1") {
        SqlError::Syntax {
            position, snippet, ..
        } => {
            assert_eq!(position.line, 2);
            assert!(snippet.starts_with("= 1"), "{snippet}");
        }
        other => panic!("{other:?}"),
    }
    match condition_error("id > 5 AND a LIKE 'x'") {
        SqlError::UnsupportedCondition { position, .. } => {
            assert_eq!((position.line, position.column), (1, 12));
        }
        other => panic!("{other:?}"),
    }
    // An error at the end of the input names the end, not line 0.
    for (sql, line, column) in [("a = ", 1, 5), ("", 1, 1), ("a = 1 AND\n  b >", 2, 6)] {
        match condition_error(sql) {
            SqlError::Syntax {
                position, snippet, ..
            } => {
                assert_eq!((position.line, position.column), (line, column), "{sql:?}");
                assert_eq!(snippet, "<end of input>");
            }
            other => panic!("{sql:?}: {other:?}"),
        }
    }
    match error("CALL c.system.rewrite_data_files(table => 'db.t'") {
        SqlError::Syntax { position, .. } => assert_eq!((position.line, position.column), (1, 49)),
        other => panic!("{other:?}"),
    }
    // A statement's position counts from the statement's start.
    match error("SHOW CREATE TABLE\n  db.t x") {
        SqlError::Syntax {
            position, snippet, ..
        } => {
            assert_eq!((position.line, position.column), (2, 8));
            assert_eq!(snippet, "x");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn hostile_input_hits_limits_not_the_stack() {
    let deep = format!("{}a = 1{}", "(".repeat(100), ")".repeat(100));
    assert!(matches!(condition_error(&deep), SqlError::TooDeep { .. }));
    // Just under the limit still parses.
    let ok = format!(
        "{}a = 1{}",
        "(".repeat(geoberg_sql::MAX_NESTING_DEPTH),
        ")".repeat(geoberg_sql::MAX_NESTING_DEPTH)
    );
    parse_condition(&ok).unwrap();
    let over = format!(
        "{}a = 1{}",
        "(".repeat(geoberg_sql::MAX_NESTING_DEPTH + 1),
        ")".repeat(geoberg_sql::MAX_NESTING_DEPTH + 1)
    );
    assert!(matches!(
        condition_error(&over),
        SqlError::TooDeep { depth, max, .. }
            if depth == geoberg_sql::MAX_NESTING_DEPTH + 1 && max == geoberg_sql::MAX_NESTING_DEPTH
    ));
    let nots = format!("{}a = 1", "NOT ".repeat(5000));
    assert!(matches!(
        condition_error(&nots),
        SqlError::TooManyOperators { .. }
    ));
    let chain = format!("a = 1{}", " OR a = 1".repeat(400));
    let p = parse_condition(&chain).unwrap();
    assert!(matches!(p, Predicate::Or(ref v) if v.len() == 401));
    // 1024 operators is the limit: 512 `=`, 511 `OR` and one `AND` parse; one `NOT` more does
    // not.
    let at_limit = format!("a = 1{} AND b IS NULL", " OR a = 1".repeat(511));
    assert!(matches!(parse_condition(&at_limit), Ok(Predicate::Or(v)) if v.len() == 512));
    let over_limit = format!("a = 1{} AND b IS NOT NULL", " OR a = 1".repeat(511));
    assert!(matches!(
        condition_error(&over_limit),
        SqlError::TooManyOperators { max } if max == geoberg_sql::MAX_OPERATORS
    ));
    let long = format!("a = '{}'", "x".repeat(geoberg_sql::MAX_STATEMENT_BYTES));
    assert!(matches!(
        condition_error(&long),
        SqlError::TooLong { len, max }
            if len == geoberg_sql::MAX_STATEMENT_BYTES + 6 && max == geoberg_sql::MAX_STATEMENT_BYTES
    ));
    let nested_wkt = format!(
        "ST_Intersects(g, ST_GeomFromText('{}POINT (1 1){}'))",
        "GEOMETRYCOLLECTION (".repeat(200),
        ")".repeat(200)
    );
    assert!(
        condition_error(&nested_wkt)
            .to_string()
            .contains("nests 201 levels")
    );
    // The same limits guard a condition inside a statement.
    let in_rewrite = format!(
        "CREATE SPATIAL INDEX FOR t USING hilbert(geom, 10) WHERE {}a = 1",
        "NOT ".repeat(5000)
    );
    assert!(matches!(
        error(&in_rewrite),
        SqlError::TooManyOperators { .. }
    ));
    let nested_type = format!(
        "CREATE TABLE t (a {}int{})",
        "array<".repeat(200),
        ">".repeat(200)
    );
    assert!(matches!(error(&nested_type), SqlError::TooDeep { .. }));
}

#[test]
fn nested_types_keep_their_shape() {
    let Ok(Statement::CreateTable(r)) =
        parse("CREATE TABLE t (s struct<a:int, b: array<map<string, int>>> NOT NULL)")
    else {
        panic!()
    };
    let c = &r.columns[0];
    assert!(c.required);
    let DataType::Struct(fields) = &c.data_type else {
        panic!("{c:?}")
    };
    assert_eq!(fields[0].name, "a");
    assert_eq!(fields[0].data_type, DataType::Int);
    assert_eq!(
        fields[1].data_type,
        DataType::List {
            element: Box::new(DataType::Map {
                key: Box::new(DataType::String),
                value: Box::new(DataType::Int),
                value_required: false,
            }),
            element_required: false,
        }
    );
}
