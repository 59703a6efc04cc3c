//! `CREATE [OR REPLACE] TEMPORARY VIEW v AS ...` (Spark's form, seed 001). DataFusion refuses
//! `TEMPORARY`; geoberg keeps every view in the session schema (the catalog stores no views),
//! so a temporary view runs as the plain `CREATE VIEW` of its unqualified name.

use datafusion::sql::sqlparser::ast::Statement;

use crate::error::{Error, Result};

/// The statement to run instead of `statement` when it creates a temporary view; `None` for
/// every other statement.
pub(crate) fn as_session_view(statement: &Statement) -> Result<Option<String>> {
    let Statement::CreateView(view) = statement else {
        return Ok(None);
    };
    if !view.temporary {
        return Ok(None);
    }
    if view.name.0.len() != 1 {
        return Err(Error::Invalid {
            what: "temporary view name",
            value: view.name.to_string(),
            fix: "a temporary view lives in this session, not in a namespace: name it without \
                  one, e.g. CREATE TEMPORARY VIEW recent AS SELECT ..."
                .into(),
        });
    }
    let mut plain = view.clone();
    plain.temporary = false;
    Ok(Some(Statement::CreateView(plain).to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::sql::parser::{DFParser, Statement as DfStatement};

    fn parse(sql: &str) -> Statement {
        match DFParser::parse_sql(sql).unwrap().pop_front().unwrap() {
            DfStatement::Statement(s) => *s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn temporary_views_become_session_views() {
        let sql = as_session_view(&parse(
            "CREATE OR REPLACE TEMPORARY VIEW near AS SELECT 1 AS one",
        ))
        .unwrap()
        .unwrap();
        assert_eq!(sql, "CREATE OR REPLACE VIEW near AS SELECT 1 AS one");
        assert!(
            as_session_view(&parse("CREATE VIEW v AS SELECT 1"))
                .unwrap()
                .is_none()
        );
        let err = as_session_view(&parse("CREATE TEMPORARY VIEW db.v AS SELECT 1")).unwrap_err();
        assert!(err.to_string().contains("without one"), "{err}");
    }
}
