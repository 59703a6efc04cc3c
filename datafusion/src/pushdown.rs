//! Which pushed filters a scan can use, and in what form.
//!
//! Two kinds of filter prune a geoberg table:
//! - spatial predicates on a geometry column with a constant geometry (`ST_Intersects`,
//!   `ST_Contains`, `ST_Within`, `ST_Covers`, `ST_DWithin`, `ST_Distance(..) <= d`, under AND /
//!   OR). SedonaDB's [`SpatialFilterFactory`] reduces them to a box per column; the box tree
//!   becomes a [`SpatialPruning`] (`spatial_pruning`), evaluated against the Iceberg file bounds (through the
//!   table's file index) and the Parquet geo statistics of each row group;
//! - the same predicates on a geography column with a constant region
//!   ([`SpatialPruning::Geography`], recognised in `geography_pushdown`), evaluated on the
//!   sphere against the files' geography bounds;
//! - comparisons on ordinary columns (`=`, `<>`, `<`, `<=`, `>`, `>=`, `BETWEEN`, `IN`,
//!   `IS [NOT] NULL`, under AND / OR / NOT) become a [`geoberg_sql::Predicate`] for
//!   `Table::files_matching` (column bounds, null counts, partition values), and DataFusion's
//!   own Parquet reader prunes row groups on the same expressions.
//!
//! Every filter is `Inexact`: DataFusion evaluates it again on the rows read, so pruning only
//! ever decides what need not be read, and a filter the scan cannot use costs nothing.

use std::collections::HashMap;

use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator, TableProviderFilterPushDown};
use geoberg_sql::{CompareOp, Literal, Predicate};
use geoberg_table::{ScanFilter, Table};
use iceberg::spec::{PrimitiveType, Type};

use crate::geography_pushdown::geography_pruning;
use crate::spatial_pruning::SpatialPruning;

/// The kind of an ordinary column, as far as comparisons on its statistics go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Boolean,
    Int,
    Long,
    Float,
    String,
    Date,
}

/// The columns of a table that pushed filters may name, by kind.
#[derive(Debug, Clone, Default)]
pub struct TableColumns {
    ordinary: HashMap<String, Kind>,
    geometry: Vec<String>,
    geography: Vec<String>,
}

impl TableColumns {
    /// The columns of the table's current schema: planar geometry columns (declared or not)
    /// take spatial filters, columns of a comparable primitive type take comparisons.
    pub fn of(table: &Table) -> TableColumns {
        let mut out = TableColumns::default();
        for g in table.geo_columns() {
            if matches!(g.column_type, geoberg_crs::ColumnType::Geography { .. }) {
                out.geography.push(g.name.clone());
            } else {
                out.geometry.push(g.name.clone());
            }
        }
        for field in table.metadata().current_schema().as_struct().fields() {
            if table.geo_columns().iter().any(|g| g.field_id == field.id) {
                continue;
            }
            let kind = match field.field_type.as_ref() {
                Type::Primitive(PrimitiveType::Boolean) => Kind::Boolean,
                Type::Primitive(PrimitiveType::Int) => Kind::Int,
                Type::Primitive(PrimitiveType::Long) => Kind::Long,
                Type::Primitive(PrimitiveType::Float | PrimitiveType::Double) => Kind::Float,
                Type::Primitive(PrimitiveType::String) => Kind::String,
                Type::Primitive(PrimitiveType::Date) => Kind::Date,
                _ => continue,
            };
            out.ordinary.insert(field.name.clone(), kind);
        }
        out
    }

    /// The spatial pruning of one filter, on geometry and geography columns.
    fn spatial(&self, filter: &Expr) -> SpatialPruning {
        SpatialPruning::from_expr(filter, &self.geometry)
            .and(geography_pruning(filter, &self.geography))
    }
}

/// What the scan makes of its pushed filters.
#[derive(Debug, Clone)]
pub struct PushedFilters {
    /// The spatial pruning of all filters together.
    pub spatial: SpatialPruning,
    /// A condition every matching row satisfies, on ordinary columns (`None`: none).
    pub columns: Option<Predicate>,
    /// The filters the Parquet reader may prune row groups with: those that gave
    /// [`PushedFilters::columns`] a part, except any naming a float column. Parquet keeps NaN
    /// out of float statistics while DataFusion orders NaN above every number, so DataFusion
    /// 54 skips row groups whose NaN rows match `x > 1.0` (apache/datafusion#24804 fixes it).
    pub parquet_exprs: Vec<Expr>,
}

impl PushedFilters {
    /// Sorts `filters` (the conjuncts DataFusion pushed) by use.
    pub fn new(filters: &[Expr], columns: &TableColumns) -> PushedFilters {
        let mut spatial = SpatialPruning::Anything;
        let mut parts = Vec::new();
        let mut parquet_exprs = Vec::new();
        for f in filters {
            spatial = spatial.and(columns.spatial(f));
            if let Some(p) = implied(f, columns) {
                parts.push(p);
                let names_float = f
                    .column_refs()
                    .iter()
                    .any(|c| columns.kind(&c.name) == Some(Kind::Float));
                if !names_float {
                    parquet_exprs.push(f.clone());
                }
            }
        }
        PushedFilters {
            spatial,
            columns: Predicate::and(parts),
            parquet_exprs,
        }
    }

    /// The filters as the table crate's scan filter of `table`: the spatial tree and the
    /// column condition under AND. A column condition the table refuses (it cannot happen for
    /// one built from the table's own columns) prunes nothing, and the reason says why.
    pub fn scan_filter(&self, table: &Table) -> (ScanFilter, Option<String>) {
        let (columns, reason) = match &self.columns {
            None => (ScanFilter::Anything, None),
            Some(p) => match ScanFilter::from_predicate(table, p) {
                Ok(f) => (f, None),
                Err(e) => (
                    ScanFilter::Anything,
                    Some(format!("no file skipping on {}: {e}", p.to_sql())),
                ),
            },
        };
        (
            ScanFilter::and([self.spatial.scan_filter(), columns]),
            reason,
        )
    }

    /// Whether the scan can prune anything with `filter`.
    pub fn usable(filter: &Expr, columns: &TableColumns) -> bool {
        !columns.spatial(filter).is_anything() || implied(filter, columns).is_some()
    }

    /// What a geoberg scan tells DataFusion of each filter: `Inexact` where it prunes with it
    /// (DataFusion still applies the filter to every row read), `Unsupported` otherwise.
    pub fn support(filters: &[&Expr], columns: &TableColumns) -> Vec<TableProviderFilterPushDown> {
        filters
            .iter()
            .map(|f| match Self::usable(f, columns) {
                true => TableProviderFilterPushDown::Inexact,
                false => TableProviderFilterPushDown::Unsupported,
            })
            .collect()
    }
}

/// A condition on ordinary columns that every row satisfying `expr` satisfies (parts that
/// cannot be expressed are dropped from conjunctions), or `None`.
fn implied(expr: &Expr, columns: &TableColumns) -> Option<Predicate> {
    match expr {
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::And,
            right,
        }) => {
            let parts: Vec<Predicate> = [implied(left, columns), implied(right, columns)]
                .into_iter()
                .flatten()
                .collect();
            Predicate::and(parts)
        }
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Or,
            right,
        }) => Predicate::or(vec![implied(left, columns)?, implied(right, columns)?]),
        _ => exact(expr, columns),
    }
}

/// `expr` exactly as a condition on ordinary columns, or `None`.
fn exact(expr: &Expr, columns: &TableColumns) -> Option<Predicate> {
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
            Operator::And => Predicate::and(vec![exact(left, columns)?, exact(right, columns)?]),
            Operator::Or => Predicate::or(vec![exact(left, columns)?, exact(right, columns)?]),
            _ => {
                let op = compare_op(*op)?;
                if let Some(column) = column_of(left) {
                    let value = literal(right, columns.kind(column)?)?;
                    return Some(Predicate::Compare {
                        column: column.to_string(),
                        op,
                        value,
                    });
                }
                let column = column_of(right)?;
                let value = literal(left, columns.kind(column)?)?;
                Some(Predicate::Compare {
                    column: column.to_string(),
                    op: op.flip(),
                    value,
                })
            }
        },
        Expr::Not(inner) => Some(Predicate::Not(Box::new(exact(inner, columns)?))),
        Expr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) => {
            let column = column_of(expr)?;
            let kind = columns.kind(column)?;
            Some(Predicate::Between {
                column: column.to_string(),
                low: literal(low, kind)?,
                high: literal(high, kind)?,
                negated: *negated,
            })
        }
        Expr::InList(list) => {
            let column = column_of(&list.expr)?;
            let kind = columns.kind(column)?;
            let values = list
                .list
                .iter()
                .map(|v| literal(v, kind))
                .collect::<Option<Vec<_>>>()?;
            if values.is_empty() {
                return None;
            }
            Some(Predicate::In {
                column: column.to_string(),
                values,
                negated: list.negated,
            })
        }
        Expr::IsNull(inner) | Expr::IsNotNull(inner) => {
            let column = column_of(inner)?;
            columns.kind(column)?;
            Some(Predicate::IsNull {
                column: column.to_string(),
                negated: matches!(expr, Expr::IsNotNull(_)),
            })
        }
        _ => None,
    }
}

impl TableColumns {
    fn kind(&self, column: &str) -> Option<Kind> {
        self.ordinary.get(column).copied()
    }
}

fn compare_op(op: Operator) -> Option<CompareOp> {
    Some(match op {
        Operator::Eq => CompareOp::Eq,
        Operator::NotEq => CompareOp::NotEq,
        Operator::Lt => CompareOp::Lt,
        Operator::LtEq => CompareOp::LtEq,
        Operator::Gt => CompareOp::Gt,
        Operator::GtEq => CompareOp::GtEq,
        _ => return None,
    })
}

fn column_of(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Column(c) => Some(c.name.as_str()),
        _ => None,
    }
}

/// A constant as a literal of the column's kind. `None` for anything the file statistics
/// could misjudge: NULL (never equal to anything), NaN (ordered above every number by
/// DataFusion, unordered by the bounds), an integer out of an `int` column's range, a value of
/// another kind.
fn literal(expr: &Expr, kind: Kind) -> Option<Literal> {
    let Expr::Literal(value, _) = expr else {
        return None;
    };
    let integer = match value {
        ScalarValue::Int8(Some(v)) => Some(i64::from(*v)),
        ScalarValue::Int16(Some(v)) => Some(i64::from(*v)),
        ScalarValue::Int32(Some(v)) => Some(i64::from(*v)),
        ScalarValue::Int64(Some(v)) => Some(*v),
        ScalarValue::UInt8(Some(v)) => Some(i64::from(*v)),
        ScalarValue::UInt16(Some(v)) => Some(i64::from(*v)),
        ScalarValue::UInt32(Some(v)) => Some(i64::from(*v)),
        ScalarValue::UInt64(Some(v)) => i64::try_from(*v).ok(),
        _ => None,
    };
    let float = match value {
        ScalarValue::Float32(Some(v)) => Some(f64::from(*v)),
        ScalarValue::Float64(Some(v)) => Some(*v),
        _ => None,
    };
    match kind {
        Kind::Int => integer
            .filter(|v| i32::try_from(*v).is_ok())
            .map(Literal::Integer),
        Kind::Long => integer.map(Literal::Integer),
        Kind::Float => match (integer, float) {
            (Some(i), _) => Some(Literal::Integer(i)),
            (_, Some(f)) if !f.is_nan() => Some(Literal::Float(f)),
            _ => None,
        },
        Kind::Boolean => match value {
            ScalarValue::Boolean(Some(b)) => Some(Literal::Boolean(*b)),
            _ => None,
        },
        Kind::String => match value {
            ScalarValue::Utf8(Some(s))
            | ScalarValue::LargeUtf8(Some(s))
            | ScalarValue::Utf8View(Some(s)) => Some(Literal::String(s.clone())),
            _ => None,
        },
        Kind::Date => match value {
            ScalarValue::Date32(Some(days)) => {
                let date = civil_date(*days)?;
                Some(Literal::String(date))
            }
            _ => None,
        },
    }
}

/// `YYYY-MM-DD` of a day count since 1970-01-01 (proleptic Gregorian), as Iceberg parses it.
/// Civil-from-days after Howard Hinnant's algorithm, to avoid a date crate for one conversion.
fn civil_date(days: i32) -> Option<String> {
    let z = i64::from(days) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (0..=9999)
        .contains(&year)
        .then(|| format!("{year:04}-{month:02}-{day:02}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::{col, lit};
    use std::ops::Not;
    use std::sync::Arc;

    fn columns() -> TableColumns {
        TableColumns {
            ordinary: HashMap::from([
                ("id".to_string(), Kind::Long),
                ("n".to_string(), Kind::Int),
                ("x".to_string(), Kind::Float),
                ("s".to_string(), Kind::String),
                ("d".to_string(), Kind::Date),
            ]),
            geometry: vec!["geom".into()],
            geography: vec!["geog".into()],
        }
    }

    #[test]
    fn comparisons_become_predicates_and_unknown_parts_drop_from_and_only() {
        let c = columns();
        let p = implied(&col("id").gt(lit(5i64)).and(col("zzz").eq(lit(1))), &c).unwrap();
        assert_eq!(p.to_sql(), "id > 5");
        assert!(implied(&col("id").gt(lit(5i64)).or(col("zzz").eq(lit(1))), &c).is_none());
        // NOT needs its whole operand: NOT (a AND unknown) implies nothing about a.
        assert!(
            implied(
                &(col("id").gt(lit(5i64)).and(col("zzz").eq(lit(1)))).not(),
                &c
            )
            .is_none()
        );
        let p = implied(&lit(3i64).lt_eq(col("id")), &c).unwrap();
        assert_eq!(p.to_sql(), "id >= 3");
        let p = implied(&col("s").in_list(vec![lit("a"), lit("b")], true), &c).unwrap();
        assert_eq!(p.to_sql(), "s NOT IN ('a', 'b')");
        let p = implied(&col("x").between(lit(1.5), lit(2)), &c).unwrap();
        assert_eq!(p.to_sql(), "x BETWEEN 1.5 AND 2");
        assert!(implied(&col("x").lt(lit(f64::NAN)), &c).is_none());
        assert!(implied(&col("n").eq(lit(1i64 << 40)), &c).is_none());
        assert!(implied(&col("id").eq(lit(ScalarValue::Int64(None))), &c).is_none());
        assert!(implied(&col("id").eq(lit("5")), &c).is_none());
        let p = implied(&col("s").is_not_null(), &c).unwrap();
        assert_eq!(p.to_sql(), "s IS NOT NULL");
        let p = implied(&col("d").eq(lit(ScalarValue::Date32(Some(19_723)))), &c).unwrap();
        assert_eq!(p.to_sql(), "d = '2024-01-01'");
    }

    #[test]
    fn dates_match_the_proleptic_calendar() {
        assert_eq!(civil_date(0).unwrap(), "1970-01-01");
        assert_eq!(civil_date(-1).unwrap(), "1969-12-31");
        assert_eq!(civil_date(11_016).unwrap(), "2000-02-29");
        assert_eq!(civil_date(59).unwrap(), "1970-03-01");
    }

    #[test]
    fn pruning_trees_simplify_and_translate() {
        let a = SpatialPruning::Intersects {
            column: "g".into(),
            bbox: [0.0, 0.0, 1.0, 1.0],
        };
        assert_eq!(a.clone().and(SpatialPruning::Anything), a);
        assert_eq!(
            a.clone().or(SpatialPruning::Anything),
            SpatialPruning::Anything
        );
        assert_eq!(a.clone().or(SpatialPruning::Nothing), a);
        let both = a.clone().or(SpatialPruning::Intersects {
            column: "h".into(),
            bbox: [5.0, 5.0, 6.0, 6.0],
        });
        // Files and row groups are selected on the tree as the table's one ScanFilter.
        assert!(
            matches!(both.scan_filter(), geoberg_table::ScanFilter::Or(leaves) if leaves.len() == 2)
        );
        assert_eq!(both.columns(), ["g", "h"]);
        assert_eq!(both.to_string(), "(g && [0, 0, 1, 1] OR h && [5, 5, 6, 6])");
    }

    fn geog_point(x: f64, y: f64) -> Expr {
        let wkb = [&[1u8, 1, 0, 0, 0][..], &x.to_le_bytes(), &y.to_le_bytes()].concat();
        lit(ScalarValue::Binary(Some(wkb)))
    }

    #[test]
    fn geography_predicates_with_a_constant_become_sphere_leaves() {
        let c = columns();
        let intersects = datafusion::logical_expr::expr::ScalarFunction::new_udf(
            Arc::new(datafusion::logical_expr::ScalarUDF::new_from_impl(Named(
                "st_intersects",
            ))),
            vec![geog_point(180.0, 0.0), col("geog")],
        );
        let p = c.spatial(&Expr::ScalarFunction(intersects.clone()));
        let SpatialPruning::Geography {
            column, distance, ..
        } = &p
        else {
            panic!("{p:?}");
        };
        assert_eq!((column.as_str(), *distance), ("geog", None));
        assert_eq!(p.to_string(), "geog && sphere [180, 0, 180, 0]");
        // On a column that is not geography, or against another column: nothing.
        let mut other = intersects.clone();
        other.args[1] = col("geom");
        assert!(c.spatial(&Expr::ScalarFunction(other)).is_anything());
        let mut columns_only = intersects.clone();
        columns_only.args[0] = col("geog");
        assert!(c.spatial(&Expr::ScalarFunction(columns_only)).is_anything());
        // ST_Distance(geog, constant) <= metres.
        let distance = datafusion::logical_expr::expr::ScalarFunction::new_udf(
            Arc::new(datafusion::logical_expr::ScalarUDF::new_from_impl(Named(
                "st_distance",
            ))),
            vec![col("geog"), geog_point(0.0, 0.0)],
        );
        let p = c.spatial(&Expr::ScalarFunction(distance.clone()).lt_eq(lit(1000.0)));
        assert!(
            matches!(&p, SpatialPruning::Geography { distance: Some(d), .. } if *d == 1000.0),
            "{p:?}"
        );
        // A negative distance prunes nothing (the kernel reports it).
        let p = c.spatial(&Expr::ScalarFunction(distance).lt_eq(lit(-1.0)));
        assert!(p.is_anything());
        // NOT is never a leaf.
        assert!(
            c.spatial(&Expr::ScalarFunction(intersects).not())
                .is_anything()
        );
    }

    /// A scalar function that is only a name, for building expressions.
    #[derive(Debug, PartialEq, Eq, Hash)]
    struct Named(&'static str);

    impl datafusion::logical_expr::ScalarUDFImpl for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn signature(&self) -> &datafusion::logical_expr::Signature {
            static S: std::sync::OnceLock<datafusion::logical_expr::Signature> =
                std::sync::OnceLock::new();
            S.get_or_init(|| {
                datafusion::logical_expr::Signature::variadic_any(
                    datafusion::logical_expr::Volatility::Immutable,
                )
            })
        }
        fn return_type(
            &self,
            _: &[arrow_schema::DataType],
        ) -> datafusion::error::Result<arrow_schema::DataType> {
            Ok(arrow_schema::DataType::Boolean)
        }
        fn invoke_with_args(
            &self,
            _: datafusion::logical_expr::ScalarFunctionArgs,
        ) -> datafusion::error::Result<datafusion::logical_expr::ColumnarValue> {
            unreachable!("only planned")
        }
    }
}
