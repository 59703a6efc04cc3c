//! One geography value on the unit sphere, and the exact predicates between two of them.

use geoberg_geostats::{BBox, geography_bbox_of_wkb};

use crate::error::GeographyError;
use crate::sphere::{
    Crossing, V3, add, angle, crossing, distance_arc_arc, distance_to_arc, from_lon_lat, normalize,
    on_arc,
};
use crate::spherical_loop::{Loop, Side};
use crate::wkb_read::read_parts;

/// Mean Earth radius in metres that S2, s2geography and spherely use for distances: 6371.01 km
/// (Yoder 1995). S2's `S2Earth::RadiusMeters()` returns `6371010.0`; s2geography's distance
/// kernel multiplies `s2_distance` by it, and spherely's `EARTH_RADIUS_METERS` is defined as it
/// (`src/constants.hpp`).
pub const EARTH_RADIUS_METERS: f64 = 6_371_010.0;

/// A polygon: normalized loops; a point is inside when an odd number of them hold it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Polygon {
    pub(crate) loops: Vec<Loop>,
}

impl Polygon {
    fn side(&self, p: V3) -> Side {
        let mut inside = false;
        for l in &self.loops {
            match l.side(p) {
                Side::Boundary => return Side::Boundary,
                Side::Inside => inside = !inside,
                Side::Outside => {}
            }
        }
        if inside { Side::Inside } else { Side::Outside }
    }

    fn covers_point(&self, p: V3) -> bool {
        self.side(p) != Side::Outside
    }

    fn edges(&self) -> impl Iterator<Item = (V3, V3)> + '_ {
        self.loops.iter().flat_map(|l| {
            let n = l.vertices.len();
            (0..n).map(move |i| (l.vertices[i], l.vertices[(i + 1) % n]))
        })
    }

    /// Whether the arc `ab` lies in the closed polygon.
    fn covers_arc(&self, a: V3, b: V3) -> bool {
        if !self.covers_point(a) || !self.covers_point(b) {
            return false;
        }
        // The arc may leave only by crossing the boundary, or by touching it where a boundary
        // vertex lies on the arc: then every piece between such vertices must be covered.
        let mut cuts = vec![a, b];
        for (c, d) in self.edges() {
            match crossing(a, b, c, d) {
                Crossing::Proper => return false,
                Crossing::Touch => {
                    for v in [c, d] {
                        if on_arc(v, a, b) {
                            cuts.push(v);
                        }
                    }
                }
                Crossing::None => {}
            }
        }
        if cuts.len() == 2 {
            return true;
        }
        cuts.sort_by(|p, q| angle(a, *p).total_cmp(&angle(a, *q)));
        cuts.windows(2).all(|w| match normalize(add(w[0], w[1])) {
            Some(mid) if w[0] != w[1] => self.covers_point(mid),
            _ => true,
        })
    }
}

/// A geography value: points, lines (great-circle edges) and polygons, possibly several of each
/// (Multi* and GeometryCollection), as unit vectors.
///
/// Built from WKB by [`Geography::from_wkb`]; Z and M are ignored. Polygon rings are read as
/// s2geography reads WKB (each ring bounds the smaller of its two sides; nested rings are holes),
/// so ring orientation does not matter. Repeated consecutive vertices are dropped, and NaN or
/// infinite vertices skipped. Boundaries are closed: a point on a polygon's edge or a line's
/// vertex intersects it.
#[derive(Debug, Clone, PartialEq)]
pub struct Geography {
    pub(crate) points: Vec<V3>,
    pub(crate) lines: Vec<Vec<V3>>,
    pub(crate) polygons: Vec<Polygon>,
    bbox: Option<BBox>,
}

fn vector(x: f64, y: f64) -> V3 {
    from_lon_lat(x, y.clamp(-90.0, 90.0))
}

impl Geography {
    /// Parses an ISO WKB or EWKB value.
    ///
    /// ```
    /// use geoberg_geography::Geography;
    /// // POINT (175 5), little-endian ISO WKB
    /// let mut wkb = vec![1, 1, 0, 0, 0];
    /// wkb.extend(175f64.to_le_bytes());
    /// wkb.extend(5f64.to_le_bytes());
    /// let g = Geography::from_wkb(&wkb).unwrap();
    /// assert!(!g.is_empty());
    /// ```
    pub fn from_wkb(wkb: &[u8]) -> Result<Geography, GeographyError> {
        let parts = read_parts(wkb)?;
        let mut lines = Vec::new();
        let mut points: Vec<V3> = parts.points.iter().map(|&(x, y)| vector(x, y)).collect();
        for l in &parts.lines {
            let mut v: Vec<V3> = Vec::with_capacity(l.len());
            for &(x, y) in l {
                let p = vector(x, y);
                if v.last() != Some(&p) {
                    v.push(p);
                }
            }
            match v.len() {
                0 => {}
                1 => points.push(v[0]),
                _ => lines.push(v),
            }
        }
        let mut polygons = Vec::new();
        for rings in &parts.polygons {
            let loops: Vec<Loop> = rings
                .iter()
                .filter_map(|r| {
                    let clamped: Vec<(f64, f64)> =
                        r.iter().map(|&(x, y)| (x, y.clamp(-90.0, 90.0))).collect();
                    Loop::from_ring(&clamped)
                })
                .collect();
            if !loops.is_empty() {
                polygons.push(Polygon { loops });
            }
        }
        let bbox = geography_bbox_of_wkb(wkb)?;
        Ok(Geography {
            points,
            lines,
            polygons,
            bbox,
        })
    }

    /// The lines and polygons of this value (its bounds kept: they still cover what is left).
    pub(crate) fn without_points(&self) -> Geography {
        Geography {
            points: Vec::new(),
            lines: self.lines.clone(),
            polygons: self.polygons.clone(),
            bbox: self.bbox,
        }
    }

    /// No point, line or polygon (an empty geometry, or only degenerate parts).
    pub fn is_empty(&self) -> bool {
        self.points.is_empty() && self.lines.is_empty() && self.polygons.is_empty()
    }

    /// The value's bounds on the sphere (`geoberg_geostats::geography_bbox_of_wkb`).
    pub fn bbox(&self) -> Option<BBox> {
        self.bbox
    }

    fn line_edges(&self) -> impl Iterator<Item = (V3, V3)> + '_ {
        self.lines
            .iter()
            .flat_map(|l| l.windows(2).map(|w| (w[0], w[1])))
    }

    /// Whether the boxes rule out any contact (exact bounds, so never wrong).
    fn boxes_disjoint(&self, other: &Geography) -> bool {
        match (self.bbox, other.bbox) {
            (Some(a), Some(b)) => !boxes_meet(&a, &b),
            _ => false,
        }
    }

    /// Whether the point `p` lies in this value (closed).
    fn covers_point(&self, p: V3) -> bool {
        self.points.contains(&p)
            || self.line_edges().any(|(a, b)| on_arc(p, a, b))
            || self.polygons.iter().any(|g| g.covers_point(p))
    }

    /// `ST_Intersects`: the values share a point (boundaries included).
    pub fn intersects(&self, other: &Geography) -> bool {
        if self.is_empty() || other.is_empty() || self.boxes_disjoint(other) {
            return false;
        }
        if self.points.iter().any(|&p| other.covers_point(p))
            || other.points.iter().any(|&p| self.covers_point(p))
        {
            return true;
        }
        let edges_a: Vec<(V3, V3)> = self.line_edges().chain(self.polygon_edges()).collect();
        let edges_b: Vec<(V3, V3)> = other.line_edges().chain(other.polygon_edges()).collect();
        for &(a, b) in &edges_a {
            for &(c, d) in &edges_b {
                if crossing(a, b, c, d) != Crossing::None {
                    return true;
                }
            }
        }
        // No boundaries meet: a part of one lies inside a polygon of the other entirely, which
        // one vertex of each line or ring shows.
        let inside = |g: &Geography, h: &Geography| {
            g.lines
                .iter()
                .map(|l| l[0])
                .chain(
                    g.polygons
                        .iter()
                        .flat_map(|p| p.loops.iter().map(|l| l.vertices[0])),
                )
                .any(|v| h.polygons.iter().any(|p| p.covers_point(v)))
        };
        inside(self, other) || inside(other, self)
    }

    fn polygon_edges(&self) -> impl Iterator<Item = (V3, V3)> + '_ {
        self.polygons.iter().flat_map(|p| p.edges())
    }

    /// Whether the arc `ab` lies in this value (on one of its lines' edges or in one polygon).
    fn covers_arc(&self, a: V3, b: V3) -> bool {
        self.polygons.iter().any(|p| p.covers_arc(a, b))
            || self
                .line_edges()
                .any(|(c, d)| on_arc(a, c, d) && on_arc(b, c, d))
    }

    /// `ST_Covers`: every point of `other` lies in this value (boundaries included); false when
    /// `other` is empty.
    ///
    /// An edge of `other` must lie within one polygon or along one edge of this value: an edge
    /// that is covered only by several parts together (two polygons sharing an edge) is not
    /// recognized.
    pub fn covers(&self, other: &Geography) -> bool {
        if other.is_empty() || self.is_empty() || self.boxes_disjoint(other) {
            return false;
        }
        if !other.points.iter().all(|&p| self.covers_point(p)) {
            return false;
        }
        if !other.line_edges().all(|(a, b)| self.covers_arc(a, b)) {
            return false;
        }
        other.polygons.iter().all(|q| {
            q.edges().all(|(a, b)| self.covers_arc(a, b))
                // Nothing of this value's boundary (a hole) may lie inside the other polygon.
                && !self.polygon_edges().any(|(a, _)| q.side(a) == Side::Inside)
                && !self.polygons.is_empty()
        })
    }

    /// Whether some point of `other` lies in this value's interior (polygon interiors, line
    /// interiors and end points, points).
    fn interiors_meet(&self, other: &Geography) -> bool {
        let witnesses = other
            .points
            .iter()
            .copied()
            .chain(other.lines.iter().flat_map(|l| {
                l.iter()
                    .copied()
                    .chain(l.windows(2).filter_map(|w| normalize(add(w[0], w[1]))))
            }))
            .chain(
                other
                    .polygons
                    .iter()
                    .flat_map(|p| p.loops.iter().map(|l| l.interior_point())),
            );
        for w in witnesses {
            if self.polygons.iter().any(|p| p.side(w) == Side::Inside)
                || self.points.contains(&w)
                || self.line_edges().any(|(a, b)| on_arc(w, a, b))
            {
                return true;
            }
        }
        false
    }

    /// `ST_Contains`: this value covers `other` and their interiors meet (so a polygon does not
    /// contain a line along its boundary).
    pub fn contains(&self, other: &Geography) -> bool {
        self.covers(other) && self.interiors_meet(other)
    }

    /// `ST_Within`: `other` contains this value.
    pub fn within(&self, other: &Geography) -> bool {
        other.contains(self)
    }

    /// Great-circle distance in radians on the unit sphere; `f64::INFINITY` when either value is
    /// empty (as spherely returns).
    pub fn distance_radians(&self, other: &Geography) -> f64 {
        if self.is_empty() || other.is_empty() {
            return f64::INFINITY;
        }
        if self.intersects(other) {
            return 0.0;
        }
        let edges =
            |g: &Geography| -> Vec<(V3, V3)> { g.line_edges().chain(g.polygon_edges()).collect() };
        let (ea, eb) = (edges(self), edges(other));
        let mut best = f64::INFINITY;
        for &p in &self.points {
            for &q in &other.points {
                best = best.min(angle(p, q));
            }
            for &(c, d) in &eb {
                best = best.min(distance_to_arc(p, c, d));
            }
        }
        for &q in &other.points {
            for &(a, b) in &ea {
                best = best.min(distance_to_arc(q, a, b));
            }
        }
        for &(a, b) in &ea {
            for &(c, d) in &eb {
                best = best.min(distance_arc_arc(a, b, c, d));
            }
        }
        best
    }

    /// `ST_Distance` in metres on the sphere of radius [`EARTH_RADIUS_METERS`].
    pub fn distance(&self, other: &Geography) -> f64 {
        self.distance_radians(other) * EARTH_RADIUS_METERS
    }

    /// `ST_DWithin`: the distance is at most `metres`.
    pub fn dwithin(&self, other: &Geography, metres: f64) -> bool {
        self.distance(other) <= metres
    }
}

/// Whether two geography boxes (X may wrap, ±180 one meridian, a box at a pole spans every
/// longitude) share a point.
pub(crate) fn boxes_meet(a: &BBox, b: &BBox) -> bool {
    if a.max_y < b.min_y || b.max_y < a.min_y {
        return false;
    }
    let arc = |m: &BBox| {
        if m.max_y >= 90.0 || m.min_y <= -90.0 {
            // A box reaching a pole holds the point where every meridian meets.
            (-180.0, 180.0)
        } else if m.min_x <= m.max_x {
            (m.min_x, m.max_x)
        } else {
            (m.min_x, m.max_x + 360.0)
        }
    };
    let ((a0, a1), (b0, b1)) = (arc(a), arc(b));
    [-360.0, 0.0, 360.0]
        .iter()
        .any(|s| a0 <= b1 + s && b0 + s <= a1)
}
