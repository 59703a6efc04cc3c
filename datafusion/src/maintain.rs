//! `CALL <catalog>.system.maintain(table => ...)` in the engine: the table crate decides and runs
//! the maintenance that is due ([`geoberg_table::Table::maintain`]); the result row counts what
//! each step did, the notices say why.

use std::sync::Arc;

use arrow_array::RecordBatch;
use geoberg_sql::MaintainRequest;
use geoberg_table::Catalog;

use crate::error::Result;
use crate::statement_support::{load, one_row_of_counts};

/// Runs the procedure on the table the request names.
pub(crate) fn run(
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    request: &MaintainRequest,
    notices: &mut Vec<String>,
) -> Result<Vec<RecordBatch>> {
    let table = load(catalog, catalog_name, &request.table)?;
    let (table, report) = table.maintain()?;
    notices.push(format!(
        "clustering of {}: {}",
        table.ident(),
        report.clustering_reason
    ));
    let clustering = report.clustering.as_ref();
    let manifests = report.manifest_rewrite.as_ref();
    one_row_of_counts(&[
        (
            "rewritten_data_files_count",
            clustering.map_or(0, |r| r.rewritten_data_files_count),
        ),
        (
            "added_data_files_count",
            clustering.map_or(0, |r| r.added_data_files_count),
        ),
        (
            "rewritten_bytes_count",
            clustering.map_or(0, |r| r.rewritten_bytes_count),
        ),
        (
            "rewritten_manifests_count",
            manifests.map_or(0, |r| r.rewritten_manifests_count),
        ),
        (
            "expired_snapshots_count",
            report.expiry.expired_snapshots.len() as u64,
        ),
        (
            "deleted_files_count",
            report.expiry.deleted_files.len() as u64,
        ),
    ])
}
