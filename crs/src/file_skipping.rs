//! Rule 3: whether spatial filters on a column can skip data files.

use std::fmt;

use crate::column_type::ColumnType;
use crate::format_version::FormatVersion;

/// Whether spatial filters can skip files, and why, in words the planner prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkipDecision {
    /// True when per-file bounds exist for the column, so files outside the filter are skipped.
    pub can_skip: bool,
    /// Why, for the scan report.
    pub reason: String,
}

impl fmt::Display for SkipDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// Decides whether spatial filters on `column` can skip data files in a table of
/// `format_version`.
///
/// A declared CRS keeps bounds in Iceberg's standard column bounds: always yes. A column
/// without a declared CRS keeps them only in format-versions 1 and 2; on v3 every file is read.
/// Queries stay correct, only slower, and nothing else says so, hence the reason text.
///
/// ```
/// use geoberg_crs::{can_skip_files, ColumnType, Crs, FormatVersion};
///
/// assert!(can_skip_files(FormatVersion::V3, &ColumnType::geometry(Crs::Srid(4326))).can_skip);
/// assert!(can_skip_files(FormatVersion::V2, &ColumnType::GeometryWithoutCrs).can_skip);
/// let v3 = can_skip_files(FormatVersion::V3, &ColumnType::GeometryWithoutCrs);
/// assert!(!v3.can_skip);
/// assert!(v3.reason.contains("every data file"));
/// ```
pub fn can_skip_files(format_version: FormatVersion, column_type: &ColumnType) -> SkipDecision {
    match (column_type.crs(), format_version.supports_declared_crs()) {
        (Some(crs), _) => SkipDecision {
            can_skip: true,
            reason: format!(
                "the column declares CRS {crs}, so each data file's bounds are in the Iceberg column bounds and files outside the filter are skipped"
            ),
        },
        (None, false) => SkipDecision {
            can_skip: true,
            reason: format!(
                "the column declares no CRS; in a format-version {format_version} table its per-file bounds are still recorded, so files outside the filter are skipped"
            ),
        },
        (None, true) => SkipDecision {
            can_skip: false,
            reason: "the column declares no CRS, and a format-version 3 table records no per-file bounds for such a column, so the scan reads every data file \
                     (results are correct, only slower). Recreate the column with a declared CRS, e.g. geometry(4326), and copy the data into it, \
                     or keep the table at format-version 2"
                .to_owned(),
        },
    }
}
