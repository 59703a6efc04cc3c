//! Schema and name changes, in Spark's syntax for Iceberg tables:
//! `ALTER TABLE t ADD COLUMN c type [FIRST | AFTER x]`, `ALTER TABLE t ADD COLUMNS (c type
//! [FIRST | AFTER x], ...)`, `ALTER TABLE t DROP COLUMN [IF EXISTS] c`, `ALTER TABLE t RENAME
//! COLUMN a TO b`.

use std::fmt;

use sqlparser::tokenizer::Token;

use crate::create_table::parse_column;
use crate::data_type::Column;
use crate::error::SqlError;
use crate::front::Front;
use crate::name::{TableName, quote_ident};

/// Where `ADD COLUMN` places a column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnPlacement {
    /// After the last column (no clause).
    Last,
    /// `FIRST`.
    First,
    /// `AFTER <column>`.
    After(String),
}

/// One column of `ADD COLUMN` / `ADD COLUMNS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedColumn {
    /// The column as declared (name, type, `NOT NULL`, `COMMENT`).
    pub column: Column,
    /// Where it goes.
    pub placement: ColumnPlacement,
}

/// A schema change of `ALTER TABLE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaAlteration {
    /// `ADD COLUMN c type ...` or `ADD COLUMNS (c type ..., ...)`: at least one column.
    AddColumns(Vec<AddedColumn>),
    /// `DROP COLUMN [IF EXISTS] c`.
    DropColumn {
        /// The column.
        column: String,
        /// `IF EXISTS`: a missing column is skipped instead of refused.
        if_exists: bool,
    },
    /// `RENAME COLUMN a TO b`.
    RenameColumn {
        /// The current name.
        from: String,
        /// The new name.
        to: String,
    },
}

/// `ALTER TABLE t ADD / DROP / RENAME COLUMN ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlterSchemaRequest {
    /// The table.
    pub table: TableName,
    /// The change.
    pub change: SchemaAlteration,
}

/// After `ALTER TABLE t`: a column change (`ADD COLUMN[S]`, `DROP COLUMN`, `RENAME COLUMN`);
/// `None` when the next words are none of them (the caller tries its other forms).
pub(crate) fn parse_schema_change(
    front: &mut Front<'_>,
) -> Result<Option<SchemaAlteration>, SqlError> {
    let change = if front.words(&["ADD", "COLUMNS"]) {
        front.expect(&Token::LParen)?;
        let mut columns = Vec::new();
        loop {
            columns.push(parse_added(front)?);
            if !front.consume(&Token::Comma) {
                break;
            }
        }
        front.expect(&Token::RParen)?;
        SchemaAlteration::AddColumns(columns)
    } else if front.words(&["ADD", "COLUMN"]) {
        SchemaAlteration::AddColumns(vec![parse_added(front)?])
    } else if front.words(&["DROP", "COLUMN"]) {
        let if_exists = front.words(&["IF", "EXISTS"]);
        let column = front.identifier("a column name")?;
        SchemaAlteration::DropColumn { column, if_exists }
    } else if front.words(&["RENAME", "COLUMN"]) {
        let from = front.identifier("a column name")?;
        front.expect_word("TO")?;
        let to = front.identifier("the new column name")?;
        SchemaAlteration::RenameColumn { from, to }
    } else {
        return Ok(None);
    };
    front.finish()?;
    Ok(Some(change))
}

/// `c type [NOT NULL] [COMMENT '...'] [FIRST | AFTER x]`.
fn parse_added(front: &mut Front<'_>) -> Result<AddedColumn, SqlError> {
    let column = parse_column(front)?;
    let placement = if front.word("FIRST") {
        ColumnPlacement::First
    } else if front.word("AFTER") {
        ColumnPlacement::After(front.identifier("the column to add after")?)
    } else {
        ColumnPlacement::Last
    };
    Ok(AddedColumn { column, placement })
}

impl fmt::Display for AddedColumn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.column)?;
        match &self.placement {
            ColumnPlacement::Last => Ok(()),
            ColumnPlacement::First => f.write_str(" FIRST"),
            ColumnPlacement::After(c) => write!(f, " AFTER {}", quote_ident(c)),
        }
    }
}

impl fmt::Display for AlterSchemaRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ALTER TABLE {} ", self.table)?;
        match &self.change {
            SchemaAlteration::AddColumns(columns) => {
                let items: Vec<String> = columns.iter().map(ToString::to_string).collect();
                write!(f, "ADD COLUMNS ({})", items.join(", "))
            }
            SchemaAlteration::DropColumn { column, if_exists } => {
                f.write_str("DROP COLUMN ")?;
                if *if_exists {
                    f.write_str("IF EXISTS ")?;
                }
                f.write_str(&quote_ident(column))
            }
            SchemaAlteration::RenameColumn { from, to } => {
                write!(
                    f,
                    "RENAME COLUMN {} TO {}",
                    quote_ident(from),
                    quote_ident(to)
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Statement, parse};

    use super::*;

    fn round_trip(sql: &str) -> Statement {
        let s = parse(sql).unwrap();
        assert_eq!(parse(&s.to_sql()).unwrap(), s, "{sql} -> {}", s.to_sql());
        s
    }

    #[test]
    fn spark_forms_parse_and_round_trip() {
        let Statement::AlterSchema(r) =
            round_trip("alter table db.t add column score double after id")
        else {
            panic!()
        };
        let SchemaAlteration::AddColumns(cols) = &r.change else {
            panic!()
        };
        assert_eq!(cols[0].column.name, "score");
        assert_eq!(cols[0].placement, ColumnPlacement::After("id".into()));
        let Statement::AlterSchema(r) = round_trip(
            "ALTER TABLE db.t ADD COLUMNS (bbox_min_x double FIRST, g geometry(4326) COMMENT 'x', \
             s struct<a: int>)",
        ) else {
            panic!()
        };
        let SchemaAlteration::AddColumns(cols) = &r.change else {
            panic!()
        };
        assert_eq!(cols.len(), 3);
        assert_eq!(cols[0].placement, ColumnPlacement::First);
        assert_eq!(cols[1].column.comment.as_deref(), Some("x"));
        assert_eq!(
            round_trip("ALTER TABLE db.t DROP COLUMN IF EXISTS `a b`"),
            Statement::AlterSchema(AlterSchemaRequest {
                table: TableName::new(vec!["db".into(), "t".into()]).unwrap(),
                change: SchemaAlteration::DropColumn {
                    column: "a b".into(),
                    if_exists: true
                }
            })
        );
        assert!(matches!(
            round_trip("ALTER TABLE db.t RENAME COLUMN a TO b"),
            Statement::AlterSchema(AlterSchemaRequest {
                change: SchemaAlteration::RenameColumn { .. },
                ..
            })
        ));
        assert!(matches!(
            round_trip("ALTER TABLE db.t RENAME TO db.u"),
            Statement::RenameTable { .. }
        ));
        assert_eq!(
            round_trip("drop table if exists db.t purge"),
            Statement::DropTable {
                table: TableName::new(vec!["db".into(), "t".into()]).unwrap(),
                if_exists: true,
                purge: true
            }
        );
        assert!(matches!(
            round_trip("DROP TABLE db.t"),
            Statement::DropTable {
                purge: false,
                if_exists: false,
                ..
            }
        ));
    }

    #[test]
    fn malformed_changes_are_errors() {
        for bad in [
            "ALTER TABLE db.t ADD COLUMN",
            "ALTER TABLE db.t ADD COLUMN c",
            "ALTER TABLE db.t ADD COLUMNS ()",
            "ALTER TABLE db.t ADD COLUMN c int AFTER",
            "ALTER TABLE db.t RENAME COLUMN a b",
            "ALTER TABLE db.t DROP COLUMN a, b",
            "DROP TABLE db.t PURGE now",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
