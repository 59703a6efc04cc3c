//! The one column-type model of geoberg: every Iceberg type, nested types holding their own
//! fields, geometry and geography with their CRS. `CREATE TABLE`, `ALTER TABLE ... ADD COLUMN`
//! and the `table` crate's API all use it, and one parser reads both of its text forms: SQL's
//! (Spark's names, where `timestamp` has a zone) and Iceberg's (`DataType::parse`, where it
//! does not).

use std::fmt;

use geoberg_crs::{ColumnType as GeoType, Crs, EdgeAlgorithm};
use sqlparser::tokenizer::Token;

use crate::error::SqlError;
use crate::front::{Front, MAX_NESTING_DEPTH, position};
use crate::name::{quote_ident, quote_string};

/// The type of a column, as a user declares it (`bigint`, `geometry(4326)` …): every Iceberg
/// type, with nested types holding their own fields (each gets its own field id when the table
/// is created), and geometry/geography with their CRS.
///
/// ```
/// use geoberg_sql::DataType;
///
/// assert_eq!(DataType::parse("geometry(4326)")?, DataType::geometry(4326));
/// assert_eq!(DataType::parse("timestamp")?, DataType::Timestamp); // Iceberg's: no zone
/// assert_eq!(DataType::parse("list<bigint>")?.to_string(), "ARRAY<BIGINT>");
/// # Ok::<(), geoberg_sql::SqlError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataType {
    /// `boolean`.
    Boolean,
    /// `int` (32 bit).
    Int,
    /// `bigint` / `long` (64 bit).
    Long,
    /// `float` (32 bit).
    Float,
    /// `double` (64 bit).
    Double,
    /// `decimal(precision, scale)`: precision 1..=38, scale 0..=precision.
    Decimal {
        /// Total digits.
        precision: u32,
        /// Digits after the point.
        scale: u32,
    },
    /// `string`.
    String,
    /// `uuid` (16 bytes; Parquet's UUID logical type).
    Uuid,
    /// `binary`.
    Binary,
    /// `fixed[n]`: exactly `n` bytes.
    Fixed(u64),
    /// `date` (days since the epoch).
    Date,
    /// `time` (microseconds since midnight, no zone).
    Time,
    /// Iceberg's `timestamp` (microseconds, no zone; SQL's `timestamp_ntz`).
    Timestamp,
    /// Iceberg's `timestamptz` (microseconds, UTC; SQL's `timestamp`).
    Timestamptz,
    /// `timestamp_ns` (nanoseconds, no zone; SQL's `timestamp_ntz_ns`; format-version 3).
    TimestampNs,
    /// `timestamptz_ns` (nanoseconds, UTC; format-version 3).
    TimestamptzNs,
    /// `struct<...>`: named fields, each nullable or required.
    Struct(Vec<Column>),
    /// `list<element>` (SQL's `array<element>`).
    List {
        /// The element type.
        element: Box<DataType>,
        /// Elements are never null.
        element_required: bool,
    },
    /// `map<key, value>`; keys are never null.
    Map {
        /// The key type.
        key: Box<DataType>,
        /// The value type.
        value: Box<DataType>,
        /// Values are never null.
        value_required: bool,
    },
    /// A geometry or geography column, with its CRS as the `crs` rules see it: an Iceberg v3
    /// `geometry(C)` / `geography(C, A)`, or [`GeoType::GeometryWithoutCrs`] (bare `geometry`:
    /// WKB in a `binary` column of a format-version 2 table, each value with its own SRID).
    /// Only top-level columns can be geo columns; which CRSs a column may declare is checked
    /// when the table is created (`geoberg_crs::validate_declaration`).
    Geo(GeoType),
}

/// Which names a type text uses: they differ only in `timestamp` and `timestamp_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TypeNames {
    /// SQL statements, with Spark's names: `timestamp` has a zone, `timestamp_ns` is refused
    /// as ambiguous.
    Spark,
    /// Iceberg's names: `timestamp` and `timestamp_ns` have no zone.
    Iceberg,
}

impl DataType {
    /// `geometry(<srid>)`: 4326 is OGC:CRS84 (longitude, latitude), 3857 Web Mercator, 0 no CRS
    /// but planar.
    pub fn geometry(srid: i32) -> Self {
        DataType::Geo(GeoType::geometry(Crs::for_srid(srid)))
    }

    /// `geography(<srid>)` with spherical edges.
    pub fn geography(srid: i32) -> Self {
        DataType::Geo(GeoType::Geography {
            crs: Crs::for_srid(srid),
            edges: EdgeAlgorithm::Spherical,
        })
    }

    /// `decimal(precision, scale)`.
    pub fn decimal(precision: u32, scale: u32) -> Self {
        DataType::Decimal { precision, scale }
    }

    /// `list<element>` with nullable elements.
    pub fn list(element: DataType) -> Self {
        DataType::List {
            element: Box::new(element),
            element_required: false,
        }
    }

    /// `map<key, value>` with nullable values.
    pub fn map(key: DataType, value: DataType) -> Self {
        DataType::Map {
            key: Box::new(key),
            value: Box::new(value),
            value_required: false,
        }
    }

    /// `struct<...>` of these fields.
    pub fn struct_of(fields: impl IntoIterator<Item = Column>) -> Self {
        DataType::Struct(fields.into_iter().collect())
    }

    /// Bare `geometry`: no declared CRS.
    pub const LEGACY_GEOMETRY: DataType = DataType::Geo(GeoType::GeometryWithoutCrs);

    /// Parses a type name with Iceberg's names: `bigint`, `string`, `decimal(10, 2)`,
    /// `fixed[16]`, `timestamp` (no zone), `timestamptz`, `struct<a: int not null, b:
    /// list<string>>`, `map<string, double>`, `geometry(4326)`, `geography(4326)`,
    /// `geography(4326, karney)`. Bare `geometry` gives [`DataType::LEGACY_GEOMETRY`]. Geometry
    /// and geography are top-level types only.
    pub fn parse(input: &str) -> Result<Self, SqlError> {
        let mut front = Front::new(input)?;
        let t = parse_type(
            &mut front,
            &format!("`{}`", input.trim()),
            TypeNames::Iceberg,
        )?;
        front.finish()?;
        if let Some(path) = t.nested_geo() {
            return Err(SqlError::invalid(
                format!("type `{input}`"),
                format!(
                    "{path} is a geometry or geography, which must be a top-level column, not a \
                     nested field"
                ),
            ));
        }
        Ok(t)
    }

    /// The path of a geometry or geography nested in this type, if any.
    fn nested_geo(&self) -> Option<String> {
        let inner = |t: &DataType, name: &str| {
            if t.is_geo() {
                Some(name.to_string())
            } else {
                t.nested_geo().map(|p| format!("{name}.{p}"))
            }
        };
        match self {
            DataType::Struct(fields) => fields.iter().find_map(|c| inner(&c.data_type, &c.name)),
            DataType::List { element, .. } => inner(element, "element"),
            DataType::Map { key, value, .. } => inner(key, "key").or_else(|| inner(value, "value")),
            _ => None,
        }
    }

    /// The `crs` crate's view of a geo column type; `None` for ordinary columns.
    pub fn column_type(&self) -> Option<GeoType> {
        match self {
            DataType::Geo(t) => Some(t.clone()),
            _ => None,
        }
    }

    /// Whether this is a geometry or geography column.
    pub fn is_geo(&self) -> bool {
        matches!(self, DataType::Geo(_))
    }

    /// Whether this is a struct, list or map.
    pub fn is_nested(&self) -> bool {
        matches!(
            self,
            DataType::Struct(_) | DataType::List { .. } | DataType::Map { .. }
        )
    }
}

/// The CRS as SQL writes it back: the bare SRID for the CRS geoberg declares for that SRID
/// (`4326` for OGC:CRS84, `3857` for EPSG:3857, `0`), else the quoted CRS string, so that the
/// text parses back to the same CRS.
fn render_crs(crs: &Crs) -> String {
    match crs.srid() {
        Some(srid) if srid >= 0 && Crs::for_srid(srid) == *crs => srid.to_string(),
        _ => quote_string(&crs.to_string()),
    }
}

fn not_null(required: bool) -> &'static str {
    if required { " NOT NULL" } else { "" }
}

/// The SQL spelling `SHOW CREATE TABLE` prints and `CREATE TABLE` parses back to the same type:
/// `BIGINT`, `DECIMAL(10, 2)`, `TIMESTAMP` (with zone), `TIMESTAMP_NTZ`, `STRUCT<a: INT NOT
/// NULL>`, `ARRAY<STRING>`, `MAP<STRING, DOUBLE>`, `GEOMETRY(4326)`, `GEOGRAPHY(4326, KARNEY)`,
/// bare `GEOMETRY` for no CRS.
impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Boolean => f.write_str("BOOLEAN"),
            DataType::Int => f.write_str("INT"),
            DataType::Long => f.write_str("BIGINT"),
            DataType::Float => f.write_str("FLOAT"),
            DataType::Double => f.write_str("DOUBLE"),
            DataType::Decimal { precision, scale } => write!(f, "DECIMAL({precision}, {scale})"),
            DataType::String => f.write_str("STRING"),
            DataType::Uuid => f.write_str("UUID"),
            DataType::Binary => f.write_str("BINARY"),
            DataType::Fixed(n) => write!(f, "FIXED({n})"),
            DataType::Date => f.write_str("DATE"),
            DataType::Time => f.write_str("TIME"),
            DataType::Timestamp => f.write_str("TIMESTAMP_NTZ"),
            DataType::Timestamptz => f.write_str("TIMESTAMP"),
            DataType::TimestampNs => f.write_str("TIMESTAMP_NTZ_NS"),
            DataType::TimestamptzNs => f.write_str("TIMESTAMPTZ_NS"),
            DataType::Struct(fields) => {
                f.write_str("STRUCT<")?;
                for (i, c) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    c.write(f, ": ")?;
                }
                f.write_str(">")
            }
            DataType::List {
                element,
                element_required,
            } => write!(f, "ARRAY<{element}{}>", not_null(*element_required)),
            DataType::Map {
                key,
                value,
                value_required,
            } => write!(f, "MAP<{key}, {value}{}>", not_null(*value_required)),
            DataType::Geo(GeoType::GeometryWithoutCrs) => f.write_str("GEOMETRY"),
            DataType::Geo(GeoType::Geometry { crs }) => write!(f, "GEOMETRY({})", render_crs(crs)),
            DataType::Geo(GeoType::Geography { crs, edges }) => {
                write!(f, "GEOGRAPHY({}", render_crs(crs))?;
                if *edges != EdgeAlgorithm::Spherical {
                    write!(f, ", {}", edges.name().to_uppercase())?;
                }
                f.write_str(")")
            }
        }
    }
}

/// One column: a table's, a struct's field, or one `CREATE TABLE` / `ADD COLUMN` declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Column name.
    pub name: String,
    /// Declared type.
    pub data_type: DataType,
    /// `NOT NULL` (an Iceberg required field).
    pub required: bool,
    /// `COMMENT '...'` (the Iceberg field doc).
    pub comment: Option<String>,
}

impl Column {
    /// A nullable column without a comment.
    pub fn new(name: impl Into<String>, data_type: DataType) -> Self {
        Self {
            name: name.into(),
            data_type,
            required: false,
            comment: None,
        }
    }

    /// Marks the column `NOT NULL`.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }
}

impl Column {
    /// `name<separator>TYPE [NOT NULL] [COMMENT '...']`.
    fn write(&self, f: &mut fmt::Formatter<'_>, separator: &str) -> fmt::Result {
        write!(
            f,
            "{}{separator}{}{}",
            quote_ident(&self.name),
            self.data_type,
            not_null(self.required)
        )?;
        if let Some(comment) = &self.comment {
            write!(f, " COMMENT {}", quote_string(comment))?;
        }
        Ok(())
    }
}

/// `name TYPE [NOT NULL] [COMMENT '...']`, as `CREATE TABLE` and `ADD COLUMN` write it; a
/// struct's fields are written `name: TYPE ...`.
impl fmt::Display for Column {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, " ")
    }
}

const TYPES: &str = "boolean, int, bigint/long, float, double, decimal(p, s), date, time, \
timestamp, timestamp_ntz, timestamptz, timestamptz_ns, timestamp_ntz_ns, string, binary, fixed(n), uuid, \
struct<name: type, ...>, array<type>, map<key type, value type>, geometry(<srid or crs>), \
geography(<crs>[, <algorithm>])";

/// A column type at the front of `front`; errors name it as the type of `of` (``column `c` ``).
pub(crate) fn parse_type(
    front: &mut Front<'_>,
    of: &str,
    names: TypeNames,
) -> Result<DataType, SqlError> {
    let mut pending_gt = false;
    parse_type_at(front, of, names, 1, &mut pending_gt)
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
    of: &str,
    names: TypeNames,
    depth: usize,
    pending_gt: &mut bool,
) -> Result<DataType, SqlError> {
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
        "boolean" | "bool" => Some(DataType::Boolean),
        "int" | "integer" => Some(DataType::Int),
        "bigint" | "long" => Some(DataType::Long),
        "float" | "real" => Some(DataType::Float),
        "double" => Some(DataType::Double),
        "date" => Some(DataType::Date),
        "time" => Some(DataType::Time),
        // Spark's `timestamp` carries a zone; Iceberg's does not.
        "timestamp" if names == TypeNames::Spark => Some(DataType::Timestamptz),
        "timestamp" | "timestamp_ntz" => Some(DataType::Timestamp),
        "timestamptz" | "timestamp_ltz" => Some(DataType::Timestamptz),
        "timestamp_ns" if names == TypeNames::Iceberg => Some(DataType::TimestampNs),
        "timestamp_ntz_ns" => Some(DataType::TimestampNs),
        "timestamptz_ns" | "timestamp_ltz_ns" => Some(DataType::TimestamptzNs),
        "string" | "varchar" | "text" => Some(DataType::String),
        "binary" => Some(DataType::Binary),
        "uuid" => Some(DataType::Uuid),
        _ => None,
    };
    if let Some(t) = simple {
        return Ok(t);
    }
    let invalid = |reason: String| SqlError::invalid(format!("type of {of}"), reason);
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
            Ok(DataType::Fixed(n))
        }
        "struct" => {
            front.expect(&Token::Lt)?;
            let mut fields: Vec<Column> = Vec::new();
            loop {
                let field = front.identifier("a struct field name")?;
                front.consume(&Token::Colon);
                let data_type = parse_type_at(front, of, names, depth + 1, pending_gt)?;
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
            Ok(DataType::Struct(fields))
        }
        "array" | "list" => {
            front.expect(&Token::Lt)?;
            let element = parse_type_at(front, of, names, depth + 1, pending_gt)?;
            let element_required = nested_not_null(front, *pending_gt);
            close_angle(front, pending_gt)?;
            Ok(DataType::List {
                element: Box::new(element),
                element_required,
            })
        }
        "map" => {
            front.expect(&Token::Lt)?;
            let key = parse_type_at(front, of, names, depth + 1, pending_gt)?;
            if *pending_gt {
                return Err(invalid("map<...> needs a key and a value type".into()));
            }
            // Keys are always required; `NOT NULL` on them is allowed and changes nothing.
            front.words(&["NOT", "NULL"]);
            front.expect(&Token::Comma)?;
            let value = parse_type_at(front, of, names, depth + 1, pending_gt)?;
            let value_required = nested_not_null(front, *pending_gt);
            close_angle(front, pending_gt)?;
            Ok(DataType::Map {
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
                    format!("type of {of}"),
                    format!(
                        "decimal({precision}, {scale}) needs 1 <= precision <= 38 and scale <= precision"
                    ),
                ));
            }
            Ok(DataType::Decimal {
                precision: precision as u32,
                scale: scale as u32,
            })
        }
        "geometry" => {
            let crs = if front.consume(&Token::LParen) {
                let crs = parse_crs(front, of)?;
                front.expect(&Token::RParen)?;
                Some(crs)
            } else {
                None
            };
            Ok(DataType::Geo(match crs {
                None => GeoType::GeometryWithoutCrs,
                Some(crs) => GeoType::Geometry { crs },
            }))
        }
        "geography" => {
            let (crs, algorithm) = if front.consume(&Token::LParen) {
                let crs = parse_crs(front, of)?;
                let algorithm = if front.consume(&Token::Comma) {
                    let a = front.identifier("an edge algorithm")?;
                    Some(a.parse::<EdgeAlgorithm>().map_err(|_| {
                        let names: Vec<&str> =
                            EdgeAlgorithm::ALL.iter().map(|a| a.name()).collect();
                        SqlError::invalid(
                            format!("type of {of}"),
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
            Ok(DataType::Geo(GeoType::Geography {
                crs: crs.unwrap_or(Crs::OgcCrs84),
                edges: algorithm.unwrap_or_default(),
            }))
        }
        "variant" => Err(invalid(VARIANT_REFUSED.into())),
        _ => Err(SqlError::invalid(
            format!("type `{}` of {of}", start.token),
            format!("it is not a supported type; use one of {TYPES}"),
        )),
    }
}

/// Why a `variant` column is refused, and what to do instead. Seed 004 says format-version 3
/// tables take variant columns; geoberg's table format library cannot represent one yet.
pub const VARIANT_REFUSED: &str = "variant columns are not supported yet: the `iceberg` crate \
    0.10.1 that geoberg's tables are built on has no variant type in its schema model, so a \
    table with one could be neither written nor loaded again (by geoberg or any reader on that \
    crate). Store the value as JSON text in a string column (and read it with DataFusion's JSON \
    functions) until the crate supports Iceberg's v3 variant type";

/// A CRS argument: an SRID number, a quoted string, or bare `AUTHORITY:CODE`, parsed by
/// `geoberg-crs`.
fn parse_crs(front: &mut Front<'_>, of: &str) -> Result<Crs, SqlError> {
    let bare_number = matches!(front.peek().token, Token::Number(..));
    if let Some(s) = front.maybe_string() {
        return s
            .parse::<Crs>()
            .map_err(|e| SqlError::invalid(format!("CRS of {of}"), e.to_string()));
    }
    let text = match front.peek().token.clone() {
        Token::Number(n, _) => {
            front.next();
            n
        }
        Token::Word(w) if w.quote_style.is_none() => {
            front.next();
            front.expect(&Token::Colon)?;
            let code = match front.next().token {
                Token::Word(c) => c.value,
                Token::Number(c, _) => c,
                other => {
                    return Err(SqlError::invalid(
                        format!("CRS of {of}"),
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
    let crs = text
        .parse::<Crs>()
        .map_err(|e| SqlError::invalid(format!("CRS of {of}"), e.to_string()))?;
    // A bare number is SQL's SRID shorthand: the CRS geoberg declares for that SRID.
    Ok(match crs {
        Crs::Srid(srid) if bare_number => Crs::for_srid(srid),
        crs => crs,
    })
}
