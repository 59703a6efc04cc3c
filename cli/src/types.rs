//! Column types across the crate boundaries: `geoberg-sql`'s parsed types and Arrow types of an
//! imported file, onto `geoberg-table`'s [`DataType`].

use arrow_schema::DataType as ArrowType;
use geoberg_crs::{Crs, FormatVersion, validate_declaration};
use geoberg_sql::{ColumnType as SqlType, CreateTableRequest, PartitionTransform};
use geoberg_table::{Column, CreateTable, DataType, PartitionField};
use iceberg::spec::Transform;

use crate::error::{CliError, Result};

/// One `CREATE TABLE` column type as a table column type.
pub fn table_type(column: &str, ty: &SqlType) -> Result<DataType> {
    let srid_of = |crs: &Crs| {
        crs.srid().ok_or_else(|| {
            CliError::invalid(
                "CRS",
                crs,
                format!(
                    "column {column}: declare the CRS by SRID, e.g. geometry(4326), \
                     geometry(3857) or geometry(0)"
                ),
            )
        })
    };
    Ok(match ty {
        SqlType::Boolean => DataType::Boolean,
        SqlType::Int => DataType::Int,
        SqlType::Long => DataType::Long,
        SqlType::Float => DataType::Float,
        SqlType::Double => DataType::Double,
        SqlType::Date => DataType::Date,
        // Spark's `timestamp` carries a zone; `timestamp_ntz` does not.
        SqlType::Timestamp => DataType::Timestamptz,
        SqlType::TimestampNtz => DataType::Timestamp,
        SqlType::String => DataType::String,
        SqlType::Binary => DataType::Binary,
        SqlType::Geometry { crs: None } => DataType::LEGACY_GEOMETRY,
        SqlType::Geometry { crs: Some(crs) } => DataType::Geometry {
            srid: srid_of(crs)?,
        },
        SqlType::Geography { crs, algorithm } => DataType::Geography {
            srid: srid_of(crs.as_ref().unwrap_or(&Crs::OgcCrs84))?,
            algorithm: algorithm.unwrap_or_default(),
        },
        SqlType::Decimal { .. } | SqlType::Uuid => {
            return Err(CliError::Unsupported {
                what: format!("column {column} of type {ty}"),
                fix: "geoberg tables do not store decimal or uuid columns yet; use double, \
                      bigint or string"
                    .into(),
            });
        }
    })
}

/// The whole request as a [`CreateTable`], checked as far as possible before anything is
/// written: column types, CRS declarations for the format version, partition sources.
pub fn create_table(request: &CreateTableRequest) -> Result<CreateTable> {
    let version: FormatVersion = match request.properties.get("format-version") {
        Some(v) => v.parse().map_err(geoberg_table::Error::from)?,
        None => FormatVersion::V3,
    };
    let mut columns = Vec::with_capacity(request.columns.len());
    for c in &request.columns {
        if c.comment.is_some() {
            return Err(CliError::Unsupported {
                what: format!("COMMENT on column {}", c.name),
                fix: "column comments are not stored yet; remove the COMMENT clause".into(),
            });
        }
        let data_type = table_type(&c.name, &c.data_type)?;
        if let Some(t) = data_type.column_type() {
            validate_declaration(&c.name, &t, version).map_err(geoberg_table::Error::from)?;
        }
        let column = Column::new(&c.name, data_type);
        columns.push(if c.required {
            column.required()
        } else {
            column
        });
    }
    let mut create = CreateTable::new(columns.clone());
    for p in &request.partitioning {
        let source = columns.iter().find(|c| c.name == p.column).ok_or_else(|| {
            CliError::invalid(
                "partition column",
                &p.column,
                "partition by a column of the table",
            )
        })?;
        if source.data_type.is_geo() {
            return Err(CliError::invalid(
                "partition column",
                &p.column,
                "Iceberg has no partition transform on geometry; partition by an ordinary \
                 column and cluster with CREATE SPATIAL INDEX instead",
            ));
        }
        let transform = match p.transform {
            PartitionTransform::Identity => Transform::Identity,
            PartitionTransform::Bucket(n) => Transform::Bucket(n),
            PartitionTransform::Truncate(w) => Transform::Truncate(w),
            PartitionTransform::Year => Transform::Year,
            PartitionTransform::Month => Transform::Month,
            PartitionTransform::Day => Transform::Day,
            PartitionTransform::Hour => Transform::Hour,
        };
        create = create.partition_by(PartitionField {
            column: p.column.clone(),
            transform,
        });
    }
    for (k, v) in &request.properties {
        create = create.property(k, v);
    }
    Ok(create)
}

/// The table column type for an Arrow field of an imported file (`None`: no table type holds
/// it). Narrower integers and floats widen; `append` casts the values.
pub fn table_type_of_arrow(ty: &ArrowType) -> Option<DataType> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_types_map_to_srids_and_bad_crs_is_refused() {
        let g = |crs| SqlType::Geometry { crs: Some(crs) };
        assert_eq!(
            table_type("g", &g(Crs::Epsg(4326))).unwrap(),
            DataType::geometry(4326)
        );
        assert_eq!(
            table_type("g", &g(Crs::OgcCrs84)).unwrap(),
            DataType::geometry(4326)
        );
        assert!(matches!(
            table_type(
                "g",
                &SqlType::Geography {
                    crs: None,
                    algorithm: None
                }
            )
            .unwrap(),
            DataType::Geography { srid: 4326, .. }
        ));
        let err = table_type("d", &SqlType::Uuid).unwrap_err();
        assert!(err.to_string().contains("column d of type uuid"), "{err}");
    }

    #[test]
    fn create_request_checks_declarations_before_writing() {
        let geoberg_sql::Statement::CreateTable(req) =
            geoberg_sql::parse("CREATE TABLE db.t (id bigint, g geometry(4269))").unwrap()
        else {
            unreachable!()
        };
        let err = create_table(&req).unwrap_err().to_string();
        assert!(err.contains("4269"), "{err}");
        let geoberg_sql::Statement::CreateTable(req) = geoberg_sql::parse(
            "CREATE TABLE db.t (id bigint, g geometry(4326)) PARTITIONED BY (g)",
        )
        .unwrap() else {
            unreachable!()
        };
        assert!(create_table(&req).is_err());
    }
}
