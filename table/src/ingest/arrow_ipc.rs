//! Arrow IPC input: the record batches of an IPC stream (an IPC file is read as the stream it
//! holds). A batch carries either the geometry column as binary WKB, or longitude / latitude
//! (and optionally CRS) fields found by the same dotted paths as in JSON records; other columns
//! come from the fields of their names, cast to the table's types.

use std::collections::HashMap;
use std::io::{BufReader, Cursor, Read};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use arrow_array::builder::BinaryBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, new_null_array};
use arrow_buffer::NullBuffer;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_cast::{CastOptions, can_cast_types, cast_with_options};
use arrow_ipc::reader::StreamReader;
use arrow_schema::{DataType as ArrowType, Fields, Schema, SchemaRef};
use geoberg_crs::Reprojection;
use rayon::prelude::*;
use serde_json::Value;

use super::IngestOptions;
use super::commit::{Chunk, Decoded, Decoder, Follow, Reject, Sender};
use super::target::{Target, path, wkb_point};
use crate::error::{Error, Result};
use crate::write::SRID_FIELD_METADATA;

/// Rows decoded together on one core.
const PIECE_ROWS: usize = 8192;

/// Rows of one record batch of the stream.
#[derive(Clone)]
pub(super) struct Batch {
    /// Which batch of the stream (0-based; schema-only chunks say 0).
    index: u64,
    /// Where `batch` starts in that batch (0-based).
    offset: usize,
    batch: RecordBatch,
}

impl Chunk for Batch {
    fn span(&self) -> u64 {
        self.batch.num_rows() as u64
    }

    fn rows(&self) -> u64 {
        self.batch.num_rows() as u64
    }

    fn split_front(&mut self, n: u64) -> Batch {
        let n = n as usize;
        let front = Batch {
            index: self.index,
            offset: self.offset,
            batch: self.batch.slice(0, n),
        };
        self.batch = self.batch.slice(n, self.batch.num_rows() - n);
        self.offset += n;
        front
    }
}

/// The reader thread: sends the schema (as an empty batch), then each batch of the stream.
pub(super) fn read_stream(
    input: impl Read,
    follow: bool,
    done: Arc<AtomicBool>,
    sender: Sender<Batch>,
) {
    let input = Follow::new(BufReader::with_capacity(1 << 20, input), follow, done);
    if let Err(e) = send_batches(input, &sender) {
        let _ = sender.send(Err(format!("reading the Arrow IPC stream: {e}")));
    }
}

fn send_batches(input: impl Read, sender: &Sender<Batch>) -> std::result::Result<(), String> {
    let Some(input) = stream_start(input)? else {
        return Ok(());
    };
    let reader = StreamReader::try_new(input, None).map_err(|e| e.to_string())?;
    // The schema first: a stream nothing can be ingested from fails before its first batch.
    let schema = Batch {
        index: 0,
        offset: 0,
        batch: RecordBatch::new_empty(reader.schema()),
    };
    if sender.send(Ok(schema)).is_err() {
        return Ok(());
    }
    for (index, batch) in reader.enumerate() {
        let batch = batch.map_err(|e| format!("batch {index}: {e}"))?;
        let batch = Batch {
            index: index as u64,
            offset: 0,
            batch,
        };
        if sender.send(Ok(batch)).is_err() {
            return Ok(());
        }
    }
    Ok(())
}

/// The input again from its first byte, after a look at the first ones.
type Replayed<R> = std::io::Chain<Cursor<Vec<u8>>, R>;

/// The input from the first IPC message on: an Arrow IPC file's header (`ARROW1` and zero
/// padding to its alignment) is skipped, its body being the IPC stream format. `None`: the
/// input is empty.
fn stream_start<R: Read>(mut input: R) -> std::result::Result<Option<Replayed<R>>, String> {
    let mut head = [0u8; 8];
    let n = read_up_to(&mut input, &mut head)?;
    if n == 0 {
        return Ok(None);
    }
    if head.starts_with(b"ARROW1") {
        loop {
            let n = read_up_to(&mut input, &mut head)?;
            if n < head.len() || head != [0; 8] {
                return Ok(Some(Cursor::new(head[..n].to_vec()).chain(input)));
            }
        }
    }
    if matches!(head[0], b'{' | b'[' | b' ' | b'\t' | b'\r' | b'\n') {
        return Err(
            "it starts like JSON, not Arrow IPC; ingest it with Table::ingest \
             (geoberg ingest --format json)"
                .into(),
        );
    }
    Ok(Some(Cursor::new(head[..n].to_vec()).chain(input)))
}

/// Reads until `buf` is full or the input ends; the bytes read.
fn read_up_to(input: &mut impl Read, buf: &mut [u8]) -> std::result::Result<usize, String> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(n)
}

/// A field of the stream: its indices (top level, then into structs) and dotted name.
struct Source {
    indices: Vec<usize>,
    dotted: String,
}

/// Where the geometry of a row comes from.
enum Geometry {
    /// The geometry column itself, binary WKB, with the field's `srid` label.
    Wkb { index: usize, label: Option<i32> },
    /// A point from two fields, in the CRS a third names (absent: the column's).
    LonLat {
        lon: Source,
        lat: Source,
        crs: Option<Source>,
    },
}

/// How the batches of one schema become rows.
struct Plan {
    schema: SchemaRef,
    geometry: Geometry,
    /// For each [`Target::columns`]: its field (`None`: absent, the column is left null).
    columns: Vec<Option<Source>>,
}

/// The field at a dotted path, through struct fields.
fn resolve(schema: &Schema, path: &[String]) -> Option<(Source, ArrowType)> {
    let mut fields: &Fields = schema.fields();
    let mut indices = Vec::with_capacity(path.len());
    let mut ty: Option<&ArrowType> = None;
    for part in path {
        if let Some(t) = ty {
            match t {
                ArrowType::Struct(children) => fields = children,
                _ => return None,
            }
        }
        let (i, field) = fields.find(part)?;
        indices.push(i);
        ty = Some(field.data_type());
    }
    Some((
        Source {
            indices,
            dotted: path.join("."),
        },
        ty?.clone(),
    ))
}

/// Every leaf field as `dotted.path: Type`, for error messages.
fn describe_fields(fields: &Fields, prefix: &str, out: &mut Vec<String>) {
    for f in fields {
        let name = format!("{prefix}{}", f.name());
        match f.data_type() {
            ArrowType::Struct(children) => describe_fields(children, &format!("{name}."), out),
            t => out.push(format!("{name}: {t}")),
        }
    }
}

fn is_text(t: &ArrowType) -> bool {
    match t {
        ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Utf8View => true,
        ArrowType::Dictionary(_, v) => is_text(v),
        _ => false,
    }
}

impl Plan {
    fn new(decoder: &ArrowDecoder, schema: &SchemaRef) -> Result<Plan> {
        let target = &decoder.target;
        let fields = || {
            let mut all = Vec::new();
            describe_fields(schema.fields(), "", &mut all);
            if all.is_empty() {
                "none".to_string()
            } else {
                all.join(", ")
            }
        };
        let geo = &target.geo.name;
        let geometry = match schema.index_of(geo) {
            Ok(index) => {
                let field = schema.field(index);
                if !matches!(
                    field.data_type(),
                    ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView
                ) {
                    return Err(Error::InvalidData(format!(
                        "field {geo:?} of the Arrow IPC stream is {}, but the geometry is read \
                         as binary WKB; send WKB, or name the field otherwise and pass its \
                         longitude and latitude with --lon / --lat",
                        field.data_type()
                    )));
                }
                let label = field
                    .metadata()
                    .get(SRID_FIELD_METADATA)
                    .map(|s| {
                        s.trim().parse::<i32>().map_err(|_| {
                            Error::InvalidData(format!(
                                "field {geo:?} has metadata {SRID_FIELD_METADATA}={s:?}, which \
                                 is not an integer SRID"
                            ))
                        })
                    })
                    .transpose()?;
                Geometry::Wkb { index, label }
            }
            Err(_) => {
                let (Some((lon, lon_ty)), Some((lat, lat_ty))) =
                    (resolve(schema, &decoder.lon), resolve(schema, &decoder.lat))
                else {
                    return Err(Error::InvalidData(format!(
                        "the Arrow IPC stream has no geometry to ingest: no binary WKB field \
                         {geo:?} and no longitude / latitude fields {} / {}; its fields are: \
                         {}. Pass --lon and --lat with the dotted paths of the longitude and \
                         latitude (IngestOptions::lon / lat), or send the geometry as WKB in a \
                         binary field {geo:?} with field metadata {SRID_FIELD_METADATA}",
                        decoder.lon.join("."),
                        decoder.lat.join("."),
                        fields()
                    )));
                };
                for (source, ty) in [(&lon, &lon_ty), (&lat, &lat_ty)] {
                    if !can_cast_types(ty, &ArrowType::Float64)
                        || matches!(ty, ArrowType::Struct(_))
                    {
                        return Err(Error::InvalidData(format!(
                            "field {} of the Arrow IPC stream is {ty}, not a number (or \
                             numeric text)",
                            source.dotted
                        )));
                    }
                }
                let crs = match decoder.crs.as_deref().and_then(|p| resolve(schema, p)) {
                    Some((source, ty)) if is_text(&ty) => Some(source),
                    Some((source, ty)) => {
                        return Err(Error::InvalidData(format!(
                            "field {} of the Arrow IPC stream is {ty}, not a CRS name such as \
                             \"EPSG:4326\"",
                            source.dotted
                        )));
                    }
                    None => None,
                };
                Geometry::LonLat { lon, lat, crs }
            }
        };
        let mut columns = Vec::with_capacity(target.columns.len());
        for c in &target.columns {
            let found = c.paths.iter().find_map(|p| resolve(schema, p));
            match found {
                Some((source, ty)) => {
                    if !can_cast_types(&ty, &c.ty) {
                        return Err(Error::InvalidData(format!(
                            "field {} of the Arrow IPC stream is {ty}, which does not cast to \
                             column {:?}'s {}",
                            source.dotted, c.name, c.ty
                        )));
                    }
                    columns.push(Some(source));
                }
                None if c.mapped => {
                    return Err(Error::InvalidData(format!(
                        "column {:?} is read from field {}, which the Arrow IPC stream lacks; \
                         its fields are: {}",
                        c.name,
                        c.paths[0].join("."),
                        fields()
                    )));
                }
                None if c.required => {
                    return Err(Error::InvalidData(format!(
                        "column {:?} is required (NOT NULL) but the Arrow IPC stream has no \
                         field {:?}; its fields are: {}. Name its field with --map {}=<dotted.path>",
                        c.name,
                        c.name,
                        fields(),
                        c.name
                    )));
                }
                None => columns.push(None),
            }
        }
        Ok(Plan {
            schema: schema.clone(),
            geometry,
            columns,
        })
    }

    fn label(&self) -> Option<i32> {
        match self.geometry {
            Geometry::Wkb { label, .. } => label,
            Geometry::LonLat { .. } => None,
        }
    }
}

/// The array at `source` in `batch`, null wherever a struct on the way is null.
fn column_at(batch: &RecordBatch, source: &Source) -> Result<ArrayRef> {
    let mut array = batch.column(source.indices[0]).clone();
    let mut parents: Option<NullBuffer> = None;
    for &i in &source.indices[1..] {
        let parent = array.as_struct();
        parents = NullBuffer::union(parents.as_ref(), parent.nulls());
        array = parent.column(i).clone();
    }
    if let Some(parents) = parents.filter(|p| p.null_count() > 0) {
        let null_parent = BooleanArray::new(!parents.inner(), None);
        array = arrow_select::nullif::nullif(&array, &null_parent)?;
    }
    Ok(array)
}

/// One value as text, for reject reasons.
fn display(array: &dyn Array, row: usize) -> String {
    ArrayFormatter::try_new(array, &FormatOptions::default())
        .map(|f| f.value(row).to_string())
        .unwrap_or_else(|e| format!("<{e}>"))
}

/// One value as JSON, for the rejects file: structs as objects, numbers and booleans as
/// themselves, everything else (and non-finite numbers) as its text.
fn value_json(array: &dyn Array, row: usize) -> Value {
    if array.is_null(row) {
        return Value::Null;
    }
    if let Some(s) = array.as_struct_opt() {
        return Value::Object(
            s.fields()
                .iter()
                .zip(s.columns())
                .map(|(f, c)| (f.name().clone(), value_json(c, row)))
                .collect(),
        );
    }
    let text = display(array, row);
    let t = array.data_type();
    if t.is_numeric() || *t == ArrowType::Boolean {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    } else {
        Value::String(text)
    }
}

/// A record of the stream as JSON.
fn row_json(batch: &RecordBatch, row: usize) -> Value {
    Value::Object(
        batch
            .schema()
            .fields()
            .iter()
            .zip(batch.columns())
            .map(|(f, c)| (f.name().clone(), value_json(c, row)))
            .collect(),
    )
}

/// The WKB at `row` of a binary column.
fn wkb_at(array: &dyn Array, row: usize) -> Option<&[u8]> {
    if array.is_null(row) {
        return None;
    }
    Some(match array.data_type() {
        ArrowType::LargeBinary => array.as_binary::<i64>().value(row),
        ArrowType::BinaryView => array.as_binary_view().value(row),
        _ => array.as_binary::<i32>().value(row),
    })
}

/// Arrow record batches to batches of the table's columns.
pub(super) struct ArrowDecoder {
    target: Target,
    lon: Vec<String>,
    lat: Vec<String>,
    crs: Option<Vec<String>>,
    /// The plan of the stream's schema, made when it arrives.
    plan: Option<Plan>,
}

/// What one piece of a batch became.
struct Piece {
    batch: RecordBatch,
    rejects: Vec<Reject>,
    filtered: u64,
}

impl ArrowDecoder {
    pub(super) fn new(target: Target, options: &IngestOptions) -> ArrowDecoder {
        ArrowDecoder {
            target,
            lon: path(&options.lon),
            lat: path(&options.lat),
            crs: options.crs.as_deref().map(path),
            plan: None,
        }
    }

    /// Decodes rows of one batch; `start` is the record number of its first row.
    fn decode_piece(&self, plan: &Plan, start: u64, piece: &Batch) -> Result<Piece> {
        let batch = &piece.batch;
        let n = batch.num_rows();
        let mut reasons: Vec<Option<String>> = vec![None; n];
        let mut placed = vec![false; n];
        let mut filtered = 0;
        let mut geometry = BinaryBuilder::with_capacity(n, n * 21);
        let mut outcome = |row: usize, result: std::result::Result<Option<&[u8]>, String>| {
            match result {
                Ok(Some(wkb)) => {
                    geometry.append_value(wkb);
                    placed[row] = true;
                    return;
                }
                Ok(None) => filtered += 1,
                Err(reason) => reasons[row] = Some(reason),
            }
            geometry.append_null();
        };
        match &plan.geometry {
            Geometry::LonLat { lon, lat, crs } => {
                let coordinates = |source: &Source| -> Result<(ArrayRef, ArrayRef)> {
                    let given = column_at(batch, source)?;
                    let numbers =
                        cast_with_options(&given, &ArrowType::Float64, &CastOptions::default())?;
                    Ok((given, numbers))
                };
                let (lon_given, xs) = coordinates(lon)?;
                let (lat_given, ys) = coordinates(lat)?;
                let (xs, ys) = (
                    xs.as_primitive::<Float64Type>(),
                    ys.as_primitive::<Float64Type>(),
                );
                let names = crs
                    .as_ref()
                    .map(|c| -> Result<(ArrayRef, &str)> {
                        let text = cast_with_options(
                            &column_at(batch, c)?,
                            &ArrowType::Utf8,
                            &CastOptions::default(),
                        )?;
                        Ok((text, c.dotted.as_str()))
                    })
                    .transpose()?;
                // Records of a stream mostly share one CRS: its reprojection is kept.
                let mut last: Option<(String, std::result::Result<Option<Reprojection>, String>)> =
                    None;
                for row in 0..n {
                    let coordinate = |given: &ArrayRef,
                                      numbers: &arrow_array::Float64Array,
                                      dotted: &str|
                     -> std::result::Result<f64, String> {
                        if given.is_null(row) {
                            return Err(format!("field {dotted} is null"));
                        }
                        if numbers.is_valid(row) && numbers.value(row).is_finite() {
                            Ok(numbers.value(row))
                        } else {
                            Err(format!(
                                "field {dotted} = {} is not a number",
                                display(given, row)
                            ))
                        }
                    };
                    let point = (|| {
                        let x = coordinate(&lon_given, xs, &lon.dotted)?;
                        let y = coordinate(&lat_given, ys, &lat.dotted)?;
                        let mut reprojection = None;
                        if let Some((names, dotted)) = &names
                            && names.is_valid(row)
                        {
                            let name = names.as_string::<i32>().value(row);
                            if last.as_ref().is_none_or(|(n, _)| n != name) {
                                let r = self.target.reprojection_from(name, dotted);
                                last = Some((name.to_string(), r));
                            }
                            reprojection = last.as_ref().expect("just set").1.clone()?;
                        }
                        self.target.place(x, y, reprojection)
                    })();
                    match point {
                        Ok(Some((x, y))) => outcome(row, Ok(Some(&wkb_point(x, y)[..]))),
                        Ok(None) => outcome(row, Ok(None)),
                        Err(reason) => outcome(row, Err(reason)),
                    }
                }
            }
            Geometry::Wkb { index, label } => {
                let column = batch.column(*index);
                let geo = &self.target.geo.name;
                let mut cache = HashMap::new();
                for row in 0..n {
                    let Some(wkb) = wkb_at(column, row) else {
                        outcome(row, Err(format!("field {geo} is null")));
                        continue;
                    };
                    match self.target.place_wkb(wkb, *label, &mut cache) {
                        Ok(Some(value)) => outcome(row, Ok(Some(value.as_ref()))),
                        Ok(None) => outcome(row, Ok(None)),
                        Err(reason) => outcome(row, Err(format!("field {geo}: {reason}"))),
                    }
                }
            }
        }
        // Every other column cast to the table's type; a value the cast turns into null is
        // refused.
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(plan.columns.len());
        for (c, source) in self.target.columns.iter().zip(&plan.columns) {
            let Some(source) = source else {
                arrays.push(new_null_array(&c.ty, n));
                continue;
            };
            let given = column_at(batch, source)?;
            let cast = cast_with_options(&given, &c.ty, &CastOptions::default())?;
            let (given_nulls, cast_nulls) = (given.logical_nulls(), cast.logical_nulls());
            if let Some(cast_nulls) = cast_nulls.filter(|n| n.null_count() > 0) {
                for row in 0..n {
                    if !placed[row] || reasons[row].is_some() || cast_nulls.is_valid(row) {
                        continue;
                    }
                    if given_nulls.as_ref().is_none_or(|g| g.is_valid(row)) {
                        reasons[row] = Some(format!(
                            "field {} = {:?} is not a {} for column {:?}",
                            source.dotted,
                            display(&given, row),
                            c.ty,
                            c.name
                        ));
                    } else if c.required {
                        reasons[row] = Some(format!(
                            "field {} is null, and column {:?} is required",
                            source.dotted, c.name
                        ));
                    }
                }
            }
            arrays.push(cast);
        }
        let out = self.target.batch(arrays, geometry.finish(), plan.label())?;
        let keep: Vec<bool> = placed
            .iter()
            .zip(&reasons)
            .map(|(p, r)| *p && r.is_none())
            .collect();
        let out = if keep.iter().all(|k| *k) {
            out
        } else {
            arrow_select::filter::filter_record_batch(&out, &BooleanArray::from(keep))?
        };
        let rejects = reasons
            .into_iter()
            .enumerate()
            .filter_map(|(row, reason)| {
                let reason = reason?;
                let record = start + row as u64;
                Some(Reject {
                    position: record,
                    line: serde_json::json!({
                        "record_number": record,
                        "batch": piece.index,
                        "row": piece.offset + row,
                        "reason": reason,
                        "record": row_json(batch, row),
                    }),
                })
            })
            .collect();
        Ok(Piece {
            batch: out,
            rejects,
            filtered,
        })
    }
}

impl Decoder for ArrowDecoder {
    type Chunk = Batch;

    fn arrived(&mut self, chunk: &Batch) -> Result<()> {
        let schema = chunk.batch.schema();
        let planned = self
            .plan
            .as_ref()
            .is_some_and(|p| Arc::ptr_eq(&p.schema, &schema) || p.schema == schema);
        if !planned {
            self.plan = Some(Plan::new(self, &schema)?);
        }
        Ok(())
    }

    fn decode(&self, chunks: &[(u64, Batch)]) -> Result<Decoded> {
        let Some(plan) = &self.plan else {
            return Ok(Decoded {
                batch: None,
                rejects: Vec::new(),
                filtered: 0,
            });
        };
        // Pieces small enough to keep every core busy on one large batch.
        let mut pieces = Vec::new();
        for (start, chunk) in chunks {
            let rows = chunk.batch.num_rows();
            for at in (0..rows).step_by(PIECE_ROWS) {
                let len = PIECE_ROWS.min(rows - at);
                let piece = Batch {
                    index: chunk.index,
                    offset: chunk.offset + at,
                    batch: chunk.batch.slice(at, len),
                };
                pieces.push((start + at as u64, piece));
            }
        }
        let decoded: Vec<Piece> = pieces
            .par_iter()
            .map(|(start, piece)| self.decode_piece(plan, *start, piece))
            .collect::<Result<_>>()?;
        let Some(first) = decoded.first() else {
            return Ok(Decoded {
                batch: None,
                rejects: Vec::new(),
                filtered: 0,
            });
        };
        let schema = first.batch.schema();
        let batch =
            arrow_select::concat::concat_batches(&schema, decoded.iter().map(|p| &p.batch))?;
        let filtered = decoded.iter().map(|p| p.filtered).sum();
        let rejects = decoded.into_iter().flat_map(|p| p.rejects).collect();
        Ok(Decoded {
            batch: Some(batch),
            rejects,
            filtered,
        })
    }
}
