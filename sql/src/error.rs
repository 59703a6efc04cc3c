use std::fmt;

use thiserror::Error;

/// The table statements this crate parses, listed in every "not supported" message so the fix
/// is one read away. Queries are not among them: they run in the SQL engine.
pub const SUPPORTED_STATEMENTS: &str = "CREATE SPATIAL INDEX FOR <table> USING hilbert(...), \
CALL <catalog>.system.rewrite_data_files(...), CALL <catalog>.system.expire_snapshots(...), \
CALL <catalog>.system.remove_orphan_files(...), CREATE TABLE, \
CREATE TABLE <table> [USING iceberg] [TBLPROPERTIES (...)] AS <query>, \
ALTER TABLE <table> SET TBLPROPERTIES ('<key>' = '<value>', ...), \
ALTER TABLE <table> UNSET TBLPROPERTIES [IF EXISTS] ('<key>', ...), \
ALTER TABLE <table> ADD COLUMN[S] / DROP COLUMN [IF EXISTS] / RENAME COLUMN <a> TO <b> / \
RENAME TO <table>, DROP TABLE [IF EXISTS] <table> [PURGE], SHOW CREATE TABLE, \
SHOW TBLPROPERTIES <table> [('<key>')], SHOW TABLES {IN | FROM} <namespace> [LIKE '<pattern>'], \
DESCRIBE [TABLE] <table>";

/// The conditions a WHERE clause may use, listed when a condition is rejected.
pub const SUPPORTED_CONDITIONS: &str = "<column> =, <>, !=, <, <=, >, >= <literal>; \
<column> [NOT] IN (<literals>); <column> [NOT] BETWEEN <literal> AND <literal>; \
<column> IS [NOT] NULL; AND, OR, NOT; ST_Intersects / ST_Contains / ST_Within(<column>, <window>) \
in either argument order; ST_DWithin(<column>, <window>, <distance>); where <window> is \
ST_GeomFromText('<WKT>'[, <srid>]) or ST_MakeEnvelope(minX, minY, maxX, maxY[, <srid>])";

/// Where in the statement text an error was found (1-based, columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    /// Line number, from 1.
    pub line: u64,
    /// Column number in characters, from 1.
    pub column: u64,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// Everything that can be wrong with a statement. Each message names the problem, the offending
/// value and the fix; none of them is a panic, whatever the input.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SqlError {
    /// The statement is longer than [`crate::MAX_STATEMENT_BYTES`].
    #[error(
        "statement is {len} bytes, more than the limit of {max} bytes; shorten it (a large WKT \
         window can usually be replaced by ST_MakeEnvelope)"
    )]
    TooLong {
        /// Length of the statement in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Parentheses (or WKT rings) nest deeper than [`crate::MAX_NESTING_DEPTH`].
    #[error(
        "expression nests {depth} levels deep at {position}, more than the limit of {max}; \
         remove redundant parentheses"
    )]
    TooDeep {
        /// The depth reached.
        depth: usize,
        /// The limit.
        max: usize,
        /// Where the limit was crossed.
        position: Position,
    },
    /// The statement has more operators than [`crate::MAX_OPERATORS`].
    #[error(
        "statement has more than {max} operators; split the condition or use IN (...) instead \
         of chained ORs"
    )]
    TooManyOperators {
        /// The limit.
        max: usize,
    },
    /// The text is not valid SQL for the statement being parsed.
    #[error("syntax error at {position}: {message} (near `{snippet}`)")]
    Syntax {
        /// What was expected and what was found.
        message: String,
        /// Where.
        position: Position,
        /// The text at that position.
        snippet: String,
    },
    /// A statement kind or clause that is not one of geoberg's table statements (queries among
    /// them: they run in the SQL engine).
    #[error(
        "{statement} is not supported: this parser reads geoberg's table statements only; \
         queries and other SQL (SELECT, EXPLAIN, INSERT, DELETE, UPDATE, MERGE) run in the SQL \
         engine, `geoberg sql` or `geoberg_datafusion::Session`. Table statements: \
         {SUPPORTED_STATEMENTS}"
    )]
    Unsupported {
        /// The statement kind or clause, as written.
        statement: String,
    },
    /// A WHERE condition outside the supported forms.
    #[error(
        "unsupported condition `{condition}` at {position}: {reason}. Supported conditions: {SUPPORTED_CONDITIONS}"
    )]
    UnsupportedCondition {
        /// The condition as sqlparser renders it.
        condition: String,
        /// Why it was rejected.
        reason: String,
        /// Where it starts (line 0 when unknown).
        position: Position,
    },
    /// `hilbert(col, precision)` with a precision outside 1..=32.
    #[error(
        "hilbert precision {value} is out of range: use a whole number of bits in 1..=32 (16 is a good default)"
    )]
    PrecisionOutOfRange {
        /// The precision as written.
        value: String,
    },
    /// Hilbert curve bounds that are not finite or not ordered.
    #[error("invalid hilbert bounds ({min_x}, {min_y}, {max_x}, {max_y}): {reason}")]
    InvalidBounds {
        /// minX as given.
        min_x: f64,
        /// minY as given.
        min_y: f64,
        /// maxX as given.
        max_x: f64,
        /// maxY as given.
        max_y: f64,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// A spatial window that cannot be used (bad WKT, empty, non-finite).
    #[error("invalid spatial window `{window}`: {reason}")]
    InvalidWindow {
        /// The window text (shortened).
        window: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// An argument, option, column or property with a bad value.
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// What was invalid (e.g. "argument `strategy`").
        what: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// An error inside a string argument that holds SQL (`where => "..."`, `sort_order => '...'`).
    #[error("in the `{argument}` argument: {source}")]
    InArgument {
        /// The procedure argument name.
        argument: &'static str,
        /// The error within the string, positioned relative to the string's text.
        source: Box<SqlError>,
    },
}

impl SqlError {
    pub(crate) fn invalid(what: impl Into<String>, reason: impl Into<String>) -> Self {
        SqlError::Invalid {
            what: what.into(),
            reason: reason.into(),
        }
    }
}
