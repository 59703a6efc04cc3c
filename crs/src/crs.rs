//! The CRS of a column, as the Iceberg v3 spec writes it (section "CRS": `<context>:<identifier>`
//! or `projjson:<table-property>`).

use std::fmt;

/// A coordinate reference system as named by a column type or a statement.
///
/// The variants keep the spelling the user chose, so that [`Display`](fmt::Display) writes back a
/// string that parses to the same value. [`Crs::srid`] gives the numeric identity that the rules
/// compare: `OGC:CRS84`, `EPSG:4326` and `srid:4326` are all longitude/latitude on WGS84
/// (x = longitude, y = latitude) and report SRID 4326.
///
/// SRID 0 is a CRS of its own ("coordinates in a CRS nobody recorded"), not the absence of one;
/// a column without a CRS is [`ColumnType::GeometryWithoutCrs`](crate::ColumnType).
///
/// ```
/// use geoberg_crs::Crs;
///
/// let crs: Crs = "epsg:3857".parse()?;
/// assert_eq!(crs, Crs::Epsg(3857));
/// assert_eq!(crs.to_string(), "EPSG:3857");
/// assert_eq!("OGC:CRS84".parse::<Crs>()?.srid(), Some(4326));
/// assert_eq!("4326".parse::<Crs>()?, Crs::Srid(4326));
/// assert_eq!("projjson:my_crs".parse::<Crs>()?.srid(), None);
/// # Ok::<(), geoberg_crs::CrsError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Crs {
    /// `OGC:CRS84`: longitude/latitude on WGS84, the Iceberg default for geometry and geography.
    OgcCrs84,
    /// `EPSG:<code>`.
    Epsg(i32),
    /// `srid:<n>` or a bare integer, as SQL writes `geometry(4326)`.
    Srid(i32),
    /// `projjson:<table-property>`: the named table property holds PROJJSON, which we never parse.
    Projjson(String),
    /// Any other `<authority>:<code>` (for example `IGNF:ATI`), kept so that tables written by
    /// other engines still load; no rule here accepts it for a declaration.
    Other {
        /// The authority, as written.
        authority: String,
        /// The code within the authority, as written.
        code: String,
    },
}

impl Crs {
    /// WGS84 longitude/latitude spelled as the Iceberg spec's default.
    pub const WGS84: Crs = Crs::OgcCrs84;
    /// Spherical Web Mercator.
    pub const WEB_MERCATOR: Crs = Crs::Epsg(3857);

    /// The CRS geoberg declares for an SRID, as `geometry(<srid>)` reads it: 4326 is `OGC:CRS84`
    /// (the Iceberg default), 3857 is `EPSG:3857`, any other `n` is `srid:<n>`.
    ///
    /// ```
    /// use geoberg_crs::Crs;
    ///
    /// assert_eq!(Crs::for_srid(4326), Crs::OgcCrs84);
    /// assert_eq!(Crs::for_srid(3857), Crs::Epsg(3857));
    /// assert_eq!(Crs::for_srid(0), Crs::Srid(0));
    /// ```
    pub fn for_srid(srid: i32) -> Crs {
        match srid {
            4326 => Crs::OgcCrs84,
            3857 => Crs::Epsg(3857),
            n => Crs::Srid(n),
        }
    }

    /// The numeric SRID when the CRS has one we can name: 4326 for `OGC:CRS84`, the code for
    /// `EPSG:`/`srid:`, `None` for PROJJSON and other authorities.
    pub fn srid(&self) -> Option<i32> {
        match self {
            Crs::OgcCrs84 => Some(4326),
            Crs::Epsg(code) | Crs::Srid(code) => Some(*code),
            Crs::Projjson(_) | Crs::Other { .. } => None,
        }
    }

    /// True for WGS84 longitude/latitude under any spelling (`OGC:CRS84`, `EPSG:4326`, 4326).
    pub fn is_wgs84(&self) -> bool {
        self.srid() == Some(4326)
    }

    /// True for spherical Web Mercator (`EPSG:3857`, 3857).
    pub fn is_web_mercator(&self) -> bool {
        self.srid() == Some(3857)
    }

    /// True when both name the same CRS, whatever the spelling (`OGC:CRS84` ~ `EPSG:4326`).
    pub fn is_same_as(&self, other: &Crs) -> bool {
        match (self.srid(), other.srid()) {
            (Some(a), Some(b)) => a == b,
            _ => self == other,
        }
    }
}

impl fmt::Display for Crs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Crs::OgcCrs84 => f.write_str("OGC:CRS84"),
            Crs::Epsg(code) => write!(f, "EPSG:{code}"),
            Crs::Srid(code) => write!(f, "srid:{code}"),
            Crs::Projjson(property) => write!(f, "projjson:{property}"),
            Crs::Other { authority, code } => write!(f, "{authority}:{code}"),
        }
    }
}
