//! `geoberg import`: a Parquet or GeoParquet file into a table, through
//! [`geoberg_table::import`] (which decides the geometry columns and their types from the file
//! and commits once); this is the command-line shell around it: arguments, the catalog,
//! progress and the report.

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
    for spec in &args.geometry_column {
        let (column, srid) = parse_geometry_column(spec)?;
        options = options.geometry_column(column);
        if let Some(s) = srid {
            match options.column_srids.get(column) {
                Some(&other) if other != s => {
                    return Err(CliError::invalid(
                        "--geometry-column",
                        spec,
                        format!("{column} is also given SRID {other}: give each column one SRID"),
                    ));
                }
                _ => options = options.column_srid(column, s),
            }
        }
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
    let geometry = if report.geometry_columns.is_empty() {
        "no geometry column".to_string()
    } else {
        report
            .geometry_columns
            .iter()
            .map(|(c, t)| format!("{c} is {}", DataType::Geo(t.clone())))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = format!(
        "imported {} rows from {} into {} ({} files{}, one commit) in {:.1} s; {geometry}",
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
    );
    for note in &report.notes {
        text.push_str("\n- ");
        text.push_str(note);
    }
    let columns: Vec<serde_json::Value> = report
        .geometry_columns
        .iter()
        .map(|(c, t)| {
            json!({
                "name": c,
                "column_type": DataType::Geo(t.clone()).to_string(),
                "srid": t.crs().and_then(geoberg_table::Crs::srid),
            })
        })
        .collect();
    let first = columns.first();
    out.emit(
        text,
        json!({
            "table": report.table.ident().to_string(),
            "rows": report.rows,
            "files": report.data_files,
            "bytes": report.bytes,
            "created": report.created,
            "geometry_columns": columns,
            // The first geometry column, as before several were imported (null: none).
            "geometry_column": first.map(|c| &c["name"]),
            "column_type": first.map(|c| &c["column_type"]),
            "srid": first.map(|c| &c["srid"]),
            "notes": report.notes,
        }),
    );
    Ok(())
}

/// `COLUMN` or `COLUMN:SRID` of `--geometry-column` (a name whose text after its last `:` is
/// not an integer is a name).
fn parse_geometry_column(spec: &str) -> Result<(&str, Option<i32>)> {
    let spec = spec.trim();
    let (column, srid) = match spec.rsplit_once(':') {
        Some((c, s)) => match s.trim().parse::<i32>() {
            Ok(srid) => (c.trim(), Some(srid)),
            Err(_) => (spec, None),
        },
        None => (spec, None),
    };
    if column.is_empty() {
        return Err(CliError::invalid(
            "--geometry-column",
            spec,
            "a column name, optionally with its SRID: --geometry-column pickup,dropoff:3857",
        ));
    }
    Ok((column, srid))
}

#[cfg(test)]
mod tests {
    use super::parse_geometry_column;

    #[test]
    fn a_geometry_column_may_carry_its_srid() {
        assert_eq!(parse_geometry_column("pickup").unwrap(), ("pickup", None));
        assert_eq!(
            parse_geometry_column(" dropoff:3857").unwrap(),
            ("dropoff", Some(3857))
        );
        // Text after the last `:` that is no integer belongs to the name.
        assert_eq!(parse_geometry_column("a:b").unwrap(), ("a:b", None));
        assert!(parse_geometry_column(":4326").is_err());
        assert!(parse_geometry_column("").is_err());
    }
}
