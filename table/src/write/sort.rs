//! Each data file an append writes is sorted by the table's `write.sort-order` (what Spark's
//! `sortWithinPartitions` does before an Iceberg write; seed 001's recipe), so that a file's
//! column bounds are tight and readers that prune by them skip more.

use arrow_array::RecordBatch;
use arrow_select::concat::concat_batches;
use arrow_select::take::take_record_batch;
use geoberg_crs::ColumnType;
use geoberg_rewrite::{RowOrder, sort_indices};

use crate::error::Result;
use crate::table::Table;

/// The sort one table's appends apply to every data file.
#[derive(Clone)]
pub(crate) struct FileSorter {
    order: RowOrder,
    geography: Vec<String>,
}

impl FileSorter {
    /// The sorter of `table`'s `write.sort-order`, when it has a column or z-order one. A
    /// `hilbert(...)` order is left to rewrites (`CREATE SPATIAL INDEX`), which key files by a
    /// curve over the whole table.
    pub(crate) fn of(table: &Table) -> Result<Option<FileSorter>> {
        let Some(order) = table.properties()?.sort_order else {
            return Ok(None);
        };
        let order = crate::sort_order::row_order(table, &order)?;
        if matches!(order, RowOrder::Hilbert | RowOrder::InputOrder) {
            return Ok(None);
        }
        Ok(Some(FileSorter::new(table, order)))
    }

    /// The sorter of a column or z-order `order` of `table`.
    pub(crate) fn new(table: &Table, order: RowOrder) -> FileSorter {
        let geography = table
            .geo_columns()
            .iter()
            .filter(|g| matches!(g.column_type, ColumnType::Geography { .. }))
            .map(|g| g.name.clone())
            .collect();
        FileSorter { order, geography }
    }

    /// The table sort order id the sorted files declare (column orders only).
    pub(crate) fn sort_order_id(&self, table: &Table) -> Option<i32> {
        crate::sort_order::file_sort_order_id(table, &self.order)
    }

    /// The rows of one data file's batches, as one batch in the sort order (ties in input
    /// order).
    pub(crate) fn sort(&self, batches: Vec<RecordBatch>) -> Result<Vec<RecordBatch>> {
        let Some(first) = batches.first() else {
            return Ok(batches);
        };
        let all = concat_batches(&first.schema(), &batches)?;
        let permutation = sort_indices(&all, &self.order, &self.geography)?;
        Ok(vec![take_record_batch(&all, &permutation)?])
    }
}
