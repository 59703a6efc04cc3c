//! A minimal little-endian WKB / EWKB writer for the three shapes the generators emit. Writing
//! straight into a reused buffer keeps generation allocation-free per row.

use crate::model::{Feature, ShapeKind};

/// Geometry encoding of the generated column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum GeometryEncoding {
    /// ISO/OGC WKB, 2D (what Iceberg v3 geometry columns and GeoParquet store).
    #[default]
    Wkb,
    /// PostGIS extended WKB: the SRID flag (0x20000000) and the SRID after the type code, for
    /// exercising SRID checks on write.
    Ewkb,
}

const EWKB_SRID_FLAG: u32 = 0x2000_0000;

/// Appends the encoding of `feature` (already in CRS coordinates) to `out`.
pub(crate) fn write_wkb(
    feature: &Feature,
    encoding: GeometryEncoding,
    srid: u32,
    out: &mut Vec<u8>,
) {
    let type_code: u32 = match feature.kind {
        ShapeKind::Point => 1,
        ShapeKind::LineString => 2,
        ShapeKind::Polygon => 3,
    };
    out.push(1); // little endian
    match encoding {
        GeometryEncoding::Wkb => out.extend_from_slice(&type_code.to_le_bytes()),
        GeometryEncoding::Ewkb => {
            out.extend_from_slice(&(type_code | EWKB_SRID_FLAG).to_le_bytes());
            out.extend_from_slice(&srid.to_le_bytes());
        }
    }
    match feature.kind {
        ShapeKind::Point => {}
        ShapeKind::LineString => out.extend_from_slice(&len_u32(&feature.coords).to_le_bytes()),
        ShapeKind::Polygon => {
            out.extend_from_slice(&1u32.to_le_bytes()); // one ring
            out.extend_from_slice(&len_u32(&feature.coords).to_le_bytes());
        }
    }
    for [x, y] in &feature.coords {
        out.extend_from_slice(&x.to_le_bytes());
        out.extend_from_slice(&y.to_le_bytes());
    }
}

/// Encoded length without encoding, for the layout simulator's byte model.
pub(crate) fn wkb_len(feature: &Feature, encoding: GeometryEncoding) -> usize {
    let header = 5 + if encoding == GeometryEncoding::Ewkb {
        4
    } else {
        0
    };
    let counts = match feature.kind {
        ShapeKind::Point => 0,
        ShapeKind::LineString => 4,
        ShapeKind::Polygon => 8,
    };
    header + counts + 16 * feature.coords.len()
}

fn len_u32(coords: &[[f64; 2]]) -> u32 {
    // Generated shapes have at most a few dozen vertices.
    u32::try_from(coords.len()).unwrap_or(u32::MAX)
}
