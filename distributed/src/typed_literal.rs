//! Geometry constants in a logical plan sent to the scheduler, with their type.
//!
//! A client plans a query, and its optimizer folds `ST_GeomFromText('POINT (1 2)')` into a
//! binary constant whose Arrow field metadata says "geometry". DataFusion 54's protobuf drops
//! that metadata (apache/datafusion#24613), so the scheduler would see plain binary. Before the
//! plan is sent, [`encode_typed_literals`] turns each such constant into a call of
//! [`TypedLiteral`] (`geoberg_typed_literal(value, '<metadata as JSON>')`); the scheduler's
//! optimizer folds the call back into the original constant.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, FieldRef};
use datafusion::common::metadata::FieldMetadata;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{ScalarValue, exec_err, plan_err};
use datafusion::error::Result;
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Expr, LogicalPlan, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF,
    ScalarUDFImpl, Signature, Volatility,
};

/// The function's name in SQL.
pub const TYPED_LITERAL: &str = "geoberg_typed_literal";

/// `geoberg_typed_literal(value, metadata_json)`: `value` with the Arrow field metadata given
/// as a JSON object; folds into a constant with that metadata.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct TypedLiteral {
    signature: Signature,
}

impl Default for TypedLiteral {
    fn default() -> Self {
        TypedLiteral {
            signature: Signature::any(2, Volatility::Immutable),
        }
    }
}

impl TypedLiteral {
    /// The function, ready to register.
    pub fn udf() -> ScalarUDF {
        ScalarUDF::new_from_impl(TypedLiteral::default())
    }
}

impl ScalarUDFImpl for TypedLiteral {
    fn name(&self) -> &str {
        TYPED_LITERAL
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        match args.first() {
            Some(t) => Ok(t.clone()),
            None => plan_err!("{TYPED_LITERAL} takes a value and its metadata"),
        }
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs<'_>) -> Result<FieldRef> {
        let [value, _] = args.arg_fields else {
            return plan_err!("{TYPED_LITERAL} takes a value and its metadata");
        };
        let metadata = match args.scalar_arguments.get(1) {
            Some(Some(ScalarValue::Utf8(Some(json)))) => parse_metadata(json)?,
            _ => return plan_err!("{TYPED_LITERAL}'s metadata must be a constant string"),
        };
        let field = Field::new(self.name(), value.data_type().clone(), value.is_nullable());
        Ok(Arc::new(field.with_metadata(metadata)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        match args.args.into_iter().next() {
            Some(value) => Ok(value),
            None => exec_err!("{TYPED_LITERAL} takes a value and its metadata"),
        }
    }

    fn simplify(&self, args: Vec<Expr>, _info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        match args.as_slice() {
            [
                Expr::Literal(value, _),
                Expr::Literal(ScalarValue::Utf8(Some(json)), _),
            ] => {
                let metadata = FieldMetadata::from(parse_metadata(json)?);
                Ok(ExprSimplifyResult::Simplified(Expr::Literal(
                    value.clone(),
                    Some(metadata),
                )))
            }
            _ => Ok(ExprSimplifyResult::Original(args)),
        }
    }
}

fn parse_metadata(json: &str) -> Result<HashMap<String, String>> {
    serde_json::from_str(json).map_err(|e| {
        datafusion::error::DataFusionError::Plan(format!(
            "{TYPED_LITERAL}: metadata is not a JSON object of strings: {e}"
        ))
    })
}

/// `plan` with every constant that carries field metadata written as a [`TypedLiteral`] call
/// (in subqueries and pushed-down scan filters too).
pub fn encode_typed_literals(plan: LogicalPlan) -> Result<LogicalPlan> {
    let udf = Arc::new(TypedLiteral::udf());
    plan.transform_up_with_subqueries(|node| {
        // Output names stay as the client planned them (a projected constant is named after
        // its value, not after the call).
        let names = NamePreserver::new(&node);
        node.map_expressions(|expr| {
            let saved = names.save(&expr);
            let encoded = expr.transform_up(|e| match e {
                Expr::Literal(value, Some(metadata)) if !metadata.is_empty() => {
                    let json = serde_json::to_string(metadata.inner()).map_err(|e| {
                        datafusion::error::DataFusionError::Plan(format!("{TYPED_LITERAL}: {e}"))
                    })?;
                    let call = Expr::ScalarFunction(
                        datafusion::logical_expr::expr::ScalarFunction::new_udf(
                            Arc::clone(&udf),
                            vec![
                                Expr::Literal(value, None),
                                Expr::Literal(ScalarValue::Utf8(Some(json)), None),
                            ],
                        ),
                    );
                    Ok(Transformed::yes(call))
                }
                other => Ok(Transformed::no(other)),
            })?;
            Ok(encoded.update_data(|e| saved.restore(e)))
        })
    })
    .map(|t| t.data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::prelude::SessionContext;

    #[tokio::test]
    async fn folds_back_into_the_constant_with_its_metadata() {
        let ctx = SessionContext::new();
        ctx.register_udf(TypedLiteral::udf());
        let frame = ctx
            .sql(r#"SELECT geoberg_typed_literal(X'0102', '{"ARROW:extension:name":"geoarrow.wkb"}') AS g"#)
            .await
            .unwrap();
        let plan = frame.into_optimized_plan().unwrap();
        let LogicalPlan::Projection(p) = &plan else {
            panic!("{plan}")
        };
        let Expr::Alias(alias) = &p.expr[0] else {
            panic!("{plan}")
        };
        let Expr::Literal(ScalarValue::Binary(Some(value)), Some(metadata)) = alias.expr.as_ref()
        else {
            panic!("not folded into a typed constant: {plan}")
        };
        assert_eq!(value, &[1, 2]);
        assert_eq!(
            metadata
                .inner()
                .get("ARROW:extension:name")
                .map(String::as_str),
            Some("geoarrow.wkb")
        );
    }
}
