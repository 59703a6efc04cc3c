//! Append: Arrow batches → SRID check and bbox in one pass → Parquet data files → fast-append
//! snapshot (manifest, manifest list, metadata) → catalog swap.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, new_null_array};
use arrow_schema::{Field, Schema as ArrowSchema};
use geoberg_crs::{ColumnType, ValueSrid, check_value_srid};
use geoberg_geostats::{
    BBox, BBoxAccumulator, GeographyBBoxAccumulator, bbox_columns, encode_geospatial_bounds,
};
use geoberg_hilbert::{Bounds, HilbertCurve};
use iceberg::io::FileIO;
use iceberg::spec::{
    DataContentType, DataFile, DataFileBuilder, DataFileFormat, Datum, FormatVersion, Literal,
    ManifestWriterBuilder, NestedFieldRef, PrimitiveLiteral, PrimitiveType, Snapshot, Struct,
};
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::arrow::{ArrowSchemaConverter, ArrowWriter, PARQUET_FIELD_ID_META_KEY};
use parquet::basic::{Compression, LogicalType, Repetition, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::{SchemaDescriptor, Type as ParquetType};

use crate::bridge;
use crate::error::{Error, Result};
use crate::location::{file_uri, local_path, write_new_file};
use crate::metrics::{ColumnMetrics, MetricsConfig, MetricsMode};
use crate::snapshot_writer::{NewSnapshot, new_snapshot_id};
use crate::table::{
    BBOX_COLUMN_NAMES, BBOX_SOURCE_PROPERTY, HILBERT_CELL_PROPERTY, HILBERT_CELL_SUFFIX,
    PendingCommit, Table,
};

/// Field metadata key that labels every value of a batch's geometry column with one SRID, for
/// WKB that carries none (ISO WKB has no SRID; EWKB's own SRID always wins).
pub const SRID_FIELD_METADATA: &str = "srid";
/// Rows per Parquet row group (default 1 048 576); smaller groups skip more finely.
pub const ROW_GROUP_ROWS_PROPERTY: &str = "geoberg.parquet.row-group-rows";

/// What one append wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendReport {
    /// Data files added.
    pub data_files: usize,
    /// Rows added.
    pub rows: u64,
    /// Bytes of Parquet written.
    pub bytes: u64,
}

struct ColumnPlan {
    field: NestedFieldRef,
    ty: PrimitiveType,
    geo: Option<ColumnType>,
    /// For a bbox column: the geometry column index and which of the four values.
    bbox_of: Option<(usize, usize)>,
    /// For the derived Hilbert-cell column: the geometry column index and the curve.
    cell_of: Option<(usize, HilbertCurve)>,
}

/// One partition's worth of rows, ready for a data file.
struct FileRows {
    partition: Struct,
    batches: Vec<RecordBatch>,
}

impl Table {
    /// Appends rows and commits a fast-append snapshot; see [`Table::stage_append`].
    pub fn append(&self, batches: &[RecordBatch]) -> Result<(Table, AppendReport)> {
        let (pending, report) = self.stage_append(batches)?;
        Ok((pending.commit()?, report))
    }

    /// Writes data files, manifest, manifest list and the next metadata file for `batches`,
    /// without making them visible.
    ///
    /// Columns are matched by name; missing nullable columns are written as nulls. Every
    /// geometry value's SRID (its EWKB SRID, else the field's `srid` metadata) is checked
    /// against the column CRS, and bbox metrics come from the same pass over the WKB.
    pub fn stage_append(&self, batches: &[RecordBatch]) -> Result<(PendingCommit, AppendReport)> {
        let plan = self.column_plan()?;
        let arrow_schema = file_arrow_schema(&plan);
        let mut groups: Vec<FileRows> = Vec::new();
        for batch in batches.iter().filter(|b| b.num_rows() > 0) {
            let aligned = self.align_batch(batch, &plan, &arrow_schema)?;
            self.split_by_partition(aligned, &plan, &mut groups)?;
        }
        if groups.is_empty() {
            return Err(Error::InvalidData(
                "nothing to append: every batch is empty".into(),
            ));
        }
        let metrics = MetricsConfig::new(
            self.metadata().properties(),
            &plan
                .iter()
                .map(|c| (c.field.id, c.field.name.clone()))
                .collect::<Vec<_>>(),
            &self.sort_column_ids(),
        )?;
        let mut data_files = Vec::with_capacity(groups.len());
        let mut report = AppendReport {
            data_files: 0,
            rows: 0,
            bytes: 0,
        };
        for group in groups {
            let file = self.write_data_file(&plan, &arrow_schema, &metrics, group)?;
            report.data_files += 1;
            report.rows += file.record_count();
            report.bytes += file.file_size_in_bytes();
            data_files.push(file);
        }
        let snapshot = self.write_snapshot(data_files, &report)?;
        Ok((self.stage_snapshot(snapshot)?, report))
    }

    /// Stages a fast append of data files that are already written (an import, or files
    /// produced by another writer), from their entries alone: the files are not opened, so their
    /// record counts, sizes and column metrics are taken as given.
    pub fn stage_data_files(&self, data_files: Vec<DataFile>) -> Result<PendingCommit> {
        if data_files.is_empty() {
            return Err(Error::InvalidData(
                "nothing to append: no data files".into(),
            ));
        }
        let mut report = AppendReport {
            data_files: data_files.len(),
            rows: 0,
            bytes: 0,
        };
        for f in &data_files {
            local_path(f.file_path())?;
            if f.content_type() != DataContentType::Data {
                return Err(Error::InvalidData(format!(
                    "{} is a delete file; only data files can be appended",
                    f.file_path()
                )));
            }
            report.rows += f.record_count();
            report.bytes += f.file_size_in_bytes();
        }
        let snapshot = self.write_snapshot(data_files, &report)?;
        self.stage_snapshot(snapshot)
    }

    fn sort_column_ids(&self) -> Vec<i32> {
        self.metadata()
            .default_sort_order()
            .fields
            .iter()
            .map(|f| f.source_id)
            .collect()
    }

    fn column_plan(&self) -> Result<Vec<ColumnPlan>> {
        let schema = self.metadata().current_schema();
        let bbox_source = self.metadata().properties().get(BBOX_SOURCE_PROPERTY);
        let fields = schema.as_struct().fields();
        let mut plan = Vec::with_capacity(fields.len());
        for f in fields {
            let ty = f.field_type.as_primitive_type().cloned().ok_or_else(|| {
                Error::Schema(format!(
                    "column {:?} has nested type {}; appends support primitive columns only",
                    f.name, f.field_type
                ))
            })?;
            let geo = self
                .geo_columns()
                .iter()
                .find(|g| g.field_id == f.id)
                .map(|g| g.column_type.clone());
            plan.push(ColumnPlan {
                field: f.clone(),
                ty,
                geo,
                bbox_of: None,
                cell_of: None,
            });
        }
        if let Some(source) = bbox_source {
            let geom = plan
                .iter()
                .position(|c| &c.field.name == source)
                .ok_or_else(|| {
                    Error::Schema(format!(
                        "{BBOX_SOURCE_PROPERTY}={source:?} names no column of the table"
                    ))
                })?;
            for (k, name) in BBOX_COLUMN_NAMES.iter().enumerate() {
                if let Some(c) = plan.iter_mut().find(|c| c.field.name == *name) {
                    c.bbox_of = Some((geom, k));
                }
            }
        }
        if let Some(json) = self.metadata().properties().get(HILBERT_CELL_PROPERTY) {
            let (geom, curve) = parse_hilbert_property(json)?;
            let g = plan
                .iter()
                .position(|c| c.field.name == geom && c.geo.is_some())
                .ok_or_else(|| Error::InvalidProperty {
                    key: HILBERT_CELL_PROPERTY.into(),
                    value: json.clone(),
                    reason: format!("{geom:?} names no geometry column of the table"),
                })?;
            let cell = format!("{geom}{HILBERT_CELL_SUFFIX}");
            let c = plan
                .iter_mut()
                .find(|c| c.field.name == cell && c.ty == PrimitiveType::Long)
                .ok_or_else(|| Error::InvalidProperty {
                    key: HILBERT_CELL_PROPERTY.into(),
                    value: json.clone(),
                    reason: format!("the table has no long column {cell:?}"),
                })?;
            c.cell_of = Some((g, curve));
        }
        Ok(plan)
    }

    /// Reorders, casts and completes a batch to the table's columns; checks SRIDs and fills
    /// bbox columns from the geometry in one pass.
    fn align_batch(
        &self,
        batch: &RecordBatch,
        plan: &[ColumnPlan],
        schema: &Arc<ArrowSchema>,
    ) -> Result<RecordBatch> {
        let rows = batch.num_rows();
        let mut columns: Vec<Option<ArrayRef>> = vec![None; plan.len()];
        let mut bboxes: HashMap<usize, [Float64Array; 4]> = HashMap::new();
        let mut given_cells: HashMap<usize, ArrayRef> = HashMap::new();
        for (i, c) in plan.iter().enumerate() {
            if c.bbox_of.is_some() {
                continue;
            }
            if c.cell_of.is_some() && batch.schema().index_of(&c.field.name).is_err() {
                continue;
            }
            let target = schema.field(i).data_type();
            let array = match batch.schema().index_of(&c.field.name) {
                Ok(idx) => {
                    let a = batch.column(idx);
                    if a.data_type() == target {
                        a.clone()
                    } else {
                        arrow_cast::cast(a, target).map_err(|e| {
                            Error::InvalidData(format!(
                                "column {:?}: cannot convert {} to {target}: {e}",
                                c.field.name,
                                a.data_type()
                            ))
                        })?
                    }
                }
                Err(_) if !c.field.required => new_null_array(target, rows),
                Err(_) => {
                    return Err(Error::InvalidData(format!(
                        "required column {:?} is missing from the batch",
                        c.field.name
                    )));
                }
            };
            if c.field.required && array.null_count() > 0 {
                return Err(Error::InvalidData(format!(
                    "column {:?} is NOT NULL but the batch has {} nulls in it",
                    c.field.name,
                    array.null_count()
                )));
            }
            if let Some(geo) = &c.geo {
                let label = batch
                    .schema()
                    .field_with_name(&c.field.name)
                    .ok()
                    .and_then(|f| f.metadata().get(SRID_FIELD_METADATA))
                    .map(|s| {
                        s.trim().parse::<i32>().map_err(|_| {
                            Error::InvalidData(format!(
                                "column {:?}: field metadata srid={s:?} is not an integer",
                                c.field.name
                            ))
                        })
                    })
                    .transpose()?;
                let b = bbox_columns(array.as_ref())?;
                check_srids(&c.field.name, geo, b.srid.as_ref(), label, &array)?;
                bboxes.insert(i, [b.min_x, b.min_y, b.max_x, b.max_y]);
            }
            if c.cell_of.is_some() {
                given_cells.insert(i, array);
                continue;
            }
            columns[i] = Some(array);
        }
        for (i, c) in plan.iter().enumerate() {
            if let Some((geom, curve)) = &c.cell_of {
                let b = bboxes.get(geom).ok_or_else(|| {
                    Error::Schema(format!(
                        "Hilbert cell source column {geom} is not a geometry column"
                    ))
                })?;
                let derived = hilbert_cells(curve, b)?;
                if let Some(given) = given_cells.remove(&i) {
                    check_cells(&c.field.name, &plan[*geom].field.name, &given, &derived)?;
                }
                columns[i] = Some(Arc::new(derived));
            }
            if let Some((geom, k)) = c.bbox_of {
                let b = bboxes.get(&geom).ok_or_else(|| {
                    Error::Schema(format!(
                        "bbox source column {geom} is not a geometry column"
                    ))
                })?;
                columns[i] = Some(Arc::new(b[k].clone()));
            }
        }
        let columns = columns
            .into_iter()
            .map(|c| c.expect("every column planned"))
            .collect();
        Ok(RecordBatch::try_new(schema.clone(), columns)?)
    }

    fn split_by_partition(
        &self,
        batch: RecordBatch,
        plan: &[ColumnPlan],
        groups: &mut Vec<FileRows>,
    ) -> Result<()> {
        let spec = self.metadata().default_partition_spec();
        if spec.fields().is_empty() {
            match groups.first_mut() {
                Some(g) => g.batches.push(batch),
                None => groups.push(FileRows {
                    partition: Struct::empty(),
                    batches: vec![batch],
                }),
            }
            return Ok(());
        }
        let mut transformed = Vec::with_capacity(spec.fields().len());
        for pf in spec.fields() {
            let idx = plan
                .iter()
                .position(|c| c.field.id == pf.source_id)
                .ok_or_else(|| {
                    Error::Schema(format!("partition source {} missing", pf.source_id))
                })?;
            let f = iceberg::transform::create_transform_function(&pf.transform)?;
            transformed.push(f.transform(batch.column(idx).clone())?);
        }
        let mut rows_of: HashMap<Vec<Option<Literal>>, Vec<u32>> = HashMap::new();
        let mut order = Vec::new();
        for row in 0..batch.num_rows() {
            let key: Vec<Option<Literal>> = transformed
                .iter()
                .map(|a| literal_at(a, row))
                .collect::<Result<_>>()?;
            rows_of
                .entry(key.clone())
                .or_insert_with(|| {
                    order.push(key);
                    Vec::new()
                })
                .push(row as u32);
        }
        for key in order {
            let idx = arrow_array::UInt32Array::from(rows_of.remove(&key).unwrap_or_default());
            let part = arrow_select::take::take_record_batch(&batch, &idx)?;
            let partition = Struct::from_iter(key);
            match groups.iter_mut().find(|g| g.partition == partition) {
                Some(g) => g.batches.push(part),
                None => groups.push(FileRows {
                    partition,
                    batches: vec![part],
                }),
            }
        }
        Ok(())
    }

    fn write_data_file(
        &self,
        plan: &[ColumnPlan],
        arrow_schema: &Arc<ArrowSchema>,
        metrics: &MetricsConfig,
        rows: FileRows,
    ) -> Result<DataFile> {
        let row_group_rows = match self.metadata().properties().get(ROW_GROUP_ROWS_PROPERTY) {
            Some(v) => v.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| {
                Error::InvalidProperty {
                    key: ROW_GROUP_ROWS_PROPERTY.into(),
                    value: v.clone(),
                    reason: "expected a positive row count".into(),
                }
            })?,
            None => 1 << 20,
        };
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_max_row_group_row_count(Some(row_group_rows))
            .build();
        let options = ArrowWriterOptions::new()
            .with_properties(props)
            .with_parquet_schema(parquet_schema(plan, arrow_schema)?);
        let mut buf = Vec::new();
        let mut writer =
            ArrowWriter::try_new_with_options(&mut buf, arrow_schema.clone(), options)?;
        let mut col_metrics: Vec<ColumnMetrics> = vec![ColumnMetrics::default(); plan.len()];
        let mut planar: HashMap<usize, BBoxAccumulator> = HashMap::new();
        let mut geographic: HashMap<usize, GeographyBBoxAccumulator> = HashMap::new();
        let mut record_count = 0u64;
        for batch in &rows.batches {
            record_count += batch.num_rows() as u64;
            for (i, c) in plan.iter().enumerate() {
                let array = batch.column(i);
                let mode = metrics.mode(c.field.id);
                match &c.geo {
                    Some(ColumnType::Geography { .. }) if mode_has_bounds(mode) => {
                        geographic
                            .entry(i)
                            .or_default()
                            .add_wkb_array(array.as_ref())?;
                    }
                    Some(_) if mode_has_bounds(mode) => {
                        planar.entry(i).or_default().add_wkb_array(array.as_ref())?;
                    }
                    _ => {}
                }
                let bounds = c.geo.is_none() && mode_has_bounds(mode);
                col_metrics[i].update(array, &c.ty, bounds);
            }
            writer.write(batch)?;
        }
        let parquet_meta = writer.close()?;
        let size = buf.len() as u64;

        let mut column_sizes = HashMap::new();
        let mut split_offsets = Vec::new();
        for rg in parquet_meta.row_groups() {
            if let Some(first) = rg.columns().first() {
                let start = first
                    .dictionary_page_offset()
                    .unwrap_or_else(|| first.data_page_offset());
                split_offsets.push(start);
            }
            for (i, col) in rg.columns().iter().enumerate() {
                if let Some(c) = plan.get(i) {
                    *column_sizes.entry(c.field.id).or_insert(0u64) +=
                        col.compressed_size().max(0) as u64;
                }
            }
        }
        let mut value_counts = HashMap::new();
        let mut null_counts = HashMap::new();
        let mut nan_counts = HashMap::new();
        let mut lower = HashMap::new();
        let mut upper = HashMap::new();
        for (i, c) in plan.iter().enumerate() {
            let mode = metrics.mode(c.field.id);
            if mode == MetricsMode::None {
                column_sizes.remove(&c.field.id);
                continue;
            }
            let m = &col_metrics[i];
            value_counts.insert(c.field.id, m.values);
            null_counts.insert(c.field.id, m.nulls);
            if let Some(n) = m.nans {
                nan_counts.insert(c.field.id, n);
            }
            let geo_box: Option<BBox> = match &c.geo {
                Some(ColumnType::Geography { .. }) => geographic.get(&i).and_then(|a| a.finish()),
                Some(_) => planar.get(&i).and_then(|a| a.finish()),
                None => None,
            };
            let (lo, hi) = match (&c.geo, geo_box) {
                // Point bounds per spec Appendix D; never raw WKB prefixes.
                (Some(_), Some(b)) => {
                    let (lo, hi) = encode_geospatial_bounds(&b);
                    (Some(Datum::binary(lo)), Some(Datum::binary(hi)))
                }
                (Some(_), None) => (None, None),
                (None, _) => m.bounds(mode),
            };
            if let Some(lo) = lo {
                lower.insert(c.field.id, lo);
            }
            if let Some(hi) = hi {
                upper.insert(c.field.id, hi);
            }
        }

        let path = local_path(self.metadata().location())?
            .join("data")
            .join(format!("{}.parquet", uuid::Uuid::now_v7()));
        write_new_file(self.catalog().storage(), &path, &buf)?;
        let file = DataFileBuilder::default()
            .content(DataContentType::Data)
            .file_path(file_uri(&path))
            .file_format(DataFileFormat::Parquet)
            .partition(rows.partition)
            .partition_spec_id(self.metadata().default_partition_spec_id())
            .record_count(record_count)
            .file_size_in_bytes(size)
            .column_sizes(column_sizes)
            .value_counts(value_counts)
            .null_value_counts(null_counts)
            .nan_value_counts(nan_counts)
            .lower_bounds(lower)
            .upper_bounds(upper)
            .split_offsets(Some(split_offsets))
            .build()
            .map_err(|e| Error::InvalidData(format!("data file entry: {e}")))?;
        Ok(file)
    }

    /// Manifest + manifest list for a fast append; returns the snapshot to add.
    fn write_snapshot(&self, data_files: Vec<DataFile>, report: &AppendReport) -> Result<Snapshot> {
        let metadata = self.metadata();
        let version = metadata.format_version();
        let snapshot_id = new_snapshot_id(self);
        let seq = metadata.next_sequence_number();
        let commit_uuid = uuid::Uuid::new_v4();
        let meta_dir = local_path(metadata.location())?.join("metadata");

        // `iceberg` writes Avro into an in-memory FileIO; we fix the schema header (geo types)
        // and put the bytes in place ourselves.
        let mem = FileIO::new_with_memory();
        let staging = format!("memory:///{commit_uuid}-m0.avro");
        let builder = ManifestWriterBuilder::new(
            mem.new_output(&staging)?,
            Some(snapshot_id),
            metadata.current_schema().clone(),
            metadata.default_partition_spec().as_ref().clone(),
        );
        let mut writer = match version {
            FormatVersion::V3 => builder.build_v3_data(),
            FormatVersion::V2 => builder.build_v2_data(),
            FormatVersion::V1 => builder.build_v1(),
        };
        for file in data_files {
            // -1: the entry inherits the snapshot's sequence number, as Java writes it.
            writer.add_file(file, -1)?;
        }
        let mut manifest = block_on(writer.write_manifest_file())?;
        let avro = block_on(mem.new_input(&staging)?.read())?;
        let manifest_path = meta_dir.join(format!("{commit_uuid}-m0.avro"));
        let avro = bridge::manifest_to_geo(&avro, self.geo_fields(), &staging)?;
        write_new_file(self.catalog().storage(), &manifest_path, &avro)?;
        manifest.manifest_path = file_uri(&manifest_path);
        manifest.manifest_length = avro.len() as i64;

        let mut manifests = self.manifests()?;
        manifests.push(manifest);
        let summary = self.append_summary(report.data_files as u64, report.rows, report.bytes);
        let new = NewSnapshot {
            table: self,
            snapshot_id,
            sequence_number: seq,
            commit_uuid,
            meta_dir: &meta_dir,
        };
        Ok(new.write(&mem, manifests, summary)?.0)
    }
}

/// Reads the `geoberg.partition.hilbert-cell` property: the geometry column and its curve.
fn parse_hilbert_property(json: &str) -> Result<(String, HilbertCurve)> {
    let bad = |reason: String| Error::InvalidProperty {
        key: HILBERT_CELL_PROPERTY.into(),
        value: json.into(),
        reason,
    };
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| bad(format!("not JSON: {e}")))?;
    let geom = v["column"]
        .as_str()
        .ok_or_else(|| bad("expected a string \"column\"".into()))?;
    let precision = v["precision"]
        .as_u64()
        .filter(|p| (1..=16).contains(p))
        .ok_or_else(|| bad("expected \"precision\" 1..=16".into()))?;
    let b: Vec<f64> = v["bounds"]
        .as_array()
        .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
        .filter(|b: &Vec<f64>| b.len() == 4)
        .ok_or_else(|| bad("expected \"bounds\" [minX, minY, maxX, maxY]".into()))?;
    let bounds = Bounds::new(b[0], b[1], b[2], b[3]).map_err(|e| bad(e.to_string()))?;
    let curve = HilbertCurve::new(precision as u8, bounds).map_err(|e| bad(e.to_string()))?;
    Ok((geom.to_string(), curve))
}

/// The Hilbert key of each row's bbox centre (clamped into the curve's bounds); null where the
/// geometry is null or empty.
fn hilbert_cells(curve: &HilbertCurve, b: &[Float64Array; 4]) -> Result<Int64Array> {
    let centre = |lo: &Float64Array, hi: &Float64Array| -> Float64Array {
        lo.iter()
            .zip(hi.iter())
            .map(|(l, h)| Some((l? + h?) / 2.0))
            .collect()
    };
    let xs = centre(&b[0], &b[2]);
    let ys = centre(&b[1], &b[3]);
    let keys = curve
        .encode_arrow_clamped(&xs, &ys)
        .map_err(|e| Error::InvalidData(format!("Hilbert cell: {e}")))?;
    // Keys are below 4^16 = 2^32, so they fit a long.
    Ok(keys.iter().map(|k| k.map(|k| k as i64)).collect())
}

/// Fails on the first row where the batch's cell differs from the derived one.
fn check_cells(column: &str, geometry: &str, given: &ArrayRef, derived: &Int64Array) -> Result<()> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    let given = given.as_primitive::<Int64Type>();
    for (row, (g, d)) in given.iter().zip(derived.iter()).enumerate() {
        if g != d {
            return Err(Error::HilbertCellMismatch {
                column: column.into(),
                geometry: geometry.into(),
                row,
                given: g,
                derived: d,
            });
        }
    }
    Ok(())
}

fn mode_has_bounds(mode: MetricsMode) -> bool {
    matches!(mode, MetricsMode::Truncate(_) | MetricsMode::Full)
}

/// Checks each distinct value SRID once against the column (EWKB SRID, else the batch label).
fn check_srids(
    column: &str,
    geo: &ColumnType,
    ewkb: Option<&arrow_array::Int32Array>,
    label: Option<i32>,
    values: &ArrayRef,
) -> Result<()> {
    if *geo == ColumnType::GeometryWithoutCrs {
        return Ok(());
    }
    let mut checked: Vec<Option<i32>> = Vec::new();
    for row in 0..values.len() {
        if values.is_null(row) {
            continue;
        }
        let srid = match ewkb {
            Some(s) if s.is_valid(row) => Some(s.value(row)),
            _ => label,
        };
        if !checked.contains(&srid) {
            check_value_srid(column, geo, ValueSrid::from(srid))
                .map_err(|e| Error::InvalidData(format!("row {row}: {e}")))?;
            checked.push(srid);
        }
    }
    Ok(())
}

fn literal_at(array: &ArrayRef, row: usize) -> Result<Option<Literal>> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Date32Type, Int32Type, Int64Type};
    use arrow_schema::DataType as T;
    if array.is_null(row) {
        return Ok(None);
    }
    let p = match array.data_type() {
        T::Int32 => PrimitiveLiteral::Int(array.as_primitive::<Int32Type>().value(row)),
        T::Date32 => PrimitiveLiteral::Int(array.as_primitive::<Date32Type>().value(row)),
        T::Int64 => PrimitiveLiteral::Long(array.as_primitive::<Int64Type>().value(row)),
        T::Boolean => PrimitiveLiteral::Boolean(array.as_boolean().value(row)),
        T::Utf8 => PrimitiveLiteral::String(array.as_string::<i32>().value(row).to_string()),
        T::Binary => PrimitiveLiteral::Binary(array.as_binary::<i32>().value(row).to_vec()),
        other => {
            return Err(Error::Schema(format!(
                "partition values of Arrow type {other} are not supported; partition by int, \
                 long, date, boolean, string or binary columns"
            )));
        }
    };
    Ok(Some(Literal::Primitive(p)))
}

/// The Arrow schema of data files: table types, with Parquet field ids on every column.
fn file_arrow_schema(plan: &[ColumnPlan]) -> Arc<ArrowSchema> {
    let fields: Vec<Field> = plan
        .iter()
        .map(|c| {
            let dt = crate::schema::DataType::from_iceberg(&c.ty)
                .map(|t| t.arrow_type())
                .unwrap_or(arrow_schema::DataType::Binary);
            Field::new(&c.field.name, dt, !c.field.required).with_metadata(HashMap::from([(
                PARQUET_FIELD_ID_META_KEY.to_string(),
                c.field.id.to_string(),
            )]))
        })
        .collect();
    Arc::new(ArrowSchema::new(fields))
}

/// The Parquet schema: Arrow's conversion, with GEOMETRY / GEOGRAPHY logical types (and their
/// CRS, written unquoted, unlike parquet 58's GeoArrow path: arrow-rs#9929) on geo columns.
fn parquet_schema(plan: &[ColumnPlan], arrow: &ArrowSchema) -> Result<SchemaDescriptor> {
    let base = ArrowSchemaConverter::new().convert(arrow)?;
    let root = base.root_schema_ptr();
    let mut fields = Vec::with_capacity(plan.len());
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
    let root = ParquetType::group_type_builder(root.name())
        .with_fields(fields)
        .build()?;
    Ok(SchemaDescriptor::new(Arc::new(root)))
}

/// Drives `iceberg`'s async writers, which here only touch in-memory storage.
pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    futures::executor::block_on(f)
}
