//! `hilbert(column, precision[, minX, minY, maxX, maxY])`: the spatial sort key of
//! `CREATE SPATIAL INDEX`, `rewrite_data_files` and `write.sort-order`.

use std::fmt;

use sqlparser::ast::Expr;

use geoberg_crs::{Extent, HilbertSpec};

use crate::error::SqlError;
use crate::name::quote_ident;
use crate::predicate::{Literal, column_name, float, function_name, literal, positional_args};

/// `hilbert(column, precision[, minX, minY, maxX, maxY])`: sort rows by the Hilbert index of
/// each geometry's bbox centre. Without bounds the curve spans WGS84 lon/lat; whether that fits
/// the column's CRS is checked at execution (by the `crs` crate), where the column is known.
#[derive(Debug, Clone, PartialEq)]
pub struct HilbertIndex {
    /// The geometry column.
    pub column: String,
    /// Bits per axis, 1..=32.
    pub precision: u8,
    /// Explicit curve bounds (finite, with area), or `None` for the default of the column's
    /// CRS.
    pub bounds: Option<Extent>,
}

impl fmt::Display for HilbertIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "hilbert({}, {}",
            quote_ident(&self.column),
            self.precision
        )?;
        if let Some(b) = self.bounds {
            write!(
                f,
                ", {:?}, {:?}, {:?}, {:?}",
                b.min_x, b.min_y, b.max_x, b.max_y
            )?;
        }
        f.write_str(")")
    }
}

/// `hilbert(col, precision[, minX, minY, maxX, maxY])`.
pub(crate) fn hilbert(expr: &Expr) -> Result<HilbertIndex, SqlError> {
    let usage = "write hilbert(<geom>, <precision>) or \
                 hilbert(<geom>, <precision>, <minX>, <minY>, <maxX>, <maxY>)";
    let function = match expr {
        Expr::Function(f) if function_name(f).eq_ignore_ascii_case("hilbert") => f,
        _ => {
            return Err(SqlError::Unsupported {
                statement: format!(
                    "sort order `{expr}` ({usage}; other sort orders are columns or zorder(...))"
                ),
            });
        }
    };
    let args = positional_args(function, expr)?;
    if args.len() != 2 && args.len() != 6 {
        return Err(SqlError::invalid(
            format!("`{expr}`"),
            format!(
                "hilbert takes 2 or 6 arguments, got {}; {usage}",
                args.len()
            ),
        ));
    }
    let column = column_name(args[0]).ok_or_else(|| {
        SqlError::invalid(
            format!("`{expr}`"),
            format!(
                "the first argument must be the geometry column, found {}",
                args[0]
            ),
        )
    })?;
    let precision = match literal(args[1]) {
        Ok(Literal::Integer(p))
            if (i64::from(HilbertSpec::MIN_PRECISION)..=i64::from(HilbertSpec::MAX_PRECISION))
                .contains(&p) =>
        {
            p as u8
        }
        _ => {
            return Err(SqlError::PrecisionOutOfRange {
                value: args[1].to_string(),
            });
        }
    };
    let bounds = if args.len() == 6 {
        let v = args[2..]
            .iter()
            .map(|a| float(a))
            .collect::<Result<Vec<_>, _>>()?;
        Some(curve_bounds(v[0], v[1], v[2], v[3])?)
    } else {
        None
    };
    Ok(HilbertIndex {
        column,
        precision,
        bounds,
    })
}

/// Curve bounds as given: finite, with `min < max` on both axes (a curve needs an area).
pub(crate) fn curve_bounds(
    min_x: f64,
    min_y: f64,
    max_x: f64,
    max_y: f64,
) -> Result<Extent, SqlError> {
    let reason = if ![min_x, min_y, max_x, max_y].iter().all(|v| v.is_finite()) {
        Some("every bound must be a finite number")
    } else if min_x >= max_x || min_y >= max_y {
        Some("minX must be < maxX and minY < maxY; the order is (minX, minY, maxX, maxY)")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(SqlError::InvalidBounds {
            min_x,
            min_y,
            max_x,
            max_y,
            reason: reason.to_string(),
        }),
        None => Ok(Extent::new(min_x, min_y, max_x, max_y)),
    }
}
