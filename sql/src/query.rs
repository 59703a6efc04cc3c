use std::fmt;

use sqlparser::tokenizer::Token;

use crate::error::SqlError;
use crate::front::Front;
use crate::name::{TableName, quote_ident};
use crate::predicate::{Predicate, predicate_from_expr};

/// What a `SELECT` returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Projection {
    /// `count(*)` (also `count(1)`): the number of matching rows.
    CountStar,
    /// `*`: every column.
    All,
    /// The named columns, in order.
    Columns(Vec<String>),
}

/// `SELECT <projection> FROM <table> [WHERE <condition>] [LIMIT n]`: a scan of one table with
/// a filter, which is all a table tool needs (and what `EXPLAIN` plans).
#[derive(Debug, Clone, PartialEq)]
pub struct SelectRequest {
    /// The scanned table.
    pub table: TableName,
    /// What to return.
    pub projection: Projection,
    /// The row filter; its [`Predicate::spatial_filters`] prune files.
    pub filter: Option<Predicate>,
    /// At most this many rows.
    pub limit: Option<u64>,
}

impl SelectRequest {
    /// The canonical statement.
    pub fn to_sql(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for SelectRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SELECT ")?;
        match &self.projection {
            Projection::CountStar => f.write_str("count(*)")?,
            Projection::All => f.write_str("*")?,
            Projection::Columns(cols) => {
                let cols: Vec<String> = cols.iter().map(|c| quote_ident(c)).collect();
                f.write_str(&cols.join(", "))?;
            }
        }
        write!(f, " FROM {}", self.table)?;
        if let Some(p) = &self.filter {
            write!(f, " WHERE {p}")?;
        }
        if let Some(n) = self.limit {
            write!(f, " LIMIT {n}")?;
        }
        Ok(())
    }
}

/// After `SELECT`.
pub(crate) fn parse_select(front: &mut Front<'_>) -> Result<SelectRequest, SqlError> {
    let projection = if front.consume(&Token::Mul) {
        Projection::All
    } else if matches!(&front.peek().token, Token::Word(w) if w.value.eq_ignore_ascii_case("count"))
        && front.words(&["count"])
    {
        front.expect(&Token::LParen)?;
        if !front.consume(&Token::Mul) && !front.consume(&Token::Number("1".into(), false)) {
            return Err(front.error_here(format!(
                "only count(*) is supported, found count({}",
                front.peek().token
            )));
        }
        front.expect(&Token::RParen)?;
        Projection::CountStar
    } else {
        let mut columns = Vec::new();
        loop {
            columns.push(front.identifier("a column name, * or count(*)")?);
            if !front.consume(&Token::Comma) {
                break;
            }
        }
        Projection::Columns(columns)
    };
    front.expect_word("FROM")?;
    let table = front.table_name()?;
    let filter = if front.word("WHERE") {
        Some(predicate_from_expr(&front.expr()?)?)
    } else {
        None
    };
    let limit = if front.word("LIMIT") {
        Some(front.unsigned("the LIMIT")?)
    } else {
        None
    };
    if !front.at_end()
        && let Token::Word(w) = &front.peek().token
    {
        return Err(SqlError::Unsupported {
            statement: format!("SELECT ... {}", w.value.to_uppercase()),
        });
    }
    front.finish()?;
    Ok(SelectRequest {
        table,
        projection,
        filter,
        limit,
    })
}
