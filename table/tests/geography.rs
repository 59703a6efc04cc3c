//! Geography columns give the right rows, end to end through the table: append → scans with
//! windows (files, row groups and rows; exact on and off) → rewrite (`CREATE SPATIAL INDEX` on
//! the geography column) → scans again; SQL predicates through the row filter (DELETE) and file
//! selection. Expected rows are written out by hand: the antimeridian, the poles, the
//! great-circle bulge, points a few ulp past ±180, windows that wrap, tiny and whole-world
//! windows. `geography_properties.rs` checks the same against brute force.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::{ids_of, sqlite_catalog, wkb_point};
use geoberg_table::{BBox, Catalog, Column, CreateTable, DataType, RowFilter, Table, TableIdent};

fn wkb_coords(out: &mut Vec<u8>, coords: &[(f64, f64)]) {
    out.extend((coords.len() as u32).to_le_bytes());
    for (x, y) in coords {
        out.extend(x.to_le_bytes());
        out.extend(y.to_le_bytes());
    }
}

fn wkb_line(coords: &[(f64, f64)]) -> Vec<u8> {
    let mut v = vec![1, 2, 0, 0, 0];
    wkb_coords(&mut v, coords);
    v
}

fn wkb_polygon(ring: &[(f64, f64)]) -> Vec<u8> {
    let mut v = vec![1, 3, 0, 0, 0, 1, 0, 0, 0];
    wkb_coords(&mut v, ring);
    v
}

/// `id bigint NOT NULL, geog geography(4326), route geography(4326)`, row groups of `rg` rows.
fn geography_table(catalog: Arc<dyn Catalog>, name: &str, rg: usize) -> Table {
    CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geog", DataType::parse("geography(4326)").unwrap()),
        Column::new("route", DataType::parse("geography(4326)").unwrap()),
    ])
    .property("geoberg.parquet.row-group-rows", rg.to_string())
    .create(catalog, &TableIdent::new("test_db", name).unwrap())
    .unwrap()
}

/// A batch of (id, geog) rows; `route` holds the same values (SRID unset, as seed 004 allows).
fn batch(rows: &[(i64, Option<Vec<u8>>)]) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("geog", ArrowType::Binary, true),
        Field::new("route", ArrowType::Binary, true),
    ]);
    let values = || BinaryArray::from_iter(rows.iter().map(|(_, g)| g.as_deref()));
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|(i, _)| *i))),
            Arc::new(values()),
            Arc::new(values()),
        ],
    )
    .unwrap()
}

/// The rows of the issue and their neighbours, by id.
fn cases() -> Vec<(i64, Option<Vec<u8>>)> {
    let cap: Vec<(f64, f64)> = (0..=8).map(|i| (i as f64 * 45.0 - 180.0, 80.0)).collect();
    vec![
        // Crosses the antimeridian the short way along the equator.
        (1, Some(wkb_line(&[(170.0, 0.0), (-170.0, 0.0)]))),
        (2, Some(wkb_point(175.0, 5.0))),
        (3, Some(wkb_point(0.0, 0.0))),
        // The great circle from (-90, 60) to (90, 60) passes over the North Pole.
        (4, Some(wkb_line(&[(-90.0, 60.0), (90.0, 60.0)]))),
        // Natural Earth writes 180.00000000000006.
        (5, Some(wkb_point(180.000_000_000_000_06, 10.0))),
        (6, Some(wkb_point(-180.0, -10.0))),
        (7, Some(wkb_point(179.5, -5.0))),
        // A ring at latitude 80 round the North Pole: a cap that holds the pole.
        (8, Some(wkb_polygon(&cap))),
        (9, Some(wkb_point(0.0, 89.9))),
        (10, Some(wkb_point(10.0, 45.0))),
        (11, None),
        // 556 m and 1112 m north of (0, 0).
        (12, Some(wkb_point(0.0, 0.005))),
        (13, Some(wkb_point(0.0, 0.01))),
        // A polygon across the antimeridian, south of the equator.
        (
            14,
            Some(wkb_polygon(&[
                (178.0, -30.0),
                (-178.0, -30.0),
                (-178.0, -28.0),
                (178.0, -28.0),
                (178.0, -30.0),
            ])),
        ),
    ]
}

/// Appends [`cases`] in three files, row groups of two rows.
fn filled(catalog: &Arc<dyn Catalog>, name: &str) -> Table {
    let table = geography_table(catalog.clone(), name, 2);
    let rows = cases();
    let mut table = table;
    for part in rows.chunks(5) {
        table = table.append(&[batch(part)]).unwrap().0;
    }
    table
}

fn scan_ids(table: &Table, column: &str, window: BBox, exact: bool) -> BTreeSet<i64> {
    let (batches, _) = table
        .scan()
        .with_window(column, window)
        .exact(exact)
        .execute()
        .unwrap();
    ids_of(&batches).into_iter().collect()
}

/// (window, rows whose value meets the window on the sphere).
fn window_cases() -> Vec<(&'static str, BBox, Vec<i64>)> {
    let all_located: Vec<i64> = (1..=14).filter(|&i| i != 11).collect();
    vec![
        (
            "issue: east of the antimeridian",
            BBox::new(176.0, -1.0, 179.0, 1.0),
            vec![1],
        ),
        (
            "issue: around (0, 0)",
            BBox::new(-1.0, -1.0, 1.0, 1.0),
            vec![3, 12, 13],
        ),
        // 170E to 170W: its sides along the parallels bulge poleward at ±180, so the points at
        // latitude ±10 on the antimeridian are inside.
        (
            "wrapping window",
            BBox::new(170.0, -10.0, -170.0, 10.0),
            vec![1, 2, 5, 6, 7],
        ),
        (
            "wrapping, south",
            BBox::new(179.0, -29.5, -179.0, -29.0),
            vec![14],
        ),
        // The line from (-90, 60) to (90, 60) runs up meridian 90 to the pole.
        ("the bulge", BBox::new(85.0, 65.0, 95.0, 70.0), vec![4]),
        (
            "around the pole",
            BBox::new(-10.0, 85.0, 10.0, 90.0),
            vec![4, 8, 9],
        ),
        (
            "wrapping at 80N",
            BBox::new(170.0, 81.0, -170.0, 82.0),
            vec![8],
        ),
        (
            "tiny",
            BBox::new(10.0 - 1e-9, 45.0 - 1e-9, 10.0 + 1e-9, 45.0 + 1e-9),
            vec![10],
        ),
        (
            "tiny, beside",
            BBox::new(10.0 + 1e-7, 45.0, 10.0 + 2e-7, 45.0 + 1e-7),
            vec![],
        ),
        ("a point window", BBox::point(175.0, 5.0), vec![2]),
        (
            "whole world",
            BBox::new(-180.0, -90.0, 180.0, 90.0),
            all_located.clone(),
        ),
        // 340 degrees wide the long way, in two pieces of 170 degrees: the sides of each bulge
        // far poleward (to 76.5 degrees at longitude ±85), so the polar line and (10, 45) are
        // inside, what is near ±180 is not.
        (
            "wide, the long way",
            BBox::new(-170.0, -20.0, 170.0, 20.0),
            vec![1, 3, 4, 10, 12, 13],
        ),
    ]
}

#[test]
fn windows_give_the_right_rows_before_and_after_a_spatial_index() {
    let dir = tempfile::tempdir().unwrap();
    let table = filled(&sqlite_catalog(dir.path()), "cases");
    let (indexed, report) = table
        .rewrite()
        .hilbert("geog", 8)
        .option("target-file-size-bytes", "1")
        .execute()
        .unwrap();
    assert!(report.added_data_files_count > 1, "{report:?}");
    for (t, when) in [
        (&table, "appended"),
        (&indexed, "after CREATE SPATIAL INDEX"),
    ] {
        for (name, window, expected) in window_cases() {
            let expected: BTreeSet<i64> = expected.into_iter().collect();
            for column in ["geog", "route"] {
                let exact = scan_ids(t, column, window, true);
                assert_eq!(exact, expected, "{when}, {column}: {name} {window:?}");
                // Without refinement: the rows whose bounds meet the window's, a superset.
                let boxes = scan_ids(t, column, window, false);
                assert!(
                    boxes.is_superset(&exact),
                    "{when}, {column}: {name}: {boxes:?}"
                );
            }
        }
        // On the sphere the line across the antimeridian has no part near longitude 0, even
        // by its bounds (the planar box would be -170..170).
        assert_eq!(
            scan_ids(t, "geog", BBox::new(-1.0, -1.0, 1.0, 1.0), false),
            BTreeSet::from([3, 12, 13]),
            "{when}"
        );
    }
}

#[test]
fn files_and_row_groups_are_skipped_on_spherical_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let table = filled(&sqlite_catalog(dir.path()), "skips");
    let (_, explain) = table
        .scan()
        .with_window("geog", BBox::new(176.0, -1.0, 179.0, 1.0))
        .exact(true)
        .execute()
        .unwrap();
    assert_eq!(explain.rows_returned, 1, "{explain}");
    assert!(explain.row_groups_skipped > 0, "{explain}");
    assert!(
        explain.row_groups_total > explain.row_groups_skipped,
        "{explain}"
    );
    // Every geography column has bounds in every file, also after a rewrite keyed on another.
    let (indexed, _) = table
        .rewrite()
        .hilbert("geog", 8)
        .option("target-file-size-bytes", "1")
        .execute()
        .unwrap();
    for column in ["geog", "route"] {
        let index = indexed.file_index(column).unwrap();
        for f in index.files().entries() {
            assert!(
                f.bbox.is_some() || f.all_null,
                "{column}: {} has no bounds",
                f.path
            );
        }
    }
    // The file with the antimeridian line has a box that wraps.
    let index = indexed.file_index("route").unwrap();
    assert!(
        index
            .files()
            .entries()
            .iter()
            .any(|f| f.bbox.is_some_and(|b| b.min_x > b.max_x)),
        "{:?}",
        index.files().entries()
    );
}

#[test]
fn sql_predicates_on_geography_are_spherical() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let table = filled(&catalog, "sql");
    let cases = [
        // A polygon window across the antimeridian.
        (
            "ST_Intersects(geog, ST_GeomFromText('POLYGON ((170 -10, -170 -10, -170 10, 170 10, 170 -10))', 4326))",
            vec![1, 2, 5, 6, 7],
        ),
        // The same as an envelope with minX > maxX.
        (
            "ST_Intersects(geog, ST_MakeEnvelope(170, -10, -170, 10, 4326))",
            vec![1, 2, 5, 6, 7],
        ),
        (
            "ST_Within(geog, ST_MakeEnvelope(170, -10, -170, 10, 4326))",
            vec![1, 2, 5, 6, 7],
        ),
        (
            "ST_Contains(geog, ST_GeomFromText('POINT (179 -29)'))",
            vec![14],
        ),
        // Metres on the sphere.
        (
            "ST_DWithin(geog, ST_GeomFromText('POINT (0 0)'), 1000)",
            vec![3, 12],
        ),
        (
            "ST_DWithin(geog, ST_GeomFromText('POINT (0 0)'), 2000)",
            vec![3, 12, 13],
        ),
        (
            "ST_Intersects(geog, ST_MakeEnvelope(-1, -1, 1, 1)) AND NOT ST_DWithin(geog, ST_GeomFromText('POINT (0 0)'), 1)",
            vec![12, 13],
        ),
    ];
    for (i, (condition, expected)) in cases.iter().enumerate() {
        let predicate = geoberg_sql::parse_condition(condition).unwrap();
        let expected: BTreeSet<i64> = expected.iter().copied().collect();
        // File selection keeps every file that holds a match.
        let kept: BTreeSet<String> = table
            .files_matching(&predicate)
            .unwrap()
            .iter()
            .map(|f| f.file_path().to_string())
            .collect();
        let (in_kept, _) = table.scan().files(kept).execute().unwrap();
        let filter = RowFilter::from_predicate(predicate.clone());
        let mut matched = BTreeSet::new();
        for b in &in_kept {
            let m = filter.matches(b).unwrap();
            let ids = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            matched.extend(
                (0..b.num_rows())
                    .filter(|&r| m.value(r))
                    .map(|r| ids.value(r)),
            );
        }
        assert_eq!(matched, expected, "{condition}");
        // DELETE removes exactly those rows.
        let fresh = filled(&catalog, &format!("sql_delete_{i}"));
        let (after, _) = fresh
            .delete(RowFilter::from_predicate(predicate))
            .execute()
            .unwrap();
        let (left, _) = after.scan().execute().unwrap();
        let left: BTreeSet<i64> = ids_of(&left).into_iter().collect();
        let all: BTreeSet<i64> = (1..=14).collect();
        assert_eq!(
            left,
            all.difference(&expected).copied().collect(),
            "DELETE WHERE {condition}"
        );
    }
}

#[test]
fn wrapping_windows_on_geometry_say_what_works() {
    let dir = tempfile::tempdir().unwrap();
    let table = common::points_table(sqlite_catalog(dir.path()), "planar");
    let (table, _) = table
        .append(&[common::points_batch(0..10, |i| (i as f64, 0.0))])
        .unwrap();
    let e = table
        .scan()
        .with_window("geom", BBox::new(170.0, -10.0, -170.0, 10.0))
        .execute()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("antimeridian") && e.contains("only geography") && e.contains("x 170 .. 180"),
        "{e}"
    );
    let p =
        geoberg_sql::parse_condition("ST_Intersects(geom, ST_MakeEnvelope(170, -10, -170, 10))")
            .unwrap();
    let e = table.files_matching(&p).unwrap_err().to_string();
    assert!(
        e.contains("only geography")
            && e.contains("ST_MakeEnvelope(170, -10, 180, 10)")
            && e.contains("ST_MakeEnvelope(-180, -10, -170, 10)"),
        "{e}"
    );
    // A geography window outside lon/lat says how to cross the antimeridian.
    let dir2 = tempfile::tempdir().unwrap();
    let g = filled(&sqlite_catalog(dir2.path()), "range");
    let e = g
        .scan()
        .with_window("geog", BBox::new(170.0, -10.0, 190.0, 10.0))
        .execute()
        .unwrap_err()
        .to_string();
    assert!(e.contains("min x > max x"), "{e}");
}

#[test]
fn scanned_geography_columns_say_they_are_geography() {
    let dir = tempfile::tempdir().unwrap();
    let table = filled(&sqlite_catalog(dir.path()), "meta");
    let (batches, _) = table.scan().execute().unwrap();
    let schema = batches[0].schema();
    let field = schema.field_with_name("geog").unwrap();
    let md = field.metadata();
    assert_eq!(
        md.get("ARROW:extension:name").map(String::as_str),
        Some("geoarrow.wkb"),
        "{md:?}"
    );
    assert!(
        md.get("ARROW:extension:metadata")
            .is_some_and(|m| m.contains("spherical")),
        "{md:?}"
    );
}

#[test]
fn planar_geoarrow_values_are_refused_by_a_geography_column() {
    let dir = tempfile::tempdir().unwrap();
    let table = filled(&sqlite_catalog(dir.path()), "planar");
    let (batches, _) = table.scan().execute().unwrap();
    let scanned = batches[0].clone();
    let rows = scanned.num_rows();
    // What a scan gives (spherical edges) goes back in as it is.
    let (table, _) = table.append(std::slice::from_ref(&scanned)).unwrap();
    // The same values typed as GeoArrow geometry (no edges: planar) are refused, naming the
    // conversion.
    let retyped: Vec<Field> = scanned
        .schema()
        .fields()
        .iter()
        .map(|f| {
            let mut f = f.as_ref().clone();
            if f.name() == "route" {
                f = f.with_metadata(
                    [
                        (
                            "ARROW:extension:name".to_string(),
                            "geoarrow.wkb".to_string(),
                        ),
                        ("ARROW:extension:metadata".to_string(), "{}".to_string()),
                    ]
                    .into(),
                );
            }
            f
        })
        .collect();
    let planar =
        RecordBatch::try_new(Arc::new(Schema::new(retyped)), scanned.columns().to_vec()).unwrap();
    let err = table.append(&[planar]).unwrap_err();
    assert!(
        matches!(&err, geoberg_table::Error::GeometryIntoGeography { column, .. } if column == "route"),
        "{err}"
    );
    assert!(err.to_string().contains("ST_GeomToGeography"), "{err}");
    let (after, _) = table.scan().execute().unwrap();
    assert_eq!(
        after.iter().map(|b| b.num_rows()).sum::<usize>(),
        rows + batches.iter().map(|b| b.num_rows()).sum::<usize>()
    );
}
