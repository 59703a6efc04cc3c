use std::fmt;

use std::collections::BTreeMap;

use crate::add_bbox_columns::AddBBoxColumnsRequest;
use crate::alter_schema::AlterSchemaRequest;
use crate::alter_table::write_keys;
use crate::create_table::CreateTableRequest;
use crate::create_table_as_select::CreateTableAsSelectRequest;
use crate::maintenance::{ExpireSnapshotsRequest, MaintainRequest, RemoveOrphanFilesRequest};
use crate::name::{TableName, quote_string};
use crate::properties::write_properties;
use crate::rewrite::RewriteRequest;
use crate::rewrite_manifests::RewriteManifestsRequest;
use crate::show_tables::ShowTablesRequest;
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
    /// `CREATE TABLE t [USING iceberg] [TBLPROPERTIES (...)] AS <query>`.
    CreateTableAsSelect(CreateTableAsSelectRequest),
    /// `SHOW TABLES {IN | FROM} <namespace> [[LIKE] '<pattern>']`.
    ShowTables(ShowTablesRequest),
    /// `SHOW CREATE TABLE t`.
    ShowCreateTable(TableName),
    /// `SHOW TBLPROPERTIES t [('key')]`.
    ShowTblProperties {
        /// The table.
        table: TableName,
        /// Show only this property.
        key: Option<String>,
    },
    /// `DESCRIBE [TABLE] [EXTENDED | FORMATTED] t`.
    Describe {
        /// The table.
        table: TableName,
        /// `EXTENDED` (or `FORMATTED`): each column's bounds and null count over the live data
        /// files, from the manifests (seed 001's check that bbox columns carry statistics).
        extended: bool,
    },
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
    /// `CALL <catalog>.system.maintain(...)`.
    Maintain(MaintainRequest),
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
            Statement::CreateTableAsSelect(c) => write!(f, "{c}"),
            Statement::ShowTables(s) => write!(f, "{s}"),
            Statement::ShowCreateTable(t) => write!(f, "SHOW CREATE TABLE {t}"),
            Statement::ShowTblProperties { table, key } => {
                write!(f, "SHOW TBLPROPERTIES {table}")?;
                if let Some(k) = key {
                    write!(f, " ({})", quote_string(k))?;
                }
                Ok(())
            }
            Statement::Describe { table, extended } => {
                let extended = if *extended { "EXTENDED " } else { "" };
                write!(f, "DESCRIBE TABLE {extended}{table}")
            }
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
            Statement::Maintain(r) => write!(f, "{r}"),
            Statement::RemoveOrphanFiles(r) => write!(f, "{r}"),
            Statement::RewriteManifests(r) => write!(f, "{r}"),
            Statement::UpgradeGeometry(r) => write!(f, "{r}"),
            Statement::AddBBoxColumns(r) => write!(f, "{r}"),
        }
    }
}
