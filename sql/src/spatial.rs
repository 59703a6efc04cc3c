use std::fmt;
use std::str::FromStr;

use geo_types::{Coord, Geometry, MultiPolygon, Rect};
use geoberg_crs::Extent;
use wkt::{ToWkt, Wkt};

use crate::error::SqlError;
use crate::front::MAX_NESTING_DEPTH;
use crate::name::{quote_ident, quote_string};

/// Adds a coordinate to a box being accumulated.
fn include(acc: Option<Extent>, c: Coord<f64>) -> Option<Extent> {
    Some(match acc {
        None => Extent::new(c.x, c.y, c.x, c.y),
        Some(b) => b.include(c.x, c.y),
    })
}

/// The query shape of a spatial predicate, in the three forms consumers need: the geometry, its
/// WKB encoding (for exact row filtering) and its bounding box (for file pruning), plus the
/// envelope as written when the window is an `ST_MakeEnvelope`.
///
/// An envelope with `minX > maxX`, as in `ST_MakeEnvelope(170, -10, -170, 10, 4326)`, is a
/// window across the antimeridian, and means something only on a **geography** column: the
/// longitudes from `minX` east across ±180 to `maxX` (here 170°E to 170°W). Its X values must be
/// longitudes in [-180, 180] and its Y values latitudes in [-90, 90]. Its
/// [`geometry`](Window::geometry) and [`wkb`](Window::wkb) are the two planar boxes it covers
/// (`minX..180` and `-180..maxX`), its [`bbox`](Window::bbox) their planar union; a consumer
/// on a geography column reads [`envelope`](Window::envelope) instead, and one on a geometry
/// column rejects it ([`Window::wraps`]).
///
/// ```
/// use geoberg_sql::{Predicate, parse_condition};
/// let p = parse_condition("ST_Intersects(geog, ST_MakeEnvelope(170, -10, -170, 10, 4326))")?;
/// let Predicate::Spatial(f) = &p else { unreachable!() };
/// assert!(f.window.wraps());
/// let e = f.window.envelope().unwrap();
/// assert_eq!((e.min_x, e.max_x), (170.0, -170.0));
/// assert_eq!(p.to_sql(), "ST_Intersects(geog, ST_MakeEnvelope(170.0, -10.0, -170.0, 10.0, 4326))");
/// # Ok::<(), geoberg_sql::SqlError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    geometry: Geometry<f64>,
    wkb: Vec<u8>,
    bbox: Extent,
    srid: Option<i32>,
    envelope: Option<Extent>,
}

impl Window {
    /// A window from WKT text, as in `ST_GeomFromText('<wkt>', srid)`.
    pub fn from_wkt(wkt: &str, srid: Option<i32>) -> Result<Window, SqlError> {
        let bad = |reason: String| SqlError::InvalidWindow {
            window: shorten(wkt),
            reason,
        };
        let depth = max_paren_depth(wkt);
        if depth > MAX_NESTING_DEPTH {
            return Err(bad(format!(
                "it nests {depth} levels deep, more than the limit of {MAX_NESTING_DEPTH}; \
                 flatten nested GEOMETRYCOLLECTIONs"
            )));
        }
        let parsed = Wkt::<f64>::from_str(wkt).map_err(|e| {
            bad(format!(
                "not valid WKT ({e}); write e.g. 'POLYGON ((0 0, 0 1, 1 1, 1 0, 0 0))'"
            ))
        })?;
        let geometry = Geometry::try_from(parsed).map_err(|e| {
            bad(format!(
                "cannot be used as a window ({e}); give a non-empty geometry"
            ))
        })?;
        Window::from_geometry(geometry, srid).map_err(bad)
    }

    /// A rectangular window, as in `ST_MakeEnvelope(minX, minY, maxX, maxY, srid)`. `minX >
    /// maxX` is a window across the antimeridian, for geography columns only (see [`Window`]).
    pub fn from_envelope(bbox: Extent, srid: Option<i32>) -> Result<Window, SqlError> {
        let Extent {
            min_x,
            min_y,
            max_x,
            max_y,
        } = bbox;
        let written = || {
            let mut w = format!("ST_MakeEnvelope({min_x}, {min_y}, {max_x}, {max_y}");
            if let Some(srid) = srid {
                w.push_str(&format!(", {srid}"));
            }
            w + ")"
        };
        let bad = |reason: &str| SqlError::InvalidWindow {
            window: written(),
            reason: reason.to_string(),
        };
        if ![min_x, min_y, max_x, max_y].iter().all(|v| v.is_finite()) || min_y > max_y {
            return Err(bad(
                "the envelope needs finite numbers with minY <= maxY, in the order (minX, minY, \
                 maxX, maxY); minX <= maxX, or minX > maxX for a window across the antimeridian \
                 on a geography column",
            ));
        }
        let rect = |x0: f64, x1: f64| {
            Rect::new(Coord { x: x0, y: min_y }, Coord { x: x1, y: max_y }).to_polygon()
        };
        let geometry = if min_x <= max_x {
            Geometry::Polygon(rect(min_x, max_x))
        } else {
            let lon = -180.0..=180.0;
            let lat = -90.0..=90.0;
            if !(lon.contains(&min_x)
                && lon.contains(&max_x)
                && lat.contains(&min_y)
                && lat.contains(&max_y))
            {
                return Err(bad(
                    "minX > maxX is a window across the antimeridian (geography only), which \
                     needs longitudes in [-180, 180] and latitudes in [-90, 90]; otherwise give \
                     minX <= maxX",
                ));
            }
            Geometry::MultiPolygon(MultiPolygon(vec![rect(min_x, 180.0), rect(-180.0, max_x)]))
        };
        let mut window = Window::from_geometry(geometry, srid).map_err(|reason| bad(&reason))?;
        window.envelope = Some(bbox);
        Ok(window)
    }

    fn from_geometry(geometry: Geometry<f64>, srid: Option<i32>) -> Result<Window, String> {
        let bbox = geometry_bbox(&geometry, None).ok_or_else(|| {
            "the geometry is empty and would match nothing; give a non-empty geometry".to_string()
        })?;
        if ![bbox.min_x, bbox.min_y, bbox.max_x, bbox.max_y]
            .iter()
            .all(|v| v.is_finite())
        {
            return Err(
                "a coordinate is not finite (NaN or infinity); use finite numbers".to_string(),
            );
        }
        let mut wkb = Vec::new();
        wkb::writer::write_geometry(&mut wkb, &geometry, &Default::default())
            .map_err(|e| format!("cannot be encoded as WKB: {e}"))?;
        Ok(Window {
            geometry,
            wkb,
            bbox,
            srid,
            envelope: None,
        })
    }

    /// The window geometry.
    pub fn geometry(&self) -> &Geometry<f64> {
        &self.geometry
    }

    /// The window as little-endian ISO WKB, for exact row filtering.
    pub fn wkb(&self) -> &[u8] {
        &self.wkb
    }

    /// The window's planar bounding box (of a wrapping envelope: of the two boxes it covers,
    /// `-180..180` in X).
    pub fn bbox(&self) -> Extent {
        self.bbox
    }

    /// The corners of an `ST_MakeEnvelope` window as written (`min_x > max_x` when it wraps the
    /// antimeridian); `None` for `ST_GeomFromText` windows. On a geography column a consumer
    /// builds the window from these, so that a wide or wrapping envelope keeps its meaning.
    pub fn envelope(&self) -> Option<Extent> {
        self.envelope
    }

    /// Whether the window is an envelope across the antimeridian (`minX > maxX`), which only a
    /// geography column can use.
    pub fn wraps(&self) -> bool {
        self.envelope.is_some_and(|e| e.min_x > e.max_x)
    }

    /// The SRID given to `ST_GeomFromText` / `ST_MakeEnvelope`, if any. Whether it matches the
    /// column's CRS is checked at execution, where the column is known.
    pub fn srid(&self) -> Option<i32> {
        self.srid
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(e) = self.envelope {
            // As written, so that a wrapping envelope parses back to itself.
            write!(
                f,
                "ST_MakeEnvelope({:?}, {:?}, {:?}, {:?}",
                e.min_x, e.min_y, e.max_x, e.max_y
            )?;
            if let Some(srid) = self.srid {
                write!(f, ", {srid}")?;
            }
            return f.write_str(")");
        }
        write!(
            f,
            "ST_GeomFromText({}",
            quote_string(&self.geometry.wkt_string())
        )?;
        if let Some(srid) = self.srid {
            write!(f, ", {srid}")?;
        }
        f.write_str(")")
    }
}

/// How the rows' geometry relates to the window, from the column's point of view:
/// `ST_Contains(window, geom)` is stored as [`SpatialRelation::Within`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SpatialRelation {
    /// The row geometry intersects the window.
    Intersects,
    /// The row geometry contains the window.
    Contains,
    /// The row geometry lies within the window.
    Within,
    /// The row geometry is within this distance of the window: in the CRS's units on a
    /// geometry column, in metres on the sphere on a geography column.
    DWithin(f64),
}

/// A spatial predicate on one geometry column: the part of a condition that file pruning uses.
#[derive(Debug, Clone, PartialEq)]
pub struct SpatialFilter {
    /// The geometry column.
    pub column: String,
    /// The relation the rows must have with the window.
    pub relation: SpatialRelation,
    /// The query shape.
    pub window: Window,
}

impl SpatialFilter {
    /// The box a file's geometry bounds must intersect to possibly hold matching rows: the
    /// window's planar box, grown by the distance for `ST_DWithin`. For geometry columns only:
    /// on a geography column the window's edges bulge past its planar box and the distance is
    /// metres, so consumers bound the window on the sphere instead (`geoberg-table` does).
    pub fn pruning_bbox(&self) -> Extent {
        match self.relation {
            SpatialRelation::DWithin(d) => self.window.bbox.expand(d),
            _ => self.window.bbox,
        }
    }
}

impl fmt::Display for SpatialFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let column = quote_ident(&self.column);
        let window = &self.window;
        match self.relation {
            SpatialRelation::Intersects => write!(f, "ST_Intersects({column}, {window})"),
            SpatialRelation::Contains => write!(f, "ST_Contains({column}, {window})"),
            SpatialRelation::Within => write!(f, "ST_Within({column}, {window})"),
            SpatialRelation::DWithin(d) => write!(f, "ST_DWithin({column}, {window}, {d:?})"),
        }
    }
}

/// Bounding box of every coordinate; `None` for an empty geometry. Recursion depth is bounded by
/// the WKT nesting limit.
fn geometry_bbox(g: &Geometry<f64>, acc: Option<Extent>) -> Option<Extent> {
    let fold = |acc, coords: &mut dyn Iterator<Item = Coord<f64>>| coords.fold(acc, include);
    match g {
        Geometry::Point(p) => include(acc, p.0),
        Geometry::Line(l) => fold(acc, &mut [l.start, l.end].into_iter()),
        Geometry::LineString(ls) => fold(acc, &mut ls.0.iter().copied()),
        Geometry::Polygon(p) => fold(acc, &mut p.exterior().0.iter().copied()),
        Geometry::MultiPoint(mp) => fold(acc, &mut mp.0.iter().map(|p| p.0)),
        Geometry::MultiLineString(mls) => {
            fold(acc, &mut mls.0.iter().flat_map(|l| l.0.iter().copied()))
        }
        Geometry::MultiPolygon(mp) => fold(
            acc,
            &mut mp.0.iter().flat_map(|p| p.exterior().0.iter().copied()),
        ),
        Geometry::GeometryCollection(gc) => gc.0.iter().fold(acc, |acc, g| geometry_bbox(g, acc)),
        Geometry::Rect(r) => fold(acc, &mut [r.min(), r.max()].into_iter()),
        Geometry::Triangle(t) => fold(acc, &mut t.to_array().into_iter()),
    }
}

fn max_paren_depth(s: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for b in s.bytes() {
        match b {
            b'(' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

fn shorten(s: &str) -> String {
    if s.chars().count() <= 60 {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(57).collect::<String>())
    }
}
