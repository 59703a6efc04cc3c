//! Axis-aligned boxes: what every pruning decision compares.

use geoberg_crs::Extent;

/// A closed range `[min, max]` of one coordinate dimension.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Interval {
    /// A range from `min` to `max`.
    pub const fn new(min: f64, max: f64) -> Self {
        Interval { min, max }
    }

    /// The smallest range holding both.
    pub fn union(self, other: Interval) -> Interval {
        Interval {
            min: if other.min < self.min {
                other.min
            } else {
                self.min
            },
            max: if other.max > self.max {
                other.max
            } else {
                self.max
            },
        }
    }

    /// Whether the ranges share a value (closed ends).
    pub fn intersects(self, other: Interval) -> bool {
        self.min <= other.max && other.min <= self.max
    }

    /// Whether `v` lies in the range (closed ends).
    pub fn contains(self, v: f64) -> bool {
        self.min <= v && v <= self.max
    }

    /// `min <= max` and neither is NaN; a single value is a valid (degenerate) range.
    pub fn is_valid(self) -> bool {
        self.min <= self.max
    }
}

/// Union of two optional ranges: a dimension missing on one side (all NaN or absent there) does
/// not erase the values of the other.
pub(crate) fn union_opt(a: Option<Interval>, b: Option<Interval>) -> Option<Interval> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.union(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// A bounding box in X/Y with optional Z and M ranges.
///
/// A box exists only when X and Y have at least one non-NaN value; empty geometries have no box
/// (`Option<BBox>::None`), never a box of zeros. A point is a degenerate box (`min == max`).
///
/// For geography the X range may wrap the antimeridian (`min_x > max_x` means
/// `x >= min_x || x <= max_x`); see [`crate::GeographyBBoxAccumulator`]. Every other method here
/// treats the box as planar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BBox {
    /// Smallest X (longitude, easting).
    pub min_x: f64,
    /// Smallest Y (latitude, northing).
    pub min_y: f64,
    /// Largest X.
    pub max_x: f64,
    /// Largest Y.
    pub max_y: f64,
    /// Z range, when the geometry has non-NaN Z values.
    pub z: Option<Interval>,
    /// M range, when the geometry has non-NaN M values.
    pub m: Option<Interval>,
}

/// The XY box of an [`Extent`] (no Z or M range): the one conversion between the `crs` crate's
/// rectangle and this crate's box.
impl From<Extent> for BBox {
    fn from(e: Extent) -> Self {
        BBox::new(e.min_x, e.min_y, e.max_x, e.max_y)
    }
}

/// The XY rectangle of a box; its Z and M ranges are dropped.
impl From<BBox> for Extent {
    fn from(b: BBox) -> Self {
        Extent::new(b.min_x, b.min_y, b.max_x, b.max_y)
    }
}

impl BBox {
    /// An XY box.
    pub const fn new(min_x: f64, min_y: f64, max_x: f64, max_y: f64) -> Self {
        BBox {
            min_x,
            min_y,
            max_x,
            max_y,
            z: None,
            m: None,
        }
    }

    /// The degenerate box of one XY point.
    pub const fn point(x: f64, y: f64) -> Self {
        BBox::new(x, y, x, y)
    }

    /// The same box with a Z range.
    pub const fn with_z(mut self, z: Interval) -> Self {
        self.z = Some(z);
        self
    }

    /// The same box with an M range.
    pub const fn with_m(mut self, m: Interval) -> Self {
        self.m = Some(m);
        self
    }

    /// X range.
    pub const fn x(&self) -> Interval {
        Interval::new(self.min_x, self.max_x)
    }

    /// Y range.
    pub const fn y(&self) -> Interval {
        Interval::new(self.min_y, self.max_y)
    }

    /// The smallest planar box holding both; Z and M are unioned where present.
    pub fn union(&self, other: &BBox) -> BBox {
        let x = self.x().union(other.x());
        let y = self.y().union(other.y());
        BBox {
            min_x: x.min,
            min_y: y.min,
            max_x: x.max,
            max_y: y.max,
            z: union_opt(self.z, other.z),
            m: union_opt(self.m, other.m),
        }
    }

    /// Whether the XY boxes share a point (closed edges, so touching boxes intersect).
    pub fn intersects(&self, other: &BBox) -> bool {
        self.x().intersects(other.x()) && self.y().intersects(other.y())
    }

    /// Whether the XY point lies in the box (closed edges).
    pub fn contains_point(&self, x: f64, y: f64) -> bool {
        self.x().contains(x) && self.y().contains(y)
    }

    /// Centre of the XY box: the key space-filling curves sort by.
    pub fn center(&self) -> (f64, f64) {
        (
            self.min_x + (self.max_x - self.min_x) / 2.0,
            self.min_y + (self.max_y - self.min_y) / 2.0,
        )
    }

    /// `min <= max` on every dimension present (non-strict, so points pass; NaN fails).
    pub fn is_valid(&self) -> bool {
        self.x().is_valid()
            && self.y().is_valid()
            && self.z.is_none_or(Interval::is_valid)
            && self.m.is_none_or(Interval::is_valid)
    }
}
