//! Which engine runs a statement: geoberg's table operations go to the table crate, all other
//! SQL to SedonaDB / DataFusion.

use datafusion::sql::parser::DFParser;
use datafusion::sql::sqlparser::tokenizer::Token;
use geoberg_sql::Statement;

use crate::error::Result;
use crate::sql_text::spanned_tokens;

/// Where a statement runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    /// A geoberg table operation, parsed: `CREATE SPATIAL INDEX`, `CALL ...
    /// rewrite_data_files` / `expire_snapshots` / `remove_orphan_files` /
    /// `rewrite_manifests` / `upgrade_geometry` / `add_bbox_columns`, `ALTER TABLE ... SET` /
    /// `UNSET TBLPROPERTIES`, `SHOW CREATE TABLE`, `SHOW TBLPROPERTIES`, `DESCRIBE`, and
    /// `ALTER TABLE ... ADD / DROP / RENAME COLUMN`, `ALTER TABLE ... RENAME TO`, `DROP TABLE
    /// [PURGE]`, `SHOW TABLES IN <namespace>`, `CREATE TABLE` with a column list (Spark's form:
    /// `USING iceberg`, `PARTITIONED BY`, `TBLPROPERTIES`), and `CREATE TABLE ... [USING
    /// iceberg] [TBLPROPERTIES (...)] AS <query>` (its query runs in the engine).
    Geoberg(Box<Statement>),
    /// Everything else: queries, `EXPLAIN [ANALYZE]`, `INSERT`, `DELETE`, `UPDATE`, `MERGE
    /// INTO`, `CREATE SCHEMA`, `SET`, bare `SHOW TABLES`, ...
    Engine,
}

/// Words that start a statement only geoberg runs: their parse errors are geoberg's.
const GEOBERG_ONLY: [&[&str]; 9] = [
    &["DROP", "TABLE"],
    &["SHOW", "TABLES", "IN"],
    &["SHOW", "TABLES", "FROM"],
    &["CREATE", "SPATIAL", "INDEX"],
    &["CALL"],
    &["ALTER", "TABLE"],
    &["SHOW", "CREATE", "TABLE"],
    &["SHOW", "TBLPROPERTIES"],
    &["DESCRIBE"],
];

/// Decides where `statement` (one statement) runs. A statement that starts like a geoberg
/// operation and does not parse is an error here, and so is a `CREATE TABLE` that neither
/// geoberg nor the engine parses (geoberg's message names the Spark clauses); anything else
/// that geoberg does not parse goes to the engine, which reports its own errors.
pub fn route(statement: &str) -> Result<Route> {
    match geoberg_sql::parse(statement) {
        Ok(s) => Ok(Route::Geoberg(Box::new(s))),
        Err(e) => {
            let words = leading_words(statement, 3);
            let starts = |prefix: &[&str]| {
                words.len() >= prefix.len() && prefix.iter().zip(&words).all(|(p, w)| p == w)
            };
            let geoberg_only = GEOBERG_ONLY.iter().any(|prefix| starts(prefix))
                || words.first().is_some_and(|w| w == "DESC")
                || (starts(&["CREATE", "TABLE"]) && DFParser::parse_sql(statement).is_err())
                // DataFusion parses a `variant` column and then only says it is unsupported;
                // geoberg's refusal names the blocker and the way around it.
                || e.to_string().contains(geoberg_sql::VARIANT_REFUSED);
            match geoberg_only {
                true => Err(e.into()),
                false => Ok(Route::Engine),
            }
        }
    }
}

/// The first `n` keywords of a statement, upper-cased (comments and whitespace skipped).
fn leading_words(statement: &str, n: usize) -> Vec<String> {
    let Some(tokens) = spanned_tokens(statement) else {
        return Vec::new();
    };
    tokens
        .iter()
        .filter(|t| !t.is_blank())
        .take(n)
        .map_while(|t| match &t.token {
            Token::Word(w) => Some(w.value.to_ascii_uppercase()),
            _ => None,
        })
        .collect()
}

/// Splits a script into statements at top-level `;` (a `;` inside a string, a quoted name or
/// a comment does not split). Each statement is the text as written (escapes such as `''`
/// and comments kept), trimmed. Empty statements are dropped; text that does not tokenize is
/// returned whole, for the parser to report.
pub fn split_statements(text: &str) -> Vec<String> {
    let Some(tokens) = spanned_tokens(text) else {
        return match text.trim().is_empty() {
            true => Vec::new(),
            false => vec![text.trim().to_string()],
        };
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut has_content = false;
    for t in &tokens {
        match t.token {
            Token::SemiColon => {
                if has_content {
                    out.push(text[start..t.range.start].trim().to_string());
                }
                start = t.range.end;
                has_content = false;
            }
            _ => has_content |= !t.is_blank(),
        }
    }
    if has_content {
        out.push(text[start..].trim().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geoberg_statements_take_their_own_path() {
        let r = route("CREATE SPATIAL INDEX FOR db.t USING hilbert(geom, 16)").unwrap();
        assert!(
            matches!(r, Route::Geoberg(ref s) if matches!(**s, Statement::Rewrite(_))),
            "{r:?}"
        );
        let r = route("show create table db.t").unwrap();
        assert!(matches!(r, Route::Geoberg(ref s) if matches!(**s, Statement::ShowCreateTable(_))));
        let r = route("CREATE TABLE db.t (id bigint, g geometry(4326)) USING iceberg").unwrap();
        assert!(matches!(r, Route::Geoberg(ref s) if matches!(**s, Statement::CreateTable(_))));
        for engine in [
            "SELECT state, count(*) FROM db.t GROUP BY state",
            "EXPLAIN ANALYZE SELECT * FROM db.t",
            "INSERT INTO db.t VALUES (1)",
            "SHOW TABLES",
            "DROP VIEW db.v",
        ] {
            assert_eq!(route(engine).unwrap(), Route::Engine, "{engine}");
        }
        // A malformed geoberg statement is geoberg's error, not the engine's.
        let err = route("CREATE SPATIAL INDEX FOR db.t USING zorder(geom)").unwrap_err();
        assert!(err.to_string().to_lowercase().contains("hilbert"), "{err}");
        let r = route("ALTER TABLE db.t SET TBLPROPERTIES ('owner' = 'gis')").unwrap();
        assert!(
            matches!(r, Route::Geoberg(ref s) if matches!(**s, Statement::SetTblProperties { .. })),
            "{r:?}"
        );
        assert!(route("ALTER TABLE db.t ADD CONSTRAINT x").is_err());
        for geoberg in [
            "ALTER TABLE db.t ADD COLUMN x int AFTER id",
            "ALTER TABLE db.t ADD COLUMNS (x int, y string)",
            "ALTER TABLE db.t DROP COLUMN IF EXISTS x",
            "ALTER TABLE db.t RENAME COLUMN x TO y",
            "ALTER TABLE db.t RENAME TO db.u",
            "DROP TABLE db.t",
            "DROP TABLE IF EXISTS db.t PURGE",
            "CREATE TABLE db.u AS SELECT * FROM db.t",
            "CREATE TABLE db.u USING iceberg TBLPROPERTIES ('format-version'='2') AS SELECT 1",
            "SHOW TABLES IN db",
        ] {
            assert!(
                matches!(route(geoberg).unwrap(), Route::Geoberg(_)),
                "{geoberg}"
            );
        }
        // A malformed DROP TABLE is geoberg's error.
        assert!(route("DROP TABLE db.t PURGE now").is_err());
        assert!(route("SHOW TABLES FROM a.b.c").is_err());
        // A CREATE TABLE neither parser reads is geoberg's error, which names the clauses.
        let err = route("CREATE TABLE db.u USING parquet AS SELECT 1").unwrap_err();
        assert!(err.to_string().contains("USING iceberg"), "{err}");
    }

    #[test]
    fn scripts_split_at_top_level_semicolons() {
        let parts = split_statements(
            "SELECT 'a;b' AS x; -- a comment; with a semicolon\nSELECT \"c;d\" FROM t;;\n",
        );
        assert_eq!(parts.len(), 2, "{parts:?}");
        assert_eq!(parts[0], "SELECT 'a;b' AS x");
        assert!(parts[1].ends_with("SELECT \"c;d\" FROM t"), "{parts:?}");
        assert!(split_statements("  ;\n").is_empty());
        // Doubled quotes and comments stay as written.
        let call = "CALL system.add_bbox_columns(table => 'db.t', -- a note; here\n  \
                    where => 'day < ''2026-12-01''')";
        let parts = split_statements(&format!("{call};SELECT 'it''s'"));
        assert_eq!(parts, [call, "SELECT 'it''s'"]);
    }
}
