//! The `table` crate's geo-type bridge over metadata JSON and manifest Avro headers written by
//! any engine: untrusted documents that must give a typed error or a faithful round trip.

use geoberg_table::GeoFields;
use geoberg_table::bridge::{
    manifest_to_binary, manifest_to_geo, metadata_from_json, metadata_to_json,
};

/// Metadata JSON: whatever the bridge accepts, it writes back so that reading it again gives
/// the same metadata and the same geospatial fields (types restored by field id).
pub fn table_metadata(data: &[u8]) {
    let Ok((metadata, geo)) = metadata_from_json(data, "fuzz.metadata.json") else {
        return;
    };
    let written = metadata_to_json(&metadata, &geo).expect("accepted metadata serializes");
    let (again, geo_again) =
        metadata_from_json(&written, "rewritten.metadata.json").expect("our metadata parses");
    assert_eq!(geo, geo_again, "geo fields changed in a round trip");
    assert_eq!(metadata, again, "metadata changed in a round trip");
}

/// Manifest Avro header: rewriting the schema for `iceberg` is idempotent, restoring no geo
/// fields changes nothing, and the entry blocks after the header are copied byte for byte.
pub fn manifest_header(data: &[u8]) {
    let Ok(binary) = manifest_to_binary(data, "fuzz.avro") else {
        return;
    };
    let again = manifest_to_binary(&binary, "again.avro").expect("our header parses");
    assert_eq!(again, binary, "schema rewrite is not idempotent");
    let restored =
        manifest_to_geo(&binary, &GeoFields::new(), "restored.avro").expect("our header parses");
    assert_eq!(restored, binary, "restoring no geo fields changed the file");
    let tail = |bytes: &[u8]| bytes.len().min(16);
    assert_eq!(
        &data[data.len() - tail(data)..],
        &binary[binary.len() - tail(&binary)..],
        "the bytes after the header were not copied"
    );
}
