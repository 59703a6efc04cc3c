//! Statements of the reference documents (the README and seed 004) run as written through
//! the engine: the README's `add_bbox_columns` call with a doubled quote in its `where`
//! string, seed 004's `CREATE TABLE ... USING iceberg TBLPROPERTIES (...) AS SELECT`, and
//! `SHOW TABLES IN / FROM <namespace>`.

use arrow::array::{Array, AsArray, BooleanArray};
use arrow_array::RecordBatch;
use arrow_array::types::UInt64Type;
use geoberg_datafusion::{BlockingSession, pretty_format};

use crate::common::{Warehouse, scalar_i64};

/// The SQL block of the README that holds `needle`, as written.
fn readme_block(needle: &str) -> String {
    let readme = include_str!("../../../README.md");
    readme
        .split("```sql\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap_or_default())
        .find(|b| b.contains(needle))
        .unwrap_or_else(|| panic!("no README sql block holds {needle}"))
        .to_string()
}

/// A one-row result's column `name` as a count.
fn count(batches: &[RecordBatch], name: &str) -> u64 {
    let column = batches[0]
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"));
    column.as_primitive::<UInt64Type>().value(0)
}

/// Every `key = value` row of `SHOW TBLPROPERTIES`.
fn properties(s: &BlockingSession, table: &str) -> Vec<(String, String)> {
    let batches = s.sql(&format!("SHOW TBLPROPERTIES {table}")).unwrap();
    let mut out = Vec::new();
    for b in &batches {
        let (k, v) = (
            b.column(0).as_string::<i32>(),
            b.column(1).as_string::<i32>(),
        );
        out.extend((0..b.num_rows()).map(|i| (k.value(i).to_string(), v.value(i).to_string())));
    }
    out
}

fn property(s: &BlockingSession, table: &str, key: &str) -> Option<String> {
    properties(s, table)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// The README's seed 002 block: the `where` string holds `''` (one quote each), and a comment
/// sits inside the statement. Only the days before 2026-12-01 are backfilled.
#[test]
fn readme_add_bbox_columns_block_runs_as_written() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql(
        "CREATE TABLE spatial.telemetry (id bigint, event_day date, geom geometry(4326)) \
         PARTITIONED BY (event_day)",
    )
    .unwrap();
    // Two closed days (before 2026-12-01) and two open ones, every point inside the window.
    let days = ["2026-11-29", "2026-11-30", "2026-12-01", "2026-12-02"];
    for (d, day) in days.iter().enumerate() {
        let values: Vec<String> = (0..3)
            .map(|i| {
                format!(
                    "({}, DATE '{day}', ST_SetSRID(ST_Point({}, {}), 4326))",
                    d * 10 + i,
                    i as f64,
                    40.0 + d as f64
                )
            })
            .collect();
        s.sql(&format!(
            "INSERT INTO spatial.telemetry VALUES {}",
            values.join(", ")
        ))
        .unwrap();
    }

    let block = readme_block("where => 'event_day < ''2026-12-01'''");
    let out = s.execute(&block).unwrap();
    assert_eq!(out.len(), 2, "the call and the bbox query: {block}");
    assert!(
        out[0].statement.contains("''2026-12-01''"),
        "{}",
        out[0].statement
    );
    let call = &out[0].batches;
    assert_eq!(
        count(call, "partitions_backfilled"),
        2,
        "{}",
        pretty_format(call).unwrap()
    );
    assert_eq!(count(call, "rewritten_records_count"), 6);
    // The bbox query sees the rows of the closed days only: the others have no box yet.
    assert_eq!(scalar_i64(&out[1].batches), 6);
    let filled = s
        .sql(
            "SELECT count(*) FROM spatial.telemetry \
             WHERE bbox_min_x IS NOT NULL AND event_day < DATE '2026-12-01'",
        )
        .unwrap();
    assert_eq!(scalar_i64(&filled), 6);
}

/// Seed 004's format-version 2 copy, with the seed's catalog and names adapted.
#[test]
fn seed_004_create_table_as_select_applies_its_properties() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE test_db.parcels_source (id bigint, geom geometry(4326))")
        .unwrap();
    s.sql(
        "INSERT INTO test_db.parcels_source VALUES \
         (1, ST_SetSRID(ST_Point(15, 45), 4326)), (2, ST_SetSRID(ST_Point(16, 46), 4326))",
    )
    .unwrap();

    // The seed's statement as written: reprojected to UTM zone 33N with ST_Transform.
    let out = s
        .execute(
            "CREATE TABLE geoberg.test_db.parcels_utm
             USING iceberg
             TBLPROPERTIES ('format-version'='2')
             AS SELECT id, ST_Transform(geom, 'EPSG:32633') AS geom FROM geoberg.test_db.parcels_source;",
        )
        .unwrap();
    let notices = out[0].notices.join("\n");
    assert!(
        notices.contains("created table test_db.parcels_utm"),
        "{notices}"
    );
    assert!(notices.contains("no declared CRS"), "{notices}");
    assert_eq!(
        property(&s, "test_db.parcels_utm", "format-version").as_deref(),
        Some("2")
    );
    let ddl = pretty_format(&s.sql("SHOW CREATE TABLE test_db.parcels_utm").unwrap()).unwrap();
    assert!(
        ddl.contains("geom GEOMETRY") && !ddl.contains("geom GEOMETRY("),
        "{ddl}"
    );
    // 15°E is zone 33's central meridian, where the easting is the false easting, 500 km.
    let rows = s
        .sql("SELECT id, ST_X(geom) FROM test_db.parcels_utm ORDER BY id")
        .unwrap();
    let text = pretty_format(&rows).unwrap();
    assert!(text.contains("| 1  | 500000.0"), "{text}");
    // "Each value keeps its own SRID": the stored values are EWKB carrying 32633, read here
    // with the table crate, and upgrade_geometry finds them.
    let table = geoberg_table::Table::load(
        w.catalog.clone(),
        &geoberg_table::TableIdent::new("test_db", "parcels_utm").unwrap(),
    )
    .unwrap();
    let (batches, _) = table.scan().select(["geom"]).execute().unwrap();
    let mut values = 0;
    for b in &batches {
        let geom = b
            .column(0)
            .as_any()
            .downcast_ref::<arrow_array::BinaryArray>()
            .unwrap();
        for v in geom.iter().flatten() {
            assert_eq!(
                &v[1..5],
                &0x2000_0001u32.to_le_bytes(),
                "EWKB point with SRID"
            );
            assert_eq!(&v[5..9], &32633i32.to_le_bytes());
            values += 1;
        }
    }
    assert_eq!(values, 2);
    let err = s
        .sql(
            "CALL geoberg.system.upgrade_geometry(table => 'test_db.parcels_utm', \
             column => 'geom', srid => 4326)",
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("2 with SRID 32633"), "{err}");

    // The alias havasu.iceberg, another property and an escaped quote; the declared CRS of a
    // column read from a table is kept, so the table is format-version 3.
    s.sql(
        "CREATE TABLE test_db.copy USING havasu.iceberg \
         TBLPROPERTIES ('owner' = 'O''Brien', 'write.delete.mode' = 'merge-on-read') \
         AS SELECT id, geom FROM test_db.parcels_source WHERE id = 2",
    )
    .unwrap();
    let props = properties(&s, "test_db.copy");
    for (k, v) in [
        ("owner", "O'Brien"),
        ("write.delete.mode", "merge-on-read"),
        ("format-version", "3"),
    ] {
        assert!(
            props.contains(&(k.to_string(), v.to_string())),
            "{k} = {v} in {props:?}"
        );
    }
    let ddl = pretty_format(&s.sql("SHOW CREATE TABLE test_db.copy").unwrap()).unwrap();
    assert!(ddl.contains("geom GEOMETRY(4326)"), "{ddl}");
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM test_db.copy").unwrap()),
        1
    );

    // IF NOT EXISTS leaves an existing table alone; without it, the statement fails. Neither
    // runs the query (its rows would be appended otherwise).
    let out = s
        .execute("CREATE TABLE IF NOT EXISTS test_db.copy USING iceberg AS SELECT 1 AS one")
        .unwrap();
    assert!(
        out[0].notices.join("").contains("exists, unchanged"),
        "{:?}",
        out[0].notices
    );
    let err = s
        .sql("CREATE TABLE test_db.copy AS SELECT id, geom FROM test_db.parcels_source")
        .unwrap_err()
        .to_string();
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM test_db.copy").unwrap()),
        1
    );

    // A declared CRS at format-version 2 is the table crate's error; nothing is created.
    let err = s
        .sql(
            "CREATE TABLE test_db.v2 TBLPROPERTIES ('format-version' = '2') \
             AS SELECT id, geom FROM test_db.parcels_source",
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs table format-version 3"), "{err}");
    assert!(s.sql("SELECT * FROM test_db.v2").is_err());

    // A syntax error in the query is reported before anything runs.
    let err = s
        .sql("CREATE TABLE test_db.bad USING iceberg AS SELEC 1")
        .unwrap_err()
        .to_string();
    assert!(err.contains("syntax error"), "{err}");
    // A provider other than iceberg is refused with the fix.
    let err = s
        .sql("CREATE TABLE test_db.bad USING parquet AS SELECT 1 AS one")
        .unwrap_err()
        .to_string();
    assert!(err.contains("USING iceberg"), "{err}");
}

/// `SHOW TABLES IN <namespace>` and `SHOW TABLES FROM <catalog>.<namespace> LIKE '<pattern>'`.
#[test]
fn show_tables_lists_one_namespace() {
    let w = Warehouse::new();
    let s = w.session();
    let err = s.sql("SHOW TABLES IN geo").unwrap_err().to_string();
    assert!(err.contains("no namespaces yet"), "{err}");
    for t in ["geo.parks", "geo.roads", "geo.parcels", "db.other"] {
        s.sql(&format!("CREATE TABLE {t} (id bigint)")).unwrap();
    }
    let listed = |sql: &str| -> Vec<(String, String, bool)> {
        let batches = s.sql(sql).unwrap();
        let mut out = Vec::new();
        for b in &batches {
            assert_eq!(
                b.schema()
                    .fields()
                    .iter()
                    .map(|f| f.name().as_str())
                    .collect::<Vec<_>>(),
                ["namespace", "tableName", "isTemporary"]
            );
            let temporary = b.column(2).as_any().downcast_ref::<BooleanArray>().unwrap();
            for i in 0..b.num_rows() {
                out.push((
                    b.column(0).as_string::<i32>().value(i).to_string(),
                    b.column(1).as_string::<i32>().value(i).to_string(),
                    temporary.value(i),
                ));
            }
        }
        out
    };
    let geo = |names: &[&str]| -> Vec<(String, String, bool)> {
        names
            .iter()
            .map(|n| ("geo".to_string(), n.to_string(), false))
            .collect()
    };
    assert_eq!(
        listed("SHOW TABLES IN geo"),
        geo(&["parcels", "parks", "roads"])
    );
    assert_eq!(
        listed("show tables from geoberg.geo;"),
        geo(&["parcels", "parks", "roads"])
    );
    assert_eq!(
        listed("SHOW TABLES IN geo LIKE 'par*'"),
        geo(&["parcels", "parks"])
    );
    assert_eq!(
        listed("SHOW TABLES FROM geo 'roads|parks'"),
        geo(&["parks", "roads"])
    );
    assert_eq!(listed("SHOW TABLES IN geo LIKE 'x*'"), geo(&[]));
    assert!(
        listed("SHOW TABLES IN db")
            .iter()
            .all(|(ns, _, _)| ns == "db")
    );

    let err = s.sql("SHOW TABLES IN nowhere").unwrap_err().to_string();
    assert!(err.contains("nowhere") && err.contains("geo"), "{err}");
    let err = s
        .sql("SHOW TABLES IN elsewhere.geo")
        .unwrap_err()
        .to_string();
    assert!(err.contains("session's catalog is \"geoberg\""), "{err}");
    let err = s.sql("SHOW TABLES IN a.b.c").unwrap_err().to_string();
    assert!(err.contains("<catalog>.<namespace>"), "{err}");
    // Bare SHOW TABLES stays the engine's listing of every schema.
    let all = pretty_format(&s.sql("SHOW TABLES").unwrap()).unwrap();
    assert!(all.contains("parcels") && all.contains("other"), "{all}");
}

/// The README's row-level changes block, Iceberg's `UPDATE SET *` / `INSERT *` among them.
#[test]
fn readme_row_changes_block_runs_as_written() {
    let w = Warehouse::new();
    let s = w.session();
    for t in ["geo.points", "geo.staged"] {
        s.sql(&format!(
            "CREATE TABLE {t} (id bigint, state string, geom geometry(4326))"
        ))
        .unwrap();
    }
    s.sql(
        "INSERT INTO geo.points VALUES (1, 'CA', ST_SetSRID(ST_Point(-122, 37), 4326)), \
         (2, 'NY', ST_SetSRID(ST_Point(1, 1), 4326)), (3, 'TX', ST_SetSRID(ST_Point(5, 5), 4326))",
    )
    .unwrap();
    s.sql(
        "INSERT INTO geo.staged VALUES (3, 'ZZ', ST_SetSRID(ST_Point(6, 6), 4326)), \
         (4, 'WA', ST_SetSRID(ST_Point(7, 7), 4326))",
    )
    .unwrap();
    let block = readme_block("UPDATE SET * WHEN NOT MATCHED THEN INSERT *");
    let out = s.execute(&block).unwrap();
    assert_eq!(out.len(), 4, "{block}");
    // UPDATE sets 1 to NV, DELETE drops 2 (inside the square), the first MERGE updates 3's
    // state and inserts 4, the second copies every column of 3 and 4 from the source.
    let rows = s
        .sql("SELECT id, state, ST_X(geom) AS x, ST_Y(geom) AS y FROM geo.points ORDER BY id")
        .unwrap();
    let text = pretty_format(&rows).unwrap();
    let expected = "\
+----+-------+--------+------+
| id | state | x      | y    |
+----+-------+--------+------+
| 1  | NV    | -122.0 | 37.0 |
| 3  | ZZ    | 6.0    | 6.0  |
| 4  | WA    | 7.0    | 7.0  |
+----+-------+--------+------+";
    assert_eq!(text, expected);
}
