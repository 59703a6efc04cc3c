//! `CALL [<catalog>.]system.<procedure>(...)`: which procedure, and its arguments bound to
//! Iceberg's parameter names, by name (`table => 'db.t'`) or by position, as Iceberg's Spark
//! procedures take them.

use std::fmt;

use sqlparser::ast::{Expr, FunctionArg, FunctionArgExpr, FunctionArguments};

use crate::error::SqlError;
use crate::front::Front;
use crate::name::{TableName, quote_ident, quote_string};
use crate::predicate::{Literal, function_name, literal};

/// The procedures geoberg runs, named in every "no such procedure" message.
pub const SUPPORTED_PROCEDURES: &str = "rewrite_data_files, expire_snapshots, remove_orphan_files, rewrite_manifests, \
     upgrade_geometry, add_bbox_columns, maintain";

/// One procedure's parameters in Iceberg's positional order, and those geoberg reads.
struct Procedure {
    name: &'static str,
    /// Every parameter Iceberg's procedure has, in its positional order.
    parameters: &'static [&'static str],
    /// The leading parameters geoberg supports; the others are refused by name.
    supported: usize,
}

const PROCEDURES: [Procedure; 7] = [
    Procedure {
        name: "rewrite_data_files",
        parameters: &["table", "strategy", "sort_order", "options", "where"],
        supported: 5,
    },
    Procedure {
        name: "expire_snapshots",
        parameters: &[
            "table",
            "older_than",
            "retain_last",
            "max_concurrent_deletes",
            "stream_results",
            "snapshot_ids",
            "clean_expired_metadata",
        ],
        supported: 3,
    },
    Procedure {
        name: "remove_orphan_files",
        parameters: &[
            "table",
            "older_than",
            "location",
            "dry_run",
            "max_concurrent_deletes",
            "file_list_view",
            "equal_schemes",
            "equal_authorities",
            "prefix_mismatch_mode",
        ],
        supported: 4,
    },
    // Iceberg's RewriteManifestsProcedure: `table`, `use_caching`, `spec_id`.
    Procedure {
        name: "rewrite_manifests",
        parameters: &["table", "use_caching", "spec_id"],
        supported: 2,
    },
    // geoberg's own (seed 004's upgrade of a no-CRS geometry table).
    Procedure {
        name: "upgrade_geometry",
        parameters: &["table", "column", "srid", "target"],
        supported: 4,
    },
    // geoberg's own (seed 002's bbox columns: add, set metrics, backfill).
    Procedure {
        name: "add_bbox_columns",
        parameters: &["table", "column", "names", "where", "window", "backfill"],
        supported: 6,
    },
    // geoberg's own (the maintenance that is due: clustering, manifests, expiry).
    Procedure {
        name: "maintain",
        parameters: &["table"],
        supported: 1,
    },
];

/// Parameters of `remove_orphan_files` within its supported prefix that geoberg still refuses.
const UNSUPPORTED_WITHIN: [(&str, &str); 1] = [(
    "location",
    "geoberg lists the whole table location; leave location out",
)];

impl Procedure {
    /// The parameters geoberg accepts, comma-separated, for messages.
    fn accepted(&self) -> String {
        self.parameters[..self.supported]
            .iter()
            .filter(|p| !UNSUPPORTED_WITHIN.iter().any(|(u, _)| u == *p))
            .copied()
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A procedure call's arguments, bound to parameter names.
pub(crate) struct CallArgs<'e> {
    procedure: &'static Procedure,
    values: Vec<Option<&'e Expr>>,
    /// The catalog named before `system`, if any.
    pub(crate) catalog: Option<String>,
}

impl<'e> CallArgs<'e> {
    /// The procedure's name, e.g. `rewrite_data_files`.
    pub(crate) fn procedure(&self) -> &'static str {
        self.procedure.name
    }

    /// The argument given for `parameter` (one of the procedure's names).
    pub(crate) fn get(&self, parameter: &str) -> Option<&'e Expr> {
        let slot = self
            .procedure
            .parameters
            .iter()
            .position(|p| *p == parameter)?;
        self.values[slot]
    }

    /// The `column` argument: the geometry column's name, required and not blank.
    pub(crate) fn geometry_column(&self) -> Result<String, SqlError> {
        match self.get("column").map(literal) {
            Some(Ok(Literal::String(s))) if !s.trim().is_empty() => Ok(s),
            Some(_) => Err(SqlError::invalid(
                "argument `column`",
                "expected the geometry column's name as a string, e.g. column => 'geom'",
            )),
            None => Err(SqlError::invalid(
                format!("CALL {}", self.procedure.name),
                "the column argument is missing; add column => '<geometry column>'",
            )),
        }
    }

    /// The `table` argument, resolved in the procedure's catalog when it names none.
    pub(crate) fn table(&self) -> Result<TableName, SqlError> {
        let table = self.get("table").ok_or_else(|| {
            SqlError::invalid(
                format!("CALL {}", self.procedure.name),
                "the table argument is missing; add table => '<ns.table>'",
            )
        })?;
        Ok(in_string("table", table, |f| {
            let name = f.table_name()?;
            f.finish()?;
            Ok(name)
        })?
        .in_catalog(self.catalog.as_deref()))
    }
}

/// After `CALL`: the called procedure (one of [`SUPPORTED_PROCEDURES`]) with its arguments
/// bound; the statement router turns them into the procedure's request.
pub(crate) fn bind_call(call: &Expr) -> Result<CallArgs<'_>, SqlError> {
    let Expr::Function(function) = call else {
        return Err(SqlError::Unsupported {
            statement: format!("CALL {call}"),
        });
    };
    let name: Vec<String> = function
        .name
        .0
        .iter()
        .map(|p| p.to_string().to_ascii_lowercase())
        .collect();
    let (catalog, procedure) = match name.as_slice() {
        [system, procedure] if system == "system" => (None, procedure),
        [_, system, procedure] if system == "system" => (
            function.name.0[0].as_ident().map(|i| i.value.clone()),
            procedure,
        ),
        _ => {
            return Err(SqlError::Unsupported {
                statement: format!("CALL {}", function_name(function)),
            });
        }
    };
    let Some(procedure) = PROCEDURES.iter().find(|p| p.name == procedure) else {
        return Err(SqlError::invalid(
            format!("procedure `{}`", function_name(function)),
            format!(
                "geoberg has no procedure {procedure}; the supported ones are \
                 {SUPPORTED_PROCEDURES}, called as CALL <catalog>.system.<procedure>(...)"
            ),
        ));
    };
    bind(procedure, &function.args, catalog)
}

/// Binds the call's arguments to the procedure's parameters: by name, or by position in
/// Iceberg's order.
fn bind<'e>(
    procedure: &'static Procedure,
    arguments: &'e FunctionArguments,
    catalog: Option<String>,
) -> Result<CallArgs<'e>, SqlError> {
    let name = procedure.name;
    let FunctionArguments::List(list) = arguments else {
        return Err(SqlError::invalid(
            format!("CALL {name}"),
            "it needs arguments, at least table => '<ns.table>'",
        ));
    };
    let mut values: Vec<Option<&Expr>> = vec![None; procedure.parameters.len()];
    for (i, arg) in list.args.iter().enumerate() {
        let (slot, value) = match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => (i, e),
            FunctionArg::Named {
                name: argument,
                arg: FunctionArgExpr::Expr(e),
                ..
            } => match procedure
                .parameters
                .iter()
                .position(|p| p.eq_ignore_ascii_case(&argument.value))
            {
                Some(slot) => (slot, e),
                None => {
                    return Err(SqlError::invalid(
                        format!("argument `{}`", argument.value),
                        format!(
                            "{name} has no such argument; valid ones are {}",
                            procedure.accepted()
                        ),
                    ));
                }
            },
            other => {
                return Err(SqlError::invalid(
                    format!("argument `{other}`"),
                    "write arguments as name => value",
                ));
            }
        };
        if slot >= procedure.parameters.len() {
            return Err(SqlError::invalid(
                format!("CALL {name}"),
                format!(
                    "it takes at most {} arguments; write them as name => value ({})",
                    procedure.parameters.len(),
                    procedure.accepted()
                ),
            ));
        }
        let parameter = procedure.parameters[slot];
        let refused = UNSUPPORTED_WITHIN
            .iter()
            .find(|(p, _)| *p == parameter)
            .map(|(_, fix)| (*fix).to_string());
        if slot >= procedure.supported || refused.is_some() {
            let fix = refused.unwrap_or_else(|| {
                format!(
                    "leave it out; geoberg's {name} takes {}",
                    procedure.accepted()
                )
            });
            return Err(SqlError::invalid(
                format!("argument `{parameter}`"),
                format!("Iceberg's {name} has it but geoberg does not support it yet; {fix}"),
            ));
        }
        if values[slot].replace(value).is_some() {
            return Err(SqlError::invalid(
                format!("argument `{parameter}`"),
                "it is given twice; give it once",
            ));
        }
    }
    Ok(CallArgs {
        procedure,
        values,
        catalog,
    })
}

/// `CALL <catalog>.system.<procedure>(table => '<ns.table>'`: the canonical head of a call on
/// `table`, its catalog in front of `system`; the caller writes the other arguments and `)`.
pub(crate) fn write_call_head(
    f: &mut fmt::Formatter<'_>,
    procedure: &str,
    table: &TableName,
) -> fmt::Result {
    match table.catalog() {
        Some(c) => write!(f, "CALL {}.system.{procedure}(", quote_ident(c))?,
        None => write!(f, "CALL system.{procedure}(")?,
    }
    let table = table.without_catalog().to_string();
    write!(f, "table => {}", quote_string(&table))
}

/// Parses SQL held in a string argument, positioning errors within that string.
pub(crate) fn in_string<T>(
    argument: &'static str,
    expr: &Expr,
    parse: impl FnOnce(&mut Front<'_>) -> Result<T, SqlError>,
) -> Result<T, SqlError> {
    let text = string_arg(argument, expr)?;
    Front::new(&text)
        .and_then(|mut front| parse(&mut front))
        .map_err(|source| SqlError::InArgument {
            argument,
            source: Box::new(source),
        })
}

pub(crate) fn string_arg(argument: &str, expr: &Expr) -> Result<String, SqlError> {
    match literal(expr) {
        Ok(Literal::String(s)) => Ok(s),
        _ => Err(SqlError::invalid(
            format!("argument `{argument}`"),
            format!("expected a quoted string, found {expr}"),
        )),
    }
}
