//! `CREATE TABLE [IF NOT EXISTS] t [USING iceberg] [TBLPROPERTIES (...)] AS <query>`: a new
//! table from a query's result, as seed 004 creates a format-version 2 table
//! (`USING iceberg TBLPROPERTIES ('format-version'='2') AS SELECT ...`). The query is kept as
//! written, for the SQL engine to run; its columns become the table's.

use std::collections::BTreeMap;
use std::fmt;

use crate::name::TableName;
use crate::properties::write_properties;

/// `CREATE TABLE [IF NOT EXISTS] t [USING iceberg] [TBLPROPERTIES (...)] AS <query>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateTableAsSelectRequest {
    /// The new table.
    pub table: TableName,
    /// `IF NOT EXISTS`: succeed without running the query when the table exists.
    pub if_not_exists: bool,
    /// Table properties (`format-version` among them), set when the table is created.
    pub properties: BTreeMap<String, String>,
    /// The query after `AS`, as written (without a trailing `;`).
    pub query: String,
}

impl CreateTableAsSelectRequest {
    /// The canonical statement; parsing it gives an equal request.
    pub fn to_sql(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for CreateTableAsSelectRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CREATE TABLE ")?;
        if self.if_not_exists {
            f.write_str("IF NOT EXISTS ")?;
        }
        write!(f, "{} USING iceberg", self.table)?;
        if !self.properties.is_empty() {
            f.write_str(" TBLPROPERTIES ")?;
            write_properties(f, &self.properties)?;
        }
        write!(f, " AS {}", self.query)
    }
}
