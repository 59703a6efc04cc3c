//! Geography bounds hold every point of every edge on the sphere. The oracle samples each
//! great-circle arc densely with slerp (an independent computation, not the bounder's extreme
//! latitude formula) and checks every sample lies in the box.

use geoberg_geostats::{BBox, GeographyBBoxAccumulator, geography_bbox_of_wkb};
use proptest::prelude::*;

fn header(out: &mut Vec<u8>, kind: u32) {
    out.push(1);
    out.extend(kind.to_le_bytes());
}

fn coords(out: &mut Vec<u8>, cs: &[(f64, f64)]) {
    out.extend((cs.len() as u32).to_le_bytes());
    for (x, y) in cs {
        out.extend(x.to_le_bytes());
        out.extend(y.to_le_bytes());
    }
}

fn point(x: f64, y: f64) -> Vec<u8> {
    let mut v = Vec::new();
    header(&mut v, 1);
    v.extend(x.to_le_bytes());
    v.extend(y.to_le_bytes());
    v
}

fn line(cs: &[(f64, f64)]) -> Vec<u8> {
    let mut v = Vec::new();
    header(&mut v, 2);
    coords(&mut v, cs);
    v
}

fn polygon(rings: &[Vec<(f64, f64)>]) -> Vec<u8> {
    let mut v = Vec::new();
    header(&mut v, 3);
    v.extend((rings.len() as u32).to_le_bytes());
    for r in rings {
        coords(&mut v, r);
    }
    v
}

fn closed(mut r: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    r.push(r[0]);
    r
}

fn bbox(wkb: &[u8]) -> BBox {
    geography_bbox_of_wkb(wkb).unwrap().unwrap()
}

fn unit(lon: f64, lat: f64) -> [f64; 3] {
    let (lo, la) = (lon.to_radians(), lat.to_radians());
    [la.cos() * lo.cos(), la.cos() * lo.sin(), la.sin()]
}

/// Points along the great-circle arc from a to b (spherical linear interpolation).
fn slerp(a: (f64, f64), b: (f64, f64), n: usize) -> Vec<(f64, f64)> {
    let (p, q) = (unit(a.0, a.1), unit(b.0, b.1));
    let d = (p[0] * q[0] + p[1] * q[1] + p[2] * q[2]).clamp(-1.0, 1.0);
    let omega = d.acos();
    (0..=n)
        .map(|i| {
            let t = i as f64 / n as f64;
            let (wa, wb) = if omega < 1e-12 {
                (1.0 - t, t)
            } else {
                (
                    ((1.0 - t) * omega).sin() / omega.sin(),
                    (t * omega).sin() / omega.sin(),
                )
            };
            let v = [0, 1, 2].map(|k| wa * p[k] + wb * q[k]);
            let lat = v[2].atan2((v[0] * v[0] + v[1] * v[1]).sqrt()).to_degrees();
            let lon = v[1].atan2(v[0]).to_degrees();
            (lon, lat)
        })
        .collect()
}

/// Whether the box holds (lon, lat) within `tol` degrees, on the circle of longitudes.
fn holds(b: &BBox, lon: f64, lat: f64, tol: f64) -> bool {
    let y = b.min_y - tol <= lat && lat <= b.max_y + tol;
    // Near a pole every longitude is within tol of the point.
    if lat.abs() >= 90.0 - tol {
        return y;
    }
    let (lo, hi) = if b.min_x <= b.max_x {
        (b.min_x, b.max_x)
    } else {
        (b.min_x, b.max_x + 360.0)
    };
    let x = [-360.0, 0.0, 360.0]
        .iter()
        .any(|s| lo - tol <= lon + s && lon + s <= hi + tol);
    x && y
}

#[test]
fn table_of_spherical_boxes() {
    // (what, wkb, expected box)
    // atan(tan 60 / cos 45): the top of the great circle through (0, 60) and (90, 60).
    let far_north = (
        (60f64.to_radians().tan() / 45f64.to_radians().cos())
            .atan()
            .to_degrees(),
        60.0,
    );
    let cases: Vec<(&str, Vec<u8>, [f64; 4])> = vec![
        (
            "bulge over the pole",
            line(&[(-90.0, 60.0), (90.0, 60.0)]),
            [-180.0, 60.0, 180.0, 90.0],
        ),
        (
            "across the antimeridian",
            line(&[(170.0, 0.0), (-170.0, 0.0)]),
            [170.0, 0.0, -170.0, 0.0],
        ),
        (
            "point past 180 is clamped",
            point(180.000_000_000_000_06, 10.0),
            [180.0, 10.0, 180.0, 10.0],
        ),
        (
            "point at -180",
            point(-180.0, -5.0),
            [-180.0, -5.0, -180.0, -5.0],
        ),
        (
            "a pole point is boxed as itself",
            point(10.0, 90.0),
            [10.0, 90.0, 10.0, 90.0],
        ),
        (
            "a line to the pole spans every longitude",
            line(&[(10.0, 80.0), (10.0, 90.0)]),
            [-180.0, 80.0, 180.0, 90.0],
        ),
        (
            "ring round the North Pole",
            polygon(&[closed(vec![
                (0.0, 80.0),
                (90.0, 80.0),
                (180.0, 80.0),
                (-90.0, 80.0),
            ])]),
            [-180.0, 80.0, 180.0, 90.0],
        ),
        (
            "ring round the South Pole, either orientation",
            polygon(&[closed(vec![
                (0.0, -80.0),
                (-90.0, -80.0),
                (180.0, -80.0),
                (90.0, -80.0),
            ])]),
            [-180.0, -90.0, 180.0, -80.0],
        ),
        (
            "polygon across the antimeridian",
            polygon(&[closed(vec![
                (170.0, -10.0),
                (-170.0, -10.0),
                (-170.0, 10.0),
                (170.0, 10.0),
            ])]),
            [170.0, -10.0, -170.0, 10.0],
        ),
    ];
    for (what, wkb, [x0, y0, x1, y1]) in cases {
        let b = bbox(&wkb);
        assert_eq!((b.min_x, b.max_x), (x0, x1), "{what}: {b:?}");
        // Latitudes: vertices exact, bulges within a margin outward.
        assert!(b.min_y <= y0 && b.min_y >= y0 - 0.2, "{what}: {b:?}");
        assert!(b.max_y >= y1 && b.max_y <= y1 + 0.2, "{what}: {b:?}");
    }
    let b = bbox(&line(&[(0.0, 60.0), (90.0, 60.0)]));
    assert!(
        b.max_y >= far_north.0 && b.max_y < far_north.0 + 1e-12,
        "{b:?}"
    );
    assert_eq!((b.min_y, b.min_x, b.max_x), (far_north.1, 0.0, 90.0));
    // The antimeridian polygon's 20-degree edges at latitude 10 bulge to atan(tan 10 / cos 10).
    let b = bbox(&polygon(&[closed(vec![
        (170.0, -10.0),
        (-170.0, -10.0),
        (-170.0, 10.0),
        (170.0, 10.0),
    ])]));
    let top = (10f64.to_radians().tan() / 10f64.to_radians().cos())
        .atan()
        .to_degrees();
    assert!(b.max_y >= top && b.max_y - top < 1e-12, "{b:?}");
    assert!(b.min_y <= -top && -top - b.min_y < 1e-12, "{b:?}");
    // Orientation does not matter.
    let ccw = closed(vec![(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)]);
    let mut cw = ccw.clone();
    cw.reverse();
    assert_eq!(bbox(&polygon(&[ccw])), bbox(&polygon(&[cw])));
}

#[test]
fn repeated_points_and_empty_members() {
    // A ring with repeated vertices bounds as the ring without them.
    let clean = closed(vec![(10.0, 10.0), (20.0, 10.0), (20.0, 20.0), (10.0, 20.0)]);
    let repeated = closed(vec![
        (10.0, 10.0),
        (10.0, 10.0),
        (20.0, 10.0),
        (20.0, 10.0),
        (20.0, 10.0),
        (20.0, 20.0),
        (10.0, 20.0),
        (10.0, 20.0),
    ]);
    assert_eq!(bbox(&polygon(&[clean])), bbox(&polygon(&[repeated])));
    // GEOMETRYCOLLECTION (POINT EMPTY, LINESTRING EMPTY, POLYGON EMPTY, POINT (1 2)).
    let mut gc = vec![1, 7, 0, 0, 0, 4, 0, 0, 0];
    gc.extend(point(f64::NAN, f64::NAN));
    gc.extend(line(&[]));
    gc.extend(polygon(&[]));
    gc.extend(point(1.0, 2.0));
    assert_eq!(bbox(&gc), BBox::point(1.0, 2.0));
    // Only empty members: no box.
    let mut empty = vec![1, 7, 0, 0, 0, 2, 0, 0, 0];
    empty.extend(point(f64::NAN, f64::NAN));
    empty.extend(line(&[]));
    assert_eq!(geography_bbox_of_wkb(&empty).unwrap(), None);
    // A polygon with a hole bounds as its shell.
    let shell = closed(vec![(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0)]);
    let hole = closed(vec![(4.0, 4.0), (6.0, 4.0), (6.0, 6.0), (4.0, 6.0)]);
    assert_eq!(
        bbox(&polygon(&[shell.clone(), hole])),
        bbox(&polygon(&[shell]))
    );
}

#[test]
fn accumulator_unions_wrapping_boxes_minimally() {
    let mut acc = GeographyBBoxAccumulator::new();
    for x in [30.0, 60.0, -30.0, 150.0, -150.0] {
        acc.add_wkb(&point(x, 0.0)).unwrap();
    }
    // The largest gap (120) is between -150 and -30: the union wraps from -30 to -150.
    let b = acc.finish().unwrap();
    assert_eq!((b.min_x, b.max_x), (-30.0, -150.0));
}

fn lonlat() -> impl Strategy<Value = (f64, f64)> {
    prop_oneof![
        4 => (-180.0..=180.0f64, -90.0..=90.0f64),
        1 => (prop::sample::select(vec![-180.0, 180.0, 179.999, -179.999, 0.0]), -89.0..89.0f64),
        1 => (-180.0..=180.0f64, prop::sample::select(vec![89.9, -89.9, 90.0, -90.0, 0.0, 60.0])),
    ]
}

/// A chain whose vertices step at most `step` degrees, so that rings are mostly simple.
fn chain(step: f64) -> impl Strategy<Value = Vec<(f64, f64)>> {
    (
        lonlat(),
        prop::collection::vec((-step..step, -step..step), 1..8),
    )
        .prop_map(|(s, steps)| {
            let mut out = vec![s];
            let (mut x, mut y) = s;
            for (dx, dy) in steps {
                x += dx;
                if x > 180.0 {
                    x -= 360.0;
                }
                if x < -180.0 {
                    x += 360.0;
                }
                y = (y + dy).clamp(-90.0, 90.0);
                out.push((x, y));
            }
            out
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Every slerp sample of every edge of a line lies in its box (and in the union box).
    #[test]
    fn every_edge_sample_is_inside(lines in prop::collection::vec(chain(60.0), 1..4)) {
        let mut acc = GeographyBBoxAccumulator::new();
        for l in &lines {
            let b = bbox(&line(l));
            acc.add(Some(b));
            for w in l.windows(2) {
                for (x, y) in slerp(w[0], w[1], 64) {
                    prop_assert!(holds(&b, x, y, 1e-11), "{:?}->{:?}: sample ({x}, {y}) outside {b:?}", w[0], w[1]);
                }
            }
            for &(x, y) in l {
                prop_assert!(holds(&b, x, y, 0.0), "vertex ({x}, {y}) outside {b:?}");
            }
        }
        let u = acc.finish().unwrap();
        for l in &lines {
            for w in l.windows(2) {
                for (x, y) in slerp(w[0], w[1], 16) {
                    prop_assert!(holds(&u, x, y, 1e-11), "union {u:?} misses ({x}, {y})");
                }
            }
        }
    }

    /// Polygon rings too (their closing edge included), whatever the orientation.
    #[test]
    fn every_ring_sample_is_inside(ring in chain(30.0)) {
        prop_assume!(ring.len() >= 3);
        let r = closed(ring);
        let b = bbox(&polygon(std::slice::from_ref(&r)));
        for w in r.windows(2) {
            for (x, y) in slerp(w[0], w[1], 64) {
                prop_assert!(holds(&b, x, y, 1e-11), "sample ({x}, {y}) outside {b:?}");
            }
        }
    }

    /// Adding WKB values (points take a fast path) equals adding their own boxes.
    #[test]
    fn add_wkb_equals_adding_the_value_boxes(pts in prop::collection::vec(lonlat(), 1..30), l in chain(20.0)) {
        let mut by_wkb = GeographyBBoxAccumulator::new();
        let mut by_box = GeographyBBoxAccumulator::new();
        let mut values: Vec<Vec<u8>> = pts.iter().map(|&(x, y)| point(x, y)).collect();
        values.push(point(f64::NAN, 1.0));
        values.push(point(180.000_000_000_000_06, 1.0));
        values.push(line(&l));
        for v in &values {
            by_wkb.add_wkb(v).unwrap();
            by_box.add(geography_bbox_of_wkb(v).unwrap());
        }
        prop_assert_eq!(by_wkb.finish(), by_box.finish());
        let array = arrow_array::BinaryArray::from_iter_values(values.iter());
        let mut by_array = GeographyBBoxAccumulator::new();
        by_array.add_wkb_array(&array).unwrap();
        prop_assert_eq!(by_array.finish(), by_box.finish());
    }

    /// The union does not depend on the order of adds and merges.
    #[test]
    fn union_is_order_independent(xs in prop::collection::vec((-180.0..180.0f64, 0.0..40.0f64), 1..12), split in any::<prop::sample::Index>()) {
        let boxes: Vec<BBox> = xs.iter().map(|&(x, w)| {
            let hi = if x + w > 180.0 { x + w - 360.0 } else { x + w };
            BBox::new(x, 0.0, hi, 1.0)
        }).collect();
        let fold = |bs: &[BBox]| {
            let mut a = GeographyBBoxAccumulator::new();
            bs.iter().for_each(|b| a.add(Some(*b)));
            a
        };
        let all = fold(&boxes).finish();
        let k = split.index(boxes.len() + 1);
        let mut left = fold(&boxes[..k]);
        left.merge(&fold(&boxes[k..]));
        prop_assert_eq!(left.finish(), all);
        let mut rev = boxes.clone();
        rev.reverse();
        prop_assert_eq!(fold(&rev).finish(), all);
        let u = all.unwrap();
        for b in &boxes {
            prop_assert!(holds(&u, b.min_x, 0.5, 0.0) && holds(&u, b.max_x, 0.5, 0.0));
        }
    }
}
