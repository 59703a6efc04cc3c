//! Parquet data files as the spec wants them (Appendix G, and Parquet's `Geospatial.md`):
//! field ids on every column, WKB geometry with the GEOMETRY / GEOGRAPHY logical type and its
//! CRS, zstd, row groups of `geoberg.parquet.row-group-rows`; bounds of geo columns computed
//! while writing (planar, or on the sphere for geography).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, RecordBatch};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType as ArrowType, Schema as ArrowSchema};
use geoberg_crs::ColumnType;
use geoberg_geostats::{BBox, BBoxAccumulator, GeographyBBoxAccumulator};
use geoberg_rewrite::distinct_columns;
use iceberg::spec::{DataFile, Struct};
use iceberg::spec::{NestedField, PrimitiveType, Type};
use parquet::arrow::ArrowSchemaConverter;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::basic::{Compression, LogicalType, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::{SchemaDescriptor, Type as ParquetType, TypePtr};

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
    /// Set when the rows are sorted by the table's sort order (`write.sort-order`).
    pub(crate) sort_order_id: Option<i32>,
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
            sort_order_id: None,
        })
    }

    /// Writes aligned `batches` of one partition as one new data file under `<table>/data/`;
    /// with `row_group_per_batch`, each batch ends a row group.
    pub(crate) fn write(
        &self,
        partition: Struct,
        batches: &[RecordBatch],
        row_group_per_batch: bool,
    ) -> Result<DataFile> {
        let plan = &self.aligner.columns;
        // Mostly distinct columns (ids, timestamps, WKB) skip the dictionary, as rewrites do:
        // interning them only to fall back to plain pages was a fifth of a copy-on-write
        // MERGE's CPU.
        let mut properties = self.properties.clone().into_builder();
        for column in batches.first().map(distinct_columns).unwrap_or_default() {
            properties = properties.set_column_dictionary_enabled(column, false);
        }
        let options = ArrowWriterOptions::new()
            .with_properties(properties.build())
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
                // Geo boxes are the costly metrics: computed only when stored. NaN counts are
                // cheap, and nested columns have their modes per leaf.
                if c.geo.is_some() && self.metrics.mode(c.field.id) == MetricsMode::None {
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
                    None => nan_counts(&c.field, array.as_ref(), None, &mut nans),
                }
            }
            writer.write(batch)?;
            if row_group_per_batch {
                writer.flush()?;
            }
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
                sort_order_id: self.sort_order_id,
            },
        )
    }
}

/// Adds the NaN values of a float column, and of the float fields of a struct column (a value
/// under a null struct is no value), to `out` by field id. Fields inside lists and maps get no
/// count: unknown, which readers treat as "may hold NaN".
fn nan_counts(
    field: &NestedField,
    array: &dyn Array,
    parent: Option<&NullBuffer>,
    out: &mut HashMap<i32, u64>,
) {
    let valid = |i: usize| parent.is_none_or(|p| p.is_valid(i)) && array.is_valid(i);
    let n = match array.data_type() {
        ArrowType::Float32 => {
            let a = array.as_primitive::<Float32Type>();
            (0..a.len())
                .filter(|&i| valid(i) && a.value(i).is_nan())
                .count()
        }
        ArrowType::Float64 => {
            let a = array.as_primitive::<Float64Type>();
            (0..a.len())
                .filter(|&i| valid(i) && a.value(i).is_nan())
                .count()
        }
        ArrowType::Struct(_) => {
            let (Some(s), Type::Struct(t)) = (array.as_struct_opt(), &*field.field_type) else {
                return;
            };
            let nulls = NullBuffer::union(parent, s.nulls());
            for (child, f) in s.columns().iter().zip(t.fields()) {
                nan_counts(f, child.as_ref(), nulls.as_ref(), out);
            }
            return;
        }
        _ => return,
    };
    *out.entry(field.id).or_default() += n as u64;
}

/// The Parquet schema: Arrow's conversion, with GEOMETRY / GEOGRAPHY logical types (and their
/// CRS, written unquoted, unlike parquet 58's GeoArrow path: arrow-rs#9929) on geo columns and
/// UUID on every `uuid` leaf, nested ones included (Arrow's fixed-size binary has no UUID).
pub(super) fn parquet_schema(plan: &[ColumnPlan], arrow: &ArrowSchema) -> Result<SchemaDescriptor> {
    let base = ArrowSchemaConverter::new().convert(arrow)?;
    let mut logical: HashMap<i32, LogicalType> = HashMap::new();
    for c in plan {
        let lt = match &c.geo {
            Some(ColumnType::Geometry { crs }) => LogicalType::Geometry {
                crs: (!crs.is_wgs84()).then(|| crs.to_string()),
            },
            Some(ColumnType::Geography { crs, edges }) => LogicalType::Geography {
                crs: (!crs.is_wgs84()).then(|| crs.to_string()),
                algorithm: edges.name().parse().ok(),
            },
            // No-CRS geometry: GEOMETRY with the default CRS is the only annotation DuckDB and
            // pyarrow read as geometry; the values keep their own SRIDs.
            Some(ColumnType::GeometryWithoutCrs) => LogicalType::Geometry { crs: None },
            None => {
                uuid_leaves(&c.field, &mut logical);
                continue;
            }
        };
        logical.insert(c.field.id, lt);
    }
    let root = with_logical_types(&base.root_schema_ptr(), &logical)?;
    Ok(SchemaDescriptor::new(root))
}

/// Marks the `uuid` leaves under `field` (itself included) as Parquet UUIDs.
fn uuid_leaves(field: &NestedField, out: &mut HashMap<i32, LogicalType>) {
    match &*field.field_type {
        Type::Primitive(PrimitiveType::Uuid) => {
            out.insert(field.id, LogicalType::Uuid);
        }
        Type::Primitive(_) => {}
        Type::Struct(s) => s.fields().iter().for_each(|f| uuid_leaves(f, out)),
        Type::List(l) => uuid_leaves(&l.element_field, out),
        Type::Map(m) => {
            uuid_leaves(&m.key_field, out);
            uuid_leaves(&m.value_field, out);
        }
    }
}

/// `t` with the logical type of every primitive whose field id is in `logical` replaced.
fn with_logical_types(t: &TypePtr, logical: &HashMap<i32, LogicalType>) -> Result<TypePtr> {
    let info = t.get_basic_info();
    let id = info.has_id().then(|| info.id());
    match t.as_ref() {
        ParquetType::PrimitiveType {
            physical_type,
            type_length,
            scale,
            precision,
            ..
        } => {
            let Some(lt) = id.and_then(|id| logical.get(&id)) else {
                return Ok(t.clone());
            };
            let mut b = ParquetType::primitive_type_builder(t.name(), *physical_type)
                .with_logical_type(Some(lt.clone()))
                .with_length(*type_length)
                .with_precision(*precision)
                .with_scale(*scale)
                .with_id(id);
            if info.has_repetition() {
                b = b.with_repetition(info.repetition());
            }
            Ok(Arc::new(b.build()?))
        }
        ParquetType::GroupType { fields, .. } => {
            let fields = fields
                .iter()
                .map(|f| with_logical_types(f, logical))
                .collect::<Result<Vec<_>>>()?;
            let mut b = ParquetType::group_type_builder(t.name())
                .with_fields(fields)
                .with_logical_type(info.logical_type_ref().cloned())
                .with_converted_type(info.converted_type())
                .with_id(id);
            if info.has_repetition() {
                b = b.with_repetition(info.repetition());
            }
            Ok(Arc::new(b.build()?))
        }
    }
}
