use std::fmt;

use sqlparser::ast::Value;
use sqlparser::keywords::ALL_KEYWORDS;
use sqlparser::tokenizer::Token;

use crate::error::SqlError;

/// A table reference as written: `table`, `namespace.table` or `catalog.namespace.table`.
///
/// Kept as parts, not one dotted string, so that a backtick-quoted part holding a dot stays one
/// part. The executor resolves it against its catalog.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TableName {
    parts: Vec<String>,
}

impl TableName {
    /// A name from 1 to 3 non-empty parts.
    pub fn new(parts: Vec<String>) -> Result<Self, SqlError> {
        if parts.is_empty() || parts.len() > 3 {
            return Err(SqlError::invalid(
                format!("table name `{}`", parts.join(".")),
                format!(
                    "it has {} parts; write table, namespace.table or catalog.namespace.table",
                    parts.len()
                ),
            ));
        }
        if parts.iter().any(|p| p.is_empty()) {
            return Err(SqlError::invalid(
                format!("table name `{}`", parts.join(".")),
                "a part is empty; name every part",
            ));
        }
        Ok(TableName { parts })
    }

    /// The parts, outermost first.
    pub fn parts(&self) -> &[String] {
        &self.parts
    }

    /// The table's own name (the last part).
    pub fn name(&self) -> &str {
        &self.parts[self.parts.len() - 1]
    }

    /// The namespace, when the name has one.
    pub fn namespace(&self) -> Option<&str> {
        (self.parts.len() >= 2).then(|| self.parts[self.parts.len() - 2].as_str())
    }

    /// The catalog, when the name has all three parts.
    pub fn catalog(&self) -> Option<&str> {
        (self.parts.len() == 3).then(|| self.parts[0].as_str())
    }

    /// The name without its catalog part.
    pub(crate) fn without_catalog(&self) -> TableName {
        TableName {
            parts: self.parts[self.parts.len().saturating_sub(2)..].to_vec(),
        }
    }

    /// The name with `catalog` in front when it has no catalog yet; Iceberg's procedures resolve
    /// a `ns.table` argument in the procedure's catalog.
    pub(crate) fn in_catalog(self, catalog: Option<&str>) -> TableName {
        match catalog {
            Some(c) if self.parts.len() < 3 => {
                let mut parts = vec![c.to_string()];
                parts.extend(self.parts);
                TableName { parts }
            }
            _ => self,
        }
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.parts.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            f.write_str(&quote_ident(p))?;
        }
        Ok(())
    }
}

/// An identifier as it must be written to parse back: bare when it is a plain word that is not
/// a keyword, else in backticks (Spark SQL style).
pub(crate) fn quote_ident(ident: &str) -> String {
    let plain = ident
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && ident.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !is_keyword(ident);
    if plain {
        ident.to_string()
    } else {
        format!("`{}`", ident.replace('`', "``"))
    }
}

/// A single-quoted string literal that reads back as `s` (backslash escapes, as in Spark SQL).
pub(crate) fn quote_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The text of a string literal token: single- or double-quoted, with its escapes (`''`,
/// backslash escapes) already read by the tokenizer. Every string geoberg's statements take is
/// read through this (or [`string_value`] once parsed), the inverse of [`quote_string`].
pub(crate) fn string_token(token: &Token) -> Option<&str> {
    match token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Some(s),
        _ => None,
    }
}

/// [`string_token`] for a literal in a parsed expression.
pub(crate) fn string_value(value: &Value) -> Option<&str> {
    match value {
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s),
        _ => None,
    }
}

/// Keywords that are also everyday column names and read back fine unquoted.
const PLAIN_KEYWORDS: [&str; 12] = [
    "DATA", "ICEBERG", "ID", "KEY", "LOCATION", "NAME", "STATE", "STATUS", "TYPE", "VALUE",
    "VERSION", "ZONE",
];

/// Whether sqlparser might read `ident` as a keyword, so that it needs quoting.
fn is_keyword(ident: &str) -> bool {
    let upper = ident.to_ascii_uppercase();
    ALL_KEYWORDS.binary_search(&upper.as_str()).is_ok() && !PLAIN_KEYWORDS.contains(&upper.as_str())
}
