//! Puffin files bad and unusual: every broken part is a typed error naming the file; compressed
//! footers and blobs (made here with the `lz4_flex` and `zstd` encoders) read back.

use std::collections::BTreeMap;
use std::io::{Cursor, Write};

use geoberg_puffin::{
    Blob, BlobMetadata, CARDINALITY, DeletionVector, ErrorKind, FileMetadata, PUFFIN_MAGIC,
    PuffinReader, PuffinWriter, REFERENCED_DATA_FILE, ROW_POSITION_FIELD_ID, read_blob_at,
};

/// A Puffin file with `blobs` (already stored form) and a footer of `metadata`, its payload
/// optionally LZ4-compressed, with the given flags byte 0.
fn puffin(blobs: &[u8], metadata: &FileMetadata, lz4: bool) -> Vec<u8> {
    let json = serde_json::to_vec(metadata).unwrap();
    let payload = if lz4 {
        let mut enc = lz4_flex::frame::FrameEncoder::new(Vec::new());
        enc.write_all(&json).unwrap();
        enc.finish().unwrap()
    } else {
        json
    };
    let mut out = PUFFIN_MAGIC.to_vec();
    out.extend(blobs);
    out.extend(PUFFIN_MAGIC);
    out.extend(&payload);
    out.extend((payload.len() as i32).to_le_bytes());
    out.extend([u8::from(lz4), 0, 0, 0]);
    out.extend(PUFFIN_MAGIC);
    out
}

fn blob_meta(blob_type: &str, offset: i64, length: i64, codec: Option<&str>) -> BlobMetadata {
    BlobMetadata {
        blob_type: blob_type.into(),
        fields: vec![1],
        snapshot_id: -1,
        sequence_number: -1,
        offset,
        length,
        compression_codec: codec.map(str::to_string),
        properties: BTreeMap::new(),
    }
}

fn open(bytes: Vec<u8>) -> geoberg_puffin::Result<PuffinReader<Cursor<Vec<u8>>>> {
    PuffinReader::open(Cursor::new(bytes), "s3://bucket/t/data/x.puffin")
}

fn dv_file(edit: impl FnOnce(&mut BlobMetadata)) -> Vec<u8> {
    let dv = DeletionVector::from_positions([1, 2, 3]).unwrap();
    let mut w = PuffinWriter::new(Vec::new()).unwrap();
    w.add_deletion_vector("data/a.parquet", &dv).unwrap();
    let (bytes, summary) = w.finish().unwrap();
    let mut meta = summary.metadata;
    edit(&mut meta.blobs[0]);
    let blob = &bytes[4..4 + meta.blobs[0].length as usize];
    puffin(blob, &meta, false)
}

#[test]
fn our_files_have_the_layout_and_properties_java_writes() {
    let dv = DeletionVector::from_positions([0, 7]).unwrap();
    let mut w = PuffinWriter::new(Vec::new()).unwrap();
    let entry = w.add_deletion_vector("data/a.parquet", &dv).unwrap();
    let (bytes, summary) = w.finish().unwrap();
    assert_eq!(bytes[..4], PUFFIN_MAGIC);
    assert_eq!(bytes[bytes.len() - 4..], PUFFIN_MAGIC);
    // Uncompressed footer: flags all zero.
    assert_eq!(bytes[bytes.len() - 8..bytes.len() - 4], [0, 0, 0, 0]);
    let size = i32::from_le_bytes(bytes[bytes.len() - 12..bytes.len() - 8].try_into().unwrap());
    let payload = &bytes[bytes.len() - 12 - size as usize..bytes.len() - 12];
    let json: serde_json::Value = serde_json::from_slice(payload).unwrap();
    let blob = &json["blobs"][0];
    assert_eq!(blob["type"], "deletion-vector-v1");
    assert_eq!(blob["fields"], serde_json::json!([2147483645]));
    assert_eq!(ROW_POSITION_FIELD_ID, 2147483645);
    assert_eq!(
        (
            blob["snapshot-id"].as_i64(),
            blob["sequence-number"].as_i64()
        ),
        (Some(-1), Some(-1))
    );
    assert_eq!(blob["offset"], 4);
    assert_eq!(blob["length"].as_i64(), Some(entry.content_size_in_bytes));
    assert!(blob.get("compression-codec").is_none());
    assert_eq!(blob["properties"][REFERENCED_DATA_FILE], "data/a.parquet");
    assert_eq!(blob["properties"][CARDINALITY], "2");
    assert!(
        json["properties"]["created-by"]
            .as_str()
            .unwrap()
            .starts_with("geoberg-puffin ")
    );
    assert_eq!(summary.footer_size_in_bytes, 4 + size as u64 + 12);
}

#[test]
fn broken_magics_sizes_and_flags_are_named() {
    let good = dv_file(|_| ());
    let kind_of = |bytes: Vec<u8>| {
        let e = open(bytes).err().expect("must fail");
        assert!(
            e.to_string().starts_with("s3://bucket/t/data/x.puffin: "),
            "{e}"
        );
        e
    };
    let mut b = good.clone();
    b[0] = b'X';
    let e = kind_of(b);
    assert!(
        matches!(
            e.kind(),
            ErrorKind::FileMagic {
                position: "start of the file",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("58 46 41 31"), "{e}");

    let mut b = good.clone();
    let n = b.len();
    b[n - 1] = 0;
    assert!(matches!(
        kind_of(b).kind(),
        ErrorKind::FileMagic {
            position: "end of the file",
            ..
        }
    ));

    let mut b = good.clone();
    let n = b.len();
    b[n - 12..n - 8].copy_from_slice(&5i32.to_le_bytes());
    assert!(matches!(
        kind_of(b).kind(),
        ErrorKind::FileMagic {
            position: "start of the footer",
            ..
        }
    ));

    for size in [-1i32, i32::MAX] {
        let mut b = good.clone();
        let n = b.len();
        b[n - 12..n - 8].copy_from_slice(&size.to_le_bytes());
        assert!(matches!(
            kind_of(b).kind(),
            ErrorKind::FooterPayloadSize { .. }
        ));
    }

    let mut b = good.clone();
    let n = b.len();
    b[n - 7] = 1;
    assert!(matches!(
        kind_of(b).kind(),
        ErrorKind::UnsupportedFlags { .. }
    ));

    let e = kind_of(good[..15].to_vec());
    assert!(matches!(e.kind(), ErrorKind::Truncated { .. }), "{e}");

    let mut b = good.clone();
    let n = b.len();
    let size = i32::from_le_bytes(b[n - 12..n - 8].try_into().unwrap()) as usize;
    b[n - 12 - size] = b'[';
    assert!(matches!(kind_of(b).kind(), ErrorKind::FooterJson(_)));
}

#[test]
fn lz4_footers_and_compressed_blobs_read_and_unknown_codecs_are_named() {
    let text =
        b"a blob that compresses: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let zstd = zstd::stream::encode_all(&text[..], 3).unwrap();
    let mut lz4 = lz4_flex::frame::FrameEncoder::new(Vec::new());
    lz4.write_all(text).unwrap();
    let lz4 = lz4.finish().unwrap();
    let mut blobs = zstd.clone();
    blobs.extend(&lz4);
    blobs.extend(text);
    let (z, l) = (zstd.len() as i64, lz4.len() as i64);
    let metadata = FileMetadata {
        blobs: vec![
            blob_meta("a", 4, z, Some("zstd")),
            blob_meta("b", 4 + z, l, Some("lz4")),
            blob_meta("c", 4 + z + l, text.len() as i64, Some("snappy")),
            blob_meta("d", 4 + z + l, 10_000, None),
        ],
        properties: BTreeMap::new(),
    };
    let mut r = open(puffin(&blobs, &metadata, true)).unwrap();
    assert_eq!(r.metadata(), &metadata);
    let m = r.metadata().clone();
    assert_eq!(r.read_blob(&m.blobs[0]).unwrap(), text);
    assert_eq!(r.read_blob(&m.blobs[1]).unwrap(), text);
    let e = r.read_blob(&m.blobs[2]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::UnsupportedCodec { codec, .. } if codec == "snappy"));
    assert!(
        e.to_string().contains("'snappy'") && e.to_string().contains("x.puffin"),
        "{e}"
    );
    let e = r.read_blob(&m.blobs[3]).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::BlobOutOfBounds { .. }), "{e}");
    // Garbage declared as zstd.
    let mut bad = m.blobs[2].clone();
    bad.compression_codec = Some("zstd".into());
    assert!(matches!(
        r.read_blob(&bad).unwrap_err().kind(),
        ErrorKind::Decompress { codec: "zstd", .. }
    ));
}

#[test]
fn deletion_vector_metadata_is_checked() {
    let mut r = open(dv_file(|_| ())).unwrap();
    let vs = r.deletion_vectors().unwrap();
    assert_eq!(
        vs,
        vec![(
            "data/a.parquet".to_string(),
            DeletionVector::from_positions([1, 2, 3]).unwrap()
        )]
    );

    type Case = (Box<dyn FnOnce(&mut BlobMetadata)>, fn(&ErrorKind) -> bool);
    let cases: Vec<Case> = vec![
        (
            Box::new(|b| b.compression_codec = Some("zstd".into())),
            |k| matches!(k, ErrorKind::CompressedDeletionVector { .. }),
        ),
        (
            Box::new(|b| {
                b.properties.remove(REFERENCED_DATA_FILE);
            }),
            |k| {
                matches!(
                    k,
                    ErrorKind::MissingProperty {
                        property: "referenced-data-file"
                    }
                )
            },
        ),
        (
            Box::new(|b| {
                b.properties.remove(CARDINALITY);
            }),
            |k| {
                matches!(
                    k,
                    ErrorKind::MissingProperty {
                        property: "cardinality"
                    }
                )
            },
        ),
        (
            Box::new(|b| {
                b.properties.insert(CARDINALITY.into(), "three".into());
            }),
            |k| matches!(k, ErrorKind::InvalidProperty { .. }),
        ),
        (
            Box::new(|b| {
                b.properties.insert(CARDINALITY.into(), "4".into());
            }),
            |k| {
                matches!(
                    k,
                    ErrorKind::CardinalityMismatch {
                        declared: 4,
                        actual: 3
                    }
                )
            },
        ),
        (Box::new(|b| b.offset += 1), |k| {
            matches!(
                k,
                ErrorKind::DeletionVectorLength { .. } | ErrorKind::BlobOutOfBounds { .. }
            )
        }),
    ];
    for (edit, expected) in cases {
        let mut r = open(dv_file(edit)).unwrap();
        let e = r.deletion_vectors().unwrap_err();
        assert!(expected(e.kind()), "{e}");
        assert!(
            e.to_string().contains("x.puffin") && e.to_string().contains("blob at offset"),
            "{e}"
        );
    }
}

#[test]
fn blobs_read_by_range_check_the_range() {
    let bytes = dv_file(|_| ());
    let mut c = Cursor::new(&bytes);
    for (o, l) in [(-1, 4), (0, -1), (bytes.len() as i64 - 2, 4)] {
        let e = read_blob_at(&mut c, o, l).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::BlobOutOfBounds { .. }), "{e}");
    }
    // The range of another blob, or of the footer: not a deletion vector.
    let e = geoberg_puffin::read_deletion_vector_at(&mut c, 0, 24).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::DeletionVectorLength { .. } | ErrorKind::DeletionVectorMagic { .. }
        ),
        "{e}"
    );
    let w = PuffinWriter::new(Vec::new()).unwrap();
    let mut w = w;
    w.add_blob(Blob {
        blob_type: "x".into(),
        fields: vec![],
        snapshot_id: 1,
        sequence_number: 1,
        properties: BTreeMap::new(),
        data: vec![
            0, 0, 0, 16, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ],
    })
    .unwrap();
    let (b, _) = w.finish().unwrap();
    let e = geoberg_puffin::read_deletion_vector_at(&mut Cursor::new(&b), 4, 24).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ErrorKind::DeletionVectorMagic {
                found: [1, 2, 3, 4]
            }
        ),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("blob at offset 4 (24 bytes): Magic bytes mismatch"),
        "{e}"
    );
}
