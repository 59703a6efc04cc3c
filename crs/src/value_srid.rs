//! The SRID a single value carries (an EWKB header, a Sedona/PostGIS geometry's SRID).

use std::fmt;

/// The SRID of one value. `Srid(0)` is a CRS of its own (what constructors such as
/// `ST_GeomFromText` return); `Unset` means the value carries no SRID at all.
///
/// ```
/// use geoberg_crs::ValueSrid;
///
/// assert_eq!(ValueSrid::from(Some(4326)), ValueSrid::Srid(4326));
/// assert_eq!(ValueSrid::from(None), ValueSrid::Unset);
/// assert_ne!(ValueSrid::Srid(0), ValueSrid::Unset);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueSrid {
    /// The value is labelled with this SRID.
    Srid(i32),
    /// The value carries no SRID.
    Unset,
}

impl From<Option<i32>> for ValueSrid {
    fn from(srid: Option<i32>) -> Self {
        srid.map_or(ValueSrid::Unset, ValueSrid::Srid)
    }
}

impl fmt::Display for ValueSrid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueSrid::Srid(srid) => write!(f, "SRID {srid}"),
            ValueSrid::Unset => f.write_str("no SRID (unset)"),
        }
    }
}
