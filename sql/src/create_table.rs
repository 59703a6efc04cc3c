use std::collections::BTreeMap;
use std::fmt;

use sqlparser::ast::Expr;
use sqlparser::tokenizer::Token;

use crate::create_table_as_select::CreateTableAsSelectRequest;
use crate::data_type::{Column, TypeNames, parse_type};
use crate::error::SqlError;
use crate::front::Front;
use crate::name::{TableName, quote_ident};
use crate::predicate::{Literal, column_name, function_name, literal, positional_args};
use crate::properties::{parse_properties, write_properties};

/// An Iceberg partition transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionTransform {
    /// The column value itself.
    Identity,
    /// `bucket(n, col)`: hash into n buckets.
    Bucket(u32),
    /// `truncate(w, col)`: truncate to width w.
    Truncate(u32),
    /// `years(col)`.
    Year,
    /// `months(col)`.
    Month,
    /// `days(col)`.
    Day,
    /// `hours(col)`.
    Hour,
}

/// One `PARTITIONED BY` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionField {
    /// The source column.
    pub column: String,
    /// The transform applied to it.
    pub transform: PartitionTransform,
}

impl fmt::Display for PartitionField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = quote_ident(&self.column);
        match self.transform {
            PartitionTransform::Identity => write!(f, "{c}"),
            PartitionTransform::Bucket(n) => write!(f, "bucket({n}, {c})"),
            PartitionTransform::Truncate(w) => write!(f, "truncate({w}, {c})"),
            PartitionTransform::Year => write!(f, "years({c})"),
            PartitionTransform::Month => write!(f, "months({c})"),
            PartitionTransform::Day => write!(f, "days({c})"),
            PartitionTransform::Hour => write!(f, "hours({c})"),
        }
    }
}

/// `CREATE TABLE [IF NOT EXISTS] t (...) [USING iceberg] [PARTITIONED BY (...)]
/// [TBLPROPERTIES (...)]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateTableRequest {
    /// The new table.
    pub table: TableName,
    /// `IF NOT EXISTS`: succeed without change when the table exists.
    pub if_not_exists: bool,
    /// The columns, in order (at least one, unique names).
    pub columns: Vec<Column>,
    /// The partition spec, in order.
    pub partitioning: Vec<PartitionField>,
    /// Table properties.
    pub properties: BTreeMap<String, String>,
}

impl CreateTableRequest {
    /// The canonical statement.
    pub fn to_sql(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for CreateTableRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CREATE TABLE ")?;
        if self.if_not_exists {
            f.write_str("IF NOT EXISTS ")?;
        }
        write!(f, "{} (", self.table)?;
        for (i, c) in self.columns.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{c}")?;
        }
        f.write_str(") USING iceberg")?;
        if !self.partitioning.is_empty() {
            let fields: Vec<String> = self.partitioning.iter().map(|p| p.to_string()).collect();
            write!(f, " PARTITIONED BY ({})", fields.join(", "))?;
        }
        if !self.properties.is_empty() {
            f.write_str(" TBLPROPERTIES ")?;
            write_properties(f, &self.properties)?;
        }
        Ok(())
    }
}

/// What a `CREATE TABLE` statement asks for.
pub(crate) enum NewTable {
    /// A table with a column list.
    Columns(CreateTableRequest),
    /// A table from a query: `AS <query>`.
    AsSelect(CreateTableAsSelectRequest),
}

/// After `CREATE TABLE`.
pub(crate) fn parse_create_table(front: &mut Front<'_>) -> Result<NewTable, SqlError> {
    let if_not_exists = front.words(&["IF", "NOT", "EXISTS"]);
    let table = front.table_name()?;
    let columns = match front.peek().token {
        Token::LParen => Some(parse_columns(front)?),
        _ => None,
    };
    let mut partitioning = None;
    let mut properties = None;
    let mut using = false;
    while !front.at_end() {
        if !using && front.word("USING") {
            using = true;
            parse_provider(front)?;
        } else if partitioning.is_none() && front.words(&["PARTITIONED", "BY"]) {
            let Some(columns) = &columns else {
                return Err(SqlError::Unsupported {
                    statement: "PARTITIONED BY in CREATE TABLE ... AS SELECT (create the table \
                                with its columns and PARTITIONED BY, then INSERT INTO it ... \
                                SELECT)"
                        .into(),
                });
            };
            partitioning = Some(parse_partitioning(front, columns)?);
        } else if properties.is_none() && front.word("TBLPROPERTIES") {
            properties = Some(parse_properties(front)?);
        } else if columns.is_none() && front.word("AS") {
            let query = front.rest().ok_or_else(|| {
                front.error_here("expected a query after AS, e.g. AS SELECT * FROM db.t")
            })?;
            front.finish()?;
            return Ok(NewTable::AsSelect(CreateTableAsSelectRequest {
                table,
                if_not_exists,
                properties: properties.unwrap_or_default(),
                query,
            }));
        } else if front.word("AS") {
            return Err(SqlError::Unsupported {
                statement: "a column list with AS SELECT in CREATE TABLE (the query's columns \
                            are the new table's: leave out the column list, or create the table \
                            first and INSERT INTO it ... SELECT)"
                    .into(),
            });
        } else {
            return Err(front.error_here(match columns {
                Some(_) => format!(
                    "expected USING iceberg, PARTITIONED BY (...) or TBLPROPERTIES (...) (each \
                     at most once), found {}",
                    front.peek().token
                ),
                None => format!(
                    "expected ( and the columns, or [USING iceberg] [TBLPROPERTIES (...)] AS \
                     <query>, found {}",
                    front.peek().token
                ),
            }));
        }
    }
    let Some(columns) = columns else {
        return Err(front.error_here(
            "expected ( and the columns, or AS <query>, found the end of the statement",
        ));
    };
    front.finish()?;
    Ok(NewTable::Columns(CreateTableRequest {
        table,
        if_not_exists,
        columns,
        partitioning: partitioning.unwrap_or_default(),
        properties: properties.unwrap_or_default(),
    }))
}

/// `(<column> <type> [NOT NULL] [COMMENT '...'], ...)`: at least one, names unique.
fn parse_columns(front: &mut Front<'_>) -> Result<Vec<Column>, SqlError> {
    front.expect(&Token::LParen)?;
    let mut columns: Vec<Column> = Vec::new();
    loop {
        let column = parse_column(front)?;
        if columns
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case(&column.name))
        {
            return Err(SqlError::invalid(
                format!("column `{}`", column.name),
                "it is declared twice (names are case-insensitive); rename one",
            ));
        }
        columns.push(column);
        if !front.consume(&Token::Comma) {
            break;
        }
    }
    front.expect(&Token::RParen)?;
    Ok(columns)
}

/// After `USING`: the data source, `iceberg` or its alias `havasu.iceberg` (seed 004).
fn parse_provider(front: &mut Front<'_>) -> Result<(), SqlError> {
    let provider = front.table_name()?;
    let p = provider.parts().join(".").to_ascii_lowercase();
    if p != "iceberg" && p != "havasu.iceberg" {
        return Err(SqlError::Unsupported {
            statement: format!(
                "CREATE TABLE ... USING {provider} (geoberg creates iceberg tables; write USING \
                 iceberg or leave it out)"
            ),
        });
    }
    Ok(())
}

/// Seed 004: "Column default values can't be set", with what to do instead.
pub const COLUMN_DEFAULT_REFUSED: &str = "Column default values can't be set (Iceberg \
     write-defaults are not supported); remove DEFAULT and give the value in INSERT, or fill \
     the column with UPDATE ... SET";

pub(crate) fn parse_column(front: &mut Front<'_>) -> Result<Column, SqlError> {
    let name = front.identifier("a column name")?;
    let data_type = parse_type(front, &format!("column `{name}`"), TypeNames::Spark)?;
    let mut required = false;
    let mut comment = None;
    loop {
        if !required && front.words(&["NOT", "NULL"]) {
            required = true;
        } else if comment.is_none() && front.word("COMMENT") {
            comment = Some(front.string()?);
        } else if front.word("DEFAULT") {
            return Err(SqlError::invalid(
                format!("DEFAULT on column `{name}`"),
                COLUMN_DEFAULT_REFUSED,
            ));
        } else {
            break;
        }
    }
    Ok(Column {
        name,
        data_type,
        required,
        comment,
    })
}

fn parse_partitioning(
    front: &mut Front<'_>,
    columns: &[Column],
) -> Result<Vec<PartitionField>, SqlError> {
    front.expect(&Token::LParen)?;
    let mut fields = Vec::new();
    loop {
        let field = partition_field(&front.expr()?)?;
        if !columns
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case(&field.column))
        {
            return Err(SqlError::invalid(
                format!("partition field `{field}`"),
                format!(
                    "there is no column `{}` in the table; partition by a declared column",
                    field.column
                ),
            ));
        }
        fields.push(field);
        if !front.consume(&Token::Comma) {
            break;
        }
    }
    front.expect(&Token::RParen)?;
    Ok(fields)
}

const TRANSFORMS: &str = "<column>, bucket(<n>, <column>), truncate(<width>, <column>), years, months, days, hours(<column>)";

fn partition_field(expr: &Expr) -> Result<PartitionField, SqlError> {
    let bad = |reason: String| SqlError::invalid(format!("partition field `{expr}`"), reason);
    if let Some(column) = column_name(expr) {
        return Ok(PartitionField {
            column,
            transform: PartitionTransform::Identity,
        });
    }
    let Expr::Function(function) = expr else {
        return Err(bad(format!("use one of {TRANSFORMS}")));
    };
    let name = function_name(function).to_ascii_lowercase();
    let args = positional_args(function, expr)?;
    let transform = match (name.as_str(), args.len()) {
        ("years" | "year", 1) => PartitionTransform::Year,
        ("months" | "month", 1) => PartitionTransform::Month,
        ("days" | "day" | "date", 1) => PartitionTransform::Day,
        ("hours" | "hour" | "date_hour", 1) => PartitionTransform::Hour,
        ("bucket" | "truncate", 2) => {
            // Spark accepts both (n, col) and (col, n).
            let (n, column_arg) = match (literal(args[0]), literal(args[1])) {
                (Ok(Literal::Integer(n)), _) => (n, args[1]),
                (_, Ok(Literal::Integer(n))) => (n, args[0]),
                _ => return Err(bad(format!("{name} needs a whole number and a column"))),
            };
            let n = u32::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
                bad(format!(
                    "{name} needs a number in 1..={}, got {n}",
                    u32::MAX
                ))
            })?;
            let column = column_name(column_arg)
                .ok_or_else(|| bad(format!("{name} needs a column, found {column_arg}")))?;
            return Ok(PartitionField {
                column,
                transform: if name == "bucket" {
                    PartitionTransform::Bucket(n)
                } else {
                    PartitionTransform::Truncate(n)
                },
            });
        }
        _ => return Err(bad(format!("use one of {TRANSFORMS}"))),
    };
    let column = column_name(args[0])
        .ok_or_else(|| bad(format!("{name} needs a column, found {}", args[0])))?;
    Ok(PartitionField { column, transform })
}
