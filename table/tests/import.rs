//! `import_parquet` on files written here with the `parquet` crate, for what the real files of
//! `shared/realdata` do not have: a GeoParquet 1.1 `bbox` covering struct, EWKB values whose
//! SRID contradicts the file, a commit that fails. Oracles: the rows the test wrote, and the
//! files left on disk.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_array::{ArrayRef, BinaryArray, Float64Array, Int64Array, RecordBatch, StructArray};
use arrow_schema::{DataType as ArrowType, Field, Fields, Schema};
use common::{ewkb_point, wkb_point};
use geoberg_table::testing::{Fault, FaultyCatalog};
use geoberg_table::{
    BBox, Catalog, Error, ImportOptions, SqliteCatalog, Table, TableIdent, import_parquet,
};
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

const GEO_1_1: &str = r#"{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{
    "encoding":"WKB","geometry_types":["Point"],
    "covering":{"bbox":{"xmin":["bbox","xmin"],"ymin":["bbox","ymin"],
                        "xmax":["bbox","xmax"],"ymax":["bbox","ymax"]}}}}}"#;

fn bbox_fields() -> Fields {
    Fields::from(
        ["xmin", "ymin", "xmax", "ymax"]
            .map(|n| Field::new(n, ArrowType::Float64, true))
            .to_vec(),
    )
}

/// Points `(i % 10 * 10, i / 10)` in row groups of `group` rows: `id`, the `bbox` covering
/// struct, `geometry` (WKB; EWKB with `srid` from row `ewkb_from` on).
fn write_file(
    path: &Path,
    rows: usize,
    group: usize,
    ewkb_from: Option<(usize, u32)>,
) -> Vec<(f64, f64)> {
    let xy: Vec<(f64, f64)> = (0..rows)
        .map(|i| ((i % 10) as f64 * 10.0, (i / 10) as f64))
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("bbox", ArrowType::Struct(bbox_fields()), true),
        Field::new("geometry", ArrowType::Binary, true),
    ]));
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(group))
        .set_key_value_metadata(Some(vec![KeyValue::new("geo".into(), GEO_1_1.to_string())]))
        .build();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        schema.clone(),
        Some(props),
    )
    .unwrap();
    let x: Float64Array = xy.iter().map(|p| p.0).collect();
    let y: Float64Array = xy.iter().map(|p| p.1).collect();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(x.clone()),
        Arc::new(y.clone()),
        Arc::new(x),
        Arc::new(y),
    ];
    let bbox = StructArray::new(bbox_fields(), cols, None);
    let geoms =
        BinaryArray::from_iter_values(xy.iter().enumerate().map(|(i, &(x, y))| match ewkb_from {
            Some((from, srid)) if i >= from => ewkb_point(x, y, srid),
            _ => wkb_point(x, y),
        }));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..rows as i64)),
            Arc::new(bbox),
            Arc::new(geoms),
        ],
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    xy
}

fn catalog(dir: &Path) -> Arc<dyn Catalog> {
    Arc::new(SqliteCatalog::open(dir.join("catalog.db"), "geoberg", dir.join("warehouse")).unwrap())
}

fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.insert(e.path());
            }
        }
    }
    out
}

#[test]
fn a_geoparquet_1_1_file_with_a_bbox_covering_imports_with_its_bbox_struct() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("covering.parquet");
    let xy = write_file(&file, 200, 50, None);
    let cat = catalog(dir.path());
    let ident = TableIdent::new("geo", "covered").unwrap();
    let report = import_parquet(
        cat,
        &ident,
        file.to_str().unwrap(),
        &ImportOptions::default().rows_per_file(100),
    )
    .unwrap();
    assert_eq!((report.rows, report.data_files), (200, 2));
    let table = report.table;
    let ddl = table.show_create_table("geoberg");
    assert!(
        ddl.contains("bbox STRUCT<xmin: DOUBLE, ymin: DOUBLE, xmax: DOUBLE, ymax: DOUBLE>")
            && ddl.contains("geometry GEOMETRY(4326)"),
        "{ddl}"
    );
    let property = &table.metadata().properties()["geoberg.bbox-columns.geometry"];
    let names = geoberg_table::parse_bbox_columns_property("k", property).unwrap();
    assert_eq!(names.min_x, "bbox.xmin");
    assert_eq!(names.max_y, "bbox.ymax");
    // The struct's leaves carry bounds in the manifests: what engines that only know numbers
    // prune on.
    let xmin = table
        .metadata()
        .current_schema()
        .field_by_name("bbox.xmin")
        .unwrap()
        .id;
    for f in table.data_files().unwrap() {
        assert!(f.lower_bounds().contains_key(&xmin));
    }
    let window = BBox::new(15.0, 2.0, 35.0, 8.0);
    let (rows, explain) = table
        .scan()
        .with_window("geometry", window)
        .execute()
        .unwrap();
    let mut got: Vec<(f64, f64)> = rows
        .iter()
        .flat_map(|b| {
            let s = b.column_by_name("bbox").unwrap().as_struct();
            let x = s.column(0).as_primitive::<Float64Type>().clone();
            let y = s.column(1).as_primitive::<Float64Type>().clone();
            (0..b.num_rows())
                .map(move |i| (x.value(i), y.value(i)))
                .collect::<Vec<_>>()
        })
        .collect();
    got.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mut want: Vec<(f64, f64)> = xy
        .iter()
        .copied()
        .filter(|&(x, y)| (15.0..=35.0).contains(&x) && (2.0..=8.0).contains(&y))
        .collect();
    want.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(got, want);
    assert_eq!(explain.files_skipped, 1, "{explain}");
}

#[test]
fn an_import_that_fails_half_way_commits_nothing_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mixed.parquet");
    // The third row group's values say EWKB SRID 3857: the 4326 column refuses them, after
    // two data files are written.
    write_file(&file, 150, 50, Some((100, 3857)));
    let cat = catalog(dir.path());
    let ident = TableIdent::new("geo", "mixed").unwrap();
    let warehouse = dir.path().join("warehouse");
    let e = import_parquet(
        cat.clone(),
        &ident,
        file.to_str().unwrap(),
        &ImportOptions::default().rows_per_file(50),
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::ImportFailed { .. }), "{e:?}");
    for part in [
        "3857",
        "Nothing was committed",
        "the 2 data files it wrote were removed",
        "the table it created was dropped",
        "running the import again is safe",
    ] {
        assert!(msg.contains(part), "{part:?} missing: {msg}");
    }
    assert!(cat.metadata_location(&ident).unwrap().is_none());
    assert!(
        files_under(&warehouse).is_empty(),
        "{:?}",
        files_under(&warehouse)
    );

    // Into an existing table: the table keeps its one snapshot and its files.
    let good = dir.path().join("good.parquet");
    write_file(&good, 100, 50, None);
    let table = import_parquet(
        cat.clone(),
        &ident,
        good.to_str().unwrap(),
        &ImportOptions::default(),
    )
    .unwrap()
    .table;
    let before = files_under(&warehouse);
    let e = import_parquet(
        cat.clone(),
        &ident,
        file.to_str().unwrap(),
        &ImportOptions::default().rows_per_file(50),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("Nothing was committed") && !e.contains("dropped"),
        "{e}"
    );
    assert_eq!(files_under(&warehouse), before);
    let table = table.refresh().unwrap();
    assert_eq!(table.metadata().snapshots().count(), 1);
}

#[test]
fn importing_a_single_row_group_file_reads_each_byte_about_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one_group.parquet");
    // One row group of 200 k rows: about ten pages per column, each page header found by
    // reading forward from its offset.
    let rows = 200_000;
    write_file(&file, rows, rows, None);
    let size = std::fs::metadata(&file).unwrap().len();
    let faulty = Arc::new(FaultyCatalog::new(catalog(dir.path())));
    let ident = TableIdent::new("geo", "one_group").unwrap();
    let report = import_parquet(
        faulty.clone(),
        &ident,
        file.to_str().unwrap(),
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(
        report
            .table
            .scan()
            .execute()
            .unwrap()
            .0
            .iter()
            .map(|b| b.num_rows())
            .sum::<usize>(),
        rows
    );
    // Each page header used to be read with the rest of the file behind it: 48 times the
    // file here, quadratic in its size. Now each page's header fetch overlaps its page by at
    // most 1 KiB.
    let read = faulty.bytes_read("one_group.parquet");
    assert!(
        read >= size && read <= size + size / 20,
        "read {read} bytes of a {size}-byte file"
    );
}

#[test]
fn a_failed_commit_removes_the_files_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("points.parquet");
    write_file(&file, 100, 25, None);
    let inner = catalog(dir.path());
    let faulty = Arc::new(FaultyCatalog::new(inner.clone()));
    let ident = TableIdent::new("geo", "faulty").unwrap();
    // Writes: the new table's metadata, four data files, then the commit's manifest: fail it.
    faulty.inject(Fault::Write(6));
    let e = import_parquet(
        faulty.clone(),
        &ident,
        file.to_str().unwrap(),
        &ImportOptions::default().rows_per_file(25),
    )
    .unwrap_err();
    assert!(faulty.fired());
    let msg = e.to_string();
    assert!(
        msg.contains("injected fault") && msg.contains("the 4 data files it wrote were removed"),
        "{msg}"
    );
    assert!(inner.metadata_location(&ident).unwrap().is_none());
    assert!(files_under(&dir.path().join("warehouse")).is_empty());
    // Run again: it is safe, and it imports.
    faulty.inject(Fault::None);
    let report = import_parquet(
        faulty,
        &ident,
        file.to_str().unwrap(),
        &ImportOptions::default().rows_per_file(25),
    )
    .unwrap();
    assert_eq!(report.rows, 100);
    assert_eq!(
        Table::load(inner, &ident)
            .unwrap()
            .data_files()
            .unwrap()
            .len(),
        4
    );
}

/// A file of plain WKB points (no GeoParquet metadata, no GEOMETRY logical type): `id`,
/// `geometry`.
fn write_plain_file(path: &Path, points: &[(f64, f64)]) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("geometry", ArrowType::Binary, true),
    ]));
    let mut w =
        ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema.clone(), None).unwrap();
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..points.len() as i64)),
            Arc::new(BinaryArray::from_iter_values(
                points.iter().map(|&(x, y)| wkb_point(x, y)),
            )),
        ],
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

#[test]
fn plain_wkb_goes_into_an_existing_geography_column_and_declared_geometry_does_not() {
    use geoberg_table::{Column, CreateTable, DataType};
    let dir = tempfile::tempdir().unwrap();
    let cat = catalog(dir.path());
    cat.create_namespace("geo").unwrap();
    let ident = TableIdent::new("geo", "stations").unwrap();
    CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geometry", DataType::parse("geography(4326)").unwrap()),
    ])
    .create(cat.clone(), &ident)
    .unwrap();
    // Seed 004: a value with no SRID is stored under the geography column's CRS.
    let plain = dir.path().join("plain.parquet");
    write_plain_file(&plain, &[(179.5, 1.0), (-179.5, -1.0), (0.0, 0.0)]);
    let report = import_parquet(
        cat.clone(),
        &ident,
        plain.to_str().unwrap(),
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(report.rows, 3);
    assert!(
        report.column_type.to_string().contains("geography"),
        "{}",
        report.column_type
    );
    // Read on the sphere: a window across the antimeridian holds the two points beside it.
    let (rows, _) = report
        .table
        .scan()
        .with_window("geometry", BBox::new(179.0, -2.0, -179.0, 2.0))
        .exact(true)
        .execute()
        .unwrap();
    assert_eq!(rows.iter().map(|b| b.num_rows()).sum::<usize>(), 2);

    // --srid 0 (geometry(0), no CRS), and a file that declares planar geometry: refused,
    // naming the fix.
    let err = import_parquet(
        cat.clone(),
        &ident,
        plain.to_str().unwrap(),
        &ImportOptions::default().srid(0),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("--srid") && err.contains("great-circle"),
        "{err}"
    );
    let declared = dir.path().join("declared.parquet");
    write_file(&declared, 10, 10, None);
    let err = import_parquet(
        cat,
        &ident,
        declared.to_str().unwrap(),
        &ImportOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("ST_GeomToGeography"), "{err}");
}
