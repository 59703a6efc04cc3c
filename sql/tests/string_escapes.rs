//! SQL string escapes wherever a statement takes a string: a doubled quote (`''`) inside a
//! single-quoted string is one quote, as in the README's `where => 'event_day < ''2026-12-01'''`,
//! and so are Spark's backslash escapes; double-quoted strings hold single quotes as they are.
//! Every request prints back to text that parses to the same request.

use std::collections::BTreeMap;

use geoberg_sql::{CompareOp, Literal, Predicate, Statement, parse};

fn round_trips(statement: &Statement) {
    assert_eq!(parse(&statement.to_sql()).as_ref(), Ok(statement));
}

fn compare(column: &str, op: CompareOp, value: &str) -> Predicate {
    Predicate::Compare {
        column: column.into(),
        op,
        value: Literal::String(value.into()),
    }
}

/// The README's seed 002 call, with its comment inside the statement.
#[test]
fn readme_add_bbox_columns_where_unescapes_doubled_quotes() {
    let sql = "CALL geoberg.system.add_bbox_columns(table => 'spatial.telemetry', column => 'geom',\n  \
               where => 'event_day < ''2026-12-01''',             -- closed partitions only (optional)\n  \
               window => array(-10, 35, 30, 60));                 -- default: the central 1% of the extent";
    let Ok(Statement::AddBBoxColumns(call)) = parse(sql) else {
        panic!("{:?}", parse(sql));
    };
    assert_eq!(
        call.filter,
        Some(compare("event_day", CompareOp::Lt, "2026-12-01"))
    );
    assert_eq!(call.window, Some([-10.0, 35.0, 30.0, 60.0]));
    round_trips(&Statement::AddBBoxColumns(call));
}

/// The same string written four ways reads as the same value.
#[test]
fn every_quoting_of_a_quote_reads_the_same() {
    let forms = [
        r#"where => 'state = ''O''''Brien'''"#,
        r#"where => 'state = \'O\'\'Brien\''"#,
        r#"where => "state = 'O''Brien'""#,
        r#"where => "state = 'O\\'Brien'""#,
    ];
    for form in forms {
        let sql = format!("CALL system.rewrite_data_files(table => 'db.t', {form})");
        let Ok(Statement::Rewrite(r)) = parse(&sql) else {
            panic!("{sql}: {:?}", parse(&sql));
        };
        assert_eq!(
            r.filter,
            Some(compare("state", CompareOp::Eq, "O'Brien")),
            "{sql}"
        );
        round_trips(&Statement::Rewrite(r));
    }
}

/// Table properties, SHOW TBLPROPERTIES keys, column comments and CRS strings.
#[test]
fn statement_strings_unescape_doubled_quotes() {
    let set =
        parse("ALTER TABLE db.t SET TBLPROPERTIES ('owner' = 'O''Brien', 'it''s' = 'x')").unwrap();
    let expected: BTreeMap<String, String> = [("owner", "O'Brien"), ("it's", "x")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert!(
        matches!(&set, Statement::SetTblProperties { properties, .. } if *properties == expected),
        "{set:?}"
    );
    round_trips(&set);

    let show = parse("SHOW TBLPROPERTIES db.t ('it''s')").unwrap();
    assert!(
        matches!(&show, Statement::ShowTblProperties { key: Some(k), .. } if k == "it's"),
        "{show:?}"
    );
    round_trips(&show);

    let unset = parse("ALTER TABLE db.t UNSET TBLPROPERTIES ('it''s')").unwrap();
    assert!(
        matches!(&unset, Statement::UnsetTblProperties { keys, .. } if keys == &["it's"]),
        "{unset:?}"
    );

    let Statement::CreateTable(create) = parse(
        "CREATE TABLE db.t (id bigint COMMENT 'the row''s id', g geometry('EPSG:4326')) \
         TBLPROPERTIES ('note' = 'a ''b''')",
    )
    .unwrap() else {
        panic!()
    };
    assert_eq!(create.columns[0].comment.as_deref(), Some("the row's id"));
    assert!(
        create.columns[1]
            .data_type
            .to_string()
            .contains("EPSG:4326"),
        "{}",
        create.columns[1].data_type
    );
    assert_eq!(create.properties["note"], "a 'b'");
    round_trips(&Statement::CreateTable(create));
}

/// An unterminated string is a syntax error naming where it starts, never a panic.
#[test]
fn an_unterminated_string_is_a_syntax_error() {
    for sql in [
        "CALL system.rewrite_data_files(table => 'db.t', where => 'a = ''x')",
        "SHOW TBLPROPERTIES db.t ('it''s)",
    ] {
        let err = parse(sql).unwrap_err().to_string();
        assert!(err.contains("Unterminated string literal"), "{sql}: {err}");
    }
}
