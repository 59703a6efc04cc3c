//! Which data files may hold rows matching a WHERE condition, from their statistics alone:
//! what `rewrite_data_files(where => ...)` rewrites. Conservative like Iceberg's inclusive
//! metrics evaluator: a file is dropped only when its bounds, null counts or spatial bounds
//! prove that no row matches; whatever is unknown selects the file.

use std::collections::HashSet;

use geoberg_crs::{ColumnType, Crs};
use geoberg_geostats::{BBox, GeoKind, decode_geospatial_bounds};
use geoberg_pruning::{FileBounds, FileIndex, Predicate as PrunePredicate, SpatialFilter};
use geoberg_sql::{CompareOp, Literal, Predicate, SpatialRelation};
use iceberg::spec::{DataFile, Datum, PrimitiveLiteral, PrimitiveType};

use crate::error::{Error, Result};
use crate::geography_window::{GeographyWindow, wrapping_envelope_on_planar_column};
use crate::table::Table;

/// A builder's predicate and its WHERE text (`where_sql`), parsed and combined with AND.
pub(crate) fn combined_filter(
    predicate: Option<&Predicate>,
    sql: Option<&str>,
) -> Result<Option<Predicate>> {
    let parsed = sql.map(geoberg_sql::parse_condition).transpose()?;
    Ok(match (predicate, parsed) {
        (Some(p), Some(q)) => Predicate::and(vec![p.clone(), q]),
        (Some(p), None) => Some(p.clone()),
        (None, q) => q,
    })
}

/// For each of `files`, whether it may hold a row matching `predicate`.
pub(crate) fn select_files(
    table: &Table,
    files: &[DataFile],
    predicate: &Predicate,
) -> Result<Vec<bool>> {
    let predicate = push_not_down(predicate.clone(), false);
    let mut spatial = Vec::new();
    collect_spatial(table, files, &predicate, &mut spatial)?;
    let eval = Evaluator { table, spatial };
    files
        .iter()
        .enumerate()
        .map(|(i, f)| eval.may_match(&predicate, i, f, &mut 0))
        .collect()
}

/// `NOT` pushed to the leaves (Iceberg's `rewriteNot`), so that every leaf asks "may a row
/// match?". A negated spatial leaf cannot be decided from bounds and stays a `Not`.
fn push_not_down(p: Predicate, negate: bool) -> Predicate {
    use Predicate as P;
    match (p, negate) {
        (P::Not(inner), n) => push_not_down(*inner, !n),
        (P::And(ps), false) => P::And(ps.into_iter().map(|p| push_not_down(p, false)).collect()),
        (P::Or(ps), false) => P::Or(ps.into_iter().map(|p| push_not_down(p, false)).collect()),
        (P::And(ps), true) => P::Or(ps.into_iter().map(|p| push_not_down(p, true)).collect()),
        (P::Or(ps), true) => P::And(ps.into_iter().map(|p| push_not_down(p, true)).collect()),
        (P::Compare { column, op, value }, true) => P::Compare {
            column,
            op: match op {
                CompareOp::Eq => CompareOp::NotEq,
                CompareOp::NotEq => CompareOp::Eq,
                CompareOp::Lt => CompareOp::GtEq,
                CompareOp::LtEq => CompareOp::Gt,
                CompareOp::Gt => CompareOp::LtEq,
                CompareOp::GtEq => CompareOp::Lt,
            },
            value,
        },
        (
            P::In {
                column,
                values,
                negated,
            },
            true,
        ) => P::In {
            column,
            values,
            negated: !negated,
        },
        (
            P::Between {
                column,
                low,
                high,
                negated,
            },
            true,
        ) => P::Between {
            column,
            low,
            high,
            negated: !negated,
        },
        (P::IsNull { column, negated }, true) => P::IsNull {
            column,
            negated: !negated,
        },
        (p @ P::Spatial(_), true) => P::Not(Box::new(p)),
        (p, false) => p,
    }
}

/// Files each spatial leaf must read, in leaf order (depth first), through `pruning`.
fn collect_spatial(
    table: &Table,
    files: &[DataFile],
    p: &Predicate,
    out: &mut Vec<HashSet<usize>>,
) -> Result<()> {
    match p {
        Predicate::And(ps) | Predicate::Or(ps) => {
            for p in ps {
                collect_spatial(table, files, p, out)?;
            }
        }
        Predicate::Not(inner) => collect_spatial(table, files, inner, out)?,
        Predicate::Spatial(s) => {
            let geo = table.geo_column(&s.column)?;
            let entries: Vec<FileBounds> = files
                .iter()
                .map(|f| {
                    let bounds = file_geometry_bbox(table, f, geo.field_id, &geo.column_type);
                    let all_null = matches!(
                        (f.value_counts().get(&geo.field_id), f.null_value_counts().get(&geo.field_id)),
                        (Some(v), Some(n)) if v == n
                    );
                    FileBounds::new(f.file_path(), f.record_count(), f.file_size_in_bytes(), bounds)
                        .with_all_null(all_null)
                })
                .collect();
            let index = FileIndex::build(entries, &geo.column_type, table.format_version())?;
            let predicate = match s.relation {
                SpatialRelation::Intersects => PrunePredicate::Intersects,
                SpatialRelation::Contains => PrunePredicate::Contains,
                SpatialRelation::Within => PrunePredicate::Within,
                SpatialRelation::DWithin(distance) => PrunePredicate::DistanceWithin { distance },
            };
            // Geography: the region the window means on the sphere (an envelope by its
            // corners, so that one across the antimeridian is the one region it is); an
            // envelope across the antimeridian means nothing on a planar column.
            let mut filter = match &geo.column_type {
                ColumnType::Geography { .. } => {
                    GeographyWindow::from_sql(&s.window)?.filter(predicate)?
                }
                planar if s.window.wraps() => {
                    return Err(wrapping_envelope_on_planar_column(s, planar));
                }
                _ => SpatialFilter::from_wkb(predicate, s.window.wkb())?,
            };
            if let Some(srid) = s.window.srid() {
                filter = filter.with_crs(Crs::Srid(srid));
            }
            out.push(index.plan(&filter)?.read_indices().collect());
        }
        _ => {}
    }
    Ok(())
}

/// The geometry column's bounding box in a file's manifest entry: the v3 point bounds of the
/// column, else the double bounds of its bbox columns (under any of the names
/// `bbox_columns` knows).
pub(crate) fn file_geometry_bbox(
    table: &Table,
    file: &DataFile,
    field_id: i32,
    column_type: &ColumnType,
) -> Option<BBox> {
    let kind = match column_type {
        ColumnType::Geography { .. } => GeoKind::Geography,
        _ => GeoKind::Geometry,
    };
    let binary = |d: Option<&Datum>| match d?.literal() {
        PrimitiveLiteral::Binary(b) => Some(b.clone()),
        _ => None,
    };
    if table.bounds_are_points(field_id)
        && let (Some(lo), Some(hi)) = (
            binary(file.lower_bounds().get(&field_id)),
            binary(file.upper_bounds().get(&field_id)),
        )
    {
        return decode_geospatial_bounds(kind, &lo, &hi).ok();
    }
    crate::bbox_columns::file_bbox_from_columns(table, file, field_id)
}

struct Evaluator<'a> {
    table: &'a Table,
    spatial: Vec<HashSet<usize>>,
}

/// One column's statistics in one file.
struct Stats<'a> {
    ty: PrimitiveType,
    values: Option<u64>,
    nulls: Option<u64>,
    nans: Option<u64>,
    lower: Option<&'a Datum>,
    upper: Option<&'a Datum>,
}

impl Evaluator<'_> {
    fn may_match(
        &self,
        p: &Predicate,
        index: usize,
        file: &DataFile,
        leaf: &mut usize,
    ) -> Result<bool> {
        Ok(match p {
            Predicate::And(ps) => {
                let mut all = true;
                for p in ps {
                    // Every leaf is visited so that spatial leaves keep their numbering.
                    all &= self.may_match(p, index, file, leaf)?;
                }
                all
            }
            Predicate::Or(ps) => {
                let mut any = false;
                for p in ps {
                    any |= self.may_match(p, index, file, leaf)?;
                }
                any
            }
            Predicate::Not(inner) => {
                self.may_match(inner, index, file, leaf)?;
                true
            }
            Predicate::Spatial(_) => {
                let read = self.spatial[*leaf].contains(&index);
                *leaf += 1;
                read
            }
            Predicate::IsNull { column, negated } => {
                let s = self.stats(file, column)?;
                match negated {
                    false => s.nulls != Some(0),
                    true => !s.all_null(),
                }
            }
            Predicate::Compare { column, op, value } => {
                let s = self.stats(file, column)?;
                let v = datum(column, &s.ty, value)?;
                s.compare_may_match(*op, &v)
            }
            Predicate::In {
                column,
                values,
                negated,
            } => {
                let s = self.stats(file, column)?;
                if *negated {
                    !s.all_null()
                } else {
                    let mut any = false;
                    for value in values {
                        any |= s.compare_may_match(CompareOp::Eq, &datum(column, &s.ty, value)?);
                    }
                    any
                }
            }
            Predicate::Between {
                column,
                low,
                high,
                negated,
            } => {
                let s = self.stats(file, column)?;
                let (lo, hi) = (datum(column, &s.ty, low)?, datum(column, &s.ty, high)?);
                if *negated {
                    !s.all_null()
                } else {
                    s.compare_may_match(CompareOp::GtEq, &lo)
                        && s.compare_may_match(CompareOp::LtEq, &hi)
                }
            }
        })
    }

    fn stats<'f>(&self, file: &'f DataFile, column: &str) -> Result<Stats<'f>> {
        let schema = self.table.metadata().current_schema();
        let field = schema
            .field_by_name(column)
            .ok_or_else(|| self.table.no_such_column(column))?;
        let ty = field
            .field_type
            .as_primitive_type()
            .cloned()
            .ok_or_else(|| Error::WrongColumnType {
                column: column.to_string(),
                found: field.field_type.to_string(),
                expected: "a primitive column for a WHERE comparison".into(),
            })?;
        let id = field.id;
        Ok(Stats {
            ty,
            values: file.value_counts().get(&id).copied(),
            nulls: file.null_value_counts().get(&id).copied(),
            nans: file.nan_value_counts().get(&id).copied(),
            lower: file.lower_bounds().get(&id),
            upper: file.upper_bounds().get(&id),
        })
    }
}

impl Stats<'_> {
    fn all_null(&self) -> bool {
        matches!((self.values, self.nulls), (Some(v), Some(n)) if v == n)
    }

    /// May some row satisfy `column <op> v`? Bounds never include NaN, so a float column that
    /// may hold NaN is only decided by its null counts.
    fn compare_may_match(&self, op: CompareOp, v: &Datum) -> bool {
        if self.all_null() {
            return false; // NULL <op> v is never true
        }
        let float = matches!(self.ty, PrimitiveType::Float | PrimitiveType::Double);
        if float && self.nans != Some(0) {
            return true;
        }
        let lt = |a: &Datum, b: &Datum| a.partial_cmp(b) == Some(std::cmp::Ordering::Less);
        match op {
            CompareOp::Eq => {
                !(self.lower.is_some_and(|lo| lt(v, lo)) || self.upper.is_some_and(|hi| lt(hi, v)))
            }
            CompareOp::NotEq => true,
            CompareOp::Lt => self.lower.is_none_or(|lo| lt(lo, v)),
            CompareOp::LtEq => !self.lower.is_some_and(|lo| lt(v, lo)),
            CompareOp::Gt => self.upper.is_none_or(|hi| lt(v, hi)),
            CompareOp::GtEq => !self.upper.is_some_and(|hi| lt(hi, v)),
        }
    }
}

/// A WHERE literal as a value of the column's type; a literal that cannot be one fails with
/// the column, its type and the value.
pub(crate) fn datum(column: &str, ty: &PrimitiveType, value: &Literal) -> Result<Datum> {
    use PrimitiveType as P;
    let bad = |why: &str| {
        Error::InvalidData(format!(
            "WHERE compares column {column:?} of type {ty} with {value}: {why}"
        ))
    };
    Ok(match (ty, value) {
        (P::Boolean, Literal::Boolean(b)) => Datum::bool(*b),
        (P::Int, Literal::Integer(i)) => {
            Datum::int(i32::try_from(*i).map_err(|_| bad("the value does not fit an int"))?)
        }
        (P::Long, Literal::Integer(i)) => Datum::long(*i),
        (P::Float, Literal::Integer(i)) => Datum::float(*i as f32),
        (P::Float, Literal::Float(f)) => Datum::float(*f as f32),
        (P::Double, Literal::Integer(i)) => Datum::double(*i as f64),
        (P::Double, Literal::Float(f)) => Datum::double(*f),
        (P::String, Literal::String(s)) => Datum::string(s),
        (P::Date, Literal::String(s)) => {
            Datum::date_from_str(s).map_err(|_| bad("expected a date as 'YYYY-MM-DD'"))?
        }
        (P::Timestamp, Literal::String(s)) => Datum::timestamp_from_str(s)
            .map_err(|_| bad("expected a timestamp as 'YYYY-MM-DDTHH:MM:SS[.ffffff]'"))?,
        (P::Timestamptz, Literal::String(s)) => Datum::timestamptz_from_str(s)
            .map_err(|_| bad("expected a timestamp with offset, e.g. '2024-01-01T00:00:00Z'"))?,
        (P::Binary, _) => {
            return Err(bad(
                "binary and geometry columns take spatial predicates (ST_Intersects...), not comparisons",
            ));
        }
        _ => {
            return Err(bad(
                "the literal's type does not match the column; quote strings, not numbers",
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_is_pushed_to_the_leaves() {
        let p = geoberg_sql::parse_condition("NOT (a < 5 OR b IS NULL)").unwrap();
        let q = push_not_down(p, false);
        assert_eq!(
            q,
            geoberg_sql::parse_condition("a >= 5 AND b IS NOT NULL").unwrap()
        );
    }

    #[test]
    fn bounds_decide_comparisons_and_unknown_selects() {
        let (lo, hi) = (Datum::long(10), Datum::long(20));
        let s = Stats {
            ty: PrimitiveType::Long,
            values: Some(5),
            nulls: Some(0),
            nans: None,
            lower: Some(&lo),
            upper: Some(&hi),
        };
        assert!(!s.compare_may_match(CompareOp::Eq, &Datum::long(9)));
        assert!(s.compare_may_match(CompareOp::Eq, &Datum::long(10)));
        assert!(!s.compare_may_match(CompareOp::Lt, &Datum::long(10)));
        assert!(s.compare_may_match(CompareOp::LtEq, &Datum::long(10)));
        assert!(!s.compare_may_match(CompareOp::Gt, &Datum::long(20)));
        assert!(s.compare_may_match(CompareOp::GtEq, &Datum::long(20)));
        let unknown = Stats {
            lower: None,
            upper: None,
            ..s
        };
        assert!(unknown.compare_may_match(CompareOp::Eq, &Datum::long(9)));
        let d = datum("x", &PrimitiveType::Long, &Literal::String("a".into())).unwrap_err();
        assert!(d.to_string().contains("column \"x\" of type long"), "{d}");
    }
}
