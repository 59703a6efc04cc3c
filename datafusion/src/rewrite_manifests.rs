//! `CALL <catalog>.system.rewrite_manifests(...)` in the engine: the table crate regroups the
//! manifests; the result is Iceberg's row (`rewritten_manifests_count`,
//! `added_manifests_count`), the notice says how many manifests planning now reads.

use std::sync::Arc;

use arrow_array::RecordBatch;
use geoberg_sql::RewriteManifestsRequest;
use geoberg_table::Catalog;

use crate::error::Result;
use crate::statement_support::{load, one_row_of_counts};

/// Runs the procedure on the table the request names.
pub(crate) fn run(
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    request: &RewriteManifestsRequest,
    notices: &mut Vec<String>,
) -> Result<Vec<RecordBatch>> {
    let table = load(catalog, catalog_name, &request.table)?;
    let (table, report) = table.rewrite_manifests().execute()?;
    notices.push(match report.snapshot_id {
        Some(_) => format!(
            "rewrote the manifests of {}: {} replaced by {} ({} -> {} manifests per scan plan)",
            table.ident(),
            report.rewritten_manifests_count,
            report.added_manifests_count,
            report.manifests_before,
            report.manifests_after
        ),
        None => format!(
            "the manifests of {} are already grouped ({} manifests); nothing was committed",
            table.ident(),
            report.manifests_before
        ),
    });
    one_row_of_counts(&[
        (
            "rewritten_manifests_count",
            report.rewritten_manifests_count,
        ),
        ("added_manifests_count", report.added_manifests_count),
    ])
}
