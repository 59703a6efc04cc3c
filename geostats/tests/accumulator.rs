//! Laws of the planar and geography accumulators.

mod common;

use geoberg_geostats::{BBox, BBoxAccumulator, GeographyBBoxAccumulator, Interval};
use proptest::prelude::*;

fn interval(lo: f64, hi: f64) -> Interval {
    Interval::new(lo.min(hi), lo.max(hi))
}

fn bbox() -> impl Strategy<Value = Option<BBox>> {
    proptest::option::weighted(
        0.85,
        (
            -180.0..180.0f64,
            -90.0..90.0f64,
            -180.0..180.0f64,
            -90.0..90.0f64,
            proptest::option::of((-1e3..1e3f64, -1e3..1e3f64)),
            proptest::option::of((-1e3..1e3f64, -1e3..1e3f64)),
        )
            .prop_map(|(a, b, c, d, z, m)| BBox {
                min_x: a.min(c),
                min_y: b.min(d),
                max_x: a.max(c),
                max_y: b.max(d),
                z: z.map(|(l, h)| interval(l, h)),
                m: m.map(|(l, h)| interval(l, h)),
            }),
    )
}

/// Geography boxes, some wrapping the antimeridian.
fn geo_bbox() -> impl Strategy<Value = Option<BBox>> {
    proptest::option::weighted(
        0.85,
        (
            -180.0..180.0f64,
            -180.0..180.0f64,
            -90.0..90.0f64,
            -90.0..90.0f64,
        )
            .prop_map(|(a, c, b, d)| BBox::new(a, b.min(d), c, b.max(d))),
    )
}

fn fold(boxes: &[Option<BBox>]) -> BBoxAccumulator {
    let mut acc = BBoxAccumulator::new();
    boxes.iter().for_each(|b| acc.add(*b));
    acc
}

fn geo_fold(boxes: &[Option<BBox>]) -> GeographyBBoxAccumulator {
    let mut acc = GeographyBBoxAccumulator::new();
    boxes.iter().for_each(|b| acc.add(*b));
    acc
}

/// Whether longitude `x` is inside the (possibly wrapping) X range of `b`.
fn covers_x(b: &BBox, x: f64) -> bool {
    if b.min_x <= b.max_x {
        b.min_x <= x && x <= b.max_x
    } else {
        x >= b.min_x || x <= b.max_x
    }
}

fn width(b: &BBox) -> f64 {
    if b.min_x <= b.max_x {
        b.max_x - b.min_x
    } else {
        360.0 - (b.min_x - b.max_x)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn planar_laws(boxes in proptest::collection::vec(bbox(), 0..12), split in any::<prop::sample::Index>(), seed in any::<u64>()) {
        let all = fold(&boxes).finish();
        // Associative: any split merged equals the single fold.
        let k = split.index(boxes.len() + 1);
        let mut left = fold(&boxes[..k]);
        left.merge(&fold(&boxes[k..]));
        prop_assert_eq!(left.finish(), all);
        // Commutative: any permutation.
        let mut shuffled = boxes.clone();
        let mut s = seed;
        for i in (1..shuffled.len()).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (s >> 33) as usize % (i + 1));
        }
        prop_assert_eq!(fold(&shuffled).finish(), all);
        // Identity: None and an empty accumulator change nothing.
        let mut with_none = fold(&boxes);
        with_none.add(None);
        with_none.merge(&BBoxAccumulator::new());
        prop_assert_eq!(with_none.finish(), all);
        // Union covers every input and equals the BBox::union fold.
        let union = boxes.iter().flatten().fold(None::<BBox>, |acc, b| Some(acc.map_or(*b, |a| a.union(b))));
        prop_assert_eq!(all, union);
        for b in boxes.iter().flatten() {
            let u = all.unwrap();
            prop_assert!(u.contains_point(b.min_x, b.min_y) && u.contains_point(b.max_x, b.max_y));
        }
    }

    #[test]
    fn geography_laws(boxes in proptest::collection::vec(geo_bbox(), 0..10), split in any::<prop::sample::Index>()) {
        let all = geo_fold(&boxes).finish();
        let k = split.index(boxes.len() + 1);
        let mut left = geo_fold(&boxes[..k]);
        left.merge(&geo_fold(&boxes[k..]));
        prop_assert_eq!(left.finish(), all);
        let mut rev = boxes.clone();
        rev.reverse();
        prop_assert_eq!(geo_fold(&rev).finish(), all);
        // Covers every input's corners, and is never wider than the planar union.
        if let Some(u) = all {
            for b in boxes.iter().flatten() {
                prop_assert!(covers_x(&u, b.min_x) && covers_x(&u, b.max_x));
                prop_assert!(u.y().contains(b.min_y) && u.y().contains(b.max_y));
            }
            prop_assert!(width(&u) <= 360.0);
        } else {
            prop_assert!(boxes.iter().all(Option::is_none));
        }
    }

    /// For points the geography box is the narrower of planar and split-at-0 wrap.
    #[test]
    fn geography_points_choose_narrower(xs in proptest::collection::vec(-180.0..180.0f64, 1..20)) {
        let boxes: Vec<_> = xs.iter().map(|x| Some(BBox::point(*x, 0.0))).collect();
        let u = geo_fold(&boxes).finish().unwrap();
        let lo = xs.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        prop_assert!(width(&u) <= hi - lo);
        for x in &xs {
            prop_assert!(covers_x(&u, *x));
        }
        // Brute force: the smallest cover is 360 minus the largest gap between sorted points.
        let mut sorted = xs.clone();
        sorted.sort_by(f64::total_cmp);
        let mut gap = sorted[0] + 360.0 - sorted[sorted.len() - 1];
        for w in sorted.windows(2) {
            gap = gap.max(w[1] - w[0]);
        }
        prop_assert!((width(&u) - (360.0 - gap)).abs() < 1e-9, "{:?}: {} vs {}", u, width(&u), 360.0 - gap);
    }
}

#[test]
fn antimeridian_line_wraps() {
    // LINESTRING (170 0, -170 10)
    let mut wkb = vec![1, 2, 0, 0, 0, 2, 0, 0, 0];
    for v in [170.0f64, 0.0, -170.0, 10.0] {
        wkb.extend(v.to_le_bytes());
    }
    let b = geoberg_geostats::geography_bbox_of_wkb(&wkb)
        .unwrap()
        .unwrap();
    assert_eq!(
        (b.min_x, b.max_x, b.min_y, b.max_y),
        (170.0, -170.0, 0.0, 10.0)
    );
    // As geometry it does not wrap.
    let p = geoberg_geostats::bbox_of_wkb(&wkb).unwrap().unwrap();
    assert_eq!((p.min_x, p.max_x), (-170.0, 170.0));
    // With a box over the prime meridian the union is the smallest cover of both: 200 degrees
    // (the gaps 10..170 and -170..-10 are equal), not the 360 of the planar range.
    let mut acc = GeographyBBoxAccumulator::new();
    acc.add_wkb(&wkb).unwrap();
    assert_eq!(acc.finish().unwrap().min_x, 170.0);
    acc.add(Some(BBox::new(-10.0, 0.0, 10.0, 1.0)));
    let u = acc.finish().unwrap();
    assert_eq!(width(&u), 200.0, "{u:?}");
    for x in [170.0, 180.0, -170.0, -10.0, 0.0, 10.0] {
        assert!(covers_x(&u, x), "{u:?} misses {x}");
    }
}

#[test]
fn accumulator_over_arrays() {
    let a = arrow_array::BinaryArray::from(vec![
        Some(&common::point_wkb(1.0, 2.0)[..]),
        None,
        Some(&common::point_wkb(-3.0, 5.0)[..]),
    ]);
    let mut acc = BBoxAccumulator::new();
    acc.add_wkb_array(&a).unwrap();
    assert_eq!(acc.finish(), Some(BBox::new(-3.0, 2.0, 1.0, 5.0)));
    let bad = arrow_array::BinaryArray::from(vec![&[1u8, 2][..]]);
    assert!(matches!(
        acc.add_wkb_array(&bad),
        Err(geoberg_geostats::GeostatsError::Row { row: 0, .. })
    ));
}
