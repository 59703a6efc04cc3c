//! Parquet data files as the spec wants them (Appendix G, and Parquet's `Geospatial.md`):
//! field ids on every column, WKB geometry with the GEOMETRY / GEOGRAPHY logical type and its
//! CRS, zstd, row groups of `geoberg.parquet.row-group-rows`; bounds of geo columns computed
//! while writing (planar, or on the sphere for geography).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Schema as ArrowSchema};
use geoberg_crs::ColumnType;
use geoberg_geostats::{BBox, BBoxAccumulator, GeographyBBoxAccumulator};
use iceberg::spec::{DataFile, Struct};
use parquet::arrow::ArrowSchemaConverter;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::basic::{Compression, LogicalType, Repetition, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::{SchemaDescriptor, Type as ParquetType};

use super::align::{BatchAligner, ColumnPlan};
use crate::data_file::{WrittenFile, data_file_entry};
use crate::error::Result;
use crate::metrics::{MetricsConfig, MetricsMode};
use crate::storage::join;
use crate::table::Table;

/// Writes data files of one table version.
pub(crate) struct DataFileWriter<'a> {
    table: &'a Table,
    aligner: &'a BatchAligner,
    metrics: MetricsConfig,
    properties: WriterProperties,
    parquet_schema: SchemaDescriptor,
}

impl<'a> DataFileWriter<'a> {
    pub(crate) fn new(table: &'a Table, aligner: &'a BatchAligner) -> Result<Self> {
        // Before the first Parquet write of the process: row groups of GEOGRAPHY columns get
        // sound spherical boxes (parquet's default factory writes none). When another factory
        // was installed first this is a quiet no-op: the file's Iceberg bounds still come from
        // the accumulators below, only row-group skipping on geography columns is lost.
        geoberg_geostats::install_parquet_geo_stats();
        let props = table.properties()?;
        let properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_max_row_group_row_count(Some(props.row_group_rows))
            .build();
        Ok(DataFileWriter {
            table,
            aligner,
            metrics: table.metrics_config()?,
            properties,
            parquet_schema: parquet_schema(&aligner.columns, &aligner.schema)?,
        })
    }

    /// Writes aligned `batches` of one partition as one new data file under `<table>/data/`.
    pub(crate) fn write(&self, partition: Struct, batches: &[RecordBatch]) -> Result<DataFile> {
        let plan = &self.aligner.columns;
        let options = ArrowWriterOptions::new()
            .with_properties(self.properties.clone())
            .with_parquet_schema(self.parquet_schema.clone());
        let mut buf = Vec::new();
        let mut writer =
            ArrowWriter::try_new_with_options(&mut buf, self.aligner.schema.clone(), options)?;
        let mut planar: HashMap<usize, BBoxAccumulator> = HashMap::new();
        let mut geographic: HashMap<usize, GeographyBBoxAccumulator> = HashMap::new();
        let mut nans: HashMap<i32, u64> = HashMap::new();
        for batch in batches {
            for (i, c) in plan.iter().enumerate() {
                let array = batch.column(i);
                let mode = self.metrics.mode(c.field.id);
                if mode == MetricsMode::None {
                    continue;
                }
                match &c.geo {
                    Some(ColumnType::Geography { .. }) => {
                        geographic
                            .entry(i)
                            .or_default()
                            .add_wkb_array(array.as_ref())?;
                    }
                    Some(_) => planar.entry(i).or_default().add_wkb_array(array.as_ref())?,
                    None => {
                        if let Some(n) = nan_count(array.as_ref()) {
                            *nans.entry(c.field.id).or_default() += n;
                        }
                    }
                }
            }
            writer.write(batch)?;
        }
        let footer = writer.close()?;
        let mut geo_boxes: HashMap<i32, Option<BBox>> = HashMap::new();
        for (i, c) in plan.iter().enumerate() {
            let b = match &c.geo {
                Some(ColumnType::Geography { .. }) => geographic.get(&i).and_then(|a| a.finish()),
                Some(_) => planar.get(&i).and_then(|a| a.finish()),
                None => continue,
            };
            geo_boxes.insert(c.field.id, b);
        }
        let location = join(
            &self.table.data_dir(),
            &format!("{}.parquet", uuid::Uuid::now_v7()),
        );
        let size = buf.len() as u64;
        if let Err(e) = self.table.storage().write_new(&location, buf) {
            // The write may have happened with its reply lost: nothing references it.
            let _ = self.table.storage().delete(&location);
            return Err(e);
        }
        data_file_entry(
            self.table,
            &self.metrics,
            WrittenFile {
                location,
                size,
                footer: &footer,
                partition,
                spec_id: self.table.metadata().default_partition_spec_id(),
                nan_counts: nans,
                geo_boxes,
            },
        )
    }
}

/// NaN values of a float column (`None` for other types).
fn nan_count(array: &dyn Array) -> Option<u64> {
    let n = match array.data_type() {
        ArrowType::Float32 => array
            .as_primitive::<Float32Type>()
            .iter()
            .flatten()
            .filter(|v| v.is_nan())
            .count(),
        ArrowType::Float64 => array
            .as_primitive::<Float64Type>()
            .iter()
            .flatten()
            .filter(|v| v.is_nan())
            .count(),
        _ => return None,
    };
    Some(n as u64)
}

/// The Parquet schema: Arrow's conversion, with GEOMETRY / GEOGRAPHY logical types (and their
/// CRS, written unquoted, unlike parquet 58's GeoArrow path: arrow-rs#9929) on geo columns.
fn parquet_schema(plan: &[ColumnPlan], arrow: &ArrowSchema) -> Result<SchemaDescriptor> {
    let base = ArrowSchemaConverter::new().convert(arrow)?;
    let root = base.root_schema_ptr();
    let mut fields = Vec::with_capacity(root.get_fields().len());
    for (c, f) in plan.iter().zip(root.get_fields()) {
        let logical = match &c.geo {
            Some(ColumnType::Geometry { crs }) => Some(LogicalType::Geometry {
                crs: (!crs.is_wgs84()).then(|| crs.to_string()),
            }),
            Some(ColumnType::Geography { crs, edges }) => Some(LogicalType::Geography {
                crs: (!crs.is_wgs84()).then(|| crs.to_string()),
                algorithm: edges.name().parse().ok(),
            }),
            // No-CRS geometry: GEOMETRY with the default CRS is the only annotation DuckDB and
            // pyarrow read as geometry; the values keep their own SRIDs.
            Some(ColumnType::GeometryWithoutCrs) => Some(LogicalType::Geometry { crs: None }),
            None => None,
        };
        match logical {
            None => fields.push(f.clone()),
            Some(lt) => {
                let info = f.get_basic_info();
                let t = ParquetType::primitive_type_builder(f.name(), f.get_physical_type())
                    .with_repetition(if c.field.required {
                        Repetition::REQUIRED
                    } else {
                        Repetition::OPTIONAL
                    })
                    .with_logical_type(Some(lt))
                    .with_id(info.has_id().then(|| info.id()))
                    .build()?;
                fields.push(Arc::new(t));
            }
        }
    }
    // Columns past the table's (row lineage) are written as Arrow converts them.
    fields.extend(root.get_fields().iter().skip(plan.len()).cloned());
    let root = ParquetType::group_type_builder(root.name())
        .with_fields(fields)
        .build()?;
    Ok(SchemaDescriptor::new(Arc::new(root)))
}
