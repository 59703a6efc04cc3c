//! `area`, `length` and `perimeter` against oracles outside the crate:
//! * closed forms of spherical geometry: an octant triangle is 1/8 of the sphere (4πR²/8), the
//!   triangle from the pole to two equator points Δλ apart is R²·Δλ (its excess: two right
//!   angles and Δλ at the pole), a quarter of the equator or of a meridian is πR/2;
//! * L'Huilier's formula for a triangle's spherical excess from its three sides, the sides by
//!   the haversine formula (both written here, independent of the crate's vector fans and
//!   `atan2` arc lengths);
//! * laws: area is additive over a polygon cut in two along a chord, a hole subtracts, every
//!   measure is invariant under rotation about the pole (a longitude shift) and under ring
//!   orientation.
//!
//! spherely (S2) is the oracle of `oracle/check.py`, which compares every row's measures too.

mod common;

use std::f64::consts::PI;

use arrow_array::{Array, BinaryArray};
use common::{destination, line, point, polygon, rect};
use geoberg_geography::{EARTH_RADIUS_METERS, Geography, GeographyError, area, length, perimeter};
use proptest::prelude::*;

const R: f64 = EARTH_RADIUS_METERS;

fn geog(wkb: &[u8]) -> Geography {
    Geography::from_wkb(wkb).unwrap()
}

fn close(ours: f64, expected: f64, relative: f64) -> bool {
    (ours - expected).abs() <= relative * expected.abs().max(1.0)
}

/// Great-circle angle between two lon/lat points, radians (haversine).
fn haversine(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (la1, la2) = (a.1.to_radians(), b.1.to_radians());
    let (dla, dlo) = (la2 - la1, (b.0 - a.0).to_radians());
    let h = (dla / 2.0).sin().powi(2) + la1.cos() * la2.cos() * (dlo / 2.0).sin().powi(2);
    2.0 * h.sqrt().min(1.0).asin()
}

/// Spherical excess of the triangle with these vertices by L'Huilier's theorem.
fn lhuilier(p: (f64, f64), q: (f64, f64), r: (f64, f64)) -> f64 {
    let (a, b, c) = (haversine(q, r), haversine(p, r), haversine(p, q));
    let s = (a + b + c) / 2.0;
    let t = (s / 2.0).tan()
        * ((s - a) / 2.0).tan().max(0.0)
        * ((s - b) / 2.0).tan().max(0.0)
        * ((s - c) / 2.0).tan().max(0.0);
    4.0 * t.sqrt().atan()
}

fn triangle(p: (f64, f64), q: (f64, f64), r: (f64, f64)) -> Vec<u8> {
    polygon(&[vec![p, q, r, p]])
}

#[test]
fn an_octant_is_an_eighth_of_the_sphere() {
    let octant = geog(&triangle((0.0, 0.0), (90.0, 0.0), (0.0, 90.0)));
    assert!(close(octant.area(), 4.0 * PI * R * R / 8.0, 1e-12));
    // Three quarter great circles.
    assert!(close(octant.perimeter(), 3.0 * PI * R / 2.0, 1e-12));
    assert_eq!(octant.length(), 0.0);
}

#[test]
fn a_pole_triangle_is_its_longitude_span_times_r_squared() {
    for (lon, span) in [(0.0, 10.0), (170.0, 20.0), (-45.0, 1e-3)] {
        let east = lon + span;
        let g = geog(&triangle((lon, 0.0), (east, 0.0), (lon, 90.0)));
        let expected = R * R * f64::to_radians(span);
        assert!(
            close(g.area(), expected, 1e-9),
            "{lon} {span}: {}",
            g.area()
        );
        // The same towards the south pole, written clockwise.
        let s = geog(&triangle((lon, 0.0), (lon, -90.0), (east, 0.0)));
        assert!(
            close(s.area(), expected, 1e-9),
            "{lon} {span}: {}",
            s.area()
        );
    }
    // Two of them in a MULTIPOLYGON add up.
    let mut multi = vec![1, 6, 0, 0, 0, 2, 0, 0, 0];
    multi.extend(triangle((0.0, 0.0), (10.0, 0.0), (0.0, 90.0)));
    multi.extend(triangle((20.0, 0.0), (30.0, 0.0), (20.0, 90.0)));
    assert!(close(
        geog(&multi).area(),
        2.0 * R * R * 10f64.to_radians(),
        1e-9
    ));
}

#[test]
fn quarter_great_circles_are_a_quarter_of_the_circumference() {
    let quarter = PI * R / 2.0;
    for wkb in [
        line(&[(0.0, 0.0), (90.0, 0.0)]),
        line(&[(0.0, 0.0), (0.0, 90.0)]),
        line(&[(170.0, 0.0), (-100.0, 0.0)]), // across the antimeridian
        line(&[(0.0, 0.0), (30.0, 0.0), (60.0, 0.0), (90.0, 0.0)]),
    ] {
        let g = geog(&wkb);
        assert!(close(g.length(), quarter, 1e-12), "{}", g.length());
        assert_eq!((g.area(), g.perimeter()), (0.0, 0.0));
    }
    // The arc between opposite meridians runs over the pole: 60 degrees, not 180 along 60N.
    let over_pole = geog(&line(&[(-90.0, 60.0), (90.0, 60.0)]));
    assert!(close(over_pole.length(), PI * R / 3.0, 1e-12));
}

#[test]
fn a_hole_subtracts_and_its_ring_counts_in_the_perimeter() {
    let (shell, hole) = (rect(0.0, 20.0, 10.0, 30.0), rect(4.0, 24.0, 6.0, 26.0));
    let whole = geog(&polygon(std::slice::from_ref(&shell)));
    let cut = geog(&polygon(std::slice::from_ref(&hole)));
    let holed = geog(&polygon(&[shell, hole]));
    assert!(close(holed.area(), whole.area() - cut.area(), 1e-9));
    assert!(close(
        holed.perimeter(),
        whole.perimeter() + cut.perimeter(),
        1e-12
    ));
}

#[test]
fn a_square_metre_keeps_its_digits() {
    // 1 m x 1 m at 50N: the fan from the pole would lose the area to cancellation.
    let d = (1.0 / R).to_degrees();
    let (x, y) = (10.0, 50.0f64);
    let dx = d / y.to_radians().cos();
    let g = geog(&polygon(&[rect(x, y, x + dx, y + d)]));
    assert!(close(g.area(), 1.0, 1e-6), "{}", g.area());
    assert!(close(g.perimeter(), 4.0, 1e-6), "{}", g.perimeter());
}

#[test]
fn a_cap_over_the_pole_matches_its_fan_of_lhuilier_triangles() {
    let ring: Vec<(f64, f64)> = (0..=8).map(|i| (-180.0 + 45.0 * i as f64, 80.0)).collect();
    let expected: f64 = ring
        .windows(2)
        .map(|w| lhuilier((0.0, 90.0), w[0], w[1]))
        .sum();
    let g = geog(&polygon(&[ring]));
    assert!(close(g.area(), expected * R * R, 1e-9), "{}", g.area());
}

#[test]
fn nulls_empties_points_and_bad_wkb() {
    let empty_polygon = vec![1, 3, 0, 0, 0, 0, 0, 0, 0];
    let empty_line = vec![1, 2, 0, 0, 0, 0, 0, 0, 0];
    let empty_collection = vec![1, 7, 0, 0, 0, 0, 0, 0, 0];
    let p = point(1.0, 2.0);
    let rows = BinaryArray::from(vec![
        Some(&empty_polygon[..]),
        Some(&empty_line[..]),
        Some(&empty_collection[..]),
        Some(&p[..]),
        None,
    ]);
    for kernel in [area, length, perimeter] {
        let out = kernel(&rows).unwrap();
        assert_eq!(
            (0..4).map(|i| out.value(i)).collect::<Vec<_>>(),
            [0.0; 4],
            "empty values and points measure 0"
        );
        assert!(out.is_null(4));
    }
    let truncated = BinaryArray::from(vec![&p[..], &p[..10]]);
    match area(&truncated) {
        Err(GeographyError::Row { row: 1, .. }) => {}
        other => panic!("expected an error at row 1, got {other:?}"),
    }
}

fn lon_lat() -> impl Strategy<Value = (f64, f64)> {
    (-180.0..180.0f64, -80.0..80.0f64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Triangle area against L'Huilier's formula over haversine sides.
    #[test]
    fn triangle_area_is_r_squared_times_the_lhuilier_excess(
        c in lon_lat(),
        size in 0.01..60.0f64,
        bearings in prop::array::uniform3(0.0..(2.0 * PI)),
        reach in prop::array::uniform3(0.3..1.0f64),
    ) {
        let v: Vec<(f64, f64)> = (0..3).map(|i| destination(c, bearings[i], size * reach[i])).collect();
        let expected = lhuilier(v[0], v[1], v[2]) * R * R;
        let g = geog(&triangle(v[0], v[1], v[2]));
        // L'Huilier loses digits on thin triangles: 1e-7 of the area of a triangle of the size.
        let slack = 1e-7 * (size.to_radians() * R).powi(2);
        prop_assert!((g.area() - expected).abs() <= 1e-9 * expected + slack,
            "{v:?}: ours {} L'Huilier {expected}", g.area());
        let sides = haversine(v[0], v[1]) + haversine(v[1], v[2]) + haversine(v[2], v[0]);
        prop_assert!(close(g.perimeter(), sides * R, 1e-9));
    }

    /// A convex polygon cut along a chord: the two pieces add up to the whole.
    #[test]
    fn area_is_additive_over_a_cut(
        c in lon_lat(),
        radius in 0.1..40.0f64,
        mut bearings in prop::collection::vec(0.0..(2.0 * PI), 4..12),
        cut in 2usize..10,
    ) {
        bearings.sort_by(f64::total_cmp);
        bearings.dedup_by(|a, b| (*a - *b).abs() < 1e-3);
        prop_assume!(bearings.len() >= 4 && bearings[bearings.len() - 1] - bearings[0] < 2.0 * PI - 1e-3);
        let v: Vec<(f64, f64)> = bearings.iter().map(|&b| destination(c, b, radius)).collect();
        let k = 2 + cut % (v.len() - 3);
        let close_ring = |mut r: Vec<(f64, f64)>| { r.push(r[0]); r };
        let whole = geog(&polygon(&[close_ring(v.clone())])).area();
        let first = geog(&polygon(&[close_ring(v[..=k].to_vec())])).area();
        let mut rest = v[k..].to_vec();
        rest.push(v[0]);
        let second = geog(&polygon(&[close_ring(rest)])).area();
        prop_assert!((first + second - whole).abs() <= 1e-9 * whole + 1e-3,
            "{first} + {second} != {whole}");
    }

    /// Rotating about the pole (shifting every longitude) and reversing the rings change no
    /// measure.
    #[test]
    fn measures_are_invariant_under_rotation_and_orientation(
        c in lon_lat(),
        radius in 0.1..30.0f64,
        bearings in prop::collection::vec(0.0..(2.0 * PI), 3..10),
        shift in -360.0..360.0f64,
    ) {
        let mut sorted = bearings.clone();
        sorted.sort_by(f64::total_cmp);
        let ring: Vec<(f64, f64)> = sorted.iter().chain(&sorted[..1]).map(|&b| destination(c, b, radius)).collect();
        let moved: Vec<(f64, f64)> = ring.iter().map(|&(x, y)| (((x + shift + 180.0).rem_euclid(360.0)) - 180.0, y)).collect();
        let reversed: Vec<(f64, f64)> = moved.iter().rev().copied().collect();
        let a = geog(&polygon(std::slice::from_ref(&ring)));
        let b = geog(&polygon(std::slice::from_ref(&moved)));
        let r = geog(&polygon(&[reversed]));
        for g in [&b, &r] {
            prop_assert!((g.area() - a.area()).abs() <= 1e-9 * a.area() + 1e-3);
            prop_assert!(close(g.perimeter(), a.perimeter(), 1e-9));
        }
        let (la, lb) = (geog(&line(&ring)).length(), geog(&line(&moved)).length());
        prop_assert!(close(la, lb, 1e-9));
        // A line is as long as the sum of its haversine edges.
        let sum: f64 = ring.windows(2).map(|w| haversine(w[0], w[1])).sum();
        prop_assert!(close(la, sum * R, 1e-9));
    }
}
