//! Streaming Arrow generator: the rows of a [`DatasetModel`] as record batches.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, Float64Array, Int64Array, RecordBatch, RecordBatchReader, TimestampMicrosecondArray,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef, TimeUnit};

use crate::error::Error;
use crate::model::{DatasetModel, Feature, STREAM_PAYLOAD};
use crate::rng::SplitMix64;
use crate::wkb_writer::{GeometryEncoding, wkb_len, write_wkb};

/// Arrival time of row 0: 2024-01-01T00:00:00Z in microseconds.
const ARRIVAL_EPOCH_MICROS: i64 = 1_704_067_200_000_000;
/// One row arrives every millisecond, so arrival order is id order.
const ARRIVAL_STEP_MICROS: i64 = 1_000;
/// `state` is a 10 × 5 grid over the extent, named `S00`..`S49` (row-major from the south-west).
const STATE_COLUMNS: usize = 10;
const STATE_ROWS: usize = 5;
const STATE_NAME_BYTES: usize = 3;

/// Shape of a generated row: which columns and how wide.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RowFormat {
    /// WKB or EWKB (with the CRS's SRID).
    pub encoding: GeometryEncoding,
    /// Adds `bbox_min_x`, `bbox_min_y`, `bbox_max_x`, `bbox_max_y` (Float64) after `geometry`,
    /// the materialized bbox columns engines without geometry statistics prune on.
    pub bbox_columns: bool,
    /// Target uncompressed bytes per row; `payload_*` columns top rows up to it (rows whose
    /// geometry alone is wider get no payload).
    pub row_width_bytes: usize,
    /// Number of `payload_<i>` Binary columns the padding is split across (0 = no padding).
    pub payload_columns: usize,
}

impl Default for RowFormat {
    /// 1 KiB rows (so 1 TB = 2^30 rows), WKB, no bbox columns, one payload column.
    fn default() -> Self {
        Self {
            encoding: GeometryEncoding::Wkb,
            bbox_columns: false,
            row_width_bytes: 1024,
            payload_columns: 1,
        }
    }
}

impl RowFormat {
    /// Bytes of the fixed columns plus the geometry.
    fn intrinsic_bytes(&self, wkb_bytes: usize) -> usize {
        8 + 8 + STATE_NAME_BYTES + wkb_bytes + if self.bbox_columns { 32 } else { 0 }
    }

    fn payload_bytes(&self, wkb_bytes: usize) -> usize {
        if self.payload_columns == 0 {
            0
        } else {
            self.row_width_bytes
                .saturating_sub(self.intrinsic_bytes(wkb_bytes))
        }
    }

    /// Uncompressed bytes of a row whose geometry encodes to `wkb_bytes`: what the layout
    /// simulator charges a row.
    pub(crate) fn row_bytes(&self, wkb_bytes: usize) -> usize {
        self.intrinsic_bytes(wkb_bytes) + self.payload_bytes(wkb_bytes)
    }

    pub(crate) fn row_bytes_of(&self, unit_feature: &Feature) -> usize {
        self.row_bytes(wkb_len(unit_feature, self.encoding))
    }
}

/// Which rows to generate and how.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GenerateOptions {
    /// First row id; shards `[start_row, start_row + rows)` can be generated in parallel and
    /// concatenated into exactly the single-stream bytes.
    pub start_row: u64,
    /// Number of rows.
    pub rows: u64,
    /// Rows per record batch (≥ 1).
    pub batch_size: usize,
    /// Columns and widths.
    pub format: RowFormat,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        Self {
            start_row: 0,
            rows: 1_000_000,
            batch_size: 8192,
            format: RowFormat::default(),
        }
    }
}

/// The Arrow schema of generated batches: `id`, `arrival_ts`, `state`, `geometry` (WKB with
/// GeoArrow `geoarrow.wkb` extension metadata), optional bbox columns, `payload_<i>`.
pub fn schema(model: &DatasetModel, format: &RowFormat) -> SchemaRef {
    let geo_meta = HashMap::from([
        ("ARROW:extension:name".to_owned(), "geoarrow.wkb".to_owned()),
        (
            "ARROW:extension:metadata".to_owned(),
            format!(
                r#"{{"crs":"{}","crs_type":"authority_code"}}"#,
                model.crs().name()
            ),
        ),
    ]);
    let mut fields = vec![
        Field::new("id", DataType::Int64, false),
        Field::new(
            "arrival_ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new("state", DataType::Utf8, false),
        Field::new("geometry", DataType::Binary, false).with_metadata(geo_meta),
    ];
    if format.bbox_columns {
        for name in ["bbox_min_x", "bbox_min_y", "bbox_max_x", "bbox_max_y"] {
            fields.push(Field::new(name, DataType::Float64, false));
        }
    }
    for i in 0..format.payload_columns {
        fields.push(Field::new(format!("payload_{i}"), DataType::Binary, false));
    }
    Arc::new(Schema::new(fields))
}

impl DatasetModel {
    /// Streams `options.rows` rows as record batches; only one batch is in memory at a time.
    pub fn batches(&self, options: GenerateOptions) -> Result<BatchStream, Error> {
        if options.batch_size == 0 {
            return Err(Error::invalid(
                "batch_size",
                0,
                "at least 1 row per batch, e.g. 8192",
            ));
        }
        if options.start_row.checked_add(options.rows).is_none() {
            return Err(Error::invalid(
                "start_row + rows",
                format!("{} + {}", options.start_row, options.rows),
                "a row range that fits in u64",
            ));
        }
        Ok(BatchStream {
            schema: schema(self, &options.format),
            model: self.clone(),
            next_row: options.start_row,
            end_row: options.start_row + options.rows,
            options,
            unit: Feature::new(),
            mapped: Feature::new(),
            wkb: Vec::with_capacity(256),
            state_names: (0..STATE_COLUMNS * STATE_ROWS)
                .map(|i| format!("S{i:02}"))
                .collect(),
        })
    }
}

/// Iterator of generated record batches (also an Arrow [`RecordBatchReader`], so it plugs into
/// Parquet and IPC writers directly).
#[derive(Debug)]
pub struct BatchStream {
    schema: SchemaRef,
    model: DatasetModel,
    options: GenerateOptions,
    next_row: u64,
    end_row: u64,
    unit: Feature,
    mapped: Feature,
    wkb: Vec<u8>,
    state_names: Vec<String>,
}

impl BatchStream {
    fn build(&mut self, rows: usize) -> Result<RecordBatch, ArrowError> {
        let format = self.options.format;
        let crs = self.model.crs();
        let srid = crs.srid();
        let mut ids = Vec::with_capacity(rows);
        let mut arrivals = Vec::with_capacity(rows);
        let mut states = StringBuilder::with_capacity(rows, rows * STATE_NAME_BYTES);
        let mut geoms = BinaryBuilder::with_capacity(rows, rows * 21);
        let mut bbox: [Vec<f64>; 4] =
            std::array::from_fn(|_| Vec::with_capacity(if format.bbox_columns { rows } else { 0 }));
        let per_payload = format.row_width_bytes / format.payload_columns.max(1);
        let mut payloads: Vec<BinaryBuilder> = (0..format.payload_columns)
            .map(|_| BinaryBuilder::with_capacity(rows, rows * per_payload))
            .collect();
        let mut pad = Vec::with_capacity(format.row_width_bytes);

        for row in self.next_row..self.next_row + rows as u64 {
            self.model.unit_row(row, &mut self.unit);
            let [u0, v0, u1, v1] = self.unit.bbox();
            let (cu, cv) = ((u0 + u1) / 2.0, (v0 + v1) / 2.0);
            let col = ((cu * STATE_COLUMNS as f64) as usize).min(STATE_COLUMNS - 1);
            let srow = ((cv * STATE_ROWS as f64) as usize).min(STATE_ROWS - 1);
            states.append_value(&self.state_names[srow * STATE_COLUMNS + col]);

            self.mapped.kind = self.unit.kind;
            self.mapped.coords.clear();
            self.mapped
                .coords
                .extend(self.unit.coords.iter().map(|&p| crs.map(p)));
            self.wkb.clear();
            write_wkb(&self.mapped, format.encoding, srid, &mut self.wkb);
            geoms.append_value(&self.wkb);
            if format.bbox_columns {
                for (column, value) in bbox.iter_mut().zip(self.mapped.bbox()) {
                    column.push(value);
                }
            }

            let id = row as i64;
            ids.push(id);
            arrivals.push(ARRIVAL_EPOCH_MICROS + id * ARRIVAL_STEP_MICROS);

            let total = format.payload_bytes(self.wkb.len());
            pad.resize(total, 0);
            SplitMix64::for_item(self.model.seed(), STREAM_PAYLOAD, row).fill_bytes(&mut pad);
            let n = payloads.len();
            let mut offset = 0;
            for (i, builder) in payloads.iter_mut().enumerate() {
                let len = total / n + usize::from(i < total % n);
                builder.append_value(&pad[offset..offset + len]);
                offset += len;
            }
        }
        self.next_row += rows as u64;

        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(ids)),
            Arc::new(TimestampMicrosecondArray::from(arrivals).with_timezone("UTC")),
            Arc::new(states.finish()),
            Arc::new(geoms.finish()),
        ];
        if format.bbox_columns {
            columns.extend(
                bbox.into_iter()
                    .map(|c| Arc::new(Float64Array::from(c)) as ArrayRef),
            );
        }
        columns.extend(
            payloads
                .iter_mut()
                .map(|b| Arc::new(b.finish()) as ArrayRef),
        );
        RecordBatch::try_new(self.schema.clone(), columns)
    }
}

impl Iterator for BatchStream {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let left = self.end_row - self.next_row;
        if left == 0 {
            return None;
        }
        let rows = left.min(self.options.batch_size as u64) as usize;
        Some(self.build(rows))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.end_row - self.next_row).div_ceil(self.options.batch_size as u64) as usize;
        (n, Some(n))
    }
}

impl RecordBatchReader for BatchStream {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}
