//! `SHOW TABLES {IN | FROM} <namespace> [[LIKE] '<pattern>']` (Spark's syntax); bare
//! `SHOW TABLES` is left to the SQL engine.

use geoberg_sql::{ShowTablesRequest, SqlError, Statement, parse};

fn show(sql: &str) -> ShowTablesRequest {
    match parse(sql) {
        Ok(Statement::ShowTables(r)) => r,
        other => panic!("{sql}: {other:?}"),
    }
}

#[test]
fn show_tables_in_or_from_a_namespace() {
    for sql in [
        "SHOW TABLES IN db",
        "show tables from db;",
        "SHOW TABLES IN `db`",
    ] {
        let r = show(sql);
        assert_eq!(
            (r.catalog, r.namespace.as_str(), r.pattern),
            (None, "db", None),
            "{sql}"
        );
    }
    let r = show("SHOW TABLES FROM geoberg.db LIKE 'park*|road_''s'");
    assert_eq!(r.catalog.as_deref(), Some("geoberg"));
    assert_eq!(r.pattern.as_deref(), Some("park*|road_'s"));
    let again = Statement::ShowTables(r);
    assert_eq!(parse(&again.to_sql()), Ok(again));
    // LIKE is optional before the pattern, as in Spark.
    assert_eq!(
        show("SHOW TABLES IN db 'a*'").pattern.as_deref(),
        Some("a*")
    );
    assert!(matches!(
        parse("SHOW TABLES"),
        Err(SqlError::Unsupported { .. })
    ));
}

#[test]
fn patterns_match_as_spark_matches_them() {
    let r = show("SHOW TABLES IN db LIKE 'park*| ROADS |*_v1'");
    let listed: Vec<&str> = [
        "parks", "parcels", "Park", "roads", "roads2", "x_v1", "v1", "a_v12",
    ]
    .into_iter()
    .filter(|t| r.matches(t))
    .collect();
    assert_eq!(listed, ["parks", "Park", "roads", "x_v1"]);
    assert!(show("SHOW TABLES IN db").matches("anything"));
    let star = show("SHOW TABLES IN db '*a*b*'");
    assert!(star.matches("ab") && star.matches("xaxbx") && !star.matches("ba"));
}
