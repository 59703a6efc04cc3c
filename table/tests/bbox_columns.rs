//! Bbox columns under the names other writers use prune files: `bbox_xmin`..., `minx`...,
//! a GeoParquet-style `bbox` struct, and columns named by `geoberg.bbox-columns.<geom>`, on a
//! format-version 2 table whose geometry is plain binary WKB (what pyiceberg writes). Pruning
//! stays sound: a file with a geometry but no bbox values is read. Oracle: the points the test
//! appended, filtered by brute force.

mod common;

use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, Float64Array, Int64Array, RecordBatch, StructArray};
use arrow_schema::{DataType as ArrowType, Field, Fields, Schema};
use common::{sqlite_catalog, wkb_point};
use geoberg_table::{BBox, Column, CreateTable, DataType, Error, Table, TableIdent};

/// How a table spells its bbox columns.
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// Four top-level double columns with these names.
    Flat([&'static str; 4]),
    /// A struct column `bbox` with fields xmin, ymin, xmax, ymax.
    Struct,
}

fn create(dir: &std::path::Path, name: &str, layout: Layout, properties: &[(&str, &str)]) -> Table {
    let mut columns = vec![Column::new("id", DataType::Long).required()];
    match layout {
        Layout::Flat(names) => {
            columns.extend(names.map(|n| Column::new(n, DataType::Double)));
        }
        Layout::Struct => columns.push(Column::new(
            "bbox",
            DataType::struct_of(
                ["xmin", "ymin", "xmax", "ymax"].map(|n| Column::new(n, DataType::Double)),
            ),
        )),
    }
    columns.push(Column::new("geom", DataType::Binary));
    let mut create = CreateTable::new(columns).format_version(2);
    for (k, v) in properties {
        create = create.property(*k, *v);
    }
    create
        .create(
            sqlite_catalog(dir),
            &TableIdent::new("test_db", name).unwrap(),
        )
        .unwrap()
}

/// Points in the band `[10 * band, 10 * band + 9]` of longitude; the bbox columns as given
/// (`None`: null while the geometry is not).
fn batch(layout: Layout, band: i64, bbox_missing: bool) -> (RecordBatch, Vec<(i64, f64, f64)>) {
    let points: Vec<(i64, f64, f64)> = (0..40)
        .map(|i| (band * 100 + i, (band * 10 + i % 10) as f64, (i / 10) as f64))
        .collect();
    let col = |f: fn(&(i64, f64, f64)) -> f64| -> ArrayRef {
        Arc::new(
            points
                .iter()
                .map(|p| (!bbox_missing).then(|| f(p)))
                .collect::<Float64Array>(),
        )
    };
    let coords = [col(|p| p.1), col(|p| p.2), col(|p| p.1), col(|p| p.2)];
    let mut fields = vec![Field::new("id", ArrowType::Int64, false)];
    let mut arrays: Vec<ArrayRef> = vec![Arc::new(Int64Array::from_iter_values(
        points.iter().map(|p| p.0),
    ))];
    match layout {
        Layout::Flat(names) => {
            for (n, a) in names.iter().zip(coords) {
                fields.push(Field::new(*n, ArrowType::Float64, true));
                arrays.push(a);
            }
        }
        Layout::Struct => {
            let f = Fields::from(
                ["xmin", "ymin", "xmax", "ymax"]
                    .map(|n| Field::new(n, ArrowType::Float64, true))
                    .to_vec(),
            );
            fields.push(Field::new("bbox", ArrowType::Struct(f.clone()), true));
            arrays.push(Arc::new(StructArray::new(f, coords.to_vec(), None)));
        }
    }
    fields.push(Field::new("geom", ArrowType::Binary, true));
    arrays.push(Arc::new(BinaryArray::from_iter_values(
        points.iter().map(|p| wkb_point(p.1, p.2)),
    )));
    (
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap(),
        points,
    )
}

fn ids(batches: &[RecordBatch]) -> Vec<i64> {
    let mut out: Vec<i64> = batches
        .iter()
        .flat_map(|b| {
            b.column_by_name("id")
                .unwrap()
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    out.sort_unstable();
    out
}

/// Four bands, one file each; a window on band 2 reads one file and returns exactly its rows.
fn prunes(layout: Layout, properties: &[(&str, &str)], names_in_explain: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut table = create(dir.path(), "t", layout, properties);
    let mut all = Vec::new();
    for band in 0..4 {
        let (b, points) = batch(layout, band, false);
        table = table.append(&[b]).unwrap().0;
        all.extend(points);
    }
    let window = BBox::new(21.0, 1.0, 24.0, 2.0);
    let (rows, explain) = table.scan().with_window("geom", window).execute().unwrap();
    let want: Vec<i64> = all
        .iter()
        .filter(|p| (21.0..=24.0).contains(&p.1) && (1.0..=2.0).contains(&p.2))
        .map(|p| p.0)
        .collect();
    assert_eq!(ids(&rows), want, "{layout:?}");
    assert_eq!(
        (explain.files_total, explain.files_read),
        (4, 1),
        "{layout:?}\n{explain}"
    );
    let reasons = explain.reasons.join("\n");
    assert!(reasons.contains(names_in_explain), "{layout:?}: {reasons}");

    // WHERE file selection (rewrite_data_files(where => ...)) uses the same boxes.
    let p =
        geoberg_sql::parse_condition("ST_Intersects(geom, ST_MakeEnvelope(21, 1, 24, 2))").unwrap();
    assert_eq!(table.files_matching(&p).unwrap().len(), 1, "{layout:?}");

    // A file whose rows have a geometry but no bbox values: its bbox bounds cover nothing it
    // holds, so it is read whatever the window.
    let (b, _) = batch(layout, 7, true);
    let table = table.append(&[b]).unwrap().0;
    let explain = table.scan().with_window("geom", window).explain().unwrap();
    assert_eq!(
        (explain.files_total, explain.files_read),
        (5, 2),
        "{layout:?}\n{explain}"
    );
    assert_eq!(table.files_matching(&p).unwrap().len(), 2, "{layout:?}");
}

#[test]
fn other_writers_bbox_names_prune() {
    prunes(
        Layout::Flat(["bbox_xmin", "bbox_ymin", "bbox_xmax", "bbox_ymax"]),
        &[],
        "bbox_xmin, bbox_ymin, bbox_xmax, bbox_ymax (found by their conventional names)",
    );
    prunes(
        Layout::Flat(["minx", "miny", "maxx", "maxy"]),
        &[],
        "minx, miny, maxx, maxy",
    );
    prunes(
        Layout::Struct,
        &[],
        "bbox.xmin, bbox.ymin, bbox.xmax, bbox.ymax",
    );
    prunes(
        Layout::Flat(["lo_x", "lo_y", "hi_x", "hi_y"]),
        &[(
            "geoberg.bbox-columns.geom",
            r#"{"xmin": "lo_x", "ymin": "lo_y", "xmax": "hi_x", "ymax": "hi_y"}"#,
        )],
        "found by table property geoberg.bbox-columns.geom",
    );
    prunes(
        Layout::Struct,
        &[("geoberg.bbox-columns.geom", r#""bbox""#)],
        "found by table property",
    );
}

#[test]
fn without_bbox_columns_every_file_is_read_and_explain_names_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let mut table = create(dir.path(), "t", Layout::Flat(["a", "b", "c", "d"]), &[]);
    for band in 0..2 {
        table = table
            .append(&[batch(Layout::Flat(["a", "b", "c", "d"]), band, false).0])
            .unwrap()
            .0;
    }
    let explain = table
        .scan()
        .with_window("geom", BBox::new(0.0, 0.0, 1.0, 1.0))
        .explain()
        .unwrap();
    assert_eq!(explain.files_read, 2);
    let reasons = explain.reasons.join("\n");
    assert!(
        reasons.contains("bbox_xmin") && reasons.contains("geoberg.bbox-columns.geom"),
        "{reasons}"
    );
}

#[test]
fn a_property_naming_missing_columns_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let table = create(
        dir.path(),
        "t",
        Layout::Flat(["a", "b", "c", "d"]),
        &[(
            "geoberg.bbox-columns.geom",
            r#"{"xmin": "a", "ymin": "b", "xmax": "c", "ymax": "zz"}"#,
        )],
    );
    let table = table
        .append(&[batch(Layout::Flat(["a", "b", "c", "d"]), 0, false).0])
        .unwrap()
        .0;
    let e = table
        .scan()
        .with_window("geom", BBox::new(0.0, 0.0, 1.0, 1.0))
        .explain()
        .unwrap_err();
    assert!(matches!(e, Error::InvalidProperty { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("geoberg.bbox-columns.geom") && msg.contains("\"zz\""),
        "{msg}"
    );
    let e = create(
        dir.path(),
        "bad_json",
        Layout::Flat(["a", "b", "c", "d"]),
        &[("geoberg.bbox-columns.geom", r#"{"xmin": "a"}"#)],
    )
    .properties()
    .unwrap_err()
    .to_string();
    assert!(e.contains("\"ymin\" is missing"), "{e}");
}
