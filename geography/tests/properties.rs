//! Properties of the predicates against independent oracles:
//! * point in polygon against planar point-in-polygon (`geo::Contains`) in the gnomonic
//!   projection centred on the polygon, which maps great-circle arcs to straight segments;
//! * distances against the haversine formula and against dense slerp sampling of edges;
//! * the laws that tie the predicates together, and ring orientation not mattering;
//! * geostats' bounds holding every point the oracle finds inside a polygon.

mod common;

use common::{destination, line, point, polygon, unit};
use geo::{Contains, Coord, LineString, Polygon};
use geoberg_geography::{EARTH_RADIUS_METERS, Geography};
use proptest::prelude::*;

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn normalized(a: [f64; 3]) -> [f64; 3] {
    let n = dot(a, a).sqrt();
    [a[0] / n, a[1] / n, a[2] / n]
}

/// Gnomonic projection centred on `c`: great circles become straight lines.
struct Gnomonic {
    c: [f64; 3],
    e1: [f64; 3],
    e2: [f64; 3],
}

impl Gnomonic {
    fn new(center: (f64, f64)) -> Self {
        let c = unit(center);
        let helper = if c[2].abs() < 0.9 {
            [0.0, 0.0, 1.0]
        } else {
            [1.0, 0.0, 0.0]
        };
        let e1 = normalized(cross(helper, c));
        let e2 = cross(c, e1);
        Gnomonic { c, e1, e2 }
    }

    /// `None` for points on the far hemisphere.
    fn project(&self, p: (f64, f64)) -> Option<Coord<f64>> {
        let v = unit(p);
        let d = dot(v, self.c);
        (d > 1e-9).then(|| Coord {
            x: dot(v, self.e1) / d,
            y: dot(v, self.e2) / d,
        })
    }
}

fn haversine(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (la1, la2) = (a.1.to_radians(), b.1.to_radians());
    let h = ((la2 - la1) / 2.0).sin().powi(2)
        + la1.cos() * la2.cos() * ((b.0 - a.0).to_radians() / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_METERS * h.sqrt().min(1.0).asin()
}

fn center() -> impl Strategy<Value = (f64, f64)> {
    prop_oneof![
        3 => (-180.0..180.0f64, -1.0..1.0f64).prop_map(|(x, z)| (x, z.asin().to_degrees())),
        1 => (prop::sample::select(vec![-179.9, 179.9, 180.0, -180.0]), -50.0..50.0f64),
        1 => (-180.0..180.0f64, prop::sample::select(vec![-88.0, 88.0, 89.99, -89.99])),
    ]
}

/// A star-shaped ring round a centre (simple by construction), radius in degrees.
fn ring() -> impl Strategy<Value = ((f64, f64), Vec<(f64, f64)>)> {
    (
        center(),
        prop_oneof![1 => 0.001..0.1f64, 2 => 0.5..20.0f64, 1 => 20.0..60.0f64],
        prop::collection::vec(0.5..1.0f64, 3..12),
        0.0..6.3f64,
        any::<bool>(),
    )
        .prop_map(|(c, r, radii, start, reverse)| {
            let n = radii.len();
            let mut pts: Vec<(f64, f64)> = radii
                .iter()
                .enumerate()
                .map(|(k, f)| {
                    destination(
                        c,
                        start + std::f64::consts::TAU * k as f64 / n as f64,
                        r * f,
                    )
                })
                .collect();
            if reverse {
                pts.reverse();
            }
            pts.push(pts[0]);
            (c, pts)
        })
}

fn near_point(c: (f64, f64)) -> impl Strategy<Value = (f64, f64)> {
    (0.0..6.3f64, 0.0..70.0f64).prop_map(move |(b, d)| destination(c, b, d))
}

fn geog(wkb: &[u8]) -> Geography {
    Geography::from_wkb(wkb).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Point in polygon agrees with planar point-in-polygon in the gnomonic projection; the
    /// polygon's bounds hold every point found inside.
    #[test]
    fn point_in_polygon_matches_the_gnomonic_oracle(((c, r), ps) in ring().prop_flat_map(|cr| (Just(cr.clone()), prop::collection::vec(near_point(cr.0), 1..20)))) {
        let g = Gnomonic::new(c);
        let projected: Vec<Coord<f64>> = r.iter().map(|&p| g.project(p).unwrap()).collect();
        let planar = Polygon::new(LineString::new(projected.clone()), vec![]);
        let poly = geog(&polygon(std::slice::from_ref(&r)));
        let bbox = poly.bbox().unwrap();
        for p in ps {
            let q = geog(&point(p.0, p.1));
            let inside = match g.project(p) {
                None => false,
                Some(pp) => {
                    // Skip points within rounding of the boundary in the projection.
                    let near_edge = projected.windows(2).any(|w| {
                        let (a, b) = (w[0], w[1]);
                        let (dx, dy) = (b.x - a.x, b.y - a.y);
                        let t = (((pp.x - a.x) * dx + (pp.y - a.y) * dy) / (dx * dx + dy * dy)).clamp(0.0, 1.0);
                        let (ex, ey) = (a.x + t * dx - pp.x, a.y + t * dy - pp.y);
                        (ex * ex + ey * ey).sqrt() < 1e-9 * (1.0 + pp.x.abs() + pp.y.abs())
                    });
                    if near_edge {
                        continue;
                    }
                    planar.contains(&pp)
                }
            };
            prop_assert_eq!(poly.covers(&q), inside, "point {:?} ring {:?}", p, r);
            prop_assert_eq!(poly.intersects(&q), inside);
            prop_assert_eq!(q.within(&poly), inside);
            if inside {
                let xin = if bbox.min_x <= bbox.max_x {
                    bbox.min_x <= p.0 && p.0 <= bbox.max_x
                } else {
                    p.0 >= bbox.min_x || p.0 <= bbox.max_x
                };
                let polar = bbox.max_y >= 90.0 || bbox.min_y <= -90.0;
                prop_assert!((xin || polar || p.0.abs() == 180.0) && bbox.min_y <= p.1 && p.1 <= bbox.max_y,
                    "box {:?} misses inside point {:?}", bbox, p);
            }
        }
    }

    /// Orientation never matters.
    #[test]
    fn ring_orientation_does_not_matter(((c, r), p) in ring().prop_flat_map(|cr| (Just(cr.clone()), near_point(cr.0)))) {
        let _ = c;
        let mut rev = r.clone();
        rev.reverse();
        let (a, b) = (geog(&polygon(&[r])), geog(&polygon(&[rev])));
        let q = geog(&point(p.0, p.1));
        prop_assert_eq!(a.covers(&q), b.covers(&q));
        prop_assert_eq!(a.distance(&q), b.distance(&q));
    }

    /// Point-point distance is the haversine distance; point-line distance is the minimum over
    /// dense samples of the line, within the sampling step.
    #[test]
    fn distances_match_independent_formulas(a in center(), b in center(), c in center()) {
        let (pa, pb) = (geog(&point(a.0, a.1)), geog(&point(b.0, b.1)));
        let d = pa.distance(&pb);
        prop_assert!((d - haversine(a, b)).abs() < 1e-6 + 1e-9 * d, "{} vs {}", d, haversine(a, b));
        let l = geog(&line(&[b, c]));
        let ours = pa.distance(&l);
        let (u, v) = (unit(b), unit(c));
        let omega = dot(u, v).clamp(-1.0, 1.0).acos();
        prop_assume!(omega < 3.1);
        let n = 4000;
        let sampled = (0..=n).map(|i| {
            let t = i as f64 / n as f64;
            let (wa, wb) = if omega < 1e-12 { (1.0 - t, t) } else {
                (((1.0 - t) * omega).sin() / omega.sin(), (t * omega).sin() / omega.sin())
            };
            let s = [0, 1, 2].map(|k| wa * u[k] + wb * v[k]);
            let q = (s[1].atan2(s[0]).to_degrees(), s[2].atan2((s[0] * s[0] + s[1] * s[1]).sqrt()).to_degrees());
            haversine(a, q)
        }).fold(f64::INFINITY, f64::min);
        let step = omega / n as f64 * EARTH_RADIUS_METERS;
        // Rounding grows with the distance: a few ulp of 2e7 m is a few micrometres.
        let eps = 1e-6 + 1e-12 * sampled;
        prop_assert!(ours <= sampled + eps, "{} > sampled {}", ours, sampled);
        prop_assert!(ours >= sampled - step - eps, "{} < sampled {} - step {}", ours, sampled, step);
    }

    /// contains => covers => intersects; within is contains seen from the other side; distance is
    /// symmetric and zero when the values intersect.
    #[test]
    fn laws((_, r1) in ring(), (_, r2) in ring(), p in center(), l in prop::collection::vec(center(), 2..4)) {
        let shapes = [geog(&polygon(&[r1])), geog(&polygon(&[r2])), geog(&point(p.0, p.1)), geog(&line(&l))];
        for a in &shapes {
            for b in &shapes {
                prop_assert_eq!(a.intersects(b), b.intersects(a));
                if a.contains(b) { prop_assert!(a.covers(b)); }
                if a.covers(b) { prop_assert!(a.intersects(b)); }
                prop_assert_eq!(a.within(b), b.contains(a));
                let (d1, d2) = (a.distance(b), b.distance(a));
                prop_assert!((d1 - d2).abs() <= 1e-6, "{} vs {}", d1, d2);
                // Meeting values are 0 apart; the converse holds only up to rounding of the
                // distance (a point an ulp off a line is `0.0` metres away but does not meet it).
                if a.intersects(b) {
                    prop_assert_eq!(d1, 0.0);
                }
                prop_assert!(!d1.is_nan());
            }
        }
    }
}
