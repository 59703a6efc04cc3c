//! Running min/max state the WKB scanner feeds, one coordinate at a time.
//!
//! Every update is a compare-select (`if v < min { v } else { min }`) on accumulators that start
//! at ±infinity. That compiles to one `minsd`/`minpd` per update and, because a comparison with
//! NaN is false, skips NaN coordinates exactly as the Iceberg bound rules ask, per dimension.

use crate::bbox::{BBox, Interval};

/// What the scanner needs from a planar XY accumulator ([`PlanarXY`]); geography values go to
/// [`crate::spherical_bounds::SphericalBounder`] instead.
pub(crate) trait XYSink: Copy {
    /// The state before any coordinate.
    const EMPTY: Self;
    /// Adds one coordinate; NaN values are skipped per axis.
    fn add_xy(&mut self, x: f64, y: f64);
    /// Folds another state into this one.
    fn merge(&mut self, other: &Self);
}

#[inline(always)]
pub(crate) fn min_sel(v: f64, acc: f64) -> f64 {
    if v < acc { v } else { acc }
}

#[inline(always)]
pub(crate) fn max_sel(v: f64, acc: f64) -> f64 {
    if v > acc { v } else { acc }
}

/// Planar X/Y min/max. Field order keeps (min_x, min_y) and (max_x, max_y) adjacent so LLVM can
/// pack each pair into one SSE register.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PlanarXY {
    pub min_x: f64,
    pub min_y: f64,
    pub max_x: f64,
    pub max_y: f64,
}

impl XYSink for PlanarXY {
    const EMPTY: Self = PlanarXY {
        min_x: f64::INFINITY,
        min_y: f64::INFINITY,
        max_x: f64::NEG_INFINITY,
        max_y: f64::NEG_INFINITY,
    };

    #[inline(always)]
    fn add_xy(&mut self, x: f64, y: f64) {
        self.min_x = min_sel(x, self.min_x);
        self.min_y = min_sel(y, self.min_y);
        self.max_x = max_sel(x, self.max_x);
        self.max_y = max_sel(y, self.max_y);
    }

    #[inline(always)]
    fn merge(&mut self, o: &Self) {
        self.min_x = min_sel(o.min_x, self.min_x);
        self.min_y = min_sel(o.min_y, self.min_y);
        self.max_x = max_sel(o.max_x, self.max_x);
        self.max_y = max_sel(o.max_y, self.max_y);
    }
}

impl PlanarXY {
    /// Both axes saw a non-NaN value. After any value `min <= max`, so an untouched axis is the
    /// only way to get `min > max`.
    #[inline(always)]
    pub fn has_box(&self) -> bool {
        self.min_x <= self.max_x && self.min_y <= self.max_y
    }

    /// Adds the two corners of a box; for a valid box that is its union.
    pub fn add_box(&mut self, b: &BBox) {
        self.add_xy(b.min_x, b.min_y);
        self.add_xy(b.max_x, b.max_y);
    }
}

/// Z and M min/max, touched only by geometries that have those dimensions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ZMExtent {
    pub min_z: f64,
    pub max_z: f64,
    pub min_m: f64,
    pub max_m: f64,
}

impl ZMExtent {
    pub const EMPTY: Self = ZMExtent {
        min_z: f64::INFINITY,
        max_z: f64::NEG_INFINITY,
        min_m: f64::INFINITY,
        max_m: f64::NEG_INFINITY,
    };

    #[inline(always)]
    pub fn add_z(&mut self, z: f64) {
        self.min_z = min_sel(z, self.min_z);
        self.max_z = max_sel(z, self.max_z);
    }

    #[inline(always)]
    pub fn add_m(&mut self, m: f64) {
        self.min_m = min_sel(m, self.min_m);
        self.max_m = max_sel(m, self.max_m);
    }

    pub fn merge(&mut self, o: &Self) {
        self.min_z = min_sel(o.min_z, self.min_z);
        self.max_z = max_sel(o.max_z, self.max_z);
        self.min_m = min_sel(o.min_m, self.min_m);
        self.max_m = max_sel(o.max_m, self.max_m);
    }

    pub fn add_box(&mut self, b: &BBox) {
        if let Some(z) = b.z {
            self.add_z(z.min);
            self.add_z(z.max);
        }
        if let Some(m) = b.m {
            self.add_m(m.min);
            self.add_m(m.max);
        }
    }

    pub fn z(&self) -> Option<Interval> {
        (self.min_z <= self.max_z).then_some(Interval::new(self.min_z, self.max_z))
    }

    pub fn m(&self) -> Option<Interval> {
        (self.min_m <= self.max_m).then_some(Interval::new(self.min_m, self.max_m))
    }
}

/// The box of a planar extent, or `None` when X or Y saw no value.
#[inline]
pub(crate) fn planar_bbox(xy: &PlanarXY, zm: &ZMExtent) -> Option<BBox> {
    xy.has_box().then(|| BBox {
        min_x: xy.min_x,
        min_y: xy.min_y,
        max_x: xy.max_x,
        max_y: xy.max_y,
        z: zm.z(),
        m: zm.m(),
    })
}
