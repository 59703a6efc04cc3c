//! The crate's text forms read back: CRS strings, Iceberg geometry/geography type strings, edge
//! algorithms and `format-version` values, each with the error that names the accepted forms.
//! Kept apart from the types themselves so that the error type can carry them without a cycle.

use std::str::FromStr;

use crate::column_type::{ColumnType, EdgeAlgorithm};
use crate::crs::Crs;
use crate::error::CrsError;
use crate::format_version::FormatVersion;

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

impl FromStr for EdgeAlgorithm {
    type Err = CrsError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let name = text.trim();
        EdgeAlgorithm::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| CrsError::InvalidType {
                input: text.to_owned(),
                reason: format!(
                    "unknown edge algorithm '{name}'; use spherical, vincenty, thomas, andoyer or karney"
                ),
            })
    }
}

impl ColumnType {
    /// Parses an Iceberg type string as the writers in the wild emit it: any case, optional
    /// whitespace, the CRS and algorithm optional (defaults `OGC:CRS84` and `spherical`), and
    /// pyiceberg's single-quoted parameters.
    pub fn from_iceberg_type(input: &str) -> Result<Self, CrsError> {
        let invalid = |reason: String| CrsError::InvalidType {
            input: input.to_owned(),
            reason,
        };
        let text = input.trim();
        let (name, params) = match text.find('(') {
            Some(open) => {
                let Some(inner) = text[open + 1..].strip_suffix(')') else {
                    return Err(invalid("the parameter list does not end with ')'".into()));
                };
                (text[..open].trim(), Some(inner))
            }
            None => (text, None),
        };
        let params: Vec<&str> = match params {
            None => Vec::new(),
            Some(inner) => inner.split(',').map(unquote).collect(),
        };
        if params.iter().any(|p| p.is_empty()) {
            return Err(invalid("a parameter is empty".into()));
        }
        let crs = |p: Option<&&str>| p.map_or(Ok(Crs::OgcCrs84), |p| p.parse::<Crs>());
        if name.eq_ignore_ascii_case("geometry") {
            if params.len() > 1 {
                return Err(invalid(format!(
                    "geometry takes one parameter (the CRS), found {}",
                    params.len()
                )));
            }
            Ok(ColumnType::Geometry {
                crs: crs(params.first())?,
            })
        } else if name.eq_ignore_ascii_case("geography") {
            if params.len() > 2 {
                return Err(invalid(format!(
                    "geography takes at most two parameters (CRS, algorithm), found {}",
                    params.len()
                )));
            }
            let edges = match params.get(1) {
                Some(a) => a.parse()?,
                None => EdgeAlgorithm::Spherical,
            };
            Ok(ColumnType::Geography {
                crs: crs(params.first())?,
                edges,
            })
        } else {
            Err(invalid(format!(
                "'{name}' is not a geospatial type (expected geometry or geography)"
            )))
        }
    }
}

fn unquote(param: &str) -> &str {
    let p = param.trim();
    p.strip_prefix('\'')
        .and_then(|q| q.strip_suffix('\''))
        .map_or(p, str::trim)
}

impl TryFrom<i64> for FormatVersion {
    type Error = CrsError;

    fn try_from(value: i64) -> Result<Self, Self::Error> {
        match value {
            1 => Ok(FormatVersion::V1),
            2 => Ok(FormatVersion::V2),
            3 => Ok(FormatVersion::V3),
            other => Err(CrsError::InvalidFormatVersion {
                value: other.to_string(),
            }),
        }
    }
}

impl FromStr for FormatVersion {
    type Err = CrsError;

    /// Parses the `format-version` table property.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || CrsError::InvalidFormatVersion {
            value: text.to_owned(),
        };
        text.trim()
            .parse::<i64>()
            .map_err(|_| invalid())
            .and_then(|n| FormatVersion::try_from(n).map_err(|_| invalid()))
    }
}
