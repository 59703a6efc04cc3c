//! `CREATE SPATIAL INDEX` and `CALL ... rewrite_data_files` through `geoberg-table`'s rewrite,
//! with a progress bar over the input bytes.

use std::time::{Duration, Instant};

use geoberg_sql::RewriteRequest;
use geoberg_table::{RewriteReport, Table};
use indicatif::ProgressBar;
use serde_json::{Value, json};

use crate::context::Context;
use crate::error::Result;

/// What a rewrite changed, and how long it took.
#[derive(Debug, Clone)]
pub struct RewriteSummary {
    /// The table's report (Iceberg's `rewrite_data_files` result fields and details).
    pub report: RewriteReport,
    /// Wall time.
    pub elapsed: Duration,
}

impl RewriteSummary {
    /// The JSON object `--json` prints, with Iceberg's result field names.
    pub fn to_json(&self) -> Value {
        let r = &self.report;
        let b = r.index.spec.bounds;
        json!({
            "rewritten_data_files_count": r.rewritten_data_files_count,
            "added_data_files_count": r.added_data_files_count,
            "rewritten_bytes_count": r.rewritten_bytes_count,
            "failed_data_files_count": r.failed_data_files_count,
            "removed_delete_files_count": r.removed_delete_files_count,
            "added_bytes_count": r.added_bytes_count,
            "rewritten_records_count": r.rewritten_records_count,
            "snapshot_ids": r.snapshot_ids,
            // The Hilbert index, for a Hilbert rewrite; other orders have none.
            "index": if r.order.is_hilbert() {
                json!({
                    "column": r.index.column,
                    "precision": r.index.spec.precision,
                    "bounds": [b.min_x, b.min_y, b.max_x, b.max_y],
                })
            } else {
                Value::Null
            },
            "elapsed_ms": self.elapsed.as_secs_f64() * 1e3,
        })
    }
}

/// Runs the request on the table it names; `bar` follows the input bytes written.
///
/// The table checks everything before writing (column, CRS, curve bounds covering every
/// file's box, options) and commits one REPLACE snapshot.
pub fn rewrite(
    ctx: &Context,
    request: &RewriteRequest,
    bar: &ProgressBar,
) -> Result<(Table, RewriteSummary)> {
    let ident = ctx.resolve(&request.table)?;
    let table = Table::load(ctx.dyn_catalog(), &ident)?;
    let start = Instant::now();
    let result = table.rewrite_request(request).and_then(|rewrite| {
        rewrite
            .on_progress(|done, total| {
                bar.set_length(total);
                bar.set_position(done);
            })
            .execute()
    });
    bar.finish_and_clear();
    let (table, report) = result?;
    Ok((
        table,
        RewriteSummary {
            report,
            elapsed: start.elapsed(),
        },
    ))
}
