use std::fmt;

use sqlparser::tokenizer::Token;

use std::collections::BTreeMap;

use crate::add_bbox_columns::AddBBoxColumnsRequest;
use crate::alter_schema::{AlterSchemaRequest, parse_drop_table};
use crate::alter_table::{parse_alter_table, write_keys, write_properties};
use crate::create_table::{CreateTableRequest, parse_create_table};
use crate::error::SqlError;
use crate::front::Front;
use crate::maintenance::{ExpireSnapshotsRequest, RemoveOrphanFilesRequest};
use crate::name::{TableName, quote_string};
use crate::procedure::parse_call;
use crate::rewrite::{RewriteRequest, parse_create_spatial_index};
use crate::rewrite_manifests::RewriteManifestsRequest;
use crate::upgrade_geometry::UpgradeGeometryRequest;

/// One parsed statement: a typed request for the `table` crate or the CLI to execute.
// A statement is parsed once and executed once: boxing the larger requests would only add an
// allocation and a deref to every match.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// `CREATE SPATIAL INDEX ...` or `CALL ... rewrite_data_files(...)`.
    Rewrite(RewriteRequest),
    /// `CREATE TABLE ...`.
    CreateTable(CreateTableRequest),
    /// `SHOW CREATE TABLE t`.
    ShowCreateTable(TableName),
    /// `SHOW TBLPROPERTIES t [('key')]`.
    ShowTblProperties {
        /// The table.
        table: TableName,
        /// Show only this property.
        key: Option<String>,
    },
    /// `DESCRIBE [TABLE] t`.
    Describe(TableName),
    /// `ALTER TABLE t SET TBLPROPERTIES ('key' = 'value', ...)`.
    SetTblProperties {
        /// The table.
        table: TableName,
        /// The properties to set (at least one), by key.
        properties: BTreeMap<String, String>,
    },
    /// `ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('key', ...)`.
    UnsetTblProperties {
        /// The table.
        table: TableName,
        /// The properties to remove (at least one, none twice), as written.
        keys: Vec<String>,
        /// `IF EXISTS`: a key the table does not have is skipped instead of refused.
        if_exists: bool,
    },
    /// `ALTER TABLE t ADD COLUMN[S] / DROP COLUMN / RENAME COLUMN ...`.
    AlterSchema(AlterSchemaRequest),
    /// `ALTER TABLE t RENAME TO u`.
    RenameTable {
        /// The table.
        table: TableName,
        /// Its new name.
        to: TableName,
    },
    /// `DROP TABLE [IF EXISTS] t [PURGE]`.
    DropTable {
        /// The table.
        table: TableName,
        /// `IF EXISTS`: a missing table is no error.
        if_exists: bool,
        /// `PURGE`: delete the table's files too.
        purge: bool,
    },
    /// `CALL <catalog>.system.expire_snapshots(...)`.
    ExpireSnapshots(ExpireSnapshotsRequest),
    /// `CALL <catalog>.system.remove_orphan_files(...)`.
    RemoveOrphanFiles(RemoveOrphanFilesRequest),
    /// `CALL <catalog>.system.rewrite_manifests(...)`.
    RewriteManifests(RewriteManifestsRequest),
    /// `CALL <catalog>.system.upgrade_geometry(...)`.
    UpgradeGeometry(UpgradeGeometryRequest),
    /// `CALL <catalog>.system.add_bbox_columns(...)`.
    AddBBoxColumns(AddBBoxColumnsRequest),
}

impl Statement {
    /// The canonical statement text; parsing it gives an equal `Statement`.
    pub fn to_sql(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Statement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Statement::Rewrite(r) => write!(f, "{r}"),
            Statement::CreateTable(c) => write!(f, "{c}"),
            Statement::ShowCreateTable(t) => write!(f, "SHOW CREATE TABLE {t}"),
            Statement::ShowTblProperties { table, key } => {
                write!(f, "SHOW TBLPROPERTIES {table}")?;
                if let Some(k) = key {
                    write!(f, " ({})", quote_string(k))?;
                }
                Ok(())
            }
            Statement::Describe(t) => write!(f, "DESCRIBE TABLE {t}"),
            Statement::SetTblProperties { table, properties } => {
                write!(f, "ALTER TABLE {table} SET TBLPROPERTIES ")?;
                write_properties(f, properties)
            }
            Statement::UnsetTblProperties {
                table,
                keys,
                if_exists,
            } => {
                write!(f, "ALTER TABLE {table} UNSET TBLPROPERTIES ")?;
                if *if_exists {
                    f.write_str("IF EXISTS ")?;
                }
                write_keys(f, keys)
            }
            Statement::AlterSchema(r) => write!(f, "{r}"),
            Statement::RenameTable { table, to } => write!(f, "ALTER TABLE {table} RENAME TO {to}"),
            Statement::DropTable {
                table,
                if_exists,
                purge,
            } => {
                f.write_str("DROP TABLE ")?;
                if *if_exists {
                    f.write_str("IF EXISTS ")?;
                }
                write!(f, "{table}")?;
                if *purge {
                    f.write_str(" PURGE")?;
                }
                Ok(())
            }
            Statement::ExpireSnapshots(r) => write!(f, "{r}"),
            Statement::RemoveOrphanFiles(r) => write!(f, "{r}"),
            Statement::RewriteManifests(r) => write!(f, "{r}"),
            Statement::UpgradeGeometry(r) => write!(f, "{r}"),
            Statement::AddBBoxColumns(r) => write!(f, "{r}"),
        }
    }
}

/// Parses one statement (an optional trailing `;` is allowed).
///
/// Keywords are case-insensitive; names may be dotted and backtick-quoted. Input over
/// [`crate::MAX_STATEMENT_BYTES`], nested deeper than [`crate::MAX_NESTING_DEPTH`] or with more
/// than [`crate::MAX_OPERATORS`] operators is refused before parsing.
pub fn parse(sql: &str) -> Result<Statement, SqlError> {
    let mut front = Front::new(sql)?;
    if front.words(&["CREATE", "SPATIAL", "INDEX"]) {
        front.expect_word("FOR")?;
        return parse_create_spatial_index(&mut front).map(Statement::Rewrite);
    }
    if front.words(&["CREATE", "TABLE"]) {
        return parse_create_table(&mut front).map(Statement::CreateTable);
    }
    if front.word("CALL") {
        return parse_call(&mut front);
    }
    if front.words(&["ALTER", "TABLE"]) {
        return parse_alter_table(&mut front);
    }
    if front.words(&["DROP", "TABLE"]) {
        return parse_drop_table(&mut front);
    }
    if front.words(&["SHOW", "CREATE", "TABLE"]) {
        let table = front.table_name()?;
        front.finish()?;
        return Ok(Statement::ShowCreateTable(table));
    }
    if front.words(&["SHOW", "TBLPROPERTIES"]) {
        let table = front.table_name()?;
        let key = if front.consume(&Token::LParen) {
            let key = front.string()?;
            front.expect(&Token::RParen)?;
            Some(key)
        } else {
            None
        };
        front.finish()?;
        return Ok(Statement::ShowTblProperties { table, key });
    }
    if front.word("DESCRIBE") || front.word("DESC") {
        front.word("TABLE");
        let table = front.table_name()?;
        front.finish()?;
        return Ok(Statement::Describe(table));
    }
    Err(unsupported_statement(&mut front))
}

/// Statement keywords whose next word is an operand (a column, a table, a query), not part of
/// the statement kind: `SELECT count(*)` is named `SELECT`, not `SELECT COUNT`.
const ONE_WORD_KINDS: [&str; 4] = ["SELECT", "EXPLAIN", "WITH", "UPDATE"];

/// Names the statement kind from its first words (`CREATE VIEW`, `DROP TABLE`, `INSERT INTO`,
/// `SELECT`).
fn unsupported_statement(front: &mut Front<'_>) -> SqlError {
    if !matches!(front.peek().token, Token::Word(_) | Token::EOF) {
        return front.error_here(
            "expected a statement keyword such as CREATE, ALTER, CALL, SHOW or DESCRIBE",
        );
    }
    let mut words: Vec<String> = Vec::new();
    for _ in 0..2 {
        if words
            .first()
            .is_some_and(|w| ONE_WORD_KINDS.contains(&w.as_str()))
        {
            break;
        }
        match front.next().token {
            Token::Word(w) => words.push(w.value.to_uppercase()),
            Token::EOF if words.is_empty() => {
                return SqlError::Unsupported {
                    statement: "an empty statement".to_string(),
                };
            }
            _ => break,
        }
    }
    SqlError::Unsupported {
        statement: words.join(" "),
    }
}
