//! `CALL <catalog>.system.upgrade_geometry(...)` in the engine: the table crate copies the
//! no-CRS table into a new v3 `geometry(<srid>)` table; the result row is `source_rows`,
//! `copied_rows`, `target`, `srid`.

use std::sync::Arc;

use arrow_array::{Int32Array, RecordBatch, StringArray, UInt64Array};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_sql::UpgradeGeometryRequest;
use geoberg_table::Catalog;

use crate::error::Result;
use crate::statement_support::{load, resolve};

/// Runs the procedure on the table the request names.
pub(crate) fn run(
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    request: &UpgradeGeometryRequest,
    notices: &mut Vec<String>,
) -> Result<Vec<RecordBatch>> {
    let source = load(catalog, catalog_name, &request.table)?;
    let target = request
        .target
        .as_ref()
        .map(|t| resolve(catalog_name, t))
        .transpose()?;
    let (_, report) = source.upgrade_geometry(&request.column, request.srid, target.as_ref())?;
    notices.push(format!(
        "copied {} rows of {} into {} with {} geometry({}) ({} plain WKB values labelled, {} \
         EWKB values already SRID {}); {} is unchanged: swap the names with ALTER TABLE ... \
         RENAME TO when ready",
        report.copied_rows,
        source.ident(),
        report.target,
        request.column,
        report.srid,
        report.labelled_values,
        report.ewkb_values,
        report.srid,
        source.ident()
    ));
    let schema = Schema::new(vec![
        Field::new("source_rows", ArrowType::UInt64, false),
        Field::new("copied_rows", ArrowType::UInt64, false),
        Field::new("target", ArrowType::Utf8, false),
        Field::new("srid", ArrowType::Int32, false),
    ]);
    Ok(vec![RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(UInt64Array::from(vec![report.source_rows])),
            Arc::new(UInt64Array::from(vec![report.copied_rows])),
            Arc::new(StringArray::from(vec![report.target])),
            Arc::new(Int32Array::from(vec![report.srid])),
        ],
    )?])
}
