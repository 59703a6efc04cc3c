//! Column leaves of a scan filter decided on one data file's statistics: its bounds, null and
//! NaN counts in the manifest. Conservative like Iceberg's inclusive metrics evaluator: a
//! file is dropped only when its statistics prove that no row matches; whatever is unknown
//! keeps the file.

use geoberg_sql::{CompareOp, Literal, Predicate};
use iceberg::spec::{DataFile, Datum, PrimitiveType};

use crate::error::{Error, Result};
use crate::table::Table;

/// One column's statistics in one file.
struct Stats<'a> {
    ty: PrimitiveType,
    values: Option<u64>,
    nulls: Option<u64>,
    nans: Option<u64>,
    lower: Option<&'a Datum>,
    upper: Option<&'a Datum>,
}

/// The column a leaf compares and its primitive type, or the error naming what is wrong.
fn leaf_column(table: &Table, column: &str) -> Result<(i32, PrimitiveType)> {
    let schema = table.metadata().current_schema();
    let field = schema
        .field_by_name(column)
        .ok_or_else(|| table.no_such_column(column))?;
    let ty = field
        .field_type
        .as_primitive_type()
        .cloned()
        .ok_or_else(|| Error::WrongColumnType {
            column: column.to_string(),
            found: field.field_type.to_string(),
            expected: "a primitive column for a WHERE comparison".into(),
        })?;
    Ok((field.id, ty))
}

/// A column leaf (`Compare`, `In`, `Between`, `IsNull`) resolved against the table's schema,
/// its literals converted to the column's values once. Building it fails on a column the table
/// lacks or a literal the column cannot hold, whether or not any file is planned.
#[derive(Debug, Clone)]
pub(crate) struct ColumnLeaf {
    id: i32,
    ty: PrimitiveType,
    test: Test,
}

#[derive(Debug, Clone)]
enum Test {
    IsNull {
        negated: bool,
    },
    Compare(CompareOp, Datum),
    In(Vec<Datum>),
    /// `NOT IN`, `NOT BETWEEN`: only an all-null file is decided.
    AnyNonNull,
    Between(Datum, Datum),
    /// Not a column leaf: undecided.
    Unknown,
}

impl ColumnLeaf {
    /// `predicate` (a leaf) against `table`'s current schema.
    pub(crate) fn new(table: &Table, predicate: &Predicate) -> Result<ColumnLeaf> {
        let column = match predicate {
            Predicate::Compare { column, .. }
            | Predicate::In { column, .. }
            | Predicate::Between { column, .. }
            | Predicate::IsNull { column, .. } => column,
            _ => {
                return Ok(ColumnLeaf {
                    id: 0,
                    ty: PrimitiveType::Boolean,
                    test: Test::Unknown,
                });
            }
        };
        let (id, ty) = leaf_column(table, column)?;
        let test = match predicate {
            Predicate::IsNull { negated, .. } => Test::IsNull { negated: *negated },
            Predicate::Compare { op, value, .. } => Test::Compare(*op, datum(column, &ty, value)?),
            Predicate::In {
                values, negated, ..
            } => {
                let values = values
                    .iter()
                    .map(|v| datum(column, &ty, v))
                    .collect::<Result<Vec<_>>>()?;
                match negated {
                    true => Test::AnyNonNull,
                    false => Test::In(values),
                }
            }
            Predicate::Between {
                low, high, negated, ..
            } => {
                let (lo, hi) = (datum(column, &ty, low)?, datum(column, &ty, high)?);
                match negated {
                    true => Test::AnyNonNull,
                    false => Test::Between(lo, hi),
                }
            }
            _ => Test::Unknown,
        };
        Ok(ColumnLeaf { id, ty, test })
    }

    /// Whether a row of `file` may pass, by the file's statistics of the column.
    pub(crate) fn may_match(&self, file: &DataFile) -> bool {
        let id = self.id;
        let s = Stats {
            ty: self.ty.clone(),
            values: file.value_counts().get(&id).copied(),
            nulls: file.null_value_counts().get(&id).copied(),
            nans: file.nan_value_counts().get(&id).copied(),
            lower: file.lower_bounds().get(&id),
            upper: file.upper_bounds().get(&id),
        };
        match &self.test {
            Test::IsNull { negated: false } => s.nulls != Some(0),
            Test::IsNull { negated: true } | Test::AnyNonNull => !s.all_null(),
            Test::Compare(op, v) => s.compare_may_match(*op, v),
            Test::In(values) => values.iter().any(|v| s.compare_may_match(CompareOp::Eq, v)),
            Test::Between(lo, hi) => {
                s.compare_may_match(CompareOp::GtEq, lo) && s.compare_may_match(CompareOp::LtEq, hi)
            }
            Test::Unknown => true,
        }
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
