//! `CALL <catalog>.system.add_bbox_columns(...)` in the engine (seed 002): the table crate adds
//! the four bbox columns before the geometry and sets their metrics, then (unless
//! `backfill => false`) backfills them partition by partition. The result row is
//! `added_columns` (comma-joined, empty when they existed), then the backfill's counts:
//! `partitions_backfilled`, `partitions_skipped`, `rewritten_data_files_count`,
//! `added_data_files_count`, `rewritten_records_count`, `files_total`, `files_read_before`,
//! `files_read_after` (the files a bbox-column range query over the window reads), all null
//! when the backfill did not run.

use std::sync::Arc;

use arrow_array::{RecordBatch, StringArray, UInt64Array};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_geostats::BBox;
use geoberg_sql::AddBBoxColumnsRequest;
use geoberg_table::{BackfillReport, Catalog};

use crate::error::Result;
use crate::statement_support::load;

/// The backfill's result columns, in order, after `added_columns`.
const BACKFILL_COLUMNS: [&str; 8] = [
    "partitions_backfilled",
    "partitions_skipped",
    "rewritten_data_files_count",
    "added_data_files_count",
    "rewritten_records_count",
    "files_total",
    "files_read_before",
    "files_read_after",
];

/// Runs the procedure on the table the request names.
pub(crate) fn run(
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    request: &AddBBoxColumnsRequest,
    notices: &mut Vec<String>,
) -> Result<Vec<RecordBatch>> {
    let table = load(catalog, catalog_name, &request.table)?;
    let (table, added) = table.add_bbox_columns(&request.column, request.names.clone())?;
    notices.push(format!("{}: {added}", table.ident()));
    let backfill = match request.backfill {
        true => {
            let mut backfill = table.backfill_bbox_columns(&request.column);
            if let Some(filter) = &request.filter {
                backfill = backfill.filter(filter.clone());
            }
            if let Some([min_x, min_y, max_x, max_y]) = request.window {
                backfill = backfill.window(BBox::new(min_x, min_y, max_x, max_y));
            }
            let (_, report) = backfill.execute()?;
            notices.extend(report.to_string().lines().map(str::to_string));
            Some(report)
        }
        false => {
            notices.push(format!(
                "backfill => false: nothing was rewritten; files written before the columns \
                 existed keep null bbox values until a backfill (CALL add_bbox_columns without \
                 backfill => false, or geoberg bbox-columns backfill {})",
                table.ident()
            ));
            None
        }
    };
    result_row(&added.added.join(","), backfill.as_ref())
}

/// The one result row.
fn result_row(added_columns: &str, backfill: Option<&BackfillReport>) -> Result<Vec<RecordBatch>> {
    let counts: [Option<u64>; 8] = match backfill {
        Some(r) => [
            r.partitions_backfilled as u64,
            r.partitions_skipped as u64,
            r.rewritten_data_files_count,
            r.added_data_files_count,
            r.rewritten_records_count,
            r.files_total as u64,
            r.files_read_before as u64,
            r.files_read_after as u64,
        ]
        .map(Some),
        None => [None; 8],
    };
    let mut fields = vec![Field::new("added_columns", ArrowType::Utf8, false)];
    fields.extend(
        BACKFILL_COLUMNS
            .iter()
            .map(|name| Field::new(*name, ArrowType::UInt64, true)),
    );
    let mut columns: Vec<Arc<dyn arrow_array::Array>> =
        vec![Arc::new(StringArray::from(vec![added_columns]))];
    columns.extend(
        counts
            .iter()
            .map(|c| Arc::new(UInt64Array::from(vec![*c])) as _),
    );
    Ok(vec![RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?])
}
