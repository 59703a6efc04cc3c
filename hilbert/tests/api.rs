//! Behaviour at the edges of the public API: errors, edge values, GeoHash, Arrow.

mod common;

use arrow_array::{Array, Float64Array};
use geoberg_hilbert::{Axis, Bounds, Error, GeoHash, HilbertCurve, ZOrderCurve};
use proptest::prelude::*;

#[test]
fn bounds_are_validated() {
    assert!(Bounds::new(0.0, 0.0, 1.0, 1.0).is_ok());
    for (a, b, c, d) in [
        (0.0, 0.0, 0.0, 1.0),
        (1.0, 0.0, 0.0, 1.0),
        (f64::NAN, 0.0, 1.0, 1.0),
        (0.0, f64::NEG_INFINITY, 1.0, 1.0),
        (-f64::MAX, 0.0, f64::MAX, 1.0),
    ] {
        let err = Bounds::new(a, b, c, d).unwrap_err();
        assert!(matches!(err, Error::InvalidBounds { .. }), "{err}");
    }
    let bad = Bounds {
        min_x: 1.0,
        min_y: 0.0,
        max_x: 0.0,
        max_y: 1.0,
    };
    assert!(HilbertCurve::new(16, bad).is_err());
    assert_eq!(
        Bounds::WGS84,
        Bounds::new(-180.0, -90.0, 180.0, 90.0).unwrap()
    );
}

#[test]
fn precision_is_validated() {
    for p in [0u8, 33, 255] {
        assert_eq!(
            HilbertCurve::wgs84(p).unwrap_err(),
            Error::InvalidPrecision { precision: p }
        );
        assert!(ZOrderCurve::wgs84(p).is_err());
    }
    for p in 1..=32 {
        assert_eq!(HilbertCurve::wgs84(p).unwrap().precision(), p);
    }
}

#[test]
fn min_and_max_land_in_the_first_and_last_cells() {
    for p in [1u8, 7, 16, 31, 32] {
        let curve = HilbertCurve::wgs84(p).unwrap();
        let last = (1u32 << (p - 1) << 1).wrapping_sub(1);
        assert_eq!(curve.decode(curve.encode(-180.0, -90.0).unwrap()), (0, 0));
        assert_eq!(
            curve.decode(curve.encode(180.0, 90.0).unwrap()),
            (last, last)
        );
        assert_eq!(curve.decode(curve.encode(180.0, -90.0).unwrap()), (last, 0));
        // The last key is (max_x, min_y) on this orientation.
        let top = if p == 32 {
            u64::MAX
        } else {
            (1u64 << (2 * p)) - 1
        };
        assert_eq!(curve.encode(180.0, -90.0).unwrap(), top);
    }
}

#[test]
fn errors_name_the_value_and_the_bounds() {
    let curve = HilbertCurve::wgs84(16).unwrap();
    for (x, y, axis, value) in [
        (180.5, 0.0, Axis::X, 180.5),
        (0.0, -90.25, Axis::Y, -90.25),
        (f64::INFINITY, 0.0, Axis::X, f64::INFINITY),
    ] {
        let err = curve.encode(x, y).unwrap_err();
        assert_eq!(
            err,
            Error::OutOfBounds {
                axis,
                value,
                bounds: Bounds::WGS84,
                index: None
            }
        );
        let msg = err.to_string();
        assert!(msg.contains(&format!("{axis} = {value}")), "{msg}");
        assert!(msg.contains("-180") && msg.contains("90"), "{msg}");
    }
    let err = curve.encode(0.0, f64::NAN).unwrap_err();
    assert!(err.to_string().contains("y = NaN"), "{err}");

    let mut out = [0u64; 3];
    let err = curve
        .encode_batch(&[0.0, 1.0, 2.0], &[0.0, 95.0, 0.0], &mut out)
        .unwrap_err();
    assert!(err.to_string().contains("y = 95 (at index 1)"), "{err}");
    let err = curve
        .encode_batch(&[0.0], &[0.0, 1.0], &mut out)
        .unwrap_err();
    assert_eq!(
        err,
        Error::LengthMismatch {
            xs: 1,
            ys: 2,
            out: 3
        }
    );
}

#[test]
fn clamped_variants_clip() {
    let curve = HilbertCurve::wgs84(16).unwrap();
    assert_eq!(
        curve.encode_clamped(500.0, 100.0),
        curve.encode(180.0, 90.0).unwrap()
    );
    assert_eq!(curve.encode_clamped(f64::NAN, f64::NEG_INFINITY), 0);
    let mut out = [0u64; 2];
    curve
        .encode_batch_clamped(&[500.0, f64::NAN], &[100.0, 0.0], &mut out)
        .unwrap();
    assert_eq!(
        out,
        [
            curve.encode(180.0, 90.0).unwrap(),
            curve.encode(-180.0, 0.0).unwrap()
        ]
    );
}

#[test]
fn sixteen_bit_keys_follow_duckdb_orientation() {
    // ST_Hilbert's orientation at one level: (0,0) → (0,1) → (1,1) → (1,0).
    let curve = HilbertCurve::new(16, Bounds::new(0.0, 0.0, 65536.0, 65536.0).unwrap()).unwrap();
    assert_eq!(curve.encode(0.0, 0.0).unwrap(), 0);
    assert_eq!(curve.encode(0.0, 40000.0).unwrap() >> 30, 1);
    assert_eq!(curve.encode(40000.0, 40000.0).unwrap() >> 30, 2);
    assert_eq!(curve.encode(40000.0, 0.0).unwrap() >> 30, 3);
    // On a grid whose cell is one unit, the key is xy2d of the integer coordinates.
    for (x, y) in [(1u32, 2u32), (12345, 54321), (65535, 0), (40000, 9)] {
        assert_eq!(
            curve.encode(f64::from(x), f64::from(y)).unwrap(),
            common::xy2d(16, x, y)
        );
    }
}

#[test]
fn geohash_matches_published_values() {
    // (lon, lat, hash): the anchor, Wikipedia's examples, and georust/geohash tests.
    let cases = [
        (20.9997, 52.0004, "u3nzvf7"),
        (-5.6, 42.6, "ezs42"),
        (10.40744, 57.64911, "u4pruydqqvj"),
        (112.5584, 37.8324, "ww8p1r4t8"),
        (117.0, 32.0, "wte"),
        (-120.6623, 35.3003, "9q60y60rh"),
    ];
    for (lon, lat, hash) in cases {
        let geohash = GeoHash::new(hash.len() as u8).unwrap();
        assert_eq!(geohash.encode(lon, lat).unwrap(), hash, "({lon}, {lat})");
        assert_eq!(
            common::geohash(lon, lat, hash.len()),
            hash,
            "reference ({lon}, {lat})"
        );
    }
}

#[test]
fn geohash_rejects_bad_input() {
    assert!(GeoHash::new(0).is_err());
    assert!(GeoHash::new(13).is_err());
    let geohash = GeoHash::new(12).unwrap();
    assert!(geohash.encode(181.0, 0.0).is_err());
    assert!(geohash.encode(0.0, f64::NAN).is_err());
    assert_eq!(geohash.encode(180.0, 90.0).unwrap(), "zzzzzzzzzzzz");
    assert_eq!(geohash.encode(-180.0, -90.0).unwrap(), "000000000000");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn geohash_matches_bisection_and_zorder(lon in -180.0f64..180.0, lat in -90.0f64..90.0, len in 1u8..=12) {
        let geohash = GeoHash::new(len).unwrap();
        let key = geohash.encode_key(lon, lat).unwrap();
        prop_assert!(key < 1 << geohash.bits());
        let hash = geohash.encode(lon, lat).unwrap();
        prop_assert_eq!(hash.len(), usize::from(len));
        prop_assert_eq!(&hash, &common::geohash(lon, lat, usize::from(len)));
        if len % 2 == 0 {
            let z = ZOrderCurve::wgs84(5 * len / 2).unwrap();
            prop_assert_eq!(key, z.encode(lon, lat).unwrap());
        }
        let mut out = [0u64; 1];
        geohash.encode_key_batch(&[lon], &[lat], &mut out).unwrap();
        prop_assert_eq!(out[0], key);
    }
}

#[test]
fn arrow_keeps_nulls_and_skips_their_values() {
    let curve = HilbertCurve::wgs84(32).unwrap();
    let n = 2500;
    let xs: Float64Array = (0..n)
        .map(|i| match i % 7 {
            3 => None,
            _ => Some(((i * 37) % 360) as f64 - 180.0),
        })
        .collect();
    // Null slots hold NaN values, which must not be reported.
    let ys = Float64Array::new(
        (0..n)
            .map(|i| {
                if i % 5 == 1 {
                    f64::NAN
                } else {
                    ((i * 11) % 180) as f64 - 90.0
                }
            })
            .collect(),
        Some((0..n).map(|i| i % 5 != 1).collect::<Vec<bool>>().into()),
    );
    for kernel in common::kernels() {
        let curve = curve.with_kernel(kernel).unwrap();
        let keys = curve.encode_arrow(&xs, &ys).unwrap();
        assert_eq!(keys.len(), n);
        for i in 0..n {
            if xs.is_null(i) || ys.is_null(i) {
                assert!(keys.is_null(i), "row {i}");
            } else {
                assert_eq!(
                    keys.value(i),
                    curve.encode(xs.value(i), ys.value(i)).unwrap()
                );
            }
        }
    }
    // Without nulls, an invalid value is an error at its row.
    let xs = Float64Array::from(vec![0.0, 1.0, 200.0]);
    let ys = Float64Array::from(vec![0.0, 1.0, 2.0]);
    let err = curve.encode_arrow(&xs, &ys).unwrap_err();
    assert!(
        matches!(
            err,
            Error::OutOfBounds {
                index: Some(2),
                axis: Axis::X,
                ..
            }
        ),
        "{err}"
    );
    let clamped = curve.encode_arrow_clamped(&xs, &ys).unwrap();
    assert_eq!(clamped.value(2), curve.encode(180.0, 2.0).unwrap());
    assert_eq!(clamped.null_count(), 0);
    // Sliced arrays keep their offsets.
    let big =
        Float64Array::from_iter((0..100).map(|i| if i == 50 { None } else { Some(i as f64) }));
    let (sx, sy) = (big.slice(40, 20), big.slice(45, 20));
    let keys = curve.encode_arrow(&sx, &sy).unwrap();
    assert!(keys.is_null(10) && keys.is_null(5) && keys.is_valid(0));
    assert_eq!(keys.value(0), curve.encode(40.0, 45.0).unwrap());
}
