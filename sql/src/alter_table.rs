//! `ALTER TABLE t SET TBLPROPERTIES (...)` and `ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS]
//! (...)`, in Spark's syntax.

use std::fmt;

use sqlparser::tokenizer::Token;

use crate::alter_schema::parse_schema_change;
use crate::create_table::parse_properties;
use crate::error::SqlError;
use crate::front::Front;
use crate::name::quote_string;
use crate::statement::Statement;

/// After `ALTER TABLE`.
pub(crate) fn parse_alter_table(front: &mut Front<'_>) -> Result<Statement, SqlError> {
    let table = front.table_name()?;
    if let Some(statement) = parse_schema_change(front, &table)? {
        return Ok(statement);
    }
    let statement = if front.words(&["SET", "TBLPROPERTIES"]) {
        Statement::SetTblProperties {
            table,
            properties: parse_properties(front)?,
        }
    } else if front.words(&["UNSET", "TBLPROPERTIES"]) {
        let if_exists = front.words(&["IF", "EXISTS"]);
        Statement::UnsetTblProperties {
            table,
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
    Ok(statement)
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

/// `('k' = 'v', ...)` as `SET TBLPROPERTIES` writes it.
pub(crate) fn write_properties<'a>(
    f: &mut fmt::Formatter<'_>,
    properties: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> fmt::Result {
    let items: Vec<String> = properties
        .into_iter()
        .map(|(k, v)| format!("{} = {}", quote_string(k), quote_string(v)))
        .collect();
    write!(f, "({})", items.join(", "))
}

/// `('k', ...)` as `UNSET TBLPROPERTIES` writes it.
pub(crate) fn write_keys(f: &mut fmt::Formatter<'_>, keys: &[String]) -> fmt::Result {
    let items: Vec<String> = keys.iter().map(|k| quote_string(k)).collect();
    write!(f, "({})", items.join(", "))
}
