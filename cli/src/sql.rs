//! `geoberg sql`: every statement through [`geoberg_datafusion::BlockingSession`], geoberg's
//! table operations by the table crate and everything else by SedonaDB on DataFusion.
//! Results print as a table (DataFusion's pretty printer, geometry as WKT; a single text value
//! such as `SHOW CREATE TABLE`'s DDL as it is), or with `--json` as one object per statement
//! with its rows, notices and what each table scan read. With `--scheduler`, queries run on a
//! geoberg cluster (`geoberg_distributed`).

use std::io::Read;

use geoberg_datafusion::{BlockingSession, Route, StatementOutput, route, split_statements};
use geoberg_sql::Statement;
use serde_json::{Value, json};

use crate::args::{GlobalArgs, SqlArgs};
use crate::context::{Access, Context};
use crate::error::{CliError, Result};

/// Runs every statement of the input, in order, stopping at the first error. Every statement
/// is parsed before any runs, so a typo in statement 3 leaves statements 1-2 unapplied.
pub fn run(global: &GlobalArgs, args: &SqlArgs) -> Result<()> {
    let text = read_input(args)?;
    let statements = split_statements(&text);
    if statements.is_empty() {
        return Err(CliError::invalid(
            "input",
            text.trim(),
            "give a statement, e.g. geoberg sql \"SHOW CREATE TABLE db.t\"",
        ));
    }
    // Checked before the catalog is opened (and possibly created): a CREATE TABLE that
    // cannot succeed leaves no warehouse behind.
    let mut creates = false;
    for s in &statements {
        if let Route::Geoberg(parsed) = route(s)?
            && let Statement::CreateTable(request) = parsed.as_ref()
        {
            geoberg_table::CreateTable::from_request(request)?;
        }
        creates |= starts_with_create(s);
    }
    let access = match creates {
        true => Access::Create,
        false => Access::Existing,
    };
    let ctx = Context::open(global, access)?;
    let session = match &global.scheduler {
        None => BlockingSession::new(ctx.dyn_catalog(), &ctx.catalog_name)?,
        Some(scheduler) => cluster_session(scheduler, &ctx)?,
    };
    for output in session.execute(&text)? {
        print(&ctx, &output, args.timing)?;
    }
    Ok(())
}

/// A session whose queries run on the cluster behind `scheduler`.
#[cfg(feature = "cluster")]
fn cluster_session(scheduler: &str, ctx: &Context) -> Result<BlockingSession> {
    Ok(BlockingSession::from_async(|| {
        geoberg_distributed::connect(scheduler, ctx.dyn_catalog(), &ctx.catalog_name)
    })?)
}

#[cfg(not(feature = "cluster"))]
fn cluster_session(_: &str, _: &Context) -> Result<BlockingSession> {
    Err(CliError::ClusterNotBuilt)
}

fn read_input(args: &SqlArgs) -> Result<String> {
    Ok(match (&args.statement, &args.file) {
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
    })
}

/// Whether a statement is a `CREATE ...` (the only statements that may start a warehouse).
fn starts_with_create(statement: &str) -> bool {
    statement
        .split_whitespace()
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case("create"))
}

/// Prints one statement's result: its notices, then its rows (none for DDL), then with
/// `timing` its run time.
fn print(ctx: &Context, output: &StatementOutput, timing: bool) -> Result<()> {
    let out = ctx.output;
    let has_columns = output.batches.first().is_some_and(|b| b.num_columns() > 0);
    let mut text = String::new();
    for notice in &output.notices {
        text.push_str(notice);
        text.push('\n');
    }
    if has_columns {
        match single_text(&output.batches) {
            Some(value) => text.push_str(value.trim_end()),
            None => text.push_str(
                &geoberg_datafusion::pretty_format(&output.batches)
                    .map_err(geoberg_datafusion::Error::from)?,
            ),
        }
        text.push('\n');
    }
    let seconds = output.elapsed.as_secs_f64();
    if timing {
        text.push_str(&format!("Run Time: {seconds:.3} s\n"));
    }
    let scans: Vec<Value> = output
        .scans
        .iter()
        .map(|s| {
            let mut v = serde_json::to_value(&s.summary).unwrap_or(Value::Null);
            if let Some(map) = v.as_object_mut() {
                map.insert("table".into(), Value::String(s.table.clone()));
            }
            v
        })
        .collect();
    out.emit(
        text,
        json!({
            "statement": output.statement,
            "rows": geoberg_datafusion::json_rows(&output.batches)
                .map_err(geoberg_datafusion::Error::from)?,
            "notices": output.notices,
            "scans": scans,
            "seconds": seconds,
        }),
    );
    Ok(())
}

/// The value of a one-row, one-column text result that spans lines (a DDL statement, a
/// document), which a table border would only get in the way of copying.
fn single_text(batches: &[arrow_array::RecordBatch]) -> Option<&str> {
    use arrow_array::Array;
    let mut rows = batches.iter().filter(|b| b.num_rows() > 0);
    let batch = rows.next()?;
    if rows.next().is_some() || batch.num_rows() != 1 || batch.num_columns() != 1 {
        return None;
    }
    let column = batch
        .column(0)
        .as_any()
        .downcast_ref::<arrow_array::StringArray>()?;
    let value = (!column.is_null(0)).then(|| column.value(0))?;
    value.contains('\n').then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_create_statements_may_start_a_warehouse() {
        assert!(starts_with_create("  create table db.t (x int)"));
        assert!(starts_with_create(
            "CREATE SPATIAL INDEX FOR db.t USING hilbert(g, 8)"
        ));
        assert!(!starts_with_create("SELECT 'create'"));
        assert!(!starts_with_create(""));
    }
}
