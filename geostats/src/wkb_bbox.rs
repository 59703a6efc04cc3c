//! The bounding box of one WKB value.

use crate::bbox::BBox;
use crate::error::GeostatsError;
use crate::extent::{PlanarXY, XYSink, ZMExtent, planar_bbox};
use crate::spherical_bounds::SphericalBounder;
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

/// The box of a WKB value read as geography: it holds every point of the value on the sphere,
/// edges being great-circle arcs, not only its vertices.
///
/// * Latitude: the vertices plus each edge's poleward (or equatorward) bulge, as S2's
///   `S2LatLngRectBounder` computes it, with a margin of a few ulp; a polygon that contains a
///   pole reaches it. Points and vertices are taken exactly.
/// * Longitude: the smallest range covering the vertices and edges, wrapping the antimeridian
///   (`min_x > max_x`) when that is narrower; every longitude when a line or ring reaches a pole,
///   a polygon contains one, or an edge joins nearly opposite meridians. A point at a pole keeps
///   its own longitude (as S2-based writers store it): readers must treat any box that reaches
///   latitude ±90 as spanning every longitude, as `geoberg-pruning` does.
/// * Polygon rings are read as s2geography reads WKB (orientation does not matter: each ring
///   bounds the smaller of its two sides, holes by nesting).
/// * Coordinates are placed on the sphere as S2 places them: NaN or infinite vertices are
///   skipped, latitudes clamped to [-90, 90], longitudes a few ulp past ±180 clamped to ±180 and
///   others wrapped into [-180, 180]. Z and M are bounded as by [`bbox_of_wkb`].
///
/// ```
/// use geoberg_geostats::geography_bbox_of_wkb;
/// // LINESTRING (-90 60, 90 60): the great circle passes over the North Pole.
/// let mut wkb = vec![1, 2, 0, 0, 0, 2, 0, 0, 0];
/// for v in [-90.0f64, 60.0, 90.0, 60.0] {
///     wkb.extend(v.to_le_bytes());
/// }
/// let b = geography_bbox_of_wkb(&wkb).unwrap().unwrap();
/// assert_eq!((b.min_x, b.max_x, b.min_y, b.max_y), (-180.0, 180.0, 60.0, 90.0));
/// ```
pub fn geography_bbox_of_wkb(wkb: &[u8]) -> Result<Option<BBox>, GeostatsError> {
    thread_local! {
        // One bounder per thread, so that its buffers are allocated once, not per value.
        static BOUNDER: std::cell::RefCell<SphericalBounder> =
            std::cell::RefCell::new(SphericalBounder::new());
    }
    BOUNDER.with(|b| match b.try_borrow_mut() {
        Ok(mut bounder) => geography_bbox_with(&mut bounder, wkb),
        Err(_) => geography_bbox_with(&mut SphericalBounder::new(), wkb),
    })
}

/// [`geography_bbox_of_wkb`] with a bounder whose buffers are reused.
pub(crate) fn geography_bbox_with(
    bounder: &mut SphericalBounder,
    wkb: &[u8],
) -> Result<Option<BBox>, GeostatsError> {
    bounder.reset();
    let mut zm = ZMExtent::EMPTY;
    scan_wkb(wkb, bounder, &mut zm)?;
    Ok(bounder.finish(&zm))
}
