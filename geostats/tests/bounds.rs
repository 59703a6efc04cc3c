//! Iceberg bound encodings round-trip bit-exactly.

use geoberg_geostats::{
    BBox, BBoxColumnNames, GeoKind, GeospatialBound, GeostatsError, Interval, decode_double_bound,
    decode_geospatial_bounds, encode_double_bound, encode_geospatial_bounds,
};
use proptest::prelude::*;

fn bits(b: &BBox) -> Vec<u64> {
    let mut v = vec![
        b.min_x.to_bits(),
        b.min_y.to_bits(),
        b.max_x.to_bits(),
        b.max_y.to_bits(),
    ];
    for i in [b.z, b.m].into_iter().flatten() {
        v.extend([i.min.to_bits(), i.max.to_bits()]);
    }
    v.push(b.z.is_some() as u64);
    v.push(b.m.is_some() as u64);
    v
}

fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("number", |v| !v.is_nan()),
        Just(0.0),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
    ]
}

fn ordered() -> impl Strategy<Value = Interval> {
    (finite(), finite()).prop_map(|(a, b)| {
        if a <= b {
            Interval::new(a, b)
        } else {
            Interval::new(b, a)
        }
    })
}

fn finite_ordered() -> impl Strategy<Value = Interval> {
    ordered().prop_filter("finite", |i| i.min.is_finite() && i.max.is_finite())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn geometry_bounds_round_trip(x in ordered(), y in ordered(), z in proptest::option::of(finite_ordered()), m in proptest::option::of(ordered())) {
        let b = BBox { min_x: x.min, min_y: y.min, max_x: x.max, max_y: y.max, z, m };
        let (lo, hi) = encode_geospatial_bounds(&b);
        let expected_len = match (z, m) { (None, None) => 16, (Some(_), None) => 24, _ => 32 };
        prop_assert_eq!((lo.len(), hi.len()), (expected_len, expected_len));
        let back = decode_geospatial_bounds(GeoKind::Geometry, &lo, &hi).unwrap();
        prop_assert_eq!(bits(&back), bits(&b));
        // And bytes -> bound -> bytes is the identity for what we wrote.
        prop_assert_eq!(GeospatialBound::from_bytes(&lo).unwrap().to_bytes(), lo);
    }

    /// Geography may wrap; geometry refuses the same bytes.
    #[test]
    fn geography_wraps(a in -180.0..180.0f64, c in -180.0..180.0f64, y in ordered()) {
        let (a, c) = if a > c { (a, c) } else { (c + 0.5, c) };
        let b = BBox::new(a, y.min, c, y.max);
        let (lo, hi) = encode_geospatial_bounds(&b);
        prop_assert_eq!(bits(&decode_geospatial_bounds(GeoKind::Geography, &lo, &hi).unwrap()), bits(&b));
        let is_order_error = matches!(
            decode_geospatial_bounds(GeoKind::Geometry, &lo, &hi),
            Err(GeostatsError::BoundOrder { .. })
        );
        prop_assert!(is_order_error);
    }

    #[test]
    fn double_bounds_round_trip(v in any::<f64>()) {
        prop_assert_eq!(decode_double_bound(&encode_double_bound(v)).unwrap().to_bits(), v.to_bits());
    }

    #[test]
    fn arbitrary_bound_bytes_never_panic(lo in proptest::collection::vec(any::<u8>(), 0..40), hi in proptest::collection::vec(any::<u8>(), 0..40)) {
        let ok = decode_geospatial_bounds(GeoKind::Geography, &lo, &hi).is_ok();
        prop_assert!(!ok || (matches!(lo.len(), 16 | 24 | 32) && matches!(hi.len(), 16 | 24 | 32)));
        let _ = decode_double_bound(&lo);
    }
}

fn point(vals: &[f64]) -> Vec<u8> {
    vals.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn spec_example() {
    let (lo, hi) = encode_geospatial_bounds(&BBox::new(-5.0, -1.0, 3.0, 7.0));
    assert_eq!(lo, point(&[-5.0, -1.0]));
    assert_eq!(hi, point(&[3.0, 7.0]));
}

#[test]
fn xym_writes_nan_z_and_duckdb_inf_padding_reads_as_no_z() {
    let b = BBox::new(0.0, 0.0, 1.0, 1.0).with_m(Interval::new(5.0, 6.0));
    let (lo, _) = encode_geospatial_bounds(&b);
    assert_eq!(lo.len(), 32);
    assert!(f64::from_le_bytes(lo[16..24].try_into().unwrap()).is_nan());
    let duck_lo = point(&[0.0, 0.0, f64::NEG_INFINITY, 5.0]);
    let duck_hi = point(&[1.0, 1.0, f64::INFINITY, 6.0]);
    let d = decode_geospatial_bounds(GeoKind::Geometry, &duck_lo, &duck_hi).unwrap();
    assert_eq!(d, b);
}

#[test]
fn bad_lengths_and_orders() {
    for len in [0, 8, 15, 17, 23, 25, 31, 33, 40] {
        assert!(matches!(
            GeospatialBound::from_bytes(&vec![0; len]),
            Err(GeostatsError::BoundLength { len: l, .. }) if l == len
        ));
    }
    let y_inverted =
        decode_geospatial_bounds(GeoKind::Geography, &point(&[0.0, 5.0]), &point(&[1.0, 4.0]));
    assert!(matches!(
        y_inverted,
        Err(GeostatsError::BoundOrder { what: "y", .. })
    ));
    let nan_x = GeospatialBound::from_bytes(&point(&[f64::NAN, 0.0]));
    assert!(matches!(nan_x, Err(GeostatsError::BoundNaN { .. })));
    // Z kept only when both bounds have it.
    let b = decode_geospatial_bounds(
        GeoKind::Geometry,
        &point(&[0.0, 0.0, 1.0]),
        &point(&[1.0, 1.0]),
    )
    .unwrap();
    assert_eq!(b.z, None);
}

#[test]
fn file_bbox_from_bbox_columns() {
    let names = BBoxColumnNames {
        min_x: "xmin".into(),
        ..BBoxColumnNames::default()
    };
    let lower = |c: &str| match c {
        "xmin" => Some(&[0u8; 8][..]),
        "bbox_min_y" => Some(&[0u8; 8][..]),
        _ => None,
    };
    let one = encode_double_bound(1.0);
    let upper = |c: &str| match c {
        "bbox_max_x" | "bbox_max_y" => Some(&one[..]),
        _ => None,
    };
    assert_eq!(
        names.file_bbox(lower, upper).unwrap(),
        Some(BBox::new(0.0, 0.0, 1.0, 1.0))
    );
    // Default names find no `bbox_min_x` lower bound: unknown, not an error.
    assert_eq!(
        BBoxColumnNames::default().file_bbox(lower, upper).unwrap(),
        None
    );
    // A 4-byte float bound is rejected.
    let short = |_: &str| Some(&[0u8; 4][..]);
    assert!(matches!(
        names.file_bbox(short, upper),
        Err(GeostatsError::BoundLength { len: 4, .. })
    ));
    // min > max across the file is reported.
    let big = encode_double_bound(5.0);
    let lower_big = |_: &str| Some(&big[..]);
    assert!(matches!(
        names.file_bbox(lower_big, upper),
        Err(GeostatsError::BoundOrder { .. })
    ));
}
