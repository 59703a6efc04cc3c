use std::collections::BTreeMap;
use std::fmt;

use sqlparser::ast::Expr;
use sqlparser::tokenizer::Token;

use crate::error::SqlError;
use crate::front::Front;
use crate::hilbert_index::{HilbertIndex, hilbert};
use crate::name::{TableName, quote_string};
use crate::predicate::{
    Literal, Predicate, function_name, literal, positional_args, predicate_from_expr,
};
use crate::procedure::{CallArgs, in_string, string_arg, write_call_head};
use crate::sort_order::{self, SortOrder};

/// The option that makes a rewrite take every file, not only those Iceberg's size rules pick.
/// `CREATE SPATIAL INDEX` sets it to `true`.
pub const REWRITE_ALL: &str = "rewrite-all";

/// How `rewrite_data_files` rewrites the selected files.
#[derive(Debug, Clone, PartialEq)]
pub enum RewriteStrategy {
    /// `strategy => 'sort', sort_order => 'hilbert(...)'` or `CREATE SPATIAL INDEX`.
    Hilbert(HilbertIndex),
    /// `strategy => 'sort'` with a column or z-order `sort_order` (a Hilbert order parses to
    /// [`RewriteStrategy::Hilbert`]).
    Sort(SortOrder),
    /// `strategy => 'sort'` without `sort_order`: the table's `write.sort-order` property,
    /// which the executor reads (and names in its error when the table has none).
    TableSortOrder,
    /// Iceberg's default: combine small files and split large ones, without sorting (rows keep
    /// their input order).
    BinPack,
}

impl RewriteStrategy {
    /// The strategy of an explicit sort order: Hilbert orders as [`RewriteStrategy::Hilbert`].
    pub fn sort(order: SortOrder) -> Self {
        match order {
            SortOrder::Hilbert(h) => RewriteStrategy::Hilbert(h),
            other => RewriteStrategy::Sort(other),
        }
    }
}

/// One request to rewrite a table's data files: what `CREATE SPATIAL INDEX` and
/// `CALL <catalog>.system.rewrite_data_files(...)` both mean.
#[derive(Debug, Clone, PartialEq)]
pub struct RewriteRequest {
    /// The table, with the procedure's catalog in front when the argument had none.
    pub table: TableName,
    /// Sort or bin-pack.
    pub strategy: RewriteStrategy,
    /// Only files that may hold rows matching this are rewritten.
    pub filter: Option<Predicate>,
    /// `rewrite_data_files` options (`target-file-size-bytes`, `rewrite-all`, ...). Keys are
    /// checked by the executor, which knows the valid set.
    pub options: BTreeMap<String, String>,
}

impl RewriteRequest {
    /// The Hilbert index, when this request sorts by one.
    pub fn hilbert(&self) -> Option<&HilbertIndex> {
        match &self.strategy {
            RewriteStrategy::Hilbert(h) => Some(h),
            RewriteStrategy::Sort(SortOrder::Hilbert(h)) => Some(h),
            _ => None,
        }
    }

    /// Whether `rewrite-all` is set to true (always for `CREATE SPATIAL INDEX`).
    pub fn rewrite_all(&self) -> bool {
        self.options
            .get(REWRITE_ALL)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }

    /// The canonical statement: `CREATE SPATIAL INDEX` when that form says it all (a Hilbert
    /// sort with `rewrite-all` true), else the `CALL` form.
    pub fn to_sql(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for RewriteRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (
            &self.strategy,
            self.options.get(REWRITE_ALL).map(String::as_str),
        ) {
            (RewriteStrategy::Hilbert(h), Some("true")) => {
                write!(f, "CREATE SPATIAL INDEX FOR {} USING {h}", self.table)?;
                if let Some(p) = &self.filter {
                    write!(f, " WHERE {p}")?;
                }
                let rest: Vec<_> = self
                    .options
                    .iter()
                    .filter(|(k, _)| k.as_str() != REWRITE_ALL)
                    .collect();
                if !rest.is_empty() {
                    write!(f, " OPTIONS {}", render_map(rest))?;
                }
                Ok(())
            }
            _ => {
                write_call_head(f, "rewrite_data_files", &self.table)?;
                match &self.strategy {
                    RewriteStrategy::Hilbert(h) => write!(
                        f,
                        ", strategy => 'sort', sort_order => {}",
                        quote_string(&h.to_string())
                    )?,
                    RewriteStrategy::Sort(order) => write!(
                        f,
                        ", strategy => 'sort', sort_order => {}",
                        quote_string(&order.to_string())
                    )?,
                    RewriteStrategy::TableSortOrder => f.write_str(", strategy => 'sort'")?,
                    RewriteStrategy::BinPack => f.write_str(", strategy => 'binpack'")?,
                }
                if let Some(p) = &self.filter {
                    write!(f, ", where => {}", quote_string(&p.to_string()))?;
                }
                if !self.options.is_empty() {
                    write!(
                        f,
                        ", options => {}",
                        render_map(self.options.iter().collect())
                    )?;
                }
                f.write_str(")")
            }
        }
    }
}

fn render_map(entries: Vec<(&String, &String)>) -> String {
    let items: Vec<String> = entries
        .into_iter()
        .map(|(k, v)| format!("{}, {}", quote_string(k), quote_string(v)))
        .collect();
    format!("map({})", items.join(", "))
}

/// After `CREATE SPATIAL INDEX FOR`.
pub(crate) fn parse_create_spatial_index(
    front: &mut Front<'_>,
) -> Result<RewriteRequest, SqlError> {
    let table = front.table_name()?;
    front.expect_word("USING")?;
    if !matches!(&front.peek().token, Token::Word(w) if w.value.eq_ignore_ascii_case("hilbert")) {
        return Err(SqlError::Unsupported {
            statement: format!("CREATE SPATIAL INDEX ... USING {}", front.peek().token),
        });
    }
    let index = hilbert(&front.expr()?)?;
    let filter = if front.word("WHERE") {
        Some(predicate_from_expr(&front.expr()?)?)
    } else {
        None
    };
    let mut options = if front.word("OPTIONS") {
        options_map(&front.expr()?)?
    } else {
        BTreeMap::new()
    };
    options
        .entry(REWRITE_ALL.to_string())
        .or_insert_with(|| "true".to_string());
    front.finish()?;
    Ok(RewriteRequest {
        table,
        strategy: RewriteStrategy::Hilbert(index),
        filter,
        options,
    })
}

/// The request of `CALL ... rewrite_data_files(...)`, from its bound arguments.
pub(crate) fn rewrite_from_call(args: &CallArgs<'_>) -> Result<RewriteRequest, SqlError> {
    let table = args.table()?;
    let (strategy, sort_order, options, filter) = (
        args.get("strategy"),
        args.get("sort_order"),
        args.get("options"),
        args.get("where"),
    );
    let strategy_name = strategy
        .map(|s| string_arg("strategy", s))
        .transpose()?
        .map(|s| s.to_ascii_lowercase());
    let strategy = match (strategy_name.as_deref(), sort_order) {
        (None | Some("sort"), Some(order)) => {
            let order = in_string("sort_order", order, |f| {
                let order = sort_order::sort_order(f)?;
                f.finish()?;
                Ok(order)
            })?;
            RewriteStrategy::sort(order)
        }
        // Iceberg's Spark procedure: `sort` without a sort order uses the table's.
        (Some("sort"), None) => RewriteStrategy::TableSortOrder,
        (None | Some("binpack"), None) => RewriteStrategy::BinPack,
        (Some("binpack"), Some(_)) => {
            return Err(SqlError::invalid(
                "argument `strategy`",
                "'binpack' does not sort; use strategy => 'sort' with sort_order, or drop sort_order",
            ));
        }
        (Some(other), _) => {
            return Err(SqlError::invalid(
                "argument `strategy`",
                format!(
                    "'{other}' is not a strategy; use 'sort' (with sort_order => \
                     'hilbert(...)', 'zorder(...)' or a column list) or 'binpack'"
                ),
            ));
        }
    };
    let filter = filter
        .map(|w| {
            in_string("where", w, |f| {
                let expr = f.expr()?;
                f.finish()?;
                predicate_from_expr(&expr)
            })
        })
        .transpose()?;
    let options = options.map(options_map).transpose()?.unwrap_or_default();
    Ok(RewriteRequest {
        table,
        strategy,
        filter,
        options,
    })
}

/// `map('k', 'v', ...)`, the options of both statement forms.
fn options_map(expr: &Expr) -> Result<BTreeMap<String, String>, SqlError> {
    let usage = "write map('<key>', '<value>', ...)";
    let function = match expr {
        Expr::Function(f) if function_name(f).eq_ignore_ascii_case("map") => f,
        _ => {
            return Err(SqlError::invalid(
                format!("options `{expr}`"),
                format!("expected a map; {usage}"),
            ));
        }
    };
    let args = positional_args(function, expr)?;
    if args.len() % 2 != 0 {
        return Err(SqlError::invalid(
            format!("options `{expr}`"),
            format!(
                "map needs key, value pairs, got {} items; {usage}",
                args.len()
            ),
        ));
    }
    let mut map = BTreeMap::new();
    for pair in args.chunks(2) {
        let key = match literal(pair[0]) {
            Ok(Literal::String(k)) => k,
            _ => {
                return Err(SqlError::invalid(
                    format!("option key {}", pair[0]),
                    format!("keys must be quoted strings; {usage}"),
                ));
            }
        };
        let value = match literal(pair[1]) {
            Ok(Literal::String(v)) => v,
            Ok(other) => other.to_string(),
            Err(_) => {
                return Err(SqlError::invalid(
                    format!("option `{key}`"),
                    format!("its value {} must be a literal; {usage}", pair[1]),
                ));
            }
        };
        if map.insert(key.clone(), value).is_some() {
            return Err(SqlError::invalid(
                format!("option `{key}`"),
                "it is given twice; give it once",
            ));
        }
    }
    Ok(map)
}
