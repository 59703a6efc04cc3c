//! Batches as the table stores them: columns matched by name, reordered and cast to the table
//! types, missing nullable columns filled with nulls, every geometry value's SRID checked against
//! its column's CRS, and the derived columns (bbox columns, Hilbert cells) computed from the
//! geometry in the same pass over the WKB.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, new_null_array};
use arrow_schema::{Field, Schema as ArrowSchema};
use geoberg_crs::{ColumnType, ValueSrid, check_value_srid};
use geoberg_geostats::bbox_columns;
use geoberg_hilbert::HilbertCurve;
use geoberg_rewrite::lineage_fields;

use crate::metadata_columns::{LAST_UPDATED_SEQUENCE_NUMBER_COLUMN, ROW_ID_COLUMN};
use iceberg::spec::{NestedFieldRef, PrimitiveType, Type};
use parquet::arrow::PARQUET_FIELD_ID_META_KEY;

use super::conform::conform;
use crate::error::{Error, Result};
use crate::properties::{BBOX_SOURCE_PROPERTY, HILBERT_CELL_PROPERTY};
use crate::schema::file_arrow_type;
use crate::table::Table;

/// Field metadata key that labels every value of a batch's geometry column with one SRID, for
/// WKB that carries none (ISO WKB has no SRID; EWKB's own SRID always wins).
pub const SRID_FIELD_METADATA: &str = "srid";

/// How each table column is filled.
pub(crate) struct ColumnPlan {
    pub field: NestedFieldRef,
    pub ty: Type,
    pub geo: Option<ColumnType>,
    /// For a bbox column: the geometry column index and which of the four values.
    bbox_of: Option<(usize, usize)>,
    /// For the derived Hilbert-cell column: the geometry column index and the curve.
    cell_of: Option<(usize, HilbertCurve)>,
}

/// The columns of a table's current schema and how a batch fills each.
pub(crate) struct BatchAligner {
    pub columns: Vec<ColumnPlan>,
    /// The Arrow schema of the table's data files (Parquet field ids on every column).
    pub schema: Arc<ArrowSchema>,
    /// Whether files also get the v3 row-lineage columns, `_row_id` and
    /// `_last_updated_sequence_number` (rows moved or updated by a row-level change keep their
    /// ids; a null inherits, as for appended rows).
    pub lineage: bool,
}

impl BatchAligner {
    /// An aligner whose files carry the row-lineage columns taken from the batches (nulls
    /// where a batch has none).
    pub(crate) fn with_lineage(table: &Table, lineage: bool) -> Result<BatchAligner> {
        let schema = table.metadata().current_schema();
        let properties = table.properties()?;
        let fields = schema.as_struct().fields();
        let mut columns = Vec::with_capacity(fields.len());
        for f in fields {
            let ty = (*f.field_type).clone();
            let geo = table
                .geo_columns()
                .iter()
                .find(|g| g.field_id == f.id)
                .map(|g| g.column_type.clone());
            columns.push(ColumnPlan {
                field: f.clone(),
                ty,
                geo,
                bbox_of: None,
                cell_of: None,
            });
        }
        if let Some((source, names)) = table.derived_bbox_columns()? {
            let geom = columns
                .iter()
                .position(|c| c.field.name == source)
                .ok_or_else(|| Error::InvalidProperty {
                    key: BBOX_SOURCE_PROPERTY.into(),
                    value: source.clone(),
                    reason: "it names no column of the table".into(),
                })?;
            for (k, name) in names.iter().enumerate() {
                if let Some(c) = columns.iter_mut().find(|c| c.field.name == *name) {
                    c.bbox_of = Some((geom, k));
                }
            }
        }
        if let Some(cell) = &properties.hilbert_cell {
            let bad = |reason: String| Error::InvalidProperty {
                key: HILBERT_CELL_PROPERTY.into(),
                value: cell.property_value(),
                reason,
            };
            let g = columns
                .iter()
                .position(|c| c.field.name == cell.column && c.geo.is_some())
                .ok_or_else(|| bad(format!("{:?} names no geometry column", cell.column)))?;
            let name = cell.cell_column();
            let curve = cell.curve(HILBERT_CELL_PROPERTY)?;
            let c = columns
                .iter_mut()
                .find(|c| c.field.name == name && c.ty == Type::Primitive(PrimitiveType::Long))
                .ok_or_else(|| bad(format!("the table has no long column {name:?}")))?;
            c.cell_of = Some((g, curve));
        }
        let mut schema = file_arrow_schema(&columns);
        if lineage {
            let mut fields: Vec<Field> =
                schema.fields().iter().map(|f| f.as_ref().clone()).collect();
            fields.extend(lineage_fields());
            schema = Arc::new(ArrowSchema::new(fields));
        }
        Ok(BatchAligner {
            columns,
            schema,
            lineage,
        })
    }

    /// Reorders, casts and completes a batch to the table's columns; checks SRIDs and fills
    /// the derived columns from the geometry in one pass.
    pub(crate) fn align(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let plan = &self.columns;
        let rows = batch.num_rows();
        let mut columns: Vec<Option<ArrayRef>> = vec![None; plan.len()];
        let mut bboxes: HashMap<usize, [Float64Array; 4]> = HashMap::new();
        let mut given_cells: HashMap<usize, ArrayRef> = HashMap::new();
        for (i, c) in plan.iter().enumerate() {
            if c.bbox_of.is_some() {
                continue;
            }
            if c.cell_of.is_some() && batch.schema().index_of(&c.field.name).is_err() {
                continue;
            }
            let name = &c.field.name;
            let invalid = |reason: String| Error::InvalidColumnData {
                column: name.clone(),
                reason,
            };
            let target = self.schema.field(i).data_type();
            let mut array = match batch.schema().index_of(name) {
                Ok(idx) => conform(batch.column(idx), target, name)?,
                Err(_) if !c.field.required => new_null_array(target, rows),
                Err(_) => {
                    return Err(invalid(
                        "the column is required (NOT NULL) but missing from the batch".into(),
                    ));
                }
            };
            if c.field.required && array.null_count() > 0 {
                return Err(invalid(format!(
                    "the column is NOT NULL but the batch has {} nulls in it",
                    array.null_count()
                )));
            }
            if let Some(geo) = &c.geo {
                if let Ok(field) = batch.schema().field_with_name(name) {
                    check_edges(name, geo, field)?;
                }
                let label = batch
                    .schema()
                    .field_with_name(name)
                    .ok()
                    .and_then(|f| f.metadata().get(SRID_FIELD_METADATA))
                    .map(|s| {
                        s.trim().parse::<i32>().map_err(|_| {
                            invalid(format!("field metadata srid={s:?} is not an integer"))
                        })
                    })
                    .transpose()?;
                let b = bbox_columns(array.as_ref())?;
                check_srids(name, geo, b.srid.as_ref(), label, &array)?;
                if *geo == ColumnType::GeometryWithoutCrs {
                    if let Some(srid) = label.filter(|s| *s != 0) {
                        array = srids_into_values(name, &array, b.srid.as_ref(), srid)?;
                    }
                } else if b.srid.as_ref().is_some_and(|s| s.null_count() < s.len()) {
                    array = srids_out_of_values(name, &array, b.srid.as_ref())?;
                }
                bboxes.insert(i, [b.min_x, b.min_y, b.max_x, b.max_y]);
            }
            if c.cell_of.is_some() {
                given_cells.insert(i, array);
                continue;
            }
            columns[i] = Some(array);
        }
        for (i, c) in plan.iter().enumerate() {
            if let Some((geom, curve)) = &c.cell_of {
                let derived = hilbert_cells(curve, &bboxes[geom])?;
                if let Some(given) = given_cells.remove(&i) {
                    check_cells(&c.field.name, &plan[*geom].field.name, &given, &derived)?;
                }
                columns[i] = Some(Arc::new(derived));
            }
            if let Some((geom, k)) = c.bbox_of {
                columns[i] = Some(Arc::new(bboxes[&geom][k].clone()));
            }
        }
        let mut columns: Vec<ArrayRef> = columns
            .into_iter()
            .map(|c| c.expect("every column planned"))
            .collect();
        if self.lineage {
            for name in [ROW_ID_COLUMN, LAST_UPDATED_SEQUENCE_NUMBER_COLUMN] {
                columns.push(match batch.column_by_name(name) {
                    Some(a) => arrow_cast::cast(a, &arrow_schema::DataType::Int64)?,
                    None => new_null_array(&arrow_schema::DataType::Int64, rows),
                });
            }
        }
        Ok(RecordBatch::try_new(self.schema.clone(), columns)?)
    }
}

/// The Hilbert key of each row's bbox centre (clamped into the curve's bounds); null where the
/// geometry is null or empty.
fn hilbert_cells(curve: &HilbertCurve, b: &[Float64Array; 4]) -> Result<Int64Array> {
    let centre = |lo: &Float64Array, hi: &Float64Array| -> Float64Array {
        lo.iter()
            .zip(hi.iter())
            .map(|(l, h)| Some((l? + h?) / 2.0))
            .collect()
    };
    let xs = centre(&b[0], &b[2]);
    let ys = centre(&b[1], &b[3]);
    let keys = curve
        .encode_arrow_clamped(&xs, &ys)
        .map_err(|e| Error::InvalidData(format!("Hilbert cell: {e}")))?;
    // Keys are below 4^16 = 2^32, so they fit a long.
    Ok(keys.iter().map(|k| k.map(|k| k as i64)).collect())
}

/// Fails on the first row where the batch's cell differs from the derived one.
fn check_cells(column: &str, geometry: &str, given: &ArrayRef, derived: &Int64Array) -> Result<()> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    let given = given.as_primitive::<Int64Type>();
    for (row, (g, d)) in given.iter().zip(derived.iter()).enumerate() {
        if g != d {
            return Err(Error::HilbertCellMismatch {
                column: column.into(),
                geometry: geometry.into(),
                row,
                given: g,
                derived: d,
            });
        }
    }
    Ok(())
}

/// Refuses a batch field that GeoArrow types as planar geometry (`geoarrow.wkb` or
/// `geoarrow.wkt` without `edges` / `algorithm`, or `"edges": "planar"`; what SedonaDB's geometry values
/// carry) for a geography column: the one place every write (append, import, `INSERT`, `CREATE
/// TABLE AS`, `MERGE`, `UPDATE`) passes. Plain `Binary` WKB without extension metadata is
/// accepted as the column's, as seed 004 accepts a value with no SRID.
fn check_edges(column: &str, geo: &ColumnType, field: &Field) -> Result<()> {
    if !matches!(geo, ColumnType::Geography { .. }) {
        return Ok(());
    }
    let metadata = field.metadata();
    let geoarrow = metadata
        .get(GEOARROW_EXTENSION_NAME)
        .is_some_and(|n| n == "geoarrow.wkb" || n == "geoarrow.wkt");
    if !geoarrow {
        return Ok(());
    }
    let edges = metadata
        .get(GEOARROW_EXTENSION_METADATA)
        .and_then(|m| serde_json::from_str::<serde_json::Value>(m).ok())
        .and_then(|m| {
            // GeoArrow's `edges`; the Parquet reader's extension type says `algorithm`.
            let edges = m.get("edges").or_else(|| m.get("algorithm"));
            edges.and_then(|e| e.as_str()).map(str::to_owned)
        });
    if edges.is_none_or(|e| e.eq_ignore_ascii_case("planar")) {
        return Err(Error::GeometryIntoGeography {
            column: column.to_string(),
            column_type: crate::schema::DataType::Geo(geo.clone()).to_string(),
        });
    }
    Ok(())
}

/// Arrow's field metadata key naming an extension type.
const GEOARROW_EXTENSION_NAME: &str = "ARROW:extension:name";
/// Arrow's field metadata key holding an extension type's parameters (GeoArrow's CRS, edges).
const GEOARROW_EXTENSION_METADATA: &str = "ARROW:extension:metadata";

/// Checks each distinct value SRID once against the column (EWKB SRID, else the batch label).
fn check_srids(
    column: &str,
    geo: &ColumnType,
    ewkb: Option<&arrow_array::Int32Array>,
    label: Option<i32>,
    values: &ArrayRef,
) -> Result<()> {
    if *geo == ColumnType::GeometryWithoutCrs {
        return Ok(());
    }
    let mut checked: Vec<Option<i32>> = Vec::new();
    for row in 0..values.len() {
        if values.is_null(row) {
            continue;
        }
        let srid = match ewkb {
            Some(s) if s.is_valid(row) => Some(s.value(row)),
            _ => label,
        };
        if !checked.contains(&srid) {
            check_value_srid(column, geo, ValueSrid::from(srid)).map_err(|e| {
                Error::InvalidColumnData {
                    column: column.to_string(),
                    reason: format!("row {row}: {e}"),
                }
            })?;
            checked.push(srid);
        }
    }
    Ok(())
}

/// A column without a declared CRS keeps each value's SRID in the value (seed 004: "Records
/// the CRS: yes, in each value"): values labelled by the batch with `srid` are written as EWKB
/// carrying it; values that carry an SRID of their own (`own`) keep it.
fn srids_into_values(
    column: &str,
    values: &ArrayRef,
    own: Option<&arrow_array::Int32Array>,
    srid: i32,
) -> Result<ArrayRef> {
    rewrite_values(column, values, |row, wkb| {
        Ok(match own.is_some_and(|s| s.is_valid(row)) {
            true => None,
            false => Some(geoberg_crs::ewkb_with_srid(wkb, srid)?),
        })
    })
}

/// A column that declares its CRS stores plain WKB (its Parquet GEOMETRY / GEOGRAPHY values;
/// the SRID is the column's, checked equal above): EWKB values (`own` SRID set) lose their
/// SRID.
fn srids_out_of_values(
    column: &str,
    values: &ArrayRef,
    own: Option<&arrow_array::Int32Array>,
) -> Result<ArrayRef> {
    rewrite_values(column, values, |row, wkb| {
        Ok(match own.is_some_and(|s| s.is_valid(row)) {
            true => Some(geoberg_crs::wkb_without_srid(wkb)?),
            false => None,
        })
    })
}

/// `values` with each non-null value replaced by what `f` returns for it (`None`: kept).
fn rewrite_values(
    column: &str,
    values: &ArrayRef,
    mut f: impl FnMut(usize, &[u8]) -> std::result::Result<Option<Vec<u8>>, geoberg_crs::CrsError>,
) -> Result<ArrayRef> {
    let binary = values
        .as_any()
        .downcast_ref::<arrow_array::BinaryArray>()
        .ok_or_else(|| Error::InvalidColumnData {
            column: column.to_string(),
            reason: format!("geometry stored as {}, expected Binary", values.data_type()),
        })?;
    let mut out = arrow_array::builder::BinaryBuilder::with_capacity(
        binary.len(),
        binary.values().len() + 4 * binary.len(),
    );
    for row in 0..binary.len() {
        if binary.is_null(row) {
            out.append_null();
            continue;
        }
        let value = binary.value(row);
        match f(row, value).map_err(|e| Error::InvalidColumnData {
            column: column.to_string(),
            reason: format!("row {row}: {e}"),
        })? {
            Some(new) => out.append_value(new),
            None => out.append_value(value),
        }
    }
    Ok(Arc::new(out.finish()))
}

/// The Arrow schema of data files: table types, with Parquet field ids on every column.
fn file_arrow_schema(plan: &[ColumnPlan]) -> Arc<ArrowSchema> {
    let fields: Vec<Field> = plan
        .iter()
        .map(|c| {
            let dt = file_arrow_type(&c.ty);
            Field::new(&c.field.name, dt, !c.field.required).with_metadata(HashMap::from([(
                PARQUET_FIELD_ID_META_KEY.to_string(),
                c.field.id.to_string(),
            )]))
        })
        .collect();
    Arc::new(ArrowSchema::new(fields))
}
