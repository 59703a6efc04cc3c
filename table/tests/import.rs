//! `import_parquet` on files written here with the `parquet` crate, for what the real files of
//! `shared/realdata` do not have: a GeoParquet 1.1 `bbox` covering struct, EWKB values whose
//! SRID contradicts the file, a commit that fails, a file without geometry, files with two
//! geometry columns. Oracles: the rows and points the test wrote (bounds and windows computed
//! from them by plain min / max and brute force), and the files left on disk.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, Decimal128Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray, StructArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType as ArrowType, Field, Fields, Schema};
use common::{ewkb_point, wkb_point};
use geoberg_geostats::{GeoKind, decode_geospatial_bounds};
use geoberg_table::testing::{Fault, FaultyCatalog};
use geoberg_table::{
    BBox, Catalog, Error, ImportOptions, SqliteCatalog, Table, TableIdent, import_parquet,
};
use iceberg::spec::{Datum, PrimitiveLiteral};
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
        report.geometry_columns[0]
            .1
            .to_string()
            .contains("geography"),
        "{:?}",
        report.geometry_columns
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

// ---------------------------------------------------------------------------------------------
// Files with no geometry, and files with several geometry columns (#30).

/// Writes `batch` as Parquet in row groups of `group` rows, with GeoParquet `geo` metadata
/// when given.
fn write_batch(path: &Path, batch: &RecordBatch, group: usize, geo: Option<&str>) {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(group))
        .set_key_value_metadata(geo.map(|g| vec![KeyValue::new("geo".into(), g.to_string())]))
        .build();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        batch.schema(),
        Some(props),
    )
    .unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

/// A number in [0, 1) fixed by `i` and `salt` (the fractional part of a golden-ratio walk).
fn scatter(i: usize, salt: f64) -> f64 {
    ((i as f64 + 1.0) * (0.618_033_988_749_895 + salt)).fract()
}

/// Every row of the table, in `id` order.
fn scan_sorted_by_id(table: &Table) -> RecordBatch {
    let (batches, _) = table.scan().execute().unwrap();
    let schema = batches[0].schema();
    let all = arrow_select::concat::concat_batches(&schema, &batches).unwrap();
    let ids = all.column_by_name("id").unwrap().clone();
    let order = arrow_ord::sort::sort_to_indices(&ids, None, None).unwrap();
    arrow_select::take::take_record_batch(&all, &order).unwrap()
}

/// Row `row` of `array` as text (types that differ only in names or metadata print alike).
fn shown(array: &dyn Array, row: usize) -> String {
    let options = arrow_cast::display::FormatOptions::default().with_null("NULL");
    arrow_cast::display::ArrayFormatter::try_new(array, &options)
        .unwrap()
        .value(row)
        .to_string()
}

/// The ids of rows of `table` that a window on `column` returns.
fn ids_in_window(table: &Table, column: &str, window: BBox) -> Vec<i64> {
    let (rows, _) = table.scan().with_window(column, window).execute().unwrap();
    let mut ids: Vec<i64> = rows
        .iter()
        .flat_map(|b| {
            b.column_by_name("id")
                .unwrap()
                .as_primitive::<Int64Type>()
                .values()
                .to_vec()
        })
        .collect();
    ids.sort_unstable();
    ids
}

/// The ids of `points` inside `window`, by brute force.
fn brute_force(points: &[(f64, f64)], window: BBox) -> Vec<i64> {
    points
        .iter()
        .enumerate()
        .filter(|&(_, &(x, y))| {
            x >= window.min_x && x <= window.max_x && y >= window.min_y && y <= window.max_y
        })
        .map(|(i, _)| i as i64)
        .collect()
}

/// `[min_x, min_y, max_x, max_y]` of `points`, by plain f64 min / max.
fn extent(points: &[(f64, f64)]) -> [f64; 4] {
    points.iter().fold(
        [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ],
        |[a, b, c, d], &(x, y)| [a.min(x), b.min(y), c.max(x), d.max(y)],
    )
}

/// The table's type of each geometry column of a report, as SQL types.
fn column_types(report: &geoberg_table::ImportReport) -> Vec<(String, String)> {
    report
        .geometry_columns
        .iter()
        .map(|(c, t)| {
            (
                c.clone(),
                geoberg_table::DataType::Geo(t.clone()).to_string(),
            )
        })
        .collect()
}

#[test]
fn a_file_without_geometry_imports_with_every_column_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let rows = 300;
    // A benchmark's customer table: no geometry, a decimal, a struct and a list, with nulls.
    let address = Fields::from(vec![
        Field::new("city", ArrowType::Utf8, true),
        Field::new("zip", ArrowType::Int32, true),
    ]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("balance", ArrowType::Decimal128(12, 2), true),
        Field::new("address", ArrowType::Struct(address.clone()), true),
        Field::new(
            "phones",
            ArrowType::List(Arc::new(Field::new("item", ArrowType::Int64, true))),
            true,
        ),
        // A binary column that is not geometry: it stays binary.
        Field::new("photo", ArrowType::Binary, true),
    ]));
    let balance: Decimal128Array = (0..rows)
        .map(|i| (i % 7 != 3).then_some(i as i128 * 1_234_567 - 99_999))
        .collect::<Decimal128Array>()
        .with_precision_and_scale(12, 2)
        .unwrap();
    let city: StringArray = (0..rows)
        .map(|i| (i % 5 != 0).then(|| format!("city-{}", i % 13)))
        .collect();
    let zip: Int32Array = (0..rows).map(|i| Some(10_000 + i as i32)).collect();
    let address = StructArray::new(
        address,
        vec![Arc::new(city), Arc::new(zip)],
        Some(NullBuffer::from_iter((0..rows).map(|i| i % 11 != 4))),
    );
    let mut phones = ListBuilder::new(Int64Builder::new());
    for i in 0..rows {
        if i % 9 == 2 {
            phones.append_null();
        } else {
            for k in 0..(i % 3) {
                phones
                    .values()
                    .append_value(5_550_000 + (i * 10 + k) as i64);
            }
            phones.append(true);
        }
    }
    let photo = BinaryArray::from_iter((0..rows).map(|i| (i % 4 != 1).then(|| vec![i as u8; 3])));
    let source = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..rows as i64)),
            Arc::new(balance),
            Arc::new(address),
            Arc::new(phones.finish()),
            Arc::new(photo),
        ],
    )
    .unwrap();
    let file = dir.path().join("customer.parquet");
    write_batch(&file, &source, 100, None);

    let cat = catalog(dir.path());
    let ident = TableIdent::new("bench", "customer").unwrap();
    let report = import_parquet(
        cat.clone(),
        &ident,
        file.to_str().unwrap(),
        &ImportOptions::default().rows_per_file(200),
    )
    .unwrap();
    assert!(report.geometry_columns.is_empty());
    assert_eq!((report.rows, report.data_files), (300, 2));
    let note = report.notes.join("\n");
    assert!(
        note.contains("without geometry") && note.contains("--geometry-column"),
        "{note}"
    );
    let table = report.table;
    assert!(table.geo_columns().is_empty());
    let ddl = table.show_create_table("geoberg");
    for part in [
        "id BIGINT NOT NULL",
        "balance DECIMAL(12, 2)",
        "address STRUCT<city: STRING, zip: INT>",
        "photo BINARY",
    ] {
        assert!(ddl.contains(part), "{part}: {ddl}");
    }
    // Every value read back through the table's scan equals the one written.
    let read = scan_sorted_by_id(&table);
    assert_eq!(read.num_rows(), rows);
    for (i, field) in source.schema().fields().iter().enumerate() {
        let want = source.column(i);
        let got = read.column_by_name(field.name()).unwrap();
        assert_eq!(got.null_count(), want.null_count(), "{}", field.name());
        for row in 0..rows {
            assert_eq!(
                shown(got, row),
                shown(want, row),
                "{} row {row}",
                field.name()
            );
        }
    }
    assert_eq!(
        read.column_by_name("balance").unwrap().data_type(),
        &ArrowType::Decimal128(12, 2)
    );

    // --srid without a geometry column is refused, naming both ways out; nothing changes.
    let e = import_parquet(
        cat.clone(),
        &ident,
        file.to_str().unwrap(),
        &ImportOptions::default().srid(4326),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("--srid") && e.contains("--geometry-column"),
        "{e}"
    );
    // Naming a column that is not binary WKB keeps its error.
    let e = import_parquet(
        cat.clone(),
        &ident,
        file.to_str().unwrap(),
        &ImportOptions::default().geometry_column("balance"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("not binary WKB"), "{e}");
    assert_eq!(
        Table::load(cat.clone(), &ident)
            .unwrap()
            .metadata()
            .snapshots()
            .count(),
        1
    );

    // A conventional name over text (WKT) is not guessed to be WKB: imported as it is.
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("geometry", ArrowType::Utf8, true),
    ]));
    let wkt = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values([1, 2])),
            Arc::new(StringArray::from(vec!["POINT (1 2)", "POINT (3 4)"])),
        ],
    )
    .unwrap();
    let file = dir.path().join("wkt.parquet");
    write_batch(&file, &wkt, 10, None);
    let report = import_parquet(
        cat,
        &TableIdent::new("bench", "wkt").unwrap(),
        file.to_str().unwrap(),
        &ImportOptions::default(),
    )
    .unwrap();
    assert!(report.geometry_columns.is_empty());
    assert!(
        report.notes[0].contains("its \"geometry\" is Utf8"),
        "{:?}",
        report.notes
    );
    assert!(
        report
            .table
            .show_create_table("geoberg")
            .contains("geometry STRING")
    );
}

/// Points `(x, y)`, one a row.
type Points = Vec<(f64, f64)>;

/// Trips: `id`, `fare`, `pickup` (WKB, longitude and latitude) and `dropoff` (WKB, Web
/// Mercator metres), no geometry metadata. Returns the pickup and drop-off points.
fn write_trips(path: &Path, rows: usize, salt: f64) -> (Points, Points) {
    let pickup: Vec<(f64, f64)> = (0..rows)
        .map(|i| {
            (
                -74.1 + 0.4 * scatter(i, salt),
                40.5 + 0.4 * scatter(i, salt + 0.1),
            )
        })
        .collect();
    let dropoff: Vec<(f64, f64)> = (0..rows)
        .map(|i| {
            (
                -8_250_000.0 + 50_000.0 * scatter(i, salt + 0.2),
                4_950_000.0 + 50_000.0 * scatter(i, salt + 0.3),
            )
        })
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("fare", ArrowType::Float64, true),
        Field::new("pickup", ArrowType::Binary, true),
        Field::new("dropoff", ArrowType::Binary, true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..rows as i64)),
            Arc::new(Float64Array::from_iter_values(
                (0..rows).map(|i| 5.0 + i as f64 / 4.0),
            )),
            Arc::new(BinaryArray::from_iter_values(
                pickup.iter().map(|&(x, y)| wkb_point(x, y)),
            )),
            Arc::new(BinaryArray::from_iter_values(
                dropoff.iter().map(|&(x, y)| wkb_point(x, y)),
            )),
        ],
    )
    .unwrap();
    write_batch(path, &batch, 50, None);
    (pickup, dropoff)
}

/// A data file's Iceberg bounds of a column: a long's value, a geometry's box.
fn long_bound(d: Option<&Datum>) -> i64 {
    match d.map(|d| d.literal()) {
        Some(PrimitiveLiteral::Long(v)) => *v,
        other => panic!("not a long bound: {other:?}"),
    }
}

fn geo_bounds(f: &iceberg::spec::DataFile, field_id: i32) -> [f64; 4] {
    let binary = |d: Option<&Datum>| match d.map(|d| d.literal()) {
        Some(PrimitiveLiteral::Binary(b)) => b.clone(),
        other => panic!("field {field_id}: not a binary bound: {other:?}"),
    };
    let b = decode_geospatial_bounds(
        GeoKind::Geometry,
        &binary(f.lower_bounds().get(&field_id)),
        &binary(f.upper_bounds().get(&field_id)),
    )
    .unwrap();
    [b.min_x, b.min_y, b.max_x, b.max_y]
}

fn trips_options() -> ImportOptions {
    // --srid 4326 --geometry-column pickup --geometry-column dropoff:3857
    ImportOptions::default()
        .srid(4326)
        .geometry_column("pickup")
        .geometry_column("dropoff")
        .column_srid("dropoff", 3857)
        .rows_per_file(100)
}

#[test]
fn two_plain_wkb_columns_named_become_two_geometry_columns_with_their_own_srids() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("trips.parquet");
    let rows = 400;
    let (pickup, dropoff) = write_trips(&file, rows, 0.0);
    let cat = catalog(dir.path());
    let ident = TableIdent::new("bench", "trips").unwrap();
    let report = import_parquet(cat, &ident, file.to_str().unwrap(), &trips_options()).unwrap();
    assert_eq!(
        column_types(&report),
        [
            ("pickup".to_string(), "GEOMETRY(4326)".to_string()),
            ("dropoff".to_string(), "GEOMETRY(3857)".to_string()),
        ]
    );
    assert_eq!((report.rows, report.data_files), (400, 4));
    let table = report.table;
    assert_eq!(table.metadata().snapshots().count(), 1, "one commit");
    let schema = table.metadata().current_schema().clone();
    let id_of = |c: &str| schema.field_by_name(c).unwrap().id;
    // Each data file holds a run of ids; its bounds of each column are the plain min / max of
    // the points written for those rows.
    let files = table.data_files().unwrap();
    assert_eq!(files.len(), 4);
    for f in &files {
        let lo = long_bound(f.lower_bounds().get(&id_of("id"))) as usize;
        let hi = long_bound(f.upper_bounds().get(&id_of("id"))) as usize;
        assert_eq!(hi - lo + 1, f.record_count() as usize);
        assert_eq!(
            geo_bounds(f, id_of("pickup")),
            extent(&pickup[lo..=hi]),
            "pickup of rows {lo}..={hi}"
        );
        assert_eq!(
            geo_bounds(f, id_of("dropoff")),
            extent(&dropoff[lo..=hi]),
            "dropoff of rows {lo}..={hi}"
        );
    }
    // A window on the second column returns exactly the rows brute force finds.
    let window = BBox::new(-8_240_000.0, 4_960_000.0, -8_225_000.0, 4_980_000.0);
    let want = brute_force(&dropoff, window);
    assert!(!want.is_empty() && want.len() < rows / 2, "{}", want.len());
    assert_eq!(ids_in_window(&table, "dropoff", window), want);
    let window = BBox::new(-74.0, 40.6, -73.9, 40.75);
    assert_eq!(
        ids_in_window(&table, "pickup", window),
        brute_force(&pickup, window)
    );
}

#[test]
fn a_second_import_into_a_table_with_two_geometry_columns_appends_to_both() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("trips-1.parquet");
    let second = dir.path().join("trips-2.parquet");
    let (mut pickup, mut dropoff) = write_trips(&first, 200, 0.0);
    let (pickup_2, dropoff_2) = write_trips(&second, 200, 0.05);
    let cat = catalog(dir.path());
    let ident = TableIdent::new("bench", "trips").unwrap();
    import_parquet(
        cat.clone(),
        &ident,
        first.to_str().unwrap(),
        &trips_options(),
    )
    .unwrap();

    // Without names, the file's binary `pickup` would arrive untyped: refused, naming the
    // flag; and a drop-off labelled 4326 does not go into the 3857 column. The table stays.
    let e = import_parquet(
        cat.clone(),
        &ident,
        second.to_str().unwrap(),
        &ImportOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("--geometry-column pickup") && e.contains("GEOMETRY(4326)"),
        "{e}"
    );
    let e = import_parquet(
        cat.clone(),
        &ident,
        second.to_str().unwrap(),
        &ImportOptions::default()
            .srid(4326)
            .geometry_column("pickup")
            .geometry_column("dropoff"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("\"dropoff\"") && e.contains("GEOMETRY(3857)") && e.contains("GEOMETRY(4326)"),
        "{e}"
    );
    assert_eq!(
        Table::load(cat.clone(), &ident)
            .unwrap()
            .metadata()
            .snapshots()
            .count(),
        1
    );

    let report = import_parquet(
        cat.clone(),
        &ident,
        second.to_str().unwrap(),
        &trips_options(),
    )
    .unwrap();
    assert!(!report.created);
    assert_eq!(report.rows, 200);
    assert_eq!(column_types(&report)[1].1, "GEOMETRY(3857)");
    let table = report.table;
    assert_eq!(table.metadata().snapshots().count(), 2);
    // Both imports' rows (ids 0..200 twice), found through both columns.
    pickup.extend(pickup_2);
    dropoff.extend(dropoff_2);
    let key = |ids: Vec<i64>| {
        let mut ids: Vec<i64> = ids.into_iter().map(|i| i % 200).collect();
        ids.sort_unstable();
        ids
    };
    let window = BBox::new(-8_245_000.0, 4_955_000.0, -8_220_000.0, 4_975_000.0);
    let got = ids_in_window(&table, "dropoff", window);
    assert_eq!(got.len(), brute_force(&dropoff, window).len());
    assert_eq!(key(got), key(brute_force(&dropoff, window)));
    let window = BBox::new(-74.05, 40.55, -73.85, 40.7);
    let got = ids_in_window(&table, "pickup", window);
    assert_eq!(key(got), key(brute_force(&pickup, window)));
}

#[test]
fn a_geoparquet_file_with_two_geometry_columns_types_both_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let rows = 120;
    let origin: Vec<(f64, f64)> = (0..rows)
        .map(|i| (20_000.0 * scatter(i, 0.2), 30_000.0 * scatter(i, 0.3)))
        .collect();
    let site: Vec<(f64, f64)> = (0..rows)
        .map(|i| (10.0 * scatter(i, 0.4), 50.0 + 5.0 * scatter(i, 0.5)))
        .collect();
    // `origin` (EPSG:3857, with a bbox covering) comes first in the file; `site` is the
    // primary column (CRS omitted: OGC:CRS84).
    let geo = r#"{"version":"1.1.0","primary_column":"site","columns":{
        "origin":{"encoding":"WKB","geometry_types":["Point"],
                  "crs":{"type":"ProjectedCRS","name":"WGS 84 / Pseudo-Mercator",
                         "id":{"authority":"EPSG","code":3857}},
                  "covering":{"bbox":{"xmin":["origin_bbox","xmin"],"ymin":["origin_bbox","ymin"],
                                      "xmax":["origin_bbox","xmax"],"ymax":["origin_bbox","ymax"]}}},
        "site":{"encoding":"WKB","geometry_types":["Point"]}}}"#;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("origin", ArrowType::Binary, true),
        Field::new("origin_bbox", ArrowType::Struct(bbox_fields()), true),
        Field::new("site", ArrowType::Binary, true),
    ]));
    let x: Float64Array = origin.iter().map(|p| p.0).collect();
    let y: Float64Array = origin.iter().map(|p| p.1).collect();
    let covering = StructArray::new(
        bbox_fields(),
        vec![
            Arc::new(x.clone()),
            Arc::new(y.clone()),
            Arc::new(x),
            Arc::new(y),
        ],
        None,
    );
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..rows as i64)),
            Arc::new(BinaryArray::from_iter_values(
                origin.iter().map(|&(x, y)| wkb_point(x, y)),
            )),
            Arc::new(covering),
            Arc::new(BinaryArray::from_iter_values(
                site.iter().map(|&(x, y)| wkb_point(x, y)),
            )),
        ],
    )
    .unwrap();
    let file = dir.path().join("sites.parquet");
    write_batch(&file, &batch, 40, Some(geo));
    let cat = catalog(dir.path());
    let report = import_parquet(
        cat.clone(),
        &TableIdent::new("geo", "sites").unwrap(),
        file.to_str().unwrap(),
        &ImportOptions::default().rows_per_file(40),
    )
    .unwrap();
    // The primary column first.
    assert_eq!(
        column_types(&report),
        [
            ("site".to_string(), "GEOMETRY(4326)".to_string()),
            ("origin".to_string(), "GEOMETRY(3857)".to_string()),
        ]
    );
    let table = report.table;
    let properties = table.metadata().properties();
    let names =
        geoberg_table::parse_bbox_columns_property("k", &properties["geoberg.bbox-columns.origin"])
            .unwrap();
    assert_eq!(
        (names.min_x.as_str(), names.max_y.as_str()),
        ("origin_bbox.xmin", "origin_bbox.ymax")
    );
    assert!(!properties.contains_key("geoberg.bbox-columns.site"));
    let window = BBox::new(5_000.0, 5_000.0, 12_000.0, 20_000.0);
    assert_eq!(
        ids_in_window(&table, "origin", window),
        brute_force(&origin, window)
    );
    let window = BBox::new(2.0, 51.0, 6.0, 53.5);
    assert_eq!(
        ids_in_window(&table, "site", window),
        brute_force(&site, window)
    );

    // Naming one column types only it: the other declared one stays binary, with a note.
    let report = import_parquet(
        cat,
        &TableIdent::new("geo", "origins").unwrap(),
        file.to_str().unwrap(),
        &ImportOptions::default().geometry_column("origin"),
    )
    .unwrap();
    assert_eq!(column_types(&report).len(), 1);
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("\"site\" also holds geometry")),
        "{:?}",
        report.notes
    );
    assert!(
        report
            .table
            .show_create_table("geoberg")
            .contains("site BINARY")
    );
}

#[test]
fn two_parquet_geometry_columns_are_both_typed_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let rows = 90;
    let a: Vec<(f64, f64)> = (0..rows)
        .map(|i| (-10.0 + 20.0 * scatter(i, 0.6), 20.0 * scatter(i, 0.7)))
        .collect();
    let b: Vec<(f64, f64)> = (0..rows)
        .map(|i| (1_000.0 * scatter(i, 0.8), 1_000.0 * scatter(i, 0.9)))
        .collect();
    // GEOMETRY logical types through the `geoarrow.wkb` extension type, as Arrow C++ writes
    // them: `a` with the CRS omitted (OGC:CRS84), `b` in EPSG:3857 as PROJJSON.
    let wkb_field = |name: &str, metadata: &str| {
        Field::new(name, ArrowType::Binary, true).with_metadata(
            [
                (
                    "ARROW:extension:name".to_string(),
                    "geoarrow.wkb".to_string(),
                ),
                ("ARROW:extension:metadata".to_string(), metadata.to_string()),
            ]
            .into(),
        )
    };
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        wkb_field("a", "{}"),
        wkb_field(
            "b",
            r#"{"crs":{"type":"ProjectedCRS","id":{"authority":"EPSG","code":3857}}}"#,
        ),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(Int64Array::from_iter_values(0..rows as i64)),
            Arc::new(BinaryArray::from_iter_values(
                a.iter().map(|&(x, y)| wkb_point(x, y)),
            )),
            Arc::new(BinaryArray::from_iter_values(
                b.iter().map(|&(x, y)| wkb_point(x, y)),
            )),
        ],
    )
    .unwrap();
    let file = dir.path().join("two.parquet");
    write_batch(&file, &batch, 30, None);
    let report = import_parquet(
        catalog(dir.path()),
        &TableIdent::new("geo", "two").unwrap(),
        file.to_str().unwrap(),
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(
        column_types(&report),
        [
            ("a".to_string(), "GEOMETRY(4326)".to_string()),
            ("b".to_string(), "GEOMETRY(3857)".to_string()),
        ]
    );
    let window = BBox::new(200.0, 100.0, 600.0, 700.0);
    assert_eq!(
        ids_in_window(&report.table, "b", window),
        brute_force(&b, window)
    );
}
