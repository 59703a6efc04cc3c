//! Iceberg table format versions, as far as geometry columns care (spec Appendix E: `geometry`
//! and `geography` are added in v3).

use std::fmt;

/// An Iceberg table `format-version`. Declared-CRS geometry and geography types exist only in v3;
/// a column with no declared CRS is a plain binary column and exists in every version.
///
/// ```
/// use geoberg_crs::FormatVersion;
///
/// assert_eq!("3".parse::<FormatVersion>()?, FormatVersion::V3);
/// assert_eq!(FormatVersion::try_from(2)?, FormatVersion::V2);
/// assert!(!FormatVersion::V2.supports_declared_crs());
/// assert_eq!("4".parse::<FormatVersion>().unwrap_err().code(), "ST_INVALID_FORMAT_VERSION");
/// # Ok::<(), geoberg_crs::CrsError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FormatVersion {
    /// Format version 1.
    V1,
    /// Format version 2.
    V2,
    /// Format version 3: the first with `geometry(C)` / `geography(C, A)` types.
    V3,
}

impl FormatVersion {
    /// Every version, oldest first (handy for exhaustive tests).
    pub const ALL: [FormatVersion; 3] = [FormatVersion::V1, FormatVersion::V2, FormatVersion::V3];

    /// The number written in table metadata.
    pub fn number(self) -> u8 {
        match self {
            FormatVersion::V1 => 1,
            FormatVersion::V2 => 2,
            FormatVersion::V3 => 3,
        }
    }

    /// True when the version has the v3 geometry and geography types, i.e. can declare a CRS.
    pub fn supports_declared_crs(self) -> bool {
        self >= FormatVersion::V3
    }
}

impl fmt::Display for FormatVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}
