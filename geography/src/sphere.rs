//! Points on the unit sphere and the exact tests every predicate is built from.
//!
//! The one predicate that must never be wrong is the orientation of three points, `sign(a, b, c)`
//! = the sign of the triple product `(a x b) . c` (S2's `s2pred::Sign`). It is computed with
//! `robust::orient3d(a, b, c, origin)`: Shewchuk's adaptive-precision determinant, exact for the
//! `f64` vectors given. Everything topological (edge crossings, point on edge, crossing parity
//! for point-in-polygon) uses only these signs, so it is consistent: two edges that cross are seen
//! to cross from either side. Only distances and the choice of a polygon's side (by area) use
//! ordinary floating point.

use robust::{Coord3D, orient3d};

/// A point on the unit sphere.
pub(crate) type V3 = [f64; 3];

/// The unit vector of a longitude/latitude in degrees, as S2's `S2LatLng::ToPoint` computes it,
/// except at latitude ±90: every longitude there is the pole itself, exactly `(0, 0, ±1)`
/// (`cos(90°)` is 6e-17 in `f64`, which would make `POINT (0 90)` and `POINT (10 90)` two points
/// 1e-17 apart, and a window's polar vertex miss a row at the pole).
pub(crate) fn from_lon_lat(lon: f64, lat: f64) -> V3 {
    if lat.abs() == 90.0 {
        return [0.0, 0.0, lat.signum()];
    }
    let (sl, cl) = lon.to_radians().sin_cos();
    let (sp, cp) = lat.to_radians().sin_cos();
    [cp * cl, cp * sl, sp]
}

pub(crate) fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub(crate) fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(crate) fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub(crate) fn scale(a: V3, k: f64) -> V3 {
    [a[0] * k, a[1] * k, a[2] * k]
}

pub(crate) fn norm(a: V3) -> f64 {
    dot(a, a).sqrt()
}

/// `a / |a|`; `None` for a (nearly) zero vector.
pub(crate) fn normalize(a: V3) -> Option<V3> {
    let n = norm(a);
    (n > 1e-300).then(|| scale(a, 1.0 / n))
}

fn c3(v: V3) -> Coord3D<f64> {
    Coord3D {
        x: v[0],
        y: v[1],
        z: v[2],
    }
}

/// Exact sign of `(a x b) . c`: +1 when a, b, c turn counter-clockwise seen from outside the
/// sphere, -1 clockwise, 0 when the three lie on one great circle (exactly, for these `f64`s).
pub(crate) fn sign(a: V3, b: V3, c: V3) -> i8 {
    let d = orient3d(c3(a), c3(b), c3(c), c3([0.0; 3]));
    if d > 0.0 {
        1
    } else if d < 0.0 {
        -1
    } else {
        0
    }
}

/// Angle between two unit vectors, in radians (accurate for small and large angles).
pub(crate) fn angle(a: V3, b: V3) -> f64 {
    norm(cross(a, b)).atan2(dot(a, b))
}

/// Whether `p` lies on the minor arc from `a` to `b`, end points included.
///
/// On the great circle is decided exactly (`sign == 0`); between the end points by two dot
/// products, which can only be wrong by rounding for a point within an ulp of an end point.
pub(crate) fn on_arc(p: V3, a: V3, b: V3) -> bool {
    if p == a || p == b {
        return true;
    }
    if a == b || sign(a, b, p) != 0 {
        return false;
    }
    let n = cross(a, b);
    dot(cross(a, p), n) >= 0.0 && dot(cross(p, b), n) >= 0.0
}

/// How two minor arcs meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Crossing {
    /// They cross at a point interior to both.
    Proper,
    /// They share a point, but some end point lies on the other arc (touching, shared vertices,
    /// overlapping collinear arcs).
    Touch,
    /// No common point.
    None,
}

/// How the arcs `ab` and `cd` meet (S2's `CrossingSign`, with degenerate cases resolved by exact
/// point-on-arc tests instead of symbolic perturbation: touching counts as meeting).
pub(crate) fn crossing(a: V3, b: V3, c: V3, d: V3) -> Crossing {
    let acb = sign(a, c, b);
    let bda = sign(a, b, d);
    let cbd = sign(c, b, d);
    let dac = sign(c, d, a);
    if acb != 0 && acb == bda && bda == cbd && cbd == dac {
        return Crossing::Proper;
    }
    if acb != 0 && bda != 0 && cbd != 0 && dac != 0 {
        return Crossing::None;
    }
    // A zero sign puts an end point on the other arc's great circle; a minor arc meets another
    // great circle in one point only, so the arcs meet exactly when an end point is on the arc.
    if on_arc(c, a, b) || on_arc(d, a, b) || on_arc(a, c, d) || on_arc(b, c, d) {
        Crossing::Touch
    } else {
        Crossing::None
    }
}

/// Angular distance in radians from `p` to the minor arc `ab`.
pub(crate) fn distance_to_arc(p: V3, a: V3, b: V3) -> f64 {
    let ends = angle(p, a).min(angle(p, b));
    let Some(n) = normalize(cross(a, b)) else {
        return ends;
    };
    // The closest point of the great circle is p's projection onto its plane.
    let h = dot(p, n);
    let proj = [p[0] - h * n[0], p[1] - h * n[1], p[2] - h * n[2]];
    if dot(cross(a, proj), n) >= 0.0 && dot(cross(proj, b), n) >= 0.0 {
        h.abs().atan2(norm(proj)).min(ends)
    } else {
        ends
    }
}

/// Angular distance between two minor arcs that do not meet: attained at an end point.
pub(crate) fn distance_arc_arc(a: V3, b: V3, c: V3, d: V3) -> f64 {
    distance_to_arc(a, c, d)
        .min(distance_to_arc(b, c, d))
        .min(distance_to_arc(c, a, b))
        .min(distance_to_arc(d, a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_is_counter_clockwise_positive() {
        let (x, y, z) = ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]);
        assert_eq!(sign(x, y, z), 1);
        assert_eq!(sign(y, x, z), -1);
        // Three points of the equator: exactly on one great circle.
        let e = from_lon_lat(37.0, 0.0);
        assert_eq!(sign(x, y, e), 0);
    }

    #[test]
    fn crossings() {
        let p = |x, y| from_lon_lat(x, y);
        // A meridian arc crossing the equator arc.
        assert_eq!(
            crossing(p(0.0, 0.0), p(10.0, 0.0), p(5.0, -1.0), p(5.0, 1.0)),
            Crossing::Proper
        );
        // Shared end point.
        assert_eq!(
            crossing(p(0.0, 0.0), p(10.0, 0.0), p(10.0, 0.0), p(10.0, 5.0)),
            Crossing::Touch
        );
        // On the same great circle, apart.
        assert_eq!(
            crossing(p(0.0, 0.0), p(10.0, 0.0), p(20.0, 0.0), p(30.0, 0.0)),
            Crossing::None
        );
        // Antipodal sides: the great circles cross, the arcs do not.
        assert_eq!(
            crossing(p(0.0, 0.0), p(10.0, 0.0), p(185.0, -1.0), p(185.0, 1.0)),
            Crossing::None
        );
    }

    #[test]
    fn distances() {
        let p = |x, y| from_lon_lat(x, y);
        let d = distance_to_arc(p(5.0, 3.0), p(0.0, 0.0), p(10.0, 0.0));
        assert!((d.to_degrees() - 3.0).abs() < 1e-9, "{}", d.to_degrees());
        let d = distance_to_arc(p(15.0, 0.0), p(0.0, 0.0), p(10.0, 0.0));
        assert!((d.to_degrees() - 5.0).abs() < 1e-9);
    }
}
