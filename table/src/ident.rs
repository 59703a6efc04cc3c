//! Namespace and table names, validated so that no name can address a path outside the warehouse.

use std::fmt;

use crate::error::{Error, Result};

/// `namespace.table`, where the namespace has one or more levels.
///
/// Levels and names are non-empty, at most 255 bytes, contain no `.` (namespaces are stored
/// dot-joined), no `/` or `\`, no control characters, and are not `..`-style path parts.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableIdent {
    namespace: Vec<String>,
    name: String,
}

impl TableIdent {
    /// Builds an identifier from a dot-joined namespace (`"a"` or `"a.b"`) and a table name.
    pub fn new(namespace: &str, name: &str) -> Result<Self> {
        Ok(Self {
            namespace: parse_namespace(namespace)?,
            name: validate_part(name)?.to_string(),
        })
    }

    /// Parses `namespace.table` (the last dot separates the table name).
    pub fn parse(qualified: &str) -> Result<Self> {
        let (ns, name) = qualified
            .rsplit_once('.')
            .ok_or_else(|| Error::InvalidName {
                name: qualified.to_string(),
                reason: "expected <namespace>.<table>, e.g. test_db.points".into(),
            })?;
        Self::new(ns, name)
    }

    /// The identifier a parsed statement's table name refers to in the catalog `catalog_name`:
    /// `[catalog.]namespace.table`; a catalog part must name that catalog.
    pub fn from_name(name: &geoberg_sql::TableName, catalog_name: &str) -> Result<Self> {
        if let Some(catalog) = name.catalog()
            && catalog != catalog_name
        {
            return Err(Error::InvalidName {
                name: name.to_string(),
                reason: format!(
                    "the catalog is {catalog_name:?}, not {catalog:?}; write {}.{} or open \
                     catalog {catalog:?}",
                    name.namespace().unwrap_or_default(),
                    name.name()
                ),
            });
        }
        let namespace = name.namespace().ok_or_else(|| Error::InvalidName {
            name: name.to_string(),
            reason: format!("name the table with its namespace, e.g. db.{}", name.name()),
        })?;
        Self::new(namespace, name.name())
    }

    /// Namespace levels.
    pub fn namespace(&self) -> &[String] {
        &self.namespace
    }

    /// The namespace as the catalog stores it (dot-joined).
    pub fn namespace_str(&self) -> String {
        self.namespace.join(".")
    }

    /// Table name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for TableIdent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.namespace_str(), self.name)
    }
}

/// Splits and validates a dot-joined namespace.
pub(crate) fn parse_namespace(namespace: &str) -> Result<Vec<String>> {
    namespace
        .split('.')
        .map(|level| validate_part(level).map(str::to_string))
        .collect()
}

fn validate_part(part: &str) -> Result<&str> {
    let bad = |reason: &str| Error::InvalidName {
        name: part.to_string(),
        reason: format!("{reason}; use letters, digits, '_' and '-'"),
    };
    if part.is_empty() {
        return Err(bad("empty name"));
    }
    if part.len() > 255 {
        return Err(bad("longer than 255 bytes"));
    }
    if part.chars().all(|c| c == '.') {
        return Err(bad("a name of dots is a path traversal"));
    }
    if let Some(c) = part
        .chars()
        .find(|c| matches!(c, '.' | '/' | '\\' | ':') || c.is_control())
    {
        return Err(bad(&format!(
            "contains {c:?}, which would change the path or the namespace"
        )));
    }
    Ok(part)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_names_that_escape_the_warehouse() {
        for (ns, name) in [
            ("db", ".."),
            ("..", "t"),
            ("db", "a/b"),
            ("db", "a\\b"),
            ("db", ""),
            ("", "t"),
            ("db..x", "t"),
            ("db", "nul\0"),
            ("db", "c:"),
        ] {
            assert!(TableIdent::new(ns, name).is_err(), "{ns}.{name}");
        }
        let t = TableIdent::parse("a.b.points").unwrap();
        assert_eq!(t.namespace(), ["a", "b"]);
        assert_eq!(t.name(), "points");
        assert_eq!(t.to_string(), "a.b.points");
    }
}
