//! `geoberg demo`: what geoberg does, in one command.
//!
//! Skewed synthetic points (`geoberg-bench-data`'s cities model, EPSG:4326) arrive in id order
//! and are appended in many commits, so every data file spans the whole map. A ~1% window query
//! then reads nearly every file. `CREATE SPATIAL INDEX` rewrites the table in Hilbert order;
//! the same query then reads a few files. Both layouts are drawn as SVG.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{Array, RecordBatch};
use arrow_schema::{Field, Schema};
use geoberg_bench_data::{
    DatasetModel, Distribution, GenerateOptions, GeometryEncoding, RowFormat,
};
use geoberg_datafusion::{BlockingSession, PruningSummary};
use geoberg_geostats::{BBox, bbox_of_wkb};
use geoberg_pruning::FileBounds;
use geoberg_sql::Statement;
use geoberg_table::{SRID_FIELD_METADATA, Table, TableIdent};
use serde_json::{Value, json};

use crate::args::{DemoArgs, GlobalArgs};
use crate::context::{Access, Context, geo_column};
use crate::error::{CliError, Result};
use crate::files::{extent, file_bounds, overlap_depth};
use crate::index;
use crate::svg::LayoutPicture;

const NAMESPACE: &str = "demo";
const TABLE: &str = "points";
const CREATE: &str = "CREATE TABLE demo.points (id bigint NOT NULL, arrival_ts timestamp NOT NULL, \
                      state string NOT NULL, geom geometry(4326))";
/// Rows per generated batch.
const BATCH_ROWS: usize = 16_384;
/// Points drawn in each picture.
const DRAWN_POINTS: usize = 3_000;
/// Points kept to find the densest area for the query window.
const DENSITY_SAMPLE: u64 = 50_000;
/// Hilbert precision of the index (bits per axis).
const PRECISION: u8 = 16;

/// One measured query (through the SQL engine) with the layout it ran on.
struct Measured {
    /// The count the query returned.
    matched_rows: u64,
    /// What the scan read and skipped.
    scan: PruningSummary,
    /// Wall time of the statement, planning included.
    elapsed: Duration,
    files: Vec<FileBounds>,
}

/// Runs the demo.
pub fn run(global: &GlobalArgs, args: &DemoArgs) -> Result<()> {
    if args.rows == 0 || args.files == 0 || args.files > args.rows {
        return Err(CliError::invalid(
            "--rows/--files",
            format!("{}/{}", args.rows, args.files),
            "need at least one row per file, e.g. --rows 4000000 --files 64",
        ));
    }
    let ctx = Context::open(global, Access::Create)?;
    let out = ctx.output;
    let svg_dir = match &args.svg_dir {
        Some(d) => crate::context::absolute(d)?,
        None => match &ctx.local_warehouse {
            Some(dir) => dir.clone(),
            None => crate::context::absolute(std::path::Path::new("."))?,
        },
    };
    let ident = TableIdent::new(NAMESPACE, TABLE)?;
    replace_previous_demo(&ctx, &ident)?;

    out.note(format!("warehouse {}", ctx.warehouse));
    out.note(format!("1. {CREATE}"));
    let session = BlockingSession::new(ctx.dyn_catalog(), &ctx.catalog_name)?;
    session.execute(CREATE)?;
    let table = Table::load(ctx.dyn_catalog(), &ident)?;

    out.note(format!(
        "2. appending {} skewed points (200 cities, seed {}) in arrival order, {} commits",
        args.rows, args.seed, args.files
    ));
    let start = Instant::now();
    let (table, sample) = load_points(&ctx, table, args)?;
    let load_time = start.elapsed();
    out.note(format!(
        "   {} rows in {} files in {:.1} s",
        args.rows,
        args.files,
        load_time.as_secs_f64()
    ));

    let column = geo_column(&table, Some("geom"))?;
    let before_files = file_bounds(&table, &column)?;
    let data_extent = extent(&before_files).ok_or_else(|| {
        CliError::invalid(
            "demo table",
            &ident,
            "its files carry no geometry bounds; the table crate did not write them",
        )
    })?;
    let window = densest_window(&sample, &data_extent);
    let select = format!(
        "SELECT count(*) FROM demo.points WHERE ST_Intersects(geom, ST_MakeEnvelope({}, {}, {}, {}, 4326))",
        window.min_x, window.min_y, window.max_x, window.max_y
    );
    out.note(format!("3. {select}"));
    let before = measure(&session, &select, before_files)?;
    out.note(indent(&render_scan(&before.scan)));
    out.note(format!(
        "   {} rows match, {:.1} ms",
        before.matched_rows,
        ms(before.elapsed)
    ));
    let before_svg = svg_dir.join("before.svg");
    write_picture(
        &before_svg,
        "before: arrival order",
        &before,
        data_extent,
        window,
        &sample,
    )?;

    // As many files as the arrival-order table had, so the two read the same way.
    let index_sql = format!(
        "CREATE SPATIAL INDEX FOR demo.points USING hilbert(geom, {PRECISION}) \
         OPTIONS map('target-file-count', '{}')",
        args.files
    );
    out.note(format!("4. {index_sql}"));
    let Statement::Rewrite(rewrite) = geoberg_sql::parse(&index_sql)? else {
        unreachable!("a CREATE SPATIAL INDEX statement")
    };
    let bar = out.bytes_bar("clustering");
    let (table, summary) = index::rewrite(&ctx, &rewrite, &bar)?;
    out.note(format!(
        "   {} files rewritten into {} in {:.1} s",
        summary.report.rewritten_data_files_count,
        summary.report.added_data_files_count,
        summary.elapsed.as_secs_f64()
    ));
    out.note(format!("5. {select}"));
    let after = measure(&session, &select, file_bounds(&table, &column)?)?;
    out.note(indent(&render_scan(&after.scan)));
    if after.matched_rows != before.matched_rows {
        return Err(CliError::invalid(
            "rewrite result",
            format!(
                "{} rows before, {} after",
                before.matched_rows, after.matched_rows
            ),
            "the rewrite lost or duplicated rows: this is a bug in geoberg-table, please report it",
        ));
    }
    let after_svg = svg_dir.join("after.svg");
    write_picture(
        &after_svg,
        "after: CREATE SPATIAL INDEX",
        &after,
        data_extent,
        window,
        &sample,
    )?;
    let report = json!({
        "warehouse": ctx.warehouse,
        "table": ident.to_string(),
        "rows": args.rows,
        "load_ms": ms(load_time),
        "query": select,
        "before": measured_json(&before),
        "index": summary.to_json(),
        "after": measured_json(&after),
        "before_svg": before_svg,
        "after_svg": after_svg,
    });
    out.emit(
        format!(
            "{}\npictures: {} {}",
            comparison(&before, &after),
            before_svg.display(),
            after_svg.display()
        ),
        report,
    );
    Ok(())
}

/// Drops the demo table of an earlier run and deletes its folder, so that reruns start clean.
fn replace_previous_demo(ctx: &Context, ident: &TableIdent) -> Result<()> {
    if ctx.catalog.metadata_location(ident)?.is_some() {
        Table::load(ctx.dyn_catalog(), ident)?.drop_table(true)?;
        ctx.output
            .note(format!("replacing {ident} from an earlier demo run"));
    }
    // Files of an earlier run whose catalog entry is gone.
    let location = format!("{}/{NAMESPACE}/{TABLE}", ctx.warehouse);
    let storage = ctx.catalog.storage();
    for f in storage.list(&location)? {
        storage.delete(&f.location)?;
    }
    Ok(())
}

/// Generates and appends the rows, one commit (one data file) per `rows / files` rows; returns
/// the table and a sample of the points.
fn load_points(
    ctx: &Context,
    mut table: Table,
    args: &DemoArgs,
) -> Result<(Table, Vec<(f64, f64)>)> {
    let model = DatasetModel::builder(Distribution::CITIES)
        .seed(args.seed)
        .build()?;
    let format = RowFormat {
        encoding: GeometryEncoding::Wkb,
        bbox_columns: false,
        row_width_bytes: 0,
        payload_columns: 0,
    };
    let stride = (args.rows / DENSITY_SAMPLE).max(1);
    let mut sample = Vec::new();
    let bar = ctx.output.bar(args.rows, "appending", "rows");
    let mut start_row = 0;
    for i in 0..args.files {
        let end = args.rows * (i + 1) / args.files;
        let options = GenerateOptions {
            start_row,
            rows: end - start_row,
            batch_size: BATCH_ROWS,
            format,
        };
        let batches = model
            .batches(options)?
            .map(|b| b.map_err(CliError::from).and_then(|b| as_table_batch(&b)))
            .collect::<Result<Vec<_>>>()?;
        for b in &batches {
            sample_points(b, stride, &mut sample)?;
        }
        table = table.append(&batches)?.0;
        bar.inc(end - start_row);
        start_row = end;
    }
    bar.finish_and_clear();
    Ok((table, sample))
}

/// Renames `geometry` to `geom` and labels its WKB SRID 4326 for the append's CRS check.
fn as_table_batch(batch: &RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            if f.name() == "geometry" {
                Field::new("geom", f.data_type().clone(), f.is_nullable())
                    .with_metadata([(SRID_FIELD_METADATA.to_string(), "4326".to_string())].into())
            } else {
                f.as_ref().clone()
            }
        })
        .collect();
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        batch.columns().to_vec(),
    )?)
}

/// Every `stride`-th row's point (by id), for the density estimate and the pictures.
fn sample_points(batch: &RecordBatch, stride: u64, out: &mut Vec<(f64, f64)>) -> Result<()> {
    let ids = batch
        .column_by_name("id")
        .and_then(|c| c.as_any().downcast_ref::<arrow_array::Int64Array>())
        .ok_or_else(|| CliError::invalid("demo batch", "id", "expected an Int64 id column"))?;
    let geom = batch
        .column_by_name("geom")
        .and_then(|c| c.as_any().downcast_ref::<arrow_array::BinaryArray>())
        .ok_or_else(|| CliError::invalid("demo batch", "geom", "expected a binary geom column"))?;
    for row in 0..batch.num_rows() {
        if (ids.value(row) as u64).is_multiple_of(stride)
            && geom.is_valid(row)
            && let Some(b) = bbox_of_wkb(geom.value(row))?
        {
            out.push(b.center());
        }
    }
    Ok(())
}

/// A window of 10% × 10% of the extent (1% of its area) centred on the densest cell of a
/// 20 × 20 grid over the sample, kept inside the extent.
fn densest_window(sample: &[(f64, f64)], extent: &BBox) -> BBox {
    const GRID: usize = 20;
    let (w, h) = (extent.max_x - extent.min_x, extent.max_y - extent.min_y);
    let cell =
        |v: f64, min: f64, span: f64| (((v - min) / span * GRID as f64) as usize).min(GRID - 1);
    let mut counts = [[0u32; GRID]; GRID];
    for &(x, y) in sample {
        counts[cell(y, extent.min_y, h)][cell(x, extent.min_x, w)] += 1;
    }
    let (mut best, mut at) = (0, (GRID / 2, GRID / 2));
    for (r, row) in counts.iter().enumerate() {
        for (c, n) in row.iter().enumerate() {
            if *n > best {
                best = *n;
                at = (r, c);
            }
        }
    }
    let cx = extent.min_x + (at.1 as f64 + 0.5) * w / GRID as f64;
    let cy = extent.min_y + (at.0 as f64 + 0.5) * h / GRID as f64;
    let (hw, hh) = (w * 0.05, h * 0.05);
    let min_x = (cx - hw).clamp(extent.min_x, extent.max_x - 2.0 * hw);
    let min_y = (cy - hh).clamp(extent.min_y, extent.max_y - 2.0 * hh);
    // Rounded so the printed statement reads well; still inside the extent.
    let round = |v: f64| (v * 1e3).round() / 1e3;
    BBox::new(
        round(min_x),
        round(min_y),
        round(min_x + 2.0 * hw),
        round(min_y + 2.0 * hh),
    )
}

/// Runs the `count(*)` query `select` through the engine.
fn measure(session: &BlockingSession, select: &str, files: Vec<FileBounds>) -> Result<Measured> {
    let start = Instant::now();
    let output = session.execute(select)?.pop();
    let elapsed = start.elapsed();
    let output =
        output.ok_or_else(|| CliError::invalid("demo query", select, "returned nothing"))?;
    let count = output
        .batches
        .iter()
        .find(|b| b.num_rows() > 0)
        .and_then(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<arrow_array::Int64Array>()
        })
        .map(|c| c.value(0))
        .ok_or_else(|| CliError::invalid("demo query", select, "expected one count"))?;
    let scan = output
        .scans
        .into_iter()
        .next()
        .ok_or_else(|| CliError::invalid("demo query", select, "scanned no geoberg table"))?
        .summary;
    Ok(Measured {
        matched_rows: u64::try_from(count).unwrap_or(0),
        scan,
        elapsed,
        files,
    })
}

/// What the scan read, as the demo prints it.
fn render_scan(s: &PruningSummary) -> String {
    let bytes_read = s.bytes_read.saturating_sub(s.row_group_bytes_skipped);
    let mut text = format!(
        "files: read {} of {} ({:.1}%), skipped {}\nrow groups: read {} of {}\nbytes: read {} \
         of {} ({:.1}%)\n",
        s.files_read,
        s.files_total,
        percent(s.files_read as u64, s.files_total as u64),
        s.files_skipped_spatial + s.files_skipped_columns,
        s.row_groups_total - s.row_groups_skipped,
        s.row_groups_total,
        bytes_read,
        s.bytes_total,
        percent(bytes_read, s.bytes_total)
    );
    for r in &s.reasons {
        text.push_str(&format!("- {r}\n"));
    }
    text
}

fn measured_json(m: &Measured) -> Value {
    let s = &m.scan;
    json!({
        "files_total": s.files_total,
        "files_read": s.files_read,
        "files_skipped": s.files_skipped_spatial + s.files_skipped_columns,
        "bytes_total": s.bytes_total,
        "bytes_read": s.bytes_read.saturating_sub(s.row_group_bytes_skipped),
        "row_groups_total": s.row_groups_total,
        "row_groups_skipped": s.row_groups_skipped,
        "rows_matched": m.matched_rows,
        "elapsed_ms": ms(m.elapsed),
        "reasons": s.reasons,
        "overlap_depth": overlap_depth(&m.files),
    })
}

/// `part` as a percentage of `whole` (0 for an empty whole).
fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn write_picture(
    path: &Path,
    title: &str,
    m: &Measured,
    extent: BBox,
    window: BBox,
    sample: &[(f64, f64)],
) -> Result<PathBuf> {
    let step = (sample.len() / DRAWN_POINTS).max(1);
    let points: Vec<(f64, f64)> = sample.iter().step_by(step).copied().collect();
    let svg = LayoutPicture {
        title: format!(
            "{title}: the red window query reads {} files",
            m.scan.files_read
        ),
        files: &m.files,
        extent,
        window: Some(window),
        points: &points,
    }
    .render();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| CliError::io(dir, e))?;
    }
    std::fs::write(path, svg).map_err(|e| CliError::io(path, e))?;
    Ok(path.to_path_buf())
}

/// The before/after table.
fn comparison(before: &Measured, after: &Measured) -> String {
    let (b, a) = (&measured_json(before), &measured_json(after));
    let n = |v: &Value, k: &str| v[k].as_u64().unwrap_or(0);
    let rows = [
        (
            "files read".to_string(),
            format!("{} / {}", n(b, "files_read"), n(b, "files_total")),
            format!("{} / {}", n(a, "files_read"), n(a, "files_total")),
        ),
        (
            "bytes read".to_string(),
            format!(
                "{} ({:.1}%)",
                mib(n(b, "bytes_read")),
                percent(n(b, "bytes_read"), n(b, "bytes_total"))
            ),
            format!(
                "{} ({:.1}%)",
                mib(n(a, "bytes_read")),
                percent(n(a, "bytes_read"), n(a, "bytes_total"))
            ),
        ),
        (
            "rows matched".to_string(),
            before.matched_rows.to_string(),
            after.matched_rows.to_string(),
        ),
        (
            "query time".to_string(),
            format!("{:.1} ms", ms(before.elapsed)),
            format!("{:.1} ms", ms(after.elapsed)),
        ),
        (
            "file overlap depth".to_string(),
            format!("{:.1}", overlap_depth(&before.files)),
            format!("{:.1}", overlap_depth(&after.files)),
        ),
    ];
    let mut s = format!("\n{:<20} {:>22} {:>22}\n", "", "before", "after index");
    for (name, b, a) in rows {
        s.push_str(&format!("{name:<20} {b:>22} {a:>22}\n"));
    }
    s
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("   {l}\n"))
        .collect::<String>()
        .trim_end()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_is_one_percent_and_on_the_dense_spot() {
        let extent = BBox::new(-180.0, -90.0, 180.0, 90.0);
        let mut sample = vec![(100.0, 40.0); 50];
        sample.push((-100.0, -40.0));
        let w = densest_window(&sample, &extent);
        let area = (w.max_x - w.min_x) * (w.max_y - w.min_y);
        assert!((area / (360.0 * 180.0) - 0.01).abs() < 1e-9);
        assert!(w.contains_point(100.0, 40.0), "{w:?}");
        // Near the edge the window slides inside the extent.
        let w = densest_window(&[(179.9, 89.9)], &extent);
        assert!(w.max_x <= 180.0 && w.max_y <= 90.0 && w.contains_point(179.9, 89.9));
    }
}
