//! Seed 004's spatial filters build their query shape without an SRID
//! (`ST_Intersects(geom, ST_GeomFromText('POLYGON (...)'))` against a `geometry(4326)` column),
//! which SedonaDB refuses at planning ("Mismatched CRS arguments: ogc:crs84 vs None").
//!
//! The rule here: in a spatial predicate (`ST_Intersects`, `ST_Contains`, `ST_DWithin`, ...),
//! a *constant* geometry that carries no CRS is taken to be in the CRS of the other, non-constant
//! argument (the column's): it is wrapped in `ST_SetCRS(<constant>, '<column CRS>')` by the
//! analyzer ([`ConstantGeometryCrs`]). Nothing else changes: a constant in another CRS, and a
//! column without CRS against a column with one, are still refused, and writes keep the strict
//! rule (an `INSERT` of `ST_GeomFromText('POINT (1 2)')` into a `geometry(4326)` column is
//! refused by the table's SRID check).
//!
//! The rule holds wherever the call stands: in `WHERE`, but also in a projection, `ORDER BY`,
//! a join condition. DataFusion's SQL planner types a projection's or a join's expressions
//! before any analyzer rule runs (a filter's type it only checks when it can), so the session
//! registers each predicate as [`CrsDeferredPredicate`]: SedonaDB's function under the same
//! name, whose type check at SQL planning accepts an unlabelled argument beside a labelled one.
//! The analyzer then replaces every such call with SedonaDB's own function (labelling the
//! constants), whose strict check is the one every plan is built and run with.

use std::sync::Arc;

use arrow_schema::{DataType, FieldRef};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{DFSchema, ScalarValue, plan_err};
use datafusion::error::Result;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::expr_rewriter::FunctionRewrite;
use datafusion::logical_expr::{
    ColumnarValue, Documentation, Expr, ExprSchemable, ReturnFieldArgs, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature,
};
use sedona_schema::crs::{CoordinateReferenceSystem, Crs};
use sedona_schema::datatypes::SedonaType;

/// SedonaDB's binary spatial predicates and distance functions: their geometry arguments
/// must share a CRS.
pub(crate) const SPATIAL_PREDICATES: [&str; 15] = [
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
        // The SQL planner's lenient stand-in gives way to SedonaDB's function here, whatever
        // the arguments: from now on every check is SedonaDB's.
        let deferred = func.inner().downcast_ref::<CrsDeferredPredicate>();
        let replaced = deferred.is_some();
        let func = match deferred {
            Some(d) => Arc::clone(&d.inner),
            None => func,
        };
        let unchanged = |func, args| {
            let expr = Expr::ScalarFunction(ScalarFunction { func, args });
            Ok(if replaced {
                Transformed::yes(expr)
            } else {
                Transformed::no(expr)
            })
        };
        if !SPATIAL_PREDICATES.contains(&func.name()) {
            return unchanged(func, args);
        }
        check_constant_arguments(func.name(), &args)?;
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

/// Refuses a constant argument no answer can come from: `ST_KNN`'s `k` below 1 (which would
/// silently match nothing) and a negative `ST_DWithin` distance.
fn check_constant_arguments(name: &str, args: &[Expr]) -> Result<()> {
    let constant = |i: usize| match args.get(i) {
        Some(Expr::Literal(value, _)) => value.clone().cast_to(&DataType::Float64).ok(),
        _ => None,
    };
    match (name, constant(2)) {
        ("st_knn", Some(ScalarValue::Float64(Some(k)))) if k < 1.0 => plan_err!(
            "ST_KNN's k (the number of nearest neighbours of each row) must be at least 1, \
             got {k}: write ST_KNN(query_geom, object_geom, k, use_spheroid) with k >= 1"
        ),
        ("st_dwithin", Some(ScalarValue::Float64(Some(d)))) if d < 0.0 => plan_err!(
            "ST_DWithin's distance must be zero or more, got {d}: pass it in the column's \
             units (metres on a geography column, the CRS's units on a geometry column)"
        ),
        _ => Ok(()),
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

/// A SedonaDB spatial predicate as the SQL planner sees it (see the module docs): the same
/// name, signature and result, but a call whose geometry arguments differ only in that some
/// carry no CRS types as if those were in the others' CRS. [`ConstantGeometryCrs`] replaces
/// every call with SedonaDB's function before the plan is optimized, so the strict check still
/// refuses what it refused (a column without CRS against one with a CRS); should a call reach
/// execution unreplaced, its constant arguments are labelled and SedonaDB's function runs.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct CrsDeferredPredicate {
    inner: Arc<ScalarUDF>,
}

impl CrsDeferredPredicate {
    /// Stands in for SedonaDB's `inner` (a binary spatial predicate or distance function)
    /// during SQL planning.
    pub fn new(inner: Arc<ScalarUDF>) -> Self {
        CrsDeferredPredicate { inner }
    }

    /// `fields` with the unlabelled geometry fields at the positions `relabel` accepts given
    /// the CRS the labelled geometry fields agree on; `None` when there is nothing to relabel
    /// or the labels disagree.
    fn relabelled(fields: &[FieldRef], relabel: impl Fn(usize) -> bool) -> Option<Vec<FieldRef>> {
        let types: Vec<Option<SedonaType>> = fields
            .iter()
            .map(|f| SedonaType::from_storage_field(f).ok())
            .collect();
        let mut crs: Crs = None;
        let mut unlabelled = Vec::new();
        for (i, t) in types.iter().enumerate() {
            let Some(
                SedonaType::Wkb(_, c) | SedonaType::WkbLarge(_, c) | SedonaType::WkbView(_, c),
            ) = t
            else {
                continue;
            };
            let Some(c) = c else {
                unlabelled.push(i);
                continue;
            };
            match &crs {
                None => crs = Some(Arc::clone(c)),
                Some(seen) if seen.crs_equals(c.as_ref()) => {}
                Some(_) => return None,
            }
        }
        let crs = crs?;
        let mut out = fields.to_vec();
        let mut changed = false;
        for i in unlabelled.into_iter().filter(|&i| relabel(i)) {
            let labelled = match &types[i] {
                Some(SedonaType::Wkb(edges, _)) => SedonaType::Wkb(*edges, Some(Arc::clone(&crs))),
                Some(SedonaType::WkbLarge(edges, _)) => {
                    SedonaType::WkbLarge(*edges, Some(Arc::clone(&crs)))
                }
                Some(SedonaType::WkbView(edges, _)) => {
                    SedonaType::WkbView(*edges, Some(Arc::clone(&crs)))
                }
                _ => continue,
            };
            let field = &fields[i];
            out[i] = Arc::new(
                labelled
                    .to_storage_field(field.name(), field.is_nullable())
                    .ok()?,
            );
            changed = true;
        }
        changed.then_some(out)
    }
}

impl ScalarUDFImpl for CrsDeferredPredicate {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.inner.coerce_types(arg_types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs<'_>) -> Result<FieldRef> {
        let strict = self.inner.return_field_from_args(ReturnFieldArgs {
            arg_fields: args.arg_fields,
            scalar_arguments: args.scalar_arguments,
        });
        let Err(refused) = strict else {
            return strict;
        };
        match Self::relabelled(args.arg_fields, |_| true) {
            Some(fields) => self
                .inner
                .return_field_from_args(ReturnFieldArgs {
                    arg_fields: &fields,
                    scalar_arguments: args.scalar_arguments,
                })
                .map_err(|_| refused),
            None => Err(refused),
        }
    }

    fn invoke_with_args(&self, mut args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let constant = |i: usize| matches!(args.args.get(i), Some(ColumnarValue::Scalar(_)));
        if let Some(fields) = Self::relabelled(&args.arg_fields, constant) {
            args.arg_fields = fields;
        }
        self.inner.invoke_with_args(args)
    }
}
