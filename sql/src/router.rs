//! The statement router: the first words of a statement pick the module that parses it, and
//! its request is wrapped in a [`Statement`] here. A new statement or procedure is one module
//! plus one line in this file.

use sqlparser::tokenizer::Token;

use crate::add_bbox_columns::add_bbox_columns_from_call;
use crate::alter_schema::AlterSchemaRequest;
use crate::alter_table::{TableChange, parse_alter_table};
use crate::create_table::{NewTable, parse_create_table};
use crate::error::SqlError;
use crate::front::Front;
use crate::maintenance::{
    expire_snapshots_from_call, maintain_from_call, remove_orphan_files_from_call,
};
use crate::procedure::bind_call;
use crate::rewrite::{parse_create_spatial_index, rewrite_from_call};
use crate::rewrite_manifests::rewrite_manifests_from_call;
use crate::show_tables::parse_show_tables;
use crate::statement::Statement;
use crate::upgrade_geometry::upgrade_geometry_from_call;

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
        return Ok(match parse_create_table(&mut front)? {
            NewTable::Columns(request) => Statement::CreateTable(request),
            NewTable::AsSelect(request) => Statement::CreateTableAsSelect(request),
        });
    }
    if front.word("CALL") {
        return call(&mut front);
    }
    if front.words(&["ALTER", "TABLE"]) {
        return alter_table(&mut front);
    }
    if front.words(&["DROP", "TABLE"]) {
        return drop_table(&mut front);
    }
    if front.words(&["SHOW", "CREATE", "TABLE"]) {
        let table = front.table_name()?;
        front.finish()?;
        return Ok(Statement::ShowCreateTable(table));
    }
    if front.words(&["SHOW", "TABLES"]) {
        return parse_show_tables(&mut front).map(Statement::ShowTables);
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
        let extended = front.word("EXTENDED") || front.word("FORMATTED");
        let table = front.table_name()?;
        front.finish()?;
        return Ok(Statement::Describe { table, extended });
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

/// After `CALL`.
fn call(front: &mut Front<'_>) -> Result<Statement, SqlError> {
    let call = front.expr()?;
    front.finish()?;
    let args = bind_call(&call)?;
    match args.procedure() {
        "rewrite_data_files" => rewrite_from_call(&args).map(Statement::Rewrite),
        "expire_snapshots" => expire_snapshots_from_call(&args).map(Statement::ExpireSnapshots),
        "rewrite_manifests" => rewrite_manifests_from_call(&args).map(Statement::RewriteManifests),
        "upgrade_geometry" => upgrade_geometry_from_call(&args).map(Statement::UpgradeGeometry),
        "add_bbox_columns" => add_bbox_columns_from_call(&args).map(Statement::AddBBoxColumns),
        "maintain" => maintain_from_call(&args).map(Statement::Maintain),
        _ => remove_orphan_files_from_call(&args).map(Statement::RemoveOrphanFiles),
    }
}

/// After `ALTER TABLE`.
fn alter_table(front: &mut Front<'_>) -> Result<Statement, SqlError> {
    let (table, change) = parse_alter_table(front)?;
    Ok(match change {
        TableChange::Schema(change) => Statement::AlterSchema(AlterSchemaRequest { table, change }),
        TableChange::Rename(to) => Statement::RenameTable { table, to },
        TableChange::SetProperties(properties) => Statement::SetTblProperties { table, properties },
        TableChange::UnsetProperties { keys, if_exists } => Statement::UnsetTblProperties {
            table,
            keys,
            if_exists,
        },
    })
}

/// After `DROP TABLE`: `[IF EXISTS] t [PURGE]`.
fn drop_table(front: &mut Front<'_>) -> Result<Statement, SqlError> {
    let if_exists = front.words(&["IF", "EXISTS"]);
    let table = front.table_name()?;
    let purge = front.word("PURGE");
    front.finish()?;
    Ok(Statement::DropTable {
        table,
        if_exists,
        purge,
    })
}
