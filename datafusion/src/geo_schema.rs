//! Arrow schemas of geoberg tables as SedonaDB sees them: geometry and geography columns are
//! `Binary` fields tagged `ARROW:extension:name = geoarrow.wkb` with the column's CRS in
//! `ARROW:extension:metadata` (geography adds `"edges": "spherical"`), so that SedonaDB's
//! functions type-check against the declared CRS.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{Field, Schema, SchemaRef};
use datafusion::error::{DataFusionError, Result};
use geoberg_crs::{ColumnType, Crs};
use geoberg_table::Table;
use sedona_schema::crs::{Crs as SedonaCrs, deserialize_crs, lnglat};
use sedona_schema::datatypes::{Edges, SedonaType};

/// The Arrow schema of a table's current schema, geo columns typed for SedonaDB. Field and
/// schema metadata of the Iceberg conversion (field ids) are dropped: SedonaDB compares
/// schemas, and Parquet columns are matched by name.
pub fn table_arrow_schema(table: &Table) -> Result<SchemaRef> {
    let iceberg_schema = table.metadata().current_schema();
    let converted = iceberg::arrow::schema_to_arrow_schema(iceberg_schema)
        .map_err(|e| DataFusionError::External(Box::new(e)))?;
    let properties = table.metadata().properties();
    let mut fields = Vec::with_capacity(converted.fields().len());
    for field in converted.fields() {
        let geo = table.geo_columns().iter().find(|g| g.name == *field.name());
        fields.push(match geo {
            Some(g) => geo_field(&g.name, &g.column_type, field.is_nullable(), properties)?,
            None => field.as_ref().clone().with_metadata(HashMap::new()),
        });
    }
    Ok(Arc::new(Schema::new(fields)))
}

/// The SedonaDB field of a geometry or geography column.
pub(crate) fn geo_field(
    name: &str,
    column_type: &ColumnType,
    nullable: bool,
    properties: &HashMap<String, String>,
) -> Result<Field> {
    sedona_type(column_type, properties)?.to_storage_field(name, nullable)
}

/// The SedonaDB type of a geo column: WKB with planar or spherical edges and the declared CRS.
pub(crate) fn sedona_type(
    column_type: &ColumnType,
    properties: &HashMap<String, String>,
) -> Result<SedonaType> {
    Ok(match column_type {
        ColumnType::GeometryWithoutCrs => SedonaType::Wkb(Edges::Planar, None),
        ColumnType::Geometry { crs } => {
            SedonaType::Wkb(Edges::Planar, sedona_crs(crs, properties)?)
        }
        // SedonaDB knows planar and spherical edges only; every geodesic algorithm of an
        // Iceberg geography is curved, so spherical is the nearest. Spherical arguments select
        // geoberg's spherical kernels (`geography_kernels`); SedonaDB's own are not built here.
        ColumnType::Geography { crs, .. } => {
            SedonaType::Wkb(Edges::Spherical, sedona_crs(crs, properties)?)
        }
    })
}

/// A declared CRS as SedonaDB's: WGS84 as lon/lat, SRID 0 as no CRS (what SedonaDB's
/// constructors give), other SRIDs as `EPSG:<n>`, PROJJSON from the table property naming it.
pub(crate) fn sedona_crs(crs: &Crs, properties: &HashMap<String, String>) -> Result<SedonaCrs> {
    if crs.is_wgs84() {
        return Ok(lnglat());
    }
    match crs {
        Crs::Srid(0) | Crs::Epsg(0) => Ok(None),
        Crs::Srid(n) | Crs::Epsg(n) => deserialize_crs(&format!("EPSG:{n}")),
        Crs::Projjson(property) => match properties.get(property) {
            Some(json) => deserialize_crs(json),
            None => Err(DataFusionError::Plan(format!(
                "the column CRS is projjson:{property}, but the table has no property \
                 {property:?} holding the PROJJSON; set it with the CRS definition"
            ))),
        },
        other => deserialize_crs(&other.to_string()),
    }
}

/// The SRID a SedonaDB geometry field's CRS stands for: `Some(0)` for no CRS, `None` when the
/// CRS has no integer SRID (a PROJJSON definition), or when the field is no geometry.
pub(crate) fn field_srid(field: &Field) -> Result<FieldSrid> {
    let crs = match SedonaType::from_storage_field(field)? {
        SedonaType::Wkb(_, crs) | SedonaType::WkbLarge(_, crs) | SedonaType::WkbView(_, crs) => crs,
        _ => return Ok(FieldSrid::NotGeometry),
    };
    let Some(crs) = crs else {
        return Ok(FieldSrid::Unset);
    };
    Ok(match crs.srid()? {
        Some(srid) => FieldSrid::Srid(srid as i32),
        None => FieldSrid::NoSrid(crs.to_crs_string()),
    })
}

/// What a geometry field's type says about the SRID of its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldSrid {
    /// Not a geometry field.
    NotGeometry,
    /// No CRS in the type: the values of SedonaDB's constructors (`ST_GeomFromText` without an
    /// SRID, `ST_Point`), SRID 0 as the seeds count it.
    Unset,
    /// The CRS of this SRID.
    Srid(i32),
    /// A CRS without an integer SRID (its definition).
    NoSrid(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_crs_reaches_the_field_and_back() {
        let props = HashMap::new();
        for (crs, srid) in [
            (Crs::OgcCrs84, FieldSrid::Srid(4326)),
            (Crs::Epsg(4326), FieldSrid::Srid(4326)),
            (Crs::Epsg(3857), FieldSrid::Srid(3857)),
            (Crs::Srid(0), FieldSrid::Unset),
        ] {
            let f = geo_field("g", &ColumnType::geometry(crs.clone()), true, &props).unwrap();
            assert_eq!(f.metadata()["ARROW:extension:name"], "geoarrow.wkb");
            assert_eq!(field_srid(&f).unwrap(), srid, "{crs}");
        }
        let g = geo_field("g", &ColumnType::geography(Crs::OgcCrs84), true, &props).unwrap();
        assert!(
            g.metadata()["ARROW:extension:metadata"].contains("spherical"),
            "{g:?}"
        );
        let plain = Field::new("b", arrow_schema::DataType::Binary, true);
        assert_eq!(field_srid(&plain).unwrap(), FieldSrid::NotGeometry);
        let missing = sedona_crs(&Crs::Projjson("p".into()), &props).unwrap_err();
        assert!(missing.to_string().contains("property \"p\""), "{missing}");
    }
}
