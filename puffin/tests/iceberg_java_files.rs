//! Files written by other tools: Iceberg Java's golden deletion-vector blobs and Puffin files,
//! and the RoaringFormatSpec 64-bit examples that Iceberg's tests read
//! (`core/src/test/resources/org/apache/iceberg/{deletes,puffin/v1}/` of apache/iceberg,
//! Apache-2.0).
//!
//! The files cannot be vendored in this repository, so these tests are `#[ignore]`d: run them
//! with `GEOBERG_ICEBERG_TESTDATA=<folder> cargo test -p geoberg-puffin --test
//! iceberg_java_files -- --ignored` (or with the folder at `shared/realdata/iceberg-testdata/`
//! beside the repository). A missing file fails the test; it never passes without checking.
//! In CI the same format is checked against a real reader instead: pyiceberg 0.12 reads our
//! Puffin files and CRoaring serializes our bitmaps to the same bytes (`puffin/interop`).
//!
//! The expected positions are those Iceberg's own tests (`TestBitmapPositionDeleteIndex`,
//! `TestRoaringPositionBitmap`, `TestPuffinReader`) build the files from.

use std::collections::BTreeSet;
use std::io::Cursor;
use std::path::PathBuf;

use geoberg_puffin::{DeletionVector, ErrorKind, PuffinReader};

fn data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("GEOBERG_ICEBERG_TESTDATA") {
        return PathBuf::from(dir);
    }
    let shared =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/realdata/iceberg-testdata");
    if shared.is_dir() {
        return shared;
    }
    panic!(
        "Iceberg Java test files not found: set GEOBERG_ICEBERG_TESTDATA to a folder holding \
         apache/iceberg's core/src/test/resources/org/apache/iceberg/{{deletes,puffin/v1}}/*.bin"
    );
}

fn read(name: &str) -> Vec<u8> {
    let dir = data_dir();
    let path = dir.join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Java's `position(bitmap, container, value)` helper.
fn position(bitmap: u64, container: u64, value: u64) -> u64 {
    bitmap * (1 << 32) + container * (1 << 16) + value
}

/// Java's `TestBitmapPositionDeleteIndex` position sets, by golden file.
fn java_index_cases() -> Vec<(&'static str, Vec<u64>)> {
    let mut all_types = vec![];
    for (b, singles) in [(0, [5, 7]), (1, [10, 20])] {
        all_types.extend(singles.map(|v| position(b, 0, v)));
    }
    // `delete(start, end)` is end-exclusive.
    all_types.extend(position(0, 1, 1)..position(0, 1, 1000));
    all_types.extend(position(0, 2, 1)..position(0, 2, 65535));
    all_types.extend(position(1, 1, 10)..position(1, 1, 500));
    all_types.extend(position(1, 2, 1)..position(1, 2, 65535));
    let max_int = i32::MAX as u64;
    vec![
        ("empty-position-index.bin", vec![]),
        (
            "small-alternating-values-position-index.bin",
            vec![1, 3, 5, 7, 9],
        ),
        (
            "small-and-large-values-position-index.bin",
            vec![100, 101, max_int + 100, max_int + 101],
        ),
        ("all-container-types-position-index.bin", all_types),
    ]
}

#[test]
#[ignore = "needs apache/iceberg's test files: set GEOBERG_ICEBERG_TESTDATA"]
fn java_deletion_vector_blobs_decode_and_our_bytes_equal_them() {
    for (file, positions) in java_index_cases() {
        let bytes = read(file);
        let decoded = DeletionVector::from_blob(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        let expected: BTreeSet<u64> = positions.iter().copied().collect();
        assert_eq!(decoded.len(), expected.len() as u64, "{file}");
        assert!(decoded.iter().eq(expected.iter().copied()), "{file}");
        // Byte for byte what Java writes (run-length encoded buckets, same framing and CRC).
        let ours = DeletionVector::from_positions(positions)
            .unwrap()
            .to_blob()
            .unwrap();
        assert_eq!(ours, bytes, "{file}: our blob differs from Iceberg Java's");
    }
}

#[test]
#[ignore = "needs apache/iceberg's test files: set GEOBERG_ICEBERG_TESTDATA"]
fn roaring_format_spec_64_bit_examples() {
    let empty = read("64mapempty.bin");
    assert!(
        DeletionVector::from_portable_bitmap(&empty)
            .unwrap()
            .is_empty()
    );

    let small = read("64map32bitvals.bin");
    let v = DeletionVector::from_portable_bitmap(&small).unwrap();
    assert!(v.iter().eq(0..10));
    // The examples are not run-length encoded (ours are, as Java's): same set, other bytes.
    let ours = v.to_portable_bitmap();
    assert_eq!(DeletionVector::from_portable_bitmap(&ours).unwrap(), v);

    let spread = read("64mapspreadvals.bin");
    let v = DeletionVector::from_portable_bitmap(&spread).unwrap();
    let expected: Vec<u64> = (0..10u64)
        .flat_map(|k| (0..10).map(move |j| (k << 32) + j))
        .collect();
    assert!(v.iter().eq(expected.iter().copied()));
    assert_eq!(
        DeletionVector::from_portable_bitmap(&v.to_portable_bitmap()).unwrap(),
        v
    );

    // Keys with the sign bit set: positions >= 2^63, which Java rejects too.
    let high = read("64maphighvals.bin");
    let e = DeletionVector::from_portable_bitmap(&high).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::DeletionVectorBitmap { reason } if reason.contains("largest key")),
        "{e}"
    );
}

#[test]
#[ignore = "needs apache/iceberg's test files: set GEOBERG_ICEBERG_TESTDATA"]
fn java_puffin_files_read() {
    let empty = read("empty-puffin-uncompressed.bin");
    let reader = PuffinReader::open(Cursor::new(empty), "empty-puffin-uncompressed.bin").unwrap();
    assert!(reader.metadata().blobs.is_empty());

    let second =
        "some blob \u{0000} binary data 🤯 that is not very very very very very very long, is it?";
    for (file, codec) in [
        ("sample-metric-data-uncompressed.bin", None),
        ("sample-metric-data-compressed-zstd.bin", Some("zstd")),
    ] {
        let bytes = read(file);
        let mut reader = PuffinReader::open(Cursor::new(bytes), file).unwrap();
        let meta = reader.metadata().clone();
        assert_eq!(
            meta.properties.get("created-by").map(String::as_str),
            Some("Test 1234")
        );
        assert_eq!(meta.blobs.len(), 2, "{file}");
        let (a, b) = (&meta.blobs[0], &meta.blobs[1]);
        assert_eq!(
            (a.blob_type.as_str(), a.fields.as_slice(), a.offset),
            ("some-blob", &[1][..], 4)
        );
        assert_eq!(
            (b.blob_type.as_str(), b.fields.as_slice()),
            ("some-other-blob", &[2][..])
        );
        assert_eq!(b.offset, a.offset + a.length);
        assert_eq!((a.snapshot_id, a.sequence_number), (2, 1));
        assert_eq!(a.compression_codec.as_deref(), codec);
        assert_eq!(reader.read_blob(a).unwrap(), b"abcdefghi");
        assert_eq!(reader.read_blob(b).unwrap(), second.as_bytes());
        // Not deletion vectors: the vector listing skips them, and asking for one names the type.
        assert!(reader.deletion_vectors().unwrap().is_empty());
        let e = reader.read_deletion_vector(a).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::NotADeletionVector { found } if found == "some-blob")
        );
        assert!(e.to_string().contains(file), "{e}");
    }
}
