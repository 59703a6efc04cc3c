//! `geoberg bbox-columns add` and `geoberg bbox-columns backfill`: seed 002's recipe through
//! `Table::add_bbox_columns` and `Table::backfill_bbox_columns`, with a progress bar over the
//! partitions and the before/after files-read counts that are the recipe's evidence.

use geoberg_table::{AddBBoxColumnsReport, BackfillReport, Table};
use serde_json::{Value, json};

use crate::args::{BBoxAddArgs, BBoxBackfillArgs, GlobalArgs};
use crate::context::{Access, Context, geo_column};
use crate::error::{CliError, Result};
use crate::layout::parse_window;

/// Adds the four bbox columns before the geometry and sets their properties (no rewrite).
pub fn add(global: &GlobalArgs, args: &BBoxAddArgs) -> Result<()> {
    let names = args.names.as_deref().map(parse_names).transpose()?;
    let ctx = Context::open(global, Access::Existing)?;
    let table = ctx.load(&args.table)?;
    let geometry = geo_column(&table, args.column.as_deref())?.name;
    let (table, report) = table.add_bbox_columns(&geometry, names)?;
    ctx.output.emit(
        format!("{}: {report}", table.ident()),
        add_json(&table, &report),
    );
    Ok(())
}

/// Backfills the bbox columns partition by partition and reports the files read.
pub fn backfill(global: &GlobalArgs, args: &BBoxBackfillArgs) -> Result<()> {
    let window = args.window.as_deref().map(parse_window).transpose()?;
    let ctx = Context::open(global, Access::Existing)?;
    let table = ctx.load(&args.table)?;
    let geometry = match &args.column {
        Some(c) => c.clone(),
        // The column the bbox columns derive from; a table without any gets the table
        // crate's error, which names `bbox-columns add`.
        None => match table.derived_bbox_columns()? {
            Some((source, _)) => source,
            None => geo_column(&table, None)?.name,
        },
    };
    let bar = ctx.output.bar(0, "backfill", "partitions");
    let mut run = table.backfill_bbox_columns(&geometry);
    if let Some(sql) = &args.where_sql {
        run = run.where_sql(sql.clone());
    }
    if let Some(w) = window {
        run = run.window(w);
    }
    let progress = bar.clone();
    let result = run
        .on_partition(move |done, total| {
            progress.set_length(total as u64);
            progress.set_position(done as u64);
        })
        .execute();
    bar.finish_and_clear();
    let (table, report) = result?;
    ctx.output.emit(
        format!("{}: {report}", table.ident()),
        backfill_json(&table, &geometry, &report),
    );
    Ok(())
}

/// `--names a,b,c,d`: four names, min x, min y, max x, max y. The table checks that they are
/// distinct plain names other than the geometry's.
fn parse_names(text: &str) -> Result<[String; 4]> {
    let names: Vec<String> = text.split(',').map(|n| n.trim().to_string()).collect();
    match <[String; 4]>::try_from(names) {
        Ok(names) if names.iter().all(|n| !n.is_empty()) => Ok(names),
        _ => Err(CliError::invalid(
            "--names",
            text,
            "four comma-separated column names, min x, min y, max x, max y, e.g. \
             bbox_min_x,bbox_min_y,bbox_max_x,bbox_max_y",
        )),
    }
}

fn add_json(table: &Table, r: &AddBBoxColumnsReport) -> Value {
    json!({
        "table": table.ident().to_string(),
        "geometry": r.geometry,
        "columns": r.columns,
        "added": r.added,
        "properties": r
            .properties
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect::<serde_json::Map<_, _>>(),
    })
}

fn backfill_json(table: &Table, geometry: &str, r: &BackfillReport) -> Value {
    let w = &r.window;
    json!({
        "table": table.ident().to_string(),
        "geometry": geometry,
        "partitions_total": r.partitions_total,
        "partitions_backfilled": r.partitions_backfilled,
        "partitions_skipped": r.partitions_skipped,
        "rewritten_data_files_count": r.rewritten_data_files_count,
        "added_data_files_count": r.added_data_files_count,
        "rewritten_records_count": r.rewritten_records_count,
        "added_bytes_count": r.added_bytes_count,
        "snapshot_ids": r.snapshot_ids,
        "window": [w.min_x, w.min_y, w.max_x, w.max_y],
        "files_total": r.files_total,
        "files_read_before": r.files_read_before,
        "files_read_after": r.files_read_after,
        "elapsed_ms": r.elapsed.as_secs_f64() * 1e3,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_bad_ones_say_why() {
        assert_eq!(
            parse_names("a, b,c ,d").unwrap(),
            ["a", "b", "c", "d"].map(String::from)
        );
        for bad in ["a,b,c", "a,b,c,d,e", "a,,c,d", "", "a;b;c;d"] {
            let e = parse_names(bad).unwrap_err().to_string();
            assert!(e.contains("--names") && e.contains("four"), "{bad}: {e}");
        }
    }
}
