//! `geoberg ingest`: seed 003's stream of records into a table, in micro-batch commits:
//! newline-delimited JSON ([`geoberg_table::Table::ingest`]) or an Arrow IPC stream
//! (`--format arrow`, [`geoberg_table::Table::ingest_arrow`]); Ctrl-C commits what is buffered.

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

/// The input format of `geoberg ingest` (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    /// Newline-delimited JSON, one record a line.
    Json,
    /// An Arrow IPC stream (or file), one record a row.
    Arrow,
}

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
    let arrow = args.format == InputFormat::Arrow;
    let report = |p: &IngestProgress| {
        if quiet {
            return;
        }
        let through = match arrow {
            true => format!("record {}", p.committed_through_record),
            false => format!("line {}", p.committed_through_line),
        };
        eprintln!(
            "committed {} rows in {} commits through {through} ({} filtered, {} rejected)",
            p.rows_committed, p.commits, p.rows_filtered, p.rows_rejected
        );
    };
    let input: Box<dyn std::io::Read + Send> = match &args.input {
        Some(path) => Box::new(std::fs::File::open(path).map_err(|e| {
            CliError::invalid("--input", path.display(), format!("cannot open it ({e})"))
        })?),
        None => Box::new(std::io::stdin()),
    };
    let (table, p) = match args.format {
        InputFormat::Json => {
            table.ingest(BufReader::new(input), &mut rejects, &options, &stop, report)?
        }
        InputFormat::Arrow => table.ingest_arrow(input, &mut rejects, &options, &stop, report)?,
    };
    let read = match arrow {
        true => format!("{} records", p.records),
        false => format!("{} lines", p.lines),
    };
    let text = format!(
        "ingested {} rows into {} in {} commits ({read}, {} filtered out, {} rejected into {})\n",
        p.rows_committed,
        table.ident(),
        p.commits,
        p.rows_filtered,
        p.rows_rejected,
        args.rejects.display()
    );
    let mut value = json!({
        "table": table.ident().to_string(),
        "format": if arrow { "arrow" } else { "json" },
        "rows_committed": p.rows_committed,
        "rows_filtered": p.rows_filtered,
        "rows_rejected": p.rows_rejected,
        "commits": p.commits,
        "snapshot_id": p.snapshot_id,
        "rejects": args.rejects.display().to_string(),
    });
    // The position in the input's own unit, which its replay flag takes.
    if arrow {
        value["records"] = json!(p.records);
        value["committed_through_record"] = json!(p.committed_through_record);
    } else {
        value["lines"] = json!(p.lines);
        value["committed_through_line"] = json!(p.committed_through_line);
    }
    ctx.output.emit(text, value);
    Ok(())
}

fn options(args: &IngestArgs) -> Result<IngestOptions> {
    match args.format {
        InputFormat::Arrow if args.skip_lines > 0 => {
            return Err(CliError::invalid(
                "--skip-lines",
                args.skip_lines,
                "it counts JSON lines; replay an Arrow IPC stream with --skip-records N \
                 (N = committed_through_record)",
            ));
        }
        InputFormat::Json if args.skip_records > 0 => {
            return Err(CliError::invalid(
                "--skip-records",
                args.skip_records,
                "it counts Arrow IPC records; replay JSON with --skip-lines N \
                 (N = committed_through_line), or pass --format arrow",
            ));
        }
        _ => {}
    }
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
        skip_records: args.skip_records,
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
