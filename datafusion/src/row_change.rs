//! `DELETE`, `UPDATE` and `MERGE INTO` on geoberg tables, and queries that name a metadata
//! column (`_file`, `_pos`, `_row_id`, `_last_updated_sequence_number`).
//!
//! A row-level change is planned as one query over the target's pinned version with its
//! metadata columns ([`RowPositionsProvider`]): the engine evaluates the whole statement
//! (any expression, subqueries, joins with the source, spatial predicates) and returns, for
//! each affected row, which data file and position it has, which clause applies, and the new
//! column values (`UPDATE SET *` / `INSERT *` expand to every writable target column, from the
//! source column of the same name). The table crate then commits one row delta on the version
//! the query read ([`geoberg_table::RowDelta`]): copy-on-write or merge-on-read as `write.delete.mode`,
//! `write.update.mode` and `write.merge.mode` say, deletion vectors on format-version 3,
//! updated rows keeping their `_row_id`, concurrent appends kept and concurrent changes to
//! the same files refused. DataFusion's own `DELETE`/`UPDATE` hooks are not used: they pass
//! the provider only the filters they can split off the plan, and a condition they cannot
//! (`id IN (SELECT ...)`) would reach it as no filter at all, deleting every row.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, BooleanArray, RecordBatch, UInt64Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use datafusion::common::TableReference;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{
    AssignmentTarget, Delete, Expr, FromTable, Ident, Merge, MergeAction, MergeClauseKind,
    MergeInsertKind, ObjectName, ObjectNamePart, Query, Statement, TableAlias, TableFactor,
    TableWithJoins, Update, UpdateTableFromKind, VisitMut, VisitorMut,
};
use geoberg_table::{
    Catalog, FILE_COLUMN, METADATA_COLUMNS, POS_COLUMN, ROW_ID_COLUMN, RowChangeKind, Table,
    TableIdent,
};

use crate::error::{Error, Result};
use crate::geo_schema::table_arrow_schema;
use crate::insert::{derived_columns, label_batches};
use crate::merge_star::ALL_COLUMNS;
use crate::row_positions::RowPositionsProvider;
use crate::sql_text::spanned_tokens;

/// The DataFusion catalog and schema the pinned views are registered in for one statement.
const VIEW_CATALOG: &str = "datafusion";
const VIEW_SCHEMA: &str = "public";

/// Output columns of a change query.
const OUT_FILE: &str = "__geoberg_file";
const OUT_POS: &str = "__geoberg_pos";
const OUT_ROW_ID: &str = "__geoberg_row_id";
const OUT_ACTION: &str = "__geoberg_action";
/// The marker column of the MERGE source (NULL on target rows that no source row matched).
const SOURCE_MARKER: &str = "__geoberg_source";

/// Names for the views of one process, never reused.
static VIEWS: AtomicU64 = AtomicU64::new(0);

/// What one WHEN clause (or the whole DELETE / UPDATE) does to the rows it applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Delete,
    Update,
    Insert,
}

/// A change as one query: the rows it returns say what to do.
#[derive(Debug)]
struct ChangePlan {
    kind: RowChangeKind,
    query: String,
    /// Clause `i` applies to the rows whose action is `i + 1`.
    clauses: Vec<Shape>,
    /// The target columns an UPDATE or INSERT writes (the table derives the others).
    writable: Vec<String>,
    /// Whether updated rows carry their `_row_id` (format-version 3).
    lineage: bool,
}

/// The target table of a change, resolved and pinned.
struct Target {
    table: Table,
    /// The name the statement's expressions use for it (its alias, or its bare name).
    alias: Ident,
    /// The pinned view's SQL name.
    view: String,
    view_ref: TableReference,
}

/// Views registered for one statement, dropped when it ends.
struct Registered<'a> {
    ctx: &'a SessionContext,
    views: Vec<TableReference>,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        for v in &self.views {
            let _ = self.ctx.deregister_table(v.clone());
        }
    }
}

/// Runs `statement` if it is a `DELETE`, `UPDATE` or `MERGE` on a geoberg table of `catalog`
/// (or a query naming a metadata column of one); `None` when it is not, for the engine to run
/// as usual.
pub(crate) async fn run(
    ctx: &SessionContext,
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    statement: &Statement,
) -> Result<Option<(Vec<RecordBatch>, Vec<String>)>> {
    match statement {
        Statement::Delete(d) => {
            let Some(relation) = single_relation(delete_from(d)) else {
                return Ok(None);
            };
            let Some(target) = pin(catalog, catalog_name, relation).await? else {
                return Ok(None);
            };
            let plan = plan_delete(&target, d)?;
            execute(ctx, target, plan).await.map(Some)
        }
        Statement::Update(u) => {
            let Some(target) = pin(catalog, catalog_name, &u.table.relation).await? else {
                return Ok(None);
            };
            let plan = plan_update(&target, u)?;
            execute(ctx, target, plan).await.map(Some)
        }
        Statement::Merge(m) => {
            let Some(target) = pin(catalog, catalog_name, &m.table).await? else {
                return Ok(None);
            };
            let source_columns = match m.clauses.iter().any(|c| all_columns(&c.action)) {
                true => Some(source_columns(ctx, m).await?),
                false => None,
            };
            let plan = plan_merge(&target, m, source_columns.as_deref())?;
            execute(ctx, target, plan).await.map(Some)
        }
        Statement::Query(q) if names_metadata_column(statement) => {
            query_with_metadata(ctx, catalog, catalog_name, q).await
        }
        _ => Ok(None),
    }
}

fn delete_from(d: &Delete) -> &[TableWithJoins] {
    match &d.from {
        FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
    }
}

fn single_relation(from: &[TableWithJoins]) -> Option<&TableFactor> {
    match from {
        [one] if one.joins.is_empty() => Some(&one.relation),
        _ => None,
    }
}

/// The geoberg table a relation names, if it names one of `catalog`'s tables.
async fn pin(
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    relation: &TableFactor,
) -> Result<Option<Target>> {
    let TableFactor::Table { name, alias, .. } = relation else {
        return Ok(None);
    };
    let Some(ident) = geoberg_ident(name, catalog_name) else {
        return Ok(None);
    };
    let catalog = Arc::clone(catalog);
    let found = blocking(move || {
        if catalog.metadata_location(&ident)?.is_none() {
            return Ok(None);
        }
        Ok(Some(Table::load(catalog, &ident)?))
    })
    .await?;
    let Some(table) = found else {
        return Ok(None);
    };
    let alias = alias
        .as_ref()
        .map(|a| a.name.clone())
        .unwrap_or_else(|| Ident::with_quote('"', table.ident().name()));
    let view = format!("__geoberg_rows_{}", VIEWS.fetch_add(1, Ordering::Relaxed));
    Ok(Some(Target {
        view_ref: TableReference::full(VIEW_CATALOG, VIEW_SCHEMA, view.as_str()),
        view: format!(
            "{}.{}.{}",
            quote(VIEW_CATALOG),
            quote(VIEW_SCHEMA),
            quote(&view)
        ),
        alias,
        table,
    }))
}

/// `ns.t` or `<catalog_name>.ns.t` as a table identifier (unquoted parts lower-cased, as the
/// engine resolves them).
pub(crate) fn geoberg_ident(name: &ObjectName, catalog_name: &str) -> Option<TableIdent> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(i) if i.quote_style.is_some() => Some(i.value.clone()),
            ObjectNamePart::Identifier(i) => Some(i.value.to_lowercase()),
            ObjectNamePart::Function(_) => None,
        })
        .collect::<Option<_>>()?;
    let (namespace, table) = match parts.as_slice() {
        [ns, t] => (ns, t),
        [c, ns, t] if c == catalog_name => (ns, t),
        _ => return None,
    };
    TableIdent::new(namespace, table).ok()
}

fn plan_delete(target: &Target, d: &Delete) -> Result<ChangePlan> {
    if !d.tables.is_empty() || d.returning.is_some() || !d.order_by.is_empty() || d.limit.is_some()
    {
        return Err(unsupported(
            "DELETE with a table list, RETURNING, ORDER BY or LIMIT",
            "write DELETE FROM <table> [WHERE <condition>]",
        ));
    }
    let t = &target.alias;
    let mut query = format!(
        "SELECT {t}.{} AS {}, {t}.{} AS {}, 1 AS {} FROM {} AS {t}",
        quote(FILE_COLUMN),
        quote(OUT_FILE),
        quote(POS_COLUMN),
        quote(OUT_POS),
        quote(OUT_ACTION),
        target.view
    );
    if let Some(using) = &d.using {
        query.push_str(&format!(", {}", join_list(using)));
    }
    if let Some(selection) = &d.selection {
        query.push_str(&format!(" WHERE {selection}"));
    }
    Ok(ChangePlan {
        kind: RowChangeKind::Delete,
        query,
        clauses: vec![Shape::Delete],
        writable: Vec::new(),
        lineage: false,
    })
}

fn plan_update(target: &Target, u: &Update) -> Result<ChangePlan> {
    if !u.table.joins.is_empty()
        || u.returning.is_some()
        || u.or.is_some()
        || u.limit.is_some()
        || !u.order_by.is_empty()
    {
        return Err(unsupported(
            "UPDATE with a join, RETURNING, OR, ORDER BY or LIMIT",
            "write UPDATE <table> SET <column> = <value>, ... [FROM <tables>] [WHERE <condition>]",
        ));
    }
    let writable = writable_columns(&target.table);
    let assigned = assignments(&target.table, &writable, &u.assignments)?;
    let t = &target.alias;
    let lineage = has_lineage(&target.table);
    let mut select = positions(t, lineage);
    select.push(format!("1 AS {}", quote(OUT_ACTION)));
    for (k, column) in writable.iter().enumerate() {
        let value = match assigned.iter().find(|(c, _)| c == column) {
            Some((_, e)) => e.to_string(),
            None => format!("{t}.{}", quote(column)),
        };
        select.push(format!("{value} AS {}", quote(&value_column(0, k))));
    }
    let mut query = format!("SELECT {} FROM {} AS {t}", select.join(", "), target.view);
    if let Some(UpdateTableFromKind::BeforeSet(from) | UpdateTableFromKind::AfterSet(from)) =
        &u.from
    {
        query.push_str(&format!(", {}", join_list(from)));
    }
    if let Some(selection) = &u.selection {
        query.push_str(&format!(" WHERE {selection}"));
    }
    Ok(ChangePlan {
        kind: RowChangeKind::Update,
        query,
        clauses: vec![Shape::Update],
        writable,
        lineage,
    })
}

/// The MERGE source as a relation with the marker column, and the name its columns go by.
fn merge_source(m: &Merge) -> Result<(String, Ident)> {
    match &m.source {
        TableFactor::Table { name, alias, .. } => {
            let s = alias
                .as_ref()
                .map(|a| a.name.clone())
                .or_else(|| last_ident(name))
                .ok_or_else(|| invalid("MERGE source", name.to_string(), "name a table"))?;
            Ok((
                format!("(SELECT *, TRUE AS {} FROM {name})", quote(SOURCE_MARKER)),
                s,
            ))
        }
        TableFactor::Derived {
            subquery,
            alias: Some(alias),
            ..
        } => Ok((
            format!(
                "(SELECT *, TRUE AS {} FROM ({subquery}) AS {})",
                quote(SOURCE_MARKER),
                quote("__geoberg_inner")
            ),
            alias_name(alias),
        )),
        other => Err(invalid(
            "MERGE source",
            other.to_string(),
            "use a table or a parenthesised query with an alias: USING (SELECT ...) AS s",
        )),
    }
}

/// The MERGE source's column names (planned, not run), for `UPDATE SET *` / `INSERT *`.
async fn source_columns(ctx: &SessionContext, m: &Merge) -> Result<Vec<String>> {
    let (source, _) = merge_source(m)?;
    let frame = ctx.sql(&format!("SELECT * FROM {source}")).await?;
    Ok(frame
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .filter(|n| n != SOURCE_MARKER)
        .collect())
}

/// Whether a clause is Iceberg's `UPDATE SET *` or `INSERT *` (written as the placeholder
/// column of [`ALL_COLUMNS`]).
fn all_columns(action: &MergeAction) -> bool {
    let is_placeholder =
        |name: &ObjectName| last_ident(name).is_some_and(|i| i.value == ALL_COLUMNS);
    match action {
        MergeAction::Update(update) => matches!(
            update.assignments.as_slice(),
            [a] if matches!(&a.target, AssignmentTarget::ColumnName(n) if is_placeholder(n))
        ),
        MergeAction::Insert(insert) => {
            matches!(insert.columns.as_slice(), [n] if is_placeholder(n))
        }
        MergeAction::Delete { .. } => false,
    }
}

/// `UPDATE SET *` / `INSERT *`: each writable target column and, as SQL, the source column of
/// the same name (exactly, else ignoring case); an error names a column the source lacks.
fn from_source(
    target: &Target,
    writable: &[String],
    s: &Ident,
    source_columns: &[String],
    clause: &str,
) -> Result<Vec<(String, String)>> {
    writable
        .iter()
        .map(|column| {
            let found = source_columns.iter().find(|c| *c == column).or_else(|| {
                source_columns
                    .iter()
                    .find(|c| c.eq_ignore_ascii_case(column))
            });
            match found {
                Some(c) => Ok((column.clone(), format!("{s}.{}", quote(c)))),
                None => Err(invalid(
                    "MERGE source column",
                    column.clone(),
                    format!(
                        "{clause} takes every column of {} from the source column of the same \
                         name, and source {s} has no column {column} (it has {}); add it to the \
                         source, e.g. USING (SELECT *, NULL AS {column} FROM ...) AS {s}, or \
                         list the columns instead of *",
                        target.table.ident(),
                        source_columns.join(", ")
                    ),
                )),
            }
        })
        .collect()
}

/// `source_columns`: the source's columns when a clause is `UPDATE SET *` or `INSERT *`.
fn plan_merge(target: &Target, m: &Merge, source_columns: Option<&[String]>) -> Result<ChangePlan> {
    if m.output.is_some() {
        return Err(unsupported("MERGE ... OUTPUT", "remove the OUTPUT clause"));
    }
    let t = &target.alias;
    let (source, s) = merge_source(m)?;
    let writable = writable_columns(&target.table);
    let lineage = has_lineage(&target.table);
    let matched = format!(
        "({t}.{} IS NOT NULL AND {s}.{} IS NOT NULL)",
        quote(FILE_COLUMN),
        quote(SOURCE_MARKER)
    );
    let not_matched = format!("({t}.{} IS NULL)", quote(FILE_COLUMN));
    let not_matched_by_source = format!("({s}.{} IS NULL)", quote(SOURCE_MARKER));
    let mut clauses = Vec::with_capacity(m.clauses.len());
    let mut action = String::from("CASE");
    let mut values = Vec::new();
    let (mut inserts, mut by_source) = (false, false);
    for (i, clause) in m.clauses.iter().enumerate() {
        let kind = match clause.clause_kind {
            MergeClauseKind::Matched => &matched,
            MergeClauseKind::NotMatched | MergeClauseKind::NotMatchedByTarget => {
                inserts = true;
                &not_matched
            }
            MergeClauseKind::NotMatchedBySource => {
                by_source = true;
                &not_matched_by_source
            }
        };
        let when = match &clause.predicate {
            Some(p) => format!("{kind} AND ({p})"),
            None => kind.clone(),
        };
        action.push_str(&format!(" WHEN {when} THEN {}", i + 1));
        let insert_allowed = matches!(
            clause.clause_kind,
            MergeClauseKind::NotMatched | MergeClauseKind::NotMatchedByTarget
        );
        match (&clause.action, insert_allowed) {
            (MergeAction::Delete { .. }, false) => clauses.push(Shape::Delete),
            (MergeAction::Update(update), false) => {
                if update.update_predicate.is_some() || update.delete_predicate.is_some() {
                    return Err(unsupported(
                        "UPDATE SET ... WHERE / DELETE WHERE inside a MERGE clause",
                        "put the condition in the clause: WHEN MATCHED AND <condition> THEN ...",
                    ));
                }
                let star = all_columns(&clause.action);
                if star && clause.clause_kind == MergeClauseKind::NotMatchedBySource {
                    return Err(invalid(
                        "MERGE clause",
                        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET *",
                        "such a target row has no source row to copy from; assign the columns \
                         (UPDATE SET <column> = <value>, ...) or DELETE it",
                    ));
                }
                let assigned = match star {
                    true => from_source(
                        target,
                        &writable,
                        &s,
                        source_columns.unwrap_or_default(),
                        "UPDATE SET *",
                    )?,
                    false => assignments(&target.table, &writable, &update.assignments)?
                        .into_iter()
                        .map(|(c, e)| (c, e.to_string()))
                        .collect(),
                };
                for (k, column) in writable.iter().enumerate() {
                    let value = match assigned.iter().find(|(c, _)| c == column) {
                        Some((_, e)) => e.clone(),
                        None => format!("{t}.{}", quote(column)),
                    };
                    values.push(format!("{value} AS {}", quote(&value_column(i, k))));
                }
                clauses.push(Shape::Update);
            }
            (MergeAction::Insert(insert), true) => {
                if insert.insert_predicate.is_some() {
                    return Err(unsupported(
                        "INSERT ... WHERE inside a MERGE clause",
                        "put the condition in the clause: WHEN NOT MATCHED AND <condition> THEN \
                         INSERT ...",
                    ));
                }
                if all_columns(&clause.action) {
                    let from = from_source(
                        target,
                        &writable,
                        &s,
                        source_columns.unwrap_or_default(),
                        "INSERT *",
                    )?;
                    for (k, (_, value)) in from.iter().enumerate() {
                        values.push(format!("{value} AS {}", quote(&value_column(i, k))));
                    }
                    clauses.push(Shape::Insert);
                    continue;
                }
                let MergeInsertKind::Values(rows) = &insert.kind else {
                    return Err(unsupported(
                        "INSERT ROW in MERGE",
                        "list the values: INSERT (<columns>) VALUES (<values>)",
                    ));
                };
                let [row] = rows.rows.as_slice() else {
                    return Err(invalid(
                        "MERGE INSERT",
                        rows.to_string(),
                        "a MERGE clause inserts one row per source row: give one VALUES tuple",
                    ));
                };
                let columns: Vec<String> = match insert.columns.is_empty() {
                    true => writable.clone(),
                    false => insert
                        .columns
                        .iter()
                        .map(|c| {
                            let ident = last_ident(c).ok_or_else(|| {
                                invalid("MERGE INSERT column", c.to_string(), "name a column")
                            })?;
                            column_of(&target.table, &writable, &ident)
                        })
                        .collect::<Result<_>>()?,
                };
                if columns.len() != row.len() {
                    return Err(invalid(
                        "MERGE INSERT",
                        insert.to_string(),
                        format!(
                            "{} columns but {} values; give one value per column",
                            columns.len(),
                            row.len()
                        ),
                    ));
                }
                for (k, column) in writable.iter().enumerate() {
                    let value = match columns.iter().position(|c| c == column) {
                        Some(at) => row[at].to_string(),
                        None => "NULL".to_string(),
                    };
                    values.push(format!("{value} AS {}", quote(&value_column(i, k))));
                }
                clauses.push(Shape::Insert);
            }
            (action, _) => {
                return Err(invalid(
                    "MERGE clause",
                    format!("WHEN {} THEN {action}", clause.clause_kind),
                    "WHEN MATCHED and WHEN NOT MATCHED BY SOURCE take UPDATE or DELETE; WHEN \
                     NOT MATCHED takes INSERT",
                ));
            }
        }
    }
    if clauses.is_empty() {
        return Err(invalid(
            "MERGE",
            m.to_string(),
            "give at least one WHEN [NOT] MATCHED clause",
        ));
    }
    action.push_str(" ELSE 0 END");
    let join = match (by_source, inserts) {
        (true, _) => "FULL OUTER JOIN",
        (false, true) => "LEFT JOIN",
        (false, false) => "JOIN",
    };
    let mut select = positions(t, lineage);
    select.push(format!("{action} AS {}", quote(OUT_ACTION)));
    select.extend(values);
    let query = format!(
        "SELECT * FROM (SELECT {} FROM {source} AS {s} {join} {} AS {t} ON {}) WHERE {} > 0",
        select.join(", "),
        target.view,
        m.on,
        quote(OUT_ACTION)
    );
    Ok(ChangePlan {
        kind: RowChangeKind::Merge,
        query,
        clauses,
        writable,
        lineage,
    })
}

/// `_file`, `_pos` (and `_row_id`) of the target row, renamed for the change query.
fn positions(t: &Ident, lineage: bool) -> Vec<String> {
    let mut out = vec![
        format!("{t}.{} AS {}", quote(FILE_COLUMN), quote(OUT_FILE)),
        format!("{t}.{} AS {}", quote(POS_COLUMN), quote(OUT_POS)),
    ];
    if lineage {
        out.push(format!(
            "{t}.{} AS {}",
            quote(ROW_ID_COLUMN),
            quote(OUT_ROW_ID)
        ));
    }
    out
}

/// The output column of clause `clause`'s value for writable column `k`.
fn value_column(clause: usize, k: usize) -> String {
    format!("__geoberg_value_{clause}_{k}")
}

fn has_lineage(table: &Table) -> bool {
    table.metadata().format_version() as u8 >= 3
}

/// The columns a change writes: every column but those the table derives from the geometry.
fn writable_columns(table: &Table) -> Vec<String> {
    let derived = derived_columns(table);
    table
        .metadata()
        .current_schema()
        .as_struct()
        .fields()
        .iter()
        .map(|f| f.name.clone())
        .filter(|n| !derived.contains(n))
        .collect()
}

/// The table column an identifier names (exactly, or case-insensitively when unquoted).
fn column_of(table: &Table, writable: &[String], ident: &Ident) -> Result<String> {
    let found = writable.iter().find(|c| match ident.quote_style {
        Some(_) => **c == ident.value,
        None => c.eq_ignore_ascii_case(&ident.value),
    });
    if let Some(c) = found {
        return Ok(c.clone());
    }
    let derived = derived_columns(table);
    let fix = if derived.iter().any(|d| d.eq_ignore_ascii_case(&ident.value)) {
        "the table derives it from the geometry on every write; set the geometry instead".into()
    } else if METADATA_COLUMNS
        .iter()
        .any(|m| m.eq_ignore_ascii_case(&ident.value))
    {
        "metadata columns are maintained by the table".into()
    } else {
        format!(
            "table {} has columns {}",
            table.ident(),
            writable.join(", ")
        )
    };
    Err(invalid("column", ident.value.clone(), fix))
}

/// `column = value` pairs of a SET list, by table column name; each column at most once.
fn assignments(
    table: &Table,
    writable: &[String],
    list: &[datafusion::sql::sqlparser::ast::Assignment],
) -> Result<Vec<(String, Expr)>> {
    let mut out: Vec<(String, Expr)> = Vec::with_capacity(list.len());
    for a in list {
        let AssignmentTarget::ColumnName(name) = &a.target else {
            return Err(unsupported(
                "assigning a tuple of columns",
                "assign each column on its own: SET a = 1, b = 2",
            ));
        };
        let ident = last_ident(name)
            .ok_or_else(|| invalid("SET target", name.to_string(), "name a column"))?;
        let column = column_of(table, writable, &ident)?;
        if out.iter().any(|(c, _)| *c == column) {
            return Err(invalid(
                "SET list",
                column,
                "assign each column once per clause",
            ));
        }
        out.push((column, a.value.clone()));
    }
    Ok(out)
}

/// Runs the change query and commits what it returned as one row delta on the pinned version.
async fn execute(
    ctx: &SessionContext,
    target: Target,
    plan: ChangePlan,
) -> Result<(Vec<RecordBatch>, Vec<String>)> {
    let provider = Arc::new(RowPositionsProvider::try_new(target.table.clone())?);
    ctx.register_table(target.view_ref.clone(), Arc::clone(&provider) as _)?;
    let _registered = Registered {
        ctx,
        views: vec![target.view_ref.clone()],
    };
    let rows = ctx.sql(&plan.query).await?.collect().await?;
    let files_scanned = provider.files_read();
    let table = target.table;
    let columns = table_arrow_schema(&table)?;
    let kind = plan.kind;
    let report = blocking(move || apply(&table, &columns, &plan, &rows, files_scanned)).await?;
    let (table, report, counts) = report;
    let notice = format!(
        "{} on {}: {report}",
        match kind {
            RowChangeKind::Delete => "DELETE",
            RowChangeKind::Update => "UPDATE",
            RowChangeKind::Merge => "MERGE",
        },
        table.ident()
    );
    let (names, values): (Vec<&str>, Vec<u64>) = match kind {
        RowChangeKind::Delete => (vec!["count"], vec![counts.deleted]),
        RowChangeKind::Update => (vec!["count"], vec![counts.updated]),
        RowChangeKind::Merge => (
            vec![
                "num_affected_rows",
                "num_updated_rows",
                "num_deleted_rows",
                "num_inserted_rows",
            ],
            vec![
                counts.updated + counts.deleted + counts.inserted,
                counts.updated,
                counts.deleted,
                counts.inserted,
            ],
        ),
    };
    let schema = Arc::new(Schema::new(
        names
            .iter()
            .map(|n| Field::new(*n, DataType::UInt64, false))
            .collect::<Vec<_>>(),
    ));
    let arrays = values
        .into_iter()
        .map(|v| Arc::new(UInt64Array::from(vec![v])) as ArrayRef)
        .collect();
    Ok((vec![RecordBatch::try_new(schema, arrays)?], vec![notice]))
}

/// Rows a change deleted, updated and inserted.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    deleted: u64,
    updated: u64,
    inserted: u64,
}

/// The row delta the change query's rows describe, committed.
fn apply(
    table: &Table,
    columns: &SchemaRef,
    plan: &ChangePlan,
    rows: &[RecordBatch],
    files_scanned: usize,
) -> Result<(Table, geoberg_table::RowDeltaReport, Counts)> {
    let mut delta = table.row_delta(plan.kind);
    let mut counts = Counts::default();
    let mut targeted: HashSet<(String, i64)> = HashSet::new();
    for batch in rows.iter().filter(|b| b.num_rows() > 0) {
        let action = column(batch, OUT_ACTION, &DataType::Int64)?;
        let action = action.as_primitive::<Int64Type>();
        let file = column(batch, OUT_FILE, &DataType::Utf8)?;
        let pos = column(batch, OUT_POS, &DataType::Int64)?;
        let positions = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new(FILE_COLUMN, DataType::Utf8, true),
                Field::new(POS_COLUMN, DataType::Int64, true),
            ])),
            vec![Arc::clone(&file), Arc::clone(&pos)],
        )?;
        for (i, shape) in plan.clauses.iter().enumerate() {
            let code = i as i64 + 1;
            let mask: BooleanArray = action.iter().map(|a| Some(a == Some(code))).collect();
            let n = mask.true_count() as u64;
            if n == 0 {
                continue;
            }
            if matches!(shape, Shape::Delete | Shape::Update) {
                check_each_row_once(&mut targeted, &mask, &file, &pos)?;
                delta.delete_marked(&positions, &mask)?;
            }
            match shape {
                Shape::Delete => counts.deleted += n,
                Shape::Update => counts.updated += n,
                Shape::Insert => counts.inserted += n,
            }
            if *shape != Shape::Delete {
                let values = clause_rows(batch, i, plan, columns, &mask, *shape == Shape::Update)?;
                delta.add_rows(label_batches(table, &[values])?);
            }
        }
    }
    delta.count(counts.updated, counts.inserted, files_scanned);
    let (table, report) = delta.commit()?;
    Ok((table, report, counts))
}

/// Fails when a target row is changed by more than one row of the query (a MERGE whose ON
/// condition matches one target row with several source rows, an UPDATE ... FROM joining a
/// row twice): which of the changes would win is undefined.
fn check_each_row_once(
    targeted: &mut HashSet<(String, i64)>,
    mask: &BooleanArray,
    file: &ArrayRef,
    pos: &ArrayRef,
) -> Result<()> {
    let (file, pos) = (file.as_string::<i32>(), pos.as_primitive::<Int64Type>());
    for row in 0..mask.len() {
        if !mask.value(row) {
            continue;
        }
        let key = (file.value(row).to_string(), pos.value(row));
        if !targeted.insert(key) {
            return Err(Error::Invalid {
                what: "change",
                value: format!("row {} of data file {}", pos.value(row), file.value(row)),
                fix: "the ON search condition (or the FROM join) matched a single row of the \
                      target table with multiple source rows, so it would be changed more than \
                      once; make the condition match each target row at most once (e.g. \
                      deduplicate the source)"
                    .into(),
            });
        }
    }
    Ok(())
}

/// The new rows clause `clause` writes, for the rows in `mask`: its value columns renamed to
/// the table's, cast to the table's types (geometry keeps the type the engine gave it, whose
/// CRS the append checks), with `_row_id` for updated rows of a format-version 3 table.
fn clause_rows(
    batch: &RecordBatch,
    clause: usize,
    plan: &ChangePlan,
    columns: &SchemaRef,
    mask: &BooleanArray,
    updated: bool,
) -> Result<RecordBatch> {
    let mut fields = Vec::with_capacity(plan.writable.len() + 1);
    let mut arrays = Vec::with_capacity(plan.writable.len() + 1);
    let chosen = batch.schema();
    for (k, name) in plan.writable.iter().enumerate() {
        let source = value_column(clause, k);
        let index = chosen.index_of(&source)?;
        let field = chosen.field(index);
        let values = arrow::compute::filter(batch.column(index), mask)?;
        let table_field = columns.field_with_name(name)?;
        let is_geo = table_field.extension_type_name().is_some()
            || table_field.metadata().contains_key("ARROW:extension:name");
        if is_geo && field.data_type() != &DataType::Null {
            fields.push(field.as_ref().clone().with_name(name));
            arrays.push(values);
        } else {
            // NULL literals (an INSERT that leaves a column out) take the column's own type.
            let options = arrow::compute::CastOptions {
                safe: false,
                ..Default::default()
            };
            let cast =
                arrow::compute::cast_with_options(&values, table_field.data_type(), &options)
                    .map_err(|e| Error::Invalid {
                        what: "value",
                        value: format!("for column {name}"),
                        fix: format!(
                            "it does not convert to {}: {e}; CAST it to the column's type",
                            table_field.data_type()
                        ),
                    })?;
            fields.push(table_field.clone().with_nullable(true));
            arrays.push(cast);
        }
    }
    if updated && plan.lineage {
        let row_id = column(batch, OUT_ROW_ID, &DataType::Int64)?;
        fields.push(Field::new(ROW_ID_COLUMN, DataType::Int64, true));
        arrays.push(arrow::compute::filter(&row_id, mask)?);
    }
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?)
}

/// A column of a change query's result, cast to `ty`.
fn column(batch: &RecordBatch, name: &str, ty: &DataType) -> Result<ArrayRef> {
    let c = batch
        .column_by_name(name)
        .ok_or_else(|| Error::Unsupported {
            what: format!("a change query without {name}"),
            fix: "this is a bug in geoberg; please report it".into(),
        })?;
    Ok(arrow::compute::cast(c, ty)?)
}

/// Whether a statement names a metadata column anywhere (as a word, outside string literals).
fn names_metadata_column(statement: &Statement) -> bool {
    use datafusion::sql::sqlparser::tokenizer::Token;
    let Some(tokens) = spanned_tokens(&statement.to_string()) else {
        return false;
    };
    tokens.iter().any(|t| {
        matches!(&t.token, Token::Word(w) if METADATA_COLUMNS.iter().any(|m| m.eq_ignore_ascii_case(&w.value)))
    })
}

/// Runs a query that names a metadata column: each geoberg table it reads is read through its
/// pinned view with metadata columns (under the table's own name, so `t.col` still resolves).
async fn query_with_metadata(
    ctx: &SessionContext,
    catalog: &Arc<dyn Catalog>,
    catalog_name: &str,
    query: &Query,
) -> Result<Option<(Vec<RecordBatch>, Vec<String>)>> {
    // Collect the geoberg tables the query names.
    struct Names(Vec<ObjectName>);
    impl VisitorMut for Names {
        type Break = ();
        fn pre_visit_table_factor(&mut self, f: &mut TableFactor) -> ControlFlow<()> {
            if let TableFactor::Table { name, .. } = f {
                self.0.push(name.clone());
            }
            ControlFlow::Continue(())
        }
    }
    let mut query = query.clone();
    let mut names = Names(Vec::new());
    let _ = query.visit(&mut names);
    let mut targets: Vec<(ObjectName, Target)> = Vec::new();
    for name in names.0 {
        if targets.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let relation = TableFactor::Table {
            name: name.clone(),
            alias: None,
            args: None,
            with_hints: Vec::new(),
            version: None,
            with_ordinality: false,
            partitions: Vec::new(),
            json_path: None,
            sample: None,
            index_hints: Vec::new(),
        };
        if let Some(target) = pin(catalog, catalog_name, &relation).await? {
            targets.push((name, target));
        }
    }
    if targets.is_empty() {
        return Ok(None);
    }
    // Point each of them at its view, aliased to the table's name unless aliased already.
    struct Rename<'a>(&'a [(ObjectName, Target)]);
    impl VisitorMut for Rename<'_> {
        type Break = ();
        fn pre_visit_table_factor(&mut self, f: &mut TableFactor) -> ControlFlow<()> {
            if let TableFactor::Table { name, alias, .. } = f
                && let Some((_, target)) = self.0.iter().find(|(n, _)| n == name)
            {
                *name = ObjectName::from(vec![
                    Ident::new(VIEW_CATALOG),
                    Ident::new(VIEW_SCHEMA),
                    Ident::with_quote('"', target.view_ref.table()),
                ]);
                if alias.is_none() {
                    *alias = Some(TableAlias {
                        explicit: true,
                        name: target.alias.clone(),
                        columns: Vec::new(),
                        at: None,
                    });
                }
            }
            ControlFlow::Continue(())
        }
    }
    let _ = query.visit(&mut Rename(&targets));
    let mut registered = Registered {
        ctx,
        views: Vec::new(),
    };
    for (_, target) in &targets {
        let provider = Arc::new(RowPositionsProvider::try_new(target.table.clone())?);
        ctx.register_table(target.view_ref.clone(), provider)?;
        registered.views.push(target.view_ref.clone());
    }
    let batches = ctx.sql(&query.to_string()).await?.collect().await?;
    drop(registered);
    Ok(Some((batches, Vec::new())))
}

fn last_ident(name: &ObjectName) -> Option<Ident> {
    match name.0.last()? {
        ObjectNamePart::Identifier(i) => Some(i.clone()),
        ObjectNamePart::Function(_) => None,
    }
}

fn alias_name(alias: &TableAlias) -> Ident {
    alias.name.clone()
}

fn join_list(tables: &[TableWithJoins]) -> String {
    tables
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A double-quoted SQL identifier.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn unsupported(what: &str, fix: &str) -> Error {
    Error::Unsupported {
        what: what.to_string(),
        fix: fix.to_string(),
    }
}

fn invalid(what: &'static str, value: impl Into<String>, fix: impl Into<String>) -> Error {
    Error::Invalid {
        what,
        value: value.into(),
        fix: fix.into(),
    }
}

/// Runs blocking table work off the async threads.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Unsupported {
            what: "the statement".into(),
            fix: format!("it stopped unexpectedly ({e}); run it again"),
        })?
}
