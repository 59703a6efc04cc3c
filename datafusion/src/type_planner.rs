//! `geometry(<srid>)` and `geography(<srid>)` as SQL column types of the engine's
//! `CREATE TABLE`, parsed by the one type parser ([`geoberg_table::DataType::parse`]).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::FieldRef;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::planner::TypePlanner;
use datafusion::sql::sqlparser::ast;
use geoberg_table::DataType;

use crate::geo_schema::geo_field;

/// Field metadata key holding the SQL type a column was declared with (`geometry(0)` and a
/// bare `geometry` have the same SedonaDB type; the declaration tells them apart).
pub(crate) const SQL_TYPE_METADATA: &str = "geoberg.sql-type";

/// Plans `geometry`, `geometry(<srid>)`, `geography` and `geography(<srid>[, <algorithm>])`
/// as SedonaDB geometry fields carrying the declared CRS.
#[derive(Debug, Default)]
pub struct GeobergTypePlanner;

impl TypePlanner for GeobergTypePlanner {
    fn plan_type_field(&self, sql_type: &ast::DataType) -> Result<Option<FieldRef>> {
        let ast::DataType::Custom(name, _) = sql_type else {
            return Ok(None);
        };
        let name = name.to_string().to_ascii_lowercase();
        if name != "geometry" && name != "geography" {
            return Ok(None);
        }
        let text = sql_type.to_string();
        let data_type = DataType::parse(&text).map_err(|e| DataFusionError::Plan(e.to_string()))?;
        let Some(column_type) = data_type.column_type() else {
            return Ok(None);
        };
        let field = geo_field("", &column_type, true, &HashMap::new())?;
        let mut metadata = field.metadata().clone();
        metadata.insert(SQL_TYPE_METADATA.to_string(), text);
        Ok(Some(Arc::new(field.with_metadata(metadata))))
    }
}
