//! Properties of deletion vectors and Puffin files, against a `BTreeSet<u64>` of positions (the
//! oracle: a plain sorted set) and the CRC-32's guarantee that any one changed byte is caught.
//! `PROPTEST_CASES` raises the case count.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Cursor;

use geoberg_puffin::{
    Blob, DeletionVector, MAX_POSITION, PuffinReader, PuffinWriter, RowRun, read_deletion_vector_at,
};
use proptest::prelude::*;

fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        // Integration tests have no source file to persist regressions beside; a failure prints
        // its minimal case instead.
        failure_persistence: None,
        ..ProptestConfig::with_cases(cases)
    }
}

/// Position sets that exercise every Roaring container kind and the 64-bit buckets: single
/// positions (small, near bucket edges, beyond 2^32, up to the largest allowed), dense runs
/// (run containers), and dense random blocks (bitmap containers).
fn position_set() -> impl Strategy<Value = BTreeSet<u64>> {
    let bucket = prop_oneof![Just(0u64), 0u64..4, 0u64..(MAX_POSITION >> 32)];
    let single = prop_oneof![
        0u64..1000,
        0u64..(1 << 20),
        (bucket.clone(), any::<u32>()).prop_map(|(k, low)| (k << 32) | u64::from(low)),
        (0u64..4).prop_map(|d| (1u64 << 32) - 2 + d),
        (0u64..3).prop_map(|d| MAX_POSITION - d),
    ];
    let run = (bucket.clone(), any::<u32>(), 1u64..20_000).prop_map(|(k, low, len)| {
        let start = ((k << 32) | u64::from(low)).min(MAX_POSITION);
        (start..=(start + len).min(MAX_POSITION)).collect::<Vec<_>>()
    });
    let dense = (bucket, 0u32..1 << 15, any::<u64>()).prop_map(|(k, chunk, seed)| {
        // About half of one 65536-value container: a bitmap container.
        let base = (k << 32) | (u64::from(chunk) << 16);
        let mut s = seed | 1;
        (0..65536u64)
            .filter(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s & 1 == 0
            })
            .map(|v| (base + v).min(MAX_POSITION))
            .collect::<Vec<_>>()
    });
    let part = prop_oneof![
        4 => proptest::collection::vec(single, 0..64),
        2 => run,
        1 => dense,
    ];
    proptest::collection::vec(part, 0..5)
        .prop_map(|parts| parts.into_iter().flatten().collect::<BTreeSet<u64>>())
}

fn vector(set: &BTreeSet<u64>) -> DeletionVector {
    DeletionVector::from_positions(set.iter().copied()).unwrap()
}

proptest! {
    #![proptest_config(cases(64))]

    #[test]
    fn blobs_round_trip_any_position_set(set in position_set(), probes in proptest::collection::vec(any::<u64>(), 0..32)) {
        let v = vector(&set);
        prop_assert_eq!(v.len(), set.len() as u64);
        prop_assert_eq!(v.is_empty(), set.is_empty());
        prop_assert_eq!(v.max(), set.last().copied());
        prop_assert!(v.iter().eq(set.iter().copied()));
        for p in probes.iter().chain(set.iter().take(16)) {
            prop_assert_eq!(v.contains(*p), set.contains(p));
        }
        let blob = v.to_blob().unwrap();
        let back = DeletionVector::from_blob(&blob).unwrap();
        prop_assert!(back.iter().eq(set.iter().copied()));
        prop_assert_eq!(&back, &v);
        // Insertion order does not matter, and inserting twice changes nothing.
        let mut reversed = DeletionVector::new();
        for p in set.iter().rev() {
            prop_assert!(reversed.insert(*p).unwrap());
            prop_assert!(!reversed.insert(*p).unwrap());
        }
        prop_assert_eq!(reversed.to_blob().unwrap(), blob);
    }

    #[test]
    fn merges_are_set_unions(a in position_set(), b in position_set()) {
        let union: BTreeSet<u64> = a.union(&b).copied().collect();
        let (va, vb) = (vector(&a), vector(&b));
        // A second delete reads the previous vector back from its blob and merges into it.
        let mut merged = DeletionVector::from_blob(&va.to_blob().unwrap()).unwrap();
        merged.union_with(&vb);
        prop_assert!(merged.iter().eq(union.iter().copied()));
        prop_assert_eq!(&merged, &vb.union(&va));
        prop_assert_eq!(merged.len(), union.len() as u64);
        let back = DeletionVector::from_blob(&merged.to_blob().unwrap()).unwrap();
        prop_assert!(back.iter().eq(union.iter().copied()));
    }

    #[test]
    fn ranges_insert_every_position(start in 0u64..(1 << 34), len in 0u64..200_000) {
        let mut v = DeletionVector::new();
        prop_assert_eq!(v.insert_range(start..start + len).unwrap(), len);
        prop_assert!(v.iter().eq(start..start + len));
    }

    #[test]
    fn keep_skip_runs_select_exactly_the_live_rows(
        rows in 0u64..5000,
        picks in proptest::collection::vec(any::<proptest::sample::Index>(), 0..300),
        runs in proptest::collection::vec((any::<proptest::sample::Index>(), 1u64..400), 0..4),
    ) {
        let mut deleted = BTreeSet::new();
        if rows > 0 {
            deleted.extend(picks.iter().map(|i| i.index(rows as usize) as u64));
            for (i, len) in &runs {
                let s = i.index(rows as usize) as u64;
                deleted.extend(s..(s + len).min(rows));
            }
        }
        let v = vector(&deleted);
        let selection = v.keep_skip_runs(rows).unwrap();
        // Brute force: expand the runs row by row.
        let mut expanded = Vec::new();
        for RowRun { keep, rows } in &selection {
            prop_assert!(*rows > 0);
            expanded.extend(std::iter::repeat_n(*keep, *rows));
        }
        let expected: Vec<bool> = (0..rows).map(|r| !deleted.contains(&r)).collect();
        prop_assert_eq!(expanded, expected);
        prop_assert!(selection.windows(2).all(|w| w[0].keep != w[1].keep));
        if let Some(&last) = deleted.last() {
            prop_assert!(v.keep_skip_runs(last).is_err());
        }
    }

    #[test]
    fn any_changed_byte_of_a_blob_is_an_error(set in position_set(), at in any::<proptest::sample::Index>(), xor in 1u8..=255) {
        let mut blob = vector(&set).to_blob().unwrap();
        let i = at.index(blob.len());
        blob[i] ^= xor;
        // The length field, the magic or the CRC-32 (which catches any one changed byte).
        prop_assert!(DeletionVector::from_blob(&blob).is_err());
        // And no prefix of a blob is one.
        let good = vector(&set).to_blob().unwrap();
        prop_assert!(DeletionVector::from_blob(&good[..i]).is_err());
    }

    #[test]
    fn puffin_files_round_trip_and_blobs_read_by_range(
        sets in proptest::collection::vec(position_set(), 0..4),
        other in proptest::collection::vec(any::<u8>(), 0..64),
        cut in any::<proptest::sample::Index>(),
    ) {
        let mut w = PuffinWriter::new(Vec::new()).unwrap();
        w.set_property("created-by", "geoberg tests");
        w.add_blob(Blob {
            blob_type: "apache-datasketches-theta-v1".into(),
            fields: vec![1],
            snapshot_id: 7,
            sequence_number: 3,
            properties: BTreeMap::from([("ndv".to_string(), "2".to_string())]),
            data: other.clone(),
        }).unwrap();
        let mut entries = Vec::new();
        let sets: Vec<BTreeSet<u64>> = sets.into_iter().filter(|s| !s.is_empty()).collect();
        for (i, set) in sets.iter().enumerate() {
            entries.push(w.add_deletion_vector(&format!("s3://b/t/data/{i}.parquet"), &vector(set)).unwrap());
        }
        prop_assert!(w.add_deletion_vector("s3://b/t/data/none.parquet", &DeletionVector::new()).is_err());
        let (bytes, summary) = w.finish().unwrap();
        prop_assert_eq!(summary.file_size_in_bytes, bytes.len() as u64);

        let mut reader = PuffinReader::open(Cursor::new(bytes.clone()), "t.puffin").unwrap();
        prop_assert_eq!(reader.metadata(), &summary.metadata);
        prop_assert_eq!(reader.read_blob(&summary.metadata.blobs[0]).unwrap(), other);
        let vectors = reader.deletion_vectors().unwrap();
        prop_assert_eq!(vectors.len(), sets.len());
        for (i, ((file, v), set)) in vectors.iter().zip(&sets).enumerate() {
            prop_assert_eq!(file, &format!("s3://b/t/data/{i}.parquet"));
            prop_assert!(v.iter().eq(set.iter().copied()));
        }
        for (e, set) in entries.iter().zip(&sets) {
            prop_assert_eq!(e.cardinality, set.len() as u64);
            let mut file = Cursor::new(&bytes);
            let v = read_deletion_vector_at(&mut file, e.content_offset, e.content_size_in_bytes).unwrap();
            prop_assert!(v.iter().eq(set.iter().copied()));
        }
        // A truncated file is an error, never a panic.
        let n = cut.index(bytes.len());
        prop_assert!(PuffinReader::open(Cursor::new(&bytes[..n]), "cut.puffin").is_err());
    }
}
