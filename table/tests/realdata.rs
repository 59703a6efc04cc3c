//! Every file in `shared/realdata` (written by parquet-cpp, DataFusion and geoarrow-data's
//! tools, see its README) through `import_parquet`: the column type follows from the file, the
//! files geoberg cannot take are refused with the way out, and after the import the table holds
//! the writers' numbers.
//!
//! Oracles, none of them geoberg code: the statistics the writers stored
//! (`expected_row_group_stats.json` for parquet-testing, the source footers' geo statistics and
//! the GeoParquet `bbox` for geoarrow-data), and each row's WKB decoded by the `wkb` and `geo`
//! crates for the window queries.
//!
//! The folder is `GEOBERG_REALDATA`, or `../../shared/realdata` from this crate; the test fails,
//! naming the path, when it is missing.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use geo::CoordsIter;
use geo_traits::to_geo::ToGeoGeometry;
use geoberg_geostats::{BBox, GeoKind, decode_geospatial_bounds};
use geoberg_table::{
    Catalog, ColumnType, Error, ImportOptions, ImportReport, SqliteCatalog, Table, TableIdent,
    import_parquet,
};
use iceberg::spec::PrimitiveLiteral;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::file::reader::{FileReader, SerializedFileReader};
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
    // Locations are URIs without `..`.
    dir.canonicalize().unwrap()
}

/// Every Parquet file of the folder, as (path relative to it, path).
fn files() -> Vec<(String, PathBuf)> {
    let root = realdata();
    let mut out = Vec::new();
    for sub in [
        "parquet-testing",
        "geoarrow-data/example",
        "geoarrow-data/example-crs",
    ] {
        for e in std::fs::read_dir(root.join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "parquet") {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                out.push((format!("{sub}/{name}"), p));
            }
        }
    }
    out.sort();
    out
}

/// What importing a file with default options must do, from the folder's README.
#[derive(Debug, Clone, PartialEq)]
enum Expect {
    /// Imports as this column type (SHOW CREATE TABLE spelling).
    Imports(&'static str),
    /// GeoArrow-native coordinates: refused, naming the encoding.
    Native,
    /// A CRS no column declares (EPSG:5070, UTM, a custom projection): refused; `srid(0)`
    /// imports it.
    NotDeclarable,
    /// Parquet CRS and GeoParquet CRS disagree: refused; `srid(4326)` settles it.
    Conflict,
}

fn expectation(rel: &str) -> Expect {
    let name = rel.rsplit('/').next().unwrap();
    if name.ends_with("_native.parquet") {
        return Expect::Native;
    }
    if name == "example-crs_vermont-4326.parquet" {
        return Expect::Conflict;
    }
    let undeclarable = [
        "crs-projjson.parquet",
        "crs-srid.parquet",
        "crs-arbitrary-value.parquet",
        "example-crs_vermont-utm.parquet",
        "example-crs_vermont-utm_geo.parquet",
        "example-crs_vermont-custom.parquet",
        "example-crs_vermont-custom_geo.parquet",
    ];
    if undeclarable.contains(&name) {
        return Expect::NotDeclarable;
    }
    if name.starts_with("geography-") || name == "crs-geography.parquet" {
        return Expect::Imports("GEOGRAPHY(4326)");
    }
    // geoarrow-data's example GeoParquet files say "crs": null (unknown).
    if rel.starts_with("geoarrow-data/example/") && name.ends_with("_geo.parquet") {
        return Expect::Imports("GEOMETRY(0)");
    }
    Expect::Imports("GEOMETRY(4326)")
}

/// x/y/z/m ranges: [xmin, xmax, ymin, ymax, zmin, zmax, mmin, mmax].
type Range8 = [Option<f64>; 8];

/// What a writer stored for one row group.
#[derive(Debug, Clone, PartialEq)]
enum Stored {
    /// No geo statistics at all.
    Nothing,
    /// Statistics without a box (empties, all null, NaN only).
    NoBox,
    /// A box.
    Box(Range8),
    /// Only the GeoParquet file bbox (x/y).
    Xy([f64; 4]),
}

fn range(b: &BBox) -> Range8 {
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

fn footer_box(stats: Option<&parquet::geospatial::statistics::GeospatialStatistics>) -> Stored {
    let Some(s) = stats else {
        return Stored::Nothing;
    };
    match s.bounding_box() {
        None => Stored::NoBox,
        Some(b) => Stored::Box([
            Some(b.get_xmin()),
            Some(b.get_xmax()),
            Some(b.get_ymin()),
            Some(b.get_ymax()),
            b.get_zmin(),
            b.get_zmax(),
            b.get_mmin(),
            b.get_mmax(),
        ]),
    }
}

/// The writer's statistics of every row group of a source file.
fn stored(rel: &str, path: &Path, column: &str) -> Vec<Stored> {
    let name = rel.rsplit('/').next().unwrap();
    if rel.starts_with("parquet-testing/") {
        let json: Value = serde_json::from_reader(
            File::open(realdata().join("parquet-testing/expected_row_group_stats.json")).unwrap(),
        )
        .unwrap();
        return json[name]["row_groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|rg| {
                if rg["geo_stats_set"] == Value::Bool(false) {
                    return Stored::Nothing;
                }
                let g = &rg["geo"];
                if g["xmin"].is_null() {
                    return Stored::NoBox;
                }
                Stored::Box(
                    [
                        "xmin", "xmax", "ymin", "ymax", "zmin", "zmax", "mmin", "mmax",
                    ]
                    .map(|k| g[k].as_f64()),
                )
            })
            .collect();
    }
    let reader = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
    let md = reader.metadata();
    let descr = md.file_metadata().schema_descr();
    let leaf = (0..descr.num_columns())
        .find(|&i| descr.column(i).path().string() == column)
        .unwrap();
    let geo_bbox = md
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == "geo"))
        .and_then(|k| k.value.as_ref())
        .and_then(|v| {
            let g: Value = serde_json::from_str(v).ok()?;
            let b = g["columns"][column]["bbox"].as_array()?.clone();
            let b: Vec<f64> = b.iter().map(|v| v.as_f64().unwrap()).collect();
            let (lo, hi) = b.split_at(b.len() / 2);
            Some([lo[0], hi[0], lo[1], hi[1]])
        });
    (0..md.num_row_groups())
        .map(
            |i| match footer_box(md.row_group(i).column(leaf).geo_statistics()) {
                Stored::Nothing => match (geo_bbox, md.num_row_groups()) {
                    (Some(b), 1) => Stored::Xy(b),
                    _ => Stored::Nothing,
                },
                s => s,
            },
        )
        .collect()
}

/// Each row's WKB (`None` for null), read straight from the file.
fn source_rows(path: &Path, column: &str) -> Vec<Option<Vec<u8>>> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for b in reader {
        let b = b.unwrap();
        out.extend(wkb_values(&b, column));
    }
    out
}

fn wkb_values(b: &RecordBatch, column: &str) -> Vec<Option<Vec<u8>>> {
    let c = b.column_by_name(column).unwrap();
    let bin = c.as_binary::<i32>();
    (0..bin.len())
        .map(|i| bin.is_valid(i).then(|| bin.value(i).to_vec()))
        .collect()
}

/// The finite coordinates of a WKB value, decoded by the `wkb` and `geo` crates.
fn coords(wkb: &[u8]) -> Vec<(f64, f64)> {
    let w = wkb::reader::read_wkb(wkb).unwrap();
    let Some(g): Option<geo_types::Geometry<f64>> = w.try_to_geometry() else {
        return Vec::new();
    };
    g.coords_iter()
        .map(|c| (c.x, c.y))
        .filter(|(x, y)| !x.is_nan() && !y.is_nan())
        .collect()
}

/// Planar x/y box of the finite coordinates.
fn xy_box(wkb: &[u8]) -> Option<[f64; 4]> {
    let cs = coords(wkb);
    let first = cs.first()?;
    let mut b = [first.0, first.0, first.1, first.1];
    for (x, y) in cs {
        b = [b[0].min(x), b[1].max(x), b[2].min(y), b[3].max(y)];
    }
    Some(b)
}

fn intersects(b: &[f64; 4], w: &BBox) -> bool {
    b[0] <= w.max_x && b[1] >= w.min_x && b[2] <= w.max_y && b[3] >= w.min_y
}

fn catalog(dir: &Path) -> Arc<dyn Catalog> {
    Arc::new(SqliteCatalog::open(dir.join("catalog.db"), "geoberg", dir.join("warehouse")).unwrap())
}

fn table_name(rel: &str) -> TableIdent {
    let stem: String = rel
        .rsplit('/')
        .next()
        .unwrap()
        .trim_end_matches(".parquet")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    TableIdent::new("imported", &stem).unwrap()
}

/// Row groups in geography-polygons that DataFusion boxed wider than the data (see
/// `geostats/tests/realdata.rs`): there our box lies inside the writer's.
const WRITER_WIDER: [(&str, usize); 1] = [("geography-polygons.parquet", 28)];

fn within(o: Range8, t: Range8, tolerance: f64) -> bool {
    o.iter().zip(t).all(|(o, t)| match (o, t) {
        (None, None) => true,
        (Some(o), Some(t)) => (o - t).abs() <= tolerance,
        _ => false,
    })
}

fn union(a: Option<Range8>, b: Range8) -> Range8 {
    let Some(a) = a else { return b };
    let pick = |i: usize, f: fn(f64, f64) -> f64| match (a[i], b[i]) {
        (Some(x), Some(y)) => Some(f(x, y)),
        (x, y) => x.or(y),
    };
    [
        pick(0, f64::min),
        pick(1, f64::max),
        pick(2, f64::min),
        pick(3, f64::max),
        pick(4, f64::min),
        pick(5, f64::max),
        pick(6, f64::min),
        pick(7, f64::max),
    ]
}

/// The checks after a successful import: row count, one commit, the files' Iceberg bounds and
/// row groups' geo statistics against the writer's, and window queries against brute force.
fn check_imported(rel: &str, path: &Path, report: &ImportReport, rows_per_file: usize) -> usize {
    let table = &report.table;
    let [(column, column_type)] = &report.geometry_columns[..] else {
        panic!(
            "{rel}: one geometry column, not {:?}",
            report.geometry_columns
        );
    };
    let column = column.as_str();
    let name = rel.rsplit('/').next().unwrap();
    let geography = matches!(column_type, ColumnType::Geography { .. });
    let source = source_rows(path, column);
    assert_eq!(report.rows, source.len() as u64, "{rel}: rows");
    if !source.is_empty() {
        assert_eq!(table.metadata().snapshots().count(), 1, "{rel}: one commit");
    }
    let stored = stored(rel, path, column);
    let source_groups: Vec<usize> = {
        let r = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        (0..r.metadata().num_row_groups())
            .map(|i| r.metadata().row_group(i).num_rows() as usize)
            .collect()
    };
    assert_eq!(stored.len(), source_groups.len(), "{rel}: row groups");
    let field_id = table
        .metadata()
        .current_schema()
        .field_by_name(column)
        .unwrap()
        .id;
    let files = table.data_files().unwrap();
    let mut next_group = 0;
    let mut compared = 0;
    for f in &files {
        // The source row groups this file holds: whole groups, in order, up to rows_per_file.
        let mut groups = Vec::new();
        let mut rows = 0;
        while rows < f.record_count() as usize {
            rows += source_groups[next_group];
            groups.push(next_group);
            next_group += 1;
        }
        assert_eq!(
            rows,
            f.record_count() as usize,
            "{rel}: a row group was split"
        );
        assert!(rows <= rows_per_file.max(source_groups[groups[0]]), "{rel}");
        let binary = |d: Option<&iceberg::spec::Datum>| match d.map(|d| d.literal()) {
            Some(PrimitiveLiteral::Binary(b)) => Some(b.clone()),
            _ => None,
        };
        let ours = match (
            binary(f.lower_bounds().get(&field_id)),
            binary(f.upper_bounds().get(&field_id)),
        ) {
            (Some(lo), Some(hi)) => {
                let kind = if geography {
                    GeoKind::Geography
                } else {
                    GeoKind::Geometry
                };
                Some(range(&decode_geospatial_bounds(kind, &lo, &hi).unwrap()))
            }
            _ => None,
        };
        let theirs: Vec<&Stored> = groups.iter().map(|&g| &stored[g]).collect();
        let what = format!("{rel}, data file with row groups {groups:?}");
        if theirs.iter().any(|s| **s == Stored::Nothing) {
            // The writer stored nothing to equal; our box (if any) holds every vertex.
            if let Some(b) = ours {
                for wkb in source.iter().flatten() {
                    for (x, y) in coords(wkb) {
                        let xin = if b[0].unwrap() <= b[1].unwrap() {
                            b[0].unwrap() <= x && x <= b[1].unwrap()
                        } else {
                            x >= b[0].unwrap() || x <= b[1].unwrap()
                        };
                        assert!(xin && b[2].unwrap() <= y && y <= b[3].unwrap(), "{what}");
                    }
                }
            }
        } else if let [Stored::Xy(xy)] = theirs[..] {
            let o = ours.unwrap_or_else(|| panic!("{what}: no bounds"));
            assert_eq!([o[0], o[1], o[2], o[3]], xy.map(Some), "{what}");
            compared += 1;
        } else {
            let want = theirs.iter().fold(None, |acc, s| match s {
                Stored::Box(b) => Some(union(acc, *b)),
                _ => acc,
            });
            match (ours, want) {
                (None, None) => {}
                (Some(o), Some(t)) if !geography => assert_eq!(o, t, "{what}"),
                (Some(o), Some(t)) if WRITER_WIDER.contains(&(name, groups[0])) => {
                    assert!(
                        o[0] >= t[0] && o[1] <= t[1] && o[2] >= t[2] && o[3] <= t[3],
                        "{what}: {o:?} not inside {t:?}"
                    );
                }
                (Some(o), Some(t)) => assert!(within(o, t, 1e-12), "{what}: {o:?} vs {t:?}"),
                (o, t) => panic!("{what}: bounds {o:?}, the writer stored {t:?}"),
            }
            compared += 1;
        }
        // Row groups of the data file: the writer's geo statistics, row group for row group
        // (geometry; a geography column's planar Parquet statistics do not bound geodesics).
        if !geography {
            let local = f.file_path().strip_prefix("file://").unwrap();
            let reader = SerializedFileReader::new(File::open(local).unwrap()).unwrap();
            let md = reader.metadata();
            assert_eq!(md.num_row_groups(), groups.len(), "{what}: row groups kept");
            let descr = md.file_metadata().schema_descr();
            let leaf = (0..descr.num_columns())
                .find(|&i| descr.column(i).path().string() == column)
                .unwrap();
            for (k, &g) in groups.iter().enumerate() {
                let ours = footer_box(md.row_group(k).column(leaf).geo_statistics());
                match (&stored[g], &ours) {
                    (Stored::Box(t), Stored::Box(o)) => assert_eq!(o, t, "{what} row group {k}"),
                    (Stored::Xy(t), Stored::Box(o)) => {
                        assert_eq!(
                            [o[0], o[1], o[2], o[3]],
                            t.map(Some),
                            "{what} row group {k}"
                        )
                    }
                    (Stored::NoBox, Stored::NoBox | Stored::Nothing) => {}
                    (Stored::Nothing, _) => {}
                    (t, o) => panic!("{what} row group {k}: ours {o:?}, the writer's {t:?}"),
                }
                compared += 1;
            }
        }
    }
    assert_eq!(
        next_group,
        source_groups.len(),
        "{rel}: every row group imported"
    );

    // Window queries: what a brute-force filter of the file's WKB returns.
    let boxes: Vec<[f64; 4]> = source.iter().flatten().filter_map(|w| xy_box(w)).collect();
    if boxes.is_empty() {
        return compared;
    }
    let e = boxes
        .iter()
        .fold([f64::MAX, f64::MIN, f64::MAX, f64::MIN], |a, b| {
            [
                a[0].min(b[0]),
                a[1].max(b[1]),
                a[2].min(b[2]),
                a[3].max(b[3]),
            ]
        });
    let (w, h) = ((e[1] - e[0]).max(1e-9), (e[3] - e[2]).max(1e-9));
    let windows = [
        BBox::new(e[0], e[2], e[0] + w / 2.0, e[2] + h / 2.0),
        BBox::new(
            e[0] + w * 0.4,
            e[2] + h * 0.4,
            e[0] + w * 0.6,
            e[2] + h * 0.6,
        ),
        BBox::new(boxes[0][0], boxes[0][2], boxes[0][0], boxes[0][2]),
        BBox::new(e[1] + w, e[3] + h, e[1] + 2.0 * w, e[3] + 2.0 * h),
    ];
    let lonlat =
        |b: &BBox| b.min_x >= -180.0 && b.max_x <= 180.0 && b.min_y >= -90.0 && b.max_y <= 90.0;
    for window in windows.into_iter().filter(|w| !geography || lonlat(w)) {
        let (batches, explain) = table
            .scan()
            .with_window(column, window)
            .execute()
            .unwrap_or_else(|e| panic!("{rel}: {e}"));
        let mut got: Vec<Vec<u8>> = batches
            .iter()
            .flat_map(|b| wkb_values(b, column))
            .map(|v| v.expect("a null geometry matched a window"))
            .collect();
        got.sort();
        let what = format!("{rel}: window {window:?}\n{explain}");
        if !geography {
            let mut want: Vec<Vec<u8>> = source
                .iter()
                .flatten()
                .filter(|w| xy_box(w).is_some_and(|b| intersects(&b, &window)))
                .cloned()
                .collect();
            want.sort();
            assert_eq!(got, want, "{what}");
        } else {
            // Geodesic edges bend away from the vertices' planar box: check soundness (every
            // row with a vertex inside is returned) and that nothing unrelated comes back.
            for wkb in source.iter().flatten() {
                let inside = coords(wkb).iter().any(|&(x, y)| {
                    window.min_x < x && x < window.max_x && window.min_y < y && y < window.max_y
                });
                if inside {
                    assert!(
                        got.binary_search(wkb).is_ok(),
                        "{what}: a row inside is missing"
                    );
                }
            }
            // Nothing unrelated: rows meet the box of the window's region on the sphere. Its
            // south and north sides are great-circle arcs, which bulge poleward to latitude
            // atan(tan(y) / cos(w / 2)) over a side w degrees wide (pieces under 180 degrees);
            // a window touching a pole spans every longitude (a pole has them all).
            let width = window.max_x - window.min_x;
            let piece = (width / ((width / 180.0).floor() + 1.0)).to_radians();
            let bulge = |y: f64| {
                (y.to_radians().tan() / (piece / 2.0).cos())
                    .atan()
                    .to_degrees()
            };
            let south = if window.min_y < 0.0 {
                bulge(window.min_y)
            } else {
                window.min_y
            };
            let north = if window.max_y > 0.0 {
                bulge(window.max_y)
            } else {
                window.max_y
            };
            let polar = window.min_y == -90.0 || window.max_y == 90.0;
            let bound = match polar {
                true => BBox::new(-180.0, south, 180.0, north),
                false => BBox::new(window.min_x, south, window.max_x, north),
            };
            for wkb in &got {
                assert!(
                    xy_box(wkb).is_some_and(|b| intersects(&b, &bound)),
                    "{what}: {:?}",
                    coords(wkb)
                );
            }
        }
        compared += 1;
    }
    compared
}

fn options_for(rel: &str) -> ImportOptions {
    let name = rel.rsplit('/').next().unwrap();
    let rows_per_file = if name.starts_with("geography-") {
        10
    } else if name == "geospatial.parquet" {
        50
    } else {
        1_000_000
    };
    ImportOptions::default().rows_per_file(rows_per_file)
}

#[test]
fn every_file_imports_or_is_refused_with_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    let cat = catalog(dir.path());
    let (mut imported, mut compared) = (0, 0);
    let mut seen: HashMap<&'static str, usize> = HashMap::new();
    for (rel, path) in files() {
        let expect = expectation(&rel);
        *seen
            .entry(match expect {
                Expect::Imports(_) => "imports",
                Expect::Native => "native",
                Expect::NotDeclarable => "not declarable",
                Expect::Conflict => "conflict",
            })
            .or_default() += 1;
        let ident = table_name(&rel);
        let location = path.to_str().unwrap();
        let options = options_for(&rel);
        let result = import_parquet(cat.clone(), &ident, location, &options);
        let report = match (&expect, result) {
            (Expect::Imports(ty), Ok(report)) => {
                let ddl = report.table.show_create_table("geoberg");
                assert!(
                    ddl.contains(&format!("{} {ty}", report.geometry_columns[0].0)),
                    "{rel}: {ddl}"
                );
                report
            }
            (Expect::Native, Err(e)) => {
                let msg = e.to_string();
                let encoding = native_encoding(&path);
                assert!(matches!(e, Error::Unsupported { .. }), "{rel}: {e:?}");
                assert!(
                    msg.contains(&format!("{encoding:?}")) && msg.contains("WKB"),
                    "{rel}: {msg}"
                );
                assert!(cat.metadata_location(&ident).unwrap().is_none(), "{rel}");
                continue;
            }
            (Expect::NotDeclarable, Err(e)) => {
                let msg = e.to_string();
                assert!(matches!(e, Error::ImportCrs { .. }), "{rel}: {e:?}");
                for part in [
                    "reproject",
                    "geometry(0)",
                    "format-version 2",
                    "--srid 0",
                    "geoberg.source-crs.geometry",
                ] {
                    assert!(msg.contains(part), "{rel}: {part:?} missing from: {msg}");
                }
                assert!(cat.metadata_location(&ident).unwrap().is_none(), "{rel}");
                let report =
                    import_parquet(cat.clone(), &ident, location, &options.clone().srid(0))
                        .unwrap_or_else(|e| panic!("{rel} with srid 0: {e}"));
                let props = report.table.metadata().properties();
                let recorded = props
                    .get("geoberg.source-crs.geometry")
                    .unwrap_or_else(|| panic!("{rel}: no source CRS property"));
                let declared = if rel.contains("utm") {
                    "32618"
                } else if rel.contains("custom") {
                    "ProjectedCRS"
                } else {
                    "5070"
                };
                assert!(recorded.contains(declared), "{rel}: {recorded}");
                let ddl = report.table.show_create_table("geoberg");
                assert!(ddl.contains("geometry GEOMETRY(0)"), "{rel}: {ddl}");
                report
            }
            (Expect::Conflict, Err(e)) => {
                let msg = e.to_string();
                assert!(matches!(e, Error::ImportCrsConflict { .. }), "{rel}: {e:?}");
                assert!(
                    msg.contains("OGC:CRS84") && msg.contains("EPSG:4326"),
                    "{rel}: {msg}"
                );
                let report =
                    import_parquet(cat.clone(), &ident, location, &options.clone().srid(4326))
                        .unwrap_or_else(|e| panic!("{rel} with srid 4326: {e}"));
                assert!(matches!(
                    report.geometry_columns[0].1,
                    ColumnType::Geometry { .. }
                ));
                report
            }
            (expect, result) => panic!("{rel}: expected {expect:?}, got {result:?}"),
        };
        compared += check_imported(&rel, &path, &report, options.rows_per_file);
        imported += 1;
    }
    assert_eq!(seen["native"], 24, "{seen:?}");
    assert_eq!(seen["not declarable"], 7, "{seen:?}");
    assert_eq!(seen["conflict"], 1, "{seen:?}");
    assert_eq!(
        imported,
        seen["imports"] + seen["not declarable"] + seen["conflict"],
        "every file but the GeoArrow-native ones imports"
    );
    assert!(imported >= 90, "{imported} files imported");
    assert!(compared >= 700, "{compared} comparisons");
}

/// The GeoParquet encoding of a `_native` file (read with serde_json, for the message check).
fn native_encoding(path: &Path) -> String {
    let r = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
    let geo = r
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .unwrap()
        .iter()
        .find(|k| k.key == "geo")
        .unwrap()
        .value
        .clone()
        .unwrap();
    let g: Value = serde_json::from_str(&geo).unwrap();
    g["columns"]["geometry"]["encoding"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Importing the same file again into the same table appends to it, in one more commit.
#[test]
fn a_second_import_appends_in_one_commit() {
    let dir = tempfile::tempdir().unwrap();
    let cat = catalog(dir.path());
    let path = realdata().join("parquet-testing/geospatial.parquet");
    let ident = TableIdent::new("imported", "twice").unwrap();
    let options = ImportOptions::default().rows_per_file(60);
    let first = import_parquet(cat.clone(), &ident, path.to_str().unwrap(), &options).unwrap();
    assert!(first.created && first.data_files > 1);
    let second = import_parquet(cat.clone(), &ident, path.to_str().unwrap(), &options).unwrap();
    assert!(!second.created);
    let table = Table::load(cat, &ident).unwrap();
    assert_eq!(table.metadata().snapshots().count(), 2);
    let (rows, _) = table.scan().execute().unwrap();
    assert_eq!(
        rows.iter().map(RecordBatch::num_rows).sum::<usize>(),
        2 * 196
    );
    // A file whose CRS differs from the table's is refused before anything is written.
    let mercator = realdata().join("geoarrow-data/example-crs/example-crs_vermont-utm.parquet");
    let e = import_parquet(
        table.catalog().clone(),
        &ident,
        mercator.to_str().unwrap(),
        &ImportOptions::default().srid(0),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("GEOMETRY(4326)") && e.contains("GEOMETRY(0)"),
        "{e}"
    );
    assert_eq!(table.refresh().unwrap().metadata().snapshots().count(), 2);
}
