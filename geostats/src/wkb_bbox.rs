//! The bounding box of one WKB value.

use crate::bbox::BBox;
use crate::error::GeostatsError;
use crate::extent::{GeographicXY, PlanarXY, XYSink, ZMExtent, geographic_bbox, planar_bbox};
use crate::wkb_scan::scan_wkb;

/// What one WKB value tells a writer: its box and the SRID an EWKB value carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WkbInfo {
    /// The box, `None` for empty geometries (no coordinates, or X or Y only NaN).
    pub bbox: Option<BBox>,
    /// The EWKB SRID (flag `0x20000000`), `None` for ISO WKB. Read as the signed 32-bit integer
    /// PostGIS writes.
    pub srid: Option<i32>,
}

/// The planar bounding box of an ISO WKB or EWKB value (any byte order, XY/Z/M/ZM, all seven
/// OGC types).
///
/// Empty geometries give `Ok(None)`, never zeros. NaN coordinates are skipped per dimension
/// (Iceberg's bound rule): Z or M ranges are omitted when they hold only NaN, and there is no box
/// when X or Y does.
///
/// ```
/// use geoberg_geostats::{bbox_of_wkb, BBox};
/// // POINT (1 2), little-endian ISO WKB
/// let mut wkb = vec![1, 1, 0, 0, 0];
/// wkb.extend(1f64.to_le_bytes());
/// wkb.extend(2f64.to_le_bytes());
/// assert_eq!(bbox_of_wkb(&wkb).unwrap(), Some(BBox::point(1.0, 2.0)));
/// ```
pub fn bbox_of_wkb(wkb: &[u8]) -> Result<Option<BBox>, GeostatsError> {
    wkb_info(wkb).map(|i| i.bbox)
}

/// [`bbox_of_wkb`] plus the EWKB SRID, in one pass.
pub fn wkb_info(wkb: &[u8]) -> Result<WkbInfo, GeostatsError> {
    let mut xy = PlanarXY::EMPTY;
    let mut zm = ZMExtent::EMPTY;
    let srid = scan_wkb(wkb, &mut xy, &mut zm)?;
    Ok(WkbInfo {
        bbox: planar_bbox(&xy, &zm),
        srid,
    })
}

/// The box of a WKB value read as geography: like [`bbox_of_wkb`], except that the X range wraps
/// the antimeridian (`min_x > max_x`) when that covers the vertices with a narrower longitude
/// range, e.g. a line from 170° to -170° gives `min_x = 170, max_x = -170`.
///
/// The box bounds the vertices; geodesic edges between vertices can bulge poleward beyond it.
pub fn geography_bbox_of_wkb(wkb: &[u8]) -> Result<Option<BBox>, GeostatsError> {
    let mut xy = GeographicXY::EMPTY;
    let mut zm = ZMExtent::EMPTY;
    scan_wkb(wkb, &mut xy, &mut zm)?;
    Ok(geographic_bbox(&xy, &zm))
}
