//! `geoberg inspect`: snapshots, data files, bounds and how much the files overlap.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::args::{GlobalArgs, InspectArgs};
use crate::context::{Access, Context, geo_column};
use crate::error::Result;
use crate::files::{extent, file_bounds, overlap_depth};

/// Prints the report.
pub fn run(global: &GlobalArgs, args: &InspectArgs) -> Result<()> {
    let ctx = Context::open(global, Access::Existing)?;
    let table = ctx.load(&args.table)?;
    let column = geo_column(&table, args.column.as_deref())?;
    let files = file_bounds(&table, &column)?;
    let metadata = table.metadata();

    let mut snapshots: Vec<_> = metadata.snapshots().collect();
    snapshots.sort_by_key(|s| (s.sequence_number(), s.timestamp_ms()));
    let current = metadata.current_snapshot_id();
    let snapshot_json: Vec<Value> = snapshots
        .iter()
        .map(|s| {
            let p = &s.summary().additional_properties;
            json!({
                "snapshot_id": s.snapshot_id(),
                "parent_id": s.parent_snapshot_id(),
                "timestamp_ms": s.timestamp_ms(),
                "operation": s.summary().operation.as_str(),
                "current": Some(s.snapshot_id()) == current,
                "summary": p,
            })
        })
        .collect();

    // Delete files by the data file they delete from (deletion vectors name one; a v2 position
    // delete file may name none and apply to any file of its partition).
    let deletes = table.delete_files()?;
    let mut deleted_by_file: std::collections::HashMap<String, (usize, u64)> = Default::default();
    let mut unreferenced_deletes = 0usize;
    for d in &deletes {
        match d.referenced_data_file() {
            Some(target) => {
                let e = deleted_by_file.entry(target).or_default();
                e.0 += 1;
                e.1 += d.record_count();
            }
            None => unreferenced_deletes += 1,
        }
    }
    let deleted_rows: u64 = deletes.iter().map(|d| d.record_count()).sum();
    let vectors = deletes
        .iter()
        .filter(|d| d.file_format() == iceberg::spec::DataFileFormat::Puffin)
        .count();
    let records: u64 = files.iter().map(|f| f.record_count).sum();
    let bytes: u64 = files.iter().map(|f| f.size_in_bytes).sum();
    let unbounded = files.iter().filter(|f| f.bbox.is_none()).count();
    let bounds = extent(&files);
    let depth = overlap_depth(&files);
    let manifests = table.manifest_count()?;
    let bloat = table.manifest_bloat()?;

    let mut s = String::new();
    let _ = writeln!(s, "table {}", table.ident());
    let _ = writeln!(s, "location: {}", metadata.location());
    let _ = writeln!(s, "metadata: {}", table.metadata_location());
    let _ = writeln!(s, "format-version: {}", metadata.format_version() as u8);
    let _ = writeln!(
        s,
        "geometry column: {} ({})",
        column.name, column.column_type
    );
    let _ = writeln!(s, "snapshots: {}", snapshots.len());
    for snap in &snapshots {
        let p = &snap.summary().additional_properties;
        let get = |k: &str| p.get(k).map_or("-", String::as_str);
        let _ = writeln!(
            s,
            "  {}{} {} {:<9} +{} files, +{} records, {} records total",
            if Some(snap.snapshot_id()) == current {
                "*"
            } else {
                " "
            },
            snap.snapshot_id(),
            snap.timestamp_ms(),
            snap.summary().operation.as_str(),
            get("added-data-files"),
            get("added-records"),
            get("total-records"),
        );
    }
    let _ = writeln!(
        s,
        "data files: {} ({records} records, {bytes} bytes), {unbounded} without bounds",
        files.len()
    );
    let _ = writeln!(
        s,
        "delete files: {} ({vectors} deletion vectors, {} position delete files{}), {deleted_rows} \
         rows deleted",
        deletes.len(),
        deletes.len() - vectors,
        if unreferenced_deletes > 0 {
            format!(", {unreferenced_deletes} naming no data file")
        } else {
            String::new()
        }
    );
    let _ = writeln!(s, "manifests: {manifests}");
    if let Some(b) = &bloat {
        let _ = writeln!(s, "warning: {b}");
    }
    match bounds {
        Some(b) => {
            let _ = writeln!(
                s,
                "bounds: [{}, {}, {}, {}]",
                b.min_x, b.min_y, b.max_x, b.max_y
            );
        }
        None => s.push_str("bounds: none (no file has bounds for this column)\n"),
    }
    let _ = writeln!(
        s,
        "overlap depth: {depth:.2} files per grid cell (about 1.6 when files tile space; \
         {} if every file spans everything)",
        files.len()
    );
    if args.files {
        for f in &files {
            let b = f.bbox.map_or("no bounds".to_string(), |b| {
                format!("[{}, {}, {}, {}]", b.min_x, b.min_y, b.max_x, b.max_y)
            });
            let deleted = match deleted_by_file.get(&f.path) {
                Some((n, rows)) => format!(" ({n} delete files, {rows} rows deleted)"),
                None => String::new(),
            };
            let _ = writeln!(
                s,
                "  {} {} rows {} bytes {b}{deleted}",
                f.path, f.record_count, f.size_in_bytes
            );
        }
    }
    let files_json: Vec<Value> = if args.files {
        files
            .iter()
            .map(|f| {
                json!({
                    "path": f.path,
                    "records": f.record_count,
                    "bytes": f.size_in_bytes,
                    "bbox": f.bbox.map(|b| [b.min_x, b.min_y, b.max_x, b.max_y]),
                    "delete_files": deleted_by_file.get(&f.path).map_or(0, |d| d.0),
                    "deleted_rows": deleted_by_file.get(&f.path).map_or(0, |d| d.1),
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    ctx.output.emit(
        s,
        json!({
            "table": table.ident().to_string(),
            "location": metadata.location(),
            "metadata_location": table.metadata_location(),
            "format_version": metadata.format_version() as u8,
            "geometry_column": column.name,
            "current_snapshot_id": current,
            "snapshots": snapshot_json,
            "data_files": files.len(),
            "records": records,
            "bytes": bytes,
            "files_without_bounds": unbounded,
            "delete_files": deletes.iter().map(|d| json!({
                "path": d.file_path(),
                "format": d.file_format().to_string(),
                "referenced_data_file": d.referenced_data_file(),
                "content_offset": d.content_offset(),
                "content_size_in_bytes": d.content_size_in_bytes(),
                "deleted_rows": d.record_count(),
            })).collect::<Vec<_>>(),
            "deleted_rows": deleted_rows,
            // Exact for deletion vectors and for position deletes that name their data file.
            "live_records": files
                .iter()
                .map(|f| f.record_count.saturating_sub(
                    deleted_by_file.get(&f.path).map_or(0, |d| d.1)
                ))
                .sum::<u64>(),
            "bounds": bounds.map(|b| [b.min_x, b.min_y, b.max_x, b.max_y]),
            "overlap_depth": depth,
            "manifests": manifests,
            "warnings": bloat.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "files": files_json,
        }),
    );
    Ok(())
}
