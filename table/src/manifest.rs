//! Reading manifests (spec: "Manifests", "Manifest Lists"), the one place that does it:
//! a snapshot's manifest list; the entries of a manifest fully decoded by `iceberg` (what a
//! commit rewrites); and the fast path for planning and maintenance, which decodes only path,
//! status, counts and the raw bounds of a few columns, from many manifests at once (fetched
//! concurrently, decoded in parallel).

use bytes::Bytes;
use iceberg::spec::{
    FormatVersion, Manifest, ManifestEntryRef, ManifestFile, ManifestList, ManifestStatus,
};
use rayon::prelude::*;

use crate::avro::{Container, Cursor, ReadError, Schema};
use crate::bridge;
use crate::error::{Error, Result};
use crate::storage::Storage;

/// Manifests fetched at once while planning: enough requests in flight to hide an object
/// store's latency, few enough to bound the bytes held.
const FETCH_WINDOW: usize = 32;

/// One whole object, or the error with its location.
async fn fetch(
    location: String,
    store: std::sync::Arc<dyn object_store::ObjectStore>,
    path: object_store::path::Path,
) -> std::result::Result<(String, Bytes), (String, object_store::Error)> {
    use object_store::ObjectStoreExt;
    let fetched = async { store.get(&path).await?.bytes().await }.await;
    match fetched {
        Ok(b) => Ok((location, b)),
        Err(e) => Err((location, e)),
    }
}

/// The manifests a manifest list names.
pub(crate) fn read_manifest_list(
    storage: &Storage,
    location: &str,
    version: FormatVersion,
) -> Result<Vec<ManifestFile>> {
    let bytes = storage.read(location)?;
    let list = ManifestList::parse_with_version(&bytes, version)
        .map_err(|e| Error::corrupt(location, e.to_string()))?;
    Ok(list.entries().to_vec())
}

/// Entries of one manifest as written (no inheritance applied), fully decoded.
pub(crate) fn read_manifest(storage: &Storage, m: &ManifestFile) -> Result<Vec<ManifestEntryRef>> {
    let bytes = storage.read(&m.manifest_path)?;
    let bytes = bridge::manifest_to_binary(&bytes, &m.manifest_path)?;
    let manifest = Manifest::parse_avro(&bytes)
        .map_err(|e| Error::corrupt(&m.manifest_path, e.to_string()))?;
    Ok(manifest.into_parts().0)
}

/// Entries of many manifests as written, fully decoded: fetched concurrently, decoded in
/// parallel, in manifest order.
pub(crate) fn read_manifests(
    storage: &Storage,
    manifests: &[ManifestFile],
) -> Result<Vec<Vec<ManifestEntryRef>>> {
    let locations: Vec<&str> = manifests.iter().map(|m| m.manifest_path.as_str()).collect();
    fetch_and_decode(storage, &locations, |_, location, bytes| {
        let bytes = bridge::manifest_to_binary(&bytes, location)?;
        let manifest =
            Manifest::parse_avro(&bytes).map_err(|e| Error::corrupt(location, e.to_string()))?;
        Ok(manifest.into_parts().0)
    })
}

/// The bytes of many files, fetched [`FETCH_WINDOW`] at a time on the I/O runtime, and
/// `decode`d in parallel, window by window; results in input order.
pub(crate) fn fetch_and_decode<T: Send>(
    storage: &Storage,
    locations: &[&str],
    decode: impl Fn(usize, &str, Bytes) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(locations.len());
    for (w, window) in locations.chunks(FETCH_WINDOW).enumerate() {
        let fetches = window
            .iter()
            .map(|l| storage.object_store(l).map(|(s, p)| (l.to_string(), s, p)))
            .collect::<Result<Vec<_>>>()?;
        let fetched: Vec<(String, Bytes)> = crate::storage::block_on(
            futures::future::try_join_all(fetches.into_iter().map(|(l, s, p)| fetch(l, s, p))),
        )
        .map_err(|(l, e)| Error::storage(l, e))?;
        let decoded: Vec<T> = fetched
            .into_par_iter()
            .enumerate()
            .map(|(i, (l, b))| decode(w * FETCH_WINDOW + i, &l, b))
            .collect::<Result<_>>()?;
        out.extend(decoded);
    }
    Ok(out)
}

/// `status` of a manifest entry that removes its file from the snapshot.
const DELETED: i32 = 2;

/// Statistics of one column in one data file, raw as stored in the manifest.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ColumnStats {
    pub(crate) value_count: Option<i64>,
    pub(crate) null_count: Option<i64>,
    pub(crate) lower: Option<Vec<u8>>,
    pub(crate) upper: Option<Vec<u8>>,
}

/// One manifest entry; `stats[i]` belongs to the `i`-th requested field id.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub(crate) status: i32,
    /// The data sequence number: as written, or (through [`read_entries_map`]) inherited from
    /// the manifest when the entry has none.
    pub(crate) sequence_number: Option<i64>,
    pub(crate) content: i32,
    pub(crate) path: String,
    pub(crate) record_count: u64,
    pub(crate) file_size: u64,
    pub(crate) stats: Vec<ColumnStats>,
}

impl Entry {
    /// True unless the entry records the file's removal.
    pub(crate) fn is_live(&self) -> bool {
        self.status != DELETED
    }
}

/// Reads the entries of `manifests` (fetched concurrently, decoded in parallel), keeping
/// statistics of the columns `field_ids` only. Entries come back in manifest order.
pub(crate) fn read_entries(
    storage: &Storage,
    manifests: &[ManifestFile],
    field_ids: &[i32],
) -> Result<Vec<Entry>> {
    read_entries_map(storage, manifests, field_ids, Some)
}

/// [`read_entries`], turning each entry into a `T` (or dropping it) on the decoding task.
pub(crate) fn read_entries_map<T: Send>(
    storage: &Storage,
    manifests: &[ManifestFile],
    field_ids: &[i32],
    f: impl Fn(Entry) -> Option<T> + Sync,
) -> Result<Vec<T>> {
    let locations: Vec<&str> = manifests.iter().map(|m| m.manifest_path.as_str()).collect();
    let per_manifest: Vec<Vec<T>> = fetch_and_decode(storage, &locations, |i, location, bytes| {
        let inherited = manifests[i].sequence_number;
        let entries = decode_manifest(&bytes, location, field_ids)?;
        Ok(entries
            .into_iter()
            .map(|mut e| {
                e.sequence_number.get_or_insert(inherited);
                e
            })
            .filter_map(&f)
            .collect())
    })?;
    let mut out = Vec::with_capacity(per_manifest.iter().map(Vec::len).sum());
    for part in per_manifest {
        out.extend(part);
    }
    Ok(out)
}

/// Decodes one manifest: the fast reader, or `iceberg`'s for codecs it does not implement.
pub(crate) fn decode_manifest(
    bytes: &[u8],
    location: &str,
    field_ids: &[i32],
) -> Result<Vec<Entry>> {
    match decode_fast(bytes, field_ids) {
        Ok(entries) => Ok(entries),
        Err(ReadError::UnsupportedCodec) => decode_with_iceberg(bytes, location, field_ids),
        Err(ReadError::Corrupt(reason)) => Err(Error::corrupt(location, reason)),
    }
}

/// What to do with each field of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Skip,
    Status,
    SequenceNumber,
    DataFile,
    Content,
    Path,
    RecordCount,
    FileSize,
    ValueCounts,
    NullCounts,
    Lower,
    Upper,
}

fn slots(record: &Schema, name_slot: &[(&str, Slot)]) -> Vec<Slot> {
    match record {
        Schema::Record(fields) => fields
            .iter()
            .map(|(name, _)| {
                name_slot
                    .iter()
                    .find(|(n, _)| n == name)
                    .map_or(Slot::Skip, |(_, s)| *s)
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn decode_fast(bytes: &[u8], field_ids: &[i32]) -> std::result::Result<Vec<Entry>, ReadError> {
    let mut container = Container::open(bytes)?;
    let schema = container.schema.clone();
    let bad = |m: &str| ReadError::Corrupt(format!("manifest entry schema: {m}"));
    let entry_slots = slots(
        &schema,
        &[
            ("status", Slot::Status),
            ("sequence_number", Slot::SequenceNumber),
            ("data_file", Slot::DataFile),
        ],
    );
    let data_file = schema
        .field("data_file")
        .and_then(|i| match &schema {
            Schema::Record(f) => Some(&f[i].1),
            _ => None,
        })
        .ok_or_else(|| bad("no data_file record"))?;
    let file_slots = slots(
        data_file,
        &[
            ("content", Slot::Content),
            ("file_path", Slot::Path),
            ("record_count", Slot::RecordCount),
            ("file_size_in_bytes", Slot::FileSize),
            ("value_counts", Slot::ValueCounts),
            ("null_value_counts", Slot::NullCounts),
            ("lower_bounds", Slot::Lower),
            ("upper_bounds", Slot::Upper),
        ],
    );
    if !file_slots.contains(&Slot::Path) {
        return Err(bad("no file_path"));
    }
    let (Schema::Record(entry_fields), Schema::Record(file_fields)) = (&schema, data_file) else {
        return Err(bad("not records"));
    };
    let mut out = Vec::new();
    while let Some((count, block)) = container.next_block()? {
        let mut c = Cursor::new(&block);
        if count > c.remaining() {
            return Err(ReadError::Corrupt(format!(
                "a block of {count} entries holds only {} bytes",
                c.remaining()
            )));
        }
        out.reserve(count);
        for _ in 0..count {
            let mut e = Entry {
                status: 0,
                sequence_number: None,
                content: 0,
                path: String::new(),
                record_count: 0,
                file_size: 0,
                stats: vec![ColumnStats::default(); field_ids.len()],
            };
            for ((_, ty), slot) in entry_fields.iter().zip(&entry_slots) {
                match slot {
                    Slot::Status => e.status = read_int(&mut c, ty)?.unwrap_or(0),
                    Slot::SequenceNumber => e.sequence_number = read_long(&mut c, ty)?,
                    Slot::DataFile => {
                        for ((_, ty), slot) in file_fields.iter().zip(&file_slots) {
                            read_file_field(&mut c, ty, *slot, field_ids, &mut e)?;
                        }
                    }
                    _ => c.skip(ty)?,
                }
            }
            out.push(e);
        }
    }
    Ok(out)
}

fn read_int(c: &mut Cursor<'_>, ty: &Schema) -> std::result::Result<Option<i32>, ReadError> {
    match c.branch(ty)? {
        Some(Schema::Int) => c.int().map(Some),
        Some(other) => c.skip(other).map(|()| None),
        None => Ok(None),
    }
}

fn read_long(c: &mut Cursor<'_>, ty: &Schema) -> std::result::Result<Option<i64>, ReadError> {
    match c.branch(ty)? {
        Some(Schema::Int | Schema::Long) => c.long().map(Some),
        Some(other) => c.skip(other).map(|()| None),
        None => Ok(None),
    }
}

fn read_file_field(
    c: &mut Cursor<'_>,
    ty: &Schema,
    slot: Slot,
    field_ids: &[i32],
    e: &mut Entry,
) -> std::result::Result<(), ReadError> {
    let non_negative = |v: Option<i64>, what: &str| {
        u64::try_from(v.unwrap_or(0))
            .map_err(|_| ReadError::Corrupt(format!("{what} is negative: {v:?}")))
    };
    match slot {
        Slot::Content => e.content = read_int(c, ty)?.unwrap_or(0),
        Slot::Path => match c.branch(ty)? {
            Some(Schema::String) => {
                e.path = std::str::from_utf8(c.bytes()?)
                    .map_err(|_| ReadError::Corrupt("file_path is not UTF-8".into()))?
                    .to_owned();
            }
            _ => return Err(ReadError::Corrupt("file_path is not a string".into())),
        },
        Slot::RecordCount => e.record_count = non_negative(read_long(c, ty)?, "record_count")?,
        Slot::FileSize => e.file_size = non_negative(read_long(c, ty)?, "file_size_in_bytes")?,
        Slot::ValueCounts | Slot::NullCounts | Slot::Lower | Slot::Upper => {
            read_column_map(c, ty, slot, field_ids, e)?;
        }
        Slot::Skip | Slot::Status | Slot::SequenceNumber | Slot::DataFile => c.skip(ty)?,
    }
    Ok(())
}

/// An Iceberg int-keyed map: an array of `{key: int, value: long|bytes}` records.
fn read_column_map(
    c: &mut Cursor<'_>,
    ty: &Schema,
    slot: Slot,
    field_ids: &[i32],
    e: &mut Entry,
) -> std::result::Result<(), ReadError> {
    let Some(array) = c.branch(ty)? else {
        return Ok(());
    };
    let Schema::Array(item) = array else {
        // Not the Iceberg layout: the stats stay unknown, so the file is read.
        return c.skip(array);
    };
    let (Some(k), Some(v), Schema::Record(fields)) =
        (item.field("key"), item.field("value"), item.as_ref())
    else {
        return c.skip(array);
    };
    loop {
        let n = c.block_len()?;
        if n == 0 {
            return Ok(());
        }
        for _ in 0..n {
            let (mut key, mut value_long, mut value_bytes) = (None, None, None);
            for (i, (_, fty)) in fields.iter().enumerate() {
                if i == k {
                    key = read_int(c, fty)?;
                } else if i == v && matches!(slot, Slot::Lower | Slot::Upper) {
                    if let Some(b) = c.branch(fty)? {
                        match b {
                            Schema::Bytes => value_bytes = Some(c.bytes()?),
                            other => c.skip(other)?,
                        }
                    }
                } else if i == v {
                    value_long = read_long(c, fty)?;
                } else {
                    c.skip(fty)?;
                }
            }
            let Some(pos) = key.and_then(|key| field_ids.iter().position(|&id| id == key)) else {
                continue;
            };
            let s = &mut e.stats[pos];
            match slot {
                Slot::ValueCounts => s.value_count = value_long,
                Slot::NullCounts => s.null_count = value_long,
                Slot::Lower => s.lower = value_bytes.map(<[u8]>::to_vec),
                Slot::Upper => s.upper = value_bytes.map(<[u8]>::to_vec),
                _ => {}
            }
        }
    }
}

/// The reference path through `iceberg` (any codec, full decoding).
fn decode_with_iceberg(bytes: &[u8], location: &str, field_ids: &[i32]) -> Result<Vec<Entry>> {
    let bytes = bridge::manifest_to_binary(bytes, location)?;
    let manifest =
        Manifest::parse_avro(&bytes).map_err(|e| Error::corrupt(location, e.to_string()))?;
    let (entries, _) = manifest.into_parts();
    let raw =
        |d: Option<&iceberg::spec::Datum>| d.and_then(|d| d.to_bytes().ok()).map(|b| b.to_vec());
    Ok(entries
        .iter()
        .map(|e| {
            let f = e.data_file();
            Entry {
                sequence_number: e.sequence_number(),
                status: match e.status() {
                    ManifestStatus::Existing => 0,
                    ManifestStatus::Added => 1,
                    ManifestStatus::Deleted => DELETED,
                },
                content: f.content_type() as i32,
                path: f.file_path().to_owned(),
                record_count: f.record_count(),
                file_size: f.file_size_in_bytes(),
                stats: field_ids
                    .iter()
                    .map(|id| ColumnStats {
                        value_count: f.value_counts().get(id).map(|&v| v as i64),
                        null_count: f.null_value_counts().get(id).map(|&v| v as i64),
                        lower: raw(f.lower_bounds().get(id)),
                        upper: raw(f.upper_bounds().get(id)),
                    })
                    .collect(),
            }
        })
        .collect())
}

#[cfg(test)]
pub(crate) fn decode_both(bytes: &[u8], field_ids: &[i32]) -> (Vec<Entry>, Vec<Entry>) {
    (
        decode_fast(bytes, field_ids).unwrap(),
        decode_with_iceberg(bytes, "test", field_ids).unwrap(),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use arrow_array::{BinaryArray, Int64Array, RecordBatch};
    use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema};

    use super::*;
    use crate::avro::Cursor;
    use crate::{
        Catalog, Column, CreateTable, DataType, MemoryCatalog, PartitionField, TableIdent,
    };

    fn point(x: f64, y: f64) -> Vec<u8> {
        [&[1u8, 1, 0, 0, 0][..], &x.to_le_bytes(), &y.to_le_bytes()].concat()
    }

    /// The same container with every block deflated and `avro.codec` = deflate.
    fn deflated(bytes: &[u8]) -> Vec<u8> {
        let zig = crate::avro::zigzag;
        let mut c = Cursor::new(bytes);
        c.take(4).unwrap();
        let mut meta = Vec::new();
        loop {
            let n = c.block_len().unwrap();
            if n == 0 {
                break;
            }
            for _ in 0..n {
                let k = c.bytes().unwrap();
                let v = c.bytes().unwrap();
                if k != b"avro.codec" {
                    meta.push((k, v));
                }
            }
        }
        let sync = c.take(16).unwrap();
        let mut out = b"Obj\x01".to_vec();
        out.extend(zig(meta.len() as i64 + 1));
        for (k, v) in meta
            .iter()
            .chain([(&b"avro.codec"[..], &b"deflate"[..])].iter())
        {
            out.extend(zig(k.len() as i64));
            out.extend_from_slice(k);
            out.extend(zig(v.len() as i64));
            out.extend_from_slice(v);
        }
        out.push(0);
        out.extend_from_slice(sync);
        while c.remaining() > 0 {
            let count = c.long().unwrap();
            let data = miniz_oxide::deflate::compress_to_vec(c.bytes().unwrap(), 6);
            c.take(16).unwrap();
            out.extend(zig(count));
            out.extend(zig(data.len() as i64));
            out.extend(data);
            out.extend_from_slice(sync);
        }
        out
    }

    #[test]
    fn fast_reader_equals_iceberg_on_real_manifests() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Arc::new(MemoryCatalog::new("t", dir.path()).unwrap());
        catalog.create_namespace("db").unwrap();
        let table = CreateTable::new([
            Column::new("id", DataType::Long).required(),
            Column::new("geom", DataType::geometry(4326)),
        ])
        .with_bbox_columns("geom")
        .partition_by(PartitionField::bucket("id", 3))
        .create(catalog, &TableIdent::new("db", "t").unwrap())
        .unwrap();
        let srid = HashMap::from([("srid".to_string(), "4326".to_string())]);
        let batch = RecordBatch::try_new(
            Arc::new(ArrowSchema::new(vec![
                Field::new("id", ArrowType::Int64, false),
                Field::new("geom", ArrowType::Binary, true).with_metadata(srid),
            ])),
            vec![
                Arc::new(Int64Array::from_iter_values(0..30)),
                Arc::new(BinaryArray::from_iter(
                    (0..30).map(|i| (i % 7 != 0).then(|| point(i as f64, -(i as f64)))),
                )),
            ],
        )
        .unwrap();
        let (table, _) = table.append(&[batch]).unwrap();
        let ids: Vec<i32> = (1..=7).collect();
        for m in table.manifests().unwrap() {
            let bytes = table.storage().read(&m.manifest_path).unwrap();
            let (fast, reference) = decode_both(&bytes, &ids);
            assert_eq!(fast.len(), 3);
            assert!(fast.iter().any(|e| e.stats[5].lower.is_some()));
            assert_eq!(fast, reference);
            let (deflated_fast, _) = decode_both(&deflated(&bytes), &ids);
            assert_eq!(deflated_fast, reference);
            // Every truncation is an error, never a panic.
            for cut in (0..bytes.len()).step_by(7) {
                let _ = decode_fast(&bytes[..cut], &ids);
            }
        }
    }
}
