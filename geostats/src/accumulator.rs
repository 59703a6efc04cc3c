//! Unions of boxes: the bounds of a row group or a data file.

use arrow_array::Array;

use crate::batch::for_each_wkb;
use crate::bbox::BBox;
use crate::error::GeostatsError;
use crate::extent::{GeographicXY, PlanarXY, XYSink, ZMExtent, geographic_bbox, planar_bbox};
use crate::wkb_bbox::geography_bbox_of_wkb;
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
/// It keeps the planar range plus the smallest non-negative and the largest negative longitude
/// covered by the added boxes.
/// [`finish`](Self::finish) returns the narrower of two covering ranges: the planar one, or the
/// wrapping one from the smallest eastern to the largest western longitude (`min_x > max_x`,
/// meaning `x >= min_x || x <= max_x`). Both candidates are functions of min/max aggregates, so
/// the result does not depend on the order of adds and merges. Longitudes are expected in
/// [-180, 180].
///
/// ```
/// use geoberg_geostats::{BBox, GeographyBBoxAccumulator};
/// let mut acc = GeographyBBoxAccumulator::new();
/// acc.add(Some(BBox::point(170.0, 10.0)));
/// acc.add(Some(BBox::point(-175.0, 20.0)));
/// assert_eq!(acc.finish(), Some(BBox::new(170.0, 10.0, -175.0, 20.0)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeographyBBoxAccumulator {
    xy: GeographicXY,
    zm: ZMExtent,
}

impl Default for GeographyBBoxAccumulator {
    fn default() -> Self {
        Self::new()
    }
}

impl GeographyBBoxAccumulator {
    /// An accumulator that has seen nothing.
    pub const fn new() -> Self {
        GeographyBBoxAccumulator {
            xy: GeographicXY::EMPTY,
            zm: ZMExtent::EMPTY,
        }
    }

    /// Adds a box, which may itself wrap (`min_x > max_x`).
    pub fn add(&mut self, bbox: Option<BBox>) {
        if let Some(b) = bbox {
            self.xy.add_box(&b);
            self.zm.add_box(&b);
        }
    }

    /// Adds the box of one WKB value, computed as by [`crate::geography_bbox_of_wkb`]: the
    /// value's own box may wrap, and a value spanning the prime meridian keeps the union from
    /// wrapping through it.
    pub fn add_wkb(&mut self, wkb: &[u8]) -> Result<(), GeostatsError> {
        self.add(geography_bbox_of_wkb(wkb)?);
        Ok(())
    }

    /// Adds every non-null value of a WKB column; errors carry the row index.
    pub fn add_wkb_array(&mut self, array: &dyn Array) -> Result<(), GeostatsError> {
        for_each_wkb(array, |row, wkb| {
            self.add(geography_bbox_of_wkb(wkb).map_err(|e| e.at_row(row))?);
            Ok(())
        })
    }

    /// Folds in another accumulator.
    pub fn merge(&mut self, other: &GeographyBBoxAccumulator) {
        self.xy.merge(&other.xy);
        self.zm.merge(&other.zm);
    }

    /// The covering box so far, possibly wrapping; `None` when nothing with a box was added.
    pub fn finish(&self) -> Option<BBox> {
        geographic_bbox(&self.xy, &self.zm)
    }
}
