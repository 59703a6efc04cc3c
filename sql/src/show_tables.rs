//! `SHOW TABLES {IN | FROM} [<catalog>.]<namespace> [[LIKE] '<pattern>']`: the tables of one
//! namespace, in Spark's syntax. Bare `SHOW TABLES` is the SQL engine's (every schema it knows).

use std::fmt;

use crate::error::SqlError;
use crate::front::Front;
use crate::name::{quote_ident, quote_string};

/// `SHOW TABLES {IN | FROM} [<catalog>.]<namespace> [[LIKE] '<pattern>']`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowTablesRequest {
    /// The catalog named before the namespace, if any.
    pub catalog: Option<String>,
    /// The namespace whose tables are listed.
    pub namespace: String,
    /// Spark's pattern: `*` matches any characters, `|` separates alternatives, case is
    /// ignored; `None` lists every table.
    pub pattern: Option<String>,
}

impl ShowTablesRequest {
    /// Whether the table named `table` is listed.
    pub fn matches(&self, table: &str) -> bool {
        let Some(pattern) = &self.pattern else {
            return true;
        };
        let table = table.to_lowercase();
        pattern
            .split('|')
            .any(|p| glob(&p.trim().to_lowercase(), &table))
    }

    /// The canonical statement; parsing it gives an equal request.
    pub fn to_sql(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for ShowTablesRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SHOW TABLES IN ")?;
        if let Some(c) = &self.catalog {
            write!(f, "{}.", quote_ident(c))?;
        }
        f.write_str(&quote_ident(&self.namespace))?;
        if let Some(p) = &self.pattern {
            write!(f, " LIKE {}", quote_string(p))?;
        }
        Ok(())
    }
}

/// After `SHOW TABLES`.
pub(crate) fn parse_show_tables(front: &mut Front<'_>) -> Result<ShowTablesRequest, SqlError> {
    if !front.word("IN") && !front.word("FROM") {
        // The engine lists every schema's tables.
        return Err(SqlError::Unsupported {
            statement: "SHOW TABLES".into(),
        });
    }
    let name = front.table_name()?;
    let (catalog, namespace) = match name.parts() {
        [namespace] => (None, namespace.clone()),
        [catalog, namespace] => (Some(catalog.clone()), namespace.clone()),
        _ => {
            return Err(SqlError::invalid(
                format!("namespace `{name}`"),
                "write the namespace as <namespace> or <catalog>.<namespace>",
            ));
        }
    };
    let like = front.word("LIKE");
    let pattern = match front.maybe_string() {
        Some(p) => Some(p),
        None if like => return Err(front.error_here("expected a quoted pattern after LIKE")),
        None => None,
    };
    front.finish()?;
    Ok(ShowTablesRequest {
        catalog,
        namespace,
        pattern,
    })
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    // The last `*` seen and the text position it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}
