//! Iceberg spec, "Bounds for Geometry and Geography" and Appendix D "Bound serialization":
//! the `lower_bounds` / `upper_bounds` entries of a `geometry` or `geography` column.
//!
//! Each bound is one point, the concatenation of little-endian f64 coordinates: `x:y` (16
//! bytes), `x:y:z` (24 bytes) or `x:y:z:m` (32 bytes, z = NaN when only M is present).

use crate::bbox::{BBox, Interval};
use crate::error::GeostatsError;

/// Whether a column holds planar `geometry` or spherical `geography`: only geography bounds may
/// wrap the antimeridian.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeoKind {
    /// Planar; `xmin <= xmax` always.
    Geometry,
    /// On the sphere; `xmin > xmax` means the box crosses the antimeridian.
    Geography,
}

/// One bound point: the lower corner (`x`, `y`, `z`, `m` minima) or the upper corner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeospatialBound {
    /// X (longitude, easting).
    pub x: f64,
    /// Y (latitude, northing).
    pub y: f64,
    /// Z, when the file has Z values.
    pub z: Option<f64>,
    /// M, when the file has M values.
    pub m: Option<f64>,
}

fn f64_le(b: &[u8], at: usize) -> f64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    f64::from_le_bytes(a)
}

impl GeospatialBound {
    /// Serializes as the spec says: 16, 24 or 32 bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32);
        out.extend_from_slice(&self.x.to_le_bytes());
        out.extend_from_slice(&self.y.to_le_bytes());
        match (self.z, self.m) {
            (None, None) => {}
            (Some(z), None) => out.extend_from_slice(&z.to_le_bytes()),
            (z, Some(m)) => {
                out.extend_from_slice(&z.unwrap_or(f64::NAN).to_le_bytes());
                out.extend_from_slice(&m.to_le_bytes());
            }
        }
        out
    }

    /// Parses a serialized bound. Accepts only 16, 24 and 32 bytes; a NaN or infinite Z means
    /// "no Z" (the spec writes NaN, DuckDB pads XYM bounds with ±inf), a NaN M means "no M".
    /// X and Y must not be NaN.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, GeostatsError> {
        let len = bytes.len();
        if !matches!(len, 16 | 24 | 32) {
            return Err(GeostatsError::BoundLength {
                what: "geometry/geography bound",
                len,
                expected: "16 (x, y), 24 (x, y, z) or 32 (x, y, z, m)",
            });
        }
        let x = f64_le(bytes, 0);
        let y = f64_le(bytes, 8);
        if x.is_nan() {
            return Err(GeostatsError::BoundNaN { what: "bound x" });
        }
        if y.is_nan() {
            return Err(GeostatsError::BoundNaN { what: "bound y" });
        }
        let z = (len >= 24)
            .then(|| f64_le(bytes, 16))
            .filter(|z| z.is_finite());
        let m = (len == 32)
            .then(|| f64_le(bytes, 24))
            .filter(|m| !m.is_nan());
        Ok(GeospatialBound { x, y, z, m })
    }
}

/// The `(lower, upper)` bound points of a box.
pub fn bounds_of_bbox(bbox: &BBox) -> (GeospatialBound, GeospatialBound) {
    let lower = GeospatialBound {
        x: bbox.min_x,
        y: bbox.min_y,
        z: bbox.z.map(|z| z.min),
        m: bbox.m.map(|m| m.min),
    };
    let upper = GeospatialBound {
        x: bbox.max_x,
        y: bbox.max_y,
        z: bbox.z.map(|z| z.max),
        m: bbox.m.map(|m| m.max),
    };
    (lower, upper)
}

/// Serializes a file's box as `(lower_bounds, upper_bounds)` values.
///
/// ```
/// use geoberg_geostats::{encode_geospatial_bounds, decode_geospatial_bounds, BBox, GeoKind};
/// let bbox = BBox::new(-5.0, -1.0, 3.0, 7.0);
/// let (lower, upper) = encode_geospatial_bounds(&bbox);
/// assert_eq!(lower, [(-5f64).to_le_bytes(), (-1f64).to_le_bytes()].concat());
/// assert_eq!(decode_geospatial_bounds(GeoKind::Geometry, &lower, &upper).unwrap(), bbox);
/// ```
pub fn encode_geospatial_bounds(bbox: &BBox) -> (Vec<u8>, Vec<u8>) {
    let (lower, upper) = bounds_of_bbox(bbox);
    (lower.to_bytes(), upper.to_bytes())
}

/// Parses a file's `(lower_bounds, upper_bounds)` values into a box.
///
/// Z (or M) is kept only when both bounds have it. `ymin <= ymax`, `zmin <= zmax` and
/// `mmin <= mmax` are required; `xmin <= xmax` is required for geometry, while geography may wrap.
pub fn decode_geospatial_bounds(
    kind: GeoKind,
    lower: &[u8],
    upper: &[u8],
) -> Result<BBox, GeostatsError> {
    let lo = GeospatialBound::from_bytes(lower)?;
    let hi = GeospatialBound::from_bytes(upper)?;
    let order = |what, lower: f64, upper: f64, hint| {
        if lower <= upper {
            Ok(())
        } else {
            Err(GeostatsError::BoundOrder {
                what,
                lower,
                upper,
                hint,
            })
        }
    };
    if kind == GeoKind::Geometry {
        order(
            "geometry x",
            lo.x,
            hi.x,
            "only geography bounds may wrap the antimeridian; the bounds are corrupt or the \
             column is geography",
        )?;
    }
    let fix = "the bounds are corrupt; drop them so the file is read instead of pruned";
    order("y", lo.y, hi.y, fix)?;
    let pair = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| Interval::new(a, b));
    let z = pair(lo.z, hi.z);
    let m = pair(lo.m, hi.m);
    if let Some(z) = z {
        order("z", z.min, z.max, fix)?;
    }
    if let Some(m) = m {
        order("m", m.min, m.max, fix)?;
    }
    Ok(BBox {
        min_x: lo.x,
        min_y: lo.y,
        max_x: hi.x,
        max_y: hi.y,
        z,
        m,
    })
}
