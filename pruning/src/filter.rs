//! Spatial filters as the planner receives them: a predicate, a window and the window's CRS.

use std::fmt;

use geoberg_crs::Crs;
use geoberg_geostats::{BBox, Interval, geography_bbox_of_wkb, wkb_info};

use crate::error::PruneError;
use crate::window::{QueryBox, Surface, XRange, grow_geography, grow_planar};

/// The spatial predicate of a scan filter. For pruning each reduces to a box test; the exact
/// predicate is evaluated on the rows that are read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BoxPredicate {
    /// The row geometry shares a point with the window (`ST_Intersects`); touching counts.
    Intersects,
    /// The window contains the row geometry (`ST_Contains(window, geom)`).
    Contains,
    /// The row geometry lies within the window (`ST_Within(geom, window)`).
    Within,
    /// The row geometry is at most `distance` from the window (`ST_DWithin`): in column units for
    /// geometry, in metres for geography. Compares X and Y only.
    DistanceWithin {
        /// Largest distance; finite and not negative.
        distance: f64,
    },
}

impl fmt::Display for BoxPredicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoxPredicate::Intersects => f.write_str("intersects"),
            BoxPredicate::Contains => f.write_str("contains"),
            BoxPredicate::Within => f.write_str("within"),
            BoxPredicate::DistanceWithin { distance } => write!(f, "distance-within {distance}"),
        }
    }
}

/// The query region: a box, or a WKB geometry of which only the box matters for pruning.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Window {
    /// The region is exactly this box (for geography, a lon/lat box; X may wrap).
    Box(BBox),
    /// A geometry: its planar box (geometry columns) and its box on the sphere (geography
    /// columns: great-circle edges, poles and the antimeridian, by
    /// `geoberg_geostats::geography_bbox_of_wkb`). `None`: the geometry is empty and matches
    /// nothing.
    Geometry {
        planar: Option<BBox>,
        geographic: Option<BBox>,
    },
}

/// A spatial scan filter: predicate, window, and optionally the CRS the window is written in.
///
/// ```
/// use geoberg_geostats::BBox;
/// use geoberg_pruning::{BoxPredicate, BoxFilter};
/// let f = BoxFilter::intersects(BBox::new(0.0, 0.0, 10.0, 10.0));
/// assert_eq!(f.predicate(), BoxPredicate::Intersects);
/// assert_eq!(f.to_string(), "intersects box x [0, 10] y [0, 10]");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct BoxFilter {
    predicate: BoxPredicate,
    window: Window,
    crs: Option<Crs>,
}

impl BoxFilter {
    /// A filter whose window is a box.
    pub fn new(predicate: BoxPredicate, window: BBox) -> Self {
        BoxFilter {
            predicate,
            window: Window::Box(window),
            crs: None,
        }
    }

    /// Rows whose geometry intersects `window`.
    pub fn intersects(window: BBox) -> Self {
        Self::new(BoxPredicate::Intersects, window)
    }

    /// Rows whose geometry `window` contains.
    pub fn contains(window: BBox) -> Self {
        Self::new(BoxPredicate::Contains, window)
    }

    /// Rows whose geometry lies within `window`.
    pub fn within(window: BBox) -> Self {
        Self::new(BoxPredicate::Within, window)
    }

    /// Rows whose geometry is at most `distance` from `window`.
    pub fn distance_within(window: BBox, distance: f64) -> Self {
        Self::new(BoxPredicate::DistanceWithin { distance }, window)
    }

    /// A filter whose window is a WKB or EWKB geometry; an EWKB SRID becomes the window's CRS
    /// (`srid:<n>`).
    ///
    /// Fails when the WKB cannot be decoded. An empty geometry is a valid window that matches
    /// no row.
    pub fn from_wkb(predicate: BoxPredicate, wkb: &[u8]) -> Result<Self, PruneError> {
        let info = wkb_info(wkb)?;
        let geographic = geography_bbox_of_wkb(wkb)?;
        Ok(BoxFilter {
            predicate,
            window: Window::Geometry {
                planar: info.bbox,
                geographic,
            },
            crs: info.srid.map(Crs::Srid),
        })
    }

    /// Declares the CRS the window's coordinates are in; planning fails when it differs from
    /// the column's CRS. Without one the window is taken to be in the column's CRS.
    pub fn with_crs(mut self, crs: Crs) -> Self {
        self.crs = Some(crs);
        self
    }

    /// The predicate.
    pub fn predicate(&self) -> BoxPredicate {
        self.predicate
    }

    /// The CRS the window is declared in, if any (an EWKB window's SRID counts).
    pub fn crs(&self) -> Option<&Crs> {
        self.crs.as_ref()
    }

    /// The window's box as a planar geometry column sees it; `None` for an empty geometry.
    pub fn window(&self) -> Option<BBox> {
        match self.window {
            Window::Box(b) => Some(b),
            Window::Geometry { planar, .. } => planar,
        }
    }

    /// The box entries are tested against; `None` when the window matches nothing.
    pub(crate) fn query(&self, surface: Surface) -> Result<Option<QueryBox>, PruneError> {
        let b = match (self.window, surface) {
            (Window::Box(b), _) => b,
            (Window::Geometry { planar: None, .. }, Surface::Planar)
            | (
                Window::Geometry {
                    geographic: None, ..
                },
                Surface::Sphere,
            ) => return Ok(None),
            (
                Window::Geometry {
                    planar: Some(b), ..
                },
                Surface::Planar,
            ) => b,
            (
                Window::Geometry {
                    geographic: Some(b),
                    ..
                },
                Surface::Sphere,
            ) => b,
        };
        check_window(&b, surface)?;
        let mut q = QueryBox {
            x: if b.min_x > b.max_x {
                XRange::Wrap(b.x())
            } else {
                XRange::Plain(b.x())
            },
            y: b.y(),
            z: b.z,
            m: b.m,
            surface,
        };
        if let BoxPredicate::DistanceWithin { distance } = self.predicate {
            if !(distance.is_finite() && distance >= 0.0) {
                return Err(PruneError::InvalidDistance { distance });
            }
            (q.x, q.y) = match (surface, q.x) {
                (Surface::Planar, XRange::Plain(x)) => {
                    let (x, y) = grow_planar(x, q.y, distance);
                    (XRange::Plain(x), y)
                }
                (_, x) => grow_geography(x, q.y, distance),
            };
            // Distance is measured in X/Y only.
            q.z = None;
            q.m = None;
        }
        Ok(Some(q))
    }
}

/// Validates a window box for the column's surface.
fn check_window(b: &BBox, surface: Surface) -> Result<(), PruneError> {
    let bad = |problem: &'static str| PruneError::InvalidWindow {
        window: fmt_box(b),
        problem,
    };
    let nan = |i: Interval| i.min.is_nan() || i.max.is_nan();
    if nan(b.x()) || nan(b.y()) || b.z.is_some_and(nan) || b.m.is_some_and(nan) {
        return Err(bad("a coordinate is NaN; give every bound a number"));
    }
    if b.min_y > b.max_y || b.z.is_some_and(|z| z.min > z.max) || b.m.is_some_and(|m| m.min > m.max)
    {
        return Err(bad("a lower bound is above its upper bound; swap them"));
    }
    match surface {
        Surface::Planar if b.min_x > b.max_x => Err(bad(
            "min x is above max x, and only geography windows may wrap the antimeridian; swap \
             them, or split the window in two",
        )),
        Surface::Sphere
            if !(-180.0..=180.0).contains(&b.min_x)
                || !(-180.0..=180.0).contains(&b.max_x)
                || !(-90.0..=90.0).contains(&b.min_y)
                || !(-90.0..=90.0).contains(&b.max_y) =>
        {
            Err(bad(
                "geography windows must lie in longitude [-180, 180] and latitude [-90, 90]; to \
                 cross the antimeridian give min x > max x (e.g. 170 .. -170)",
            ))
        }
        _ => Ok(()),
    }
}

/// `x [min, max] y [min, max]` plus Z and M when present.
pub(crate) fn fmt_box(b: &BBox) -> String {
    let mut s = format!("x [{}, {}] y [{}, {}]", b.min_x, b.max_x, b.min_y, b.max_y);
    if let Some(z) = b.z {
        s.push_str(&format!(" z [{}, {}]", z.min, z.max));
    }
    if let Some(m) = b.m {
        s.push_str(&format!(" m [{}, {}]", m.min, m.max));
    }
    s
}

impl fmt::Display for BoxFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.window {
            Window::Box(b) => write!(f, "{} box {}", self.predicate, fmt_box(&b))?,
            Window::Geometry {
                planar: Some(b), ..
            } => write!(f, "{} geometry with box {}", self.predicate, fmt_box(&b))?,
            Window::Geometry { planar: None, .. } => {
                write!(f, "{} empty geometry", self.predicate)?
            }
        }
        if let Some(crs) = &self.crs {
            write!(f, " in {crs}")?;
        }
        Ok(())
    }
}
