use std::collections::BTreeMap;
use std::fmt;

use geoberg_crs::{ColumnType as GeoType, Crs, EdgeAlgorithm};
use sqlparser::ast::Expr;
use sqlparser::tokenizer::Token;

use crate::error::SqlError;
use crate::front::{Front, MAX_NESTING_DEPTH, position};
use crate::name::{TableName, quote_ident, quote_string};
use crate::predicate::{Literal, column_name, function_name, literal, positional_args};

/// A column type. Geometry types hold the CRS as `geoberg-crs` parses it (`4326`, `EPSG:3857`,
/// `OGC:CRS84`, `projjson:<property>`); whether that CRS may be declared is checked when the
/// table is created (`geoberg_crs::validate_declaration`), not here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnType {
    /// `boolean`.
    Boolean,
    /// `int`: 32-bit signed.
    Int,
    /// `bigint` / `long`: 64-bit signed.
    Long,
    /// `float`: 32-bit IEEE 754.
    Float,
    /// `double`: 64-bit IEEE 754.
    Double,
    /// `decimal(precision, scale)`.
    Decimal {
        /// Total digits, 1..=38.
        precision: u8,
        /// Digits after the point, at most `precision`.
        scale: u8,
    },
    /// `date`.
    Date,
    /// Timestamp with time zone (Spark's `timestamp`).
    Timestamp,
    /// Timestamp without time zone.
    TimestampNtz,
    /// `string`: UTF-8.
    String,
    /// `binary`.
    Binary,
    /// `uuid`.
    Uuid,
    /// `fixed(n)`: exactly `n` bytes.
    Fixed(u64),
    /// `time`: microseconds since midnight, no zone.
    Time,
    /// Nanosecond timestamp with time zone (`timestamptz_ns`, `timestamp_ltz_ns`).
    TimestampNs,
    /// Nanosecond timestamp without time zone (`timestamp_ntz_ns`).
    TimestampNtzNs,
    /// `struct<name: type [NOT NULL] [COMMENT '...'], ...>`: nested fields, each with its own
    /// Iceberg field id once created.
    Struct(Vec<Column>),
    /// `array<type [NOT NULL]>` (Iceberg `list`); `element_required` is `NOT NULL` on the
    /// element.
    Array {
        /// The element type.
        element: Box<ColumnType>,
        /// Elements are never null.
        element_required: bool,
    },
    /// `map<key type, value type [NOT NULL]>`; keys are never null.
    Map {
        /// The key type.
        key: Box<ColumnType>,
        /// The value type.
        value: Box<ColumnType>,
        /// Values are never null.
        value_required: bool,
    },
    /// `geometry` (no CRS: [`GeoType::GeometryWithoutCrs`], which the `crs` rules reject for
    /// new tables), `geometry(<srid or crs>)`, `geography` (OGC:CRS84, spherical),
    /// `geography(<crs>)` or `geography(<crs>, <algorithm>)`: the `crs` crate's type.
    Geo(GeoType),
}

impl ColumnType {
    /// Whether this is a geometry or geography column.
    pub fn is_spatial(&self) -> bool {
        matches!(self, ColumnType::Geo(_))
    }
}

/// `4326` for a bare SRID (as SQL writes `geometry(4326)`), else the quoted CRS string.
fn render_crs(crs: &Crs) -> String {
    match crs {
        Crs::Srid(n) if *n >= 0 => n.to_string(),
        crs => quote_string(&crs.to_string()),
    }
}

fn not_null(required: bool) -> &'static str {
    if required { " NOT NULL" } else { "" }
}

impl fmt::Display for ColumnType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ColumnType::Boolean => f.write_str("boolean"),
            ColumnType::Int => f.write_str("int"),
            ColumnType::Long => f.write_str("bigint"),
            ColumnType::Float => f.write_str("float"),
            ColumnType::Double => f.write_str("double"),
            ColumnType::Decimal { precision, scale } => write!(f, "decimal({precision}, {scale})"),
            ColumnType::Date => f.write_str("date"),
            ColumnType::Timestamp => f.write_str("timestamp"),
            ColumnType::TimestampNtz => f.write_str("timestamp_ntz"),
            ColumnType::String => f.write_str("string"),
            ColumnType::Binary => f.write_str("binary"),
            ColumnType::Uuid => f.write_str("uuid"),
            ColumnType::Fixed(n) => write!(f, "fixed({n})"),
            ColumnType::Time => f.write_str("time"),
            ColumnType::TimestampNs => f.write_str("timestamptz_ns"),
            ColumnType::TimestampNtzNs => f.write_str("timestamp_ntz_ns"),
            ColumnType::Struct(fields) => {
                f.write_str("struct<")?;
                for (i, c) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {}", quote_ident(&c.name), c.data_type)?;
                    if c.required {
                        f.write_str(" NOT NULL")?;
                    }
                    if let Some(comment) = &c.comment {
                        write!(f, " COMMENT {}", quote_string(comment))?;
                    }
                }
                f.write_str(">")
            }
            ColumnType::Array {
                element,
                element_required,
            } => write!(f, "array<{element}{}>", not_null(*element_required)),
            ColumnType::Map {
                key,
                value,
                value_required,
            } => write!(f, "map<{key}, {value}{}>", not_null(*value_required)),
            ColumnType::Geo(GeoType::GeometryWithoutCrs) => f.write_str("geometry"),
            ColumnType::Geo(GeoType::Geometry { crs }) => {
                write!(f, "geometry({})", render_crs(crs))
            }
            ColumnType::Geo(GeoType::Geography { crs, edges }) => {
                f.write_str("geography")?;
                match (*crs == Crs::OgcCrs84, *edges == EdgeAlgorithm::Spherical) {
                    (true, true) => Ok(()),
                    (false, true) => write!(f, "({})", render_crs(crs)),
                    (_, false) => write!(f, "({}, {})", render_crs(crs), edges.name()),
                }
            }
        }
    }
}

/// One column of `CREATE TABLE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Column name.
    pub name: String,
    /// Column type.
    pub data_type: ColumnType,
    /// `NOT NULL` (an Iceberg required field).
    pub required: bool,
    /// `COMMENT '...'` (the Iceberg field doc).
    pub comment: Option<String>,
}

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
            write!(f, "{} {}", quote_ident(&c.name), c.data_type)?;
            if c.required {
                f.write_str(" NOT NULL")?;
            }
            if let Some(comment) = &c.comment {
                write!(f, " COMMENT {}", quote_string(comment))?;
            }
        }
        f.write_str(") USING iceberg")?;
        if !self.partitioning.is_empty() {
            let fields: Vec<String> = self.partitioning.iter().map(|p| p.to_string()).collect();
            write!(f, " PARTITIONED BY ({})", fields.join(", "))?;
        }
        if !self.properties.is_empty() {
            let props: Vec<String> = self
                .properties
                .iter()
                .map(|(k, v)| format!("{} = {}", quote_string(k), quote_string(v)))
                .collect();
            write!(f, " TBLPROPERTIES ({})", props.join(", "))?;
        }
        Ok(())
    }
}

/// After `CREATE TABLE`.
pub(crate) fn parse_create_table(front: &mut Front<'_>) -> Result<CreateTableRequest, SqlError> {
    let if_not_exists = front.words(&["IF", "NOT", "EXISTS"]);
    let table = front.table_name()?;
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
    let mut partitioning = None;
    let mut properties = None;
    let mut using = false;
    while !front.at_end() {
        if !using && front.word("USING") {
            using = true;
            let provider = front.table_name()?;
            let p = provider.parts().join(".").to_ascii_lowercase();
            if p != "iceberg" && p != "havasu.iceberg" {
                return Err(SqlError::Unsupported {
                    statement: format!(
                        "CREATE TABLE ... USING {provider} (geoberg creates iceberg tables; write USING iceberg or leave it out)"
                    ),
                });
            }
        } else if partitioning.is_none() && front.words(&["PARTITIONED", "BY"]) {
            partitioning = Some(parse_partitioning(front, &columns)?);
        } else if properties.is_none() && front.word("TBLPROPERTIES") {
            properties = Some(parse_properties(front)?);
        } else if matches!(&front.peek().token, Token::Word(w) if w.value.eq_ignore_ascii_case("AS"))
        {
            return Err(SqlError::Unsupported {
                statement: "CREATE TABLE ... AS SELECT".to_string(),
            });
        } else {
            return Err(front.error_here(format!(
                "expected USING iceberg, PARTITIONED BY (...) or TBLPROPERTIES (...) (each at most once), found {}",
                front.peek().token
            )));
        }
    }
    front.finish()?;
    Ok(CreateTableRequest {
        table,
        if_not_exists,
        columns,
        partitioning: partitioning.unwrap_or_default(),
        properties: properties.unwrap_or_default(),
    })
}

pub(crate) fn parse_column(front: &mut Front<'_>) -> Result<Column, SqlError> {
    let name = front.identifier("a column name")?;
    let data_type = parse_type(front, &name)?;
    let mut required = false;
    let mut comment = None;
    loop {
        if !required && front.words(&["NOT", "NULL"]) {
            required = true;
        } else if comment.is_none() && front.word("COMMENT") {
            comment = Some(front.string()?);
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

const TYPES: &str = "boolean, int, bigint/long, float, double, decimal(p, s), date, time, \
timestamp, timestamp_ntz, timestamptz_ns, timestamp_ntz_ns, string, binary, fixed(n), uuid, \
struct<name: type, ...>, array<type>, map<key type, value type>, geometry(<srid or crs>), \
geography(<crs>[, <algorithm>])";

fn parse_type(front: &mut Front<'_>, column: &str) -> Result<ColumnType, SqlError> {
    let mut pending_gt = false;
    parse_type_at(front, column, 1, &mut pending_gt)
}

/// Closes a `<`: a `>` token, or half of a `>>` (the tokenizer reads `array<array<int>>`'s end
/// as one shift operator; `pending_gt` holds its second half for the enclosing type).
fn close_angle(front: &mut Front<'_>, pending_gt: &mut bool) -> Result<(), SqlError> {
    if std::mem::take(pending_gt) || front.consume(&Token::Gt) {
        return Ok(());
    }
    if front.consume(&Token::ShiftRight) {
        *pending_gt = true;
        return Ok(());
    }
    Err(front.error_here(format!("expected >, found {}", front.peek().token)))
}

/// `NOT NULL` after a nested type, unless the next token is a pending `>`.
fn nested_not_null(front: &mut Front<'_>, pending_gt: bool) -> bool {
    !pending_gt && front.words(&["NOT", "NULL"])
}

fn parse_type_at(
    front: &mut Front<'_>,
    column: &str,
    depth: usize,
    pending_gt: &mut bool,
) -> Result<ColumnType, SqlError> {
    if depth > MAX_NESTING_DEPTH {
        return Err(SqlError::TooDeep {
            depth,
            max: MAX_NESTING_DEPTH,
            position: position(front.peek().span.start),
        });
    }
    let start = front.peek().clone();
    let name = front.identifier("a column type")?.to_ascii_lowercase();
    let simple = match name.as_str() {
        "boolean" | "bool" => Some(ColumnType::Boolean),
        "int" | "integer" => Some(ColumnType::Int),
        "bigint" | "long" => Some(ColumnType::Long),
        "float" | "real" => Some(ColumnType::Float),
        "double" => Some(ColumnType::Double),
        "date" => Some(ColumnType::Date),
        "time" => Some(ColumnType::Time),
        "timestamp" | "timestamptz" | "timestamp_ltz" => Some(ColumnType::Timestamp),
        "timestamp_ntz" => Some(ColumnType::TimestampNtz),
        "timestamptz_ns" | "timestamp_ltz_ns" => Some(ColumnType::TimestampNs),
        "timestamp_ntz_ns" => Some(ColumnType::TimestampNtzNs),
        "string" => Some(ColumnType::String),
        "binary" => Some(ColumnType::Binary),
        "uuid" => Some(ColumnType::Uuid),
        _ => None,
    };
    if let Some(t) = simple {
        return Ok(t);
    }
    let invalid = |reason: String| SqlError::invalid(format!("type of column `{column}`"), reason);
    match name.as_str() {
        "timestamp_ns" => Err(invalid(
            "timestamp_ns is ambiguous here (Spark's timestamp has a time zone, Iceberg's does \
             not); write timestamptz_ns (with zone) or timestamp_ntz_ns (without)"
                .into(),
        )),
        "fixed" => {
            let bracket = front.consume(&Token::LBracket);
            if !bracket {
                front.expect(&Token::LParen)?;
            }
            let n = front.unsigned("fixed length")?;
            front.expect(if bracket {
                &Token::RBracket
            } else {
                &Token::RParen
            })?;
            if n == 0 || n > i32::MAX as u64 {
                return Err(invalid(format!(
                    "fixed({n}) needs a length of 1 to {} bytes",
                    i32::MAX
                )));
            }
            Ok(ColumnType::Fixed(n))
        }
        "struct" => {
            front.expect(&Token::Lt)?;
            let mut fields: Vec<Column> = Vec::new();
            loop {
                let field = front.identifier("a struct field name")?;
                front.consume(&Token::Colon);
                let data_type = parse_type_at(front, column, depth + 1, pending_gt)?;
                let required = nested_not_null(front, *pending_gt);
                let comment = if !*pending_gt && front.word("COMMENT") {
                    Some(front.string()?)
                } else {
                    None
                };
                if fields.iter().any(|f| f.name.eq_ignore_ascii_case(&field)) {
                    return Err(invalid(format!(
                        "struct field `{field}` is declared twice (names are case-insensitive); \
                         rename one"
                    )));
                }
                fields.push(Column {
                    name: field,
                    data_type,
                    required,
                    comment,
                });
                if *pending_gt || !front.consume(&Token::Comma) {
                    break;
                }
            }
            close_angle(front, pending_gt)?;
            Ok(ColumnType::Struct(fields))
        }
        "array" | "list" => {
            front.expect(&Token::Lt)?;
            let element = parse_type_at(front, column, depth + 1, pending_gt)?;
            let element_required = nested_not_null(front, *pending_gt);
            close_angle(front, pending_gt)?;
            Ok(ColumnType::Array {
                element: Box::new(element),
                element_required,
            })
        }
        "map" => {
            front.expect(&Token::Lt)?;
            let key = parse_type_at(front, column, depth + 1, pending_gt)?;
            if *pending_gt {
                return Err(invalid("map<...> needs a key and a value type".into()));
            }
            // Keys are always required; `NOT NULL` on them is allowed and changes nothing.
            front.words(&["NOT", "NULL"]);
            front.expect(&Token::Comma)?;
            let value = parse_type_at(front, column, depth + 1, pending_gt)?;
            let value_required = nested_not_null(front, *pending_gt);
            close_angle(front, pending_gt)?;
            Ok(ColumnType::Map {
                key: Box::new(key),
                value: Box::new(value),
                value_required,
            })
        }
        "decimal" | "dec" | "numeric" => {
            let (precision, scale) = if front.consume(&Token::LParen) {
                let p = front.unsigned("decimal precision")?;
                let s = if front.consume(&Token::Comma) {
                    front.unsigned("decimal scale")?
                } else {
                    0
                };
                front.expect(&Token::RParen)?;
                (p, s)
            } else {
                (10, 0)
            };
            if !(1..=38).contains(&precision) || scale > precision {
                return Err(SqlError::invalid(
                    format!("type of column `{column}`"),
                    format!(
                        "decimal({precision}, {scale}) needs 1 <= precision <= 38 and scale <= precision"
                    ),
                ));
            }
            Ok(ColumnType::Decimal {
                precision: precision as u8,
                scale: scale as u8,
            })
        }
        "geometry" => {
            let crs = if front.consume(&Token::LParen) {
                let crs = parse_crs(front, column)?;
                front.expect(&Token::RParen)?;
                Some(crs)
            } else {
                None
            };
            Ok(ColumnType::Geo(match crs {
                None => GeoType::GeometryWithoutCrs,
                Some(crs) => GeoType::Geometry { crs },
            }))
        }
        "geography" => {
            let (crs, algorithm) = if front.consume(&Token::LParen) {
                let crs = parse_crs(front, column)?;
                let algorithm = if front.consume(&Token::Comma) {
                    let a = front.identifier("an edge algorithm")?;
                    Some(a.parse::<EdgeAlgorithm>().map_err(|_| {
                        let names: Vec<&str> =
                            EdgeAlgorithm::ALL.iter().map(|a| a.name()).collect();
                        SqlError::invalid(
                            format!("type of column `{column}`"),
                            format!(
                                "unknown edge algorithm `{a}`; use one of {}",
                                names.join(", ")
                            ),
                        )
                    })?)
                } else {
                    None
                };
                front.expect(&Token::RParen)?;
                (Some(crs), algorithm)
            } else {
                (None, None)
            };
            Ok(ColumnType::Geo(GeoType::Geography {
                crs: crs.unwrap_or(Crs::OgcCrs84),
                edges: algorithm.unwrap_or_default(),
            }))
        }
        _ => Err(SqlError::invalid(
            format!("type `{}` of column `{column}`", start.token),
            format!("it is not a supported type; use one of {TYPES}"),
        )),
    }
}

/// A CRS argument: an SRID number, a quoted string, or bare `AUTHORITY:CODE`, parsed by
/// `geoberg-crs`.
fn parse_crs(front: &mut Front<'_>, column: &str) -> Result<Crs, SqlError> {
    let text = match front.peek().token.clone() {
        Token::Number(n, _) => {
            front.next();
            n
        }
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => {
            front.next();
            s
        }
        Token::Word(w) if w.quote_style.is_none() => {
            front.next();
            front.expect(&Token::Colon)?;
            let code = match front.next().token {
                Token::Word(c) => c.value,
                Token::Number(c, _) => c,
                other => {
                    return Err(SqlError::invalid(
                        format!("CRS of column `{column}`"),
                        format!("expected a code after `{}:`, found {other}", w.value),
                    ));
                }
            };
            format!("{}:{code}", w.value)
        }
        other => {
            return Err(front.error_here(format!(
                "expected a CRS (an SRID such as 4326, 'EPSG:3857' or OGC:CRS84), found {other}"
            )));
        }
    };
    text.parse::<Crs>()
        .map_err(|e| SqlError::invalid(format!("CRS of column `{column}`"), e.to_string()))
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

/// `('key' = 'value', ...)`: the TBLPROPERTIES list of CREATE TABLE and ALTER TABLE.
pub(crate) fn parse_properties(
    front: &mut Front<'_>,
) -> Result<BTreeMap<String, String>, SqlError> {
    front.expect(&Token::LParen)?;
    let mut properties = BTreeMap::new();
    loop {
        let key = front.string()?;
        front.expect(&Token::Eq)?;
        let value = match front.peek().token.clone() {
            Token::SingleQuotedString(v) | Token::DoubleQuotedString(v) => v,
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
