//! The Hilbert curves a table records in its properties: a spatial index
//! (`geoberg.spatial-index.<column>`, written by `CREATE SPATIAL INDEX` and reused by later
//! compactions) and a derived Hilbert-cell partition column (`geoberg.partition.hilbert-cell`).

use geoberg_crs::{Extent, HilbertSpec};
use geoberg_hilbert::{Bounds, HilbertCurve};

use crate::error::{Error, Result};

/// Suffix of the derived cell column: `<geometry column>_hilbert_cell`.
pub const HILBERT_CELL_SUFFIX: &str = "_hilbert_cell";
/// Finest precision of a cell column: keys below 4^16 = 2^32 fit a `long` with room to spare.
pub const MAX_CELL_PRECISION: u8 = 16;

/// A Hilbert spatial index recorded on a table: the curve a geometry column's rows are
/// clustered by.
#[derive(Debug, Clone, PartialEq)]
pub struct SpatialIndex {
    /// The geometry column.
    pub column: String,
    /// Its curve.
    pub spec: HilbertSpec,
}

impl SpatialIndex {
    /// The property value: `{"precision":16,"bounds":[-180.0,-90.0,180.0,90.0]}`.
    pub fn property_value(&self) -> String {
        let b = self.spec.bounds;
        serde_json::json!({
            "precision": self.spec.precision,
            "bounds": [b.min_x, b.min_y, b.max_x, b.max_y],
        })
        .to_string()
    }

    /// The snapshot summary value of a rewrite that clustered by this index.
    pub(crate) fn summary_value(&self) -> String {
        let b = self.spec.bounds;
        serde_json::json!({
            "column": self.column,
            "strategy": "hilbert",
            "precision": self.spec.precision,
            "bounds": [b.min_x, b.min_y, b.max_x, b.max_y],
        })
        .to_string()
    }

    pub(crate) fn parse_property(column: &str, key: &str, value: &str) -> Result<SpatialIndex> {
        let spec = parse_curve(value, HilbertSpec::MAX_PRECISION).map_err(|reason| {
            Error::InvalidProperty {
                key: key.to_string(),
                value: value.to_string(),
                reason: format!(
                    "{reason}; expected {{\"precision\": 1..=32, \"bounds\": [minX, minY, maxX, \
                     maxY]}} (rerun CREATE SPATIAL INDEX to rewrite it)"
                ),
            }
        })?;
        Ok(SpatialIndex {
            column: column.to_string(),
            spec,
        })
    }
}

/// A derived Hilbert-cell partition column: appends fill `<column>_hilbert_cell` with the
/// Hilbert key of each geometry's bbox centre on this curve.
#[derive(Debug, Clone, PartialEq)]
pub struct HilbertCell {
    /// The geometry column the cell derives from.
    pub column: String,
    /// The curve (precision at most 16, `MAX_CELL_PRECISION`).
    pub spec: HilbertSpec,
}

impl HilbertCell {
    /// The cell column's name.
    pub fn cell_column(&self) -> String {
        format!("{}{HILBERT_CELL_SUFFIX}", self.column)
    }

    /// The property value.
    pub fn property_value(&self) -> String {
        let b = self.spec.bounds;
        serde_json::json!({
            "column": self.column,
            "precision": self.spec.precision,
            "bounds": [b.min_x, b.min_y, b.max_x, b.max_y],
        })
        .to_string()
    }

    /// Parses the value of the property `key`.
    pub(crate) fn parse_property(key: &str, value: &str) -> Result<HilbertCell> {
        let bad = |reason: String| Error::InvalidProperty {
            key: key.into(),
            value: value.into(),
            reason,
        };
        let v: serde_json::Value =
            serde_json::from_str(value).map_err(|e| bad(format!("not JSON: {e}")))?;
        let column = v["column"]
            .as_str()
            .ok_or_else(|| bad("expected a string \"column\"".into()))?;
        let spec = parse_curve(value, MAX_CELL_PRECISION).map_err(bad)?;
        Ok(HilbertCell {
            column: column.to_string(),
            spec,
        })
    }

    /// The curve that computes the cells; `key` names the property in errors.
    pub(crate) fn curve(&self, key: &str) -> Result<HilbertCurve> {
        let b = self.spec.bounds;
        let bad = |e: geoberg_hilbert::Error| Error::InvalidProperty {
            key: key.into(),
            value: self.property_value(),
            reason: e.to_string(),
        };
        let bounds = Bounds::new(b.min_x, b.min_y, b.max_x, b.max_y).map_err(bad)?;
        HilbertCurve::new(self.spec.precision, bounds).map_err(bad)
    }
}

/// `{"precision": p, "bounds": [minX, minY, maxX, maxY]}` with `p` in 1..=`max`.
fn parse_curve(value: &str, max: u8) -> std::result::Result<HilbertSpec, String> {
    let v: serde_json::Value = serde_json::from_str(value).map_err(|_| "not JSON".to_string())?;
    let precision = v["precision"]
        .as_u64()
        .filter(|p| (1..=u64::from(max)).contains(p))
        .ok_or_else(|| format!("missing precision, or not in 1..={max}"))?;
    let b: Vec<f64> = v["bounds"]
        .as_array()
        .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
        .unwrap_or_default();
    let [min_x, min_y, max_x, max_y] = b[..] else {
        return Err("bounds must be four numbers".into());
    };
    HilbertSpec::new(precision as u32, Extent::new(min_x, min_y, max_x, max_y))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_round_trip_and_bad_ones_are_named() {
        let index = SpatialIndex {
            column: "geom".into(),
            spec: HilbertSpec::wgs84(16).unwrap(),
        };
        let back = SpatialIndex::parse_property("geom", "k", &index.property_value()).unwrap();
        assert_eq!(back, index);
        let cell = HilbertCell {
            column: "geom".into(),
            spec: HilbertSpec::wgs84(6).unwrap(),
        };
        assert_eq!(
            HilbertCell::parse_property("k", &cell.property_value()).unwrap(),
            cell
        );
        assert_eq!(cell.cell_column(), "geom_hilbert_cell");
        for bad in [
            "nope",
            r#"{"precision": 40, "bounds": [0, 0, 1, 1]}"#,
            r#"{"precision": 8, "bounds": [0, 0, 1]}"#,
            r#"{"precision": 8, "bounds": [1, 0, 0, 1]}"#,
        ] {
            let e = SpatialIndex::parse_property("g", "geoberg.spatial-index.g", bad).unwrap_err();
            assert!(e.to_string().contains("geoberg.spatial-index.g"), "{e}");
        }
        let too_fine = r#"{"column": "g", "precision": 20, "bounds": [0, 0, 1, 1]}"#;
        assert!(HilbertCell::parse_property("k", too_fine).is_err());
    }
}
