//! `ALTER TABLE t SET TBLPROPERTIES (...)` and `ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS]
//! (...)`, in Spark's syntax, and the other `ALTER TABLE` forms routed through it (`ADD /
//! DROP / RENAME COLUMN`, `RENAME TO`).

use std::collections::BTreeMap;
use std::fmt;

use sqlparser::tokenizer::Token;

use crate::alter_schema::{SchemaAlteration, parse_schema_change};
use crate::error::SqlError;
use crate::front::Front;
use crate::name::{TableName, quote_string};
use crate::properties::parse_properties;

/// What one `ALTER TABLE t ...` changes.
pub(crate) enum TableChange {
    /// `ADD COLUMN[S]`, `DROP COLUMN`, `RENAME COLUMN`.
    Schema(SchemaAlteration),
    /// `RENAME TO u`.
    Rename(TableName),
    /// `SET TBLPROPERTIES (...)`.
    SetProperties(BTreeMap<String, String>),
    /// `UNSET TBLPROPERTIES [IF EXISTS] (...)`.
    UnsetProperties {
        /// The keys, as written.
        keys: Vec<String>,
        /// `IF EXISTS`.
        if_exists: bool,
    },
}

/// After `ALTER TABLE`: the table and its change.
pub(crate) fn parse_alter_table(
    front: &mut Front<'_>,
) -> Result<(TableName, TableChange), SqlError> {
    let table = front.table_name()?;
    if let Some(change) = parse_schema_change(front)? {
        return Ok((table, TableChange::Schema(change)));
    }
    let change = if front.words(&["RENAME", "TO"]) {
        TableChange::Rename(front.table_name()?)
    } else if front.words(&["SET", "TBLPROPERTIES"]) {
        TableChange::SetProperties(parse_properties(front)?)
    } else if front.words(&["UNSET", "TBLPROPERTIES"]) {
        let if_exists = front.words(&["IF", "EXISTS"]);
        TableChange::UnsetProperties {
            keys: parse_keys(front)?,
            if_exists,
        }
    } else {
        return Err(match &front.peek().token {
            Token::Word(w) if w.quote_style.is_none() => SqlError::Unsupported {
                statement: format!(
                    "ALTER TABLE ... {} (geoberg alters: SET TBLPROPERTIES ('<key>' = '<value>', \
                     ...), UNSET TBLPROPERTIES [IF EXISTS] ('<key>', ...), ADD COLUMN[S], DROP \
                     COLUMN, RENAME COLUMN, RENAME TO)",
                    w.value.to_uppercase()
                ),
            },
            other => front.error_here(format!(
                "expected SET / UNSET TBLPROPERTIES, ADD COLUMN, DROP COLUMN, RENAME COLUMN or \
                 RENAME TO, found {other}"
            )),
        });
    };
    front.finish()?;
    Ok((table, change))
}

/// `('key', ...)`: at least one key, none twice.
fn parse_keys(front: &mut Front<'_>) -> Result<Vec<String>, SqlError> {
    front.expect(&Token::LParen)?;
    let mut keys: Vec<String> = Vec::new();
    loop {
        let key = front.string()?;
        if keys.contains(&key) {
            return Err(SqlError::invalid(
                format!("table property '{key}'"),
                "it is unset twice; name it once",
            ));
        }
        keys.push(key);
        if !front.consume(&Token::Comma) {
            break;
        }
    }
    front.expect(&Token::RParen)?;
    Ok(keys)
}

/// `('k', ...)` as `UNSET TBLPROPERTIES` writes it.
pub(crate) fn write_keys(f: &mut fmt::Formatter<'_>, keys: &[String]) -> fmt::Result {
    let items: Vec<String> = keys.iter().map(|k| quote_string(k)).collect();
    write!(f, "({})", items.join(", "))
}
