//! The `geoberg.bbox-columns.<geometry column>` property: its format, read and written
//! without a table (the table properties parse it; imports write it).

use std::collections::{BTreeMap, HashMap};

use geoberg_geostats::BBoxColumnNames;
use serde_json::Value;

use crate::error::{Error, Result};

/// Prefix of `geoberg.bbox-columns.<geometry column>`: the four bbox columns of a geometry
/// column, as JSON (see `bbox_columns`). `geoberg.bbox-columns.source` with a value that is
/// not JSON is [`crate::BBOX_SOURCE_PROPERTY`].
pub const BBOX_COLUMNS_PROPERTY_PREFIX: &str = "geoberg.bbox-columns.";

/// Parses a `geoberg.bbox-columns.<geom>` value: `{"xmin": "a", "ymin": "b", "xmax": "c",
/// "ymax": "d"}` (each a dotted name or a path array), or `"s"` for a struct column `s` with
/// fields `xmin`, `ymin`, `xmax`, `ymax`.
pub fn parse_bbox_columns_property(key: &str, value: &str) -> Result<BBoxColumnNames> {
    let bad = |reason: String| Error::InvalidProperty {
        key: key.to_string(),
        value: value.to_string(),
        reason,
    };
    let json: Value = serde_json::from_str(value).map_err(|e| {
        bad(format!(
            "not JSON ({e}); expected {{\"xmin\": \"<column>\", \"ymin\": ..., \"xmax\": \
             ..., \"ymax\": ...}} or \"<struct column>\""
        ))
    })?;
    let name = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Array(parts) if !parts.is_empty() => parts
                .iter()
                .map(|p| p.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .map(|p| p.join(".")),
            _ => None,
        }
    };
    let [min_x, min_y, max_x, max_y] = match &json {
        Value::String(s) if !s.is_empty() => {
            ["xmin", "ymin", "xmax", "ymax"].map(|f| format!("{s}.{f}"))
        }
        Value::Object(o) => {
            let mut names = Vec::with_capacity(4);
            for k in ["xmin", "ymin", "xmax", "ymax"] {
                let n = o.get(k).and_then(name).ok_or_else(|| {
                    bad(format!(
                        "{k:?} is missing or not a column name (a string such as \
                         \"bbox_{k}\", or a path such as [\"bbox\", \"{k}\"])"
                    ))
                })?;
                names.push(n);
            }
            names.try_into().expect("four names")
        }
        _ => {
            return Err(bad(
                "expected {\"xmin\": \"<column>\", \"ymin\": ..., \"xmax\": ..., \"ymax\": ...} \
                 or \"<struct column>\""
                    .into(),
            ));
        }
    };
    Ok(BBoxColumnNames {
        min_x,
        min_y,
        max_x,
        max_y,
    })
}

/// The `geoberg.bbox-columns.<geom>` value naming these columns.
pub fn bbox_columns_property_value(names: &BBoxColumnNames) -> String {
    serde_json::json!({
        "xmin": names.min_x, "ymin": names.min_y, "xmax": names.max_x, "ymax": names.max_y
    })
    .to_string()
}

/// Whether a `geoberg.bbox-columns.<x>` value is the JSON of [`BBoxColumnNames`] (and not the
/// plain column name of [`crate::BBOX_SOURCE_PROPERTY`]).
pub(crate) fn is_bbox_columns_value(value: &str) -> bool {
    matches!(value.trim_start().chars().next(), Some('{' | '"'))
}

/// The bbox-column properties of a table's properties, by geometry column.
pub(crate) fn parse_bbox_column_properties(
    properties: &HashMap<String, String>,
) -> Result<BTreeMap<String, BBoxColumnNames>> {
    let mut out = BTreeMap::new();
    for (k, v) in properties {
        let Some(column) = k.strip_prefix(BBOX_COLUMNS_PROPERTY_PREFIX) else {
            continue;
        };
        if column.is_empty() || !is_bbox_columns_value(v) {
            continue;
        }
        out.insert(column.to_string(), parse_bbox_columns_property(k, v)?);
    }
    Ok(out)
}
