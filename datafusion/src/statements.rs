//! geoberg's own statements, run by the table crate, with their results as Arrow batches.

use std::sync::Arc;

use arrow_array::{BooleanArray, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_crs::{ColumnType as GeoType, Crs};
use geoberg_sql::{ShowTablesRequest, Statement};
use geoberg_table::{Catalog, CreateTable, RewriteRunner, Table};

use crate::describe::describe;
use crate::error::{Error, Result};
use crate::statement_support::{load, one_row_of_counts, resolve};

/// Runs a geoberg statement against `catalog` (named `catalog_name` in SQL). Blocking. A rewrite
/// runs its tasks through `rewrite_runner` when there is one (a cluster).
pub(crate) fn run(
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    statement: &Statement,
    rewrite_runner: Option<&dyn RewriteRunner>,
    notices: &mut Vec<String>,
) -> Result<Vec<RecordBatch>> {
    match statement {
        Statement::CreateTable(request) => {
            let ident = resolve(catalog_name, &request.table)?;
            let create = CreateTable::from_request(request)?;
            if catalog.metadata_location(&ident)?.is_some() {
                if request.if_not_exists {
                    notices.push(format!("table {ident} exists, unchanged"));
                    return Ok(Vec::new());
                }
                return Err(geoberg_table::Error::TableAlreadyExists(ident.to_string()).into());
            }
            let namespace = ident.namespace_str();
            if !catalog.namespace_exists(&namespace)? {
                catalog.create_namespace(&namespace)?;
            }
            let table = create.create(Arc::clone(catalog), &ident)?;
            notices.push(format!("created table {ident}"));
            warn_metrics_positions(&table, notices)?;
            Ok(Vec::new())
        }
        Statement::CreateTableAsSelect(request) => Err(Error::Unsupported {
            what: format!("CREATE TABLE {} ... AS outside a session", request.table),
            fix: "its query runs in the engine: run it through geoberg_datafusion::Session".into(),
        }),
        Statement::ShowTables(request) => show_tables(catalog, catalog_name, request),
        Statement::Rewrite(request) => {
            let table = load(catalog, catalog_name, &request.table)?;
            let mut rewrite = table.rewrite_request(request)?;
            if let Some(runner) = rewrite_runner {
                rewrite = rewrite.runner(runner);
            }
            let (table, report) = rewrite.execute()?;
            warn_metrics_positions(&table, notices)?;
            notices.push(format!(
                "rewrote table {}: {} files ({} bytes) replaced by {} files",
                table.ident(),
                report.rewritten_data_files_count,
                report.rewritten_bytes_count,
                report.added_data_files_count
            ));
            if !report.workers.is_empty() {
                notices.push(workers_notice(&report.workers));
            }
            let counts = [
                (
                    "rewritten_data_files_count",
                    report.rewritten_data_files_count,
                ),
                ("added_data_files_count", report.added_data_files_count),
                ("rewritten_bytes_count", report.rewritten_bytes_count),
                ("failed_data_files_count", report.failed_data_files_count),
                (
                    "removed_delete_files_count",
                    report.removed_delete_files_count,
                ),
            ];
            one_row_of_counts(&counts)
        }
        Statement::SetTblProperties { table, properties } => {
            let table = load(catalog, catalog_name, table)?;
            let table =
                table.set_properties(properties.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
            notices.push(format!(
                "set {} table properties on {}",
                properties.len(),
                table.ident()
            ));
            warn_metrics_positions(&table, notices)?;
            Ok(Vec::new())
        }
        Statement::UnsetTblProperties {
            table,
            keys,
            if_exists,
        } => {
            let table = load(catalog, catalog_name, table)?;
            table.unset_properties(keys.iter().map(String::as_str), *if_exists)?;
            notices.push(format!(
                "unset {} table properties on {}",
                keys.len(),
                table.ident()
            ));
            Ok(Vec::new())
        }
        Statement::AlterSchema(request) => {
            if let Some(table) =
                crate::schema_statements::alter_schema(catalog, catalog_name, request, notices)?
            {
                warn_metrics_positions(&table, notices)?;
            }
            Ok(Vec::new())
        }
        Statement::RenameTable { table, to } => {
            crate::schema_statements::rename_table(catalog, catalog_name, table, to, notices)?;
            Ok(Vec::new())
        }
        Statement::DropTable {
            table,
            if_exists,
            purge,
        } => crate::schema_statements::drop_table(
            catalog,
            catalog_name,
            table,
            *if_exists,
            *purge,
            notices,
        ),
        Statement::ExpireSnapshots(request) => {
            let table = load(catalog, catalog_name, &request.table)?;
            let horizon = request.horizon(std::time::SystemTime::now());
            let (_, report) =
                table.expire_snapshots(horizon, request.retain_last_or_default() as usize)?;
            notices.push(format!(
                "expired {} snapshots of {}, deleted {} files{}",
                report.expired_snapshots.len(),
                table.ident(),
                report.deleted_files.len(),
                match report.undeleted_files.len() {
                    0 => String::new(),
                    n => format!(
                        "; {n} could not be deleted (remove_orphan_files removes them later)"
                    ),
                }
            ));
            // Iceberg's result columns.
            let counts = [
                ("deleted_data_files_count", report.deleted_data_files_count),
                (
                    "deleted_position_delete_files_count",
                    report.deleted_position_delete_files_count,
                ),
                (
                    "deleted_equality_delete_files_count",
                    report.deleted_equality_delete_files_count,
                ),
                (
                    "deleted_manifest_files_count",
                    report.deleted_manifest_files_count,
                ),
                (
                    "deleted_manifest_lists_count",
                    report.deleted_manifest_lists_count,
                ),
                (
                    "deleted_statistics_files_count",
                    report.deleted_statistics_files_count,
                ),
            ];
            one_row_of_counts(&counts)
        }
        Statement::RemoveOrphanFiles(request) => {
            let table = load(catalog, catalog_name, &request.table)?;
            let horizon = request.horizon(std::time::SystemTime::now());
            let orphans = match request.is_dry_run() {
                true => table.orphan_files(horizon)?,
                false => table.remove_orphan_files(horizon)?,
            };
            notices.push(format!(
                "{} {} orphan files of {}",
                match request.is_dry_run() {
                    true => "found (dry run)",
                    false => "removed",
                },
                orphans.len(),
                table.ident()
            ));
            strings(&[("orphan_file_location", orphans)])
        }
        Statement::RewriteManifests(request) => {
            crate::rewrite_manifests::run(catalog, catalog_name, request, notices)
        }
        Statement::Maintain(request) => {
            crate::maintain::run(catalog, catalog_name, request, notices)
        }
        Statement::UpgradeGeometry(request) => {
            crate::upgrade_geometry::run(catalog, catalog_name, request, notices)
        }
        Statement::AddBBoxColumns(request) => {
            crate::add_bbox_columns::run(catalog, catalog_name, request, notices)
        }
        Statement::ShowCreateTable(name) => {
            let table = load(catalog, catalog_name, name)?;
            let ddl = table.show_create_table(catalog_name);
            strings(&[("createtab_stmt", vec![ddl])])
        }
        Statement::ShowTblProperties { table, key } => {
            let table = load(catalog, catalog_name, table)?;
            let mut props: Vec<(String, String)> = table
                .metadata()
                .properties()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            props.push((
                "format-version".into(),
                (table.metadata().format_version() as u8).to_string(),
            ));
            props.sort();
            if let Some(key) = key {
                props.retain(|(k, _)| k == key);
                if props.is_empty() {
                    return Err(Error::Invalid {
                        what: "property",
                        value: key.clone(),
                        fix: format!(
                            "table {} has no such property; SHOW TBLPROPERTIES {} lists them",
                            table.ident(),
                            table.ident()
                        ),
                    });
                }
            }
            let (keys, values) = props.into_iter().unzip();
            strings(&[("key", keys), ("value", values)])
        }
        Statement::Describe { table, extended } => {
            let table = load(catalog, catalog_name, table)?;
            describe(&table, *extended, geo_type_sql)
        }
    }
}

/// `SHOW TABLES {IN | FROM} <namespace>`: Spark's columns, `namespace`, `tableName`,
/// `isTemporary`, sorted by name.
fn show_tables(
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    request: &ShowTablesRequest,
) -> Result<Vec<RecordBatch>> {
    if let Some(named) = request.catalog.as_deref()
        && named != catalog_name
    {
        return Err(Error::Invalid {
            what: "catalog",
            value: named.to_string(),
            fix: format!(
                "the session's catalog is {catalog_name:?}; write SHOW TABLES IN {} or SHOW \
                 TABLES IN {catalog_name}.{}",
                request.namespace, request.namespace
            ),
        });
    }
    if !catalog.namespace_exists(&request.namespace)? {
        let namespaces = catalog.list_namespaces()?;
        return Err(Error::Invalid {
            what: "namespace",
            value: request.namespace.clone(),
            fix: match namespaces.is_empty() {
                true => format!(
                    "catalog {catalog_name} has no namespaces yet; CREATE TABLE {}.<table> \
                     creates this one",
                    request.namespace
                ),
                false => format!(
                    "catalog {catalog_name} has no such namespace; it has {}",
                    namespaces.join(", ")
                ),
            },
        });
    }
    let mut names: Vec<String> = catalog
        .list_tables(&request.namespace)?
        .iter()
        .map(|t| t.name().to_string())
        .filter(|n| request.matches(n))
        .collect();
    names.sort();
    let schema = Schema::new(vec![
        Field::new("namespace", ArrowType::Utf8, false),
        Field::new("tableName", ArrowType::Utf8, false),
        Field::new("isTemporary", ArrowType::Boolean, false),
    ]);
    let n = names.len();
    Ok(vec![RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(StringArray::from(vec![request.namespace.clone(); n])),
            Arc::new(StringArray::from(names)),
            Arc::new(BooleanArray::from(vec![false; n])),
        ],
    )?])
}

/// Seed 002's silent failures made loud: a pruning column the statement left past the metrics
/// column cap, or with a metrics mode that stores no bounds, is named with the property that
/// fixes it.
fn warn_metrics_positions(table: &Table, notices: &mut Vec<String>) -> Result<()> {
    notices.extend(metrics_warnings(table)?);
    Ok(())
}

/// The metrics warnings of `table` (see [`warn_metrics_positions`]), as notices.
pub(crate) fn metrics_warnings(table: &Table) -> geoberg_table::Result<Vec<String>> {
    let positions = table.metrics_position_warnings()?;
    let modes = table.metrics_mode_warnings()?;
    Ok(positions
        .iter()
        .map(ToString::to_string)
        .chain(modes.iter().map(ToString::to_string))
        .collect())
}

/// One batch of string columns.
fn strings(columns: &[(&str, Vec<String>)]) -> Result<Vec<RecordBatch>> {
    let schema = Schema::new(
        columns
            .iter()
            .map(|(name, _)| Field::new(*name, ArrowType::Utf8, false))
            .collect::<Vec<_>>(),
    );
    let arrays = columns
        .iter()
        .map(|(_, values)| Arc::new(StringArray::from(values.clone())) as _)
        .collect();
    Ok(vec![RecordBatch::try_new(Arc::new(schema), arrays)?])
}

/// `geometry(4326)`, `geography(4326, spherical)`, bare `geometry` for no CRS.
fn geo_type_sql(t: &GeoType) -> String {
    let crs = |c: &Crs| c.srid().map_or_else(|| format!("'{c}'"), |s| s.to_string());
    match t {
        GeoType::GeometryWithoutCrs => "geometry".into(),
        GeoType::Geometry { crs: c } => format!("geometry({})", crs(c)),
        GeoType::Geography { crs: c, edges } => format!("geography({}, {})", crs(c), edges.name()),
    }
}

/// Where a rewrite's parts ran: `its tasks ran in 5 parts: executor pid 7 (3), executor pid 9 (2)`.
fn workers_notice(workers: &[String]) -> String {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for w in workers {
        *counts.entry(w.as_str()).or_default() += 1;
    }
    let places: Vec<String> = counts.iter().map(|(w, n)| format!("{w} ({n})")).collect();
    format!(
        "its tasks ran in {} parts: {}",
        workers.len(),
        places.join(", ")
    )
}
