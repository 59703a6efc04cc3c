//! The table side of an ingest, the same for every input format: which column gets the
//! geometry, how a point or a WKB value reaches the column's CRS and passes the filter, and which
//! other columns are filled from which fields.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geo::Contains;
use geo_traits::to_geo::ToGeoGeometry;
use geoberg_crs::{ColumnType, Crs, Reprojection, ValueSrid, check_value_srid};
use geoberg_geostats::BBox;

use super::IngestOptions;
use crate::error::{Error, Result};
use crate::table::{GeoColumn, Table};
use crate::write::SRID_FIELD_METADATA;

/// A table column filled from the input (not the geometry, not a derived column).
pub(super) struct TargetColumn {
    /// Column name.
    pub name: String,
    /// Its Arrow type in the table.
    pub ty: ArrowType,
    /// Dotted paths of the field it is read from, tried in order.
    pub paths: Vec<Vec<String>>,
    /// Whether `--map` / [`IngestOptions::columns`] named the path.
    pub mapped: bool,
    /// NOT NULL.
    pub required: bool,
}

/// Where rows go and what they must pass; see the module docs.
pub(super) struct Target {
    /// The column that gets the points (or the WKB).
    pub geo: GeoColumn,
    /// The column's CRS (`None`: a geometry column without one, which takes any value).
    pub column_crs: Option<Crs>,
    /// The SRID label of the batches handed to `append`.
    srid: Option<i32>,
    envelope: Option<BBox>,
    within: Option<geo_types::Geometry<f64>>,
    /// Every other column the input fills, in table order.
    pub columns: Vec<TargetColumn>,
}

/// A dotted path as its parts.
pub(super) fn path(dotted: &str) -> Vec<String> {
    dotted.split('.').map(str::to_string).collect()
}

impl Target {
    pub(super) fn new(table: &Table, options: &IngestOptions) -> Result<Target> {
        let geo = match &options.geometry_column {
            Some(name) => table.geo_column(name)?,
            None => table.geo_columns().first().cloned().ok_or_else(|| {
                Error::InvalidData(format!(
                    "table {} has no geometry column to put the points in",
                    table.ident()
                ))
            })?,
        };
        let column_crs = match &geo.column_type {
            ColumnType::GeometryWithoutCrs => None,
            t => t.crs().cloned(),
        };
        let srid = column_crs.as_ref().and_then(Crs::srid);
        let arrow = iceberg::arrow::schema_to_arrow_schema(table.metadata().current_schema())?;
        // Columns the table fills itself, from the geometry, and the other geometry columns
        // (left null) are not read from the input.
        let mut derived: Vec<String> = table.geo_columns().iter().map(|g| g.name.clone()).collect();
        if let Some((_, names)) = table.derived_bbox_columns()? {
            derived.extend(names.iter().map(|n| n.to_string()));
        }
        if let Some(cell) = table.properties()?.hilbert_cell {
            derived.push(cell.cell_column());
        }
        let mut columns = Vec::new();
        for field in table.metadata().current_schema().as_struct().fields() {
            if derived.contains(&field.name) {
                continue;
            }
            let ty = arrow.field_with_name(&field.name)?.data_type().clone();
            let mapped = options.columns.get(&field.name);
            let paths = match mapped {
                Some(dotted) => vec![path(dotted)],
                None => vec![
                    vec![field.name.clone()],
                    field.name.split('_').map(str::to_string).collect(),
                ],
            };
            columns.push(TargetColumn {
                name: field.name.clone(),
                ty,
                paths,
                mapped: mapped.is_some(),
                required: field.required,
            });
        }
        for name in options.columns.keys() {
            if !columns.iter().any(|c| &c.name == name) {
                return Err(table.no_such_column(name));
            }
        }
        Ok(Target {
            geo,
            column_crs,
            srid,
            envelope: options.envelope,
            within: options.within.clone(),
            columns,
        })
    }

    /// How a point named in CRS `text` (read from the field at `path`) reaches the column's
    /// CRS; `None` when the column has no CRS (the point is taken as it is).
    pub(super) fn reprojection_from(
        &self,
        text: &str,
        path: &str,
    ) -> std::result::Result<Option<Reprojection>, String> {
        let Some(target) = &self.column_crs else {
            return Ok(None);
        };
        let from: Crs = text
            .parse()
            .map_err(|e| format!("field {path} = {text:?}: {e}"))?;
        Reprojection::between(&from, target)
            .map(Some)
            .map_err(|e| e.to_string())
    }

    /// The point in the column's CRS, `None` when the filter drops it.
    pub(super) fn place(
        &self,
        x: f64,
        y: f64,
        reprojection: Option<Reprojection>,
    ) -> std::result::Result<Option<(f64, f64)>, String> {
        let (x, y) = match reprojection {
            Some(r) => r.transform(x, y).map_err(|e| e.to_string())?,
            None => (x, y),
        };
        if let Some(b) = &self.envelope
            && !(b.min_x <= x && x <= b.max_x && b.min_y <= y && y <= b.max_y)
        {
            return Ok(None);
        }
        if let Some(shape) = &self.within
            && !shape.contains(&geo_types::Point::new(x, y))
        {
            return Ok(None);
        }
        Ok(Some((x, y)))
    }

    /// A WKB value in the column's CRS, `None` when the filter drops it. The value's SRID is
    /// its EWKB SRID, else `label` (the field's `srid` metadata); one that differs from the
    /// column's is transformed, and a value without one is checked as `Table::append` checks it.
    /// `cache` keeps the reprojection of each SRID seen.
    pub(super) fn place_wkb<'a>(
        &self,
        wkb: &'a [u8],
        label: Option<i32>,
        cache: &mut HashMap<i32, std::result::Result<Reprojection, String>>,
    ) -> std::result::Result<Option<Cow<'a, [u8]>>, String> {
        let info = geoberg_geostats::wkb_info(wkb).map_err(|e| format!("not WKB: {e}"))?;
        let mut value = Cow::Borrowed(wkb);
        let mut bbox = info.bbox;
        if let Some(target) = &self.column_crs {
            match info.srid.or(label) {
                Some(srid) if Some(srid) != self.srid => {
                    let r = cache
                        .entry(srid)
                        .or_insert_with(|| {
                            Reprojection::between(&Crs::for_srid(srid), target)
                                .map_err(|e| e.to_string())
                        })
                        .clone()?;
                    if r != Reprojection::Identity {
                        let moved = r
                            .transform_wkb(wkb, &Crs::for_srid(srid))
                            .map_err(|e| e.to_string())?;
                        bbox = geoberg_geostats::bbox_of_wkb(&moved).map_err(|e| e.to_string())?;
                        value = Cow::Owned(moved);
                    }
                }
                Some(_) => {}
                None => check_value_srid(&self.geo.name, &self.geo.column_type, ValueSrid::Unset)
                    .map_err(|e| e.to_string())?,
            }
        }
        if self.envelope.is_none() && self.within.is_none() {
            return Ok(Some(value));
        }
        // An empty geometry is inside nothing.
        let Some(bbox) = bbox else {
            return Ok(None);
        };
        if let Some(b) = &self.envelope
            && !(b.min_x <= bbox.min_x
                && bbox.max_x <= b.max_x
                && b.min_y <= bbox.min_y
                && bbox.max_y <= b.max_y)
        {
            return Ok(None);
        }
        if let Some(shape) = &self.within {
            let plain = geoberg_crs::wkb_without_srid(&value).map_err(|e| e.to_string())?;
            let parsed = wkb::reader::read_wkb(&plain).map_err(|e| format!("not WKB: {e}"))?;
            let inside = match parsed.try_to_geometry() {
                Some(g) => shape.contains(&g),
                None => false,
            };
            if !inside {
                return Ok(None);
            }
        }
        Ok(Some(value))
    }

    /// The geometry field of the batches handed to `append`: binary WKB labelled with the
    /// column's SRID (values are in the column's CRS by then), or with `label` for a column
    /// without a CRS, which keeps each value's own.
    pub(super) fn geometry_field(&self, label: Option<i32>) -> Field {
        let field = Field::new(&self.geo.name, ArrowType::Binary, true);
        match self.srid.or(label.filter(|_| self.column_crs.is_none())) {
            Some(srid) => field.with_metadata(
                [(SRID_FIELD_METADATA.to_string(), srid.to_string())]
                    .into_iter()
                    .collect(),
            ),
            None => field,
        }
    }

    /// A batch of `columns` (one array per [`Target::columns`], in order) and the geometry.
    pub(super) fn batch(
        &self,
        columns: Vec<ArrayRef>,
        geometry: BinaryArray,
        label: Option<i32>,
    ) -> Result<RecordBatch> {
        let mut fields: Vec<Field> = self
            .columns
            .iter()
            .map(|c| Field::new(&c.name, c.ty.clone(), true))
            .collect();
        fields.push(self.geometry_field(label));
        let mut arrays = columns;
        arrays.push(Arc::new(geometry));
        Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?)
    }
}

/// A little-endian ISO WKB point.
pub(super) fn wkb_point(x: f64, y: f64) -> [u8; 21] {
    let mut v = [0u8; 21];
    v[..5].copy_from_slice(&[1, 1, 0, 0, 0]);
    v[5..13].copy_from_slice(&x.to_le_bytes());
    v[13..].copy_from_slice(&y.to_le_bytes());
    v
}
