//! `geoberg ingest`: seed 003's stream of JSON messages into a table, in micro-batch commits
//! ([`geoberg_table::Table::ingest`]); Ctrl-C commits what is buffered.

use std::collections::BTreeMap;
use std::io::{BufReader, BufWriter};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use geoberg_table::{IngestOptions, IngestProgress};
use serde_json::json;

use crate::args::{GlobalArgs, IngestArgs};
use crate::context::{Access, Context};
use crate::error::{CliError, Result};
use crate::layout::parse_window;

/// Runs the ingest until the input ends (or, with `--follow`, until Ctrl-C).
pub fn run(global: &GlobalArgs, args: &IngestArgs) -> Result<()> {
    let options = options(args)?;
    let ctx = Context::open(global, Access::Existing)?;
    let table = ctx.load(&args.table)?;
    let rejects_file = std::fs::File::create(&args.rejects).map_err(|e| {
        CliError::invalid(
            "--rejects",
            args.rejects.display(),
            format!("cannot create it ({e}); name a writable file"),
        )
    })?;
    let mut rejects = BufWriter::new(rejects_file);
    let stop = ctrl_c_flag();
    let quiet = global.json;
    let report = |p: &IngestProgress| {
        if !quiet {
            eprintln!(
                "committed {} rows in {} commits through line {} ({} filtered, {} rejected)",
                p.rows_committed,
                p.commits,
                p.committed_through_line,
                p.rows_filtered,
                p.rows_rejected
            );
        }
    };
    let result = match &args.input {
        Some(path) => {
            let file = std::fs::File::open(path).map_err(|e| {
                CliError::invalid("--input", path.display(), format!("cannot open it ({e})"))
            })?;
            table.ingest(BufReader::new(file), &mut rejects, &options, &stop, report)
        }
        None => table.ingest(
            BufReader::new(std::io::stdin()),
            &mut rejects,
            &options,
            &stop,
            report,
        ),
    };
    let (table, p) = result?;
    let text = format!(
        "ingested {} rows into {} in {} commits ({} lines, {} filtered out, {} rejected into {})\n",
        p.rows_committed,
        table.ident(),
        p.commits,
        p.lines,
        p.rows_filtered,
        p.rows_rejected,
        args.rejects.display()
    );
    ctx.output.emit(
        text,
        json!({
            "table": table.ident().to_string(),
            "lines": p.lines,
            "rows_committed": p.rows_committed,
            "rows_filtered": p.rows_filtered,
            "rows_rejected": p.rows_rejected,
            "commits": p.commits,
            "committed_through_line": p.committed_through_line,
            "snapshot_id": p.snapshot_id,
            "rejects": args.rejects.display().to_string(),
        }),
    );
    Ok(())
}

fn options(args: &IngestArgs) -> Result<IngestOptions> {
    if args.batch_rows == 0 {
        return Err(CliError::invalid("--batch-rows", 0, "at least 1"));
    }
    if !(args.batch_seconds.is_finite() && args.batch_seconds > 0.0) {
        return Err(CliError::invalid(
            "--batch-seconds",
            args.batch_seconds,
            "a positive number of seconds, e.g. 1 or 0.5",
        ));
    }
    let mut columns = BTreeMap::new();
    for m in &args.maps {
        let (column, path) = m.split_once('=').ok_or_else(|| {
            CliError::invalid(
                "--map",
                m,
                "write column=dotted.path, e.g. unit=velocity.unitOfMeasure",
            )
        })?;
        columns.insert(column.trim().to_string(), path.trim().to_string());
    }
    let within = args
        .within
        .as_deref()
        .map(|text| {
            let shape: wkt::Wkt<f64> = text.parse().map_err(|e| {
                CliError::invalid(
                    "--within",
                    text,
                    format!("not WKT ({e}); e.g. POLYGON ((...))"),
                )
            })?;
            geo_types::Geometry::try_from(shape).map_err(|e| {
                CliError::invalid(
                    "--within",
                    text,
                    format!("not a shape geoberg can test ({e})"),
                )
            })
        })
        .transpose()?;
    Ok(IngestOptions {
        geometry_column: args.geometry_column.clone(),
        lon: args.lon.clone(),
        lat: args.lat.clone(),
        crs: (!args.crs_field.is_empty()).then(|| args.crs_field.clone()),
        columns,
        envelope: args.envelope.as_deref().map(parse_window).transpose()?,
        within,
        batch_rows: args.batch_rows,
        batch_interval: Duration::from_secs_f64(args.batch_seconds),
        follow: args.follow,
        skip_lines: args.skip_lines,
    })
}

/// A flag that the first Ctrl-C sets (the ingest then commits what it holds and returns).
fn ctrl_c_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let set = flag.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build();
        if let Ok(runtime) = runtime
            && runtime.block_on(tokio::signal::ctrl_c()).is_ok()
        {
            set.store(true, Ordering::Relaxed);
        }
    });
    flag
}
