//! A window on a geography column: the region on the sphere it means, as WKB for pruning
//! (`BoxFilter::from_wkb` bounds it with its great-circle edges) and as a prepared query for
//! the exact predicates of `geoberg-geography`.
//!
//! A lon/lat box (`Scan::with_window`, or `ST_MakeEnvelope` on a geography column) is the
//! polygon through its corners with great-circle edges, what `ST_MakeEnvelope` means on
//! geography in S2-based engines (spherely, BigQuery's `ST_MAKEPOLYGON`): its sides along
//! parallels bulge poleward, so a point just outside the lon/lat rectangle near the middle of a
//! long side can match, and the box's bounds used for pruning hold that bulge. Its longitudes run
//! east from `min_x` to `max_x`; `min_x > max_x` crosses the antimeridian (170 .. -170 is the
//! 20 degrees around ±180). Because a great-circle edge always takes the short way, a box 180
//! degrees wide or wider is split evenly into the fewest pieces narrower than 180 degrees (the
//! whole world, -180 .. 180, into three), each the polygon through its corners; a side that
//! reaches a pole is that pole, and a side along a meridian longer than 90 degrees gets its
//! midpoint, which does not move it (a meridian is a great circle) but keeps every edge far from
//! antipodal. A box without width or height is its line or point.

use geo_types::{Coord, Geometry, LineString, MultiPolygon, Point, Polygon};
use geoberg_crs::ColumnType;
use geoberg_geography::PreparedGeography;
use geoberg_geostats::BBox;
use geoberg_pruning::{BoxFilter, BoxPredicate, PruneError};

use crate::error::{Error, Result};

/// The region a geography window covers, ready for pruning and exact predicates.
#[derive(Debug, Clone)]
pub(crate) struct GeographyWindow {
    wkb: Vec<u8>,
    query: PreparedGeography,
    /// Polygons a box was split into (1 for other windows).
    pieces: usize,
}

impl GeographyWindow {
    /// The region of a lon/lat box (see the module docs); `min_x > max_x` crosses the
    /// antimeridian.
    pub(crate) fn from_box(b: &BBox) -> Result<Self> {
        // Longitudes a few ulp past ±180 (Natural Earth's 180.00000000000006, a bound read from
        // such data) are ±180, as geostats cleans values.
        let snap = |x: f64| {
            if x.abs() > 180.0 && x.abs() <= 180.0 + 1e-9 {
                180f64.copysign(x)
            } else {
                x
            }
        };
        let b = &BBox::new(snap(b.min_x), b.min_y, snap(b.max_x), b.max_y);
        let in_range = |v: f64, limit: f64| v.is_finite() && (-limit..=limit).contains(&v);
        if !(in_range(b.min_x, 180.0)
            && in_range(b.max_x, 180.0)
            && in_range(b.min_y, 90.0)
            && in_range(b.max_y, 90.0))
            || b.min_y > b.max_y
        {
            return Err(PruneError::InvalidWindow {
                window: fmt_box(b),
                problem: "a geography window needs longitudes in [-180, 180] and latitudes in \
                          [-90, 90] with min y <= max y; to cross the antimeridian give min x > \
                          max x (e.g. x 170 .. -170)",
            }
            .into());
        }
        let (geometry, pieces) = box_geometry(b);
        let mut wkb = Vec::new();
        wkb::writer::write_geometry(&mut wkb, &geometry, &Default::default())
            .map_err(|e| Error::InvalidData(format!("window {}: {e}", fmt_box(b))))?;
        Self::with_pieces(wkb, pieces)
    }

    /// A window given as WKB (a polygon's edges are great-circle arcs).
    pub(crate) fn from_wkb(wkb: &[u8]) -> Result<Self> {
        Self::with_pieces(wkb.to_vec(), 1)
    }

    /// The window of a SQL spatial predicate: an `ST_MakeEnvelope` by its corners (so that a
    /// wrapping or wide envelope keeps its meaning), any other window by its WKB.
    pub(crate) fn from_sql(window: &geoberg_sql::Window) -> Result<Self> {
        match window.envelope() {
            Some(e) => Self::from_box(&BBox::from(e)),
            None => Self::from_wkb(window.wkb()),
        }
    }

    fn with_pieces(wkb: Vec<u8>, pieces: usize) -> Result<Self> {
        let query = PreparedGeography::from_wkb(&wkb)?;
        Ok(GeographyWindow { wkb, query, pieces })
    }

    /// The prepared query for `geoberg-geography`'s kernels.
    pub(crate) fn query(&self) -> &PreparedGeography {
        &self.query
    }

    /// The window's bounds on the sphere; `None` when it covers nothing.
    pub(crate) fn bbox(&self) -> Option<BBox> {
        self.query.geography().bbox()
    }

    /// The pruning filter for rows related to this window by `predicate`.
    pub(crate) fn filter(&self, predicate: BoxPredicate) -> Result<BoxFilter> {
        Ok(BoxFilter::from_wkb(predicate, &self.wkb)?)
    }

    /// Fails for `ST_Within` against a box split into pieces: a row that crosses from one piece
    /// into the next lies within the box but within no piece, and the predicate tests pieces.
    pub(crate) fn check_within(&self, column: &str) -> Result<()> {
        if self.pieces > 1 {
            return Err(Error::Unsupported {
                what: format!(
                    "ST_Within / ST_Contains(window, {column}) against a geography envelope 180 \
                     degrees of longitude or wider (evaluated in {} pieces, it would miss rows \
                     that cross between them)",
                    self.pieces
                ),
                fix: "use an envelope narrower than 180 degrees, or ST_Intersects".into(),
            });
        }
        Ok(())
    }
}

/// The error for a window with `min_x > max_x` on a column that is not geography; `fix` says
/// what works in the caller's terms.
pub(crate) fn wrapping_window_on_planar_column(
    column: &str,
    column_type: &ColumnType,
    window: &BBox,
    fix: &str,
) -> Error {
    Error::Unsupported {
        what: format!(
            "the window {} on column {column:?} ({column_type}): min x > max x means a window \
             across the antimeridian, which only geography columns have",
            fmt_box(window)
        ),
        fix: fix.to_string(),
    }
}

/// The error for an `ST_MakeEnvelope` with `minX > maxX` on a column that is not geography.
pub(crate) fn wrapping_envelope_on_planar_column(
    filter: &geoberg_sql::SpatialFilter,
    column_type: &ColumnType,
) -> Error {
    let e = filter.window.envelope().unwrap_or(filter.window.bbox());
    let c = &filter.column;
    wrapping_window_on_planar_column(
        &filter.column,
        column_type,
        &BBox::from(e),
        &format!(
            "on a geometry column write the two sides of the antimeridian as two envelopes, \
             ST_Intersects({c}, ST_MakeEnvelope({}, {}, 180, {})) OR ST_Intersects({c}, \
             ST_MakeEnvelope(-180, {}, {}, {})), or store the column as geography",
            e.min_x, e.min_y, e.max_y, e.min_y, e.max_x, e.max_y
        ),
    )
}

/// `x [min, max] y [min, max]`, as the pruning crate writes windows.
pub(crate) fn fmt_box(b: &BBox) -> String {
    format!("x [{}, {}] y [{}, {}]", b.min_x, b.max_x, b.min_y, b.max_y)
}

/// The geometry a checked lon/lat box means on the sphere, and the number of polygons.
fn box_geometry(b: &BBox) -> (Geometry<f64>, usize) {
    let width = if b.min_x <= b.max_x {
        b.max_x - b.min_x
    } else {
        b.max_x + 360.0 - b.min_x
    };
    let (y0, y1) = (b.min_y, b.max_y);
    let c = |x: f64, y: f64| Coord { x, y };
    // The fewest equal pieces narrower than 180 degrees; their edge longitudes, east from min_x.
    let pieces = (width / 180.0).floor() as usize + 1;
    let edges: Vec<f64> = (0..=pieces)
        .map(|k| {
            if k == pieces && width == 360.0 {
                // Once round: the last piece closes on the first one's meridian, the same
                // number, so that no sliver opens between -180 and 180 (whose unit vectors
                // differ by a rounding error).
                b.min_x
            } else if k == pieces {
                b.max_x
            } else {
                let x = b.min_x + width * k as f64 / pieces as f64;
                if x > 180.0 { x - 360.0 } else { x }
            }
        })
        .collect();
    let tall = y1 - y0 > 90.0;
    let mid = y0 + (y1 - y0) / 2.0;
    // A meridian side, with its midpoint when long.
    let meridian = |x: f64, from: f64, to: f64| -> Vec<Coord<f64>> {
        if tall {
            vec![c(x, from), c(x, mid), c(x, to)]
        } else {
            vec![c(x, from), c(x, to)]
        }
    };
    if width == 0.0 {
        if y0 == y1 {
            return (Geometry::Point(Point::new(b.min_x, y0)), 1);
        }
        return (
            Geometry::LineString(LineString::new(meridian(b.min_x, y0, y1))),
            1,
        );
    }
    if y0 == y1 {
        if y0.abs() == 90.0 {
            return (Geometry::Point(Point::new(b.min_x, y0)), 1);
        }
        let line = edges.iter().map(|&x| c(x, y0)).collect();
        return (Geometry::LineString(LineString::new(line)), 1);
    }
    let polygons: Vec<Polygon<f64>> = edges
        .windows(2)
        .map(|w| {
            let (west, east) = (w[0], w[1]);
            let mut ring = Vec::with_capacity(8);
            // Along the south side (one vertex at the South Pole), up the east meridian, along
            // the north side (one vertex at the North Pole), down the west meridian.
            ring.push(c(west, y0));
            if y0 > -90.0 {
                ring.push(c(east, y0));
            }
            ring.extend(meridian(east, y0, y1).into_iter().skip(1));
            if y1 < 90.0 {
                ring.push(c(west, y1));
            }
            ring.extend(meridian(west, y1, y0).into_iter().skip(1));
            Polygon::new(LineString::new(ring), Vec::new())
        })
        .collect();
    let n = polygons.len();
    let geometry = if n == 1 {
        Geometry::Polygon(polygons.into_iter().next().expect("one piece"))
    } else {
        Geometry::MultiPolygon(MultiPolygon(polygons))
    };
    (geometry, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use geoberg_geography::Geography;

    fn point(x: f64, y: f64) -> Geography {
        let mut v = vec![1u8, 1, 0, 0, 0];
        v.extend(x.to_le_bytes());
        v.extend(y.to_le_bytes());
        Geography::from_wkb(&v).unwrap()
    }

    fn hits(b: BBox, x: f64, y: f64) -> bool {
        let w = GeographyWindow::from_box(&b).unwrap();
        point(x, y).intersects(w.query().geography())
    }

    #[test]
    fn narrow_boxes_are_their_corner_polygon() {
        let (g, n) = box_geometry(&BBox::new(10.0, 40.0, 20.0, 50.0));
        assert_eq!(n, 1);
        let Geometry::Polygon(p) = g else {
            panic!("{g:?}")
        };
        assert_eq!(p.exterior().0.len(), 5);
        assert!(hits(BBox::new(10.0, 40.0, 20.0, 50.0), 15.0, 45.0));
        // The north side bulges past latitude 50 in the middle, not at the corners.
        assert!(hits(BBox::new(10.0, 40.0, 20.0, 50.0), 15.0, 50.1));
        assert!(!hits(BBox::new(10.0, 40.0, 20.0, 50.0), 10.5, 50.1));
    }

    #[test]
    fn wrapping_wide_polar_and_degenerate_boxes() {
        let wrap = BBox::new(170.0, -10.0, -170.0, 10.0);
        assert!(hits(wrap, 180.0, 0.0) && hits(wrap, -175.0, 5.0));
        assert!(!hits(wrap, 0.0, 0.0));
        // 340 degrees wide: the long way round, in two pieces.
        let wide = BBox::new(-170.0, -10.0, 170.0, 10.0);
        assert_eq!(box_geometry(&wide).1, 2);
        assert!(hits(wide, 0.0, 0.0) && !hits(wide, 180.0, 0.0));
        // The whole world: three lunes from pole to pole.
        let world = BBox::new(-180.0, -90.0, 180.0, 90.0);
        assert_eq!(box_geometry(&world).1, 3);
        for (x, y) in [
            (0.0, 0.0),
            (180.0, 0.0),
            (-179.9, -89.9),
            (33.0, 90.0),
            (60.0, 0.0),
        ] {
            assert!(hits(world, x, y), "({x}, {y})");
        }
        // A cap round the North Pole's side: a triangle with the pole as a vertex.
        assert!(hits(BBox::new(-10.0, 80.0, 10.0, 90.0), 150.0, 90.0));
        assert!(hits(BBox::new(-10.0, 85.0, 10.0, 90.0), 0.0, 89.9));
        // A point window, a meridian window.
        assert!(hits(BBox::point(3.0, 4.0), 3.0, 4.0));
        assert!(hits(BBox::new(3.0, -60.0, 3.0, 60.0), 3.0, 0.0));
        assert!(!hits(BBox::new(3.0, -60.0, 3.0, 60.0), 3.1, 0.0));
    }

    #[test]
    fn out_of_range_windows_say_what_works() {
        for b in [
            BBox::new(170.0, -10.0, 190.0, 10.0),
            BBox::new(0.0, 10.0, 1.0, -10.0),
            BBox::new(f64::NAN, 0.0, 1.0, 1.0),
        ] {
            let e = GeographyWindow::from_box(&b).unwrap_err().to_string();
            assert!(e.contains("min x > max x"), "{e}");
        }
    }
}
