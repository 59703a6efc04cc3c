//! `TBLPROPERTIES ('key' = 'value', ...)`: the property list of `CREATE TABLE`,
//! `CREATE TABLE ... AS` and `ALTER TABLE ... SET`, read and written back.

use std::collections::BTreeMap;
use std::fmt;

use sqlparser::tokenizer::Token;

use crate::error::SqlError;
use crate::front::Front;
use crate::name::quote_string;

/// `('key' = 'value', ...)`: the TBLPROPERTIES list of CREATE TABLE and ALTER TABLE.
pub(crate) fn parse_properties(
    front: &mut Front<'_>,
) -> Result<BTreeMap<String, String>, SqlError> {
    front.expect(&Token::LParen)?;
    let mut properties = BTreeMap::new();
    loop {
        let key = front.string()?;
        front.expect(&Token::Eq)?;
        let value = match front.maybe_string() {
            Some(v) => v,
            None => property_scalar(front, &key)?,
        };
        if properties.insert(key.clone(), value).is_some() {
            return Err(SqlError::invalid(
                format!("table property '{key}'"),
                "it is set twice; set it once",
            ));
        }
        if !front.consume(&Token::Comma) {
            break;
        }
    }
    front.expect(&Token::RParen)?;
    Ok(properties)
}

/// An unquoted property value: a number or `true` / `false`, as Spark takes them.
fn property_scalar(front: &mut Front<'_>, key: &str) -> Result<String, SqlError> {
    let value = match front.peek().token.clone() {
        Token::Number(v, _) => v,
        Token::Word(w)
            if w.quote_style.is_none()
                && ["true", "false"].contains(&w.value.to_ascii_lowercase().as_str()) =>
        {
            w.value.to_ascii_lowercase()
        }
        other => {
            return Err(front.error_here(format!(
                "expected a quoted value for property '{key}', found {other}"
            )));
        }
    };
    front.next();
    Ok(value)
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
