//! Spatial predicates on a geography column with a constant region, as file pruning: the
//! region on the sphere (its WKB, bounded with great-circle edges by the pruning crate) against
//! the files' geography bounds, which the table crate computes on the sphere (wrapping as
//! `min_x > max_x`). The kernels of `geography_kernels` still decide every row read: pruning
//! only skips files no row of which can match.
//!
//! Recognised, under AND / OR: `ST_Intersects`, `ST_Contains`, `ST_Within`, `ST_Covers`,
//! `ST_CoveredBy` (either argument order; each needs the row to share a point with the region,
//! so the bounds must meet), `ST_DWithin(g, region, metres)` and `ST_Distance(g, region) <=
//! metres` (`<`, and the mirrored forms), whose bounds must come within the distance.

use datafusion::common::ScalarValue;
use datafusion::logical_expr::{BinaryExpr, Expr, Operator};

use crate::geography_kernels::check_envelope_width;
use crate::spatial_pruning::SpatialPruning;

/// The predicates whose every match shares a point with the region.
const MEETING_PREDICATES: [&str; 5] = [
    "st_intersects",
    "st_contains",
    "st_within",
    "st_covers",
    "st_coveredby",
];

/// The pruning of `expr` on the geography columns `columns`, or [`SpatialPruning::Anything`].
pub(crate) fn geography_pruning(expr: &Expr, columns: &[String]) -> SpatialPruning {
    if columns.is_empty() {
        return SpatialPruning::Anything;
    }
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
            Operator::And => {
                geography_pruning(left, columns).and(geography_pruning(right, columns))
            }
            Operator::Or => geography_pruning(left, columns).or(geography_pruning(right, columns)),
            // distance <= d, d >= distance (and strict forms: a bound that holds for <=).
            Operator::LtEq | Operator::Lt => distance_bound(left, right, columns),
            Operator::GtEq | Operator::Gt => distance_bound(right, left, columns),
            _ => SpatialPruning::Anything,
        },
        Expr::ScalarFunction(f) => {
            let name = f.func.name();
            match f.args.as_slice() {
                [a, b] if MEETING_PREDICATES.contains(&name) => {
                    leaf(a, b, None, columns).unwrap_or(SpatialPruning::Anything)
                }
                [a, b, d] if name == "st_dwithin" => metres(d)
                    .and_then(|m| leaf(a, b, Some(m), columns))
                    .unwrap_or(SpatialPruning::Anything),
                _ => SpatialPruning::Anything,
            }
        }
        _ => SpatialPruning::Anything,
    }
}

/// `ST_Distance(g, region) <= bound`.
fn distance_bound(distance: &Expr, bound: &Expr, columns: &[String]) -> SpatialPruning {
    let Expr::ScalarFunction(f) = distance else {
        return SpatialPruning::Anything;
    };
    match f.args.as_slice() {
        [a, b] if f.func.name() == "st_distance" => metres(bound)
            .and_then(|m| leaf(a, b, Some(m), columns))
            .unwrap_or(SpatialPruning::Anything),
        _ => SpatialPruning::Anything,
    }
}

/// A geography column against a constant region, in either order.
fn leaf(a: &Expr, b: &Expr, metres: Option<f64>, columns: &[String]) -> Option<SpatialPruning> {
    let (column, wkb) = match (column_of(a, columns), constant_wkb(b)) {
        (Some(c), Some(w)) => (c, w),
        _ => (column_of(b, columns)?, constant_wkb(a)?),
    };
    // A wide envelope is refused by the kernel; prune nothing so that the error shows.
    check_envelope_width(crate::geography_kernels::SphericalFunction::Intersects, wkb).ok()?;
    Some(SpatialPruning::Geography {
        column: column.to_string(),
        wkb: wkb.to_vec(),
        distance: metres,
    })
}

fn column_of<'a>(expr: &'a Expr, columns: &[String]) -> Option<&'a str> {
    match expr {
        Expr::Column(c) if columns.contains(&c.name) => Some(c.name.as_str()),
        _ => None,
    }
}

fn constant_wkb(expr: &Expr) -> Option<&[u8]> {
    match expr {
        Expr::Literal(
            ScalarValue::Binary(Some(v))
            | ScalarValue::LargeBinary(Some(v))
            | ScalarValue::BinaryView(Some(v)),
            _,
        ) => Some(v),
        _ => None,
    }
}

/// A constant distance in metres: finite and not negative (anything else prunes nothing, and
/// the kernel reports it).
fn metres(expr: &Expr) -> Option<f64> {
    let Expr::Literal(value, _) = expr else {
        return None;
    };
    let v = match value.cast_to(&arrow_schema::DataType::Float64).ok()? {
        ScalarValue::Float64(Some(v)) => v,
        _ => return None,
    };
    (v.is_finite() && v >= 0.0).then_some(v)
}
