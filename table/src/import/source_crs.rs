//! The CRS a Parquet or GeoParquet file declares for a geometry column, in every form the
//! specs allow: omitted (OGC:CRS84 by both specs), GeoParquet's explicit `null` (unknown), an
//! authority code (`srid:5070`, `EPSG:3857`, `OGC:CRS84`), PROJJSON (inline, or Parquet's
//! `projjson:<metadata key>`) with or without an identifier, or any other string (Parquet does
//! not restrict it).

use std::collections::HashMap;

use geoberg_crs::Crs;
use serde_json::Value;

/// What a file says about one column's CRS.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SourceCrs {
    /// No CRS given: OGC:CRS84 (longitude/latitude) by the Parquet and GeoParquet specs.
    Omitted,
    /// GeoParquet's `"crs": null`: the writer does not know the CRS.
    Unknown,
    /// An authority and code, from a string or a PROJJSON `id`; `projjson` keeps the document.
    Code {
        /// `EPSG`, `OGC`, `SRID` ... as written, upper-cased.
        authority: String,
        /// The code as written.
        code: String,
        /// The PROJJSON document it came from, if any.
        projjson: Option<Value>,
    },
    /// PROJJSON without an identifier: a custom CRS.
    Custom(Value),
    /// A Parquet CRS string that is none of the above.
    Text(String),
}

impl SourceCrs {
    /// The CRS of a Parquet GEOMETRY/GEOGRAPHY logical type: `crs` as stored, `metadata` the
    /// file's key-value metadata (for `projjson:<key>`). `Err` names what is wrong.
    pub(crate) fn from_parquet(
        crs: Option<&str>,
        metadata: &HashMap<String, String>,
    ) -> Result<SourceCrs, String> {
        let Some(crs) = crs.map(str::trim).filter(|c| !c.is_empty()) else {
            return Ok(SourceCrs::Omitted);
        };
        if let Some(key) = crs.strip_prefix("projjson:") {
            let text = metadata.get(key).ok_or_else(|| {
                format!(
                    "its Parquet CRS is {crs:?}, but the file has no key-value metadata {key:?} \
                     holding that PROJJSON"
                )
            })?;
            let json: Value = serde_json::from_str(text).map_err(|e| {
                format!("the PROJJSON in the file's metadata {key:?} is not JSON: {e}")
            })?;
            return Ok(SourceCrs::from_projjson(json));
        }
        if crs.starts_with('{') {
            let json: Value = serde_json::from_str(crs)
                .map_err(|e| format!("its Parquet CRS looks like PROJJSON but is not JSON: {e}"))?;
            return Ok(SourceCrs::from_projjson(json));
        }
        Ok(match crs.split_once(':') {
            Some((authority, code))
                if !authority.is_empty()
                    && !code.is_empty()
                    && authority
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_') =>
            {
                SourceCrs::Code {
                    authority: authority.to_ascii_uppercase(),
                    code: code.trim().to_string(),
                    projjson: None,
                }
            }
            _ => SourceCrs::Text(crs.to_string()),
        })
    }

    /// The CRS of a GeoParquet column: its `crs` member (`None`: absent).
    pub(crate) fn from_geoparquet(crs: Option<&Value>) -> SourceCrs {
        match crs {
            None => SourceCrs::Omitted,
            Some(Value::Null) => SourceCrs::Unknown,
            Some(Value::String(s)) => SourceCrs::from_parquet(Some(s), &HashMap::new())
                .unwrap_or(SourceCrs::Text(s.clone())),
            Some(other) => SourceCrs::from_projjson(other.clone()),
        }
    }

    /// A PROJJSON document: its `id` (or first of `ids`) when it has one.
    pub(crate) fn from_projjson(json: Value) -> SourceCrs {
        let id = json
            .get("id")
            .or_else(|| json.get("ids").and_then(|ids| ids.get(0)))
            .cloned();
        let code = id.as_ref().and_then(|id| {
            let authority = id.get("authority")?.as_str()?.to_ascii_uppercase();
            let code = match id.get("code")? {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return None,
            };
            Some((authority, code))
        });
        match code {
            Some((authority, code)) => SourceCrs::Code {
                authority,
                code,
                projjson: Some(json),
            },
            None => SourceCrs::Custom(json),
        }
    }

    /// Whether the file says anything (everything but [`SourceCrs::Unknown`]).
    pub(crate) fn is_known(&self) -> bool {
        !matches!(self, SourceCrs::Unknown)
    }

    /// `(authority, code)` with `SRID:` read as EPSG (Parquet's out-of-context SRIDs are EPSG
    /// codes in practice) and the omitted CRS as `OGC:CRS84`.
    fn identity(&self) -> Option<(String, String)> {
        match self {
            SourceCrs::Omitted => Some(("OGC".into(), "CRS84".into())),
            SourceCrs::Code {
                authority, code, ..
            } => {
                let authority = if authority == "SRID" {
                    "EPSG".to_string()
                } else {
                    authority.clone()
                };
                Some((authority, code.to_ascii_uppercase()))
            }
            _ => None,
        }
    }

    /// The SRID a geoberg column would declare for it: 4326 for OGC:CRS84, the code of `EPSG:`
    /// and `SRID:`, `None` for everything else.
    pub(crate) fn srid(&self) -> Option<i32> {
        let (authority, code) = self.identity()?;
        match authority.as_str() {
            "OGC" if code == "CRS84" => Some(4326),
            "EPSG" => code.parse().ok(),
            _ => None,
        }
    }

    /// Whether two declarations of one column name the same CRS. An unknown CRS contradicts
    /// nothing; OGC:CRS84 and EPSG:4326 differ (their axis orders do).
    pub(crate) fn agrees_with(&self, other: &SourceCrs) -> bool {
        if !self.is_known() || !other.is_known() {
            return true;
        }
        if let (Some(a), Some(b)) = (self.identity(), other.identity()) {
            return a == b;
        }
        match (self, other) {
            (SourceCrs::Custom(a), SourceCrs::Custom(b)) => without_schema(a) == without_schema(b),
            (SourceCrs::Text(a), SourceCrs::Text(b)) => a == b,
            _ => false,
        }
    }

    /// For messages: `EPSG:5070 (NAD83 / Conus Albers)`, `OGC:CRS84 (no CRS given: the
    /// default)`, `a custom PROJJSON ProjectedCRS "unknown" with no identifier`.
    pub(crate) fn describe(&self) -> String {
        let named = |json: &Value| {
            let kind = json.get("type").and_then(Value::as_str).unwrap_or("CRS");
            match json.get("name").and_then(Value::as_str) {
                Some(n) => format!("{kind} {n:?}"),
                None => kind.to_string(),
            }
        };
        match self {
            SourceCrs::Omitted => "OGC:CRS84 (no CRS given: the default)".into(),
            SourceCrs::Unknown => "an unknown CRS (GeoParquet \"crs\": null)".into(),
            SourceCrs::Code {
                authority,
                code,
                projjson,
            } => match projjson
                .as_ref()
                .and_then(|j| j.get("name"))
                .and_then(Value::as_str)
            {
                Some(name) => format!("{authority}:{code} ({name})"),
                // Parquet's out-of-context SRIDs, read as the EPSG codes they are in practice.
                None if authority == "SRID" => format!("srid:{code} (EPSG:{code})"),
                None => format!("{authority}:{code}"),
            },
            SourceCrs::Custom(json) => {
                format!("a custom PROJJSON {} with no identifier", named(json))
            }
            SourceCrs::Text(t) => {
                let short: String = t.chars().take(80).collect();
                let more = if t.chars().count() > 80 { "..." } else { "" };
                format!("the CRS string {short:?}{more}")
            }
        }
    }

    /// What `geoberg.source-crs.<column>` records: the PROJJSON document when there is one,
    /// else the code or string; `None` for an unknown CRS.
    pub(crate) fn property_value(&self) -> Option<String> {
        match self {
            SourceCrs::Unknown => None,
            SourceCrs::Omitted => Some("OGC:CRS84".into()),
            SourceCrs::Code {
                projjson: Some(json),
                ..
            }
            | SourceCrs::Custom(json) => Some(json.to_string()),
            SourceCrs::Code {
                authority, code, ..
            } if authority == "SRID" => Some(format!("srid:{code}")),
            SourceCrs::Code {
                authority, code, ..
            } => Some(format!("{authority}:{code}")),
            SourceCrs::Text(t) => Some(t.clone()),
        }
    }

    /// The `crs` crate's view, for its declaration rules and messages.
    pub(crate) fn as_crs(&self) -> Crs {
        match (self.identity(), self.srid()) {
            (Some((a, c)), _) if a == "OGC" && c == "CRS84" => Crs::OgcCrs84,
            (_, Some(srid)) => match self {
                SourceCrs::Code { authority, .. } if authority == "SRID" => Crs::Srid(srid),
                _ => Crs::Epsg(srid),
            },
            (Some((authority, code)), None) => Crs::Other { authority, code },
            (None, _) => Crs::Other {
                authority: "PROJJSON".into(),
                code: match self {
                    SourceCrs::Custom(json) => json
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("custom")
                        .to_string(),
                    _ => "custom".into(),
                },
            },
        }
    }
}

/// A PROJJSON document without its `$schema` URL (writers cite different schema versions).
fn without_schema(json: &Value) -> Value {
    let mut j = json.clone();
    if let Some(o) = j.as_object_mut() {
        o.remove("$schema");
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parquet(s: &str) -> SourceCrs {
        SourceCrs::from_parquet(Some(s), &HashMap::new()).unwrap()
    }

    #[test]
    fn every_parquet_form_reads() {
        assert_eq!(
            SourceCrs::from_parquet(None, &HashMap::new()),
            Ok(SourceCrs::Omitted)
        );
        assert_eq!(
            SourceCrs::from_parquet(Some(""), &HashMap::new()),
            Ok(SourceCrs::Omitted)
        );
        assert_eq!(parquet("srid:5070").srid(), Some(5070));
        assert_eq!(parquet("EPSG:3857").srid(), Some(3857));
        assert_eq!(parquet("OGC:CRS84").srid(), Some(4326));
        let md = HashMap::from([(
            "k".to_string(),
            r#"{"type":"ProjectedCRS","name":"NAD83 / Conus Albers","id":{"authority":"EPSG","code":5070}}"#
                .to_string(),
        )]);
        let p = SourceCrs::from_parquet(Some("projjson:k"), &md).unwrap();
        assert_eq!(p.srid(), Some(5070));
        assert_eq!(p.describe(), "EPSG:5070 (NAD83 / Conus Albers)");
        assert!(p.agrees_with(&parquet("srid:5070")));
        let e = SourceCrs::from_parquet(Some("projjson:missing"), &md).unwrap_err();
        assert!(e.contains("\"missing\""), "{e}");
        let custom = parquet(r#"{"type":"ProjectedCRS","name":"unknown"}"#);
        assert!(matches!(custom, SourceCrs::Custom(_)));
        assert_eq!(custom.srid(), None);
        assert!(matches!(parquet("some words"), SourceCrs::Text(_)));
    }

    #[test]
    fn agreement_is_by_identity() {
        let epsg4326 = SourceCrs::from_projjson(serde_json::json!({
            "type": "GeographicCRS", "name": "WGS 84", "id": {"authority": "EPSG", "code": 4326}
        }));
        assert!(
            !SourceCrs::Omitted.agrees_with(&epsg4326),
            "CRS84 is not EPSG:4326"
        );
        assert_eq!(epsg4326.srid(), Some(4326));
        assert!(SourceCrs::Omitted.agrees_with(&parquet("OGC:CRS84")));
        assert!(SourceCrs::Unknown.agrees_with(&epsg4326));
        let a = serde_json::json!({"$schema": "x", "type": "ProjectedCRS", "name": "unknown"});
        let b = serde_json::json!({"$schema": "y", "type": "ProjectedCRS", "name": "unknown"});
        assert!(SourceCrs::Custom(a).agrees_with(&SourceCrs::Custom(b)));
        assert_eq!(
            SourceCrs::from_geoparquet(Some(&Value::Null)),
            SourceCrs::Unknown
        );
        assert_eq!(SourceCrs::from_geoparquet(None), SourceCrs::Omitted);
    }
}
