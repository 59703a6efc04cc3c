//! Iceberg `geometry` / `geography` type strings as we write them and as others wrote them.

use geoberg_crs::{ColumnType, Crs, EdgeAlgorithm};

use crate::error::Result;

/// Parses a schema type string; `Ok(None)` when it is not a geospatial type (`long`, `binary` …).
///
/// Accepts every spelling in the wild, case-insensitively and with whitespace: bare `geometry`
/// (Java 1.10/1.11, pyiceberg), `geometry(OGC:CRS84)` (Java main), `geometry(ogc:crs84)`
/// (DuckDB), pyiceberg's quoted `geometry('EPSG:3857')`, `geography(srid:4326, spherical)`.
pub fn parse_type_string(input: &str) -> Result<Option<ColumnType>> {
    let head = input.trim_start();
    let is_geo = ["geometry", "geography"].iter().any(|p| {
        head.get(..p.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(p))
            && head[p.len()..]
                .chars()
                .next()
                .is_none_or(|c| c == '(' || c.is_whitespace())
    });
    if !is_geo {
        return Ok(None);
    }
    Ok(Some(ColumnType::from_iceberg_type(input)?))
}

/// Renders the type string every reader we know parses: bare `geometry` / `geography` for
/// longitude/latitude WGS84 (the spec default; the only spelling pyiceberg 0.12 and DuckDB 1.5
/// both read), `geometry(EPSG:3857)` / `geometry(SRID:0)` otherwise, and
/// `geography(<crs>, <algorithm>)` only when the algorithm is not spherical.
///
/// Returns `None` for the legacy no-CRS column, which Iceberg stores as `binary`.
pub fn render_type_string(column_type: &ColumnType) -> Option<String> {
    let crs_param = |crs: &Crs| -> Option<String> {
        match crs {
            c if c.is_wgs84() => None,
            Crs::Srid(n) => Some(format!("SRID:{n}")),
            other => Some(other.to_string()),
        }
    };
    Some(match column_type {
        ColumnType::GeometryWithoutCrs => return None,
        ColumnType::Geometry { crs } => match crs_param(crs) {
            None => "geometry".to_string(),
            Some(c) => format!("geometry({c})"),
        },
        ColumnType::Geography { crs, edges } if *edges != EdgeAlgorithm::Spherical => {
            let c = crs_param(crs).unwrap_or_else(|| Crs::OgcCrs84.to_string());
            format!("geography({c}, {edges})")
        }
        ColumnType::Geography { crs, .. } => match crs_param(crs) {
            None => "geography".to_string(),
            Some(c) => format!("geography({c})"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> ColumnType {
        parse_type_string(s).unwrap().unwrap()
    }

    #[test]
    fn reads_every_spelling_in_the_wild() {
        for s in [
            "geometry",
            "GEOMETRY",
            "geometry(OGC:CRS84)",
            "geometry(ogc:crs84)",
            "geometry( OGC:CRS84 )",
            "geometry('OGC:CRS84')",
            "geometry(EPSG:4326)",
            "geometry(srid:4326)",
        ] {
            assert_eq!(parse(s).crs().and_then(Crs::srid), Some(4326), "{s}");
            assert_eq!(render_type_string(&parse(s)).unwrap(), "geometry", "{s}");
        }
        for s in [
            "geometry(EPSG:3857)",
            "geometry('EPSG:3857')",
            "Geometry ( epsg:3857 )",
        ] {
            assert_eq!(
                render_type_string(&parse(s)).unwrap(),
                "geometry(EPSG:3857)",
                "{s}"
            );
        }
        for s in [
            "geography",
            "geography(srid:4326, spherical)",
            "geography(OGC:CRS84,spherical)",
            "geography('OGC:CRS84', 'spherical')",
        ] {
            assert_eq!(render_type_string(&parse(s)).unwrap(), "geography", "{s}");
        }
        assert_eq!(
            render_type_string(&parse("geography(ogc:crs84, KARNEY)")).unwrap(),
            "geography(OGC:CRS84, karney)"
        );
        assert_eq!(
            render_type_string(&parse("geometry(srid:0)")).unwrap(),
            "geometry(SRID:0)"
        );
        for s in ["binary", "long", "geometryx", "string"] {
            assert!(parse_type_string(s).unwrap().is_none(), "{s}");
        }
    }

    #[test]
    fn rejects_malformed_geo_strings() {
        for s in [
            "geometry()",
            "geometry(EPSG:3857",
            "geometry(EPSG:3857, spherical)",
        ] {
            assert!(parse_type_string(s).is_err(), "{s}");
        }
    }
}
