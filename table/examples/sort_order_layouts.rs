//! Files read by window queries on one table laid out by each sort order (issue 20: Hilbert vs
//! z-order vs seed 001's bbox-column sort), measured on real tables written by geoberg.
//!
//! `sort_order_layouts [rows] [appends] [target-file-count] [windows]` writes the same skewed
//! points (clusters around 40 "cities" plus a uniform background, in random arrival order) as
//! `appends` appended files into one table per layout (with bbox columns), rewrites each with
//! its sort order into `target-file-count` files, and counts the files each of `windows` square
//! windows of 1% and of 0.1% of the data's area (centred on random rows) must read, from the
//! manifests' bounds. File counts do not depend on the build profile.

use std::sync::Arc;

use geoberg_table::{
    BBox, Catalog, Column, CreateTable, DataType, SqliteCatalog, Table, TableIdent,
};

#[path = "common/skewed_points.rs"]
mod skewed_points;

use skewed_points::{Rng, batch, points};

/// Mean files read by square windows of `fraction` of the data extent's area.
fn mean_files_read(table: &Table, xy: &[(f64, f64)], fraction: f64, windows: usize) -> f64 {
    let (w, h) = (360.0 * fraction.sqrt(), 170.0 * fraction.sqrt());
    let mut rng = Rng(7);
    let total: usize = (0..windows)
        .map(|_| {
            let (cx, cy) = xy[(rng.next() % xy.len() as u64) as usize];
            let window = BBox::new(cx - w / 2.0, cy - h / 2.0, cx + w / 2.0, cy + h / 2.0);
            table
                .scan()
                .with_window("geom", window)
                .plan()
                .unwrap()
                .explain
                .files_read
        })
        .sum();
    total as f64 / windows as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let arg = |i: usize, default: usize| args.get(i).copied().unwrap_or(default);
    let (rows, appends, target, windows) = (arg(0, 400_000), arg(1, 16), arg(2, 64), arg(3, 200));
    let xy = points(rows);
    let dir = tempfile::tempdir()?;
    let catalog: Arc<dyn Catalog> = Arc::new(SqliteCatalog::open(
        dir.path().join("catalog.db"),
        "geoberg",
        dir.path().join("warehouse"),
    )?);
    catalog.create_namespace("bench")?;

    let layouts: [(&str, Option<&str>); 5] = [
        ("appended (arrival order)", None),
        ("hilbert(geom, 16)", Some("hilbert(geom, 16)")),
        ("zorder(geom)", Some("zorder(geom)")),
        (
            "zorder(bbox_min_x, bbox_min_y)",
            Some("zorder(bbox_min_x, bbox_min_y)"),
        ),
        (
            "sort by bbox_min_x, bbox_min_y",
            Some("bbox_min_x ASC, bbox_min_y ASC"),
        ),
    ];
    println!(
        "{rows} points, {appends} appends, target-file-count {target}, {windows} windows each"
    );
    println!("| layout | data files | files read, 1% window | files read, 0.1% window |");
    println!("|---|---:|---:|---:|");
    for (i, (name, order)) in layouts.iter().enumerate() {
        let mut table = CreateTable::new([
            Column::new("id", DataType::Long).required(),
            Column::new("geom", DataType::geometry(4326)),
        ])
        .with_bbox_columns("geom")
        .create(
            catalog.clone(),
            &TableIdent::new("bench", &format!("layout{i}"))?,
        )?;
        let per = rows.div_ceil(appends);
        for a in 0..appends {
            let ids = a * per..((a + 1) * per).min(rows);
            if !ids.is_empty() {
                table = table.append(&[batch(ids, &xy)])?.0;
            }
        }
        if let Some(order) = order {
            table = table
                .rewrite()
                .sort_order(order.parse()?)
                .option("target-file-count", target.to_string())
                .execute()?
                .0;
        }
        let files = table.data_files()?.len();
        println!(
            "| {name} | {files} | {:.1} | {:.1} |",
            mean_files_read(&table, &xy, 0.01, windows),
            mean_files_read(&table, &xy, 0.001, windows)
        );
    }
    Ok(())
}
