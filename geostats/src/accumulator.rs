//! Unions of boxes: the bounds of a row group or a data file.

use arrow_array::Array;

use crate::batch::for_each_wkb;
use crate::bbox::BBox;
use crate::error::GeostatsError;
use crate::extent::{PlanarXY, XYSink, ZMExtent, planar_bbox};
use crate::lon_cover::LonBins;
use crate::spherical_bounds::{SphericalBounder, clean};
use crate::wkb_bbox::geography_bbox_with;
use crate::wkb_scan::scan_wkb;

/// Planar union of boxes, for `geometry` columns.
///
/// `None` inputs (null or empty geometries) are ignored; the union is associative and
/// commutative, so row groups and files can be folded in any order and merged across threads.
///
/// ```
/// use geoberg_geostats::{BBox, BBoxAccumulator};
/// let mut acc = BBoxAccumulator::new();
/// acc.add(Some(BBox::point(1.0, 2.0)));
/// acc.add(None);
/// acc.add(Some(BBox::new(-1.0, 0.0, 0.0, 5.0)));
/// assert_eq!(acc.finish(), Some(BBox::new(-1.0, 0.0, 1.0, 5.0)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BBoxAccumulator {
    xy: PlanarXY,
    zm: ZMExtent,
}

impl Default for BBoxAccumulator {
    fn default() -> Self {
        Self::new()
    }
}

impl BBoxAccumulator {
    /// An accumulator that has seen nothing; [`finish`](Self::finish) gives `None`.
    pub const fn new() -> Self {
        BBoxAccumulator {
            xy: PlanarXY::EMPTY,
            zm: ZMExtent::EMPTY,
        }
    }

    /// Adds a box. An inverted box (`min > max`) contributes both its corners, so the union
    /// still covers whatever the row meant; NaN values are skipped.
    pub fn add(&mut self, bbox: Option<BBox>) {
        if let Some(b) = bbox {
            self.xy.add_box(&b);
            self.zm.add_box(&b);
        }
    }

    /// Adds the box of one WKB value without materializing it.
    pub fn add_wkb(&mut self, wkb: &[u8]) -> Result<(), GeostatsError> {
        scan_wkb(wkb, &mut self.xy, &mut self.zm).map(|_| ())
    }

    /// Adds every non-null value of a `Binary`, `LargeBinary` or `BinaryView` WKB column; errors
    /// carry the row index.
    pub fn add_wkb_array(&mut self, array: &dyn Array) -> Result<(), GeostatsError> {
        let (xy, zm) = (&mut self.xy, &mut self.zm);
        for_each_wkb(array, |row, wkb| {
            scan_wkb(wkb, xy, zm).map_err(|e| e.at_row(row))?;
            Ok(())
        })
    }

    /// Folds in another accumulator (a row group into a file, one thread's part into another's).
    pub fn merge(&mut self, other: &BBoxAccumulator) {
        self.xy.merge(&other.xy);
        self.zm.merge(&other.zm);
    }

    /// The union so far, `None` when nothing with a box was added.
    pub fn finish(&self) -> Option<BBox> {
        planar_bbox(&self.xy, &self.zm)
    }
}

/// Union of boxes for `geography` columns, whose X range may wrap the antimeridian.
///
/// The X range of the union is the smallest longitude interval covering every added box (the
/// complement of the largest uncovered gap), wrapping (`min_x > max_x`, meaning
/// `x >= min_x || x <= max_x`) when that is narrower. Covered longitudes are kept in 256 bins,
/// each with the exact extreme longitudes covered inside it, so the union is exact unless the
/// largest gap is narrower than a bin (1.4°), and it does not depend on the order of adds and
/// merges. Longitudes are clamped to [-180, 180]. [`add_wkb`](Self::add_wkb) bounds each value on
/// the sphere ([`crate::geography_bbox_of_wkb`]).
///
/// ```
/// use geoberg_geostats::{BBox, GeographyBBoxAccumulator};
/// let mut acc = GeographyBBoxAccumulator::new();
/// acc.add(Some(BBox::point(170.0, 10.0)));
/// acc.add(Some(BBox::point(-175.0, 20.0)));
/// assert_eq!(acc.finish(), Some(BBox::new(170.0, 10.0, -175.0, 20.0)));
/// ```
#[derive(Debug, Clone)]
pub struct GeographyBBoxAccumulator {
    lon: LonBins,
    min_y: f64,
    max_y: f64,
    zm: ZMExtent,
    /// Scratch space for [`Self::add_wkb`]; not part of the state.
    bounder: SphericalBounder,
}

impl PartialEq for GeographyBBoxAccumulator {
    fn eq(&self, o: &Self) -> bool {
        self.lon == o.lon && self.min_y == o.min_y && self.max_y == o.max_y && self.zm == o.zm
    }
}

impl Default for GeographyBBoxAccumulator {
    fn default() -> Self {
        Self::new()
    }
}

impl GeographyBBoxAccumulator {
    /// An accumulator that has seen nothing.
    pub fn new() -> Self {
        GeographyBBoxAccumulator {
            lon: LonBins::new(),
            min_y: f64::INFINITY,
            max_y: f64::NEG_INFINITY,
            zm: ZMExtent::EMPTY,
            bounder: SphericalBounder::new(),
        }
    }

    /// Adds a box, which may itself wrap (`min_x > max_x`). A box with NaN in X or Y is skipped.
    pub fn add(&mut self, bbox: Option<BBox>) {
        let Some(b) = bbox else { return };
        if [b.min_x, b.max_x, b.min_y, b.max_y]
            .iter()
            .any(|v| v.is_nan())
        {
            return;
        }
        self.lon.add(b.min_x, b.max_x);
        self.min_y = self.min_y.min(b.min_y.min(b.max_y));
        self.max_y = self.max_y.max(b.max_y.max(b.min_y));
        self.zm.add_box(&b);
    }

    /// Adds one WKB value, bounded on the sphere as by [`crate::geography_bbox_of_wkb`].
    pub fn add_wkb(&mut self, wkb: &[u8]) -> Result<(), GeostatsError> {
        if self.add_le_point(wkb) {
            return Ok(());
        }
        let b = geography_bbox_with(&mut self.bounder, wkb)?;
        self.add(b);
        Ok(())
    }

    /// Adds every non-null value of a WKB column; errors carry the row index.
    pub fn add_wkb_array(&mut self, array: &dyn Array) -> Result<(), GeostatsError> {
        for_each_wkb(array, |row, wkb| {
            if self.add_le_point(wkb) {
                return Ok(());
            }
            let b = geography_bbox_with(&mut self.bounder, wkb).map_err(|e| e.at_row(row))?;
            self.add(b);
            Ok(())
        })
    }

    /// The common case of point columns: a 21-byte little-endian XY POINT is its own box (as
    /// the spherical bounder makes it), added without the general scan. `false` for anything
    /// else.
    #[inline]
    fn add_le_point(&mut self, wkb: &[u8]) -> bool {
        let Ok(b) = <&[u8; 21]>::try_from(wkb) else {
            return false;
        };
        if b[..5] != [1, 1, 0, 0, 0] {
            return false;
        }
        let f = |at: usize| {
            let mut a = [0; 8];
            a.copy_from_slice(&b[at..at + 8]);
            f64::from_le_bytes(a)
        };
        if let Some((x, y)) = clean(f(5), f(13)) {
            self.lon.add(x, x);
            self.min_y = self.min_y.min(y);
            self.max_y = self.max_y.max(y);
        }
        true
    }

    /// Folds in another accumulator.
    pub fn merge(&mut self, other: &GeographyBBoxAccumulator) {
        self.lon.merge(&other.lon);
        self.min_y = self.min_y.min(other.min_y);
        self.max_y = self.max_y.max(other.max_y);
        self.zm.merge(&other.zm);
    }

    /// The covering box so far, possibly wrapping; `None` when nothing with a box was added.
    pub fn finish(&self) -> Option<BBox> {
        let x = self.lon.cover()?;
        (self.min_y <= self.max_y).then(|| BBox {
            min_x: x.min_x,
            min_y: self.min_y,
            max_x: x.max_x,
            max_y: self.max_y,
            z: self.zm.z(),
            m: self.zm.m(),
        })
    }
}
