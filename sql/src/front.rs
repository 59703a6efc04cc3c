//! The small hand-written front: limits, tokenizing, and keyword helpers over sqlparser's
//! `Parser`, which still parses every expression, literal and name.

use sqlparser::ast::{Expr, ObjectNamePart};
use sqlparser::dialect::DatabricksDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

use crate::error::{Position, SqlError};
use crate::name::{TableName, string_token};

/// Longest statement accepted, in bytes. Large enough for a detailed WKT window, small enough
/// that hostile input cannot make parsing slow.
pub const MAX_STATEMENT_BYTES: usize = 256 * 1024;

/// Deepest nesting of parentheses/brackets accepted (also applied to WKT text). It keeps
/// sqlparser's and the `wkt` crate's recursion far from the stack limit, even in debug builds.
pub const MAX_NESTING_DEPTH: usize = 32;

/// Most operator tokens (comparisons, arithmetic, AND/OR/NOT) in one statement. Long AND/OR
/// chains build deep left-leaning trees without parentheses; this bounds them.
pub const MAX_OPERATORS: usize = 1024;

/// sqlparser's own recursion limit: above [`MAX_NESTING_DEPTH`] so our message wins, far below
/// what overflows a 2 MiB thread stack.
const RECURSION_LIMIT: usize = 3 * MAX_NESTING_DEPTH;

/// Databricks (Spark SQL) lexing: backtick identifiers, single- and double-quoted strings
/// (`where => "state = 'CA'"`), backslash escapes, `=>` named arguments.
static DIALECT: DatabricksDialect = DatabricksDialect {};

pub(crate) struct Front<'a> {
    parser: Parser<'a>,
    sql: &'a str,
}

impl<'a> Front<'a> {
    /// Checks the limits and tokenizes `sql`.
    pub(crate) fn new(sql: &'a str) -> Result<Self, SqlError> {
        if sql.len() > MAX_STATEMENT_BYTES {
            return Err(SqlError::TooLong {
                len: sql.len(),
                max: MAX_STATEMENT_BYTES,
            });
        }
        let tokens = Tokenizer::new(&DIALECT, sql)
            .tokenize_with_location()
            .map_err(|e| syntax_at(sql, e.message, e.location))?;
        check_token_limits(&tokens)?;
        let parser = Parser::new(&DIALECT)
            .with_recursion_limit(RECURSION_LIMIT)
            .with_tokens_with_locations(tokens);
        Ok(Front { parser, sql })
    }

    pub(crate) fn peek(&self) -> &TokenWithSpan {
        self.parser.peek_token_ref()
    }

    pub(crate) fn next(&mut self) -> TokenWithSpan {
        self.parser.next_token()
    }

    /// A syntax error at the next token.
    pub(crate) fn error_here(&self, message: impl Into<String>) -> SqlError {
        syntax_at(self.sql, message.into(), self.peek().span.start)
    }

    /// Converts a sqlparser error, keeping the position it names.
    pub(crate) fn convert(&self, error: ParserError) -> SqlError {
        match error {
            ParserError::RecursionLimitExceeded => SqlError::TooDeep {
                depth: RECURSION_LIMIT,
                max: MAX_NESTING_DEPTH,
                position: position(self.peek().span.start),
            },
            ParserError::ParserError(m) | ParserError::TokenizerError(m) => {
                match split_location(&m) {
                    Some((message, location)) => syntax_at(self.sql, message.to_string(), location),
                    None => self.error_here(m),
                }
            }
        }
    }

    /// Consumes the next token if it is the unquoted word `word` (any case).
    pub(crate) fn word(&mut self, word: &str) -> bool {
        if is_word(&self.peek().token, word) {
            self.next();
            true
        } else {
            false
        }
    }

    /// Consumes the unquoted words `words` if all of them come next.
    pub(crate) fn words(&mut self, words: &[&str]) -> bool {
        let all = words
            .iter()
            .enumerate()
            .all(|(i, w)| is_word(&self.parser.peek_nth_token_ref(i).token, w));
        if all {
            for _ in words {
                self.next();
            }
        }
        all
    }

    pub(crate) fn expect_word(&mut self, word: &str) -> Result<(), SqlError> {
        if self.word(word) {
            Ok(())
        } else {
            Err(self.error_here(format!(
                "expected {}, found {}",
                word.to_uppercase(),
                self.peek().token
            )))
        }
    }

    pub(crate) fn consume(&mut self, token: &Token) -> bool {
        self.parser.consume_token(token)
    }

    pub(crate) fn expect(&mut self, token: &Token) -> Result<(), SqlError> {
        if self.consume(token) {
            Ok(())
        } else {
            Err(self.error_here(format!("expected {token}, found {}", self.peek().token)))
        }
    }

    pub(crate) fn expr(&mut self) -> Result<Expr, SqlError> {
        self.parser.parse_expr().map_err(|e| self.convert(e))
    }

    /// A quoted string, unescaped.
    pub(crate) fn string(&mut self) -> Result<String, SqlError> {
        self.maybe_string().ok_or_else(|| {
            self.error_here(format!(
                "expected a quoted string, found {}",
                self.peek().token
            ))
        })
    }

    /// A quoted string, unescaped, if one comes next.
    pub(crate) fn maybe_string(&mut self) -> Option<String> {
        let s = string_token(&self.peek().token)?.to_string();
        self.next();
        Some(s)
    }

    pub(crate) fn unsigned(&mut self, what: &str) -> Result<u64, SqlError> {
        match self.peek().token.clone() {
            Token::Number(n, _) => match n.parse::<u64>() {
                Ok(v) => {
                    self.next();
                    Ok(v)
                }
                Err(_) => Err(self.error_here(format!("{what} must be a whole number, found {n}"))),
            },
            other => {
                Err(self.error_here(format!("expected {what} (a whole number), found {other}")))
            }
        }
    }

    pub(crate) fn identifier(&mut self, what: &str) -> Result<String, SqlError> {
        match self.peek().token.clone() {
            Token::Word(w) => {
                self.next();
                Ok(w.value)
            }
            other => Err(self.error_here(format!("expected {what}, found {other}"))),
        }
    }

    /// A dotted table name: `t`, `ns.t` or `catalog.ns.t`, parts optionally backtick-quoted.
    pub(crate) fn table_name(&mut self) -> Result<TableName, SqlError> {
        let start = self.peek().span.start;
        let name = self
            .parser
            .parse_object_name(false)
            .map_err(|e| self.convert(e))?;
        let parts = name
            .0
            .into_iter()
            .map(|p| match p {
                ObjectNamePart::Identifier(i) => Ok(i.value),
                ObjectNamePart::Function(f) => Err(syntax_at(
                    self.sql,
                    format!("expected a table name, found the function {}", f.name),
                    start,
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        TableName::new(parts)
    }

    /// Accepts an optional `;` and then requires the end of the input.
    pub(crate) fn finish(&mut self) -> Result<(), SqlError> {
        self.consume(&Token::SemiColon);
        if self.peek().token == Token::EOF {
            Ok(())
        } else {
            Err(self.error_here(format!(
                "unexpected {} after the end of the statement",
                self.peek().token
            )))
        }
    }

    /// The rest of the statement up to a `;` or the end, as written (escapes and comments
    /// kept): text another parser reads, such as the query of `CREATE TABLE ... AS`. `None`
    /// when nothing follows.
    pub(crate) fn rest(&mut self) -> Option<String> {
        let start = self.peek().span.start;
        let mut end = None;
        while !self.at_end() {
            end = Some(self.next().span.end);
        }
        Some(self.sql[byte_offset(self.sql, start)..byte_offset(self.sql, end?)].to_string())
    }

    pub(crate) fn at_end(&self) -> bool {
        matches!(self.peek().token, Token::EOF | Token::SemiColon)
    }
}

fn is_word(token: &Token, word: &str) -> bool {
    matches!(token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

fn check_token_limits(tokens: &[TokenWithSpan]) -> Result<(), SqlError> {
    let mut depth = 0usize;
    let mut operators = 0usize;
    for t in tokens {
        match &t.token {
            Token::LParen | Token::LBracket | Token::LBrace => {
                depth += 1;
                if depth > MAX_NESTING_DEPTH {
                    return Err(SqlError::TooDeep {
                        depth,
                        max: MAX_NESTING_DEPTH,
                        position: position(t.span.start),
                    });
                }
            }
            Token::RParen | Token::RBracket | Token::RBrace => depth = depth.saturating_sub(1),
            Token::Whitespace(_)
            | Token::Word(_)
            | Token::Number(..)
            | Token::Comma
            | Token::Period
            | Token::SemiColon
            | Token::EOF => {}
            Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) => {}
            // Everything else is an operator or punctuation that can chain expressions,
            // and so are the boolean keywords.
            _ => operators += 1,
        }
        if let Token::Word(w) = &t.token
            && w.quote_style.is_none()
            && ["AND", "OR", "NOT"]
                .iter()
                .any(|k| w.value.eq_ignore_ascii_case(k))
        {
            operators += 1;
        }
        if operators > MAX_OPERATORS {
            return Err(SqlError::TooManyOperators { max: MAX_OPERATORS });
        }
    }
    Ok(())
}

pub(crate) fn position(location: Location) -> Position {
    Position {
        line: location.line,
        column: location.column,
    }
}

/// A syntax error with the text found at `location`.
pub(crate) fn syntax_at(sql: &str, message: String, location: Location) -> SqlError {
    // sqlparser gives the end-of-input token an empty span (line 0); name the end instead.
    let location = if location.line == 0 {
        end_of_input(sql)
    } else {
        location
    };
    SqlError::Syntax {
        message,
        position: position(location),
        snippet: snippet(sql, location),
    }
}

/// The byte offset of `location` (1-based line, column in characters) in `sql`.
fn byte_offset(sql: &str, location: Location) -> usize {
    let mut line_start = 0;
    for _ in 1..location.line {
        match sql[line_start..].find('\n') {
            Some(at) => line_start += at + 1,
            None => return sql.len(),
        }
    }
    sql[line_start..]
        .char_indices()
        .nth(location.column.saturating_sub(1) as usize)
        .map_or(sql.len(), |(at, _)| line_start + at)
}

/// Just past the last character of `sql`.
fn end_of_input(sql: &str) -> Location {
    let last_line = sql.rsplit('\n').next().unwrap_or("");
    Location {
        line: sql.split('\n').count() as u64,
        column: last_line.chars().count() as u64 + 1,
    }
}

/// Up to 32 characters of `sql` from `location` (or the end of the input).
fn snippet(sql: &str, location: Location) -> String {
    let line = sql
        .split('\n')
        .nth(location.line.saturating_sub(1) as usize)
        .unwrap_or("");
    let text: String = line
        .chars()
        .skip(location.column.saturating_sub(1) as usize)
        .take(32)
        .collect();
    if text.is_empty() {
        "<end of input>".to_string()
    } else {
        text
    }
}

/// sqlparser appends " at Line: L, Column: C" to its messages; split that off.
fn split_location(message: &str) -> Option<(&str, Location)> {
    let (text, at) = message.rsplit_once(" at Line: ")?;
    let (line, column) = at.split_once(", Column: ")?;
    let line = line.trim().parse().ok()?;
    let column = column.trim().parse().ok()?;
    let text = text.strip_prefix("sql parser error: ").unwrap_or(text);
    Some((text, Location { line, column }))
}
