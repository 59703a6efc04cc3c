//! Column definitions of a new table and their mapping to Iceberg and Arrow types.

use std::fmt;
use std::sync::Arc;

use arrow_schema::DataType as ArrowType;
use iceberg::spec::{ListType, MapType, NestedField, PrimitiveType, StructType, Transform, Type};

use crate::error::{Error, Result};
use geoberg_crs::{ColumnType, Crs, EdgeAlgorithm};

use crate::typestring::crs_for_srid;

/// Names of the materialised bbox columns (seed 002 layout), placed before the geometry.
pub const BBOX_COLUMN_NAMES: [&str; 4] = ["bbox_min_x", "bbox_min_y", "bbox_max_x", "bbox_max_y"];

/// The type of a column, as a user declares it (`bigint`, `geometry(4326)` …): every Iceberg
/// type, with nested types holding their own fields (each gets its own field id when the table
/// is created), and geometry/geography with their CRS.
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
    /// `timestamp` (microseconds, no zone).
    Timestamp,
    /// `timestamptz` (microseconds, UTC).
    Timestamptz,
    /// `timestamp_ns` (nanoseconds, no zone; format-version 3).
    TimestampNs,
    /// `timestamptz_ns` (nanoseconds, UTC; format-version 3).
    TimestamptzNs,
    /// `struct<...>`: named fields, each nullable or required.
    Struct(Vec<Column>),
    /// `list<element>`.
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
    /// `geometry(C)` / `geography(C, A)`, or [`ColumnType::GeometryWithoutCrs`], WKB in a
    /// `binary` column of a format-version 2 table marked as geometry (each value keeps its own
    /// SRID, unchecked; creating it needs
    /// [`CreateTable::allow_undeclared_crs`](crate::CreateTable::allow_undeclared_crs)). Only
    /// top-level columns can be geo columns.
    Geo(ColumnType),
}

const TYPE_NAMES: &str = "boolean, int, bigint, float, double, decimal(p, s), string, uuid, \
binary, fixed(n), date, time, timestamp, timestamptz, timestamp_ns, timestamptz_ns, \
struct<name: type, ...>, list<type>, map<key, value>, geometry(<srid>) or geography(<srid>)";

impl DataType {
    /// `geometry(<srid>)`: 4326 is OGC:CRS84 (longitude, latitude), 3857 Web Mercator, 0 no CRS
    /// but planar.
    pub fn geometry(srid: i32) -> Self {
        DataType::Geo(ColumnType::geometry(crs_for_srid(srid)))
    }

    /// `geography(<srid>)` with spherical edges.
    pub fn geography(srid: i32) -> Self {
        DataType::Geo(ColumnType::Geography {
            crs: crs_for_srid(srid),
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
    pub const LEGACY_GEOMETRY: DataType = DataType::Geo(ColumnType::GeometryWithoutCrs);

    /// Parses a type name as in `CREATE TABLE`, with Iceberg's names: `bigint`, `string`,
    /// `decimal(10, 2)`, `fixed[16]`, `timestamp` (no zone), `timestamptz`,
    /// `struct<a: int not null, b: list<string>>`, `map<string, double>`,
    /// `geometry(4326)`, `geography(4326)`, `geography(4326, karney)`. Bare `geometry` gives
    /// [`DataType::LEGACY_GEOMETRY`], which `create` rejects unless asked for explicitly.
    pub fn parse(input: &str) -> Result<Self> {
        let head = input.trim_start().to_ascii_lowercase();
        if head.starts_with("geometry") || head.starts_with("geography") {
            return parse_geo(input);
        }
        let mut p = TypeParser::new(input)?;
        let t = p.data_type(1)?;
        match p.tokens.get(p.at) {
            None => Ok(t),
            Some(extra) => Err(p.error(format!("unexpected {extra:?} after the type"))),
        }
    }

    /// The type of a `CREATE TABLE` column as parsed by `geoberg-sql`; `column` names it in
    /// errors.
    pub fn from_sql(column: &str, ty: &geoberg_sql::ColumnType) -> Result<Self> {
        use geoberg_sql::ColumnType as Sql;
        let srid_of = |crs: &Crs| {
            crs.srid().ok_or_else(|| Error::WrongColumnType {
                column: column.to_string(),
                found: format!("a column declaring CRS {crs}"),
                expected: "a CRS declared by SRID, e.g. geometry(4326), geometry(3857) or \
                           geometry(0)"
                    .into(),
            })
        };
        Ok(match ty {
            Sql::Boolean => DataType::Boolean,
            Sql::Int => DataType::Int,
            Sql::Long => DataType::Long,
            Sql::Float => DataType::Float,
            Sql::Double => DataType::Double,
            Sql::Decimal { precision, scale } => {
                DataType::decimal(u32::from(*precision), u32::from(*scale))
            }
            Sql::Date => DataType::Date,
            Sql::Time => DataType::Time,
            // Spark's `timestamp` carries a zone; `timestamp_ntz` does not.
            Sql::Timestamp => DataType::Timestamptz,
            Sql::TimestampNtz => DataType::Timestamp,
            Sql::TimestampNs => DataType::TimestamptzNs,
            Sql::TimestampNtzNs => DataType::TimestampNs,
            Sql::String => DataType::String,
            Sql::Binary => DataType::Binary,
            Sql::Uuid => DataType::Uuid,
            Sql::Fixed(n) => DataType::Fixed(*n),
            Sql::Struct(fields) => {
                let mut columns = Vec::with_capacity(fields.len());
                for f in fields {
                    let path = format!("{column}.{}", f.name);
                    if f.comment.is_some() {
                        return Err(Error::Schema(format!(
                            "COMMENT on field {path}: field comments are not stored yet; \
                             remove the COMMENT clause"
                        )));
                    }
                    let c = Column::new(&f.name, DataType::from_sql(&path, &f.data_type)?);
                    columns.push(if f.required { c.required() } else { c });
                }
                DataType::Struct(columns)
            }
            Sql::Array {
                element,
                element_required,
            } => DataType::List {
                element: Box::new(DataType::from_sql(&format!("{column}.element"), element)?),
                element_required: *element_required,
            },
            Sql::Map {
                key,
                value,
                value_required,
            } => DataType::Map {
                key: Box::new(DataType::from_sql(&format!("{column}.key"), key)?),
                value: Box::new(DataType::from_sql(&format!("{column}.value"), value)?),
                value_required: *value_required,
            },
            Sql::Geo(ColumnType::GeometryWithoutCrs) => DataType::LEGACY_GEOMETRY,
            Sql::Geo(ColumnType::Geometry { crs }) => DataType::geometry(srid_of(crs)?),
            Sql::Geo(ColumnType::Geography { crs, edges }) => {
                DataType::Geo(ColumnType::Geography {
                    crs: crs_for_srid(srid_of(crs)?),
                    edges: *edges,
                })
            }
        })
    }

    /// The table type for an Arrow type of an imported file or batch (`None`: no table type
    /// holds it, e.g. unions, intervals, durations, `time` in nanoseconds). Narrower integers
    /// and floats widen, dictionaries and views become their value type, second and millisecond
    /// times and timestamps become microseconds; `append` casts the values, and refuses a
    /// value that does not fit.
    pub fn from_arrow(ty: &ArrowType) -> Option<DataType> {
        use arrow_schema::TimeUnit;
        let decimal = |p: u8, s: i8| {
            (s >= 0 && (s as u8) <= p && (1..=38).contains(&p))
                .then(|| DataType::decimal(u32::from(p), s as u32))
        };
        Some(match ty {
            ArrowType::Boolean => DataType::Boolean,
            ArrowType::Int8
            | ArrowType::Int16
            | ArrowType::Int32
            | ArrowType::UInt8
            | ArrowType::UInt16 => DataType::Int,
            ArrowType::Int64 | ArrowType::UInt32 => DataType::Long,
            ArrowType::Float16 | ArrowType::Float32 => DataType::Float,
            ArrowType::Float64 => DataType::Double,
            ArrowType::Decimal32(p, s)
            | ArrowType::Decimal64(p, s)
            | ArrowType::Decimal128(p, s)
            | ArrowType::Decimal256(p, s) => decimal(*p, *s)?,
            ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => DataType::String,
            ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView => DataType::Binary,
            ArrowType::FixedSizeBinary(n) if *n > 0 => DataType::Fixed(*n as u64),
            ArrowType::Date32 => DataType::Date,
            ArrowType::Time32(_) | ArrowType::Time64(TimeUnit::Microsecond) => DataType::Time,
            ArrowType::Timestamp(TimeUnit::Nanosecond, None) => DataType::TimestampNs,
            ArrowType::Timestamp(TimeUnit::Nanosecond, Some(_)) => DataType::TimestamptzNs,
            ArrowType::Timestamp(_, None) => DataType::Timestamp,
            ArrowType::Timestamp(_, Some(_)) => DataType::Timestamptz,
            ArrowType::Dictionary(_, value) => DataType::from_arrow(value)?,
            ArrowType::Struct(fields) if !fields.is_empty() => {
                let mut columns = Vec::with_capacity(fields.len());
                for f in fields {
                    let c = Column::new(f.name(), DataType::from_arrow(f.data_type())?);
                    columns.push(if f.is_nullable() { c } else { c.required() });
                }
                DataType::Struct(columns)
            }
            ArrowType::List(f)
            | ArrowType::LargeList(f)
            | ArrowType::ListView(f)
            | ArrowType::LargeListView(f)
            | ArrowType::FixedSizeList(f, _) => DataType::List {
                element: Box::new(DataType::from_arrow(f.data_type())?),
                element_required: !f.is_nullable(),
            },
            ArrowType::Map(entries, _) => {
                let ArrowType::Struct(kv) = entries.data_type() else {
                    return None;
                };
                let [k, v] = &kv.iter().collect::<Vec<_>>()[..] else {
                    return None;
                };
                DataType::Map {
                    key: Box::new(DataType::from_arrow(k.data_type())?),
                    value: Box::new(DataType::from_arrow(v.data_type())?),
                    value_required: !v.is_nullable(),
                }
            }
            _ => return None,
        })
    }

    /// The `crs` crate's view of a geo column type; `None` for ordinary columns.
    pub fn column_type(&self) -> Option<ColumnType> {
        match self {
            DataType::Geo(t) => Some(t.clone()),
            _ => None,
        }
    }

    /// Whether this is a geometry or geography column.
    pub fn is_geo(&self) -> bool {
        matches!(self, DataType::Geo(_))
    }

    /// Whether this type (or a field inside it) needs format-version 3: nanosecond timestamps.
    pub(crate) fn needs_v3(&self) -> bool {
        match self {
            DataType::TimestampNs | DataType::TimestamptzNs => true,
            DataType::Struct(fields) => fields.iter().any(|c| c.data_type.needs_v3()),
            DataType::List { element, .. } => element.needs_v3(),
            DataType::Map { key, value, .. } => key.needs_v3() || value.needs_v3(),
            _ => false,
        }
    }

    /// Whether this is a struct, list or map.
    pub fn is_nested(&self) -> bool {
        matches!(
            self,
            DataType::Struct(_) | DataType::List { .. } | DataType::Map { .. }
        )
    }

    /// The Iceberg type, nested fields numbered from `next_id` on as Iceberg Java's
    /// `AssignFreshIds` does (a struct's fields first, then their children). `path` names the
    /// column in errors.
    pub(crate) fn iceberg_type(&self, path: &str, next_id: &mut i32) -> Result<Type> {
        fn take(next_id: &mut i32) -> i32 {
            let i = *next_id;
            *next_id += 1;
            i
        }
        Ok(match self {
            DataType::Struct(fields) => {
                if fields.is_empty() {
                    return Err(Error::Schema(format!(
                        "struct column {path:?} has no fields; give it at least one"
                    )));
                }
                check_unique(path, fields.iter().map(|c| c.name.as_str()))?;
                let ids: Vec<i32> = fields.iter().map(|_| take(next_id)).collect();
                let mut nested = Vec::with_capacity(fields.len());
                for (c, fid) in fields.iter().zip(ids) {
                    let child = format!("{path}.{}", c.name);
                    let ty = c.data_type.nested_iceberg_type(&child, next_id)?;
                    nested.push(Arc::new(NestedField::new(fid, &c.name, ty, c.required)));
                }
                Type::Struct(StructType::new(nested))
            }
            DataType::List {
                element,
                element_required,
            } => {
                let eid = take(next_id);
                let ty = element.nested_iceberg_type(&format!("{path}.element"), next_id)?;
                Type::List(ListType::new(Arc::new(NestedField::list_element(
                    eid,
                    ty,
                    *element_required,
                ))))
            }
            DataType::Map {
                key,
                value,
                value_required,
            } => {
                let (kid, vid) = (take(next_id), take(next_id));
                let k = key.nested_iceberg_type(&format!("{path}.key"), next_id)?;
                let v = value.nested_iceberg_type(&format!("{path}.value"), next_id)?;
                Type::Map(MapType::new(
                    Arc::new(NestedField::map_key_element(kid, k)),
                    Arc::new(NestedField::map_value_element(vid, v, *value_required)),
                ))
            }
            other => Type::Primitive(other.primitive_type(path)?),
        })
    }

    /// [`DataType::iceberg_type`] of a nested field, where geo types are not allowed.
    fn nested_iceberg_type(&self, path: &str, next_id: &mut i32) -> Result<Type> {
        if self.is_geo() {
            return Err(Error::Schema(format!(
                "field {path:?} is {self}: geometry and geography must be top-level columns \
                 (their CRS, bounds and spatial index are per column); move it out of the \
                 struct, list or map"
            )));
        }
        self.iceberg_type(path, next_id)
    }

    fn primitive_type(&self, path: &str) -> Result<PrimitiveType> {
        Ok(match self {
            DataType::Boolean => PrimitiveType::Boolean,
            DataType::Int => PrimitiveType::Int,
            DataType::Long => PrimitiveType::Long,
            DataType::Float => PrimitiveType::Float,
            DataType::Double => PrimitiveType::Double,
            DataType::Decimal { precision, scale } => {
                if !(1..=38).contains(precision) || scale > precision {
                    return Err(Error::Schema(format!(
                        "column {path:?}: decimal({precision}, {scale}) needs 1 <= precision <= \
                         38 and scale <= precision"
                    )));
                }
                PrimitiveType::Decimal {
                    precision: *precision,
                    scale: *scale,
                }
            }
            DataType::String => PrimitiveType::String,
            DataType::Uuid => PrimitiveType::Uuid,
            DataType::Fixed(n) => {
                if *n == 0 || *n > i32::MAX as u64 {
                    return Err(Error::Schema(format!(
                        "column {path:?}: fixed[{n}] needs a length of 1 to {} bytes",
                        i32::MAX
                    )));
                }
                PrimitiveType::Fixed(*n)
            }
            DataType::Date => PrimitiveType::Date,
            DataType::Time => PrimitiveType::Time,
            DataType::Timestamp => PrimitiveType::Timestamp,
            DataType::Timestamptz => PrimitiveType::Timestamptz,
            DataType::TimestampNs => PrimitiveType::TimestampNs,
            DataType::TimestamptzNs => PrimitiveType::TimestamptzNs,
            DataType::Binary | DataType::Geo(_) => PrimitiveType::Binary,
            DataType::Struct(_) | DataType::List { .. } | DataType::Map { .. } => {
                return Err(Error::Schema(format!(
                    "column {path:?}: {self} is not a primitive type"
                )));
            }
        })
    }

    /// Inverse of [`DataType::iceberg_type`] for ordinary columns (geo columns read back as
    /// `binary`; their real type is in the table's geo fields).
    pub(crate) fn from_iceberg(ty: &Type) -> Self {
        match ty {
            Type::Primitive(p) => match p {
                PrimitiveType::Boolean => DataType::Boolean,
                PrimitiveType::Int => DataType::Int,
                PrimitiveType::Long => DataType::Long,
                PrimitiveType::Float => DataType::Float,
                PrimitiveType::Double => DataType::Double,
                PrimitiveType::Decimal { precision, scale } => {
                    DataType::decimal(*precision, *scale)
                }
                PrimitiveType::String => DataType::String,
                PrimitiveType::Uuid => DataType::Uuid,
                PrimitiveType::Binary => DataType::Binary,
                PrimitiveType::Fixed(n) => DataType::Fixed(*n),
                PrimitiveType::Date => DataType::Date,
                PrimitiveType::Time => DataType::Time,
                PrimitiveType::Timestamp => DataType::Timestamp,
                PrimitiveType::Timestamptz => DataType::Timestamptz,
                PrimitiveType::TimestampNs => DataType::TimestampNs,
                PrimitiveType::TimestamptzNs => DataType::TimestamptzNs,
            },
            Type::Struct(s) => DataType::Struct(
                s.fields()
                    .iter()
                    .map(|f| {
                        let c = Column::new(&f.name, DataType::from_iceberg(&f.field_type));
                        if f.required { c.required() } else { c }
                    })
                    .collect(),
            ),
            Type::List(l) => DataType::List {
                element: Box::new(DataType::from_iceberg(&l.element_field.field_type)),
                element_required: l.element_field.required,
            },
            Type::Map(m) => DataType::Map {
                key: Box::new(DataType::from_iceberg(&m.key_field.field_type)),
                value: Box::new(DataType::from_iceberg(&m.value_field.field_type)),
                value_required: m.value_field.required,
            },
        }
    }
}

/// The Arrow type data files are written with for an Iceberg type: nested fields carry their
/// Iceberg field ids as Parquet field ids (`PARQUET:field_id`), lists name their element
/// `element` and maps their entries `key_value` with `key` / `value`, as Iceberg Java and
/// pyiceberg write them.
pub(crate) fn file_arrow_type(ty: &Type) -> ArrowType {
    use arrow_schema::{Field, Fields, TimeUnit};
    fn field(f: &NestedField) -> Field {
        Field::new(&f.name, file_arrow_type(&f.field_type), !f.required).with_metadata(
            std::collections::HashMap::from([(
                parquet::arrow::PARQUET_FIELD_ID_META_KEY.to_string(),
                f.id.to_string(),
            )]),
        )
    }
    match ty {
        Type::Primitive(p) => match p {
            PrimitiveType::Boolean => ArrowType::Boolean,
            PrimitiveType::Int => ArrowType::Int32,
            PrimitiveType::Long => ArrowType::Int64,
            PrimitiveType::Float => ArrowType::Float32,
            PrimitiveType::Double => ArrowType::Float64,
            PrimitiveType::Decimal { precision, scale } => {
                ArrowType::Decimal128(*precision as u8, *scale as i8)
            }
            PrimitiveType::String => ArrowType::Utf8,
            PrimitiveType::Uuid => ArrowType::FixedSizeBinary(16),
            PrimitiveType::Fixed(n) => ArrowType::FixedSizeBinary(*n as i32),
            PrimitiveType::Binary => ArrowType::Binary,
            PrimitiveType::Date => ArrowType::Date32,
            PrimitiveType::Time => ArrowType::Time64(TimeUnit::Microsecond),
            PrimitiveType::Timestamp => ArrowType::Timestamp(TimeUnit::Microsecond, None),
            PrimitiveType::Timestamptz => {
                ArrowType::Timestamp(TimeUnit::Microsecond, Some(UTC.into()))
            }
            PrimitiveType::TimestampNs => ArrowType::Timestamp(TimeUnit::Nanosecond, None),
            PrimitiveType::TimestamptzNs => {
                ArrowType::Timestamp(TimeUnit::Nanosecond, Some(UTC.into()))
            }
        },
        Type::Struct(s) => {
            ArrowType::Struct(s.fields().iter().map(|f| field(f)).collect::<Fields>())
        }
        Type::List(l) => ArrowType::List(Arc::new(field(&l.element_field))),
        Type::Map(m) => ArrowType::Map(
            Arc::new(Field::new(
                "key_value",
                ArrowType::Struct(Fields::from(vec![
                    field(&m.key_field),
                    field(&m.value_field),
                ])),
                false,
            )),
            false,
        ),
    }
}

/// The zone of `timestamptz` columns in data files.
const UTC: &str = "+00:00";

fn check_unique<'a>(path: &str, names: impl Iterator<Item = &'a str>) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for n in names {
        if !seen.insert(n.to_ascii_lowercase()) {
            return Err(Error::Schema(format!(
                "struct {path:?} defines field {n:?} twice; field names must be unique"
            )));
        }
    }
    Ok(())
}

/// `geometry(4326)`, `geography(4326, karney)`, bare `geometry` / `geography`.
fn parse_geo(input: &str) -> Result<DataType> {
    let s = input.trim().to_ascii_lowercase();
    match s.as_str() {
        "geometry" => return Ok(DataType::LEGACY_GEOMETRY),
        "geography" => return Ok(DataType::geography(4326)),
        _ => {}
    }
    let unknown = || {
        Error::Schema(format!(
            "unknown column type {input:?}; use geometry(<srid>), geography(<srid>) or \
             geography(<srid>, <algorithm>)"
        ))
    };
    let (name, params) = s
        .split_once('(')
        .and_then(|(n, rest)| Some((n.trim(), rest.strip_suffix(')')?)))
        .ok_or_else(unknown)?;
    let mut params = params.split(',').map(str::trim);
    let crs: Crs = params.next().unwrap_or_default().parse()?;
    let srid = crs.srid().ok_or_else(|| {
        Error::Schema(format!(
            "column type {input:?}: declare the CRS as an SRID, e.g. geometry(4326)"
        ))
    })?;
    let algorithm = params.next().map(str::parse).transpose()?;
    match (name, algorithm, params.next()) {
        ("geometry", None, None) => Ok(DataType::geometry(srid)),
        ("geography", algorithm, None) => Ok(DataType::Geo(ColumnType::Geography {
            crs: crs_for_srid(srid),
            edges: algorithm.unwrap_or_default(),
        })),
        _ => Err(unknown()),
    }
}

/// Deepest nesting of struct/list/map types [`DataType::parse`] accepts.
const MAX_TYPE_DEPTH: usize = 32;

/// A recursive-descent parser of [`DataType::parse`]'s type names. Written by hand: the grammar
/// is a dozen tokens, and the SQL parser's types follow Spark's names (`timestamp` with a
/// zone), not Iceberg's.
struct TypeParser<'a> {
    input: &'a str,
    tokens: Vec<String>,
    at: usize,
}

impl<'a> TypeParser<'a> {
    fn new(input: &'a str) -> Result<Self> {
        let mut tokens = Vec::new();
        let mut chars = input.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                c if c.is_whitespace() => {}
                '<' | '>' | '(' | ')' | '[' | ']' | ',' | ':' => tokens.push(c.to_string()),
                '`' => {
                    let mut name = String::from("`");
                    loop {
                        match chars.next() {
                            Some((_, '`')) if chars.peek().map(|p| p.1) == Some('`') => {
                                chars.next();
                                name.push('`');
                            }
                            Some((_, '`')) => break,
                            Some((_, ch)) => name.push(ch),
                            None => {
                                return Err(Error::Schema(format!(
                                    "column type {input:?}: the quoted name starting at byte \
                                     {i} is not closed with `"
                                )));
                            }
                        }
                    }
                    tokens.push(name);
                }
                c if c.is_alphanumeric() || c == '_' => {
                    let mut word = c.to_string();
                    while let Some(&(_, n)) = chars.peek() {
                        if n.is_alphanumeric() || n == '_' {
                            word.push(n);
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    tokens.push(word);
                }
                other => {
                    return Err(Error::Schema(format!(
                        "column type {input:?}: unexpected character {other:?} at byte {i}; use \
                         one of {TYPE_NAMES}"
                    )));
                }
            }
        }
        Ok(TypeParser {
            input,
            tokens,
            at: 0,
        })
    }

    fn error(&self, what: String) -> Error {
        Error::Schema(format!(
            "column type {:?}: {what}; use one of {TYPE_NAMES}",
            self.input
        ))
    }

    fn next(&mut self) -> Option<String> {
        let t = self.tokens.get(self.at).cloned();
        self.at += usize::from(t.is_some());
        t
    }

    fn peek_is(&self, token: &str) -> bool {
        self.tokens
            .get(self.at)
            .is_some_and(|t| t.eq_ignore_ascii_case(token))
    }

    fn expect(&mut self, token: &str) -> Result<()> {
        match self.next() {
            Some(t) if t.eq_ignore_ascii_case(token) => Ok(()),
            Some(t) => Err(self.error(format!("expected {token:?}, found {t:?}"))),
            None => Err(self.error(format!("expected {token:?} at the end"))),
        }
    }

    fn number(&mut self, what: &str) -> Result<u64> {
        match self.next() {
            Some(t) => t
                .parse()
                .map_err(|_| self.error(format!("{what} must be a whole number, found {t:?}"))),
            None => Err(self.error(format!("expected {what} at the end"))),
        }
    }

    /// `NOT NULL` after a nested type.
    fn not_null(&mut self) -> Result<bool> {
        if self.peek_is("not") {
            self.next();
            self.expect("null")?;
            return Ok(true);
        }
        Ok(false)
    }

    fn name(&mut self) -> Result<String> {
        match self.next() {
            Some(t) if t.starts_with('`') => Ok(t[1..].to_string()),
            Some(t) if t.chars().all(|c| c.is_alphanumeric() || c == '_') => Ok(t),
            Some(t) => Err(self.error(format!("expected a field name, found {t:?}"))),
            None => Err(self.error("expected a field name at the end".into())),
        }
    }

    fn data_type(&mut self, depth: usize) -> Result<DataType> {
        if depth > MAX_TYPE_DEPTH {
            return Err(self.error(format!("types nest more than {MAX_TYPE_DEPTH} levels deep")));
        }
        let Some(word) = self.next() else {
            return Err(self.error("expected a type".into()));
        };
        Ok(match word.to_ascii_lowercase().as_str() {
            "boolean" | "bool" => DataType::Boolean,
            "int" | "integer" => DataType::Int,
            "bigint" | "long" => DataType::Long,
            "float" | "real" => DataType::Float,
            "double" => DataType::Double,
            "string" | "varchar" | "text" => DataType::String,
            "uuid" => DataType::Uuid,
            "binary" => DataType::Binary,
            "date" => DataType::Date,
            "time" => DataType::Time,
            "timestamp" | "timestamp_ntz" => DataType::Timestamp,
            "timestamptz" | "timestamp_ltz" => DataType::Timestamptz,
            "timestamp_ns" | "timestamp_ntz_ns" => DataType::TimestampNs,
            "timestamptz_ns" | "timestamp_ltz_ns" => DataType::TimestamptzNs,
            "decimal" | "numeric" => {
                self.expect("(")?;
                let precision = self.number("the decimal precision")?;
                self.expect(",")?;
                let scale = self.number("the decimal scale")?;
                self.expect(")")?;
                let t = DataType::decimal(
                    u32::try_from(precision).unwrap_or(u32::MAX),
                    u32::try_from(scale).unwrap_or(u32::MAX),
                );
                t.primitive_type("decimal")?;
                t
            }
            "fixed" => {
                let bracket = self.peek_is("[");
                self.expect(if bracket { "[" } else { "(" })?;
                let n = self.number("the fixed length")?;
                self.expect(if bracket { "]" } else { ")" })?;
                let t = DataType::Fixed(n);
                t.primitive_type("fixed")?;
                t
            }
            "struct" => {
                self.expect("<")?;
                let mut fields = Vec::new();
                loop {
                    let name = self.name()?;
                    self.expect(":")?;
                    let ty = self.data_type(depth + 1)?;
                    let c = Column::new(name, ty);
                    fields.push(if self.not_null()? { c.required() } else { c });
                    if !self.peek_is(",") {
                        break;
                    }
                    self.next();
                }
                self.expect(">")?;
                DataType::Struct(fields)
            }
            "list" | "array" => {
                self.expect("<")?;
                let element = self.data_type(depth + 1)?;
                let element_required = self.not_null()?;
                self.expect(">")?;
                DataType::List {
                    element: Box::new(element),
                    element_required,
                }
            }
            "map" => {
                self.expect("<")?;
                let key = self.data_type(depth + 1)?;
                self.not_null()?;
                self.expect(",")?;
                let value = self.data_type(depth + 1)?;
                let value_required = self.not_null()?;
                self.expect(">")?;
                DataType::Map {
                    key: Box::new(key),
                    value: Box::new(value),
                    value_required,
                }
            }
            "geometry" | "geography" => {
                return Err(self.error(format!(
                    "{word} must be a top-level column, not a nested field"
                )));
            }
            _ => return Err(self.error(format!("unknown type {word:?}"))),
        })
    }
}

/// `SHOW CREATE TABLE` spelling: `BIGINT`, `DECIMAL(10, 2)`, `STRUCT<a: INT NOT NULL>`,
/// `ARRAY<STRING>`, `MAP<STRING, DOUBLE>`, `GEOMETRY(4326)`, `GEOMETRY` for the legacy kind:
/// what `geoberg-sql` parses back to the same type.
impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let not_null = |r: bool| if r { " NOT NULL" } else { "" };
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
                    write!(
                        f,
                        "{}: {}{}",
                        quote_name(&c.name),
                        c.data_type,
                        not_null(c.required)
                    )?;
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
            DataType::Geo(t) => f.write_str(&render_geo_sql(t)),
        }
    }
}

/// A name as SQL reads it back: bare when it is a plain identifier, else in backticks.
pub(crate) fn quote_name(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("`{}`", name.replace('`', "``"))
    }
}

/// `GEOMETRY(4326)`, `GEOGRAPHY(4326)`, `GEOGRAPHY(4326, KARNEY)`, bare `GEOMETRY` for no CRS,
/// or the quoted CRS where it is no SRID.
pub(crate) fn render_geo_sql(t: &ColumnType) -> String {
    let srid_or_crs = |crs: &Crs| match crs.srid() {
        Some(s) => s.to_string(),
        None => format!("'{crs}'"),
    };
    match t {
        ColumnType::GeometryWithoutCrs => "GEOMETRY".into(),
        ColumnType::Geometry { crs } => format!("GEOMETRY({})", srid_or_crs(crs)),
        ColumnType::Geography { crs, edges } if *edges != EdgeAlgorithm::Spherical => format!(
            "GEOGRAPHY({}, {})",
            srid_or_crs(crs),
            edges.name().to_uppercase()
        ),
        ColumnType::Geography { crs, .. } => format!("GEOGRAPHY({})", srid_or_crs(crs)),
    }
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Column name.
    pub name: String,
    /// Declared type.
    pub data_type: DataType,
    /// `NOT NULL`.
    pub required: bool,
}

impl Column {
    /// A nullable column.
    pub fn new(name: impl Into<String>, data_type: DataType) -> Self {
        Self {
            name: name.into(),
            data_type,
            required: false,
        }
    }

    /// Marks the column `NOT NULL`.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }
}

/// A partition field over an ordinary column (geo columns cannot be partition sources).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionField {
    /// Source column name.
    pub column: String,
    /// Transform: identity, bucket\[N\] or truncate\[W\].
    pub transform: Transform,
}

impl PartitionField {
    /// `identity(column)`.
    pub fn identity(column: impl Into<String>) -> Self {
        Self {
            column: column.into(),
            transform: Transform::Identity,
        }
    }

    /// `bucket(n, column)`.
    pub fn bucket(column: impl Into<String>, n: u32) -> Self {
        Self {
            column: column.into(),
            transform: Transform::Bucket(n),
        }
    }

    /// `truncate(width, column)`.
    pub fn truncate(column: impl Into<String>, width: u32) -> Self {
        Self {
            column: column.into(),
            transform: Transform::Truncate(width),
        }
    }

    /// Iceberg's partition field name for this transform (`id_bucket`, `name_trunc`, `cell`).
    pub(crate) fn field_name(&self) -> String {
        match self.transform {
            Transform::Identity => self.column.clone(),
            Transform::Bucket(_) => format!("{}_bucket", self.column),
            Transform::Truncate(_) => format!("{}_trunc", self.column),
            _ => format!("{}_{}", self.column, self.transform),
        }
    }

    /// `bucket(4, id)` as `SHOW CREATE TABLE` prints it.
    pub(crate) fn render(&self) -> String {
        match self.transform {
            Transform::Identity => self.column.clone(),
            Transform::Bucket(n) => format!("bucket({n}, {})", self.column),
            Transform::Truncate(w) => format!("truncate({w}, {})", self.column),
            ref t => format!("{t}({})", self.column),
        }
    }
}
