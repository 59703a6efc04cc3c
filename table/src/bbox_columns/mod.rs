//! Bbox columns under the names other writers use: four `double` (or `float`) columns holding
//! each row's bounding box, whose ordinary column bounds give every data file a box that any
//! engine can prune on, even one that knows nothing of geometry (pyiceberg, Spark without geo
//! support).
//!
//! Which columns they are, in order:
//! 1. the table property `geoberg.bbox-columns.<geometry column>`, JSON naming the four
//!    columns (`{"xmin": "bbox_xmin", "ymin": ..., "xmax": ..., "ymax": ...}`, each a dotted
//!    name or a GeoParquet covering path such as `["bbox", "xmin"]`), or a string naming a
//!    struct column with fields `xmin`, `ymin`, `xmax`, `ymax` (GeoParquet 1.1's `bbox`
//!    covering); an import writes it from the file's GeoParquet `covering`;
//! 2. the seed layout `bbox_min_x`, `bbox_min_y`, `bbox_max_x`, `bbox_max_y`, unless
//!    `geoberg.bbox-columns.source` names another geometry column;
//! 3. the conventions of other writers: `bbox_xmin`..., `minx`/`miny`/`maxx`/`maxy`,
//!    `xmin`..., and the structs `bbox` and `<geometry column>_bbox` (GDAL) with fields
//!    `xmin`...
//!
//! A file's box from these columns is used only when it is sound: all four bounds are present
//! and no bbox column has more nulls than the geometry column (a row with a geometry but no
//! bbox values would lie outside the box).

use geoberg_geostats::{BBox, BBoxColumnNames};
use iceberg::spec::{DataFile, Datum, PrimitiveLiteral, PrimitiveType, Schema};

use crate::error::{Error, Result};
use crate::schema::BBOX_COLUMN_NAMES;
use crate::table::Table;

pub(crate) mod property;

pub use property::{
    BBOX_COLUMNS_PROPERTY_PREFIX, bbox_columns_property_value, parse_bbox_columns_property,
};

/// The other writers' conventions, tried in order after the seed layout: `{geom}` stands for
/// the geometry column's name.
const CONVENTIONS: [[&str; 4]; 6] = [
    ["bbox_xmin", "bbox_ymin", "bbox_xmax", "bbox_ymax"],
    ["minx", "miny", "maxx", "maxy"],
    ["xmin", "ymin", "xmax", "ymax"],
    ["bbox.xmin", "bbox.ymin", "bbox.xmax", "bbox.ymax"],
    [
        "{geom}_bbox.xmin",
        "{geom}_bbox.ymin",
        "{geom}_bbox.xmax",
        "{geom}_bbox.ymax",
    ],
    ["bbox.minx", "bbox.miny", "bbox.maxx", "bbox.maxy"],
];

fn as_array(names: &BBoxColumnNames) -> [String; 4] {
    [
        names.min_x.clone(),
        names.min_y.clone(),
        names.max_x.clone(),
        names.max_y.clone(),
    ]
}

/// The bbox columns of one geometry column of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BBoxColumns {
    /// Field ids: xmin, ymin, xmax, ymax.
    pub ids: [i32; 4],
    /// Their dotted names.
    pub names: [String; 4],
    /// How they were found (for explain).
    pub found_by: String,
}

impl Table {
    /// The bbox columns that appends fill from a geometry column
    /// ([`crate::BBOX_SOURCE_PROPERTY`]): that column's name and the four top-level columns
    /// (`geoberg.bbox-columns.<geometry>` where set, else `bbox_min_x`, `bbox_min_y`,
    /// `bbox_max_x`, `bbox_max_y`); `None` when the table derives none.
    pub fn derived_bbox_columns(&self) -> Result<Option<(String, [String; 4])>> {
        let properties = self.properties()?;
        let Some(source) = properties.bbox_source.clone() else {
            return Ok(None);
        };
        let names = match properties.bbox_columns.get(&source) {
            Some(named) => as_array(named),
            None => BBOX_COLUMN_NAMES.map(str::to_string),
        };
        Ok(Some((source, names)))
    }

    /// The bbox columns of geometry column `geometry` (see the module docs), `None` when the
    /// table has none. A property naming columns the table lacks (or that are not doubles or
    /// floats) is an error.
    pub(crate) fn bbox_columns(&self, geometry: &str) -> Result<Option<BBoxColumns>> {
        let properties = self.properties()?;
        let schema = self.metadata().current_schema();
        if let Some(named) = properties.bbox_columns.get(geometry) {
            let key = format!("{BBOX_COLUMNS_PROPERTY_PREFIX}{geometry}");
            let names = as_array(named);
            let ids = resolve(schema, &names).map_err(|reason| Error::InvalidProperty {
                key: key.clone(),
                value: bbox_columns_property_value(named),
                reason,
            })?;
            return Ok(Some(BBoxColumns {
                ids,
                names,
                found_by: format!("table property {key}"),
            }));
        }
        let seed_applies = properties
            .bbox_source
            .as_deref()
            .is_none_or(|source| source == geometry);
        if seed_applies && let Ok(ids) = resolve(schema, &BBOX_COLUMN_NAMES.map(str::to_string)) {
            return Ok(Some(BBoxColumns {
                ids,
                names: BBOX_COLUMN_NAMES.map(str::to_string),
                found_by: "the seed layout's names".into(),
            }));
        }
        if properties.bbox_source.is_some() {
            return Ok(None);
        }
        for convention in CONVENTIONS {
            let names = convention.map(|n| n.replace("{geom}", geometry));
            if let Ok(ids) = resolve(schema, &names) {
                return Ok(Some(BBoxColumns {
                    ids,
                    names,
                    found_by: "their conventional names".into(),
                }));
            }
        }
        Ok(None)
    }
}

/// Field ids of four dotted column names, each a `double` or `float` reached through structs.
fn resolve(schema: &Schema, names: &[String; 4]) -> std::result::Result<[i32; 4], String> {
    let mut ids = [0; 4];
    for (slot, name) in ids.iter_mut().zip(names) {
        let field = schema
            .field_by_name(name)
            .ok_or_else(|| format!("the table has no column {name:?}"))?;
        match field.field_type.as_primitive_type() {
            Some(PrimitiveType::Double | PrimitiveType::Float) => *slot = field.id,
            _ => {
                return Err(format!(
                    "column {name:?} is {}, not double or float",
                    field.field_type
                ));
            }
        }
        // Only fields reached through structs carry row bounds (not list or map entries).
        let mut path = String::new();
        for part in name.split('.') {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(part);
            if schema.field_by_name(&path).is_some_and(|f| {
                matches!(
                    *f.field_type,
                    iceberg::spec::Type::List(_) | iceberg::spec::Type::Map(_)
                )
            }) {
                return Err(format!("column {name:?} is inside a list or map"));
            }
        }
    }
    Ok(ids)
}

/// A bound as a double (floats widen exactly).
pub(crate) fn bound_as_f64(d: Option<&Datum>) -> Option<f64> {
    match d?.literal() {
        PrimitiveLiteral::Double(v) => Some(v.0),
        PrimitiveLiteral::Float(v) => Some(f64::from(v.0)),
        _ => None,
    }
}

/// Whether a file's bbox-column bounds cover every row with a geometry: each bbox column has
/// no more nulls than the geometry column (all counts known).
pub(crate) fn covers_every_geometry(
    geometry_nulls: Option<u64>,
    bbox_nulls: [Option<u64>; 4],
) -> bool {
    let Some(g) = geometry_nulls else {
        return false;
    };
    bbox_nulls.iter().all(|n| n.is_some_and(|n| n <= g))
}

/// The box of a data file from the bbox columns of geometry column `geometry` (field id
/// `field_id`), when sound; what `WHERE ST_Intersects(...)` file selection uses.
pub(crate) fn file_bbox_from_columns(
    table: &Table,
    file: &DataFile,
    field_id: i32,
) -> Option<BBox> {
    let name = table
        .metadata()
        .current_schema()
        .field_by_id(field_id)?
        .name
        .clone();
    let columns = table.bbox_columns(&name).ok()??;
    let nulls = |id: i32| file.null_value_counts().get(&id).copied();
    if !covers_every_geometry(nulls(field_id), columns.ids.map(nulls)) {
        return None;
    }
    let [a, b, c, d] = columns.ids;
    let b = BBox::new(
        bound_as_f64(file.lower_bounds().get(&a))?,
        bound_as_f64(file.lower_bounds().get(&b))?,
        bound_as_f64(file.upper_bounds().get(&c))?,
        bound_as_f64(file.upper_bounds().get(&d))?,
    );
    let finite = [b.min_x, b.min_y, b.max_x, b.max_y]
        .iter()
        .all(|v| v.is_finite());
    (finite && b.min_x <= b.max_x && b.min_y <= b.max_y).then_some(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bbox_columns::property::is_bbox_columns_value;

    #[test]
    fn property_values_name_four_columns_or_a_struct() {
        let k = "geoberg.bbox-columns.geom";
        let p = parse_bbox_columns_property(
            k,
            r#"{"xmin": "bbox_xmin", "ymin": ["b", "ymin"], "xmax": "c", "ymax": "d"}"#,
        )
        .unwrap();
        assert_eq!(
            as_array(&p),
            ["bbox_xmin", "b.ymin", "c", "d"].map(String::from)
        );
        let back = parse_bbox_columns_property(k, &bbox_columns_property_value(&p)).unwrap();
        assert_eq!(back, p);
        let s = parse_bbox_columns_property(k, r#""bbox""#).unwrap();
        assert_eq!(s.max_y, "bbox.ymax");
        for bad in ["bbox", r#"{"xmin": "a"}"#, "[1, 2]", r#"{"xmin": 3}"#] {
            let e = parse_bbox_columns_property(k, bad).unwrap_err().to_string();
            assert!(
                e.contains(k) && e.contains("expected") || e.contains("missing"),
                "{e}"
            );
        }
        assert!(is_bbox_columns_value(r#" {"xmin": 1}"#));
        assert!(!is_bbox_columns_value("geom"));
    }

    #[test]
    fn a_file_with_bboxless_geometries_is_not_covered() {
        assert!(covers_every_geometry(Some(3), [Some(3); 4]));
        assert!(!covers_every_geometry(
            Some(3),
            [Some(3), Some(4), Some(3), Some(3)]
        ));
        assert!(!covers_every_geometry(None, [Some(0); 4]));
        assert!(!covers_every_geometry(
            Some(0),
            [None, Some(0), Some(0), Some(0)]
        ));
    }
}
