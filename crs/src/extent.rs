//! Rule 5: known extents of the CRSs we can declare, and the check that clustering bounds cover
//! the data.

use std::fmt;

use crate::crs::Crs;

/// Web Mercator's half-width in metres: `6378137 * pi`, longitude 180.
pub const WEB_MERCATOR_MAX: f64 = 20_037_508.342_789_244;
/// The latitude where Web Mercator's y reaches [`WEB_MERCATOR_MAX`], making the extent square:
/// `atan(sinh(pi))` in degrees.
pub const WEB_MERCATOR_MAX_LATITUDE: f64 = 85.051_128_779_806_59;
/// EPSG:3857's area of use reaches latitude +-85.06, beyond the square, so valid data can have
/// |y| up to this many metres.
pub const WEB_MERCATOR_AREA_OF_USE_MAX_Y: f64 = 20_048_966.10;

/// An axis-aligned rectangle in a CRS's own units: the bounds a Hilbert curve is laid over, or
/// the bounding box of some data (a file's, a partition's, a table's). With the `serde` feature
/// it serializes as `{"min_x", "min_y", "max_x", "max_y"}`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Extent {
    /// Smallest x.
    pub min_x: f64,
    /// Smallest y.
    pub min_y: f64,
    /// Largest x.
    pub max_x: f64,
    /// Largest y.
    pub max_y: f64,
}

impl Extent {
    /// WGS84 longitude/latitude: [-180, -90, 180, 90].
    pub const WGS84: Extent = Extent::new(-180.0, -90.0, 180.0, 90.0);
    /// The square Web Mercator extent, +-20037508.342789244 m on both axes (latitude +-85.0511).
    pub const WEB_MERCATOR: Extent = Extent::new(
        -WEB_MERCATOR_MAX,
        -WEB_MERCATOR_MAX,
        WEB_MERCATOR_MAX,
        WEB_MERCATOR_MAX,
    );
    /// EPSG:3857's area of use (latitude +-85.06): wider on y than [`Extent::WEB_MERCATOR`].
    pub const WEB_MERCATOR_AREA_OF_USE: Extent = Extent::new(
        -WEB_MERCATOR_MAX,
        -WEB_MERCATOR_AREA_OF_USE_MAX_Y,
        WEB_MERCATOR_MAX,
        WEB_MERCATOR_AREA_OF_USE_MAX_Y,
    );

    /// An extent from its corners (not checked; see [`Extent::validate`]).
    pub const fn new(min_x: f64, min_y: f64, max_x: f64, max_y: f64) -> Self {
        Extent {
            min_x,
            min_y,
            max_x,
            max_y,
        }
    }

    /// The extent grown by `d` on every side (`ST_DWithin`'s search box in planar units).
    pub fn expand(self, d: f64) -> Extent {
        Extent::new(
            self.min_x - d,
            self.min_y - d,
            self.max_x + d,
            self.max_y + d,
        )
    }

    /// The smallest extent holding this one and the point (`x`, `y`).
    pub fn include(self, x: f64, y: f64) -> Extent {
        Extent::new(
            self.min_x.min(x),
            self.min_y.min(y),
            self.max_x.max(x),
            self.max_y.max(y),
        )
    }

    /// True when `other` lies inside `self` (edges included).
    pub fn contains(&self, other: &Extent) -> bool {
        self.min_x <= other.min_x
            && self.min_y <= other.min_y
            && self.max_x >= other.max_x
            && self.max_y >= other.max_y
    }

    /// True when the extents share a point (edges included): the file-skipping test.
    pub fn intersects(&self, other: &Extent) -> bool {
        self.min_x <= other.max_x
            && other.min_x <= self.max_x
            && self.min_y <= other.max_y
            && other.min_y <= self.max_y
    }

    /// The smallest extent containing both.
    pub fn union(&self, other: &Extent) -> Extent {
        Extent::new(
            self.min_x.min(other.min_x),
            self.min_y.min(other.min_y),
            self.max_x.max(other.max_x),
            self.max_y.max(other.max_y),
        )
    }

    /// The smallest extent containing all of `extents`; `None` when there are none.
    pub fn union_all<'a>(extents: impl IntoIterator<Item = &'a Extent>) -> Option<Extent> {
        extents.into_iter().fold(None, |acc: Option<Extent>, e| {
            Some(acc.map_or(*e, |a| a.union(e)))
        })
    }

    /// The width, `max_x - min_x`.
    pub fn width(&self) -> f64 {
        self.max_x - self.min_x
    }

    /// The height, `max_y - min_y`.
    pub fn height(&self) -> f64 {
        self.max_y - self.min_y
    }
}

impl fmt::Display for Extent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}, {}, {}, {}]",
            self.min_x, self.min_y, self.max_x, self.max_y
        )
    }
}

/// The known extent of `crs` (WGS84 longitude/latitude or Web Mercator), if any; see
/// [`extent_of`](crate::extent_of) for the checked form.
pub(crate) fn known_extent(crs: &Crs) -> Option<Extent> {
    match crs.srid() {
        Some(4326) => Some(Extent::WGS84),
        Some(3857) => Some(Extent::WEB_MERCATOR),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn extent() -> impl Strategy<Value = Extent> {
        (-1e6..1e6f64, -1e6..1e6f64, 0.0..1e3f64, 0.0..1e3f64)
            .prop_map(|(x, y, w, h)| Extent::new(x, y, x + w, y + h))
    }

    proptest! {
        /// The union of a set holds every member, and each of its edges is some member's edge
        /// (so no smaller extent holds them all).
        #[test]
        fn union_all_is_the_smallest_cover(extents in prop::collection::vec(extent(), 0..20)) {
            let Some(all) = Extent::union_all(&extents) else {
                prop_assert!(extents.is_empty());
                return Ok(());
            };
            prop_assert!(extents.iter().all(|e| all.contains(e)));
            prop_assert!(extents.iter().any(|e| e.min_x == all.min_x));
            prop_assert!(extents.iter().any(|e| e.min_y == all.min_y));
            prop_assert!(extents.iter().any(|e| e.max_x == all.max_x));
            prop_assert!(extents.iter().any(|e| e.max_y == all.max_y));
            prop_assert!(all.width() >= 0.0 && all.height() >= 0.0);
            prop_assert!(all.validate().is_ok(), "{:?}", all.validate());
        }

        /// Two extents intersect exactly when the corner of their overlap, (max of the mins,
        /// min of the maxes), is an ordered extent: a point of it lies in both.
        #[test]
        fn intersects_iff_the_overlap_is_ordered(
            a in extent(),
            b in extent(),
            dx in -1e3..1e3f64,
            dy in -1e3..1e3f64,
        ) {
            // Move `b` next to `a`, so that both outcomes are common.
            let (x, y) = (a.min_x + dx, a.min_y + dy);
            let b = Extent::new(x, y, x + b.width(), y + b.height());
            let overlap = Extent::new(
                a.min_x.max(b.min_x),
                a.min_y.max(b.min_y),
                a.max_x.min(b.max_x),
                a.max_y.min(b.max_y),
            );
            let ordered = overlap.validate().is_ok();
            prop_assert_eq!(a.intersects(&b), ordered);
            prop_assert_eq!(b.intersects(&a), ordered);
            if ordered {
                prop_assert!(a.contains(&overlap) && b.contains(&overlap));
            }
        }
    }
}
