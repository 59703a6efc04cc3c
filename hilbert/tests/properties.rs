//! Invariants of the curves, checked exhaustively where the space is small and with proptest
//! elsewhere. Every fast path (scalar LUT, AVX2, portable batch, rayon, Arrow) is compared with
//! the plain reference in `common`.

mod common;

use common::{cells, kernels, morton, xy2d};
use geoberg_hilbert::{Bounds, Error, HilbertCurve, Kernel, ZOrderCurve};
use proptest::prelude::*;

fn bounds_strategy() -> impl Strategy<Value = Bounds> {
    prop_oneof![
        Just(Bounds::WGS84),
        Just(Bounds::new(0.0, 0.0, 1.0, 1.0).unwrap()),
        (-1e6f64..1e6, -1e6f64..1e6, 1e-3f64..1e6, 1e-3f64..1e6)
            .prop_map(|(x, y, w, h)| Bounds::new(x, y, x + w, y + h).unwrap()),
    ]
}

/// A coordinate in `[min, max]`, often exactly on an edge.
fn coord(min: f64, max: f64) -> impl Strategy<Value = f64> {
    prop_oneof![
        1 => Just(min),
        1 => Just(max),
        8 => (0.0f64..=1.0).prop_map(move |t| (min + t * (max - min)).clamp(min, max)),
    ]
}

/// Bounds with a point inside them.
fn bounded_point() -> impl Strategy<Value = (Bounds, f64, f64)> {
    bounds_strategy().prop_flat_map(|b| (Just(b), coord(b.min_x, b.max_x), coord(b.min_y, b.max_y)))
}

/// Any f64 a caller might pass: inside, outside, NaN, infinite.
fn any_value(min: f64, max: f64) -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => coord(min, max),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => -1e9f64..1e9,
    ]
}

#[test]
fn exhaustive_round_trip_and_reference_up_to_precision_8() {
    for p in 1..=8u8 {
        let curve = HilbertCurve::new(p, Bounds::WGS84).unwrap();
        let side = 1u32 << p;
        let mut seen = vec![false; 1 << (2 * p)];
        for cx in 0..side {
            for cy in 0..side {
                let key = curve.encode_cell(cx, cy);
                assert_eq!(key, xy2d(p, cx, cy), "p={p} cell=({cx},{cy})");
                // The coordinate path (`encode`) agrees at the cell's corner.
                let cell = curve.cell_bounds(key);
                assert_eq!(curve.encode(cell.min_x, cell.min_y), Ok(key), "p={p}");
                assert_eq!(curve.decode(key), (cx, cy), "p={p} key={key}");
                assert!(!seen[key as usize], "p={p} key {key} twice");
                seen[key as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s), "p={p}: keys are not a permutation");
        // Decoding follows Wikipedia's d2xy too.
        for key in 0..(1u64 << (2 * p)) {
            assert_eq!(curve.decode(key), common::d2xy(p, key), "p={p} key={key}");
        }
    }
}

#[test]
fn exhaustive_consecutive_keys_are_edge_adjacent_up_to_precision_8() {
    for p in 1..=8u8 {
        let curve = HilbertCurve::new(p, Bounds::WGS84).unwrap();
        let mut prev = curve.decode(0);
        assert_eq!(prev, (0, 0), "the curve starts at the min corner");
        for key in 1..(1u64 << (2 * p)) {
            let next = curve.decode(key);
            assert_eq!(
                prev.0.abs_diff(next.0) + prev.1.abs_diff(next.1),
                1,
                "p={p} key={key}"
            );
            prev = next;
        }
        assert_eq!(
            prev,
            ((1 << p) - 1, 0),
            "p={p}: the curve ends at (max_x, min_y)"
        );
    }
}

#[test]
fn exhaustive_zorder_round_trip_up_to_precision_8() {
    for p in 1..=8u8 {
        let curve = ZOrderCurve::new(p, Bounds::WGS84).unwrap();
        for cx in 0..1u32 << p {
            for cy in 0..1u32 << p {
                let key = curve.encode_cell(cx, cy);
                assert_eq!(key, morton(p, cx, cy));
                assert_eq!(curve.decode(key), (cx, cy));
            }
        }
    }
}

#[test]
fn matches_fast_hilbert_at_32_bits() {
    let curve = HilbertCurve::wgs84(32).unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..10_000 {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let (x, y) = ((state >> 32) as u32, state as u32);
        assert_eq!(curve.encode_cell(x, y), fast_hilbert::xy2h::<u32>(x, y, 32));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_round_trip_at_32_bits(cx in any::<u32>(), cy in any::<u32>(), key in any::<u64>()) {
        let curve = HilbertCurve::wgs84(32).unwrap();
        prop_assert_eq!(curve.decode(curve.encode_cell(cx, cy)), (cx, cy));
        let (dx, dy) = curve.decode(key);
        prop_assert_eq!(curve.encode_cell(dx, dy), key);
        let z = ZOrderCurve::wgs84(32).unwrap();
        prop_assert_eq!(z.decode(z.encode_cell(cx, cy)), (cx, cy));
    }

    #[test]
    fn random_consecutive_keys_are_edge_adjacent(p in 1u8..=32, key in any::<u64>()) {
        let curve = HilbertCurve::wgs84(p).unwrap();
        let last = if p == 32 { u64::MAX } else { (1u64 << (2 * p)) - 1 };
        let key = key & last;
        prop_assume!(key < last);
        let (a, b) = (curve.decode(key), curve.decode(key + 1));
        prop_assert_eq!(a.0.abs_diff(b.0) + a.1.abs_diff(b.1), 1);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn equals_reference_at_every_precision((bounds, x, y) in bounded_point()) {
        for p in 1..=32u8 {
            let curve = HilbertCurve::new(p, bounds).unwrap();
            let (cx, cy) = cells(p, &bounds, x, y);
            let key = curve.encode(x, y).unwrap();
            prop_assert_eq!(key, xy2d(p, cx, cy), "p={}", p);
            prop_assert_eq!(curve.decode(key), (cx, cy), "p={}", p);
            let z = ZOrderCurve::new(p, bounds).unwrap();
            prop_assert_eq!(z.encode(x, y).unwrap(), morton(p, cx, cy), "p={}", p);
        }
    }

    #[test]
    fn keys_nest_across_precisions((bounds, x, y) in bounded_point()) {
        let mut coarse = HilbertCurve::new(1, bounds).unwrap().encode(x, y).unwrap();
        let mut coarse_z = ZOrderCurve::new(1, bounds).unwrap().encode(x, y).unwrap();
        for p in 2..=32u8 {
            let fine = HilbertCurve::new(p, bounds).unwrap().encode(x, y).unwrap();
            prop_assert_eq!(fine >> 2, coarse, "p={}", p);
            coarse = fine;
            let fine_z = ZOrderCurve::new(p, bounds).unwrap().encode(x, y).unwrap();
            prop_assert_eq!(fine_z >> 2, coarse_z, "p={}", p);
            coarse_z = fine_z;
        }
    }

    #[test]
    fn cell_bounds_contain_the_point((bounds, x, y) in bounded_point(), p in 1u8..=32) {
        let curve = HilbertCurve::new(p, bounds).unwrap();
        let key = curve.encode(x, y).unwrap();
        let cell = curve.cell_bounds(key);
        prop_assert!(cell.contains(x, y), "p={} key={} cell={} point=({}, {})", p, key, cell, x, y);
        // The cell's corners encode back into the cell (its min corner exactly).
        prop_assert_eq!(curve.encode(cell.min_x, cell.min_y).unwrap(), key);
        let z = ZOrderCurve::new(p, bounds).unwrap();
        prop_assert!(z.cell_bounds(z.encode(x, y).unwrap()).contains(x, y));
    }

    #[test]
    fn clamped_equals_encode_of_the_clipped_point(
        (bounds, x, y) in bounds_strategy().prop_flat_map(|b| {
            (Just(b), any_value(b.min_x, b.max_x), any_value(b.min_y, b.max_y))
        }),
        p in 1u8..=32,
    ) {
        let curve = HilbertCurve::new(p, bounds).unwrap();
        let clip = |v: f64, lo: f64, hi: f64| if v.is_nan() { lo } else { v.clamp(lo, hi) };
        let (cxv, cyv) = (clip(x, bounds.min_x, bounds.max_x), clip(y, bounds.min_y, bounds.max_y));
        prop_assert_eq!(curve.encode_clamped(x, y), curve.encode(cxv, cyv).unwrap());
        let inside = bounds.contains(x, y);
        prop_assert_eq!(curve.encode(x, y).is_ok(), inside);
    }
}

/// Lengths that straddle the 8-lane vectors and the 1024-point blocks.
fn batch_strategy() -> impl Strategy<Value = (Bounds, u8, Vec<(f64, f64)>)> {
    (
        bounds_strategy(),
        1u8..=32,
        prop_oneof![0usize..40, 1000usize..1100, 2040usize..2060],
    )
        .prop_flat_map(|(b, p, n)| {
            let point = (coord(b.min_x, b.max_x), coord(b.min_y, b.max_y));
            (Just(b), Just(p), proptest::collection::vec(point, n))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn batch_equals_elementwise_on_every_kernel((bounds, p, points) in batch_strategy()) {
        let (xs, ys): (Vec<f64>, Vec<f64>) = points.iter().copied().unzip();
        let expected: Vec<u64> = points.iter().map(|&(x, y)| {
            let (cx, cy) = cells(p, &bounds, x, y);
            xy2d(p, cx, cy)
        }).collect();
        let expected_z: Vec<u64> = points.iter().map(|&(x, y)| {
            let (cx, cy) = cells(p, &bounds, x, y);
            morton(p, cx, cy)
        }).collect();
        for kernel in kernels() {
            let curve = HilbertCurve::new(p, bounds).unwrap().with_kernel(kernel).unwrap();
            let mut out = vec![0; xs.len()];
            curve.encode_batch(&xs, &ys, &mut out).unwrap();
            prop_assert_eq!(&out, &expected, "{:?}", kernel);
            out.fill(0);
            curve.par_encode_batch(&xs, &ys, &mut out).unwrap();
            prop_assert_eq!(&out, &expected, "{:?} parallel", kernel);
            for (i, &(x, y)) in points.iter().enumerate() {
                prop_assert_eq!(curve.encode(x, y).unwrap(), expected[i]);
            }
            let z = ZOrderCurve::new(p, bounds).unwrap().with_kernel(kernel).unwrap();
            z.encode_batch(&xs, &ys, &mut out).unwrap();
            prop_assert_eq!(&out, &expected_z, "{:?} z-order", kernel);
        }
    }

    #[test]
    fn clamped_batch_equals_elementwise_on_every_kernel(
        (bounds, p, points) in (bounds_strategy(), 1u8..=32, 0usize..1100).prop_flat_map(|(b, p, n)| {
            let point = (any_value(b.min_x, b.max_x), any_value(b.min_y, b.max_y));
            (Just(b), Just(p), proptest::collection::vec(point, n))
        })
    ) {
        let (xs, ys): (Vec<f64>, Vec<f64>) = points.iter().copied().unzip();
        for kernel in kernels() {
            let curve = HilbertCurve::new(p, bounds).unwrap().with_kernel(kernel).unwrap();
            let expected: Vec<u64> = points.iter().map(|&(x, y)| curve.encode_clamped(x, y)).collect();
            let mut out = vec![0; xs.len()];
            curve.encode_batch_clamped(&xs, &ys, &mut out).unwrap();
            prop_assert_eq!(&out, &expected, "{:?}", kernel);
            out.fill(0);
            curve.par_encode_batch_clamped(&xs, &ys, &mut out).unwrap();
            prop_assert_eq!(&out, &expected, "{:?} parallel", kernel);
        }
    }

    #[test]
    fn batch_error_names_the_first_bad_index(
        (bounds, p, points) in batch_strategy(),
        bad in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(-1e300)],
        at in any::<prop::sample::Index>(),
        on_y in any::<bool>(),
    ) {
        prop_assume!(!points.is_empty());
        let (mut xs, mut ys): (Vec<f64>, Vec<f64>) = points.iter().copied().unzip();
        let i = at.index(points.len());
        if on_y { ys[i] = bad } else { xs[i] = bad }
        // A second bad value later must not be the one reported.
        let n = xs.len();
        if i + 1 < n { xs[n - 1] = f64::NAN }
        for kernel in kernels() {
            let curve = HilbertCurve::new(p, bounds).unwrap().with_kernel(kernel).unwrap();
            let mut out = vec![0; xs.len()];
            for result in [
                curve.encode_batch(&xs, &ys, &mut out),
                curve.par_encode_batch(&xs, &ys, &mut out),
            ] {
                match result {
                    Err(Error::OutOfBounds { index, axis, .. }) => {
                        prop_assert_eq!(index, Some(i));
                        prop_assert_eq!(axis, if on_y { geoberg_hilbert::Axis::Y } else { geoberg_hilbert::Axis::X });
                    }
                    other => prop_assert!(false, "{:?}: expected OutOfBounds, got {:?}", kernel, other),
                }
            }
        }
    }
}

#[test]
fn parallel_batch_over_many_chunks_matches_and_reports_smallest_index() {
    let n = 300_000 + 17;
    let xs: Vec<f64> = (0..n)
        .map(|i| (i as f64 * 0.618_033_988_7).fract() * 360.0 - 180.0)
        .collect();
    let ys: Vec<f64> = (0..n)
        .map(|i| (i as f64 * 0.414_213_562_3).fract() * 180.0 - 90.0)
        .collect();
    for kernel in kernels() {
        let curve = HilbertCurve::wgs84(32)
            .unwrap()
            .with_kernel(kernel)
            .unwrap();
        let (mut a, mut b) = (vec![0; n], vec![0; n]);
        curve.encode_batch(&xs, &ys, &mut a).unwrap();
        curve.par_encode_batch(&xs, &ys, &mut b).unwrap();
        assert_eq!(a, b);
        let mut bad = xs.clone();
        bad[250_000] = 500.0;
        bad[70_000] = f64::NAN;
        let err = curve.par_encode_batch(&bad, &ys, &mut b).unwrap_err();
        assert!(
            matches!(
                err,
                Error::OutOfBounds {
                    index: Some(70_000),
                    ..
                }
            ),
            "{err}"
        );
    }
}

/// Past the prefetch threshold of the AVX2 kernel (32K points), with a tail that is not a
/// multiple of 8 and the edge values that trip clamps: every kernel equals the scalar calls.
#[test]
fn long_batches_equal_scalar_calls_on_every_kernel() {
    let n = 100_000 + 5;
    let b = Bounds::WGS84;
    let edges = [
        b.min_x,
        b.max_x,
        -0.0,
        0.0,
        b.max_x.next_down(),
        b.min_x.next_up(),
    ];
    let xs: Vec<f64> = (0..n)
        .map(|i| match i % 97 {
            0..6 => edges[i % 97],
            _ => (i as f64 * 0.618_033_988_7).fract() * 360.0 - 180.0,
        })
        .collect();
    let ys: Vec<f64> = (0..n)
        .map(|i| match i % 89 {
            0 => b.max_y,
            1 => b.min_y,
            _ => (i as f64 * 0.414_213_562_3).fract() * 180.0 - 90.0,
        })
        .collect();
    // The clamped calls also see NaN, infinities and values outside the bounds.
    let mut wild_xs = xs.clone();
    for (i, v) in [f64::NAN, f64::INFINITY, -1e300, 180.5, -180.5]
        .into_iter()
        .enumerate()
    {
        wild_xs[33_000 + 1000 * i] = v;
        wild_xs[n - 1 - i] = v;
    }
    for p in [32u8, 19] {
        for kernel in kernels() {
            let curve = HilbertCurve::wgs84(p).unwrap().with_kernel(kernel).unwrap();
            let mut out = vec![0; n];
            curve.encode_batch(&xs, &ys, &mut out).unwrap();
            for i in 0..n {
                assert_eq!(
                    out[i],
                    curve.encode(xs[i], ys[i]).unwrap(),
                    "{kernel:?} p={p} i={i}"
                );
            }
            curve.encode_batch_clamped(&wild_xs, &ys, &mut out).unwrap();
            for i in 0..n {
                let expected = curve.encode_clamped(wild_xs[i], ys[i]);
                assert_eq!(out[i], expected, "{kernel:?} p={p} i={i}");
            }
            for bad in [40_000, n - 1] {
                let mut bad_ys = ys.clone();
                bad_ys[bad] = f64::NAN;
                let err = curve.encode_batch(&xs, &bad_ys, &mut out).unwrap_err();
                assert!(
                    matches!(err, Error::OutOfBounds { axis: geoberg_hilbert::Axis::Y, index: Some(i), .. } if i == bad),
                    "{kernel:?}: {err}"
                );
            }
        }
    }
}

#[test]
fn forced_kernels_report_themselves() {
    let curve = HilbertCurve::wgs84(16).unwrap();
    assert_eq!(curve.kernel(), Kernel::detect());
    let portable = curve.with_kernel(Kernel::Portable).unwrap();
    assert_eq!(portable.kernel(), Kernel::Portable);
    if !Kernel::Avx2.is_available() {
        assert!(matches!(
            curve.with_kernel(Kernel::Avx2),
            Err(Error::KernelUnavailable { .. })
        ));
    }
}
