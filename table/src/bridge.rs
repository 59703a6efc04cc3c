//! The geo-type bridge: the only place that knows `iceberg` 0.10.1 has no geospatial types.
//!
//! `iceberg` refuses metadata JSON and manifest headers whose schema holds `geometry` or
//! `geography` (apache/iceberg-rust#2933 adds them). We hand it the same documents with those
//! fields typed `binary` (what the values are physically: WKB) and restore the real types, by
//! field id, on everything we write. Delete this module when `iceberg` ships geo types.

use std::collections::BTreeMap;

use iceberg::spec::{PrimitiveType, TableMetadata, Type};
use serde_json::Value;

use crate::error::{Error, Result};
use geoberg_crs::ColumnType;

use crate::typestring::{parse_type_string, render_type_string};

/// Geospatial fields of a table, by Iceberg field id.
pub type GeoFields = BTreeMap<i32, ColumnType>;

/// Serialises metadata for the table's `metadata/` folder with geo fields restored.
pub fn metadata_to_json(metadata: &TableMetadata, geo: &GeoFields) -> Result<Vec<u8>> {
    let mut doc = serde_json::to_value(metadata)
        .map_err(|e| Error::corrupt("<table metadata>", e.to_string()))?;
    for schema in metadata_schemas(&mut doc) {
        for_each_field(schema, &mut |id, ty| {
            if let Some(rendered) = geo.get(&id).and_then(render_type_string)
                && ty.as_str() == Some("binary")
            {
                *ty = Value::String(rendered);
            }
            Ok(())
        })?;
    }
    serde_json::to_vec_pretty(&doc).map_err(|e| Error::corrupt("<table metadata>", e.to_string()))
}

/// Parses metadata JSON written by any engine; geo fields come back as `binary` in the
/// `iceberg` view plus their real types in [`GeoFields`].
pub fn metadata_from_json(bytes: &[u8], location: &str) -> Result<(TableMetadata, GeoFields)> {
    let mut doc: Value =
        serde_json::from_slice(bytes).map_err(|e| Error::corrupt(location, e.to_string()))?;
    let mut geo = GeoFields::new();
    for schema in metadata_schemas(&mut doc) {
        geo_to_binary(schema, &mut geo)?;
    }
    let metadata: TableMetadata =
        serde_json::from_value(doc).map_err(|e| Error::corrupt(location, e.to_string()))?;
    // `iceberg` may read a document differently from its text (of two schemas with one id the
    // last wins): keep the geo fields that the parsed metadata has, as binary columns.
    geo.retain(|&id, _| {
        metadata.schemas_iter().any(|s| {
            s.field_by_id(id)
                .is_some_and(|f| matches!(*f.field_type, Type::Primitive(PrimitiveType::Binary)))
        })
    });
    Ok((metadata, geo))
}

/// Rewrites the `schema` entry of a manifest's Avro header so that geo fields carry their real
/// types. Entries and sync marker are copied byte for byte.
pub fn manifest_to_geo(avro: &[u8], geo: &GeoFields, location: &str) -> Result<Vec<u8>> {
    rewrite_avro_schema_header(avro, location, |schema| {
        for_each_field(schema, &mut |id, ty| {
            if let Some(rendered) = geo.get(&id).and_then(render_type_string)
                && ty.as_str() == Some("binary")
            {
                *ty = Value::String(rendered);
            }
            Ok(())
        })
    })
}

/// Rewrites the `schema` entry of a manifest's Avro header so that `iceberg` can parse it.
pub fn manifest_to_binary(avro: &[u8], location: &str) -> Result<Vec<u8>> {
    let mut geo = GeoFields::new();
    rewrite_avro_schema_header(avro, location, |schema| geo_to_binary(schema, &mut geo))
}

fn geo_to_binary(schema: &mut Value, geo: &mut GeoFields) -> Result<()> {
    for_each_field(schema, &mut |id, ty| {
        if let Some(s) = ty.as_str()
            && let Some(g) = parse_type_string(s)?
        {
            geo.insert(id, g);
            *ty = Value::String("binary".into());
        }
        Ok(())
    })
}

/// `schemas` (v2/v3) and `schema` (v1) of a metadata document.
fn metadata_schemas(doc: &mut Value) -> Vec<&mut Value> {
    let Some(obj) = doc.as_object_mut() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in obj.iter_mut() {
        match (key.as_str(), value) {
            ("schemas", Value::Array(list)) => out.extend(list.iter_mut()),
            ("schema", v @ Value::Object(_)) => out.push(v),
            _ => {}
        }
    }
    out
}

/// Calls `f(field_id, type)` for every primitive type string in a struct type, depth first,
/// through nested structs, lists and maps.
fn for_each_field(
    struct_type: &mut Value,
    f: &mut impl FnMut(i32, &mut Value) -> Result<()>,
) -> Result<()> {
    let Some(fields) = struct_type.get_mut("fields").and_then(Value::as_array_mut) else {
        return Ok(());
    };
    for field in fields {
        let id = field.get("id").and_then(Value::as_i64);
        if let (Some(id), Some(ty)) = (id, field.get_mut("type")) {
            visit_type(id as i32, ty, f)?;
        }
    }
    Ok(())
}

fn visit_type(
    id: i32,
    ty: &mut Value,
    f: &mut impl FnMut(i32, &mut Value) -> Result<()>,
) -> Result<()> {
    match ty {
        Value::String(_) => f(id, ty),
        Value::Object(obj) => match obj.get("type").and_then(Value::as_str) {
            Some("struct") => for_each_field(ty, f),
            Some("list") => nested(ty, "element-id", "element", f),
            Some("map") => {
                nested(ty, "key-id", "key", f)?;
                nested(ty, "value-id", "value", f)
            }
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

fn nested(
    ty: &mut Value,
    id_key: &str,
    type_key: &str,
    f: &mut impl FnMut(i32, &mut Value) -> Result<()>,
) -> Result<()> {
    let Some(id) = ty.get(id_key).and_then(Value::as_i64) else {
        return Ok(());
    };
    match ty.get_mut(type_key) {
        Some(inner) => visit_type(id as i32, inner, f),
        None => Ok(()),
    }
}

const AVRO_MAGIC: &[u8; 4] = b"Obj\x01";

/// Parses an Avro object-container header (magic, metadata map, 16-byte sync), lets `edit`
/// change the JSON in its `schema` entry, and re-encodes the header in front of the unchanged
/// data blocks.
fn rewrite_avro_schema_header(
    avro: &[u8],
    location: &str,
    mut edit: impl FnMut(&mut Value) -> Result<()>,
) -> Result<Vec<u8>> {
    let corrupt = |what: &str| Error::corrupt(location, format!("Avro header: {what}"));
    if avro.get(..4) != Some(AVRO_MAGIC.as_slice()) {
        return Err(corrupt("missing magic bytes"));
    }
    let mut pos = 4;
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    loop {
        let mut count = read_long(avro, &mut pos).ok_or_else(|| corrupt("truncated map"))?;
        if count == 0 {
            break;
        }
        if count < 0 {
            count = count
                .checked_neg()
                .ok_or_else(|| corrupt("bad block count"))?;
            read_long(avro, &mut pos).ok_or_else(|| corrupt("truncated block size"))?;
        }
        for _ in 0..count {
            let key = read_bytes(avro, &mut pos).ok_or_else(|| corrupt("truncated key"))?;
            let value = read_bytes(avro, &mut pos).ok_or_else(|| corrupt("truncated value"))?;
            entries.push((key.to_vec(), value.to_vec()));
        }
    }
    let rest = avro
        .get(pos..)
        .filter(|r| r.len() >= 16)
        .ok_or_else(|| corrupt("missing sync marker"))?;
    for (key, value) in &mut entries {
        if key.as_slice() == b"schema" {
            let mut schema: Value = serde_json::from_slice(value)
                .map_err(|e| corrupt(&format!("schema is not JSON: {e}")))?;
            let before = schema.clone();
            edit(&mut schema)?;
            // A schema without geo fields keeps its bytes: nothing is re-spelled.
            if schema != before {
                *value = serde_json::to_vec(&schema).map_err(|e| corrupt(&e.to_string()))?;
            }
        }
    }
    let mut out = Vec::with_capacity(avro.len() + 64);
    out.extend_from_slice(AVRO_MAGIC);
    // One block with every entry, then the terminating zero; an empty map is the zero alone
    // (a block of zero entries would read as the end of the map).
    if !entries.is_empty() {
        write_long(&mut out, entries.len() as i64);
    }
    for (key, value) in &entries {
        write_long(&mut out, key.len() as i64);
        out.extend_from_slice(key);
        write_long(&mut out, value.len() as i64);
        out.extend_from_slice(value);
    }
    write_long(&mut out, 0);
    out.extend_from_slice(rest);
    Ok(out)
}

/// Avro `long`: zig-zag varint.
fn read_long(buf: &[u8], pos: &mut usize) -> Option<i64> {
    let mut value: u64 = 0;
    for shift in (0..64).step_by(7) {
        let byte = *buf.get(*pos)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some((value >> 1) as i64 ^ -((value & 1) as i64));
        }
    }
    None
}

fn read_bytes<'a>(buf: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let len = usize::try_from(read_long(buf, pos)?).ok()?;
    let out = buf.get(*pos..pos.checked_add(len)?)?;
    *pos += len;
    Some(out)
}

fn write_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

#[cfg(test)]
mod tests {
    use super::*;
    use geoberg_crs::{Crs, EdgeAlgorithm};
    use iceberg::spec::{
        FormatVersion, NestedField, PrimitiveType, Schema, SortOrder, TableMetadataBuilder, Type,
        UnboundPartitionSpec,
    };
    use proptest::prelude::*;
    use std::sync::Arc;

    fn geo_type() -> impl Strategy<Value = ColumnType> {
        let crs = prop_oneof![
            Just(Crs::OgcCrs84),
            Just(Crs::Epsg(3857)),
            Just(Crs::Srid(0)),
            Just(Crs::Projjson("my_crs".into())),
        ];
        let edges = prop::sample::select(EdgeAlgorithm::ALL.to_vec());
        prop_oneof![
            crs.clone().prop_map(ColumnType::geometry),
            (crs, edges).prop_map(|(crs, edges)| ColumnType::Geography { crs, edges }),
        ]
    }

    /// A column: `None` = an ordinary long column, `Some(t)` = a geo column.
    fn columns() -> impl Strategy<Value = Vec<Option<ColumnType>>> {
        prop::collection::vec(prop::option::of(geo_type()), 1..12)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn metadata_round_trips_through_the_bridge(cols in columns()) {
            let fields = cols.iter().enumerate().map(|(i, c)| {
                let ty = if c.is_some() { PrimitiveType::Binary } else { PrimitiveType::Long };
                Arc::new(NestedField::optional(i as i32 + 1, format!("c{i}"), Type::Primitive(ty)))
            }).collect::<Vec<_>>();
            let schema = Schema::builder().with_fields(fields).build().unwrap();
            let metadata = TableMetadataBuilder::new(
                schema,
                UnboundPartitionSpec::builder().build(),
                SortOrder::unsorted_order(),
                "file:///tmp/t".into(),
                FormatVersion::V3,
                Default::default(),
            ).unwrap().build().unwrap().metadata;
            let geo: GeoFields = cols.iter().enumerate()
                .filter_map(|(i, c)| c.clone().map(|t| (i as i32 + 1, t)))
                .collect();
            let json = metadata_to_json(&metadata, &geo).unwrap();
            let text = String::from_utf8(json.clone()).unwrap();
            for t in geo.values() {
                let rendered = format!("\"{}\"", render_type_string(t).unwrap());
                prop_assert!(text.contains(&rendered), "{} missing", rendered);
            }
            let (back, back_geo) = metadata_from_json(&json, "m.json").unwrap();
            prop_assert_eq!(back, metadata);
            prop_assert_eq!(back_geo, geo);
        }
    }

    #[test]
    fn foreign_spellings_load_as_binary_with_real_types() {
        let json = r#"{"format-version":3,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1",
            "location":"file:///tmp/t","last-sequence-number":0,"last-updated-ms":1,
            "last-column-id":3,"current-schema-id":0,"next-row-id":0,
            "schemas":[{"type":"struct","schema-id":0,"fields":[
              {"id":1,"name":"a","required":false,"type":"geometry(ogc:crs84)"},
              {"id":2,"name":"b","required":false,"type":"geometry('EPSG:3857')"},
              {"id":3,"name":"c","required":false,"type":"geography(srid:4326, spherical)"}]}],
            "default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],
            "last-partition-id":999,"default-sort-order-id":0,
            "sort-orders":[{"order-id":0,"fields":[]}],"properties":{},
            "snapshots":[],"snapshot-log":[],"metadata-log":[],"refs":{}}"#;
        let (m, geo) = metadata_from_json(json.as_bytes(), "m.json").unwrap();
        assert_eq!(m.current_schema().as_struct().fields().len(), 3);
        assert_eq!(render_type_string(&geo[&1]).unwrap(), "geometry");
        assert_eq!(render_type_string(&geo[&2]).unwrap(), "geometry(EPSG:3857)");
        assert_eq!(render_type_string(&geo[&3]).unwrap(), "geography");
    }

    #[test]
    fn avro_long_round_trips() {
        for v in [0i64, 1, -1, 63, -64, 64, 1 << 40, i64::MAX, i64::MIN] {
            let mut buf = Vec::new();
            write_long(&mut buf, v);
            let mut pos = 0;
            assert_eq!(read_long(&buf, &mut pos), Some(v));
            assert_eq!(pos, buf.len());
        }
    }

    #[test]
    fn truncated_headers_are_errors_not_panics() {
        let mut avro = AVRO_MAGIC.to_vec();
        write_long(&mut avro, 1);
        write_long(&mut avro, 6);
        avro.extend_from_slice(b"sch");
        assert!(manifest_to_binary(&avro, "m.avro").is_err());
        assert!(manifest_to_binary(b"nope", "m.avro").is_err());
    }

    #[test]
    fn an_empty_metadata_map_keeps_the_sync_marker_in_place() {
        let mut avro = AVRO_MAGIC.to_vec();
        write_long(&mut avro, 0);
        avro.extend_from_slice(&[7; 16]);
        avro.extend_from_slice(b"blocks");
        assert_eq!(manifest_to_binary(&avro, "m.avro").unwrap(), avro);
    }

    #[test]
    fn a_double_default_keeps_its_value_through_the_header_rewrite() {
        // Found by `manifest_header`: without `float_roundtrip` serde_json reads this as ...45.
        let default = "4444444444444444.5";
        let schema = format!(
            r#"{{"type":"struct","schema-id":0,"fields":[
            {{"id":1,"name":"g","required":false,"type":"geometry(OGC:CRS84)"}},
            {{"id":2,"name":"d","required":false,"type":"double","initial-default":{default}}}]}}"#
        );
        let mut avro = AVRO_MAGIC.to_vec();
        write_long(&mut avro, 1);
        for part in [b"schema".as_slice(), schema.as_bytes()] {
            write_long(&mut avro, part.len() as i64);
            avro.extend_from_slice(part);
        }
        write_long(&mut avro, 0);
        avro.extend_from_slice(&[7; 16]);
        let binary = manifest_to_binary(&avro, "m.avro").unwrap();
        let text = String::from_utf8_lossy(&binary);
        let at = text.find("initial-default\":").unwrap() + "initial-default\":".len();
        let written: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == 'e')
            .collect();
        assert!(text.contains("\"binary\""), "{text}");
        assert_eq!(
            written.parse::<f64>().unwrap(),
            default.parse::<f64>().unwrap()
        );
        assert_eq!(manifest_to_binary(&binary, "again.avro").unwrap(), binary);
    }
}
