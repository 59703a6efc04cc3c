//! `geoberg import`: a Parquet or GeoParquet file into a table, through
//! [`geoberg_table::import`] (which decides the column type from the file and commits once);
//! this is the command-line shell around it: arguments, the catalog, progress and the report.

use std::time::Instant;

use geoberg_table::{DataType, ImportOptions, ImportSource, Storage, TableIdent};
use serde_json::json;

use crate::args::{GlobalArgs, ImportArgs};
use crate::context::{Access, Context};
use crate::error::{CliError, Result};

/// Runs the import.
pub fn run(global: &GlobalArgs, args: &ImportArgs) -> Result<()> {
    if args.rows_per_file == 0 {
        return Err(CliError::invalid(
            "--rows-per-file",
            0,
            "at least 1, e.g. 1000000",
        ));
    }
    let ident = TableIdent::parse(&args.table)?;
    // Locations are URIs without `..`: resolve a local path first (a missing file is named).
    let path = std::fs::canonicalize(&args.file).map_err(|e| CliError::io(&args.file, e))?;
    let location = path.to_string_lossy().into_owned();
    let mut options = ImportOptions::default().rows_per_file(args.rows_per_file);
    if let Some(c) = &args.geometry_column {
        options = options.geometry_column(c);
    }
    if let Some(s) = args.srid {
        options = options.srid(s);
    }
    // Decided before the catalog is opened: a file that cannot become a table writes nothing.
    let source = ImportSource::open(&Storage::new(), &location, &options)?;
    let ctx = Context::open(global, Access::Create)?;
    let out = ctx.output;
    let start = Instant::now();
    let bar = out.bar(source.rows(), "importing", "rows");
    let report =
        source.import_with_progress(ctx.dyn_catalog(), &ident, &|rows| bar.set_position(rows));
    bar.finish_and_clear();
    let report = report?;
    let mut text = format!(
        "imported {} rows from {} into {} ({} files{}, one commit) in {:.1} s; {} is {}",
        report.rows,
        args.file.display(),
        report.table.ident(),
        report.data_files,
        if report.created {
            ", table created"
        } else {
            ""
        },
        start.elapsed().as_secs_f64(),
        report.geometry_column,
        DataType::Geo(report.column_type.clone()),
    );
    for note in &report.notes {
        text.push_str("\n- ");
        text.push_str(note);
    }
    out.emit(
        text,
        json!({
            "table": report.table.ident().to_string(),
            "rows": report.rows,
            "files": report.data_files,
            "bytes": report.bytes,
            "created": report.created,
            "geometry_column": report.geometry_column,
            "column_type": DataType::Geo(report.column_type.clone()).to_string(),
            "srid": report.column_type.crs().and_then(geoberg_table::Crs::srid),
            "notes": report.notes,
        }),
    );
    Ok(())
}
