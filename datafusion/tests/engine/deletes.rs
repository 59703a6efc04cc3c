//! Deleted rows stay deleted through the engine: deletion vectors (v3) and position delete
//! files (v2), written by the table crate's DELETE, are applied by the scan (row selections
//! of the row groups read) and counted out of `count(*)` from statistics. The oracle is the
//! rows the test wrote minus the ids it deleted.

use std::collections::BTreeSet;

use arrow_array::{Array, BooleanArray, Int64Array};
use geoberg_table::{RowChangeMode, RowFilter, Table};

use crate::common::{Row, Warehouse, append_files, ids, plan_text, scalar_i64};

fn rows(file: i64, n: i64) -> Vec<Row> {
    (0..n)
        .map(|i| Row {
            id: file * 1000 + i,
            n: (i % 5) as i32,
            x: i as f64,
            state: Some(if i % 2 == 0 { "a" } else { "b" }.to_string()),
            point: Some((file as f64 * 10.0, i as f64 * 0.5)),
        })
        .collect()
}

/// Deletes the rows whose id is in `gone`, through the table crate.
fn delete_ids(table: &Table, gone: &BTreeSet<i64>, mode: RowChangeMode) -> Table {
    let gone = gone.clone();
    let filter = RowFilter::new(None, move |batch| {
        let id = batch
            .column_by_name("id")
            .unwrap()
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        Ok(BooleanArray::from_iter(
            (0..id.len()).map(|i| Some(gone.contains(&id.value(i)))),
        ))
    });
    table.delete(filter).mode(mode).execute().unwrap().0
}

#[test]
fn deleted_rows_are_skipped_in_every_query_shape() {
    for version in [2u8, 3] {
        let w = Warehouse::new();
        w.catalog.create_namespace("geo").unwrap();
        // A v2 table cannot declare a CRS: its geometry column declares none.
        let mut columns = crate::common::points_columns(4326);
        let mut create = geoberg_table::CreateTable::new(columns.clone());
        if version == 2 {
            columns[4] =
                geoberg_table::Column::new("geom", geoberg_table::DataType::LEGACY_GEOMETRY);
            create = geoberg_table::CreateTable::new(columns).allow_undeclared_crs();
        }
        let t = create
            .property(geoberg_table::ROW_GROUP_ROWS_PROPERTY, "10")
            .format_version(version)
            .create(
                w.catalog.clone(),
                &geoberg_table::TableIdent::new("geo", "t").unwrap(),
            )
            .unwrap();
        let files: Vec<Vec<Row>> = (0..4).map(|f| rows(f, 40)).collect();
        let all: Vec<Row> = files.iter().flatten().cloned().collect();
        let t = append_files(t, &files, 4326);
        // Scattered rows, a whole row group (file 1, rows 10..20), and in a second DELETE
        // more rows of the same files (a vector merged with the first).
        let first: BTreeSet<i64> = [3, 7, 8, 39, 2005, 3000]
            .into_iter()
            .chain(1010..1020)
            .collect();
        let t = delete_ids(&t, &first, RowChangeMode::MergeOnRead);
        let second: BTreeSet<i64> = [4, 1021, 2006, 3039].into_iter().collect();
        let t = delete_ids(&t, &second, RowChangeMode::MergeOnRead);
        assert!(
            !t.delete_files().unwrap().is_empty(),
            "v{version}: merge-on-read"
        );
        let gone: BTreeSet<i64> = first.union(&second).copied().collect();
        let live = |keep: &dyn Fn(&Row) -> bool| -> Vec<i64> {
            all.iter()
                .filter(|r| !gone.contains(&r.id) && keep(r))
                .map(|r| r.id)
                .collect()
        };

        let s = w.session();
        let label = format!("v{version}");
        assert_eq!(
            ids(&s.sql("SELECT id FROM geo.t").unwrap()),
            live(&|_| true),
            "{label}"
        );
        assert_eq!(
            scalar_i64(&s.sql("SELECT count(*) FROM geo.t").unwrap()),
            live(&|_| true).len() as i64,
            "{label}: count(*) from statistics counts deleted rows out"
        );
        assert_eq!(
            ids(&s.sql("SELECT id FROM geo.t WHERE n < 2").unwrap()),
            live(&|r| r.n < 2),
            "{label}"
        );
        // File 1 (x = 10) only, rows with y in [4, 12]: the deleted row group is inside.
        let window = "ST_Intersects(geom, ST_MakeEnvelope(9, 4, 11, 12))";
        assert_eq!(
            ids(&s
                .sql(&format!("SELECT id FROM geo.t WHERE {window}"))
                .unwrap()),
            live(&|r| {
                let (x, y) = r.point.unwrap();
                (9.0..=11.0).contains(&x) && (4.0..=12.0).contains(&y)
            }),
            "{label}"
        );
        let plan = plan_text(
            &s.sql(&format!("EXPLAIN SELECT id FROM geo.t WHERE {window}"))
                .unwrap(),
        );
        assert!(plan.contains("files=1 of 4 read"), "{label}: {plan}");
        let limited = ids(&s.sql("SELECT id FROM geo.t LIMIT 7").unwrap());
        assert_eq!(limited.len(), 7, "{label}");
        assert!(limited.iter().all(|id| !gone.contains(id)), "{label}");
    }
}
