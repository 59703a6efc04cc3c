//! `CREATE TABLE ... AS <query>` in seed 004's form: `USING iceberg` (or its alias
//! `havasu.iceberg`) and `TBLPROPERTIES` before `AS`, the query kept as written for the engine.

use geoberg_sql::{CreateTableAsSelectRequest, Statement, TableName, parse};

fn ctas(sql: &str) -> CreateTableAsSelectRequest {
    match parse(sql) {
        Ok(Statement::CreateTableAsSelect(r)) => r,
        other => panic!("{sql}: {other:?}"),
    }
}

#[test]
fn seed_004_create_table_as_select_keeps_properties_and_query() {
    // Seed 004, as written (catalog and names kept), with a trailing `;`.
    let r = ctas(
        "CREATE TABLE org_catalog.test_db.parcels_utm\n\
         USING iceberg\n\
         TBLPROPERTIES ('format-version'='2')\n\
         AS SELECT id, ST_Transform(geom, 'EPSG:32633') AS geom FROM org_catalog.test_db.parcels_source;",
    );
    assert_eq!(
        r.table,
        TableName::new(vec![
            "org_catalog".into(),
            "test_db".into(),
            "parcels_utm".into()
        ])
        .unwrap()
    );
    assert!(!r.if_not_exists);
    assert_eq!(r.properties.len(), 1);
    assert_eq!(r.properties["format-version"], "2");
    assert_eq!(
        r.query,
        "SELECT id, ST_Transform(geom, 'EPSG:32633') AS geom FROM org_catalog.test_db.parcels_source"
    );
    let again = Statement::CreateTableAsSelect(r.clone());
    assert_eq!(parse(&again.to_sql()), Ok(again));
}

#[test]
fn every_form_of_create_table_as_select_parses() {
    // The query is the text as written: escapes, comments and line breaks kept.
    let query = "SELECT 'it''s' AS s, -- a note; with a semicolon\n  id FROM db.t WHERE x = \"a\"";
    for (sql, if_not_exists, properties) in [
        (format!("CREATE TABLE db.u AS {query}"), false, 0),
        (
            format!("create table if not exists db.u as {query};"),
            true,
            0,
        ),
        (
            format!("CREATE TABLE db.u USING havasu.iceberg AS {query}"),
            false,
            0,
        ),
        (
            format!(
                "CREATE TABLE db.u TBLPROPERTIES ('format-version' = 2, 'owner' = 'O''Brien') \
                 USING iceberg AS {query}"
            ),
            false,
            2,
        ),
    ] {
        let r = ctas(&sql);
        assert_eq!(r.query, query, "{sql}");
        assert_eq!(r.if_not_exists, if_not_exists, "{sql}");
        assert_eq!(r.properties.len(), properties, "{sql}");
        if properties > 0 {
            assert_eq!(r.properties["owner"], "O'Brien");
            assert_eq!(r.properties["format-version"], "2");
        }
        let again = Statement::CreateTableAsSelect(r);
        assert_eq!(parse(&again.to_sql()), Ok(again), "{sql}");
    }
}
