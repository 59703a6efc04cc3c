//! Reading input Parquet files: footers, the geometry column, whole batches.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_schema::{DataType, SchemaRef};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder,
};

use crate::RewriteError;

/// Rows per batch read from the inputs.
pub(crate) const READ_BATCH_ROWS: usize = 32 * 1024;

/// An opened input: its footer and the index of the geometry column.
pub(crate) struct Source {
    pub metadata: ArrowReaderMetadata,
    pub geometry_index: usize,
}

impl Source {
    /// Opens `path`, reads its footer and finds the WKB column `column`.
    pub fn open(path: &Path, column: &str) -> Result<Source, RewriteError> {
        let file =
            File::open(path).map_err(|e| RewriteError::io("cannot open input file", path, e))?;
        let metadata = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
            .map_err(|e| RewriteError::parquet(path, e))?;
        let schema = metadata.schema();
        let geometry_index = schema
            .fields()
            .iter()
            .position(|f| {
                f.name() == column
                    && matches!(
                        f.data_type(),
                        DataType::Binary | DataType::LargeBinary | DataType::BinaryView
                    )
            })
            .ok_or_else(|| RewriteError::MissingGeometryColumn {
                path: path.to_path_buf(),
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

    /// A reader over `row_groups`, all columns or only the geometry column.
    pub fn reader(
        &self,
        path: &Path,
        row_groups: Vec<usize>,
        geometry_only: bool,
    ) -> Result<ParquetRecordBatchReader, RewriteError> {
        // A file of its own: a `try_clone` shares the file offset, and Parquet's `File` reader
        // seeks then reads, so readers of two row groups of one file on two threads would read
        // each other's bytes.
        let file =
            File::open(path).map_err(|e| RewriteError::io("cannot reopen input file", path, e))?;
        let mut builder =
            ParquetRecordBatchReaderBuilder::new_with_metadata(file, self.metadata.clone())
                .with_batch_size(READ_BATCH_ROWS)
                .with_row_groups(row_groups);
        if geometry_only {
            let mask = ProjectionMask::roots(
                self.metadata.metadata().file_metadata().schema_descr(),
                [self.geometry_index],
            );
            builder = builder.with_projection(mask);
        }
        builder.build().map_err(|e| RewriteError::parquet(path, e))
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
