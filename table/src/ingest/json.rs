//! Newline-delimited JSON input: one record a line, parsed at commit time on every core.

use std::io::BufRead;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch, StringArray, UInt32Array};
use arrow_cast::{CastOptions, cast_with_options};
use arrow_schema::DataType as ArrowType;
use rayon::prelude::*;
use serde_json::Value;

use super::commit::{Chunk, Decoded, Decoder, Follow, Reject, Sender};
use super::target::{Target, path, wkb_point};
use crate::error::{Error, Result};

/// Lines parsed and decoded together on one core.
const PIECE_LINES: usize = 8192;

/// One line of input, trimmed.
#[derive(Default)]
pub(super) struct Line(String);

impl Chunk for Line {
    fn span(&self) -> u64 {
        1
    }

    fn rows(&self) -> u64 {
        u64::from(!self.0.is_empty())
    }

    /// A line is one position, so this is never asked to split one (`0 < n < 1`).
    fn split_front(&mut self, _n: u64) -> Line {
        std::mem::take(self)
    }
}

/// The reader thread: sends the lines of `input`.
pub(super) fn read_lines(
    input: impl BufRead,
    follow: bool,
    done: Arc<AtomicBool>,
    sender: Sender<Line>,
) {
    let mut input = Follow::new(input, follow, done);
    // The first bytes of an Arrow IPC stream (continuation marker) or file (magic) would only
    // give one "not JSON" reject after another.
    match input.fill_buf() {
        Ok(head) if head.starts_with(&[0xff; 4]) || head.starts_with(b"ARROW1") => {
            let _ = sender.send(Err(
                "reading input: it starts like Arrow IPC, not JSON; ingest it with \
                 Table::ingest_arrow (geoberg ingest --format arrow)"
                    .into(),
            ));
            return;
        }
        _ => {}
    }
    loop {
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) => return,
            Ok(_) => {
                let text = line.trim();
                let line = if text.len() == line.len() {
                    line
                } else {
                    text.to_string()
                };
                if sender.send(Ok(Line(line))).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = sender.send(Err(format!("reading input: {e}")));
                return;
            }
        }
    }
}

/// JSON records to batches of the table's columns.
pub(super) struct JsonDecoder {
    target: Target,
    lon: Vec<String>,
    lat: Vec<String>,
    crs: Option<Vec<String>>,
}

fn lookup<'a>(record: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(record, |v, key| v.get(key))
        .filter(|v| !v.is_null())
}

fn reject(line: u64, reason: &str, record: &Value) -> Reject {
    Reject {
        position: line,
        line: serde_json::json!({"line": line, "reason": reason, "record": record}),
    }
}

impl JsonDecoder {
    pub(super) fn new(
        target: Target,
        lon: &str,
        lat: &str,
        crs: Option<&str>,
    ) -> Result<JsonDecoder> {
        for c in &target.columns {
            if !c.ty.is_primitive()
                && !matches!(
                    c.ty,
                    ArrowType::Utf8 | ArrowType::LargeUtf8 | ArrowType::Boolean
                )
            {
                return Err(Error::Unsupported {
                    what: format!("ingesting JSON into column {:?} of type {}", c.name, c.ty),
                    fix: "ingest into a table whose other columns are numbers, strings, \
                          booleans, dates or timestamps, or send Arrow IPC (Table::ingest_arrow)"
                        .into(),
                });
            }
        }
        Ok(JsonDecoder {
            target,
            lon: path(lon),
            lat: path(lat),
            crs: crs.map(path),
        })
    }

    /// The batch of the `records` that decode and how many the filter dropped; the others join
    /// `rejected`.
    fn decode_records(
        &self,
        records: &[(u64, Value)],
        rejected: &mut Vec<Reject>,
    ) -> Result<(RecordBatch, u64)> {
        let mut kept: Vec<usize> = Vec::new();
        let mut points: Vec<[u8; 21]> = Vec::new();
        let mut filtered = 0;
        for (i, (line, record)) in records.iter().enumerate() {
            match self.point(record) {
                Ok(Some((x, y))) => {
                    kept.push(i);
                    points.push(wkb_point(x, y));
                }
                Ok(None) => filtered += 1,
                Err(reason) => rejected.push(reject(*line, &reason, record)),
            }
        }
        // Every other column as text, then cast; a value the cast turns into null is refused.
        let mut arrays: Vec<ArrayRef> = Vec::new();
        let mut bad: Vec<Option<String>> = vec![None; kept.len()];
        for c in &self.target.columns {
            // The value of each row and the path it was found at.
            let found: Vec<Option<(usize, &Value)>> = kept
                .iter()
                .map(|&i| {
                    c.paths
                        .iter()
                        .enumerate()
                        .find_map(|(k, p)| lookup(&records[i].1, p).map(|v| (k, v)))
                })
                .collect();
            let text: StringArray = found
                .iter()
                .map(|f| f.map(|(_, v)| scalar_text(v)))
                .collect();
            let cast = cast_with_options(&text, &c.ty, &CastOptions::default())?;
            for (row, slot) in bad.iter_mut().enumerate() {
                if slot.is_some() {
                    continue;
                }
                match found[row] {
                    Some((k, _)) if cast.is_null(row) => {
                        *slot = Some(format!(
                            "field {} = {:?} is not a {} for column {:?}",
                            c.paths[k].join("."),
                            text.value(row),
                            c.ty,
                            c.name
                        ));
                    }
                    None if c.required => {
                        *slot = Some(format!(
                            "field {} is missing, and column {:?} is required",
                            c.paths[0].join("."),
                            c.name
                        ));
                    }
                    _ => {}
                }
            }
            arrays.push(cast);
        }
        let geometry = BinaryArray::from_iter_values(points.iter());
        let batch = self.target.batch(arrays, geometry, None)?;
        let good: Vec<u32> = (0..kept.len() as u32)
            .filter(|&r| bad[r as usize].is_none())
            .collect();
        for (row, reason) in bad.into_iter().enumerate() {
            if let Some(reason) = reason {
                let (line, record) = &records[kept[row]];
                rejected.push(reject(*line, &reason, record));
            }
        }
        let batch = if good.len() == kept.len() {
            batch
        } else {
            arrow_select::take::take_record_batch(&batch, &UInt32Array::from(good))?
        };
        Ok((batch, filtered))
    }

    /// The record's point in the column's CRS; `None` when the filter drops it.
    fn point(&self, record: &Value) -> std::result::Result<Option<(f64, f64)>, String> {
        let coordinate = |path: &[String]| -> std::result::Result<f64, String> {
            let v = lookup(record, path).ok_or_else(|| format!("no field {}", path.join(".")))?;
            let n = match v {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().parse().ok(),
                _ => None,
            };
            n.filter(|n: &f64| n.is_finite())
                .ok_or_else(|| format!("field {} = {v} is not a number", path.join(".")))
        };
        let (x, y) = (coordinate(&self.lon)?, coordinate(&self.lat)?);
        let mut reprojection = None;
        if let Some(crs_path) = &self.crs
            && let Some(v) = lookup(record, crs_path)
        {
            let text = v
                .as_str()
                .ok_or_else(|| format!("field {} is not a CRS name", crs_path.join(".")))?;
            reprojection = self.target.reprojection_from(text, &crs_path.join("."))?;
        }
        self.target.place(x, y, reprojection)
    }
}

impl Decoder for JsonDecoder {
    type Chunk = Line;

    fn arrived(&mut self, _line: &Line) -> Result<()> {
        Ok(())
    }

    fn decode(&self, lines: &[(u64, Line)]) -> Result<Decoded> {
        // Pieces parsed and decoded on every core, each record dropped where it was parsed.
        let pieces: Vec<(RecordBatch, Vec<Reject>, u64)> = lines
            .par_chunks(PIECE_LINES)
            .map(|piece| {
                let mut rejected = Vec::new();
                let mut records = Vec::with_capacity(piece.len());
                for (line, text) in piece {
                    match serde_json::from_str::<Value>(&text.0) {
                        Ok(r) => records.push((*line, r)),
                        Err(e) => rejected.push(reject(
                            *line,
                            &format!("not JSON: {e}"),
                            &Value::String(text.0.clone()),
                        )),
                    }
                }
                let (batch, filtered) = self.decode_records(&records, &mut rejected)?;
                Ok((batch, rejected, filtered))
            })
            .collect::<Result<_>>()?;
        let schema = match pieces.first() {
            Some((batch, _, _)) => batch.schema(),
            None => {
                return Ok(Decoded {
                    batch: None,
                    rejects: Vec::new(),
                    filtered: 0,
                });
            }
        };
        let batch = arrow_select::concat::concat_batches(&schema, pieces.iter().map(|p| &p.0))?;
        let filtered = pieces.iter().map(|p| p.2).sum();
        Ok(Decoded {
            batch: Some(batch),
            rejects: pieces.into_iter().flat_map(|p| p.1).collect(),
            filtered,
        })
    }
}

/// A JSON scalar as the text a cast reads (objects and arrays as JSON).
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
