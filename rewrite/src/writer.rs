//! Output Parquet files rolled at sorted boundaries, and what they report to the commit.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use arrow_schema::SchemaRef;
use geoberg_geostats::{BBox, BBoxAccumulator, GeographyBBoxAccumulator, GeostatsError};
use parquet::arrow::add_encoded_arrow_schema_to_metadata;
use parquet::arrow::arrow_writer::{ArrowColumnChunk, ArrowRowGroupWriterFactory, compute_leaves};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, SchemaDescriptor};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::dictionary::distinct_columns;
use crate::storage::OutputStream;
use crate::{Extent, KeyRange, OutputCodec, PartitionKey, RewriteError, RowClass};

/// Metrics of one leaf column, summed over row groups: what Iceberg's `value_counts`,
/// `null_value_counts` and `column_sizes` need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnMetrics {
    /// Parquet field id (`PARQUET:field_id`), which is the Iceberg field id.
    pub field_id: Option<i32>,
    /// Dotted column path.
    pub path: String,
    /// Values including nulls.
    pub value_count: u64,
    /// Null values, when the writer recorded them.
    pub null_count: Option<u64>,
    /// Compressed bytes of the column.
    pub compressed_bytes: u64,
}

/// A data file written by the rewrite, with the statistics its manifest entry needs.
///
/// Lower/upper bounds of ordinary columns are left to `table`, which maps Parquet statistics to
/// Iceberg types (and truncation rules) from [`OutputFile::footer`]; the geometry bounds are in
/// [`OutputFile::bbox`] (GEOMETRY columns have no Parquet min/max), those of the other
/// geography columns in [`OutputFile::geography_bboxes`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OutputFile {
    /// Where the file was written.
    pub location: String,
    /// Its size in bytes.
    pub file_size_bytes: u64,
    /// Rows in it.
    pub record_count: u64,
    /// Partition of its rows.
    pub partition: PartitionKey,
    /// Task that wrote it.
    pub task: usize,
    /// Class of its rows.
    pub class: RowClass,
    /// Smallest and largest Hilbert key of its rows.
    pub key_range: KeyRange,
    /// Bounds of the keyed column (`None` when every value is null or empty). For a geography
    /// column they are bounds on the sphere: the X range wraps the antimeridian
    /// (`min_x > max_x`) when that is narrower, as the Iceberg spec's geography bounds do.
    pub bbox: Option<Extent>,
    /// Bounds on the sphere of the plan's other geography columns, by column name (X may wrap;
    /// `None` when every value is null or empty).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub geography_bboxes: BTreeMap<String, Option<Extent>>,
    /// Per-leaf-column counts and sizes.
    pub columns: Vec<ColumnMetrics>,
    /// NaN values of each top-level float and double column, by field id (what Iceberg's
    /// `nan_value_counts` holds; Parquet's statistics do not count them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nan_counts: BTreeMap<i32, u64>,
    /// The Parquet footer, for further metrics; not serialized.
    #[serde(skip)]
    pub footer: Option<Arc<ParquetMetaData>>,
}

/// Settings shared by every output file of a rewrite.
pub(crate) struct WriterConfig {
    pub arrow_schema: SchemaRef,
    pub parquet_schema: SchemaDescriptor,
    pub geometry_index: usize,
    /// Whether the keyed column holds geography (bounded on the sphere).
    pub geometry_on_sphere: bool,
    /// The other geography columns: index in `arrow_schema` and name.
    pub geography: Vec<(usize, String)>,
    pub codec: OutputCodec,
    pub row_group_rows: usize,
    pub roll_bytes: u64,
    /// Columns written without dictionary encoding: those whose input pages fell back to plain,
    /// where building a dictionary first only costs time (each file also leaves out the
    /// columns its first rows show to be mostly distinct: [`distinct_columns`]).
    pub plain_columns: Vec<ColumnPath>,
}

impl WriterConfig {
    /// Writer properties of a file whose first rows are `first`, with the Arrow schema in the
    /// key-value metadata as `ArrowWriter` stores it.
    fn properties(&self, first: &RecordBatch) -> WriterProperties {
        let compression = match self.codec {
            OutputCodec::Zstd => Compression::ZSTD(ZstdLevel::try_new(1).unwrap_or_default()),
            OutputCodec::Snappy => Compression::SNAPPY,
            OutputCodec::Uncompressed => Compression::UNCOMPRESSED,
        };
        let mut builder = WriterProperties::builder()
            .set_compression(compression)
            .set_max_row_group_row_count(Some(self.row_group_rows));
        for c in self
            .plain_columns
            .iter()
            .cloned()
            .chain(distinct_columns(first))
        {
            builder = builder.set_column_dictionary_enabled(c, false);
        }
        let mut properties = builder.build();
        add_encoded_arrow_schema_to_metadata(&self.arrow_schema, &mut properties);
        properties
    }
}

/// An output file's byte sink, from [`crate::RewriteStorage::create`].
pub(crate) type OutputWriter = Box<dyn OutputStream>;

/// Opens the next output file: its location and its writer.
type NextFile<'a> = Box<dyn FnMut() -> Result<(String, OutputWriter), RewriteError> + 'a>;

/// The running bounds of one column of an open file.
enum Bounds {
    Planar(BBoxAccumulator),
    Sphere(Box<GeographyBBoxAccumulator>),
}

impl Bounds {
    fn new(sphere: bool) -> Self {
        if sphere {
            Bounds::Sphere(Box::new(GeographyBBoxAccumulator::new()))
        } else {
            Bounds::Planar(BBoxAccumulator::new())
        }
    }

    fn add(&mut self, array: &dyn Array) -> Result<(), GeostatsError> {
        match self {
            Bounds::Planar(a) => a.add_wkb_array(array),
            Bounds::Sphere(a) => a.add_wkb_array(array),
        }
    }

    fn finish(&self) -> Option<Extent> {
        let b: Option<BBox> = match self {
            Bounds::Planar(a) => a.finish(),
            Bounds::Sphere(a) => a.finish(),
        };
        b.map(Extent::from)
    }
}

struct OpenFile {
    path: String,
    writer: SerializedFileWriter<OutputWriter>,
    columns: ArrowRowGroupWriterFactory,
    bbox: Bounds,
    /// Bounds of the other geography columns, in `WriterConfig::geography` order.
    geography: Vec<Bounds>,
    /// NaN values of each top-level float or double column, by field id.
    nan_counts: BTreeMap<i32, u64>,
    first_key: u64,
    last_key: u64,
    rows: u64,
    /// Reached the roll size: closed at the next key change.
    full: bool,
}

/// Writes sorted batches, one row group each, starting a new file when the current one reaches
/// the roll size. The leaf columns of a row group are encoded in parallel, so that a single
/// output file keeps every core busy.
pub(crate) struct RollingWriter<'a> {
    config: &'a WriterConfig,
    next_file: NextFile<'a>,
    partition: PartitionKey,
    task: usize,
    class: RowClass,
    current: Option<OpenFile>,
    pub finished: Vec<OutputFile>,
}

impl<'a> RollingWriter<'a> {
    pub fn new(
        config: &'a WriterConfig,
        partition: PartitionKey,
        task: usize,
        class: RowClass,
        next_file: impl FnMut() -> Result<(String, OutputWriter), RewriteError> + 'a,
    ) -> Self {
        RollingWriter {
            config,
            next_file: Box::new(next_file),
            partition,
            task,
            class,
            current: None,
            finished: Vec::new(),
        }
    }

    /// Appends sorted rows; `keys` are their keys, ascending and continuing those written before.
    ///
    /// A file that reached the roll size is closed only where the key changes: rows that share
    /// its last key still go into it, so that no key spans two files and the files of a task
    /// have disjoint key ranges.
    pub fn write(&mut self, batch: &RecordBatch, keys: &[u64]) -> Result<(), RewriteError> {
        debug_assert_eq!(batch.num_rows(), keys.len());
        let mut batch = batch.clone();
        let mut keys = keys;
        if let Some(f) = self.current.as_ref().filter(|f| f.full) {
            let same = keys.partition_point(|&k| k <= f.last_key);
            if same > 0 {
                self.append(&batch.slice(0, same), &keys[..same])?;
            }
            if same == keys.len() {
                return Ok(());
            }
            self.close_current()?;
            batch = batch.slice(same, keys.len() - same);
            keys = &keys[same..];
        }
        self.append(&batch, keys)
    }

    /// Writes `batch` as a row group of the open file (opening one first if none is), and
    /// marks the file full once it reaches the roll size.
    fn append(&mut self, batch: &RecordBatch, keys: &[u64]) -> Result<(), RewriteError> {
        let (Some(&first_key), Some(&last_key)) = (keys.first(), keys.last()) else {
            return Ok(());
        };
        if self.current.is_none() {
            let (path, file) = (self.next_file)()?;
            let writer = SerializedFileWriter::new(
                file,
                self.config.parquet_schema.root_schema_ptr(),
                Arc::new(self.config.properties(batch)),
            )
            .map_err(|e| RewriteError::parquet(&path, e))?;
            let columns =
                ArrowRowGroupWriterFactory::new(&writer, self.config.arrow_schema.clone());
            self.current = Some(OpenFile {
                path,
                writer,
                columns,
                bbox: Bounds::new(self.config.geometry_on_sphere),
                geography: self
                    .config
                    .geography
                    .iter()
                    .map(|_| Bounds::new(true))
                    .collect(),
                nan_counts: BTreeMap::new(),
                first_key,
                last_key,
                rows: 0,
                full: false,
            });
        }
        let f = self.current.as_mut().expect("file was just opened");
        let config = self.config;
        let columns = std::iter::once((&mut f.bbox, config.geometry_index)).chain(
            f.geography
                .iter_mut()
                .zip(&config.geography)
                .map(|(b, (i, _))| (b, *i)),
        );
        for (bounds, index) in columns {
            bounds
                .add(batch.column(index).as_ref())
                .map_err(|source| RewriteError::Geometry {
                    column: config.arrow_schema.field(index).name().clone(),
                    path: f.path.clone(),
                    source,
                })?;
        }
        count_nans(&mut f.nan_counts, &config.arrow_schema, batch);
        write_row_group(f, &self.config.arrow_schema, batch)
            .map_err(|e| RewriteError::parquet(&f.path, e))?;
        f.last_key = last_key;
        f.rows += batch.num_rows() as u64;
        f.full = f.writer.bytes_written() as u64 >= self.config.roll_bytes;
        Ok(())
    }

    /// Closes the open file, if any.
    pub fn close_current(&mut self) -> Result<(), RewriteError> {
        let Some(mut f) = self.current.take() else {
            return Ok(());
        };
        // `finish` writes the footer; the sink's own `finish` completes the file.
        let footer = f
            .writer
            .finish()
            .map_err(|e| RewriteError::parquet(&f.path, e))?;
        let file_size_bytes = f.writer.bytes_written() as u64;
        f.writer
            .inner_mut()
            .finish()
            .map_err(|e| RewriteError::io("cannot complete output file", &f.path, e))?;
        self.finished.push(OutputFile {
            columns: column_metrics(&footer),
            location: f.path,
            file_size_bytes,
            record_count: f.rows,
            partition: self.partition.clone(),
            task: self.task,
            class: self.class,
            key_range: KeyRange {
                first: f.first_key,
                last: f.last_key,
            },
            bbox: f.bbox.finish(),
            geography_bboxes: self
                .config
                .geography
                .iter()
                .zip(&f.geography)
                .map(|((_, name), b)| (name.clone(), b.finish()))
                .collect(),
            nan_counts: std::mem::take(&mut f.nan_counts),
            footer: Some(Arc::new(footer)),
        });
        Ok(())
    }
}

/// Adds the NaNs of the batch's top-level float and double columns (with field ids).
fn count_nans(counts: &mut BTreeMap<i32, u64>, schema: &SchemaRef, batch: &RecordBatch) {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, Float64Type};
    use arrow_schema::DataType;
    for (i, field) in schema.fields().iter().enumerate() {
        let Some(id) = crate::arrow_field_id(field) else {
            continue;
        };
        let column = batch.column(i);
        let nans = match field.data_type() {
            DataType::Float64 => column
                .as_primitive::<Float64Type>()
                .iter()
                .filter(|v| v.is_some_and(f64::is_nan))
                .count(),
            DataType::Float32 => column
                .as_primitive::<Float32Type>()
                .iter()
                .filter(|v| v.is_some_and(f32::is_nan))
                .count(),
            _ => continue,
        };
        *counts.entry(id).or_default() += nans as u64;
    }
}

/// Encodes `batch` as the next row group of `f`, one rayon job per leaf column.
fn write_row_group(
    f: &mut OpenFile,
    schema: &SchemaRef,
    batch: &RecordBatch,
) -> Result<(), parquet::errors::ParquetError> {
    let writers = f
        .columns
        .create_column_writers(f.writer.flushed_row_groups().len())?;
    let mut leaves = Vec::with_capacity(writers.len());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        leaves.extend(compute_leaves(field, column)?);
    }
    let chunks: Vec<ArrowColumnChunk> = writers
        .into_par_iter()
        .zip(leaves)
        .map(|(mut writer, leaf)| {
            writer.write(&leaf)?;
            writer.close()
        })
        .collect::<Result<_, _>>()?;
    let mut row_group = f.writer.next_row_group()?;
    for chunk in chunks {
        chunk.append_to_row_group(&mut row_group)?;
    }
    row_group.close()?;
    Ok(())
}

fn column_metrics(footer: &ParquetMetaData) -> Vec<ColumnMetrics> {
    let schema = footer.file_metadata().schema_descr();
    let mut out: Vec<ColumnMetrics> = schema
        .columns()
        .iter()
        .map(|c| {
            let info = c.self_type().get_basic_info();
            ColumnMetrics {
                field_id: info.has_id().then(|| info.id()),
                path: c.path().string(),
                value_count: 0,
                null_count: Some(0),
                compressed_bytes: 0,
            }
        })
        .collect();
    for rg in footer.row_groups() {
        for (m, c) in out.iter_mut().zip(rg.columns()) {
            m.value_count += c.num_values().max(0) as u64;
            m.compressed_bytes += c.compressed_size().max(0) as u64;
            m.null_count = match (
                m.null_count,
                c.statistics().and_then(|s| s.null_count_opt()),
            ) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
        }
    }
    out
}
