//! Column definitions of a new table and their mapping to Iceberg and Arrow types.

use std::fmt;

use arrow_schema::DataType as ArrowType;
use iceberg::spec::{PrimitiveType, Transform};

use crate::error::{Error, Result};
use geoberg_crs::{ColumnType, Crs, EdgeAlgorithm};

use crate::typestring::crs_for_srid;

/// Names of the materialised bbox columns (seed 002 layout), placed before the geometry.
pub const BBOX_COLUMN_NAMES: [&str; 4] = ["bbox_min_x", "bbox_min_y", "bbox_max_x", "bbox_max_y"];

/// The type of a column, as a user declares it (`bigint`, `geometry(4326)` …).
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
    /// `string`.
    String,
    /// `binary`.
    Binary,
    /// `date` (days since the epoch).
    Date,
    /// `timestamp` (microseconds, no zone).
    Timestamp,
    /// `timestamptz` (microseconds, UTC).
    Timestamptz,
    /// A geometry or geography column, with its CRS as the `crs` rules see it: an Iceberg v3
    /// `geometry(C)` / `geography(C, A)`, or [`ColumnType::GeometryWithoutCrs`], WKB in a
    /// `binary` column of a format-version 2 table marked as geometry (each value keeps its own
    /// SRID, unchecked; creating it needs
    /// [`CreateTable::allow_undeclared_crs`](crate::CreateTable::allow_undeclared_crs)).
    Geo(ColumnType),
}

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

    /// Bare `geometry`: no declared CRS.
    pub const LEGACY_GEOMETRY: DataType = DataType::Geo(ColumnType::GeometryWithoutCrs);

    /// Parses a SQL type name as in `CREATE TABLE`: `bigint`, `string`, `geometry(4326)`,
    /// `geography(4326)`, `geography(4326, karney)`. Bare `geometry` gives
    /// [`DataType::LEGACY_GEOMETRY`], which `create` rejects unless asked for explicitly.
    pub fn parse(input: &str) -> Result<Self> {
        let s = input.trim().to_ascii_lowercase();
        let simple = match s.as_str() {
            "boolean" | "bool" => Some(DataType::Boolean),
            "int" | "integer" => Some(DataType::Int),
            "bigint" | "long" => Some(DataType::Long),
            "float" | "real" => Some(DataType::Float),
            "double" => Some(DataType::Double),
            "string" | "varchar" | "text" => Some(DataType::String),
            "binary" => Some(DataType::Binary),
            "date" => Some(DataType::Date),
            "timestamp" | "timestamp_ntz" => Some(DataType::Timestamp),
            "timestamptz" | "timestamp_ltz" => Some(DataType::Timestamptz),
            "geometry" => Some(DataType::LEGACY_GEOMETRY),
            _ => None,
        };
        if let Some(t) = simple {
            return Ok(t);
        }
        let unknown = || {
            Error::Schema(format!(
                "unknown column type {input:?}; use boolean, int, bigint, float, double, string, \
                 binary, date, timestamp, timestamptz, geometry(<srid>) or geography(<srid>)"
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
            Sql::Date => DataType::Date,
            // Spark's `timestamp` carries a zone; `timestamp_ntz` does not.
            Sql::Timestamp => DataType::Timestamptz,
            Sql::TimestampNtz => DataType::Timestamp,
            Sql::String => DataType::String,
            Sql::Binary => DataType::Binary,
            Sql::Geo(ColumnType::GeometryWithoutCrs) => DataType::LEGACY_GEOMETRY,
            Sql::Geo(ColumnType::Geometry { crs }) => DataType::geometry(srid_of(crs)?),
            Sql::Geo(ColumnType::Geography { crs, edges }) => {
                DataType::Geo(ColumnType::Geography {
                    crs: crs_for_srid(srid_of(crs)?),
                    edges: *edges,
                })
            }
            Sql::Decimal { .. } | Sql::Uuid => {
                return Err(Error::WrongColumnType {
                    column: column.to_string(),
                    found: ty.to_string(),
                    expected: "a type geoberg tables store: decimal and uuid are not supported \
                               yet; use double, bigint or string"
                        .into(),
                });
            }
        })
    }

    /// The table type for an Arrow field of an imported file (`None`: no table type holds
    /// it). Narrower integers and floats widen; `append` casts the values.
    pub fn from_arrow(ty: &ArrowType) -> Option<DataType> {
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
            ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => DataType::String,
            ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView => DataType::Binary,
            ArrowType::Date32 => DataType::Date,
            ArrowType::Timestamp(_, None) => DataType::Timestamp,
            ArrowType::Timestamp(_, Some(_)) => DataType::Timestamptz,
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

    pub(crate) fn iceberg_type(&self) -> PrimitiveType {
        match self {
            DataType::Boolean => PrimitiveType::Boolean,
            DataType::Int => PrimitiveType::Int,
            DataType::Long => PrimitiveType::Long,
            DataType::Float => PrimitiveType::Float,
            DataType::Double => PrimitiveType::Double,
            DataType::String => PrimitiveType::String,
            DataType::Date => PrimitiveType::Date,
            DataType::Timestamp => PrimitiveType::Timestamp,
            DataType::Timestamptz => PrimitiveType::Timestamptz,
            DataType::Binary | DataType::Geo(_) => PrimitiveType::Binary,
        }
    }

    /// Inverse of [`DataType::iceberg_type`] for ordinary columns.
    pub(crate) fn from_iceberg(ty: &PrimitiveType) -> Option<Self> {
        Some(match ty {
            PrimitiveType::Boolean => DataType::Boolean,
            PrimitiveType::Int => DataType::Int,
            PrimitiveType::Long => DataType::Long,
            PrimitiveType::Float => DataType::Float,
            PrimitiveType::Double => DataType::Double,
            PrimitiveType::String => DataType::String,
            PrimitiveType::Binary => DataType::Binary,
            PrimitiveType::Date => DataType::Date,
            PrimitiveType::Timestamp => DataType::Timestamp,
            PrimitiveType::Timestamptz => DataType::Timestamptz,
            _ => return None,
        })
    }

    /// The Arrow type data files are written with.
    pub(crate) fn arrow_type(&self) -> ArrowType {
        match self {
            DataType::Boolean => ArrowType::Boolean,
            DataType::Int => ArrowType::Int32,
            DataType::Long => ArrowType::Int64,
            DataType::Float => ArrowType::Float32,
            DataType::Double => ArrowType::Float64,
            DataType::String => ArrowType::Utf8,
            DataType::Date => ArrowType::Date32,
            DataType::Timestamp => ArrowType::Timestamp(arrow_schema::TimeUnit::Microsecond, None),
            DataType::Timestamptz => {
                ArrowType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("+00:00".into()))
            }
            DataType::Binary | DataType::Geo(_) => ArrowType::Binary,
        }
    }
}

/// `SHOW CREATE TABLE` spelling: `BIGINT`, `GEOMETRY(4326)`, `GEOMETRY` for the legacy kind.
impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Boolean => f.write_str("BOOLEAN"),
            DataType::Int => f.write_str("INT"),
            DataType::Long => f.write_str("BIGINT"),
            DataType::Float => f.write_str("FLOAT"),
            DataType::Double => f.write_str("DOUBLE"),
            DataType::String => f.write_str("STRING"),
            DataType::Binary => f.write_str("BINARY"),
            DataType::Date => f.write_str("DATE"),
            DataType::Timestamp => f.write_str("TIMESTAMP_NTZ"),
            DataType::Timestamptz => f.write_str("TIMESTAMP"),
            DataType::Geo(t) => f.write_str(&render_geo_sql(t)),
        }
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
