//! The query box a filter reduces to, and the one test every entry goes through.
//!
//! Every predicate of [`BoxFilter`](crate::BoxFilter) reduces, for pruning, to "may the
//! entry's box share a point with this query box": a row the exact predicate accepts lies (or,
//! for distance, lies within `d` of) the window, so its box meets the query box, and the entry's
//! box holds the row's box. The exact predicate is evaluated later, on the rows.

use std::f64::consts::PI;

use geoberg_geostats::{BBox, Interval};

/// How X behaves: planar geometry never wraps; geography longitudes may cross the antimeridian.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Surface {
    /// Geometry columns: `min_x > max_x` is invalid.
    Planar,
    /// Geography columns: `min_x > max_x` means `x >= min_x || x <= max_x`.
    Sphere,
}

/// An X range that may wrap the antimeridian.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum XRange {
    /// `min <= x <= max`.
    Plain(Interval),
    /// `x >= min || x <= max` (geography only, `min > max`).
    Wrap(Interval),
}

impl XRange {
    fn of(min: f64, max: f64) -> Self {
        if min > max {
            XRange::Wrap(Interval::new(min, max))
        } else {
            XRange::Plain(Interval::new(min, max))
        }
    }

    /// Closed-interval overlap, with the Iceberg spec's wrap semantics on either side (what
    /// Iceberg Java's `GeographyEvaluator` does). On the sphere longitudes are a circle, so 180
    /// and -180 are one meridian: a box at x = 180 meets a window that starts at -180.
    fn intersects(self, other: XRange, surface: Surface) -> bool {
        match (self, other) {
            (XRange::Plain(a), XRange::Plain(b)) => {
                a.intersects(b)
                    || surface == Surface::Sphere
                        && (a.min <= -180.0 && b.max >= 180.0 || b.min <= -180.0 && a.max >= 180.0)
            }
            (XRange::Plain(p), XRange::Wrap(w)) | (XRange::Wrap(w), XRange::Plain(p)) => {
                p.min <= w.max || p.max >= w.min
            }
            // Both hold the antimeridian.
            (XRange::Wrap(_), XRange::Wrap(_)) => true,
        }
    }

    /// The plain pieces of the range: one, or two for a wrapped range (open towards the wrap).
    /// On the sphere a piece that reaches one side of the antimeridian also looks for boxes that
    /// touch it from the other side (at exactly 180 or -180).
    pub(crate) fn pieces(self, surface: Surface) -> impl Iterator<Item = Interval> {
        let (a, b) = match self {
            XRange::Plain(i) => (Some(i), None),
            XRange::Wrap(w) => (
                Some(Interval::new(w.min, f64::INFINITY)),
                Some(Interval::new(f64::NEG_INFINITY, w.max)),
            ),
        };
        let sphere = surface == Surface::Sphere;
        let reaches = |v: f64| a.into_iter().chain(b).any(|i| i.contains(v));
        let east = (sphere && reaches(-180.0)).then_some(Interval::new(180.0, 180.0));
        let west = (sphere && reaches(180.0)).then_some(Interval::new(-180.0, -180.0));
        a.into_iter().chain(b).chain(east).chain(west)
    }
}

/// The box a filter is tested as, after validation, CRS checks and distance growth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct QueryBox {
    pub(crate) x: XRange,
    pub(crate) y: Interval,
    pub(crate) z: Option<Interval>,
    pub(crate) m: Option<Interval>,
    pub(crate) surface: Surface,
}

/// Outcome of testing one entry's box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The boxes share a point: the entry may hold a matching row.
    Overlaps,
    /// No row of the entry can match.
    Disjoint,
    /// The entry's box breaks the bound rules (NaN, `min > max` where not allowed): read it.
    Invalid,
}

/// Whether a geography box lies in longitude [-180, 180] and latitude [-90, 90]. Windows are
/// held to that range, and one that spans every longitude or reaches a pole is clamped to it, so
/// a file box outside it (a longitude of 180.00000000000003 after a reprojection, say) cannot be
/// compared: the file is read.
pub(crate) fn in_geography_range(b: &BBox) -> bool {
    let lon = -180.0..=180.0;
    let lat = -90.0..=90.0;
    lon.contains(&b.min_x)
        && lon.contains(&b.max_x)
        && lat.contains(&b.min_y)
        && lat.contains(&b.max_y)
}

/// Whether a geography box reaches latitude 90 or -90.
pub(crate) fn reaches_pole(b: &BBox) -> bool {
    b.max_y >= 90.0 || b.min_y <= -90.0
}

/// A closed range that is usable for comparison (no NaN, `min <= max`).
fn usable(i: Option<Interval>) -> Option<Interval> {
    i.filter(|i| i.is_valid())
}

impl QueryBox {
    /// Tests an entry's box. Z and M are compared only when both sides have a usable range.
    pub(crate) fn test(&self, b: &BBox) -> Verdict {
        if b.min_x.is_nan() || b.max_x.is_nan() || !b.y().is_valid() {
            return Verdict::Invalid;
        }
        // A box that reaches a pole holds a point where every meridian meets (writers box a
        // point at the pole with whatever longitude it was given): every longitude.
        let x = if self.surface == Surface::Sphere && reaches_pole(b) {
            XRange::Plain(Interval::new(-180.0, 180.0))
        } else {
            XRange::of(b.min_x, b.max_x)
        };
        let valid = match self.surface {
            Surface::Planar => matches!(x, XRange::Plain(_)),
            Surface::Sphere => in_geography_range(b),
        };
        if !valid {
            return Verdict::Invalid;
        }
        let z_ok = match (self.z, usable(b.z)) {
            (Some(q), Some(f)) => q.intersects(f),
            _ => true,
        };
        let m_ok = match (self.m, usable(b.m)) {
            (Some(q), Some(f)) => q.intersects(f),
            _ => true,
        };
        if self.y.intersects(b.y()) && self.x.intersects(x, self.surface) && z_ok && m_ok {
            Verdict::Overlaps
        } else {
            Verdict::Disjoint
        }
    }
}

/// WGS84 polar semi-minor axis in metres: the smallest radius of the Earth. Distances measured on
/// any of the supported edge models (sphere of mean radius, or the ellipsoid) are at least as long
/// as on a sphere of this radius (radial projection onto an inner ball never lengthens a path).
const INNER_RADIUS_M: f64 = 6_356_752.314_245;

/// Largest ratio of a geodetic latitude difference to the geocentric one on WGS84
/// (`1 / (1 - e^2)` = 1.00674); rounded up.
const GEODETIC_PER_GEOCENTRIC: f64 = 1.0068;

/// Grows an XY box by `d` in its own units (planar geometry).
pub(crate) fn grow_planar(x: Interval, y: Interval, d: f64) -> (Interval, Interval) {
    (
        Interval::new(x.min - d, x.max + d),
        Interval::new(y.min - d, y.max + d),
    )
}

/// Grows a lon/lat box by `d` metres so that it covers every point within geodesic distance `d`
/// of the box, conservatively (larger, never smaller).
///
/// Latitude grows by the central angle `d / b` (inner sphere), widened for geodetic latitude.
/// Longitude grows by `2 asin(sin(θ/2) / cos φmax)`, the largest longitude difference two points
/// at most `θ` apart can have when neither is poleward of `φmax`; near a pole every longitude is
/// possible.
pub(crate) fn grow_geography(x: XRange, y: Interval, d: f64) -> (XRange, Interval) {
    let full_x = XRange::Plain(Interval::new(-180.0, 180.0));
    let theta = d / INNER_RADIUS_M;
    if theta >= PI {
        return (full_x, Interval::new(-90.0, 90.0));
    }
    let dy = (theta * GEODETIC_PER_GEOCENTRIC).to_degrees();
    let (ymin, ymax) = (y.min - dy, y.max + dy);
    let gy = Interval::new(ymin.max(-90.0), ymax.min(90.0));
    if ymin <= -90.0 || ymax >= 90.0 {
        return (full_x, gy);
    }
    let phi_max = ymin.abs().max(ymax.abs()).to_radians();
    let s = (theta / 2.0).sin() / phi_max.cos();
    if s >= 1.0 {
        return (full_x, gy);
    }
    let dx = (2.0 * s.asin()).to_degrees();
    let (min, max, width) = match x {
        XRange::Plain(i) => (i.min, i.max, i.max - i.min),
        XRange::Wrap(w) => (w.min, w.max, 360.0 - (w.min - w.max)),
    };
    if width + 2.0 * dx >= 360.0 {
        return (full_x, gy);
    }
    let mut lo = min - dx;
    let mut hi = max + dx;
    if lo < -180.0 {
        lo += 360.0;
    }
    if hi > 180.0 {
        hi -= 360.0;
    }
    (XRange::of(lo, hi), gy)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(x: XRange, y: (f64, f64), surface: Surface) -> QueryBox {
        QueryBox {
            x,
            y: Interval::new(y.0, y.1),
            z: None,
            m: None,
            surface,
        }
    }

    #[test]
    fn touching_boxes_overlap() {
        let w = q(XRange::of(0.0, 1.0), (0.0, 1.0), Surface::Planar);
        assert_eq!(w.test(&BBox::new(1.0, 1.0, 2.0, 2.0)), Verdict::Overlaps);
        assert_eq!(w.test(&BBox::point(1.0, 0.5)), Verdict::Overlaps);
        assert_eq!(
            w.test(&BBox::new(1.0 + 1e-12, 0.0, 2.0, 1.0)),
            Verdict::Disjoint
        );
    }

    #[test]
    fn planar_wrap_and_nan_are_invalid() {
        let w = q(XRange::of(0.0, 1.0), (0.0, 1.0), Surface::Planar);
        assert_eq!(w.test(&BBox::new(5.0, 0.0, -5.0, 1.0)), Verdict::Invalid);
        assert_eq!(
            w.test(&BBox::new(f64::NAN, 0.0, 1.0, 1.0)),
            Verdict::Invalid
        );
        assert_eq!(w.test(&BBox::new(0.0, 2.0, 1.0, 1.0)), Verdict::Invalid);
    }

    #[test]
    fn geography_wrap_semantics() {
        let plain = q(XRange::of(-10.0, 10.0), (-5.0, 5.0), Surface::Sphere);
        // File spanning 170E..170W does not meet a window around 0.
        assert_eq!(
            plain.test(&BBox::new(170.0, -5.0, -170.0, 5.0)),
            Verdict::Disjoint
        );
        let wrap = q(XRange::of(175.0, -175.0), (-5.0, 5.0), Surface::Sphere);
        assert_eq!(
            wrap.test(&BBox::new(170.0, 0.0, -170.0, 1.0)),
            Verdict::Overlaps
        );
        assert_eq!(wrap.test(&BBox::point(-179.0, 0.0)), Verdict::Overlaps);
        assert_eq!(wrap.test(&BBox::point(0.0, 0.0)), Verdict::Disjoint);
    }

    #[test]
    fn geography_boxes_outside_the_lon_lat_range_are_read() {
        // Found by `pruning_plan`: a file box wrapped from 180.00000000000003 to
        // -180.00000000000003 was disjoint from a window over every longitude, though its rows
        // sit at longitude 180.00000000000003.
        let world = q(XRange::of(-180.0, 180.0), (-90.0, 90.0), Surface::Sphere);
        let past = BBox::new(180.00000000000003, -90.0, -180.00000000000003, -89.9);
        assert_eq!(world.test(&past), Verdict::Invalid);
        assert_eq!(
            world.test(&BBox::point(10.0, 90.00000000000001)),
            Verdict::Invalid
        );
        assert_eq!(world.test(&BBox::point(180.0, -90.0)), Verdict::Overlaps);
        // Planar boxes have no such range.
        let planar = q(XRange::of(-180.0, 180.0), (-90.0, 90.0), Surface::Planar);
        assert_eq!(planar.test(&past), Verdict::Invalid);
        assert_eq!(planar.test(&BBox::point(500.0, 0.0)), Verdict::Disjoint);
    }

    #[test]
    fn z_compared_only_when_both_have_it() {
        let mut w = q(XRange::of(0.0, 1.0), (0.0, 1.0), Surface::Planar);
        let f = BBox::new(0.0, 0.0, 1.0, 1.0).with_z(Interval::new(10.0, 20.0));
        assert_eq!(w.test(&f), Verdict::Overlaps);
        w.z = Some(Interval::new(0.0, 5.0));
        assert_eq!(w.test(&f), Verdict::Disjoint);
        assert_eq!(w.test(&BBox::new(0.0, 0.0, 1.0, 1.0)), Verdict::Overlaps);
        let nan_z = BBox::new(0.0, 0.0, 1.0, 1.0).with_z(Interval::new(f64::NAN, f64::NAN));
        assert_eq!(w.test(&nan_z), Verdict::Overlaps);
    }

    #[test]
    fn geography_growth_covers_a_point_due_north_and_east() {
        // Points exactly `d` away on the mean-radius sphere must lie in the grown box.
        for lat in [-60.0, -10.0, 0.0, 30.0, 70.0] {
            for d in [1.0, 1_000.0, 100_000.0, 1_000_000.0] {
                let (x, y) = grow_geography(XRange::of(10.0, 10.0), Interval::new(lat, lat), d);
                let dlat = (d / 6_371_008.8_f64).to_degrees();
                assert!(y.max >= (lat + dlat).min(90.0), "lat {lat} d {d}: {y:?}");
                assert!(y.min <= (lat - dlat).max(-90.0), "lat {lat} d {d}: {y:?}");
                // Along the parallel the distance is longer than the great circle, so a point
                // d away along the parallel is inside too.
                let dlon = (d / (6_371_008.8 * lat.to_radians().cos())).to_degrees();
                let q = QueryBox {
                    x,
                    y,
                    z: None,
                    m: None,
                    surface: Surface::Sphere,
                };
                assert_eq!(q.test(&BBox::point(10.0 + dlon, lat)), Verdict::Overlaps);
            }
        }
    }

    #[test]
    fn geography_growth_near_pole_takes_every_longitude() {
        let (x, y) = grow_geography(XRange::of(0.0, 1.0), Interval::new(89.0, 89.5), 200_000.0);
        assert_eq!(x, XRange::Plain(Interval::new(-180.0, 180.0)));
        assert_eq!(y.max, 90.0);
    }

    #[test]
    fn geography_growth_wraps_across_antimeridian() {
        let (x, _) = grow_geography(XRange::of(179.0, 179.5), Interval::new(0.0, 0.0), 200_000.0);
        match x {
            XRange::Wrap(w) => assert!(w.min < 179.0 && w.max > -180.0 && w.max < -178.0),
            other => panic!("expected a wrapped range, got {other:?}"),
        }
    }
}
