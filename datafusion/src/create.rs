//! Tables from query results: `CREATE TABLE ... [USING iceberg] [TBLPROPERTIES (...)] AS
//! <query>` runs its query in the engine, and the forms DataFusion plans itself hand the
//! catalog a table provider holding the new table's schema and rows. Either way this module
//! turns the schema into a geoberg table (every CRS rule and message is the table crate's),
//! with the statement's properties, and appends the rows in one commit.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Field, Schema};
use datafusion::datasource::{MemTable, TableProvider};
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_plan::collect;
use datafusion::prelude::SessionContext;
use geoberg_crs::{ColumnType, Crs, FormatVersion, validate_declaration};
use geoberg_sql::CreateTableAsSelectRequest;
use geoberg_table::{Catalog, Column, CreateTable, DataType, TableIdent, data_type_from_arrow};
use sedona_schema::datatypes::{Edges, SedonaType};

use crate::error::table_error;
use crate::insert::label_batches;
use crate::statement_support::resolve;
use crate::type_planner::SQL_TYPE_METADATA;

/// Creates the table `ident` from `provider`'s schema and appends its rows; returns the
/// notices for the user (a geometry column that gets no declared CRS, and why).
pub(crate) fn create_from_provider(
    catalog: &Arc<dyn Catalog>,
    ident: &TableIdent,
    provider: &dyn TableProvider,
) -> Result<Vec<String>> {
    if provider.constraints().is_some_and(|c| !c.is_empty()) {
        return Err(DataFusionError::Plan(format!(
            "CREATE TABLE {ident}: geoberg tables have no PRIMARY KEY, UNIQUE or other \
             constraints; remove the constraint clause"
        )));
    }
    for field in provider.schema().fields() {
        if provider.get_column_default(field.name()).is_some() {
            return Err(DataFusionError::Plan(format!(
                "CREATE TABLE {ident}: column {}: {}",
                field.name(),
                geoberg_sql::COLUMN_DEFAULT_REFUSED
            )));
        }
    }
    let Some(memory) = provider.downcast_ref::<MemTable>() else {
        return Err(DataFusionError::Plan(format!(
            "only CREATE TABLE and CREATE TABLE ... AS SELECT can add table {ident} to a \
             geoberg catalog; views and external tables live in this session: name them \
             without a namespace (CREATE TEMPORARY VIEW v AS SELECT ..., CREATE EXTERNAL TABLE \
             f STORED AS PARQUET LOCATION '...')"
        )));
    };
    let mut rows = Vec::new();
    for partition in &memory.batches {
        let batches = partition.try_read().map_err(|_| {
            DataFusionError::Execution(format!(
                "CREATE TABLE {ident}: the query's rows are still being written; retry"
            ))
        })?;
        rows.extend(batches.iter().cloned());
    }
    create_from_rows(catalog, ident, &provider.schema(), &rows, &BTreeMap::new())
}

/// `CREATE TABLE ... [USING iceberg] [TBLPROPERTIES (...)] AS <query>`: runs the query in the
/// engine, then creates the table from its columns with the properties and appends its rows in
/// one commit. Returns the notices for the user.
pub(crate) async fn create_table_as_select(
    ctx: &SessionContext,
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    request: &CreateTableAsSelectRequest,
) -> crate::error::Result<Vec<String>> {
    let ident = resolve(catalog_name, &request.table)?;
    if catalog.metadata_location(&ident)?.is_some() {
        if request.if_not_exists {
            return Ok(vec![format!("table {ident} exists, unchanged")]);
        }
        return Err(geoberg_table::Error::TableAlreadyExists(ident.to_string()).into());
    }
    let frame = ctx.sql(&request.query).await?;
    let task = Arc::new(frame.task_ctx());
    let plan = frame.create_physical_plan().await?;
    let rows = collect(Arc::clone(&plan), task).await?;
    let schema = plan.schema();
    let catalog = Arc::clone(catalog);
    let properties = request.properties.clone();
    tokio::task::spawn_blocking(move || {
        let namespace = ident.namespace_str();
        if !catalog.namespace_exists(&namespace)? {
            catalog.create_namespace(&namespace)?;
        }
        let mut notices = create_from_rows(&catalog, &ident, &schema, &rows, &properties)?;
        notices.insert(0, format!("created table {ident}"));
        Ok::<_, crate::error::Error>(notices)
    })
    .await
    .map_err(|e| crate::error::Error::Unsupported {
        what: "CREATE TABLE ... AS SELECT".into(),
        fix: format!("it stopped unexpectedly ({e}); run it again"),
    })?
}

/// Creates the table `ident` with the columns of `schema` (and `properties`, which may set
/// `format-version`) and appends `rows` in one commit; returns the notices for the user (a
/// geometry column that gets no declared CRS, and why).
fn create_from_rows(
    catalog: &Arc<dyn Catalog>,
    ident: &TableIdent,
    schema: &Schema,
    rows: &[RecordBatch],
    properties: &BTreeMap<String, String>,
) -> Result<Vec<String>> {
    let rows: Vec<RecordBatch> = rows.iter().filter(|b| b.num_rows() > 0).cloned().collect();
    let mut notices = Vec::new();
    let mut undeclared = false;
    let mut columns = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        let data_type = column_type(ident, field, &mut notices)?;
        undeclared |= data_type == DataType::LEGACY_GEOMETRY
            && field.metadata().get(SQL_TYPE_METADATA).is_none();
        let column = Column::new(field.name(), data_type);
        columns.push(if field.is_nullable() {
            column
        } else {
            column.required()
        });
    }
    let declared = columns
        .iter()
        .any(|c| c.data_type.is_geo() && c.data_type != DataType::LEGACY_GEOMETRY);
    let mut create = CreateTable::new(columns);
    if undeclared {
        create = create.allow_undeclared_crs();
        // A declared CRS needs format-version 3; without one, version 2 keeps file skipping on
        // the undeclared columns (the table crate's default for them).
        if declared {
            create = create.format_version(3);
        }
    }
    // The statement's own properties win, `format-version` among them.
    for (key, value) in properties {
        create = create.property(key, value);
    }
    let table = create
        .create(Arc::clone(catalog), ident)
        .map_err(table_error)?;
    notices.extend(crate::statements::metrics_warnings(&table).map_err(table_error)?);
    if !rows.is_empty() {
        let appended = label_batches(&table, &rows).and_then(|b| table.append(&b));
        if let Err(e) = appended {
            // The statement fails as a whole: no empty table is left behind.
            let _ = catalog.drop_table(ident);
            return Err(table_error(e));
        }
    }
    Ok(notices)
}

/// The table type of one column of the new table.
fn column_type(ident: &TableIdent, field: &Field, notices: &mut Vec<String>) -> Result<DataType> {
    let name = field.name();
    // A column declared in CREATE TABLE (geometry(4326), geography(4326), bare geometry).
    if let Some(declared) = field.metadata().get(SQL_TYPE_METADATA) {
        return DataType::parse(declared).map_err(|e| table_error(e.into()));
    }
    // A geometry computed by the query: its CRS is what SedonaDB's type says.
    let sedona = SedonaType::from_storage_field(field)?;
    if let SedonaType::Wkb(edges, crs)
    | SedonaType::WkbLarge(edges, crs)
    | SedonaType::WkbView(edges, crs) = sedona
    {
        let srid = crs
            .as_ref()
            .map(|c| c.srid())
            .transpose()?
            .flatten()
            .map(|s| s as i32);
        let crs_text = crs.as_ref().map(|c| c.to_crs_string());
        if edges == Edges::Spherical {
            if crs.is_some() && srid != Some(4326) {
                return Err(DataFusionError::Plan(format!(
                    "CREATE TABLE {ident} AS SELECT: column {name:?} is a geography in {}, but \
                     a geography column can declare only SRID 4326; ST_Transform it to \
                     EPSG:4326 first",
                    crs_text.unwrap_or_default()
                )));
            }
            return Ok(DataType::geography(4326));
        }
        let declarable = srid.filter(|&s| {
            validate_declaration(name, &ColumnType::geometry(Crs::Srid(s)), FormatVersion::V3)
                .is_ok()
        });
        if let Some(srid) = declarable {
            return Ok(DataType::geometry(srid));
        }
        let why = match &crs_text {
            None => "it is computed by an ST_ function whose result carries no SRID".to_string(),
            Some(crs) => format!(
                "its values are in {crs}, which a geometry column cannot declare (only SRID \
                 0, 3857 or 4326)"
            ),
        };
        notices.push(format!(
            "column {name:?} of {ident} has no declared CRS: {why}. It is stored as geometry \
             without a CRS, whose values' SRIDs are not checked on write; spatial filters on it \
             skip files only in a format-version 2 table (the new table is version 2 unless \
             another of its columns declares a CRS, which needs version 3: then they read every \
             file). To declare a CRS, create the table first, e.g. \
             CREATE TABLE {ident} ({name} geometry(4326), ...), then fill it with INSERT INTO \
             {ident} SELECT ..., ST_SetSRID(<geometry>, 4326) (or ST_Transform(<geometry>, \
             'EPSG:4326') to reproject)"
        ));
        return Ok(DataType::LEGACY_GEOMETRY);
    }
    // Every other column maps as an imported file's does (the table crate's one Arrow mapping).
    data_type_from_arrow(field.data_type())
        .map(with_microseconds)
        .ok_or_else(|| {
            DataFusionError::Plan(format!(
                "CREATE TABLE {ident}: column {name:?} is of type {}, which geoberg tables do \
                 not store; CAST it to BIGINT, DOUBLE, DECIMAL, VARCHAR, DATE or TIMESTAMP",
                field.data_type()
            ))
        })
}

/// `data_type` with nanosecond timestamps stored as microseconds, nested ones too: DataFusion's
/// timestamps (`now()`, `CAST(... AS TIMESTAMP)`) are nanoseconds whether or not the query
/// asks for them, and only format-version 3 stores nanoseconds (a table with an undeclared
/// geometry column is version 2).
fn with_microseconds(data_type: DataType) -> DataType {
    match data_type {
        DataType::TimestampNs => DataType::Timestamp,
        DataType::TimestamptzNs => DataType::Timestamptz,
        DataType::Struct(columns) => DataType::Struct(
            columns
                .into_iter()
                .map(|c| Column {
                    data_type: with_microseconds(c.data_type),
                    ..c
                })
                .collect(),
        ),
        DataType::List {
            element,
            element_required,
        } => DataType::List {
            element: Box::new(with_microseconds(*element)),
            element_required,
        },
        DataType::Map {
            key,
            value,
            value_required,
        } => DataType::Map {
            key: Box::new(with_microseconds(*key)),
            value: Box::new(with_microseconds(*value)),
            value_required,
        },
        other => other,
    }
}
