use std::fmt;

use sqlparser::ast::{
    BinaryOperator, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, InTarget,
    Spanned, UnaryOperator, Value,
};

use crate::error::{Position, SqlError};
use crate::front::position;
use crate::name::{quote_ident, quote_string, string_value};
use geoberg_crs::Extent;

use crate::spatial::{SpatialFilter, SpatialRelation, Window};

/// A literal value compared against a column.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `true` / `false`.
    Boolean(bool),
    /// A whole number that fits 64 bits.
    Integer(i64),
    /// A number with a fraction or exponent.
    Float(f64),
    /// A quoted string (also used for dates and timestamps; the executor casts to the column).
    String(String),
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Boolean(b) => write!(f, "{b}"),
            Literal::Integer(i) => write!(f, "{i}"),
            // `{:?}` is the shortest text that reads back as the same f64 and always has a `.` or
            // an exponent, so it reads back as a float.
            Literal::Float(v) => write!(f, "{v:?}"),
            Literal::String(s) => f.write_str(&quote_string(s)),
        }
    }
}

/// A comparison operator, read as `column <op> literal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    /// `=`
    Eq,
    /// `<>` or `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
}

impl CompareOp {
    /// The operator with its operands swapped (`5 < x` is `x > 5`).
    pub fn flip(self) -> CompareOp {
        match self {
            CompareOp::Lt => CompareOp::Gt,
            CompareOp::LtEq => CompareOp::GtEq,
            CompareOp::Gt => CompareOp::Lt,
            CompareOp::GtEq => CompareOp::LtEq,
            op => op,
        }
    }
}

impl fmt::Display for CompareOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CompareOp::Eq => "=",
            CompareOp::NotEq => "<>",
            CompareOp::Lt => "<",
            CompareOp::LtEq => "<=",
            CompareOp::Gt => ">",
            CompareOp::GtEq => ">=",
        })
    }
}

/// A WHERE condition: the subset of SQL that can select data files by their statistics.
///
/// `And`/`Or` are n-ary and flat (an `And` never holds an `And`), so equal conditions compare
/// equal however they were parenthesized.
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    /// All must hold (two or more).
    And(Vec<Predicate>),
    /// At least one must hold (two or more).
    Or(Vec<Predicate>),
    /// Negation.
    Not(Box<Predicate>),
    /// `column <op> value`.
    Compare {
        /// The column.
        column: String,
        /// The operator.
        op: CompareOp,
        /// The literal.
        value: Literal,
    },
    /// `column [NOT] IN (values)`.
    In {
        /// The column.
        column: String,
        /// The listed values (at least one).
        values: Vec<Literal>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `column [NOT] BETWEEN low AND high`.
    Between {
        /// The column.
        column: String,
        /// Lower bound, inclusive.
        low: Literal,
        /// Upper bound, inclusive.
        high: Literal,
        /// `NOT BETWEEN`.
        negated: bool,
    },
    /// `column IS [NOT] NULL`.
    IsNull {
        /// The column.
        column: String,
        /// `IS NOT NULL`.
        negated: bool,
    },
    /// A spatial predicate.
    Spatial(SpatialFilter),
}

impl Predicate {
    /// The conjunction of `parts`, flattened: nested `And`s are spliced in and a single part is
    /// returned as is. `None` when `parts` is empty.
    pub fn and(parts: Vec<Predicate>) -> Option<Predicate> {
        Self::junction(parts, true)
    }

    /// The disjunction of `parts`, flattened like [`Predicate::and`].
    pub fn or(parts: Vec<Predicate>) -> Option<Predicate> {
        Self::junction(parts, false)
    }

    fn junction(parts: Vec<Predicate>, and: bool) -> Option<Predicate> {
        let mut flat = Vec::with_capacity(parts.len());
        for p in parts {
            match p {
                Predicate::And(inner) if and => flat.extend(inner),
                Predicate::Or(inner) if !and => flat.extend(inner),
                p => flat.push(p),
            }
        }
        match flat.len() {
            0 => None,
            1 => flat.pop(),
            _ if and => Some(Predicate::And(flat)),
            _ => Some(Predicate::Or(flat)),
        }
    }

    fn conjuncts(&self) -> &[Predicate] {
        match self {
            Predicate::And(parts) => parts,
            p => std::slice::from_ref(p),
        }
    }

    /// The spatial filters every matching row must pass: those among the top-level conjuncts.
    /// A file whose bounds miss any of their [`SpatialFilter::pruning_bbox`] can be skipped.
    /// Spatial predicates under `OR` or `NOT` are not included (they do not constrain alone).
    pub fn spatial_filters(&self) -> Vec<&SpatialFilter> {
        self.conjuncts()
            .iter()
            .filter_map(|p| match p {
                Predicate::Spatial(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    /// The condition without the filters of [`Predicate::spatial_filters`], so that
    /// `self` = `AND(spatial_filters) AND non_spatial`. `None` when nothing remains. Spatial
    /// leaves under `OR`/`NOT` stay here.
    pub fn non_spatial(&self) -> Option<Predicate> {
        let rest = self
            .conjuncts()
            .iter()
            .filter(|p| !matches!(p, Predicate::Spatial(_)))
            .cloned()
            .collect();
        Predicate::and(rest)
    }

    /// Renders the condition as SQL that parses back to an equal predicate.
    pub fn to_sql(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let junction = |f: &mut fmt::Formatter<'_>, parts: &[Predicate], sep: &str| {
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    f.write_str(sep)?;
                }
                match p {
                    Predicate::And(_) | Predicate::Or(_) => write!(f, "({p})")?,
                    p => write!(f, "{p}")?,
                }
            }
            Ok(())
        };
        match self {
            Predicate::And(parts) => junction(f, parts, " AND "),
            Predicate::Or(parts) => junction(f, parts, " OR "),
            Predicate::Not(p) => write!(f, "NOT ({p})"),
            Predicate::Compare { column, op, value } => {
                write!(f, "{} {op} {value}", quote_ident(column))
            }
            Predicate::In {
                column,
                values,
                negated,
            } => {
                let not = if *negated { "NOT " } else { "" };
                write!(f, "{} {not}IN (", quote_ident(column))?;
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str(")")
            }
            Predicate::Between {
                column,
                low,
                high,
                negated,
            } => {
                let not = if *negated { "NOT " } else { "" };
                write!(f, "{} {not}BETWEEN {low} AND {high}", quote_ident(column))
            }
            Predicate::IsNull { column, negated } => {
                let not = if *negated { "NOT " } else { "" };
                write!(f, "{} IS {not}NULL", quote_ident(column))
            }
            Predicate::Spatial(s) => write!(f, "{s}"),
        }
    }
}

fn unsupported(expr: &Expr, reason: impl Into<String>) -> SqlError {
    let mut condition = expr.to_string();
    if condition.chars().count() > 80 {
        condition = format!("{}...", condition.chars().take(77).collect::<String>());
    }
    SqlError::UnsupportedCondition {
        condition,
        reason: reason.into(),
        position: expr_position(expr),
    }
}

fn expr_position(expr: &Expr) -> Position {
    position(expr.span().start)
}

/// Converts a sqlparser expression into a [`Predicate`]. AND/OR chains are walked with a loop,
/// so their length costs no stack; other nesting is bounded by the front's depth limit.
pub(crate) fn predicate_from_expr(expr: &Expr) -> Result<Predicate, SqlError> {
    match expr {
        Expr::Nested(inner) => predicate_from_expr(inner),
        Expr::BinaryOp {
            op: op @ (BinaryOperator::And | BinaryOperator::Or),
            ..
        } => {
            // Collect the operands of a left-leaning chain of the same operator.
            let mut operands = Vec::new();
            let mut pending = vec![expr];
            while let Some(e) = pending.pop() {
                match e {
                    Expr::BinaryOp { left, op: o, right } if o == op => {
                        pending.push(right);
                        pending.push(left);
                    }
                    e => operands.push(predicate_from_expr(e)?),
                }
            }
            let joined = if *op == BinaryOperator::And {
                Predicate::and(operands)
            } else {
                Predicate::or(operands)
            };
            joined.ok_or_else(|| unsupported(expr, "empty condition"))
        }
        Expr::UnaryOp {
            op: UnaryOperator::Not,
            expr: inner,
        } => Ok(Predicate::Not(Box::new(predicate_from_expr(inner)?))),
        Expr::BinaryOp { left, op, right } => {
            let op = compare_op(op).ok_or_else(|| {
                unsupported(expr, format!("the operator {op} is not a comparison"))
            })?;
            match (column_name(left), column_name(right)) {
                (Some(column), None) => Ok(Predicate::Compare {
                    column,
                    op,
                    value: literal(right)?,
                }),
                (None, Some(column)) => Ok(Predicate::Compare {
                    column,
                    op: op.flip(),
                    value: literal(left)?,
                }),
                _ => Err(unsupported(
                    expr,
                    "a comparison needs one column and one literal",
                )),
            }
        }
        Expr::In {
            expr: column,
            target: InTarget::List(list),
            negated,
            global: false,
        } => Ok(Predicate::In {
            column: column_or_err(column, expr)?,
            values: list.iter().map(literal).collect::<Result<_, _>>()?,
            negated: *negated,
        }),
        Expr::Between {
            expr: column,
            negated,
            low,
            high,
        } => Ok(Predicate::Between {
            column: column_or_err(column, expr)?,
            low: literal(low)?,
            high: literal(high)?,
            negated: *negated,
        }),
        Expr::IsNull(column) => Ok(Predicate::IsNull {
            column: column_or_err(column, expr)?,
            negated: false,
        }),
        Expr::IsNotNull(column) => Ok(Predicate::IsNull {
            column: column_or_err(column, expr)?,
            negated: true,
        }),
        Expr::Function(function) => spatial(expr, function).map(Predicate::Spatial),
        _ => Err(unsupported(
            expr,
            "this kind of expression cannot select data files",
        )),
    }
}

fn compare_op(op: &BinaryOperator) -> Option<CompareOp> {
    Some(match op {
        BinaryOperator::Eq => CompareOp::Eq,
        BinaryOperator::NotEq => CompareOp::NotEq,
        BinaryOperator::Lt => CompareOp::Lt,
        BinaryOperator::LtEq => CompareOp::LtEq,
        BinaryOperator::Gt => CompareOp::Gt,
        BinaryOperator::GtEq => CompareOp::GtEq,
        _ => return None,
    })
}

/// `col`, `` `col` `` or `a.b` (a nested field, kept as one dotted name).
pub(crate) fn column_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Identifier(i) => Some(i.value.clone()),
        Expr::CompoundIdentifier(parts) => Some(
            parts
                .iter()
                .map(|p| p.value.as_str())
                .collect::<Vec<_>>()
                .join("."),
        ),
        Expr::Nested(inner) => column_name(inner),
        _ => None,
    }
}

fn column_or_err(column: &Expr, whole: &Expr) -> Result<String, SqlError> {
    column_name(column).ok_or_else(|| unsupported(whole, "the left side must be a column name"))
}

/// A literal: a number (optionally signed), a quoted string or a boolean.
pub(crate) fn literal(expr: &Expr) -> Result<Literal, SqlError> {
    match expr {
        Expr::Value(v) => {
            if let Some(s) = string_value(&v.value) {
                return Ok(Literal::String(s.to_string()));
            }
            match &v.value {
                Value::Number(n, _) => number(n, false, expr),
                Value::Boolean(b) => Ok(Literal::Boolean(*b)),
                Value::Null => Err(unsupported(
                    expr,
                    "NULL never compares equal; write <column> IS NULL",
                )),
                _ => Err(unsupported(
                    expr,
                    "expected a number, string or boolean literal",
                )),
            }
        }
        Expr::UnaryOp {
            op: op @ (UnaryOperator::Minus | UnaryOperator::Plus),
            expr: inner,
        } => match inner.as_ref() {
            Expr::Value(v) => match &v.value {
                Value::Number(n, _) => number(n, *op == UnaryOperator::Minus, expr),
                _ => Err(unsupported(expr, "a sign needs a number")),
            },
            _ => Err(unsupported(expr, "a sign needs a number")),
        },
        Expr::Nested(inner) => literal(inner),
        _ => Err(unsupported(
            expr,
            "expected a literal (number, 'string', true/false); expressions and columns on both \
             sides are not supported",
        )),
    }
}

fn number(text: &str, negative: bool, expr: &Expr) -> Result<Literal, SqlError> {
    let signed = if negative {
        format!("-{text}")
    } else {
        text.to_string()
    };
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return signed.parse::<i64>().map(Literal::Integer).map_err(|_| {
            unsupported(
                expr,
                format!("the integer {signed} does not fit 64 bits; write it as a float (e.g. {signed}.0) or a string"),
            )
        });
    }
    match signed.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Literal::Float(v)),
        _ => Err(unsupported(
            expr,
            format!("the number {signed} is not a finite 64-bit float"),
        )),
    }
}

/// A literal number as f64 (for bounds, envelopes and distances).
pub(crate) fn float(expr: &Expr) -> Result<f64, SqlError> {
    match literal(expr)? {
        Literal::Integer(i) => Ok(i as f64),
        Literal::Float(f) => Ok(f),
        _ => Err(unsupported(expr, "expected a number")),
    }
}

/// The plain expression arguments of a function call (`f(a, b)`), rejecting named ones.
pub(crate) fn positional_args<'e>(
    function: &'e Function,
    whole: &Expr,
) -> Result<Vec<&'e Expr>, SqlError> {
    let list = match &function.args {
        FunctionArguments::List(list) => &list.args,
        FunctionArguments::None => return Ok(Vec::new()),
        FunctionArguments::Subquery(_) => {
            return Err(unsupported(whole, "subqueries are not supported"));
        }
    };
    list.iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
            _ => Err(unsupported(whole, "expected plain arguments")),
        })
        .collect()
}

pub(crate) fn function_name(function: &Function) -> String {
    function
        .name
        .0
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(".")
}

fn spatial(expr: &Expr, function: &Function) -> Result<SpatialFilter, SqlError> {
    let name = function_name(function).to_ascii_lowercase();
    let args = positional_args(function, expr)?;
    let (relation_name, arity) = match name.as_str() {
        "st_intersects" | "st_contains" | "st_within" => (name.as_str(), 2),
        "st_dwithin" => ("st_dwithin", 3),
        _ => {
            return Err(unsupported(
                expr,
                format!("the function {name} is not a supported spatial predicate"),
            ));
        }
    };
    if args.len() != arity {
        return Err(unsupported(
            expr,
            format!(
                "{name} takes {arity} arguments ({}), got {}",
                if arity == 2 {
                    "<column>, <window>"
                } else {
                    "<column>, <window>, <distance>"
                },
                args.len()
            ),
        ));
    }
    let (column, window, column_first) = match (column_name(args[0]), column_name(args[1])) {
        (Some(c), None) => (c, window(args[1])?, true),
        (None, Some(c)) => (c, window(args[0])?, false),
        _ => {
            return Err(unsupported(
                expr,
                "a spatial predicate needs one geometry column and one window \
                 (ST_GeomFromText or ST_MakeEnvelope)",
            ));
        }
    };
    let relation = match (relation_name, column_first) {
        ("st_intersects", _) => SpatialRelation::Intersects,
        ("st_contains", true) | ("st_within", false) => SpatialRelation::Contains,
        ("st_within", true) | ("st_contains", false) => SpatialRelation::Within,
        _ => {
            let d = float(args[2])?;
            if d < 0.0 {
                return Err(unsupported(
                    expr,
                    format!("the distance {d} is negative; use a distance >= 0"),
                ));
            }
            SpatialRelation::DWithin(d)
        }
    };
    Ok(SpatialFilter {
        column,
        relation,
        window,
    })
}

fn window(expr: &Expr) -> Result<Window, SqlError> {
    let Expr::Function(function) = expr else {
        return Err(unsupported(
            expr,
            "the window must be ST_GeomFromText('<WKT>'[, srid]) or \
             ST_MakeEnvelope(minX, minY, maxX, maxY[, srid])",
        ));
    };
    let name = function_name(function).to_ascii_lowercase();
    let args = positional_args(function, expr)?;
    match name.as_str() {
        "st_geomfromtext" | "st_geomfromwkt" => {
            let (text, srid) = match args.as_slice() {
                [text] => (*text, None),
                [text, srid] => (*text, Some(srid_arg(srid)?)),
                _ => {
                    return Err(unsupported(
                        expr,
                        "ST_GeomFromText takes ('<WKT>') or ('<WKT>', <srid>)",
                    ));
                }
            };
            match literal(text)? {
                Literal::String(wkt) => Window::from_wkt(&wkt, srid),
                _ => Err(unsupported(expr, "the WKT must be a quoted string")),
            }
        }
        "st_makeenvelope" => {
            let (coords, srid) = match args.as_slice() {
                [a, b, c, d] => ([*a, *b, *c, *d], None),
                [a, b, c, d, srid] => ([*a, *b, *c, *d], Some(srid_arg(srid)?)),
                _ => {
                    return Err(unsupported(
                        expr,
                        "ST_MakeEnvelope takes (minX, minY, maxX, maxY[, srid])",
                    ));
                }
            };
            let bbox = Extent::new(
                float(coords[0])?,
                float(coords[1])?,
                float(coords[2])?,
                float(coords[3])?,
            );
            Window::from_envelope(bbox, srid)
        }
        _ => Err(unsupported(
            expr,
            format!(
                "{name} is not a window constructor; use ST_GeomFromText('<WKT>'[, srid]) or \
                 ST_MakeEnvelope(minX, minY, maxX, maxY[, srid])"
            ),
        )),
    }
}

fn srid_arg(expr: &Expr) -> Result<i32, SqlError> {
    match literal(expr)? {
        Literal::Integer(i) if (0..=i32::MAX as i64).contains(&i) => Ok(i as i32),
        _ => Err(unsupported(
            expr,
            "the SRID must be a whole number >= 0, e.g. 4326",
        )),
    }
}
