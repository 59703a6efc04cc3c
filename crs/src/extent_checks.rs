//! Checks of clustering bounds: finite and ordered, known for a CRS, covering the data.

use crate::crs::Crs;
use crate::error::CrsError;
use crate::extent::{Extent, known_extent};

impl Extent {
    /// Checks that the corners are finite and ordered.
    pub fn validate(&self) -> Result<(), CrsError> {
        let invalid = |reason| {
            Err(CrsError::InvalidBounds {
                bounds: *self,
                reason,
            })
        };
        if ![self.min_x, self.min_y, self.max_x, self.max_y]
            .iter()
            .all(|v| v.is_finite())
        {
            return invalid("a corner is NaN or infinite");
        }
        if self.min_x > self.max_x {
            return invalid("minX is greater than maxX");
        }
        if self.min_y > self.max_y {
            return invalid("minY is greater than maxY");
        }
        Ok(())
    }
}

/// The extent of a CRS we know: WGS84 (any spelling) and Web Mercator. Everything else,
/// including SRID 0, has no known extent (`ST_UNKNOWN_EXTENT`) and needs explicit bounds.
///
/// For Web Mercator this is the square of +-20037508.342789244 m; data may legitimately reach
/// +-20048966.10 m on y ([`Extent::WEB_MERCATOR_AREA_OF_USE`]), so check real data with
/// [`check_bounds_cover`].
///
/// ```
/// use geoberg_crs::{extent_of, Crs, Extent};
///
/// assert_eq!(extent_of(&Crs::OgcCrs84)?, Extent::WGS84);
/// assert_eq!(extent_of(&Crs::Epsg(3857))?.max_x, 20037508.342789244);
/// assert_eq!(extent_of(&Crs::Srid(0)).unwrap_err().code(), "ST_UNKNOWN_EXTENT");
/// # Ok::<(), geoberg_crs::CrsError>(())
/// ```
pub fn extent_of(crs: &Crs) -> Result<Extent, CrsError> {
    known_extent(crs).ok_or_else(|| CrsError::UnknownExtent { crs: crs.clone() })
}

/// Checks that clustering `bounds` contain the data's bounding box; otherwise
/// `ST_BOUNDS_DO_NOT_COVER` with the smallest widened bounds that would.
///
/// ```
/// use geoberg_crs::{check_bounds_cover, Extent};
///
/// let data = Extent::new(-20037508.34, -20048966.10, 20037508.34, 20048966.10);
/// let err = check_bounds_cover(&Extent::WEB_MERCATOR, &data).unwrap_err();
/// assert_eq!(err.code(), "ST_BOUNDS_DO_NOT_COVER");
/// assert!(err.to_string().contains("-20048966.1"));
/// check_bounds_cover(&Extent::WEB_MERCATOR_AREA_OF_USE, &data)?;
/// # Ok::<(), geoberg_crs::CrsError>(())
/// ```
pub fn check_bounds_cover(bounds: &Extent, data: &Extent) -> Result<(), CrsError> {
    bounds.validate()?;
    data.validate()?;
    if bounds.contains(data) {
        Ok(())
    } else {
        Err(CrsError::BoundsDoNotCover {
            bounds: *bounds,
            data: *data,
            suggested: bounds.union(data),
        })
    }
}
