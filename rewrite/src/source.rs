//! Reading input Parquet files: footers, the geometry column, whole batches.

use std::sync::Arc;

use arrow_schema::{DataType, SchemaRef};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder,
};

use crate::RewriteError;
use crate::storage::{InputBytes, InputStorage};

/// Rows per batch read from the inputs.
pub(crate) const READ_BATCH_ROWS: usize = 32 * 1024;

/// An opened input: its footer and the index of the geometry column.
pub(crate) struct Source {
    pub metadata: ArrowReaderMetadata,
    pub geometry_index: usize,
    location: String,
    input: InputBytes,
}

impl Source {
    /// Opens `location`, reads its footer and finds the WKB column `column`.
    pub fn open(
        storage: &dyn InputStorage,
        location: &str,
        column: &str,
    ) -> Result<Source, RewriteError> {
        let file = storage
            .open(location)
            .map_err(|e| RewriteError::io("cannot open input file", location, e))?;
        let input = InputBytes::new(file);
        let metadata = ArrowReaderMetadata::load(&input, ArrowReaderOptions::new())
            .map_err(|e| RewriteError::parquet(location, e))?;
        let schema = metadata.schema();
        let wkb = |f: &arrow_schema::Field| {
            matches!(
                f.data_type(),
                DataType::Binary | DataType::LargeBinary | DataType::BinaryView
            )
        };
        // Read as a target schema, the column is the file's field of the same id (it may have
        // been renamed since the file was written); otherwise it is found by name.
        let target_id = storage.target_schema().and_then(|t| {
            let target = t.arrow_schema();
            crate::arrow_field_id(target.field_with_name(column).ok()?)
        });
        let by_id = target_id.and_then(|id| {
            schema
                .fields()
                .iter()
                .position(|f| crate::arrow_field_id(f) == Some(id) && wkb(f))
        });
        let geometry_index = by_id
            .or_else(|| {
                schema
                    .fields()
                    .iter()
                    .position(|f| f.name() == column && wkb(f))
            })
            .ok_or_else(|| RewriteError::MissingGeometryColumn {
                path: location.to_string(),
                column: column.to_string(),
                found: schema
                    .fields()
                    .iter()
                    .map(|f| format!("{} ({})", f.name(), f.data_type()))
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        Ok(Source {
            metadata,
            geometry_index,
            location: location.to_string(),
            input,
        })
    }

    pub fn schema(&self) -> &SchemaRef {
        self.metadata.schema()
    }

    /// Uncompressed bytes of all row groups: the in-memory size estimate of the file.
    pub fn uncompressed_bytes(&self) -> u64 {
        self.metadata
            .metadata()
            .row_groups()
            .iter()
            .map(|rg| rg.total_byte_size().max(0) as u64)
            .sum()
    }

    /// Rows of each row group, in order.
    pub fn row_group_rows(&self) -> Vec<u64> {
        self.metadata
            .metadata()
            .row_groups()
            .iter()
            .map(|rg| rg.num_rows().max(0) as u64)
            .collect()
    }

    /// The input's location.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// A reader over `row_groups` of the root columns `roots` only; its batches hold them in
    /// the file's column order, whatever the order of `roots`.
    pub fn reader_columns(
        &self,
        row_groups: Vec<usize>,
        roots: &[usize],
    ) -> Result<ParquetRecordBatchReader, RewriteError> {
        let mask = ProjectionMask::roots(
            self.metadata.metadata().file_metadata().schema_descr(),
            roots.iter().copied(),
        );
        ParquetRecordBatchReaderBuilder::new_with_metadata(
            self.input.clone(),
            self.metadata.clone(),
        )
        .with_batch_size(READ_BATCH_ROWS)
        .with_row_groups(row_groups)
        .with_projection(mask)
        .build()
        .map_err(|e| RewriteError::parquet(&self.location, e))
    }

    /// A reader over `row_groups`, all columns or only the geometry column. On a store that
    /// prefers it, the needed column chunks are fetched first, in one batch of ranges (so
    /// memory holds one row group's compressed chunks per reader, outside the sort budget).
    pub fn reader(
        &self,
        row_groups: Vec<usize>,
        geometry_only: bool,
    ) -> Result<ParquetRecordBatchReader, RewriteError> {
        let parquet = self.metadata.metadata();
        let descr = parquet.file_metadata().schema_descr();
        let ranges = row_groups
            .iter()
            .filter_map(|&rg| parquet.row_groups().get(rg))
            .flat_map(|rg| {
                rg.columns().iter().enumerate().filter_map(|(leaf, c)| {
                    let wanted =
                        !geometry_only || descr.get_column_root_idx(leaf) == self.geometry_index;
                    let (start, len) = c.byte_range();
                    wanted.then_some(start..start + len)
                })
            })
            .collect();
        let input = self
            .input
            .prefetch(ranges)
            .map_err(|e| RewriteError::io("cannot read input file", &self.location, e))?;
        let mut builder =
            ParquetRecordBatchReaderBuilder::new_with_metadata(input, self.metadata.clone())
                .with_batch_size(READ_BATCH_ROWS)
                .with_row_groups(row_groups);
        if geometry_only {
            let mask = ProjectionMask::roots(
                self.metadata.metadata().file_metadata().schema_descr(),
                [self.geometry_index],
            );
            builder = builder.with_projection(mask);
        }
        builder
            .build()
            .map_err(|e| RewriteError::parquet(&self.location, e))
    }
}

/// Whether two schemas hold the same columns in the same order with the same types.
pub(crate) fn same_columns(a: &SchemaRef, b: &SchemaRef) -> bool {
    Arc::ptr_eq(a, b)
        || (a.fields().len() == b.fields().len()
            && a.fields()
                .iter()
                .zip(b.fields())
                .all(|(x, y)| x.name() == y.name() && x.data_type() == y.data_type()))
}
