//! `geoberg sql`: parse each statement with `geoberg-sql`, execute it through `geoberg-table`.

use std::fmt::Write as _;
use std::io::Read;

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use geoberg_crs::ColumnType;
use geoberg_sql::{CreateTableRequest, Projection, SelectRequest, Statement, TableName};
use geoberg_table::Table;
use serde_json::{Value, json};
use wkt::ToWkt;

use crate::args::{GlobalArgs, SqlArgs};
use crate::context::{Access, Context};
use crate::error::{CliError, Result};
use crate::index;
use crate::query::{self, QueryRun, geometry_at};

/// Runs every statement of the input, in order, stopping at the first error.
pub fn run(global: &GlobalArgs, args: &SqlArgs) -> Result<()> {
    let text = match (&args.statement, &args.file) {
        (Some(s), _) => s.clone(),
        (None, Some(path)) if path.as_os_str() != "-" => {
            std::fs::read_to_string(path).map_err(|e| CliError::io(path, e))?
        }
        _ => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| CliError::io("<stdin>", e))?;
            s
        }
    };
    // Parse everything first: a typo in statement 3 must not leave statements 1-2 applied.
    let statements = split_statements(&text)
        .into_iter()
        .map(geoberg_sql::parse)
        .collect::<Result<Vec<_>, _>>()?;
    if statements.is_empty() {
        return Err(CliError::invalid(
            "input",
            text.trim(),
            "give a statement, e.g. geoberg sql \"SHOW CREATE TABLE db.t\"",
        ));
    }
    // Check CREATE TABLE requests before the catalog is opened (and possibly created).
    let mut creates = false;
    for s in &statements {
        if let Statement::CreateTable(request) = s {
            geoberg_table::CreateTable::from_request(request)?;
            creates = true;
        }
    }
    let ctx = Context::open(
        global,
        if creates {
            Access::Create
        } else {
            Access::Existing
        },
    )?;
    for statement in &statements {
        execute(&ctx, statement)?;
    }
    Ok(())
}

/// Splits on `;` at the end of a line (or of the input); a `;` inside a line stays, so string
/// literals holding one are safe as long as they do not end a line.
fn split_statements(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, _) in text.match_indices(';') {
        let rest = &text[i + 1..];
        let line_end = rest.find('\n').unwrap_or(rest.len());
        if rest[..line_end].trim().is_empty() {
            out.push(&text[start..i]);
            start = i + 1;
        }
    }
    out.push(&text[start..]);
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

/// Executes one statement and prints its result.
pub fn execute(ctx: &Context, statement: &Statement) -> Result<()> {
    let out = ctx.output;
    match statement {
        Statement::CreateTable(request) => {
            let (table, created) = create_table(ctx, request)?;
            let verb = if created {
                "created"
            } else {
                "exists, unchanged:"
            };
            out.emit(
                format!("{verb} table {}", table.ident()),
                json!({"statement": "CREATE TABLE", "table": table.ident().to_string(), "created": created}),
            );
        }
        Statement::Rewrite(request) => {
            let bar = out.bytes_bar("clustering");
            let (table, summary) = index::rewrite(ctx, request, &bar)?;
            out.emit(
                format!(
                    "rewrote {} of table {}: {} files ({} bytes) replaced by {} files in {:.1} s",
                    request.hilbert().map_or("data".into(), |h| h.to_string()),
                    table.ident(),
                    summary.report.rewritten_data_files_count,
                    summary.report.rewritten_bytes_count,
                    summary.report.added_data_files_count,
                    summary.elapsed.as_secs_f64()
                ),
                json!({"statement": "REWRITE", "table": table.ident().to_string(), "result": summary.to_json()}),
            );
        }
        Statement::ShowCreateTable(name) => {
            let table = load(ctx, name)?;
            let ddl = table.show_create_table(&ctx.catalog_name);
            out.emit(&ddl, json!({"statement": "SHOW CREATE TABLE", "ddl": ddl}));
        }
        Statement::ShowTblProperties { table, key } => {
            let table = load(ctx, table)?;
            let mut props: Vec<(String, String)> = table
                .metadata()
                .properties()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            props.push((
                "format-version".into(),
                (table.metadata().format_version() as u8).to_string(),
            ));
            props.sort();
            if let Some(key) = key {
                props.retain(|(k, _)| k == key);
                if props.is_empty() {
                    return Err(CliError::invalid(
                        "property",
                        key,
                        format!(
                            "table {} has no such property; SHOW TBLPROPERTIES {} lists them",
                            table.ident(),
                            table.ident()
                        ),
                    ));
                }
            }
            let text: String = props.iter().map(|(k, v)| format!("{k}\t{v}\n")).collect();
            let map: serde_json::Map<String, Value> = props
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            out.emit(
                text,
                json!({"statement": "SHOW TBLPROPERTIES", "properties": map}),
            );
        }
        Statement::Describe(name) => {
            let table = load(ctx, name)?;
            let columns = describe(&table);
            let text: String = columns
                .iter()
                .map(|(n, t, required)| {
                    format!("{n}\t{t}{}\n", if *required { "\tNOT NULL" } else { "" })
                })
                .collect();
            let json_cols: Vec<Value> = columns
                .iter()
                .map(|(n, t, r)| json!({"name": n, "type": t, "required": r}))
                .collect();
            out.emit(text, json!({"statement": "DESCRIBE", "columns": json_cols}));
        }
        Statement::Explain(request) => {
            let table = load(ctx, &request.table)?;
            let run = query::run(&table, request, true)?;
            out.emit(
                render_plan(request, &run),
                json!({"statement": "EXPLAIN", "plan": explain_json(&run)}),
            );
        }
        Statement::Select(request) => {
            let table = load(ctx, &request.table)?;
            let run = query::run(&table, request, false)?;
            if request.projection == Projection::CountStar {
                out.emit(
                    run.matched_rows.to_string(),
                    json!({"statement": "SELECT", "count": run.matched_rows, "scan": explain_json(&run)}),
                );
            } else {
                let (text, rows) = render_rows(&table, &run.batches)?;
                out.emit(
                    text,
                    json!({"statement": "SELECT", "rows": rows, "scan": explain_json(&run)}),
                );
            }
        }
    }
    Ok(())
}

fn load(ctx: &Context, name: &TableName) -> Result<Table> {
    let ident = ctx.resolve(name)?;
    Ok(Table::load(ctx.dyn_catalog(), &ident)?)
}

/// Creates the table (and its namespace); `false` when `IF NOT EXISTS` found it already there.
/// Everything that can be checked without writing is checked before the namespace is created.
pub fn create_table(ctx: &Context, request: &CreateTableRequest) -> Result<(Table, bool)> {
    let ident = ctx.resolve(&request.table)?;
    let create = geoberg_table::CreateTable::from_request(request)?;
    if ctx.catalog.metadata_location(&ident)?.is_some() {
        if request.if_not_exists {
            return Ok((Table::load(ctx.dyn_catalog(), &ident)?, false));
        }
        return Err(geoberg_table::Error::TableAlreadyExists(ident.to_string()).into());
    }
    let namespace = ident.namespace_str();
    if !ctx.catalog.namespace_exists(&namespace)? {
        ctx.catalog.create_namespace(&namespace)?;
    }
    Ok((create.create(ctx.dyn_catalog(), &ident)?, true))
}

/// `(name, type, required)` per column, types spelled as in `CREATE TABLE`.
fn describe(table: &Table) -> Vec<(String, String, bool)> {
    table
        .metadata()
        .current_schema()
        .as_struct()
        .fields()
        .iter()
        .map(|f| {
            let ty = match table.geo_columns().iter().find(|g| g.field_id == f.id) {
                Some(g) => geo_type_sql(&g.column_type),
                None => f.field_type.to_string(),
            };
            (f.name.clone(), ty, f.required)
        })
        .collect()
}

fn geo_type_sql(t: &ColumnType) -> String {
    let crs = |c: &geoberg_crs::Crs| c.srid().map_or_else(|| format!("'{c}'"), |s| s.to_string());
    match t {
        ColumnType::GeometryWithoutCrs => "geometry".into(),
        ColumnType::Geometry { crs: c } => format!("geometry({})", crs(c)),
        ColumnType::Geography { crs: c, edges } => {
            format!("geography({}, {})", crs(c), edges.name())
        }
    }
}

/// The EXPLAIN text: what the scan would read, from the manifests alone.
pub fn render_plan(request: &SelectRequest, run: &QueryRun) -> String {
    let e = &run.explain;
    let mut s = format!("scan {}\n", request.table);
    if let Some(w) = run.window {
        let _ = writeln!(
            s,
            "window: [{}, {}, {}, {}]",
            w.min_x, w.min_y, w.max_x, w.max_y
        );
    }
    let _ = writeln!(
        s,
        "files: read {} of {} ({:.1}%), skipped {}",
        e.files_read,
        e.files_total,
        percent(e.files_read as u64, e.files_total as u64),
        e.files_skipped
    );
    let _ = writeln!(
        s,
        "bytes: read {} of {} ({:.1}%)",
        e.bytes_read,
        e.bytes_total,
        percent(e.bytes_read, e.bytes_total)
    );
    for r in &e.reasons {
        let _ = writeln!(s, "- {r}");
    }
    s
}

/// `part` as a percentage of `whole` (0 for an empty whole).
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The scan counters as JSON.
pub fn explain_json(run: &QueryRun) -> Value {
    let e = &run.explain;
    json!({
        "files_total": e.files_total,
        "files_read": e.files_read,
        "files_skipped": e.files_skipped,
        "bytes_total": e.bytes_total,
        "bytes_read": e.bytes_read,
        "row_groups_total": e.row_groups_total,
        "row_groups_skipped": e.row_groups_skipped,
        "rows_read": e.rows_returned,
        "rows_matched": run.matched_rows,
        "window": run.window.map(|w| [w.min_x, w.min_y, w.max_x, w.max_y]),
        "elapsed_ms": run.elapsed.as_secs_f64() * 1e3,
        "reasons": e.reasons,
    })
}

/// Tab-separated rows with a header (geometry as WKT), and the same rows as JSON objects.
fn render_rows(table: &Table, batches: &[RecordBatch]) -> Result<(String, Vec<Value>)> {
    let mut text = String::new();
    let mut rows = Vec::new();
    let options = FormatOptions::default().with_null("NULL");
    for (i, batch) in batches.iter().enumerate() {
        let schema = batch.schema();
        if i == 0 {
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            let _ = writeln!(text, "{}", names.join("\t"));
        }
        let geo: Vec<bool> = schema
            .fields()
            .iter()
            .map(|f| table.geo_columns().iter().any(|g| &g.name == f.name()))
            .collect();
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        for row in 0..batch.num_rows() {
            let mut cells = Vec::with_capacity(batch.num_columns());
            for (c, f) in formatters.iter().enumerate() {
                cells.push(if geo[c] {
                    match geometry_at(batch.column(c).as_ref(), row)? {
                        Some(g) => g.wkt_string(),
                        None if batch.column(c).is_null(row) => "NULL".into(),
                        None => "POINT EMPTY".into(),
                    }
                } else {
                    f.value(row).to_string()
                });
            }
            let _ = writeln!(text, "{}", cells.join("\t"));
            let object: serde_json::Map<String, Value> = schema
                .fields()
                .iter()
                .zip(cells)
                .map(|(f, v)| (f.name().clone(), Value::String(v)))
                .collect();
            rows.push(Value::Object(object));
        }
    }
    if rows.is_empty() {
        text.push_str("(no rows)\n");
    }
    Ok((text, rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_at_line_ending_semicolons_only() {
        let text = "SHOW CREATE TABLE a.b;\n  DESCRIBE a.b ;  \nSELECT * FROM a.b WHERE s = 'x;y'";
        let parts = split_statements(text);
        assert_eq!(parts.len(), 3, "{parts:?}");
        assert!(parts[2].contains("'x;y'"));
        assert!(split_statements("  ;\n").is_empty());
    }
}
