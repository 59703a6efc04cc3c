//! Bounds of files that other tools wrote (`../shared/realdata`, see its README) equal the
//! statistics their writers stored, row group by row group.
//!
//! * parquet-testing (parquet-cpp and DataFusion): `expected_row_group_stats.json`, read from
//!   the footers. Geometry: x/y/z/m ranges equal exactly, and no box where the writer stored
//!   none (empty geometries, all-null row groups, NaN coordinates). Geography: our box (great-
//!   circle edges, wrapping the antimeridian) contains every vertex and equals the writer's box
//!   within 1e-12 (DataFusion's boxes miss vertices by 1-2 ulp).
//! * geoarrow-data: the Parquet geospatial statistics in each footer (GEOMETRY logical type) and
//!   the GeoParquet `bbox` of the `geo` metadata (`*_geo.parquet`). The `*_native.parquet` files
//!   hold GeoArrow native coordinates, not WKB, and are counted as skipped.
//!
//! The folder is `GEOBERG_REALDATA`, or `../../shared/realdata` from this crate; the test fails,
//! naming the path, when it is missing.

use std::fs::File;
use std::path::{Path, PathBuf};

use geoberg_geostats::{BBox, BBoxAccumulator, GeographyBBoxAccumulator};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::LogicalType;
use serde_json::Value;

fn realdata() -> PathBuf {
    let dir = std::env::var_os("GEOBERG_REALDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/realdata"));
    assert!(
        dir.join("parquet-testing").is_dir() && dir.join("geoarrow-data").is_dir(),
        "real-data folder {} is missing (or lacks parquet-testing/ and geoarrow-data/); set \
         GEOBERG_REALDATA to the shared/realdata folder",
        dir.display()
    );
    dir
}

/// What one row group of a WKB column holds, as geostats bounds it.
struct RowGroup {
    planar: Option<BBox>,
    spherical: Option<BBox>,
    /// Every vertex (x, y) of the row group's values.
    vertices: Vec<(f64, f64)>,
}

/// The WKB column: the one with the GEOMETRY or GEOGRAPHY logical type, else the binary leaf
/// called `geometry` (GeoParquet); `None` when there is none (GeoArrow native coordinates).
fn geometry_leaf(path: &Path) -> Option<(usize, bool)> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let schema = builder.metadata().file_metadata().schema_descr();
    (0..schema.num_columns()).find_map(|i| {
        let c = schema.column(i);
        match c.logical_type_ref() {
            Some(LogicalType::Geography { .. }) => Some((i, true)),
            Some(LogicalType::Geometry { .. }) => Some((i, false)),
            _ => (c.path().string() == "geometry").then_some((i, false)),
        }
    })
}

/// Collects the coordinates of a WKB value (ISO, little- or big-endian, any dimension) for the
/// vertex containment check; an independent little walker, not the scanner under test.
fn vertices(wkb: &[u8], out: &mut Vec<(f64, f64)>) -> usize {
    let be = wkb[0] == 0;
    let u32at = |at: usize| {
        let b: [u8; 4] = wkb[at..at + 4].try_into().unwrap();
        if be {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    let f64at = |at: usize| {
        let b: [u8; 8] = wkb[at..at + 8].try_into().unwrap();
        if be {
            f64::from_be_bytes(b)
        } else {
            f64::from_le_bytes(b)
        }
    };
    let code = u32at(1);
    let dims = 2 + [0, 1, 1, 2][(code / 1000) as usize];
    let mut pos = 5;
    let run = |pos: &mut usize, n: usize, out: &mut Vec<(f64, f64)>| {
        for _ in 0..n {
            out.push((f64at(*pos), f64at(*pos + 8)));
            *pos += 8 * dims;
        }
    };
    match code % 1000 {
        1 => run(&mut pos, 1, out),
        2 => {
            let n = u32at(pos) as usize;
            pos += 4;
            run(&mut pos, n, out);
        }
        3 => {
            let rings = u32at(pos);
            pos += 4;
            for _ in 0..rings {
                let n = u32at(pos) as usize;
                pos += 4;
                run(&mut pos, n, out);
            }
        }
        _ => {
            let n = u32at(pos);
            pos += 4;
            for _ in 0..n {
                pos += vertices(&wkb[pos..], out);
            }
        }
    }
    pos
}

fn row_groups(path: &Path, leaf: usize) -> Vec<RowGroup> {
    let file = File::open(path).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let n = builder.metadata().num_row_groups();
    (0..n)
        .map(|rg| {
            let builder =
                ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
            let mask = ProjectionMask::leaves(builder.parquet_schema(), [leaf]);
            let reader = builder
                .with_projection(mask)
                .with_row_groups(vec![rg])
                .build()
                .unwrap();
            let mut planar = BBoxAccumulator::new();
            let mut spherical = GeographyBBoxAccumulator::new();
            let mut vs = Vec::new();
            for batch in reader {
                let col = batch.unwrap().column(0).clone();
                planar.add_wkb_array(&col).unwrap();
                spherical.add_wkb_array(&col).unwrap();
                let bin = arrow_array::cast::as_generic_binary_array::<i32>(&col);
                for v in bin.iter().flatten() {
                    vertices(v, &mut vs);
                }
            }
            RowGroup {
                planar: planar.finish(),
                spherical: spherical.finish(),
                vertices: vs,
            }
        })
        .collect()
}

fn holds(b: &BBox, x: f64, y: f64) -> bool {
    let xin = if b.min_x <= b.max_x {
        b.min_x <= x && x <= b.max_x
    } else {
        x >= b.min_x || x <= b.max_x
    };
    let on_meridian = (x.abs() == 180.0) && (b.min_x.abs() == 180.0 || b.max_x.abs() == 180.0);
    // A box reaching a pole spans every longitude there.
    let at_pole = y.abs() == 90.0;
    (xin || on_meridian || at_pole) && b.min_y <= y && y <= b.max_y
}

fn range(b: &BBox) -> [Option<f64>; 8] {
    [
        Some(b.min_x),
        Some(b.max_x),
        Some(b.min_y),
        Some(b.max_y),
        b.z.map(|z| z.min),
        b.z.map(|z| z.max),
        b.m.map(|m| m.min),
        b.m.map(|m| m.max),
    ]
}

fn expected_range(geo: &Value) -> Option<[Option<f64>; 8]> {
    let f = |k: &str| geo[k].as_f64();
    f("xmin")?;
    Some(
        [
            "xmin", "xmax", "ymin", "ymax", "zmin", "zmax", "mmin", "mmax",
        ]
        .map(f),
    )
}

/// Row groups whose stored geography box is wider than the data: in geography-polygons row group
/// 28 every polygon (500 km buffers east of Australia, five of them across the antimeridian)
/// stays south of 7°S, yet DataFusion stored the whole world up to the North Pole (spherely, from
/// the same WKB, finds 500 513 km² per polygon and no pole inside, oriented or not). There our box
/// must lie inside the writer's and hold every vertex.
const WRITER_WIDER: [(&str, usize); 1] = [("geography-polygons.parquet", 28)];

#[test]
fn parquet_testing_row_groups_match_their_writers() {
    let dir = realdata().join("parquet-testing");
    let expected: Value =
        serde_json::from_reader(File::open(dir.join("expected_row_group_stats.json")).unwrap())
            .unwrap();
    let (mut compared, mut geography_groups, mut wider) = (0, 0, 0);
    let mut mismatches = Vec::new();
    for (name, file) in expected.as_object().unwrap() {
        let path = dir.join(name);
        let (leaf, geography) =
            geometry_leaf(&path).unwrap_or_else(|| panic!("{name}: no WKB column"));
        let groups = row_groups(&path, leaf);
        let stored = file["row_groups"].as_array().unwrap();
        assert_eq!(groups.len(), stored.len(), "{name}: row groups");
        for (i, (ours, theirs)) in groups.iter().zip(stored).enumerate() {
            let what = format!("{name} row group {i}");
            if theirs["geo_stats_set"] == Value::Bool(false) {
                // The writer stored no statistics at all (parquet-cpp writes none for geography):
                // nothing to equal, but our box still holds the rows.
                let b = ours.spherical.unwrap();
                assert!(
                    ours.vertices.iter().all(|&(x, y)| holds(&b, x, y)),
                    "{what}"
                );
                continue;
            }
            let want = expected_range(&theirs["geo"]);
            if !geography {
                assert_eq!(ours.planar.as_ref().map(range), want, "{what}");
            } else {
                geography_groups += 1;
                let b = ours.spherical.unwrap_or_else(|| panic!("{what}: no box"));
                for &(x, y) in &ours.vertices {
                    assert!(holds(&b, x, y), "{what}: ({x}, {y}) outside {b:?}");
                }
                let want = want.unwrap();
                if WRITER_WIDER.contains(&(name.as_str(), i)) {
                    let theirs = BBox::new(
                        want[0].unwrap(),
                        want[2].unwrap(),
                        want[1].unwrap(),
                        want[3].unwrap(),
                    );
                    for (x, y) in [(b.min_x, b.min_y), (b.max_x, b.max_y)] {
                        assert!(holds(&theirs, x, y), "{what}: {b:?} not inside {theirs:?}");
                    }
                    wider += 1;
                    compared += 1;
                    continue;
                }
                for (k, (o, t)) in range(&b).iter().zip(want).enumerate() {
                    let (o, t) = (o.unwrap_or(f64::NAN), t.unwrap_or(f64::NAN));
                    if !((o.is_nan() && t.is_nan()) || (o - t).abs() <= 1e-12) {
                        mismatches.push(format!("{what}: bound {k} is {o}, the writer stored {t}"));
                    }
                }
            }
            compared += 1;
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert!(
        compared >= 150 && geography_groups >= 150,
        "{compared} {geography_groups}"
    );
    assert_eq!(wider, WRITER_WIDER.len());
}

#[test]
fn geoarrow_data_matches_footers_and_geoparquet_bbox() {
    let dir = realdata().join("geoarrow-data");
    let (mut compared, mut native) = (0, 0);
    for sub in ["example", "example-crs"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
            .collect();
        paths.sort();
        for path in paths {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let Some((leaf, geography)) = geometry_leaf(&path) else {
                assert!(
                    name.ends_with("_native.parquet"),
                    "{name}: no WKB geometry column"
                );
                native += 1;
                continue;
            };
            assert!(!geography, "{name}: geoarrow-data examples are planar");
            let groups = row_groups(&path, leaf);
            let meta = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap())
                .unwrap()
                .metadata()
                .clone();
            let mut file_box = BBoxAccumulator::new();
            for (i, g) in groups.iter().enumerate() {
                file_box.add(g.planar);
                let stats = meta.row_group(i).column(leaf).geo_statistics();
                if let Some(bb) = stats.and_then(|s| s.bounding_box()) {
                    let want = [
                        Some(bb.get_xmin()),
                        Some(bb.get_xmax()),
                        Some(bb.get_ymin()),
                        Some(bb.get_ymax()),
                        bb.get_zmin(),
                        bb.get_zmax(),
                        bb.get_mmin(),
                        bb.get_mmax(),
                    ];
                    assert_eq!(
                        g.planar.as_ref().map(range),
                        Some(want),
                        "{name} row group {i}"
                    );
                    compared += 1;
                }
            }
            let kv = meta.file_metadata().key_value_metadata();
            let geo = kv.and_then(|kv| {
                kv.iter()
                    .find(|k| k.key == "geo")
                    .and_then(|k| k.value.clone())
            });
            if let Some(geo) = geo {
                let geo: Value = serde_json::from_str(&geo).unwrap();
                let column = &geo["columns"]["geometry"];
                if let Some(bbox) = column["bbox"].as_array() {
                    let b: Vec<f64> = bbox.iter().map(|v| v.as_f64().unwrap()).collect();
                    let ours = file_box.finish().unwrap();
                    let (lo, hi) = b.split_at(b.len() / 2);
                    assert_eq!(
                        [ours.min_x, ours.min_y, ours.max_x, ours.max_y],
                        [lo[0], lo[1], hi[0], hi[1]],
                        "{name}: GeoParquet bbox"
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(
        compared >= 80 && native > 0,
        "compared {compared}, native skipped {native}"
    );
}
