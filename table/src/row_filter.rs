//! Which rows a row-level change (DELETE, UPDATE) touches: a [`RowFilter`] is a predicate over a
//! batch of the table's columns, plus, optionally, the same condition as a [`Predicate`] so that
//! files and row groups that cannot match are skipped before anything is read.
//!
//! The SQL engine builds one from its own expression evaluator; [`RowFilter::from_predicate`]
//! evaluates a [`Predicate`] here (comparisons with SQL's three-valued logic, `IN`, `BETWEEN`,
//! `IS NULL`, and exact spatial predicates: planar on geometry, on the sphere on a geography
//! column, which a batch marks with GeoArrow metadata as the table's scans do), so that the
//! library needs no engine.

use std::fmt;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, BooleanArray, Date32Array, Float32Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, Scalar, StringArray, TimestampMicrosecondArray,
};
use arrow_schema::DataType as ArrowType;
use geo::{Contains, Distance, Euclidean, Intersects};
use geo_traits::to_geo::ToGeoGeometry;
use geoberg_sql::{CompareOp, Literal, Predicate, SpatialFilter, SpatialRelation};
use iceberg::spec::{Datum, PrimitiveLiteral, PrimitiveType};

use crate::error::{Error, Result};
use crate::geography_window::{GeographyWindow, wrapping_envelope_on_planar_column};
use crate::scan::datum;

type Matcher = dyn Fn(&RecordBatch) -> Result<BooleanArray> + Send + Sync;

/// The rows a row-level change applies to.
#[derive(Clone)]
pub struct RowFilter {
    prune: Option<Predicate>,
    matcher: Arc<Matcher>,
}

impl fmt::Debug for RowFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RowFilter")
            .field("prune", &self.prune)
            .finish_non_exhaustive()
    }
}

impl RowFilter {
    /// Rows for which `matcher` returns true (null counts as false). `prune`, when given, must
    /// hold for every matching row; it skips the files whose statistics rule it out.
    pub fn new(
        prune: Option<Predicate>,
        matcher: impl Fn(&RecordBatch) -> Result<BooleanArray> + Send + Sync + 'static,
    ) -> Self {
        RowFilter {
            prune,
            matcher: Arc::new(matcher),
        }
    }

    /// Every row.
    pub fn all() -> Self {
        RowFilter::new(None, |b| Ok(BooleanArray::from(vec![true; b.num_rows()])))
    }

    /// The rows for which `predicate` is true; it also prunes files. A spatial predicate on a
    /// column the batch marks as geography (GeoArrow metadata, as the table's scans return
    /// geography columns) is evaluated on the sphere, `ST_DWithin` in metres; an
    /// `ST_MakeEnvelope` with `minX > maxX` on any other column is an error naming what works.
    pub fn from_predicate(predicate: Predicate) -> Self {
        let p = predicate.clone();
        RowFilter::new(Some(predicate), move |batch| {
            Ok(is_true(&evaluate(&p, batch)?))
        })
    }

    /// The condition files are pruned with, if any.
    pub fn prune(&self) -> Option<&Predicate> {
        self.prune.as_ref()
    }

    /// Which rows of `batch` match (nulls already false).
    pub fn matches(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        let m = (self.matcher)(batch)?;
        if m.len() != batch.num_rows() {
            return Err(Error::InvalidData(format!(
                "a row filter returned {} values for a batch of {} rows",
                m.len(),
                batch.num_rows()
            )));
        }
        Ok(is_true(&m))
    }
}

/// `true` where `m` is true; false where it is false or null.
fn is_true(m: &BooleanArray) -> BooleanArray {
    match m.nulls() {
        None => m.clone(),
        Some(_) => m.iter().map(|v| Some(v == Some(true))).collect(),
    }
}

/// The predicate's value on each row, with SQL's three-valued logic (null = unknown).
fn evaluate(p: &Predicate, batch: &RecordBatch) -> Result<BooleanArray> {
    use arrow_arith::boolean::{and_kleene, not, or_kleene};
    Ok(match p {
        Predicate::And(ps) => fold(ps, batch, and_kleene)?,
        Predicate::Or(ps) => fold(ps, batch, or_kleene)?,
        Predicate::Not(inner) => not(&evaluate(inner, batch)?)?,
        Predicate::Compare { column, op, value } => {
            let (array, ty) = column_of(batch, column)?;
            compare(&array, *op, &scalar(column, &ty, value)?)?
        }
        Predicate::In {
            column,
            values,
            negated,
        } => {
            let (array, ty) = column_of(batch, column)?;
            let mut any: Option<BooleanArray> = None;
            for v in values {
                let eq = compare(&array, CompareOp::Eq, &scalar(column, &ty, v)?)?;
                any = Some(match any {
                    None => eq,
                    Some(a) => or_kleene(&a, &eq)?,
                });
            }
            let any = any.unwrap_or_else(|| BooleanArray::from(vec![false; batch.num_rows()]));
            if *negated { not(&any)? } else { any }
        }
        Predicate::Between {
            column,
            low,
            high,
            negated,
        } => {
            let (array, ty) = column_of(batch, column)?;
            let ge = compare(&array, CompareOp::GtEq, &scalar(column, &ty, low)?)?;
            let le = compare(&array, CompareOp::LtEq, &scalar(column, &ty, high)?)?;
            let both = and_kleene(&ge, &le)?;
            if *negated { not(&both)? } else { both }
        }
        Predicate::IsNull { column, negated } => {
            let (array, _) = column_of(batch, column)?;
            if *negated {
                arrow_arith::boolean::is_not_null(&array)?
            } else {
                arrow_arith::boolean::is_null(&array)?
            }
        }
        Predicate::Spatial(s) => spatial(s, batch)?,
    })
}

fn fold(
    ps: &[Predicate],
    batch: &RecordBatch,
    op: fn(
        &BooleanArray,
        &BooleanArray,
    ) -> std::result::Result<BooleanArray, arrow_schema::ArrowError>,
) -> Result<BooleanArray> {
    let mut acc: Option<BooleanArray> = None;
    for p in ps {
        let v = evaluate(p, batch)?;
        acc = Some(match acc {
            None => v,
            Some(a) => op(&a, &v)?,
        });
    }
    Ok(acc.unwrap_or_else(|| BooleanArray::from(vec![true; batch.num_rows()])))
}

/// The column and its Iceberg type (from the batch's Arrow type).
fn column_of(batch: &RecordBatch, column: &str) -> Result<(ArrayRef, PrimitiveType)> {
    let array = batch
        .column_by_name(column)
        .cloned()
        .ok_or_else(|| Error::NoSuchColumn {
            table: "the scanned rows".into(),
            column: column.to_string(),
            available: batch
                .schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let ty = match array.data_type() {
        ArrowType::Boolean => PrimitiveType::Boolean,
        ArrowType::Int32 => PrimitiveType::Int,
        ArrowType::Int64 => PrimitiveType::Long,
        ArrowType::Float32 => PrimitiveType::Float,
        ArrowType::Float64 => PrimitiveType::Double,
        ArrowType::Utf8 => PrimitiveType::String,
        ArrowType::Date32 => PrimitiveType::Date,
        ArrowType::Timestamp(_, None) => PrimitiveType::Timestamp,
        ArrowType::Timestamp(_, Some(_)) => PrimitiveType::Timestamptz,
        ArrowType::Binary => PrimitiveType::Binary,
        other => {
            return Err(Error::WrongColumnType {
                column: column.to_string(),
                found: other.to_string(),
                expected: "a column a WHERE condition can compare".into(),
            });
        }
    };
    Ok((array, ty))
}

/// A literal as a one-value array of the column's Arrow type.
fn scalar(column: &str, ty: &PrimitiveType, value: &Literal) -> Result<ArrayRef> {
    let d: Datum = datum(column, ty, value)?;
    Ok(match (ty, d.literal()) {
        (PrimitiveType::Boolean, PrimitiveLiteral::Boolean(b)) => {
            Arc::new(BooleanArray::from(vec![*b]))
        }
        (PrimitiveType::Int, PrimitiveLiteral::Int(i)) => Arc::new(Int32Array::from(vec![*i])),
        (PrimitiveType::Date, PrimitiveLiteral::Int(i)) => Arc::new(Date32Array::from(vec![*i])),
        (PrimitiveType::Long, PrimitiveLiteral::Long(i)) => Arc::new(Int64Array::from(vec![*i])),
        (PrimitiveType::Timestamp, PrimitiveLiteral::Long(i)) => {
            Arc::new(TimestampMicrosecondArray::from(vec![*i]))
        }
        (PrimitiveType::Timestamptz, PrimitiveLiteral::Long(i)) => {
            Arc::new(TimestampMicrosecondArray::from(vec![*i]).with_timezone("+00:00"))
        }
        (PrimitiveType::Float, PrimitiveLiteral::Float(f)) => {
            Arc::new(Float32Array::from(vec![f.0]))
        }
        (PrimitiveType::Double, PrimitiveLiteral::Double(f)) => {
            Arc::new(Float64Array::from(vec![f.0]))
        }
        (PrimitiveType::String, PrimitiveLiteral::String(s)) => {
            Arc::new(StringArray::from(vec![s.as_str()]))
        }
        _ => {
            return Err(Error::InvalidData(format!(
                "cannot compare column {column:?} of type {ty} with {value}"
            )));
        }
    })
}

fn compare(array: &ArrayRef, op: CompareOp, value: &ArrayRef) -> Result<BooleanArray> {
    use arrow_ord::cmp;
    // A time zone on one side only is a type mismatch to Arrow; the values are both UTC.
    let value = if value.data_type() != array.data_type() {
        arrow_cast::cast(value, array.data_type())?
    } else {
        value.clone()
    };
    let s = Scalar::new(value);
    let a = array.as_ref();
    Ok(match op {
        CompareOp::Eq => cmp::eq(&a, &s)?,
        CompareOp::NotEq => cmp::neq(&a, &s)?,
        CompareOp::Lt => cmp::lt(&a, &s)?,
        CompareOp::LtEq => cmp::lt_eq(&a, &s)?,
        CompareOp::Gt => cmp::gt(&a, &s)?,
        CompareOp::GtEq => cmp::gt_eq(&a, &s)?,
    })
}

/// An exact spatial predicate against the window (planar, or on the sphere for a geography
/// column); null geometry gives null.
fn spatial(s: &SpatialFilter, batch: &RecordBatch) -> Result<BooleanArray> {
    let (array, _) = column_of(batch, &s.column)?;
    if let Ok(field) = batch.schema().field_with_name(&s.column) {
        if is_geography(field) {
            return spatial_on_sphere(s, array.as_ref());
        }
        if s.window.wraps() {
            return Err(wrapping_envelope_on_planar_column(
                s,
                &geoberg_crs::ColumnType::GeometryWithoutCrs,
            ));
        }
    }
    let window = s.window.geometry();
    let mut out = Vec::with_capacity(array.len());
    for row in 0..array.len() {
        if array.is_null(row) {
            out.push(None);
            continue;
        }
        let bytes = match array.data_type() {
            ArrowType::Binary => array.as_binary::<i32>().value(row),
            ArrowType::LargeBinary => array.as_binary::<i64>().value(row),
            other => {
                return Err(Error::WrongColumnType {
                    column: s.column.clone(),
                    found: other.to_string(),
                    expected: "binary WKB".into(),
                });
            }
        };
        let wkb = wkb::reader::read_wkb(bytes).map_err(|e| Error::InvalidColumnData {
            column: s.column.clone(),
            reason: format!("row {row}: invalid WKB: {e}"),
        })?;
        // `None` for empty points, which relate to nothing.
        let Some(g): Option<geo_types::Geometry<f64>> = wkb.try_to_geometry() else {
            out.push(Some(false));
            continue;
        };
        out.push(Some(match s.relation {
            SpatialRelation::Intersects => g.intersects(window),
            SpatialRelation::Contains => g.contains(window),
            SpatialRelation::Within => window.contains(&g),
            SpatialRelation::DWithin(d) => Euclidean.distance(&g, window) <= d,
        }));
    }
    Ok(BooleanArray::from(out))
}

/// Whether a batch column holds geography: GeoArrow's `geoarrow.wkb` extension with edges other
/// than planar (the `"edges"` key of the GeoArrow spec, or `"algorithm"` as parquet's reader
/// writes it), as the table's scans return geography columns.
fn is_geography(field: &arrow_schema::Field) -> bool {
    let md = field.metadata();
    if md.get("ARROW:extension:name").map(String::as_str) != Some("geoarrow.wkb") {
        return false;
    }
    let Some(Ok(json)) = md
        .get("ARROW:extension:metadata")
        .map(|m| serde_json::from_str::<serde_json::Value>(m))
    else {
        return false;
    };
    ["edges", "algorithm"].iter().any(|k| {
        json.get(k)
            .and_then(|e| e.as_str())
            .is_some_and(|e| e != "planar")
    })
}

/// The exact spatial predicate on a geography column, on the sphere (great-circle edges,
/// `ST_DWithin` in metres): `geoberg-geography`'s kernels against the window's region (an
/// `ST_MakeEnvelope` by its corners, across the antimeridian when `minX > maxX`). Null values
/// give null.
fn spatial_on_sphere(s: &SpatialFilter, array: &dyn Array) -> Result<BooleanArray> {
    let window = GeographyWindow::from_sql(&s.window)?;
    let q = window.query();
    Ok(match s.relation {
        SpatialRelation::Intersects => geoberg_geography::intersects(array, q)?,
        SpatialRelation::Contains => geoberg_geography::contains(array, q)?,
        SpatialRelation::Within => {
            window.check_within(&s.column)?;
            geoberg_geography::within(array, q)?
        }
        SpatialRelation::DWithin(d) => geoberg_geography::dwithin(array, q, d)?,
    })
}
