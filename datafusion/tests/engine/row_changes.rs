//! `DELETE`, `UPDATE` and `MERGE INTO` through the engine, on format-versions 2 and 3, in
//! copy-on-write and merge-on-read mode. The oracle is a model of the table kept by the test
//! (a map from id to row) that applies each statement's meaning directly; after every
//! statement the table read back through the engine and through the table crate's own scan
//! must equal it.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use geoberg_datafusion::BlockingSession;
use geoberg_table::{Column, CreateTable, DataType, Table, TableIdent};
use proptest::prelude::*;

use crate::common::{Row, Warehouse, append_files, scalar_i64};

/// What the test knows about a row: (n, x, state, point).
type Model = BTreeMap<i64, (i32, f64, Option<String>, (f64, f64))>;

fn create(w: &Warehouse, name: &str, version: u8, mode: &str) -> Table {
    if !w.catalog.namespace_exists("geo").unwrap() {
        w.catalog.create_namespace("geo").unwrap();
    }
    let geom = match version {
        2 => DataType::LEGACY_GEOMETRY,
        _ => DataType::geometry(4326),
    };
    CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("n", DataType::Int),
        Column::new("x", DataType::Double),
        Column::new("state", DataType::String),
        Column::new("geom", geom),
    ])
    .allow_undeclared_crs()
    .format_version(version)
    .property("write.delete.mode", mode)
    .property("write.update.mode", mode)
    .property("write.merge.mode", mode)
    .property(geoberg_table::ROW_GROUP_ROWS_PROPERTY, "4")
    .create(
        Arc::clone(&w.catalog),
        &TableIdent::new("geo", name).unwrap(),
    )
    .unwrap()
}

fn rows(files: usize, per_file: i64) -> Vec<Vec<Row>> {
    (0..files as i64)
        .map(|f| {
            (0..per_file)
                .map(|i| Row {
                    id: f * 100 + i,
                    n: (i % 4) as i32,
                    x: i as f64 * 1.5,
                    state: Some(["a", "b", "c"][(i % 3) as usize].to_string()),
                    point: Some((f as f64 * 10.0 + (i % 5) as f64, (i / 5) as f64)),
                })
                .collect()
        })
        .collect()
}

fn model_of(files: &[Vec<Row>]) -> Model {
    files
        .iter()
        .flatten()
        .map(|r| (r.id, (r.n, r.x, r.state.clone(), r.point.unwrap())))
        .collect()
}

/// The table's rows as the model has them, read through the engine.
fn read(s: &BlockingSession, name: &str) -> Model {
    let batches = s
        .sql(&format!(
            "SELECT id, n, x, state, ST_X(geom) AS px, ST_Y(geom) AS py FROM geo.{name}"
        ))
        .unwrap();
    let mut out = Model::new();
    for b in &batches {
        for r in 0..b.num_rows() {
            let state = b.column(3).as_string::<i32>();
            out.insert(
                b.column(0).as_primitive::<Int64Type>().value(r),
                (
                    b.column(1).as_primitive::<Int32Type>().value(r),
                    b.column(2).as_primitive::<Float64Type>().value(r),
                    state.is_valid(r).then(|| state.value(r).to_string()),
                    (
                        b.column(4).as_primitive::<Float64Type>().value(r),
                        b.column(5).as_primitive::<Float64Type>().value(r),
                    ),
                ),
            );
        }
    }
    out
}

/// The ids the table crate's own scan returns (a second reader, not the engine).
fn table_ids(w: &Warehouse, name: &str) -> Vec<i64> {
    let t = Table::load(
        Arc::clone(&w.catalog),
        &TableIdent::new("geo", name).unwrap(),
    )
    .unwrap();
    let (batches, _) = t.scan().execute().unwrap();
    let mut ids: Vec<i64> = batches
        .iter()
        .flat_map(|b: &RecordBatch| {
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

fn check(w: &Warehouse, s: &BlockingSession, name: &str, model: &Model, label: &str) {
    assert_eq!(read(s, name), *model, "{label}: the engine's rows");
    assert_eq!(
        table_ids(w, name),
        model.keys().copied().collect::<Vec<_>>(),
        "{label}: the table crate's rows"
    );
}

fn inside(p: (f64, f64), b: [f64; 4]) -> bool {
    p.0 >= b[0] && p.0 <= b[2] && p.1 >= b[1] && p.1 <= b[3]
}

#[test]
fn delete_update_and_merge_match_the_model_in_every_mode() {
    for (version, mode) in [
        (3, "merge-on-read"),
        (3, "copy-on-write"),
        (2, "merge-on-read"),
        (2, "copy-on-write"),
    ] {
        let label = format!("v{version} {mode}");
        let w = Warehouse::new();
        let files = rows(3, 12);
        append_files(create(&w, "t", version, mode), &files, 4326);
        let mut model = model_of(&files);
        let s = w.session();
        check(&w, &s, "t", &model, &label);

        // Seed 004's statements: by id, and by a polygon without CRS.
        s.sql("DELETE FROM geo.t WHERE id = 1").unwrap();
        model.remove(&1);
        check(&w, &s, "t", &model, &format!("{label}: delete by id"));
        let square = [0.0, 0.0, 2.0, 2.0];
        let deleted = s
            .sql(
                "DELETE FROM geo.t WHERE ST_Intersects(geom, \
                 ST_GeomFromText('POLYGON ((0 0, 0 2, 2 2, 2 0, 0 0))'))",
            )
            .unwrap();
        let before = model.len();
        model.retain(|_, r| !inside(r.3, square));
        assert_eq!(
            scalar_i64(&deleted) as usize,
            before - model.len(),
            "{label}"
        );
        check(&w, &s, "t", &model, &format!("{label}: delete by polygon"));

        // A condition DataFusion cannot hand a provider as a filter: a subquery.
        s.sql("DELETE FROM geo.t WHERE id IN (SELECT id FROM geo.t WHERE n = 3 AND id > 200)")
            .unwrap();
        model.retain(|id, r| !(r.0 == 3 && *id > 200));
        check(&w, &s, "t", &model, &format!("{label}: delete by subquery"));

        let updated = s
            .sql(
                "UPDATE geo.t SET state = 'd', x = x + 1 WHERE ST_Intersects(geom, \
                 ST_GeomFromText('POLYGON ((10 0, 10 1, 14 1, 14 0, 10 0))'))",
            )
            .unwrap();
        let mut n = 0;
        for r in model.values_mut() {
            if inside(r.3, [10.0, 0.0, 14.0, 1.0]) {
                r.2 = Some("d".into());
                r.1 += 1.0;
                n += 1;
            }
        }
        assert_eq!(scalar_i64(&updated), n, "{label}");
        check(&w, &s, "t", &model, &format!("{label}: update by polygon"));

        // Moving a point: later window queries find it at its new place.
        let srid = if version == 3 { 4326 } else { 0 };
        s.sql(&format!(
            "UPDATE geo.t SET geom = ST_SetSRID(ST_Point(55, 55), {srid}) WHERE id = 205"
        ))
        .unwrap();
        model.get_mut(&205).unwrap().3 = (55.0, 55.0);
        check(&w, &s, "t", &model, &format!("{label}: move a point"));
        let found = s
            .sql("SELECT count(*) FROM geo.t WHERE ST_Intersects(geom, ST_MakeEnvelope(54, 54, 56, 56))")
            .unwrap();
        assert_eq!(scalar_i64(&found), 1, "{label}");

        // MERGE: update matched rows, delete matched rows of state 'c', insert the rest.
        let merged = s
            .sql(&format!(
                "MERGE INTO geo.t AS t USING (SELECT * FROM (VALUES (2, 'm', 30.0), (3, 'm', 31.0), \
                 (105, 'm', 32.0), (900, 'new', 33.0)) AS v(id, state, x)) AS s ON t.id = s.id \
                 WHEN MATCHED AND t.state = 'c' THEN DELETE \
                 WHEN MATCHED THEN UPDATE SET state = s.state, x = s.x \
                 WHEN NOT MATCHED THEN INSERT (id, n, x, state, geom) VALUES (s.id, 7, s.x, s.state, \
                 ST_SetSRID(ST_Point(70, 70), {srid}))"
            ))
            .unwrap();
        let (mut up, mut del, mut ins) = (0, 0, 0);
        for (id, state, x) in [
            (2, "m", 30.0),
            (3, "m", 31.0),
            (105, "m", 32.0),
            (900, "new", 33.0),
        ] {
            match model.get_mut(&id) {
                Some(r) if r.2.as_deref() == Some("c") => {
                    model.remove(&id);
                    del += 1;
                }
                Some(r) => {
                    r.2 = Some(state.into());
                    r.1 = x;
                    up += 1;
                }
                None => {
                    model.insert(id, (7, x, Some(state.into()), (70.0, 70.0)));
                    ins += 1;
                }
            }
        }
        let counts = &merged[0];
        let value = |c: &str| {
            counts
                .column_by_name(c)
                .unwrap()
                .as_primitive::<arrow_array::types::UInt64Type>()
                .value(0)
        };
        assert_eq!(
            (
                value("num_updated_rows"),
                value("num_deleted_rows"),
                value("num_inserted_rows")
            ),
            (up, del, ins),
            "{label}"
        );
        check(&w, &s, "t", &model, &format!("{label}: merge"));

        // A target row matched twice is refused and nothing changes.
        let twice = s.sql(
            "MERGE INTO geo.t USING (SELECT * FROM (VALUES (4), (4)) AS v(id)) AS s ON t.id = s.id \
             WHEN MATCHED THEN UPDATE SET n = 0",
        );
        let err = twice.unwrap_err().to_string();
        assert!(err.contains("multiple source rows"), "{label}: {err}");
        check(&w, &s, "t", &model, &format!("{label}: refused merge"));

        // A value in the wrong CRS is refused with the table's message; nothing changes.
        if version == 3 {
            let err = s
                .sql("UPDATE geo.t SET geom = ST_SetSRID(ST_Point(1, 1), 3857) WHERE id = 8")
                .unwrap_err()
                .to_string();
            assert!(err.contains("3857"), "{label}: {err}");
            check(&w, &s, "t", &model, &format!("{label}: refused update"));
        }
    }
}

/// Iceberg's `UPDATE SET *` and `INSERT *`: every target column from the source column of the
/// same name (names matched ignoring case, extra source columns ignored), in both write modes
/// and format-versions; the oracle applies the same rows to the model. A source without one of
/// the target's columns is refused with an error naming it, and nothing changes.
#[test]
fn merge_set_star_and_insert_star_match_the_model_in_every_mode() {
    for (version, mode) in [
        (3, "merge-on-read"),
        (3, "copy-on-write"),
        (2, "merge-on-read"),
        (2, "copy-on-write"),
    ] {
        let label = format!("v{version} {mode}");
        let w = Warehouse::new();
        let files = rows(3, 12);
        append_files(create(&w, "t", version, mode), &files, 4326);
        let mut model = model_of(&files);
        let s = w.session();
        let srid = if version == 3 { 4326 } else { 0 };

        // (id, n, x, state, point): 2, 3 and 105 exist, 900 and 901 do not; a matched row with
        // n = 0 is deleted.
        let source = [
            (2, 5, 20.5, "s", (1.5, 2.5)),
            (3, 0, 21.5, "s", (3.0, 3.0)),
            (105, 6, 22.5, "u", (7.0, 8.0)),
            (900, 0, 23.5, "new", (9.0, 9.0)),
            (901, 7, 24.5, "new", (10.0, 11.0)),
        ];
        let values: Vec<String> = source
            .iter()
            .map(|(id, n, x, state, (px, py))| {
                format!("({id}, {n}, {x:?}, '{state}', {px:?}, {py:?})")
            })
            .collect();
        let merged = s
            .sql(&format!(
                "MERGE INTO geo.t t USING (SELECT id, n AS \"N\", x, state, \
                 ST_SetSRID(ST_Point(px, py), {srid}) AS geom, 'extra' AS note \
                 FROM (VALUES {}) AS v(id, n, x, state, px, py)) s ON t.id = s.id \
                 WHEN MATCHED AND s.\"N\" = 0 THEN DELETE \
                 WHEN MATCHED THEN UPDATE SET * \
                 WHEN NOT MATCHED THEN INSERT *",
                values.join(", ")
            ))
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        let (mut up, mut del, mut ins) = (0, 0, 0);
        for (id, n, x, state, point) in source {
            let row = (n, x, Some(state.to_string()), point);
            match model.get(&id) {
                Some(_) if n == 0 => {
                    model.remove(&id);
                    del += 1;
                }
                Some(_) => {
                    model.insert(id, row);
                    up += 1;
                }
                None => {
                    model.insert(id, row);
                    ins += 1;
                }
            }
        }
        let value = |c: &str| {
            merged[0]
                .column_by_name(c)
                .unwrap()
                .as_primitive::<arrow_array::types::UInt64Type>()
                .value(0)
        };
        assert_eq!(
            (
                value("num_updated_rows"),
                value("num_deleted_rows"),
                value("num_inserted_rows")
            ),
            (up, del, ins),
            "{label}"
        );
        check(&w, &s, "t", &model, &format!("{label}: merge with *"));

        // The README's form: a staged table as the source, by its bare name.
        s.sql("CREATE TABLE geo.staged (id bigint, n int, x double, state string, geom geometry(4326))")
            .unwrap();
        s.sql(
            "INSERT INTO geo.staged VALUES (4, 1, 1.25, 'st', ST_SetSRID(ST_Point(4, 4), 4326)), \
             (950, 2, 2.25, 'st', ST_SetSRID(ST_Point(5, 6), 4326))",
        )
        .unwrap();
        s.sql(
            "MERGE INTO geo.t t USING geo.staged ON t.id = staged.id \
             WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
        )
        .unwrap_or_else(|e| panic!("{label}: {e}"));
        model.insert(4, (1, 1.25, Some("st".into()), (4.0, 4.0)));
        model.insert(950, (2, 2.25, Some("st".into()), (5.0, 6.0)));
        check(&w, &s, "t", &model, &format!("{label}: merge from a table"));

        // A source without a target column: the error names it; nothing changes.
        for (sql, missing) in [
            (
                "MERGE INTO geo.t t USING (SELECT id, n, x FROM geo.staged) s ON t.id = s.id \
                 WHEN MATCHED THEN UPDATE SET *",
                "state",
            ),
            (
                "MERGE INTO geo.t t USING (SELECT 999 AS id) s ON t.id = s.id \
                 WHEN NOT MATCHED THEN INSERT *",
                "n",
            ),
        ] {
            let err = s.sql(sql).unwrap_err().to_string();
            assert!(
                err.contains(&format!("has no column {missing} ")) && err.contains("instead of *"),
                "{label}: {err}"
            );
        }
        // A target row no source row matched has nothing to copy from.
        let err = s
            .sql(
                "MERGE INTO geo.t t USING geo.staged s ON t.id = s.id \
                 WHEN NOT MATCHED BY SOURCE THEN UPDATE SET *",
            )
            .unwrap_err()
            .to_string();
        assert!(err.contains("no source row to copy from"), "{label}: {err}");
        check(&w, &s, "t", &model, &format!("{label}: refused merges"));
    }
}

#[test]
fn row_lineage_survives_updates_and_can_be_queried() {
    let w = Warehouse::new();
    let files = rows(2, 8);
    append_files(create(&w, "t", 3, "merge-on-read"), &files, 4326);
    let s = w.session();
    let lineage = |s: &BlockingSession| -> BTreeMap<i64, (i64, i64)> {
        let b = s
            .sql("SELECT id, _row_id, _last_updated_sequence_number FROM geo.t")
            .unwrap();
        b.iter()
            .flat_map(|b| {
                (0..b.num_rows()).map(move |r| {
                    (
                        b.column(0).as_primitive::<Int64Type>().value(r),
                        (
                            b.column(1).as_primitive::<Int64Type>().value(r),
                            b.column(2).as_primitive::<Int64Type>().value(r),
                        ),
                    )
                })
            })
            .collect()
    };
    let before = lineage(&s);
    let ids: std::collections::BTreeSet<i64> = before.values().map(|v| v.0).collect();
    assert_eq!(ids.len(), before.len(), "row ids are unique");
    s.sql("UPDATE geo.t SET n = 9 WHERE id IN (3, 104)")
        .unwrap();
    let after = lineage(&s);
    for (id, (row_id, seq)) in &after {
        assert_eq!(*row_id, before[id].0, "id {id} keeps its _row_id");
        if [3, 104].contains(id) {
            assert!(*seq > before[id].1, "id {id} was updated by a later commit");
        } else {
            assert_eq!(*seq, before[id].1, "id {id} was not changed");
        }
    }
    // Metadata columns with a filter and a join still resolve to the table.
    let b = s
        .sql("SELECT t._pos, t.id FROM geo.t AS t WHERE t.id = 104")
        .unwrap();
    assert_eq!(b.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
}

/// One random statement and what it means for the model.
#[derive(Debug, Clone)]
enum Change {
    DeleteN(i32),
    DeleteWindow([i32; 4]),
    UpdateState(i32, &'static str),
    MergeIds(Vec<i64>),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        (0..4i32).prop_map(Change::DeleteN),
        (0..30i32, 0..4i32, 1..12i32, 1..4i32).prop_map(|(x, y, w, h)| Change::DeleteWindow([
            x,
            y,
            x + w,
            y + h
        ])),
        (0..4i32, prop::sample::select(vec!["p", "q"]))
            .prop_map(|(n, s)| Change::UpdateState(n, s)),
        prop::collection::btree_set(0..320i64, 1..6)
            .prop_map(|s| Change::MergeIds(s.into_iter().collect())),
    ]
}

impl Change {
    fn sql(&self) -> String {
        match self {
            Change::DeleteN(n) => format!("DELETE FROM geo.p WHERE n = {n}"),
            Change::DeleteWindow(b) => format!(
                "DELETE FROM geo.p WHERE ST_Intersects(geom, ST_MakeEnvelope({}, {}, {}, {}))",
                b[0], b[1], b[2], b[3]
            ),
            Change::UpdateState(n, s) => {
                format!("UPDATE geo.p SET state = '{s}', x = x * 2 WHERE n = {n}")
            }
            Change::MergeIds(ids) => {
                let values: Vec<String> = ids.iter().map(|i| format!("({i})")).collect();
                format!(
                    "MERGE INTO geo.p AS t USING (SELECT * FROM (VALUES {}) AS v(id)) AS s \
                     ON t.id = s.id WHEN MATCHED THEN UPDATE SET n = t.n + 1 \
                     WHEN NOT MATCHED THEN INSERT (id, n, x, state, geom) \
                     VALUES (s.id, 0, 0.5, 'm', ST_SetSRID(ST_Point(1, 1), 4326))",
                    values.join(", ")
                )
            }
        }
    }

    fn apply(&self, model: &mut Model) {
        match self {
            Change::DeleteN(n) => model.retain(|_, r| r.0 != *n),
            Change::DeleteWindow(b) => {
                let b = b.map(f64::from);
                model.retain(|_, r| !inside(r.3, b));
            }
            Change::UpdateState(n, s) => {
                for r in model.values_mut().filter(|r| r.0 == *n) {
                    r.2 = Some(s.to_string());
                    r.1 *= 2.0;
                }
            }
            Change::MergeIds(ids) => {
                for id in ids {
                    match model.get_mut(id) {
                        Some(r) => r.0 += 1,
                        None => {
                            model.insert(*id, (0, 0.5, Some("m".into()), (1.0, 1.0)));
                        }
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn random_changes_match_the_model(
        changes in prop::collection::vec(change(), 1..6),
        mor in any::<bool>(),
    ) {
        let w = Warehouse::new();
        let files = rows(3, 20);
        let mode = if mor { "merge-on-read" } else { "copy-on-write" };
        append_files(create(&w, "p", 3, mode), &files, 4326);
        let mut model = model_of(&files);
        let s = w.session();
        for c in &changes {
            s.sql(&c.sql()).unwrap();
            c.apply(&mut model);
            prop_assert_eq!(read(&s, "p"), model.clone(), "after {}", c.sql());
        }
        prop_assert_eq!(table_ids(&w, "p"), model.keys().copied().collect::<Vec<_>>());
    }
}
