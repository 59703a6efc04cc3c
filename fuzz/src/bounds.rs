//! Iceberg bound bytes: v3 geometry/geography bounds and the double bounds of bbox columns.

use std::collections::HashMap;

use geoberg_geostats::{
    BBoxColumnNames, GeoKind, GeospatialBound, decode_double_bound, decode_geospatial_bounds,
    encode_double_bound, encode_geospatial_bounds,
};

/// Fuzz target `bound_bytes`. Byte 0 picks the column kind (bit 0: geography) and byte 1 the
/// split point; the rest is cut into a lower and an upper bound, and again into the four bounds
/// of the bbox columns.
///
/// * `GeospatialBound::from_bytes` accepts only 16/24/32 bytes with non-NaN X/Y, and
///   `to_bytes` -> `from_bytes` gives the same bound.
/// * `decode_geospatial_bounds` gives a box whose Y/Z/M are ordered (X too for geometry) and
///   which `encode_geospatial_bounds` -> `decode_geospatial_bounds` gives back unchanged.
/// * `decode_double_bound` accepts exactly 8 bytes and round-trips bit for bit.
/// * `BBoxColumnNames::file_bbox` gives a valid box of exactly the decoded doubles, `None` when
///   a bound is missing.
pub fn bound_bytes(data: &[u8]) {
    let [flags, split, rest @ ..] = data else {
        return;
    };
    let kind = if flags & 1 == 1 {
        GeoKind::Geography
    } else {
        GeoKind::Geometry
    };
    let (lower, upper) = rest.split_at(usize::from(*split).min(rest.len()));

    for bytes in [lower, upper] {
        match GeospatialBound::from_bytes(bytes) {
            Ok(b) => {
                assert!(
                    matches!(bytes.len(), 16 | 24 | 32),
                    "accepted {} bytes",
                    bytes.len()
                );
                assert!(!b.x.is_nan() && !b.y.is_nan(), "NaN X/Y accepted: {b:?}");
                assert_eq!(GeospatialBound::from_bytes(&b.to_bytes()), Ok(b));
            }
            Err(_) => assert!(
                !matches!(bytes.len(), 16 | 24 | 32)
                    || f64_at(bytes, 0).is_nan()
                    || f64_at(bytes, 8).is_nan(),
                "rejected a well-formed bound {bytes:?}"
            ),
        }
    }

    if let Ok(bbox) = decode_geospatial_bounds(kind, lower, upper) {
        assert!(bbox.min_y <= bbox.max_y, "{bbox:?}");
        assert!(bbox.z.is_none_or(|z| z.min <= z.max), "{bbox:?}");
        assert!(bbox.m.is_none_or(|m| m.min <= m.max), "{bbox:?}");
        if kind == GeoKind::Geometry {
            assert!(bbox.min_x <= bbox.max_x, "{bbox:?}");
        }
        let (lo, hi) = encode_geospatial_bounds(&bbox);
        assert_eq!(decode_geospatial_bounds(kind, &lo, &hi), Ok(bbox));
    }

    // The bbox columns: four 8-byte-ish pieces, a piece of length 0xff-coded missing.
    let pieces: Vec<Option<&[u8]>> = rest
        .chunks(9)
        .take(4)
        .map(|c| match c.split_first() {
            Some((0xff, _)) | None => None,
            Some((len, tail)) => Some(&tail[..usize::from(*len).min(tail.len())]),
        })
        .chain(std::iter::repeat(None))
        .take(4)
        .collect();
    for p in pieces.iter().flatten() {
        match decode_double_bound(p) {
            Ok(v) => {
                assert_eq!(p.len(), 8);
                assert_eq!(encode_double_bound(v), **p, "double bound round trip");
            }
            Err(_) => assert_ne!(p.len(), 8, "rejected an 8-byte double bound"),
        }
    }
    let names = BBoxColumnNames::default();
    let lower: HashMap<&str, &[u8]> = [(&names.min_x, pieces[0]), (&names.min_y, pieces[1])]
        .into_iter()
        .filter_map(|(k, v)| Some((k.as_str(), v?)))
        .collect();
    let upper: HashMap<&str, &[u8]> = [(&names.max_x, pieces[2]), (&names.max_y, pieces[3])]
        .into_iter()
        .filter_map(|(k, v)| Some((k.as_str(), v?)))
        .collect();
    let file = names.file_bbox(|c| lower.get(c).copied(), |c| upper.get(c).copied());
    match file {
        Ok(None) => assert!(
            pieces.iter().any(Option::is_none),
            "all four bounds present"
        ),
        Ok(Some(b)) => {
            assert!(b.is_valid(), "{b:?}");
            let decoded: Vec<f64> = pieces
                .iter()
                .map(|p| decode_double_bound(p.unwrap()).unwrap())
                .collect();
            assert_eq!(decoded, [b.min_x, b.min_y, b.max_x, b.max_y]);
        }
        Err(_) => assert!(
            pieces.iter().all(Option::is_some),
            "error with a bound missing"
        ),
    }
}

fn f64_at(b: &[u8], at: usize) -> f64 {
    f64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}
