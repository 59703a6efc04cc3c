//! A minimal Avro object-container reader: just enough to walk manifest entries, decoding the
//! few fields planning needs and skipping the rest without building values.
//!
//! `iceberg`'s `Manifest::parse_avro` decodes every field of every entry into a generic Avro
//! value, then into a `DataFile` with typed bounds: about 10 µs per entry. Planning needs the
//! path, the counts and the bounds of one or five columns, which this reader pulls out directly.
//! Untrusted input: every length is checked against the bytes that remain, decompression is
//! capped, and any violation is a [`ReadError`], never a panic or a huge allocation.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

/// Why a container could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// A codec this reader does not implement: the caller falls back to `apache-avro`.
    UnsupportedCodec,
    /// The bytes are not a valid Avro container (or not the schema they claim).
    Corrupt(String),
}

type Result<T> = std::result::Result<T, ReadError>;

fn corrupt<T>(msg: impl Into<String>) -> Result<T> {
    Err(ReadError::Corrupt(msg.into()))
}

/// Largest decompressed block accepted (a deflate bomb fails here instead of exhausting memory).
const MAX_BLOCK_BYTES: usize = 1 << 30;

/// An Avro schema, resolved: named references are replaced by the type they name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Schema {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Fixed(usize),
    Enum,
    Record(Vec<(String, Schema)>),
    Array(Box<Schema>),
    Map(Box<Schema>),
    Union(Vec<Schema>),
}

impl Schema {
    /// Parses the `avro.schema` JSON of a container.
    pub(crate) fn parse(json: &[u8]) -> Result<Schema> {
        let v: Value = serde_json::from_slice(json)
            .map_err(|e| ReadError::Corrupt(format!("avro.schema is not JSON: {e}")))?;
        Self::from_json(&v, &mut HashMap::new(), 0)
    }

    fn from_json(v: &Value, names: &mut HashMap<String, Schema>, depth: usize) -> Result<Schema> {
        if depth > 64 {
            return corrupt("avro.schema nests deeper than 64 levels");
        }
        match v {
            Value::String(s) => Self::primitive(s)
                .or_else(|| names.get(s.as_str()).cloned())
                .map_or_else(
                    || corrupt(format!("avro.schema names unknown type {s:?}")),
                    Ok,
                ),
            Value::Array(branches) => branches
                .iter()
                .map(|b| Self::from_json(b, names, depth + 1))
                .collect::<Result<_>>()
                .map(Schema::Union),
            Value::Object(o) => {
                let ty = o.get("type");
                let schema = match ty.and_then(Value::as_str) {
                    Some("record" | "error") => {
                        let Some(fields) = o.get("fields").and_then(Value::as_array) else {
                            return corrupt("avro.schema record without fields");
                        };
                        let mut out = Vec::with_capacity(fields.len());
                        for f in fields {
                            let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
                            let Some(t) = f.get("type") else {
                                return corrupt(format!("avro.schema field {name:?} has no type"));
                            };
                            out.push((name.to_string(), Self::from_json(t, names, depth + 1)?));
                        }
                        Schema::Record(out)
                    }
                    Some("enum") => Schema::Enum,
                    Some("array") => match o.get("items") {
                        Some(i) => Schema::Array(Box::new(Self::from_json(i, names, depth + 1)?)),
                        None => return corrupt("avro.schema array without items"),
                    },
                    Some("map") => match o.get("values") {
                        Some(i) => Schema::Map(Box::new(Self::from_json(i, names, depth + 1)?)),
                        None => return corrupt("avro.schema map without values"),
                    },
                    Some("fixed") => match o.get("size").and_then(Value::as_u64) {
                        Some(n) if n <= u32::MAX as u64 => Schema::Fixed(n as usize),
                        _ => return corrupt("avro.schema fixed without a valid size"),
                    },
                    // {"type": "long", "logicalType": ...} and {"type": {...}}.
                    _ => match ty {
                        Some(t) => Self::from_json(t, names, depth + 1)?,
                        None => return corrupt("avro.schema object without a type"),
                    },
                };
                if let Some(name) = o.get("name").and_then(Value::as_str) {
                    if let Some(ns) = o.get("namespace").and_then(Value::as_str) {
                        names.insert(format!("{ns}.{name}"), schema.clone());
                    }
                    names.insert(name.to_string(), schema.clone());
                }
                Ok(schema)
            }
            other => corrupt(format!("avro.schema has an invalid type {other}")),
        }
    }

    fn primitive(s: &str) -> Option<Schema> {
        Some(match s {
            "null" => Schema::Null,
            "boolean" => Schema::Boolean,
            "int" => Schema::Int,
            "long" => Schema::Long,
            "float" => Schema::Float,
            "double" => Schema::Double,
            "bytes" => Schema::Bytes,
            "string" => Schema::String,
            _ => return None,
        })
    }

    /// Position of a record field by name.
    pub(crate) fn field(&self, name: &str) -> Option<usize> {
        match self {
            Schema::Record(fields) => fields.iter().position(|(n, _)| n == name),
            _ => None,
        }
    }
}

/// A cursor over Avro binary encoding.
#[derive(Debug)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// A zig-zag varint `long`.
    pub(crate) fn long(&mut self) -> Result<i64> {
        let mut v: u64 = 0;
        for shift in (0..70).step_by(7) {
            let Some(&b) = self.buf.get(self.pos) else {
                return corrupt("truncated varint");
            };
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok((v >> 1) as i64 ^ -((v & 1) as i64));
            }
        }
        corrupt("varint longer than 10 bytes")
    }

    pub(crate) fn int(&mut self) -> Result<i32> {
        let v = self.long()?;
        i32::try_from(v).map_or_else(|_| corrupt(format!("int {v} out of range")), Ok)
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return corrupt(format!(
                "a value of {n} bytes runs past the end ({} bytes left)",
                self.remaining()
            ));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// `bytes` or `string`.
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.long()?;
        let n = usize::try_from(n).map_or_else(|_| corrupt(format!("negative length {n}")), Ok)?;
        self.take(n)
    }

    /// The branch of a union value (the schema itself if it is not a union); `None` for null.
    pub(crate) fn branch<'s>(&mut self, schema: &'s Schema) -> Result<Option<&'s Schema>> {
        let s = match schema {
            Schema::Union(branches) => {
                let i = self.long()?;
                match usize::try_from(i).ok().and_then(|i| branches.get(i)) {
                    Some(b) => b,
                    None => return corrupt(format!("union branch {i} does not exist")),
                }
            }
            s => s,
        };
        Ok((*s != Schema::Null).then_some(s))
    }

    /// Item count of the next array/map block (0 ends the value); skips a block's byte size.
    pub(crate) fn block_len(&mut self) -> Result<usize> {
        let n = self.long()?;
        let n = if n < 0 {
            self.long()?; // block size in bytes
            n.unsigned_abs()
        } else {
            n as u64
        };
        // Every item of the types stored in manifests takes at least one byte.
        if n > self.remaining() as u64 {
            return corrupt(format!(
                "a block of {n} items is longer than the {} bytes left",
                self.remaining()
            ));
        }
        Ok(n as usize)
    }

    /// Skips one value of `schema`.
    pub(crate) fn skip(&mut self, schema: &Schema) -> Result<()> {
        match schema {
            Schema::Null => {}
            Schema::Boolean => {
                self.take(1)?;
            }
            Schema::Int | Schema::Long | Schema::Enum => {
                self.long()?;
            }
            Schema::Float => {
                self.take(4)?;
            }
            Schema::Double => {
                self.take(8)?;
            }
            Schema::Bytes | Schema::String => {
                self.bytes()?;
            }
            Schema::Fixed(n) => {
                self.take(*n)?;
            }
            Schema::Record(fields) => {
                for (_, f) in fields {
                    self.skip(f)?;
                }
            }
            Schema::Array(item) => loop {
                let n = self.block_len()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    self.skip(item)?;
                }
            },
            Schema::Map(value) => loop {
                let n = self.block_len()?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    self.bytes()?;
                    self.skip(value)?;
                }
            },
            Schema::Union(_) => {
                if let Some(b) = self.branch(schema)? {
                    self.skip(b)?;
                }
            }
        }
        Ok(())
    }
}

/// An Avro object container file: header parsed, blocks not yet decoded.
#[derive(Debug)]
pub(crate) struct Container<'a> {
    pub(crate) schema: Schema,
    deflate: bool,
    sync: &'a [u8],
    body: Cursor<'a>,
}

impl<'a> Container<'a> {
    /// Reads the header: magic, metadata (`avro.schema`, `avro.codec`) and sync marker.
    pub(crate) fn open(bytes: &'a [u8]) -> Result<Self> {
        let mut c = Cursor::new(bytes);
        if c.take(4).ok() != Some(b"Obj\x01".as_slice()) {
            return corrupt("not an Avro object container (bad magic)");
        }
        let (mut schema, mut codec) = (None, None);
        loop {
            let n = c.block_len()?;
            if n == 0 {
                break;
            }
            for _ in 0..n {
                let key = c.bytes()?;
                let value = c.bytes()?;
                match key {
                    b"avro.schema" => schema = Some(value),
                    b"avro.codec" => codec = Some(value),
                    _ => {}
                }
            }
        }
        let sync = c.take(16)?;
        let deflate = match codec.unwrap_or(b"null") {
            b"null" => false,
            b"deflate" => true,
            _ => return Err(ReadError::UnsupportedCodec),
        };
        let Some(schema) = schema else {
            return corrupt("Avro container without avro.schema");
        };
        Ok(Container {
            schema: Schema::parse(schema)?,
            deflate,
            sync,
            body: Cursor::new(&bytes[c.pos..]),
        })
    }

    /// The next data block: its object count and its (decompressed) bytes.
    pub(crate) fn next_block(&mut self) -> Result<Option<(usize, Cow<'a, [u8]>)>> {
        if self.body.remaining() == 0 {
            return Ok(None);
        }
        let count = self.body.long()?;
        let count =
            usize::try_from(count).map_or_else(|_| corrupt(format!("block count {count}")), Ok)?;
        let data = self.body.bytes()?;
        if self.body.take(16)? != self.sync {
            return corrupt("sync marker mismatch after a data block");
        }
        let data = if self.deflate {
            Cow::Owned(
                miniz_oxide::inflate::decompress_to_vec_with_limit(data, MAX_BLOCK_BYTES)
                    .map_err(|e| ReadError::Corrupt(format!("deflate block: {e:?}")))?,
            )
        } else {
            Cow::Borrowed(data)
        };
        Ok(Some((count, data)))
    }
}

/// Avro's zig-zag varint encoding of `v`: what tests use to build containers by hand.
#[cfg(test)]
pub(crate) fn zigzag(v: i64) -> Vec<u8> {
    let mut u = ((v << 1) ^ (v >> 63)) as u64;
    let mut out = Vec::new();
    loop {
        let b = (u & 0x7f) as u8;
        u >>= 7;
        if u == 0 {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_bad_lengths_are_errors() {
        for v in [0, 1, -1, 63, -64, 64, i64::MAX, i64::MIN, 1 << 40] {
            assert_eq!(Cursor::new(&zigzag(v)).long().unwrap(), v);
        }
        assert!(Cursor::new(&[0xff; 11]).long().is_err());
        // A string claiming 2^40 bytes in a 3-byte buffer.
        let mut buf = zigzag(1 << 40);
        buf.extend_from_slice(b"abc");
        assert!(Cursor::new(&buf).bytes().is_err());
        // An array block claiming a billion items.
        let buf = zigzag(1_000_000_000);
        assert!(
            Cursor::new(&buf)
                .skip(&Schema::Array(Box::new(Schema::Long)))
                .is_err()
        );
    }

    #[test]
    fn schemas_resolve_named_types_and_reject_unknown_ones() {
        let s = Schema::parse(
            br#"{"type":"record","name":"r","fields":[
                {"name":"a","type":{"type":"fixed","name":"f16","size":16}},
                {"name":"b","type":["null","f16"]},
                {"name":"c","type":{"type":"long","logicalType":"timestamp-micros"}}]}"#,
        )
        .unwrap();
        assert_eq!(
            s,
            Schema::Record(vec![
                ("a".into(), Schema::Fixed(16)),
                (
                    "b".into(),
                    Schema::Union(vec![Schema::Null, Schema::Fixed(16)])
                ),
                ("c".into(), Schema::Long),
            ])
        );
        assert!(
            Schema::parse(br#"{"type":"record","name":"r","fields":[{"name":"x","type":"r"}]}"#)
                .is_err()
        );
        assert!(Schema::parse(b"[").is_err());
    }
}
