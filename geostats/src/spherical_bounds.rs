//! Bounds of `geography` values, whose edges are great-circle arcs (the Iceberg spec's default
//! edge algorithm, `spherical`).
//!
//! The box of the vertices is not enough: the arc from (-90, 60) to (90, 60) passes over the
//! North Pole. Per edge, the latitude range is computed as S2's `S2LatLngRectBounder` does
//! (`s2latlng_rect_bounder.cc`): the great circle through A and B reaches its extreme latitudes
//! where it crosses the plane through its normal `N = (A - B) x (A + B)` and the Z axis; when the
//! edge crosses that plane, the extreme is `90° - lat(N)`, tightened by the latitude budget of the
//! edge's length and padded by S2's error bounds (a few `f64::EPSILON` radians) plus
//! [`MARGIN_DEG`]. Vertices enter the box exactly as given.
//!
//! Longitude: every chain (line string or ring) sweeps the shorter way between consecutive
//! vertices; the value's X range is the smallest interval covering its chains and points
//! ([`crate::lon_cover`]), wrapping the antimeridian (`min_x > max_x`) when that is narrower.
//! A line or ring that reaches a pole, and every polygon that contains one, spans every
//! longitude (S2's polar closure); a point at a pole is boxed as itself, as S2-based writers store
//! it, so a reader must treat a box reaching latitude ±90 as spanning every longitude.
//!
//! Polygons are read as s2geography reads WKB without orientation (`oriented = false`): each ring
//! is normalized to the side of smaller area (`S2Loop::Normalize`), and a point is inside when an
//! odd number of rings hold it (`S2Polygon::InitNested`). A ring's pole containment follows from
//! its winding number around the polar axis and its area (the fan of triangles from the South
//! Pole, each by Van Oosterom and Strackee's formula). Rings near the ambiguous cases (about half
//! the sphere, or an edge within rounding of a pole) give the whole latitude range, so the box
//! stays sound whichever way another implementation rounds.
//!
//! Input is cleaned as S2 cleans it: NaN and infinite vertices are skipped, latitudes are clamped
//! to [-90, 90], longitudes a few ulp past ±180 (Natural Earth has 180.00000000000006) are clamped
//! to ±180 and others are wrapped into [-180, 180].

use std::f64::consts::{FRAC_PI_2, PI};

use crate::bbox::BBox;
use crate::extent::ZMExtent;
use crate::lon_cover::{Arc, FULL, LonRange, smallest_cover};
use crate::wkb_scan::{CoordSink, Dims, Part, f64_at};

/// Degrees added to each latitude extreme that lies inside an edge (never to vertices): S2's
/// padding is 5 `f64::EPSILON` radians (6.4e-14°), the degree conversions add a few ulp more.
pub const MARGIN_DEG: f64 = 1e-13;

/// A cleaned vertex: degrees as given (after clamping) and its unit vector.
#[derive(Debug, Clone, Copy)]
struct Vertex {
    lon: f64,
    lat: f64,
    p: [f64; 3],
}

fn unit(lon: f64, lat: f64) -> [f64; 3] {
    let (sl, cl) = lon.to_radians().sin_cos();
    let (sp, cp) = lat.to_radians().sin_cos();
    [cp * cl, cp * sl, sp]
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

/// Longitude difference `b - a` taken the short way, in (-180, 180].
fn lon_delta(a: f64, b: f64) -> f64 {
    let d = b - a;
    if d > 180.0 {
        d - 360.0
    } else if d <= -180.0 {
        d + 360.0
    } else {
        d
    }
}

/// Cleans one coordinate pair; `None` when it cannot be placed on the sphere.
pub(crate) fn clean(x: f64, y: f64) -> Option<(f64, f64)> {
    if !(x.is_finite() && y.is_finite()) {
        return None;
    }
    let lat = y.clamp(-90.0, 90.0);
    let lon = if (-180.0..=180.0).contains(&x) {
        x
    } else if x.abs() <= 180.0 + 1e-9 {
        180f64.copysign(x)
    } else {
        let w = (x + 180.0).rem_euclid(360.0) - 180.0;
        if w == -180.0 && x > 0.0 { 180.0 } else { w }
    };
    Some((lon, lat))
}

/// Which poles a polygon may contain: parity per pole, plus "unknown" (treated as contained).
#[derive(Debug, Clone, Copy, Default)]
struct PoleParity {
    north: bool,
    south: bool,
    unknown: bool,
}

/// State of the chain (line string or ring) being read.
#[derive(Debug, Clone, Copy)]
struct Chain {
    ring: bool,
    first: Vertex,
    prev: Vertex,
    /// Unwrapped longitude of `prev` and the range the chain has swept, with the vertex
    /// longitudes (as given) at the two ends of that range.
    u: f64,
    umin: f64,
    umax: f64,
    lon_at_min: f64,
    lon_at_max: f64,
    /// Rings: the first and the last vertex off the poles, and the winding sum over them.
    first_off_pole: Option<f64>,
    prev_off_pole: Option<f64>,
    winding: f64,

    touches_north: bool,
    touches_south: bool,
    /// Distinct vertices seen (1, 2, or 3 meaning "at least 3").
    distinct: u8,
}

/// The spherical bounder of one value; reusable (its buffer of arcs stays allocated).
#[derive(Debug, Clone, Default)]
pub(crate) struct SphericalBounder {
    lat_min: f64,
    lat_max: f64,
    /// The first arc, kept inline: most values have one (a point, a line, a ring).
    first_arc: Option<Arc>,
    arcs: Vec<Arc>,
    full_lon: bool,
    chain: Option<Chain>,
    poles: Option<PoleParity>,
    /// Whether the next chain is a ring.
    pending_ring: bool,
    /// The unit vectors of the ring being read (for its area, when its poles are in question).
    ring: Vec<[f64; 3]>,
    seen: bool,
}

impl SphericalBounder {
    pub fn new() -> Self {
        SphericalBounder {
            lat_min: f64::INFINITY,
            lat_max: f64::NEG_INFINITY,
            ..Default::default()
        }
    }

    /// Forgets the previous value.
    pub fn reset(&mut self) {
        self.lat_min = f64::INFINITY;
        self.lat_max = f64::NEG_INFINITY;
        self.first_arc = None;
        self.arcs.clear();
        self.full_lon = false;
        self.chain = None;
        self.poles = None;
        self.ring.clear();
        self.seen = false;
    }

    fn push_arc(&mut self, a: Arc) {
        if self.first_arc.is_none() {
            self.first_arc = Some(a);
        } else {
            self.arcs.push(a);
        }
    }

    fn add_lat(&mut self, lo: f64, hi: f64) {
        self.lat_min = self.lat_min.min(lo);
        self.lat_max = self.lat_max.max(hi);
    }

    fn point(&mut self, x: f64, y: f64) {
        if let Some((lon, lat)) = clean(x, y) {
            self.seen = true;
            // A point is boxed as itself, also at a pole (where its longitude means nothing):
            // what S2-based writers store. Readers treat a box that reaches a pole as spanning
            // every longitude (`geoberg-pruning` does).
            self.add_lat(lat, lat);
            self.push_arc(Arc { lo: lon, hi: lon });
        }
    }

    fn begin_chain(&mut self, ring: bool) {
        self.end_chain();
        self.chain = None;
        self.ring.clear();
        // `ring` is remembered at the first vertex.
        self.pending_ring = ring;
    }

    fn vertex(&mut self, x: f64, y: f64) {
        let Some((lon, lat)) = clean(x, y) else {
            return;
        };
        self.seen = true;
        self.add_lat(lat, lat);
        let v = Vertex {
            lon,
            lat,
            p: unit(lon, lat),
        };
        let on_pole = lat.abs() == 90.0;
        if self.pending_ring {
            self.ring.push(v.p);
        }
        match self.chain.as_mut() {
            None => {
                self.chain = Some(Chain {
                    ring: self.pending_ring,
                    first: v,
                    prev: v,
                    u: lon,
                    umin: lon,
                    umax: lon,
                    lon_at_min: lon,
                    lon_at_max: lon,
                    first_off_pole: (!on_pole).then_some(lon),
                    prev_off_pole: (!on_pole).then_some(lon),
                    winding: 0.0,
                    touches_north: lat == 90.0,
                    touches_south: lat == -90.0,
                    distinct: 1,
                });
                if on_pole {
                    self.full_lon = true;
                }
            }
            Some(c) => {
                if c.prev.lon == lon && c.prev.lat == lat {
                    return; // repeated point: no edge
                }
                if c.distinct < 3 && !(c.first.lon == lon && c.first.lat == lat) {
                    c.distinct += 1;
                }
                self.edge(v);
            }
        }
    }

    /// The edge from the chain's previous vertex to `b`.
    fn edge(&mut self, b: Vertex) {
        let Some(mut c) = self.chain else { return };
        let a = c.prev;
        let on_pole = b.lat.abs() == 90.0;
        c.touches_north |= b.lat == 90.0;
        c.touches_south |= b.lat == -90.0;
        // Longitude sweep, the short way; nearly opposite meridians may pass either pole.
        let d = lon_delta(a.lon, b.lon);
        if d.abs() >= 180.0 - 1e-12 || a.lat.abs() == 90.0 || on_pole {
            self.full_lon = true;
        }
        c.u += d;
        if c.u < c.umin {
            (c.umin, c.lon_at_min) = (c.u, b.lon);
        }
        if c.u > c.umax {
            (c.umax, c.lon_at_max) = (c.u, b.lon);
        }
        if c.umax - c.umin >= 360.0 - 1e-9 {
            self.full_lon = true;
        }
        if c.ring && !on_pole {
            if let Some(p) = c.prev_off_pole {
                c.winding += lon_delta(p, b.lon);
            } else {
                c.first_off_pole = Some(b.lon);
            }
            c.prev_off_pole = Some(b.lon);
        }
        c.prev = b;
        self.chain = Some(c);
        self.edge_latitudes(a, b);
    }

    /// S2LatLngRectBounder's latitude range of the edge interior.
    fn edge_latitudes(&mut self, a: Vertex, b: Vertex) {
        const EPS: f64 = f64::EPSILON;
        let n = cross(sub(a.p, b.p), add(a.p, b.p));
        let n_norm = norm(n);
        if n_norm < 1.91346e-15 {
            if dot(a.p, b.p) < 0.0 {
                // Nearly antipodal: the edge could go any way round.
                self.full_lon = true;
                self.add_lat(-90.0, 90.0);
            }
            // Nearly identical: the vertices bound it.
            return;
        }
        let m = [n[1], -n[0], 0.0]; // n x (0, 0, 1)
        let (m_a, m_b) = (dot(m, a.p), dot(m, b.p));
        let m_error = 6.06638e-16 * n_norm + 6.83174e-31;
        if !(m_a * m_b < 0.0 || m_a.abs() <= m_error || m_b.abs() <= m_error) {
            return;
        }
        let max_lat =
            ((n[0] * n[0] + n[1] * n[1]).sqrt().atan2(n[2].abs()) + 3.0 * EPS).min(FRAC_PI_2);
        let (la, lb) = (a.lat.to_radians(), b.lat.to_radians());
        let lat_budget = 2.0 * (0.5 * norm(sub(a.p, b.p)) * max_lat.sin()).min(1.0).asin();
        let max_delta = 0.5 * (lat_budget - (la - lb).abs()) + EPS;
        let pad = |r: f64| r.to_degrees();
        if m_a <= m_error && m_b >= -m_error {
            let hi = max_lat.min(la.max(lb) + max_delta);
            let hi = (pad(hi) + MARGIN_DEG).min(90.0);
            if hi >= 90.0 {
                self.full_lon = true;
            }
            self.add_lat(hi, hi);
        }
        if m_b <= m_error && m_a >= -m_error {
            let lo = (-max_lat).max(la.min(lb) - max_delta);
            let lo = (pad(lo) - MARGIN_DEG).max(-90.0);
            if lo <= -90.0 {
                self.full_lon = true;
            }
            self.add_lat(lo, lo);
        }
    }

    fn end_chain(&mut self) {
        let Some(c) = self.chain else { return };
        if c.ring && (c.prev.lon != c.first.lon || c.prev.lat != c.first.lat) {
            // Close the ring.
            self.edge(c.first);
        }
        let Some(c) = self.chain.take() else { return };
        self.push_arc(Arc {
            lo: c.lon_at_min,
            hi: c.lon_at_max,
        });
        if c.ring && c.distinct >= 3 {
            self.ring_poles(&c);
        }
    }

    /// Which poles the normalized ring holds, folded into the polygon's parity.
    fn ring_poles(&mut self, c: &Chain) {
        let mut winding = c.winding;
        if let (Some(first), Some(last)) = (c.first_off_pole, c.prev_off_pole) {
            winding += lon_delta(last, first);
        }
        let turns = (winding / 360.0).round();
        // Not winding round the axis and inside a lune narrower than 180 degrees, the ring bounds
        // a pole-free disc inside that lune (the other side holds the lune's complement, and so
        // both poles): the disc is less than half the sphere and the ring holds no pole. The
        // common case, decided without the area.
        if turns == 0.0
            && (winding - 360.0 * turns).abs() <= 1e-6
            && c.umax - c.umin < 180.0 - 1e-9
            && !c.touches_north
            && !c.touches_south
        {
            self.poles.get_or_insert_with(PoleParity::default);
            return;
        }
        let n = self.ring.len();
        let fan_area: f64 = (0..n)
            .map(|i| fan_triangle(self.ring[i], self.ring[(i + 1) % n]))
            .sum();
        let parity = self.poles.get_or_insert_with(PoleParity::default);
        let area_left = fan_area.rem_euclid(4.0 * PI);
        let ambiguous = (winding - 360.0 * turns).abs() > 1e-6
            || turns.abs() > 1.0
            || (area_left - 2.0 * PI).abs() < 1e-8;
        if ambiguous {
            parity.unknown = true;
            return;
        }
        // The ring's left side holds the North (South) Pole when it winds once eastward
        // (westward) round the axis; with no net winding both poles are on the side away from
        // the pole-free disc, which is the left side when the fan area is negative.
        let (north_left, south_left) = match turns as i32 {
            1 => (true, false),
            -1 => (false, true),
            _ => (fan_area < 0.0, fan_area < 0.0),
        };
        let invert = area_left > 2.0 * PI;
        // A pole on the ring itself is on the boundary: the box reaches it anyway.
        if !c.touches_north {
            parity.north ^= north_left != invert;
        }
        if !c.touches_south {
            parity.south ^= south_left != invert;
        }
    }

    fn begin_polygon_rings(&mut self) {
        self.end_chain();
        self.poles = Some(PoleParity::default());
    }

    fn end_polygon_rings(&mut self) {
        self.end_chain();
        if let Some(p) = self.poles.take() {
            if p.unknown {
                self.full_lon = true;
                self.add_lat(-90.0, 90.0);
            }
            if p.north {
                self.full_lon = true;
                self.add_lat(90.0, 90.0);
            }
            if p.south {
                self.full_lon = true;
                self.add_lat(-90.0, -90.0);
            }
        }
    }

    /// The value's box; `None` when no vertex could be placed on the sphere.
    pub fn finish(&mut self, zm: &ZMExtent) -> Option<BBox> {
        self.end_chain();
        self.end_polygon_rings();
        if !self.seen {
            return None;
        }
        let x = match (self.full_lon, self.first_arc) {
            (true, _) | (false, None) => FULL,
            (false, Some(a)) if self.arcs.is_empty() => LonRange {
                min_x: a.lo,
                max_x: a.hi,
            },
            (false, Some(a)) => {
                self.arcs.push(a);
                smallest_cover(&mut self.arcs).unwrap_or(FULL)
            }
        };
        let LonRange { min_x, max_x } = x;
        Some(BBox {
            min_x,
            min_y: self.lat_min,
            max_x,
            max_y: self.lat_max,
            z: zm.z(),
            m: zm.m(),
        })
    }
}

/// Signed area of the spherical triangle (South Pole, a, b), positive when counter-clockwise
/// (Van Oosterom and Strackee: `tan(E / 2) = det / (1 + s.a + s.b + a.b)`).
fn fan_triangle(a: [f64; 3], b: [f64; 3]) -> f64 {
    let det = -cross(a, b)[2];
    let den = 1.0 - a[2] - b[2] + dot(a, b);
    2.0 * det.atan2(den)
}

impl CoordSink for SphericalBounder {
    fn add_point(&mut self, x: f64, y: f64) {
        self.point(x, y);
    }

    fn run(&mut self, s: &[u8], be: bool, dims: Dims, part: Part, zm: &mut ZMExtent) {
        let step = dims.coord_bytes();
        if part != Part::Point {
            self.begin_chain(part == Part::Ring);
        }
        for c in s.chunks_exact(step) {
            let (x, y) = if be {
                (f64_at::<true>(c, 0), f64_at::<true>(c, 8))
            } else {
                (f64_at::<false>(c, 0), f64_at::<false>(c, 8))
            };
            let at = |i: usize| {
                if be {
                    f64_at::<true>(c, i)
                } else {
                    f64_at::<false>(c, i)
                }
            };
            if dims.z {
                zm.add_z(at(16));
            }
            if dims.m {
                zm.add_m(at(step - 8));
            }
            if part == Part::Point {
                self.point(x, y);
            } else {
                self.vertex(x, y);
            }
        }
        if part != Part::Point {
            self.end_chain();
        }
    }

    fn begin_polygon(&mut self) {
        self.begin_polygon_rings();
    }

    fn end_polygon(&mut self) {
        self.end_polygon_rings();
    }
}
