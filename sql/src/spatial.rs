use std::fmt;
use std::str::FromStr;

use geo_types::{Coord, Geometry, Rect};
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
/// WKB encoding (for exact row filtering) and its bounding box (for file pruning).
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    geometry: Geometry<f64>,
    wkb: Vec<u8>,
    bbox: Extent,
    srid: Option<i32>,
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

    /// A rectangular window, as in `ST_MakeEnvelope(minX, minY, maxX, maxY, srid)`.
    pub fn from_envelope(bbox: Extent, srid: Option<i32>) -> Result<Window, SqlError> {
        let Extent {
            min_x,
            min_y,
            max_x,
            max_y,
        } = bbox;
        let ordered = min_x <= max_x && min_y <= max_y;
        if !ordered || ![min_x, min_y, max_x, max_y].iter().all(|v| v.is_finite()) {
            return Err(SqlError::InvalidWindow {
                window: format!("ST_MakeEnvelope({min_x}, {min_y}, {max_x}, {max_y})"),
                reason: "the envelope needs finite numbers with minX <= maxX and minY <= maxY, \
                         in the order (minX, minY, maxX, maxY)"
                    .to_string(),
            });
        }
        let rect = Rect::new(Coord { x: min_x, y: min_y }, Coord { x: max_x, y: max_y });
        Window::from_geometry(Geometry::Polygon(rect.to_polygon()), srid).map_err(|reason| {
            SqlError::InvalidWindow {
                window: format!("ST_MakeEnvelope({min_x}, {min_y}, {max_x}, {max_y})"),
                reason,
            }
        })
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

    /// The window's bounding box.
    pub fn bbox(&self) -> Extent {
        self.bbox
    }

    /// The SRID given to `ST_GeomFromText` / `ST_MakeEnvelope`, if any. Whether it matches the
    /// column's CRS is checked at execution, where the column is known.
    pub fn srid(&self) -> Option<i32> {
        self.srid
    }
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
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
    /// The row geometry is within this distance of the window (in the CRS's units).
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
    /// window's box, grown by the distance for `ST_DWithin`.
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
