//! DELETE and UPDATE on a table: find the matching rows (files pruned first by the filter's
//! predicate and the files' statistics), then one [`RowDelta`] commit.

use std::fmt;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::Schema;

use crate::error::{Error, Result};
use crate::metadata_columns::LAST_UPDATED_SEQUENCE_NUMBER_COLUMN;
use crate::ops::row_delta::{RowChangeKind, RowDeltaReport, labelled, without_position};
use crate::properties::RowChangeMode;
use crate::row_filter::RowFilter;
use crate::table::Table;

/// The new values of one column for a batch of matched rows.
pub type ColumnUpdate = Arc<dyn Fn(&RecordBatch) -> Result<ArrayRef> + Send + Sync>;

/// A DELETE being configured; see [`Table::delete`].
#[derive(Debug)]
pub struct DeleteRows<'a> {
    table: &'a Table,
    filter: RowFilter,
    mode: Option<RowChangeMode>,
}

/// An UPDATE being configured; see [`Table::update`].
pub struct UpdateRows<'a> {
    table: &'a Table,
    filter: RowFilter,
    set: Vec<(String, ColumnUpdate)>,
    mode: Option<RowChangeMode>,
}

impl fmt::Debug for UpdateRows<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpdateRows")
            .field("table", self.table.ident())
            .field("filter", &self.filter)
            .field("set", &self.set.iter().map(|(c, _)| c).collect::<Vec<_>>())
            .field("mode", &self.mode)
            .finish()
    }
}

impl Table {
    /// `DELETE FROM t WHERE <filter>`: removes the matching rows in one snapshot, written as
    /// `write.delete.mode` says (copy-on-write by default).
    ///
    /// ```no_run
    /// # fn f(table: geoberg_table::Table) -> geoberg_table::Result<()> {
    /// use geoberg_table::RowFilter;
    /// let filter = geoberg_sql::parse_condition(
    ///     "ST_Intersects(geom, ST_GeomFromText('POLYGON ((0 0, 1 0, 1 1, 0 1, 0 0))', 4326))",
    /// )?;
    /// let (table, report) = table.delete(RowFilter::from_predicate(filter)).execute()?;
    /// println!("{report}");
    /// # Ok(()) }
    /// ```
    pub fn delete(&self, filter: RowFilter) -> DeleteRows<'_> {
        DeleteRows {
            table: self,
            filter,
            mode: None,
        }
    }

    /// `UPDATE t SET ... WHERE <filter>`: replaces the matching rows by their updated versions
    /// in one snapshot (`write.update.mode`); on v3 they keep their `_row_id` and get a new
    /// `_last_updated_sequence_number`.
    pub fn update(&self, filter: RowFilter) -> UpdateRows<'_> {
        UpdateRows {
            table: self,
            filter,
            set: Vec::new(),
            mode: None,
        }
    }
}

impl DeleteRows<'_> {
    /// Copy-on-write or merge-on-read, whatever the table property says.
    pub fn mode(mut self, mode: RowChangeMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Finds the rows and commits their deletion.
    pub fn execute(self) -> Result<(Table, RowDeltaReport)> {
        let table = self.table;
        let mut delta = table.row_delta(RowChangeKind::Delete);
        if let Some(m) = self.mode {
            delta.mode(m);
        }
        let candidates = candidate_files(table, &self.filter)?;
        delta.count(0, 0, candidates.len());
        if !candidates.is_empty() {
            let (batches, _) = table
                .scan()
                .files(candidates)
                .with_file_position(true)
                .execute()?;
            for batch in &batches {
                let matched = self.filter.matches(&without_position(batch)?)?;
                delta.delete_marked(batch, &matched)?;
            }
        }
        delta.commit()
    }
}

impl UpdateRows<'_> {
    /// `SET column = <value of f on the matched rows>`; columns not set keep their values. New
    /// geometry values are in the column's CRS (an EWKB value's own SRID is checked).
    pub fn set(
        mut self,
        column: impl Into<String>,
        f: impl Fn(&RecordBatch) -> Result<ArrayRef> + Send + Sync + 'static,
    ) -> Self {
        self.set.push((column.into(), Arc::new(f)));
        self
    }

    /// Copy-on-write or merge-on-read, whatever the table property says.
    pub fn mode(mut self, mode: RowChangeMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Finds the rows, computes their new versions and commits both.
    pub fn execute(self) -> Result<(Table, RowDeltaReport)> {
        let table = self.table;
        let schema = table.metadata().current_schema();
        for (column, _) in &self.set {
            if schema.field_by_name(column).is_none() {
                return Err(table.no_such_column(column));
            }
        }
        let v3 = table.metadata().format_version() >= iceberg::spec::FormatVersion::V3;
        let mut delta = table.row_delta(RowChangeKind::Update);
        if let Some(m) = self.mode {
            delta.mode(m);
        }
        let candidates = candidate_files(table, &self.filter)?;
        let files = candidates.len();
        let mut updated = 0u64;
        if !candidates.is_empty() {
            let (batches, _) = table
                .scan()
                .files(candidates)
                .with_file_position(true)
                .with_row_lineage(v3)
                .execute()?;
            for batch in &batches {
                let matched = self.filter.matches(&without_position(batch)?)?;
                if matched.true_count() == 0 {
                    continue;
                }
                delta.delete_marked(batch, &matched)?;
                let rows = arrow_select::filter::filter_record_batch(batch, &matched)?;
                updated += rows.num_rows() as u64;
                let new = self.updated(&without_position(&rows)?)?;
                delta.add_rows([labelled(table, &new)?]);
            }
        }
        delta.count(updated, 0, files);
        delta.commit()
    }

    /// The new versions of matched rows: assigned columns replaced; on v3 the row keeps its
    /// `_row_id` and its `_last_updated_sequence_number` becomes null (it inherits the new
    /// file's sequence number, as the spec requires of an updated row).
    fn updated(&self, rows: &RecordBatch) -> Result<RecordBatch> {
        let schema = rows.schema();
        let mut columns = rows.columns().to_vec();
        for (column, f) in &self.set {
            let i = schema.index_of(column)?;
            let value = f(rows)?;
            if value.len() != rows.num_rows() {
                return Err(Error::InvalidData(format!(
                    "SET {column}: {} values for {} rows",
                    value.len(),
                    rows.num_rows()
                )));
            }
            columns[i] = if value.data_type() == schema.field(i).data_type() {
                value
            } else {
                arrow_cast::cast(&value, schema.field(i).data_type())?
            };
        }
        if let Ok(i) = schema.index_of(LAST_UPDATED_SEQUENCE_NUMBER_COLUMN) {
            columns[i] =
                arrow_array::new_null_array(&arrow_schema::DataType::Int64, rows.num_rows());
        }
        Ok(RecordBatch::try_new(
            Arc::new(Schema::new(schema.fields().clone())),
            columns,
        )?)
    }
}

/// The live data files that may hold a matching row (their statistics decide), by path.
fn candidate_files(table: &Table, filter: &RowFilter) -> Result<Vec<String>> {
    let files = match filter.prune() {
        Some(p) => table.files_matching(p)?,
        None => table.data_files()?,
    };
    Ok(files.iter().map(|f| f.file_path().to_string()).collect())
}
