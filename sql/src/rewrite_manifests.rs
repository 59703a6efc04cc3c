//! `CALL <catalog>.system.rewrite_manifests(table => 'db.t' [, use_caching => true|false])`:
//! Iceberg's procedure that regroups a table's manifests by partition.

use std::fmt;

use crate::error::SqlError;
use crate::name::TableName;
use crate::predicate::{Literal, literal};
use crate::procedure::{CallArgs, write_call_head};

/// `CALL <catalog>.system.rewrite_manifests(table => 'db.t' [, use_caching => ...])`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewriteManifestsRequest {
    /// The table, with the procedure's catalog in front when the argument had none.
    pub table: TableName,
    /// Iceberg's `use_caching` (Spark caches the manifest entries it regroups). geoberg
    /// reads every manifest once whatever it says; it is accepted so that Iceberg's calls run
    /// unchanged.
    pub use_caching: Option<bool>,
}

impl RewriteManifestsRequest {
    /// The canonical `CALL` statement; parsing it gives an equal request.
    pub fn to_sql(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for RewriteManifestsRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_call_head(f, "rewrite_manifests", &self.table)?;
        if let Some(c) = self.use_caching {
            write!(f, ", use_caching => {c}")?;
        }
        f.write_str(")")
    }
}

/// The request of `CALL ... rewrite_manifests(...)`, from its bound arguments.
pub(crate) fn rewrite_manifests_from_call(
    args: &CallArgs<'_>,
) -> Result<RewriteManifestsRequest, SqlError> {
    let table = args.table()?;
    let use_caching = args
        .get("use_caching")
        .map(|e| match literal(e) {
            Ok(Literal::Boolean(b)) => Ok(b),
            _ => Err(SqlError::invalid(
                "argument `use_caching`",
                format!("expected true or false, found {e}"),
            )),
        })
        .transpose()?;
    Ok(RewriteManifestsRequest { table, use_caching })
}

#[cfg(test)]
mod tests {
    use crate::{Statement, parse};

    #[test]
    fn parses_iceberg_calls_and_renders_them_back() {
        for sql in [
            "CALL cat.system.rewrite_manifests(table => 'db.t')",
            "CALL cat.system.rewrite_manifests('db.t', true)",
            "CALL system.rewrite_manifests(table => 'db.t', use_caching => false)",
        ] {
            let Statement::RewriteManifests(r) = parse(sql).unwrap() else {
                panic!("{sql}")
            };
            assert_eq!(
                parse(&r.to_sql()).unwrap(),
                Statement::RewriteManifests(r.clone())
            );
        }
        let Statement::RewriteManifests(r) =
            parse("CALL cat.system.rewrite_manifests('db.t', true)").unwrap()
        else {
            unreachable!()
        };
        assert_eq!(r.table.to_string(), "cat.db.t");
        assert_eq!(r.use_caching, Some(true));
    }

    #[test]
    fn bad_arguments_name_the_fix() {
        let e = parse("CALL cat.system.rewrite_manifests(table => 'db.t', use_caching => 3)")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("use_caching") && e.contains("true or false"),
            "{e}"
        );
        let e = parse("CALL cat.system.rewrite_manifests(table => 'db.t', spec_id => 0)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("spec_id") && e.contains("leave it out"), "{e}");
        let e = parse("CALL cat.system.rewrite_manifests(use_caching => true)")
            .unwrap_err()
            .to_string();
        assert!(e.contains("table =>"), "{e}");
    }
}
