//! Column definitions of a new table and their mapping to Iceberg and Arrow types.

use std::fmt;

use arrow_schema::DataType as ArrowType;
use iceberg::spec::{PrimitiveType, Transform};

use crate::error::{Error, Result};
use geoberg_crs::{ColumnType, Crs, EdgeAlgorithm};

use crate::typestring::crs_for_srid;

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
    /// `geometry(<srid>)`: an Iceberg v3 geometry column with a declared CRS.
    Geometry {
        /// Declared SRID (0, 3857 or 4326).
        srid: i32,
    },
    /// `geography(<srid>)`: an Iceberg v3 geography column.
    Geography {
        /// Declared SRID (4326).
        srid: i32,
        /// Edge interpolation.
        algorithm: EdgeAlgorithm,
    },
    /// A geometry column with no declared CRS: WKB in a `binary` column of a format-version 2
    /// table, marked so that we know it is geometry. Each value keeps its own SRID, unchecked.
    /// Bare `geometry` parses to this; creating it needs
    /// [`CreateTable::allow_undeclared_crs`](crate::CreateTable::allow_undeclared_crs), the
    /// equivalent of creating a table from a query result at format-version 2.
    LegacyGeometry,
}

impl DataType {
    /// Parses a SQL type name as in `CREATE TABLE`: `bigint`, `string`, `geometry(4326)`,
    /// `geography(4326)`, `geography(4326, karney)`. Bare `geometry` gives
    /// [`DataType::LegacyGeometry`], which `create` rejects unless asked for explicitly.
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
        if s == "geometry" {
            return Ok(DataType::LegacyGeometry);
        }
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
            ("geometry", None, None) => Ok(DataType::Geometry { srid }),
            ("geography", algorithm, None) => Ok(DataType::Geography {
                srid,
                algorithm: algorithm.unwrap_or_default(),
            }),
            _ => Err(unknown()),
        }
    }

    /// The `crs` crate's view of a geo column type; `None` for ordinary columns.
    pub fn column_type(&self) -> Option<ColumnType> {
        match self {
            DataType::Geometry { srid } => Some(ColumnType::geometry(crs_for_srid(*srid))),
            DataType::Geography { srid, algorithm } => Some(ColumnType::Geography {
                crs: crs_for_srid(*srid),
                edges: *algorithm,
            }),
            DataType::LegacyGeometry => Some(ColumnType::GeometryWithoutCrs),
            _ => None,
        }
    }

    /// True for the three geospatial kinds.
    pub fn is_geo(&self) -> bool {
        matches!(
            self,
            DataType::Geometry { .. } | DataType::Geography { .. } | DataType::LegacyGeometry
        )
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
            DataType::Binary
            | DataType::Geometry { .. }
            | DataType::Geography { .. }
            | DataType::LegacyGeometry => PrimitiveType::Binary,
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
            DataType::Binary
            | DataType::Geometry { .. }
            | DataType::Geography { .. }
            | DataType::LegacyGeometry => ArrowType::Binary,
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
            DataType::Geometry { srid } => write!(f, "GEOMETRY({srid})"),
            DataType::Geography {
                srid,
                algorithm: EdgeAlgorithm::Spherical,
            } => write!(f, "GEOGRAPHY({srid})"),
            DataType::Geography { srid, algorithm } => {
                write!(f, "GEOGRAPHY({srid}, {})", algorithm.name().to_uppercase())
            }
            DataType::LegacyGeometry => f.write_str("GEOMETRY"),
        }
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
