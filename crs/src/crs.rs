//! The CRS of a column, as the Iceberg v3 spec writes it (section "CRS": `<context>:<identifier>`
//! or `projjson:<table-property>`).

use std::fmt;
use std::str::FromStr;

use crate::error::CrsError;

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

impl FromStr for Crs {
    type Err = CrsError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let invalid = |reason: &'static str| CrsError::InvalidCrs {
            input: input.to_owned(),
            reason,
        };
        let text = input.trim();
        if text.is_empty() {
            return Err(invalid("the CRS is empty"));
        }
        if text.bytes().all(|b| b.is_ascii_digit()) {
            return parse_code(text)
                .map(Crs::Srid)
                .ok_or_else(|| invalid(CODE_RANGE));
        }
        let Some((authority, code)) = text.split_once(':') else {
            return Err(invalid(
                "expected `<authority>:<code>` or a bare integer SRID",
            ));
        };
        let (authority, code) = (authority.trim(), code.trim());
        if code.is_empty() {
            return Err(invalid("the code after `:` is empty"));
        }
        if authority.is_empty() {
            return Err(invalid("the authority before `:` is empty"));
        }
        if code.contains([',', '(', ')', ':']) || code.contains(char::is_whitespace) {
            return Err(invalid(
                "the code contains a separator (`,`, `(`, `)`, `:` or whitespace), which Iceberg type strings cannot carry",
            ));
        }
        if !authority
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(invalid(
                "the authority must be letters, digits, `_` or `-` (e.g. EPSG, OGC, SRID)",
            ));
        }
        if authority.eq_ignore_ascii_case("EPSG") {
            parse_code(code)
                .map(Crs::Epsg)
                .ok_or_else(|| invalid(CODE_RANGE))
        } else if authority.eq_ignore_ascii_case("SRID") {
            parse_code(code)
                .map(Crs::Srid)
                .ok_or_else(|| invalid(CODE_RANGE))
        } else if authority.eq_ignore_ascii_case("OGC") && code.eq_ignore_ascii_case("CRS84") {
            Ok(Crs::OgcCrs84)
        } else if authority.eq_ignore_ascii_case("projjson") {
            // Table property names are case-sensitive: keep the name as written.
            Ok(Crs::Projjson(code.to_owned()))
        } else {
            Ok(Crs::Other {
                authority: authority.to_owned(),
                code: code.to_owned(),
            })
        }
    }
}

const CODE_RANGE: &str = "the code must be an integer from 0 to 2147483647";

fn parse_code(text: &str) -> Option<i32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i32>().ok()
}
