//! `geoberg audit`: are the bounds pruning relies on true, and does pruning still work?
//!
//! Three checks (seed 002's audits and pruning assertion):
//! 1. every data file has bounds for the geometry column in the manifest (a file without them
//!    is read by every query), unless it holds only null or empty geometries (nothing to bound);
//! 2. every row's box lies inside its file's bounds (otherwise a scan skips matching rows), and
//!    materialised bbox columns match the geometry (`geoberg-geostats`'s null / empty / point
//!    policy audit); on a geography column rows are boxed on the sphere (great-circle edges,
//!    poles, the antimeridian) and compared as geography boxes (longitudes a circle);
//! 3. with `--window`, the window query reads at most `--max-fraction` of the files
//!    (`geoberg-pruning`'s `assert_pruning`), planned exactly as the table's scan plans it (on
//!    a geography column the window is the region on the sphere its box means, and
//!    `minx > maxx` crosses the antimeridian).

use std::fmt::Write as _;

use arrow_array::{Array, Float64Array, RecordBatch};
use geoberg_crs::ColumnType;
use geoberg_geostats::{
    AuditReport, BBox, audit, bbox_columns, geography_bbox_columns, geography_box_contains,
};
use geoberg_pruning::FileBounds;
use geoberg_table::{GeoColumn, Table};
use serde_json::json;

use crate::args::{AuditArgs, GlobalArgs};
use crate::context::{Access, Context, geo_column};
use crate::error::{CliError, Result};
use crate::files::file_bounds;
use crate::layout::parse_window;

/// Findings of the data pass over every file.
#[derive(Debug, Default)]
struct DataAudit {
    rows: u64,
    /// Rows whose box is not inside their file's manifest bounds.
    rows_outside_file_bounds: u64,
    /// Files with at least one such row.
    files_with_wrong_bounds: u64,
    /// Files with no located geometry (only null or empty values): nothing to bound.
    unlocated_files: std::collections::HashSet<String>,
    /// Files whose geometry could not be decoded, with the reason.
    undecodable_files: Vec<String>,
    /// The bbox-column policy audit, when the table has bbox columns.
    bbox_columns: Option<AuditReport>,
}

/// Runs the audit; fails (non-zero exit) when any check fails, after printing the report.
pub fn run(global: &GlobalArgs, args: &AuditArgs) -> Result<()> {
    let window = args.window.as_deref().map(parse_window).transpose()?;
    if !(0.0..=1.0).contains(&args.max_fraction) {
        return Err(CliError::invalid(
            "--max-fraction",
            args.max_fraction,
            "a share of files in [0, 1], e.g. 0.05",
        ));
    }
    let ctx = Context::open(global, Access::Existing)?;
    let table = ctx.load(&args.table)?;
    let column = geo_column(&table, args.column.as_deref())?;
    let files = file_bounds(&table, &column)?;
    let data = audit_data(&table, &column, &files)?;
    // A file of null and empty geometries has no bounds to record (Iceberg's bounds leave
    // empty values out): not a failure.
    let unbounded: Vec<&FileBounds> = files
        .iter()
        .filter(|f| f.bbox.is_none() && !f.all_null && f.record_count > 0)
        .filter(|f| !data.unlocated_files.contains(&f.path))
        .collect();

    let pruning = match window {
        None => None,
        Some(w) => {
            let plan = table
                .scan()
                .with_window(&column.name, w)
                .plan()?
                .pruning
                .ok_or_else(|| {
                    CliError::invalid("--window", args.window.as_deref().unwrap_or(""), "no plan")
                })?;
            let verdict = plan.assert_pruning(args.max_fraction);
            Some((w, plan, verdict))
        }
    };

    let mut problems = Vec::new();
    // Manifest bloat slows planning but loses nothing: a warning, not a failed check.
    let manifests = table.manifest_count()?;
    let warnings: Vec<String> = table
        .manifest_bloat()?
        .iter()
        .map(ToString::to_string)
        .collect();
    if !unbounded.is_empty() {
        problems.push(format!(
            "{} of {} files have no bounds for {} (every query reads them; check the metrics \
             mode of the column)",
            unbounded.len(),
            files.len(),
            column.name
        ));
    }
    if data.rows_outside_file_bounds > 0 {
        problems.push(format!(
            "{} rows in {} files lie outside their file's bounds (scans would miss them; \
             rewrite those files)",
            data.rows_outside_file_bounds, data.files_with_wrong_bounds
        ));
    }
    if !data.undecodable_files.is_empty() {
        problems.push(format!(
            "{} files hold geometry that is not valid WKB: {}",
            data.undecodable_files.len(),
            data.undecodable_files.join("; ")
        ));
    }
    if let Some(r) = data.bbox_columns.filter(|r| !r.is_clean()) {
        problems.push(format!(
            "bbox columns break the policy: {} missing, {} zero boxes off the origin, {} \
             inverted, {} not matching the geometry, {} invalid geometries",
            r.missing_bbox,
            r.zero_bbox_off_origin,
            r.inverted_bbox,
            r.mismatched_bbox,
            r.invalid_geometry
        ));
    }
    if let Some((_, _, Err(e))) = &pruning {
        problems.push(e.to_string());
    }

    let mut s = format!(
        "audit of {} ({}, {} files, {} rows)\n",
        table.ident(),
        column.name,
        files.len(),
        data.rows
    );
    let mark = |ok: bool| if ok { "ok  " } else { "FAIL" };
    let _ = writeln!(
        s,
        "{} file bounds present: {}/{} files",
        mark(unbounded.is_empty()),
        files.len() - unbounded.len(),
        files.len()
    );
    if !data.unlocated_files.is_empty() {
        let _ = writeln!(
            s,
            "ok   {} files hold only null or empty geometries (nothing to bound)",
            data.unlocated_files.len()
        );
    }
    let _ = writeln!(
        s,
        "{} rows inside their file bounds: {} rows outside",
        mark(data.rows_outside_file_bounds == 0 && data.undecodable_files.is_empty()),
        data.rows_outside_file_bounds
    );
    if let Some(r) = &data.bbox_columns {
        let _ = writeln!(
            s,
            "{} bbox columns follow the null/empty/point policy ({} rows audited)",
            mark(r.is_clean()),
            r.rows
        );
    }
    let _ = writeln!(
        s,
        "{} manifests: {manifests} (warned above {})",
        if warnings.is_empty() { "ok  " } else { "warn" },
        geoberg_table::MANIFEST_COUNT_WARNING_THRESHOLD
    );
    for w in &warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    if let Some((w, plan, verdict)) = &pruning {
        let _ = writeln!(
            s,
            "{} window [{}, {}, {}, {}] reads {}/{} files ({:.2}%, allowed {:.2}%)",
            mark(verdict.is_ok()),
            w.min_x,
            w.min_y,
            w.max_x,
            w.max_y,
            plan.read().files,
            plan.total().files,
            plan.scanned_fraction() * 100.0,
            args.max_fraction * 100.0
        );
    }
    ctx.output.emit(
        s,
        json!({
            "table": table.ident().to_string(),
            "ok": problems.is_empty(),
            "files": files.len(),
            "rows": data.rows,
            "files_without_bounds": unbounded.len(),
            "files_of_null_or_empty_geometries": data.unlocated_files.len(),
            "rows_outside_file_bounds": data.rows_outside_file_bounds,
            "undecodable_files": data.undecodable_files,
            "bbox_columns": data.bbox_columns.map(|r| json!({
                "rows": r.rows,
                "missing_bbox": r.missing_bbox,
                "zero_bbox_off_origin": r.zero_bbox_off_origin,
                "inverted_bbox": r.inverted_bbox,
                "mismatched_bbox": r.mismatched_bbox,
                "invalid_geometry": r.invalid_geometry,
            })),
            "pruning": pruning.as_ref().map(|(w, plan, verdict)| json!({
                "window": [w.min_x, w.min_y, w.max_x, w.max_y],
                "files_read": plan.read().files,
                "files_total": plan.total().files,
                "scanned_fraction": plan.scanned_fraction(),
                "max_fraction": args.max_fraction,
                "ok": verdict.is_ok(),
            })),
            "manifests": manifests,
            "warnings": warnings,
            "problems": problems,
        }),
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(CliError::AuditFailed {
            table: table.ident().to_string(),
            problems: problems.join("; "),
        })
    }
}

/// Reads the geometry (and bbox columns) of every file and checks rows against file bounds.
/// Files are read through the table's scan, so columns match by field id (a file written
/// before the bbox columns were added reads them as nulls, which the audit reports) and
/// object storage works as a local warehouse does.
fn audit_data(table: &Table, column: &GeoColumn, files: &[FileBounds]) -> Result<DataAudit> {
    let bbox_names = table
        .derived_bbox_columns()?
        .filter(|(source, _)| *source == column.name)
        .map(|(_, names)| names);
    let mut out = DataAudit {
        bbox_columns: bbox_names.as_ref().map(|_| AuditReport::default()),
        ..DataAudit::default()
    };
    let mut names = vec![column.name.clone()];
    names.extend(bbox_names.iter().flatten().cloned());
    for f in files {
        let (batches, _) = table
            .scan()
            .files([f.path.clone()])
            .select(names.iter().cloned())
            .execute()?;
        let mut outside = 0u64;
        let mut located = false;
        for batch in batches {
            out.rows += batch.num_rows() as u64;
            let geometry = batch.column_by_name(&column.name).ok_or_else(|| {
                CliError::invalid("data file", &f.path, "the geometry column vanished")
            })?;
            if let (Some(report), Some(bbox)) = (out.bbox_columns.as_mut(), &bbox_names) {
                report.merge(&audit_bbox_columns(&batch, geometry.as_ref(), bbox)?);
            }
            let sphere = matches!(column.column_type, ColumnType::Geography { .. });
            let boxes = if sphere {
                geography_bbox_columns(geometry.as_ref())
            } else {
                bbox_columns(geometry.as_ref())
            };
            match boxes {
                Ok(b) => {
                    located |= b.min_x.null_count() < b.min_x.len();
                    outside += rows_outside(&b, f.bbox, sphere);
                }
                Err(e) => {
                    out.undecodable_files.push(format!("{}: {e}", f.path));
                    located = true; // not known to be unlocated: reported as undecodable
                    break;
                }
            }
        }
        if !located && f.record_count > 0 {
            out.unlocated_files.insert(f.path.clone());
        }
        if outside > 0 {
            out.rows_outside_file_bounds += outside;
            out.files_with_wrong_bounds += 1;
        }
    }
    Ok(out)
}

fn audit_bbox_columns(
    batch: &RecordBatch,
    geometry: &dyn Array,
    names: &[String; 4],
) -> Result<AuditReport> {
    let col = |name: &str| -> Result<&Float64Array> {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<Float64Array>())
            .ok_or_else(|| {
                CliError::invalid(
                    "bbox column",
                    name,
                    "expected a double column in every file",
                )
            })
    };
    let [a, b, c, d] = names;
    Ok(audit(geometry, [col(a)?, col(b)?, col(c)?, col(d)?])?)
}

/// Rows with a box that is not inside `file` (no file bounds: nothing to violate). On the
/// `sphere` both are geography boxes (X may wrap, a box reaching a pole spans every longitude).
fn rows_outside(rows: &geoberg_geostats::BBoxColumns, file: Option<BBox>, sphere: bool) -> u64 {
    let Some(f) = file else { return 0 };
    if sphere {
        return (0..rows.min_x.len())
            .filter(|&i| {
                rows.min_x.is_valid(i)
                    && !geography_box_contains(
                        &f,
                        &BBox::new(
                            rows.min_x.value(i),
                            rows.min_y.value(i),
                            rows.max_x.value(i),
                            rows.max_y.value(i),
                        ),
                    )
            })
            .count() as u64;
    }
    let inside = |x: f64, y: f64| {
        let x_ok = if f.min_x > f.max_x {
            x >= f.min_x || x <= f.max_x
        } else {
            f.min_x <= x && x <= f.max_x
        };
        x_ok && f.min_y <= y && y <= f.max_y
    };
    (0..rows.min_x.len())
        .filter(|&i| {
            rows.min_x.is_valid(i)
                && !(inside(rows.min_x.value(i), rows.min_y.value(i))
                    && inside(rows.max_x.value(i), rows.max_y.value(i)))
        })
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::BinaryArray;

    fn point(x: f64, y: f64) -> Vec<u8> {
        [&[1u8, 1, 0, 0, 0][..], &x.to_le_bytes(), &y.to_le_bytes()].concat()
    }

    #[test]
    fn rows_outside_counts_escapes_and_honours_antimeridian_wrap() {
        let geoms =
            BinaryArray::from_iter_values([point(0.0, 0.0), point(5.0, 5.0), point(179.0, 1.0)]);
        let rows = bbox_columns(&geoms).unwrap();
        assert_eq!(
            rows_outside(&rows, Some(BBox::new(-1.0, -1.0, 1.0, 1.0)), false),
            2
        );
        assert_eq!(rows_outside(&rows, None, false), 0);
        // Wrapping box [170, -180] U [-180, 6]: every point inside.
        assert_eq!(
            rows_outside(&rows, Some(BBox::new(170.0, -1.0, 6.0, 6.0)), true),
            0
        );
    }

    #[test]
    fn geography_rows_are_boxed_on_the_sphere() {
        // LINESTRING (-90 60, 90 60) passes over the North Pole: a file box that stops at
        // latitude 60 (the vertices' box) does not hold it.
        let mut line = vec![1u8, 2, 0, 0, 0, 2, 0, 0, 0];
        for v in [-90.0f64, 60.0, 90.0, 60.0] {
            line.extend(v.to_le_bytes());
        }
        let rows = geography_bbox_columns(&BinaryArray::from_iter_values([line])).unwrap();
        assert_eq!(
            rows_outside(&rows, Some(BBox::new(-90.0, 60.0, 90.0, 60.0)), true),
            1
        );
        assert_eq!(
            rows_outside(&rows, Some(BBox::new(-180.0, 60.0, 180.0, 90.0)), true),
            0
        );
        // A row box across the antimeridian is not inside a file box that misses ±180.
        let mut across = vec![1u8, 2, 0, 0, 0, 2, 0, 0, 0];
        for v in [170.0f64, 0.0, -170.0, 0.0] {
            across.extend(v.to_le_bytes());
        }
        let rows = geography_bbox_columns(&BinaryArray::from_iter_values([across])).unwrap();
        assert_eq!(
            rows_outside(&rows, Some(BBox::new(-175.0, -1.0, 175.0, 1.0)), true),
            1
        );
    }
}
