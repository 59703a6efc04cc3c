//! Row-group pruning on real geography files (parquet-testing's `geography-*.parquet`, written
//! by DataFusion: points with both poles, lines over the poles and across the antimeridian,
//! 500 km buffers) is sound against the exact spherical predicate over their rows, with the
//! bounds geostats computes and with the bounds the writer stored (which box the pole points as
//! themselves: pruning's polar closure must keep them).
//!
//! The folder is `GEOBERG_REALDATA`, or `../../shared/realdata` from this crate.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::as_generic_binary_array;
use geoberg_crs::{ColumnType, Crs};
use geoberg_geography::Geography;
use geoberg_geostats::{BBox, GeographyBBoxAccumulator};
use geoberg_pruning::{BoxFilter, BoxPredicate, RowGroupBounds, prune_row_groups};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn realdata() -> PathBuf {
    let dir = std::env::var_os("GEOBERG_REALDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/realdata"));
    assert!(
        dir.join("parquet-testing").is_dir(),
        "real-data folder {} is missing (or lacks parquet-testing/); set GEOBERG_REALDATA to the \
         shared/realdata folder",
        dir.display()
    );
    dir
}

struct Group {
    rows: Vec<Geography>,
    ours: Option<BBox>,
    writer: Option<BBox>,
}

fn groups(path: &Path) -> Vec<Group> {
    let meta = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .metadata()
        .clone();
    (0..meta.num_row_groups())
        .map(|rg| {
            let builder =
                ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
            let mask = ProjectionMask::leaves(builder.parquet_schema(), [1]);
            let reader = builder
                .with_projection(mask)
                .with_row_groups(vec![rg])
                .build()
                .unwrap();
            let (mut rows, mut acc) = (Vec::new(), GeographyBBoxAccumulator::new());
            for batch in reader {
                let col = batch.unwrap().column(0).clone();
                acc.add_wkb_array(&col).unwrap();
                for v in as_generic_binary_array::<i32>(&col).iter().flatten() {
                    rows.push(Geography::from_wkb(v).unwrap());
                }
            }
            let writer = meta
                .row_group(rg)
                .column(1)
                .geo_statistics()
                .and_then(|s| s.bounding_box())
                .map(|b| BBox::new(b.get_xmin(), b.get_ymin(), b.get_xmax(), b.get_ymax()));
            Group {
                rows,
                ours: acc.finish(),
                writer,
            }
        })
        .collect()
}

fn point(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1, 1, 0, 0, 0];
    v.extend(x.to_le_bytes());
    v.extend(y.to_le_bytes());
    v
}

/// A regular polygon of `n` vertices round (x, y) at `r` degrees, as WKB.
fn disc(x: f64, y: f64, r: f64, n: usize) -> Vec<u8> {
    let (la, lo, d) = (y.to_radians(), x.to_radians(), r.to_radians());
    let mut ring: Vec<(f64, f64)> = (0..n)
        .map(|k| {
            let b = std::f64::consts::TAU * k as f64 / n as f64;
            let la2 = (la.sin() * d.cos() + la.cos() * d.sin() * b.cos()).asin();
            let lo2 = lo + (b.sin() * d.sin() * la.cos()).atan2(d.cos() - la.sin() * la2.sin());
            (
                (lo2.to_degrees() + 180.0).rem_euclid(360.0) - 180.0,
                la2.to_degrees(),
            )
        })
        .collect();
    ring.push(ring[0]);
    let mut v = vec![1, 3, 0, 0, 0, 1, 0, 0, 0];
    v.extend((ring.len() as u32).to_le_bytes());
    for (a, b) in ring {
        v.extend(a.to_le_bytes());
        v.extend(b.to_le_bytes());
    }
    v
}

/// Deterministic windows: discs and points all over the sphere, at the poles and across the
/// antimeridian, with every predicate.
fn windows() -> Vec<(BoxPredicate, Vec<u8>)> {
    let mut state = 0x5EED_u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut out = vec![
        (BoxPredicate::Intersects, point(0.0, 90.0)),
        (BoxPredicate::Intersects, point(0.0, -90.0)),
        (BoxPredicate::Intersects, disc(0.0, 90.0, 3.0, 8)),
        (BoxPredicate::Intersects, disc(180.0, 0.0, 10.0, 12)),
        (
            BoxPredicate::DistanceWithin {
                distance: 300_000.0,
            },
            point(0.0, 90.0),
        ),
        (
            BoxPredicate::DistanceWithin {
                distance: 300_000.0,
            },
            point(-180.0, -20.0),
        ),
    ];
    for i in 0..120 {
        let (x, y) = (
            next() * 360.0 - 180.0,
            (next() * 2.0 - 1.0).asin().to_degrees(),
        );
        let r = 0.5 + next() * 15.0;
        out.push(match i % 4 {
            0 => (BoxPredicate::Intersects, disc(x, y, r, 10)),
            1 => (BoxPredicate::Within, disc(x, y, r * 2.0, 10)),
            2 => (
                BoxPredicate::DistanceWithin {
                    distance: r * 50_000.0,
                },
                point(x, y),
            ),
            _ => (BoxPredicate::Intersects, point(x, y)),
        });
    }
    out
}

fn matches(row: &Geography, p: BoxPredicate, window: &Geography) -> bool {
    match p {
        BoxPredicate::Intersects => row.intersects(window),
        BoxPredicate::Within | BoxPredicate::Contains => window.contains(row),
        BoxPredicate::DistanceWithin { distance } => row.dwithin(window, distance),
    }
}

#[test]
fn row_group_pruning_is_sound_on_datafusion_geography_files() {
    let dir = realdata().join("parquet-testing");
    let column = ColumnType::geography(Crs::OgcCrs84);
    let windows = windows();
    let (mut hits, mut skipped) = (0, 0);
    for name in [
        "geography-points.parquet",
        "geography-lines.parquet",
        "geography-polygons.parquet",
    ] {
        let groups = groups(&dir.join(name));
        for (source, bounds) in [
            ("ours", groups.iter().map(|g| g.ours).collect::<Vec<_>>()),
            ("writer", groups.iter().map(|g| g.writer).collect()),
        ] {
            let row_groups: Vec<RowGroupBounds> = groups
                .iter()
                .zip(&bounds)
                .map(|(g, b)| RowGroupBounds::new(g.rows.len() as u64, 1, *b))
                .collect();
            for (p, wkb) in &windows {
                let filter = BoxFilter::from_wkb(*p, wkb).unwrap();
                let window = Geography::from_wkb(wkb).unwrap();
                let plan = prune_row_groups(&column, &filter, &row_groups).unwrap();
                let read: Vec<usize> = plan.read_indices().collect();
                for (i, g) in groups.iter().enumerate() {
                    if g.rows.iter().any(|r| matches(r, *p, &window)) {
                        hits += 1;
                        assert!(
                            read.contains(&i),
                            "{name} row group {i} ({source} bounds {:?}) holds a row matching {filter} but was skipped",
                            bounds[i]
                        );
                    } else if !read.contains(&i) {
                        skipped += 1;
                    }
                }
            }
        }
    }
    // The windows found rows, and pruning skipped most row groups that had none.
    assert!(
        hits > 100 && skipped > 10_000,
        "hits {hits}, skipped {skipped}"
    );
}

/// Lon/lat box windows on the points file, whose exact answer is a comparison per point (a point
/// at a pole lies in every box that reaches that pole): the writer's boxes hold the poles at the
/// longitude 0 ± 3e-14, so a box over the pole at other longitudes finds them only through
/// pruning's polar closure.
#[test]
fn box_windows_over_the_poles_read_the_pole_points() {
    let path = realdata().join("parquet-testing/geography-points.parquet");
    let groups = groups(&path);
    let column = ColumnType::geography(Crs::OgcCrs84);
    let coords = |g: &Group| -> Vec<(f64, f64)> {
        let b: Vec<BBox> = g.rows.iter().filter_map(|r| r.bbox()).collect();
        b.iter().map(|b| (b.min_x, b.min_y)).collect()
    };
    let windows = [
        BBox::new(10.0, 80.0, 20.0, 90.0),
        BBox::new(-120.0, -90.0, -100.0, -85.0),
        BBox::new(170.0, 85.0, -170.0, 90.0),
    ];
    for (source, bounds) in [
        ("ours", groups.iter().map(|g| g.ours).collect::<Vec<_>>()),
        ("writer", groups.iter().map(|g| g.writer).collect()),
    ] {
        let row_groups: Vec<RowGroupBounds> = groups
            .iter()
            .zip(&bounds)
            .map(|(g, b)| RowGroupBounds::new(g.rows.len() as u64, 1, *b))
            .collect();
        for w in windows {
            let plan = prune_row_groups(&column, &BoxFilter::intersects(w), &row_groups).unwrap();
            let read: Vec<usize> = plan.read_indices().collect();
            let mut found_pole = false;
            for (i, g) in groups.iter().enumerate() {
                let hit = coords(g).iter().any(|&(x, y)| {
                    let xin = if w.min_x <= w.max_x {
                        w.min_x <= x && x <= w.max_x
                    } else {
                        x >= w.min_x || x <= w.max_x
                    };
                    let pole = (y == 90.0 && w.max_y == 90.0) || (y == -90.0 && w.min_y == -90.0);
                    found_pole |= pole;
                    (xin || pole) && w.min_y <= y && y <= w.max_y
                });
                assert!(
                    !hit || read.contains(&i),
                    "{source} bounds: row group {i} holds a point in {w:?} but was skipped"
                );
            }
            assert!(found_pole, "{w:?} should reach a pole point");
        }
    }
}
