//! Polygon rings on the sphere, read as s2geography reads WKB without orientation.
//!
//! s2geography's `PolygonConstructor` (`constructor.h`, used by spherely's `from_wkb` and
//! `from_wkt` with `oriented=False`, the default) calls `S2Loop::Normalize()` on every ring: a
//! ring means the smaller of the two regions it separates, whichever way its vertices run. The
//! rings are then nested (`S2Polygon::InitNested`), so a point is in the polygon when an odd
//! number of rings hold it. This module does the same: each [`Loop`] is oriented so that its
//! region (area at most 2π steradians, half the sphere) is on the left of its edges.
//!
//! Point in loop: the boundary is tested exactly first (point on an edge). Otherwise the parity
//! of proper crossings along a path from a reference point of known side decides, with every
//! crossing decided by exact orientation signs. The reference point sits just left of an edge,
//! and is accepted only after the short arc from its mirror image on the right crosses that edge
//! and nothing else, so its side is known by construction, not by arithmetic.

use crate::sphere::{
    Crossing, V3, add, angle, cross, crossing, dot, from_lon_lat, normalize, on_arc, scale,
};

/// Where a point is relative to a closed region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Inside,
    Boundary,
    Outside,
}

/// One ring, normalized: its region is on the left of the edges and covers at most half the
/// sphere.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Loop {
    /// Vertices without the closing repeat and without consecutive duplicates.
    pub(crate) vertices: Vec<V3>,
    /// A point inside the region, off every edge.
    reference: V3,
}

/// Fixed directions tried as the middle of a crossing path (spread over the sphere).
const WAYPOINTS: [V3; 8] = [
    [
        0.577_350_269_189_625_8,
        0.577_350_269_189_625_8,
        0.577_350_269_189_625_8,
    ],
    [
        -0.577_350_269_189_625_8,
        0.577_350_269_189_625_8,
        -0.577_350_269_189_625_8,
    ],
    [
        0.577_350_269_189_625_8,
        -0.577_350_269_189_625_8,
        -0.577_350_269_189_625_8,
    ],
    [
        -0.577_350_269_189_625_8,
        -0.577_350_269_189_625_8,
        0.577_350_269_189_625_8,
    ],
    [
        0.267_261_241_912_424_4,
        0.534_522_483_824_848_8,
        0.801_783_725_737_273_2,
    ],
    [
        -0.801_783_725_737_273_2,
        0.267_261_241_912_424_4,
        -0.534_522_483_824_848_8,
    ],
    [
        0.534_522_483_824_848_8,
        -0.801_783_725_737_273_2,
        0.267_261_241_912_424_4,
    ],
    [
        -0.267_261_241_912_424_4,
        -0.534_522_483_824_848_8,
        -0.801_783_725_737_273_2,
    ],
];

/// Signed area of the triangle (o, a, b), positive counter-clockwise (Van Oosterom and
/// Strackee: `tan(E / 2) = det(o, a, b) / (1 + o.a + o.b + a.b)`).
fn fan_triangle(o: V3, a: V3, b: V3) -> f64 {
    let det = dot(o, cross(a, b));
    let den = 1.0 + dot(o, a) + dot(o, b) + dot(a, b);
    2.0 * det.atan2(den)
}

/// Apexes tried for the fan of triangles that gives a ring's area: the South Pole first (the fan
/// `geostats` uses to pick a ring's side, so bounds and predicates agree on it), then the other
/// axis points. A triangle whose apex is antipodal to one of its vertices has no defined area
/// (a ring with a vertex at the North Pole, as a window reaching latitude 90 has, gave
/// `atan2` of two rounding errors), so the apex is the first one far from every vertex's
/// antipode, else the farthest.
const FAN_APEXES: [V3; 6] = [
    [0.0, 0.0, -1.0],
    [0.0, 0.0, 1.0],
    [1.0, 0.0, 0.0],
    [-1.0, 0.0, 0.0],
    [0.0, 1.0, 0.0],
    [0.0, -1.0, 0.0],
];

/// The ring's area in [0, 4π) on the left of its edges.
fn left_area(vertices: &[V3]) -> f64 {
    // 1 + o.v is 0 at the antipode; 1e-6 is about 0.08 degrees away from it.
    let clearance = |o: &V3| {
        vertices
            .iter()
            .map(|v| 1.0 + dot(*o, *v))
            .fold(f64::INFINITY, f64::min)
    };
    let apex = FAN_APEXES
        .iter()
        .find(|o| clearance(o) > 1e-6)
        .or_else(|| {
            FAN_APEXES
                .iter()
                .max_by(|a, b| clearance(a).total_cmp(&clearance(b)))
        })
        .copied()
        .unwrap_or(FAN_APEXES[0]);
    let n = vertices.len();
    (0..n)
        .map(|i| fan_triangle(apex, vertices[i], vertices[(i + 1) % n]))
        .sum::<f64>()
        .rem_euclid(4.0 * std::f64::consts::PI)
}

impl Loop {
    /// The normalized loop of a ring given as lon/lat degrees; `None` when fewer than three
    /// distinct vertices remain (no area, as S2 would refuse it).
    pub(crate) fn from_ring(ring: &[(f64, f64)]) -> Option<Loop> {
        let mut vertices: Vec<V3> = Vec::with_capacity(ring.len());
        for &(x, y) in ring {
            let v = from_lon_lat(x, y);
            if vertices.last() != Some(&v) {
                vertices.push(v);
            }
        }
        while vertices.len() > 1 && vertices.first() == vertices.last() {
            vertices.pop();
        }
        if vertices.len() < 3 {
            return None;
        }
        if left_area(&vertices) > 2.0 * std::f64::consts::PI {
            vertices.reverse();
        }
        let reference = reference_point(&vertices)?;
        Some(Loop {
            vertices,
            reference,
        })
    }

    fn edges(&self) -> impl Iterator<Item = (V3, V3)> + '_ {
        let n = self.vertices.len();
        (0..n).map(move |i| (self.vertices[i], self.vertices[(i + 1) % n]))
    }

    /// Whether `p` is on an edge of the loop.
    pub(crate) fn on_boundary(&self, p: V3) -> bool {
        self.edges().any(|(a, b)| on_arc(p, a, b))
    }

    /// Where `p` is relative to the loop's region.
    pub(crate) fn side(&self, p: V3) -> Side {
        if self.on_boundary(p) {
            return Side::Boundary;
        }
        if p == self.reference {
            return Side::Inside;
        }
        // Paths from the reference to p: direct when not too long, else through a waypoint.
        let direct = (dot(self.reference, p) > -0.5).then_some(None);
        let via = WAYPOINTS.iter().filter_map(|&w| {
            (dot(self.reference, w) > -0.5 && dot(w, p) > -0.5).then_some(Some(w))
        });
        for path in direct.into_iter().chain(via) {
            let parity = match path {
                None => self.crossings(self.reference, p),
                Some(w) => self
                    .crossings(self.reference, w)
                    .zip(self.crossings(w, p))
                    .map(|(a, b)| a ^ b),
            };
            if let Some(odd) = parity {
                return if odd { Side::Outside } else { Side::Inside };
            }
        }
        // Every path touched a vertex exactly: vanishingly unlikely; decide by the nearest edge's
        // side, the best remaining evidence.
        let nearest = self
            .edges()
            .min_by(|e, f| {
                let d = |(a, b): (V3, V3)| angle(p, a).min(angle(p, b));
                d(*e).total_cmp(&d(*f))
            })
            .unwrap_or((p, p));
        if crate::sphere::sign(nearest.0, nearest.1, p) > 0 {
            Side::Inside
        } else {
            Side::Outside
        }
    }

    /// Parity of proper crossings of the arc `x -> y` with the edges; `None` when the arc touches
    /// an edge (the count would be ambiguous) and another path must be tried.
    fn crossings(&self, x: V3, y: V3) -> Option<bool> {
        let mut odd = false;
        for (a, b) in self.edges() {
            match crossing(x, y, a, b) {
                Crossing::Proper => odd = !odd,
                Crossing::Touch => return None,
                Crossing::None => {}
            }
        }
        Some(odd)
    }

    /// A point of the region, used as a witness of its interior.
    pub(crate) fn interior_point(&self) -> V3 {
        self.reference
    }

    /// The area of the loop's region in steradians, in [0, 2π].
    ///
    /// A fan of triangles from the first vertex, so that a small loop sums small triangles
    /// (relative accuracy, as S2's `S2Loop::GetSurfaceIntegral` gets by re-centring its fan),
    /// unlike the fan from a pole that picks the side; a loop with a vertex near the first
    /// one's antipode falls back to that fan. The sum is exact modulo 4π; the region is the
    /// normalized one, at most half the sphere, so a sum just below 4π is a rounding of 0.
    pub(crate) fn area(&self) -> f64 {
        let v = &self.vertices;
        let o = v[0];
        let clear = v.iter().all(|p| 1.0 + dot(o, *p) > 1e-6);
        let sum = if clear {
            (1..v.len() - 1)
                .map(|i| small_fan_triangle(o, v[i], v[i + 1]))
                .sum::<f64>()
        } else {
            left_area(v)
        };
        let area = sum.rem_euclid(4.0 * std::f64::consts::PI);
        if area > 3.0 * std::f64::consts::PI {
            0.0
        } else {
            area
        }
    }

    /// The length of the loop's boundary in radians (every edge, the closing one included).
    pub(crate) fn perimeter(&self) -> f64 {
        self.edges().map(|(a, b)| angle(a, b)).sum()
    }
}

/// [`fan_triangle`] with the determinant taken over the differences `a - o`, `b - o`: for a
/// triangle metres wide the plain triple product loses most of its digits to cancellation,
/// the differences keep them (`det(o, a, b) = det(o, a - o, b - o)`).
fn small_fan_triangle(o: V3, a: V3, b: V3) -> f64 {
    let da = [a[0] - o[0], a[1] - o[1], a[2] - o[2]];
    let db = [b[0] - o[0], b[1] - o[1], b[2] - o[2]];
    let det = dot(o, cross(da, db));
    let den = 1.0 + dot(o, a) + dot(o, b) + dot(a, b);
    2.0 * det.atan2(den)
}

/// A point just left of some edge, with nothing else between: inside the region.
fn reference_point(v: &[V3]) -> Option<V3> {
    let n = v.len();
    for i in 0..n {
        let (a, b) = (v[i], v[(i + 1) % n]);
        if dot(a, b) < -0.999 {
            continue;
        }
        let (Some(m), Some(left)) = (normalize(add(a, b)), normalize(cross(a, b))) else {
            continue;
        };
        let length = angle(a, b);
        let mut delta = (length / 4.0).min(1e-7);
        for _ in 0..3 {
            let (Some(inside), Some(outside)) = (
                normalize(add(m, scale(left, delta))),
                normalize(add(m, scale(left, -delta))),
            ) else {
                break;
            };
            let crosses_only_this_edge = crossing(outside, inside, a, b) == Crossing::Proper
                && (0..n)
                    .filter(|&j| j != i)
                    .all(|j| crossing(outside, inside, v[j], v[(j + 1) % n]) == Crossing::None);
            if crosses_only_this_edge {
                return Some(inside);
            }
            delta /= 1000.0;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(cw: bool) -> Loop {
        let mut r = vec![
            (0.0, 0.0),
            (10.0, 0.0),
            (10.0, 10.0),
            (0.0, 10.0),
            (0.0, 0.0),
        ];
        if cw {
            r.reverse();
        }
        Loop::from_ring(&r).unwrap()
    }

    #[test]
    fn orientation_does_not_matter() {
        for cw in [false, true] {
            let l = square(cw);
            assert_eq!(l.side(from_lon_lat(5.0, 5.0)), Side::Inside);
            assert_eq!(l.side(from_lon_lat(15.0, 5.0)), Side::Outside);
            assert_eq!(l.side(from_lon_lat(-175.0, -5.0)), Side::Outside);
            assert_eq!(l.side(from_lon_lat(10.0, 0.0)), Side::Boundary);
            assert_eq!(l.side(from_lon_lat(0.0, 90.0)), Side::Outside);
        }
    }

    #[test]
    fn a_vertex_at_a_pole_keeps_the_small_side() {
        // The fan from the South Pole has no defined area with a vertex at the North Pole.
        for apex_lon in [0.0, 10.0, 45.0, -170.0] {
            let l = Loop::from_ring(&[(-10.0, 85.0), (10.0, 85.0), (apex_lon, 90.0)]).unwrap();
            assert_eq!(l.side(from_lon_lat(0.0, 89.9)), Side::Inside, "{apex_lon}");
            assert_eq!(l.side(from_lon_lat(0.0, 87.0)), Side::Inside, "{apex_lon}");
            assert_eq!(l.side(from_lon_lat(0.0, 84.0)), Side::Outside, "{apex_lon}");
            assert_eq!(
                l.side(from_lon_lat(180.0, 80.0)),
                Side::Outside,
                "{apex_lon}"
            );
            let s = Loop::from_ring(&[(10.0, -85.0), (-10.0, -85.0), (apex_lon, -90.0)]).unwrap();
            assert_eq!(s.side(from_lon_lat(0.0, -89.9)), Side::Inside, "{apex_lon}");
            assert_eq!(s.side(from_lon_lat(0.0, 0.0)), Side::Outside, "{apex_lon}");
        }
    }

    #[test]
    fn ring_round_a_pole() {
        let r: Vec<(f64, f64)> = (0..=8).map(|i| (i as f64 * 45.0 - 180.0, 80.0)).collect();
        let l = Loop::from_ring(&r).unwrap();
        assert_eq!(l.side(from_lon_lat(0.0, 90.0)), Side::Inside);
        assert_eq!(l.side(from_lon_lat(0.0, -90.0)), Side::Outside);
        assert_eq!(l.side(from_lon_lat(33.0, 85.0)), Side::Inside);
        assert_eq!(l.side(from_lon_lat(33.0, 70.0)), Side::Outside);
    }
}
