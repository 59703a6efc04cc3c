//! Iceberg's `WHEN MATCHED THEN UPDATE SET *` and `WHEN NOT MATCHED THEN INSERT *` in
//! `MERGE INTO`, which the engine's parser does not read: each `*` is written as a placeholder
//! column the parser accepts (`SET <placeholder> = NULL`, `INSERT (<placeholder>) VALUES
//! (NULL)`), and the MERGE planner expands the placeholder to every target column, taken from
//! the source column of the same name.

use std::borrow::Cow;

use datafusion::sql::sqlparser::tokenizer::Token;

use crate::sql_text::{SpannedToken, spanned_tokens};

/// The placeholder column of a `*` clause; no table column may have this name.
pub(crate) const ALL_COLUMNS: &str = "__geoberg_all_columns";

/// `statement` with the `*` of each `THEN UPDATE SET *` and `THEN INSERT *` of a MERGE replaced
/// by the placeholder; any other statement unchanged.
pub(crate) fn expand_merge_stars(statement: &str) -> Cow<'_, str> {
    let Some(tokens) = spanned_tokens(statement) else {
        return Cow::Borrowed(statement);
    };
    let words: Vec<&SpannedToken> = tokens.iter().filter(|t| !t.is_blank()).collect();
    if !words.first().is_some_and(|t| t.is_word("MERGE")) {
        return Cow::Borrowed(statement);
    }
    let mut out = String::with_capacity(statement.len() + 64);
    let mut copied = 0;
    for (i, t) in words.iter().enumerate() {
        if t.token != Token::Mul {
            continue;
        }
        let before = |n: usize, word: &str| i >= n && words[i - n].is_word(word);
        let replacement = if before(3, "THEN") && before(2, "UPDATE") && before(1, "SET") {
            format!("{ALL_COLUMNS} = NULL")
        } else if before(2, "THEN") && before(1, "INSERT") {
            format!("({ALL_COLUMNS}) VALUES (NULL)")
        } else {
            continue;
        };
        out.push_str(&statement[copied..t.range.start]);
        out.push_str(&replacement);
        copied = t.range.end;
    }
    if copied == 0 {
        return Cow::Borrowed(statement);
    }
    out.push_str(&statement[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_become_the_placeholder_only_in_merge_clauses() {
        let merge = "MERGE INTO db.t t USING (SELECT * FROM db.s) s ON t.id = s.id \
                     WHEN MATCHED AND s.n * 2 > 1 THEN UPDATE SET * \
                     WHEN NOT MATCHED THEN INSERT *";
        assert_eq!(
            expand_merge_stars(merge),
            format!(
                "MERGE INTO db.t t USING (SELECT * FROM db.s) s ON t.id = s.id \
                 WHEN MATCHED AND s.n * 2 > 1 THEN UPDATE SET {ALL_COLUMNS} = NULL \
                 WHEN NOT MATCHED THEN INSERT ({ALL_COLUMNS}) VALUES (NULL)"
            )
        );
        let lower = "merge into t using s on t.id = s.id when matched then update /* all */ set *";
        assert!(expand_merge_stars(lower).ends_with(&format!("set {ALL_COLUMNS} = NULL")));
        for unchanged in [
            "SELECT * FROM t",
            "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = s.a * 2",
            "MERGE INTO t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (a) VALUES ('*')",
        ] {
            assert!(
                matches!(expand_merge_stars(unchanged), Cow::Borrowed(_)),
                "{unchanged}"
            );
        }
    }
}
