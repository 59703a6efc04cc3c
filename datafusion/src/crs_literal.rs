//! Seed 004's spatial filters build their query shape without an SRID
//! (`ST_Intersects(geom, ST_GeomFromText('POLYGON (...)'))` against a `geometry(4326)` column),
//! which SedonaDB refuses at planning ("Mismatched CRS arguments: ogc:crs84 vs None").
//!
//! The rule here: in a spatial predicate (`ST_Intersects`, `ST_Contains`, `ST_DWithin`, ...),
//! a *constant* geometry that carries no CRS is taken to be in the CRS of the other, non-constant
//! argument (the column's): it is wrapped in `ST_SetCRS(<constant>, '<column CRS>')` before
//! type checking. Nothing else changes: a constant in another CRS is still refused, and writes
//! keep the strict rule (an `INSERT` of `ST_GeomFromText('POINT (1 2)')` into a
//! `geometry(4326)` column is refused by the table's SRID check).

use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::error::Result;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{Expr, ExprSchemable, ScalarUDF};
use sedona_schema::crs::{CoordinateReferenceSystem, Crs};
use sedona_schema::datatypes::SedonaType;

/// SedonaDB's binary spatial predicates and distance functions: their geometry arguments
/// must share a CRS.
const SPATIAL_PREDICATES: [&str; 15] = [
    "st_intersects",
    "st_contains",
    "st_within",
    "st_covers",
    "st_coveredby",
    "st_covered_by",
    "st_touches",
    "st_crosses",
    "st_overlaps",
    "st_equals",
    "st_disjoint",
    "st_dwithin",
    "st_distance",
    "st_maxdistance",
    "st_knn",
];

/// The rewrite described in the module docs, over SedonaDB's `ST_SetCRS`.
#[derive(Debug)]
pub struct ConstantGeometryCrs {
    set_crs: Arc<ScalarUDF>,
}

impl ConstantGeometryCrs {
    /// The rewrite, labelling with `set_crs` (SedonaDB's `st_setcrs`).
    pub fn new(set_crs: Arc<ScalarUDF>) -> Self {
        ConstantGeometryCrs { set_crs }
    }
}

impl FunctionRewrite for ConstantGeometryCrs {
    fn name(&self) -> &str {
        "geoberg_constant_geometry_crs"
    }

    fn rewrite(
        &self,
        expr: Expr,
        schema: &DFSchema,
        _config: &ConfigOptions,
    ) -> Result<Transformed<Expr>> {
        let Expr::ScalarFunction(ScalarFunction { func, mut args }) = expr else {
            return Ok(Transformed::no(expr));
        };
        let unchanged = |func, args| {
            Ok(Transformed::no(Expr::ScalarFunction(ScalarFunction {
                func,
                args,
            })))
        };
        if !SPATIAL_PREDICATES.contains(&func.name()) {
            return unchanged(func, args);
        }
        // The CRS of the non-constant geometry arguments, when they agree on one.
        let mut column_crs: Option<Arc<dyn CoordinateReferenceSystem + Send + Sync>> = None;
        let mut unlabelled = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            let Some(crs) = geometry_crs(arg, schema) else {
                continue;
            };
            if is_constant(arg) {
                if crs.is_none() {
                    unlabelled.push(i);
                }
                continue;
            }
            match (&column_crs, crs) {
                (None, Some(c)) => column_crs = Some(c),
                (Some(seen), Some(c)) if seen.crs_equals(c.as_ref()) => {}
                // A non-constant argument without CRS, or two that disagree: leave the call
                // to SedonaDB's own check.
                _ => return unchanged(func, args),
            }
        }
        let Some(crs) = column_crs.filter(|_| !unlabelled.is_empty()) else {
            return unchanged(func, args);
        };
        let crs = crs.to_crs_string();
        for i in unlabelled {
            let constant = std::mem::replace(&mut args[i], Expr::Literal(ScalarValue::Null, None));
            args[i] = self.set_crs.call(vec![
                constant,
                Expr::Literal(ScalarValue::Utf8(Some(crs.clone())), None),
            ]);
        }
        Ok(Transformed::yes(Expr::ScalarFunction(ScalarFunction {
            func,
            args,
        })))
    }
}

/// The CRS of a geometry argument (`Some(None)`: a geometry without CRS), `None` when the
/// argument is no geometry or its type cannot be known here.
fn geometry_crs(arg: &Expr, schema: &DFSchema) -> Option<Crs> {
    let (_, field) = arg.to_field(schema).ok()?;
    match SedonaType::from_storage_field(&field).ok()? {
        SedonaType::Wkb(_, crs) | SedonaType::WkbLarge(_, crs) | SedonaType::WkbView(_, crs) => {
            Some(crs)
        }
        _ => None,
    }
}

/// An argument that names no column: its value is the same for every row.
fn is_constant(arg: &Expr) -> bool {
    !arg.any_column_refs()
        && !matches!(
            arg,
            Expr::ScalarSubquery(_) | Expr::OuterReferenceColumn(..)
        )
}
