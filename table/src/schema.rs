//! How a table maps the column-type model ([`DataType`], from `geoberg-sql`) to Iceberg and
//! Arrow types.

use std::sync::Arc;

use arrow_schema::DataType as ArrowType;
use iceberg::spec::{ListType, MapType, NestedField, PrimitiveType, StructType, Transform, Type};

use crate::error::{Error, Result};
use geoberg_crs::{ColumnType, Crs};
pub use geoberg_sql::{Column, DataType};

/// Names of the materialised bbox columns (seed 002 layout), placed before the geometry.
pub const BBOX_COLUMN_NAMES: [&str; 4] = ["bbox_min_x", "bbox_min_y", "bbox_max_x", "bbox_max_y"];

/// The type a `CREATE TABLE` / `ADD COLUMN` column declares, as the table stores it: its CRS
/// declared by SRID (`geometry('EPSG:4326')` is `geometry(4326)`) and no field comments (they
/// are not stored yet); `column` names it in errors.
pub fn declared_type(column: &str, ty: &DataType) -> Result<DataType> {
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
        DataType::Struct(fields) => {
            let mut columns = Vec::with_capacity(fields.len());
            for f in fields {
                let path = format!("{column}.{}", f.name);
                if f.comment.is_some() {
                    return Err(Error::Schema(format!(
                        "COMMENT on field {path}: field comments are not stored yet; \
                         remove the COMMENT clause"
                    )));
                }
                let c = Column::new(&f.name, declared_type(&path, &f.data_type)?);
                columns.push(if f.required { c.required() } else { c });
            }
            DataType::Struct(columns)
        }
        DataType::List {
            element,
            element_required,
        } => DataType::List {
            element: Box::new(declared_type(&format!("{column}.element"), element)?),
            element_required: *element_required,
        },
        DataType::Map {
            key,
            value,
            value_required,
        } => DataType::Map {
            key: Box::new(declared_type(&format!("{column}.key"), key)?),
            value: Box::new(declared_type(&format!("{column}.value"), value)?),
            value_required: *value_required,
        },
        DataType::Geo(ColumnType::GeometryWithoutCrs) => DataType::LEGACY_GEOMETRY,
        DataType::Geo(ColumnType::Geometry { crs }) => DataType::geometry(srid_of(crs)?),
        DataType::Geo(ColumnType::Geography { crs, edges }) => {
            DataType::Geo(ColumnType::Geography {
                crs: Crs::for_srid(srid_of(crs)?),
                edges: *edges,
            })
        }
        other => other.clone(),
    })
}

/// The table type for an Arrow type of an imported file or batch (`None`: no table type
/// holds it, e.g. unions, intervals, durations, `time` in nanoseconds). Narrower integers
/// and floats widen, dictionaries and views become their value type, second and millisecond
/// times and timestamps become microseconds; `append` casts the values, and refuses a
/// value that does not fit.
pub fn data_type_from_arrow(ty: &ArrowType) -> Option<DataType> {
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
        ArrowType::Dictionary(_, value) => data_type_from_arrow(value)?,
        ArrowType::Struct(fields) if !fields.is_empty() => {
            let mut columns = Vec::with_capacity(fields.len());
            for f in fields {
                let c = Column::new(f.name(), data_type_from_arrow(f.data_type())?);
                columns.push(if f.is_nullable() { c } else { c.required() });
            }
            DataType::Struct(columns)
        }
        ArrowType::List(f)
        | ArrowType::LargeList(f)
        | ArrowType::ListView(f)
        | ArrowType::LargeListView(f)
        | ArrowType::FixedSizeList(f, _) => DataType::List {
            element: Box::new(data_type_from_arrow(f.data_type())?),
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
                key: Box::new(data_type_from_arrow(k.data_type())?),
                value: Box::new(data_type_from_arrow(v.data_type())?),
                value_required: !v.is_nullable(),
            }
        }
        _ => return None,
    })
}

/// Inverse of [`IcebergType::iceberg_type`] for ordinary columns (geo columns read back as
/// `binary`; their real type is in the table's geo fields).
pub(crate) fn data_type_from_iceberg(ty: &Type) -> DataType {
    match ty {
        Type::Primitive(p) => match p {
            PrimitiveType::Boolean => DataType::Boolean,
            PrimitiveType::Int => DataType::Int,
            PrimitiveType::Long => DataType::Long,
            PrimitiveType::Float => DataType::Float,
            PrimitiveType::Double => DataType::Double,
            PrimitiveType::Decimal { precision, scale } => DataType::decimal(*precision, *scale),
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
                    let c = Column::new(&f.name, data_type_from_iceberg(&f.field_type));
                    if f.required { c.required() } else { c }
                })
                .collect(),
        ),
        Type::List(l) => DataType::List {
            element: Box::new(data_type_from_iceberg(&l.element_field.field_type)),
            element_required: l.element_field.required,
        },
        Type::Map(m) => DataType::Map {
            key: Box::new(data_type_from_iceberg(&m.key_field.field_type)),
            value: Box::new(data_type_from_iceberg(&m.value_field.field_type)),
            value_required: m.value_field.required,
        },
    }
}

/// How the table crate maps a [`DataType`] to Iceberg's types.
pub(crate) trait IcebergType {
    /// Whether this type (or a field inside it) needs format-version 3: nanosecond timestamps.
    fn needs_v3(&self) -> bool;

    /// The Iceberg type, nested fields numbered from `next_id` on as Iceberg Java's
    /// `AssignFreshIds` does (a struct's fields first, then their children). `path` names the
    /// column in errors.
    fn iceberg_type(&self, path: &str, next_id: &mut i32) -> Result<Type>;

    /// [`IcebergType::iceberg_type`] of a nested field, where geo types are not allowed.
    fn nested_iceberg_type(&self, path: &str, next_id: &mut i32) -> Result<Type>;

    /// The Iceberg primitive type, or an error naming `path` for nested types.
    fn primitive_type(&self, path: &str) -> Result<PrimitiveType>;
}

impl IcebergType for DataType {
    fn needs_v3(&self) -> bool {
        match self {
            DataType::TimestampNs | DataType::TimestamptzNs => true,
            DataType::Struct(fields) => fields.iter().any(|c| c.data_type.needs_v3()),
            DataType::List { element, .. } => element.needs_v3(),
            DataType::Map { key, value, .. } => key.needs_v3() || value.needs_v3(),
            _ => false,
        }
    }

    fn iceberg_type(&self, path: &str, next_id: &mut i32) -> Result<Type> {
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
