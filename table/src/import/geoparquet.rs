//! GeoParquet 1.0 / 1.1 file metadata (the `geo` key): the primary column, and per geometry
//! column its encoding, CRS, edges and (1.1) `covering` bbox columns.

use std::collections::BTreeMap;

use serde_json::Value;

use super::source_crs::SourceCrs;

/// The `geo` key of a GeoParquet file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GeoParquet {
    /// `version` (`1.0.0`, `1.1.0`).
    pub version: String,
    /// `primary_column`.
    pub primary_column: Option<String>,
    /// `columns`, by name.
    pub columns: BTreeMap<String, GeoParquetColumn>,
}

/// One entry of `columns`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GeoParquetColumn {
    /// `encoding`: `WKB`, or a GeoArrow native encoding (`point`, `linestring`, ...).
    pub encoding: String,
    /// `crs`.
    pub crs: SourceCrs,
    /// `edges`: `planar` (the default) or `spherical`.
    pub spherical: bool,
    /// `covering.bbox`: the paths of xmin, ymin, xmax, ymax.
    pub bbox_covering: Option<[Vec<String>; 4]>,
}

impl GeoParquet {
    /// Parses the `geo` value; `Err` says what is wrong.
    pub(crate) fn parse(text: &str) -> Result<GeoParquet, String> {
        let geo: Value = serde_json::from_str(text)
            .map_err(|e| format!("its GeoParquet `geo` metadata is not JSON ({e})"))?;
        let version = geo
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let primary_column = geo
            .get("primary_column")
            .and_then(Value::as_str)
            .map(str::to_string);
        let mut columns = BTreeMap::new();
        if let Some(cols) = geo.get("columns").and_then(Value::as_object) {
            for (name, meta) in cols {
                let encoding = meta
                    .get("encoding")
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        format!(
                            "its GeoParquet metadata gives column {name:?} no \"encoding\" (the \
                             spec requires one, e.g. \"WKB\")"
                        )
                    })?
                    .to_string();
                let spherical = meta.get("edges").and_then(Value::as_str) == Some("spherical");
                let bbox_covering = meta
                    .get("covering")
                    .and_then(|c| c.get("bbox"))
                    .map(|b| covering_paths(name, b))
                    .transpose()?;
                columns.insert(
                    name.clone(),
                    GeoParquetColumn {
                        encoding,
                        crs: SourceCrs::from_geoparquet(meta.get("crs")),
                        spherical,
                        bbox_covering,
                    },
                );
            }
        }
        Ok(GeoParquet {
            version,
            primary_column,
            columns,
        })
    }
}

/// `{"xmin": ["bbox", "xmin"], ...}` as four paths.
fn covering_paths(column: &str, bbox: &Value) -> Result<[Vec<String>; 4], String> {
    let path = |k: &str| -> Result<Vec<String>, String> {
        bbox.get(k)
            .and_then(Value::as_array)
            .and_then(|parts| {
                parts
                    .iter()
                    .map(|p| p.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
            })
            .filter(|p| !p.is_empty())
            .ok_or_else(|| {
                format!(
                    "its GeoParquet covering of column {column:?} has no path for {k:?} (expected \
                     e.g. [\"bbox\", \"{k}\"])"
                )
            })
    };
    Ok([path("xmin")?, path("ymin")?, path("xmax")?, path("ymax")?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_version_1_1_with_a_covering() {
        let g = GeoParquet::parse(
            r#"{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{
                "encoding":"WKB","geometry_types":["Point"],"edges":"planar",
                "covering":{"bbox":{"xmin":["bbox","xmin"],"ymin":["bbox","ymin"],
                                    "xmax":["bbox","xmax"],"ymax":["bbox","ymax"]}}}}}"#,
        )
        .unwrap();
        assert_eq!(g.version, "1.1.0");
        let c = &g.columns["geometry"];
        assert_eq!(c.crs, SourceCrs::Omitted);
        assert_eq!(c.bbox_covering.as_ref().unwrap()[2], ["bbox", "xmax"]);
        assert!(!c.spherical);
    }

    #[test]
    fn malformed_metadata_says_what_is_missing() {
        assert!(GeoParquet::parse("{").unwrap_err().contains("not JSON"));
        let e = GeoParquet::parse(r#"{"columns":{"g":{"crs":null}}}"#).unwrap_err();
        assert!(e.contains("\"g\"") && e.contains("encoding"), "{e}");
        let e = GeoParquet::parse(
            r#"{"columns":{"g":{"encoding":"WKB","covering":{"bbox":{"xmin":["b","x"]}}}}}"#,
        )
        .unwrap_err();
        assert!(e.contains("\"ymin\""), "{e}");
    }
}
