//! The `geoberg` binary, end to end: every subcommand on real tables in a temporary
//! warehouse, and bad input that must fail with a clear message and change nothing on disk.

mod common;

use common::{Env, geo_metadata, scattered_points, write_points};

/// 2 000 scattered points imported as `db.points` in 8 files of 250 rows, in one commit.
fn imported() -> (Env, Vec<(i64, f64, f64)>) {
    let env = Env::new();
    let points = scattered_points(2_000);
    let file = env.path("points.parquet");
    write_points(&file, &points, Some(&geo_metadata(None)));
    let run = env
        .run(&[
            "--json",
            "import",
            file.to_str().unwrap(),
            "--table",
            "db.points",
            "--rows-per-file",
            "250",
        ])
        .ok();
    let j = run.json();
    assert_eq!(j["rows"], 2_000);
    assert_eq!(j["files"], 8);
    assert_eq!(j["created"], true);
    assert_eq!(j["srid"], 4326);
    (env, points)
}

fn count_in(points: &[(i64, f64, f64)], w: [f64; 4]) -> usize {
    points
        .iter()
        .filter(|p| p.1 >= w[0] && p.1 <= w[2] && p.2 >= w[1] && p.2 <= w[3])
        .count()
}

fn window_sql(w: [f64; 4]) -> String {
    format!(
        "ST_Intersects(geometry, ST_MakeEnvelope({}, {}, {}, {}, 4326))",
        w[0], w[1], w[2], w[3]
    )
}

#[test]
fn demo_clusters_the_table_and_draws_both_layouts() {
    let env = Env::new();
    let run = env
        .run(&["--json", "demo", "--rows", "20000", "--files", "10"])
        .ok();
    let j = run.json();
    let (before, after) = (&j["before"], &j["after"]);
    assert_eq!(before["files_total"], 10);
    assert_eq!(
        before["files_read"], 10,
        "arrival order: every file spans the map"
    );
    let after_read = after["files_read"].as_u64().unwrap();
    assert!(
        after_read < before["files_read"].as_u64().unwrap(),
        "the index must cut the files read: {after}"
    );
    assert!(before["rows_matched"].as_u64().unwrap() > 0);
    assert_eq!(before["rows_matched"], after["rows_matched"]);
    assert!(after["bytes_read"].as_u64() < before["bytes_read"].as_u64());
    assert!(after["overlap_depth"].as_f64() < before["overlap_depth"].as_f64());

    for (name, files) in [
        ("before.svg", before["files_total"].as_u64().unwrap()),
        ("after.svg", after["files_total"].as_u64().unwrap()),
    ] {
        let svg = std::fs::read_to_string(env.warehouse().join(name)).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(
            svg.matches("<rect class=\"file\"").count() as u64,
            files,
            "{name}"
        );
        assert_eq!(svg.matches("<rect class=\"window\"").count(), 1);
        assert_eq!(svg.matches('<').count(), svg.matches('>').count());
    }

    // A second run replaces the demo table instead of failing or appending to it.
    let again = env
        .run(&["--json", "demo", "--rows", "2000", "--files", "4"])
        .ok();
    assert_eq!(again.json()["before"]["files_total"], 4);
}

#[test]
fn sql_creates_and_describes_tables() {
    let env = Env::new();
    env.run(&[
        "sql",
        "CREATE TABLE db.t (id bigint NOT NULL, geom geometry(4326), ts timestamp) \
         PARTITIONED BY (bucket(4, id)) TBLPROPERTIES ('owner' = 'gis')",
    ])
    .ok();
    let ddl = env.run(&["sql", "SHOW CREATE TABLE db.t"]).ok().stdout;
    assert!(ddl.contains("geom GEOMETRY(4326)"), "{ddl}");
    assert!(ddl.contains("bucket(4, id)"), "{ddl}");
    let describe = env.run(&["sql", "DESCRIBE db.t"]).ok();
    let rows = describe.table_rows();
    assert!(
        rows.contains(&vec!["id", "long", "true"]),
        "{}",
        describe.stdout
    );
    assert!(
        rows.contains(&vec!["geom", "geometry(4326)", "false"]),
        "{}",
        describe.stdout
    );
    let props = env
        .run(&["--json", "sql", "SHOW TBLPROPERTIES db.t ('owner')"])
        .ok()
        .json();
    assert_eq!(props["rows"][0]["key"], "owner");
    assert_eq!(props["rows"][0]["value"], "gis");
    // IF NOT EXISTS leaves the table alone; a plain CREATE of an existing table fails cleanly.
    let unchanged = env
        .run(&["sql", "CREATE TABLE IF NOT EXISTS db.t (x int)"])
        .ok();
    assert!(unchanged.stdout.contains("unchanged"));
    env.fails_cleanly(&["sql", "CREATE TABLE db.t (x int)"], &["already exists"]);
    env.fails_cleanly(
        &["sql", "SHOW TBLPROPERTIES db.t ('nope')"],
        &["no such property"],
    );
}

#[test]
fn sql_evolves_renames_and_purges_tables() {
    let env = Env::new();
    env.run(&["sql", "CREATE TABLE db.t (id bigint, name string)"])
        .ok();
    env.run(&["sql", "INSERT INTO db.t VALUES (1, 'a'), (2, 'b')"])
        .ok();
    let added = env
        .run(&["sql", "ALTER TABLE db.t ADD COLUMN score double FIRST"])
        .ok();
    let said = format!("{}{}", added.stdout, added.stderr);
    assert!(said.contains("added column score"), "{said}");
    env.run(&["sql", "ALTER TABLE db.t RENAME COLUMN name TO label"])
        .ok();
    env.run(&["sql", "ALTER TABLE db.t RENAME TO u"]).ok();
    let j = env
        .run(&[
            "--json",
            "sql",
            "SELECT score, label FROM db.u ORDER BY label",
        ])
        .ok()
        .json();
    assert_eq!(j["rows"][0]["label"], "a", "{j}");
    assert!(j["rows"][0]["score"].is_null(), "{j}");
    env.fails_cleanly(
        &["sql", "ALTER TABLE db.u DROP COLUMN nope"],
        &["no top-level column \"nope\""],
    );
    let purged = env.run(&["sql", "DROP TABLE db.u PURGE"]).ok();
    let said = format!("{}{}", purged.stdout, purged.stderr);
    assert!(said.contains("purged its files: deleted"), "{said}");
    env.fails_cleanly(&["sql", "SELECT * FROM db.u"], &["db.u"]);
}

#[test]
fn sql_reads_statements_from_a_file_and_stdin() {
    let env = Env::new();
    let file = env.path("setup.sql");
    std::fs::write(
        &file,
        "CREATE TABLE db.a (g geometry(3857));\nCREATE TABLE db.b (g geometry(0));\n",
    )
    .unwrap();
    env.run(&["sql", "-f", file.to_str().unwrap()]).ok();
    let out = env
        .run_with_stdin(
            &["sql"],
            "SHOW CREATE TABLE db.a;\nSHOW CREATE TABLE db.b;\n",
        )
        .ok()
        .stdout;
    assert!(
        out.contains("GEOMETRY(3857)") && out.contains("GEOMETRY(0)"),
        "{out}"
    );
    // --timing prints one run time per statement; --json always carries it.
    let timed = env
        .run(&["sql", "--timing", "SELECT 1;\nSELECT 2;"])
        .ok()
        .stdout;
    assert_eq!(timed.matches("Run Time: ").count(), 2, "{timed}");
    let j = env.run(&["--json", "sql", "SELECT 1"]).ok().json();
    assert!(j["seconds"].as_f64().is_some_and(|s| s >= 0.0), "{j}");
    // One bad statement in the input: nothing runs, not even the good one before it.
    std::fs::write(
        &file,
        "CREATE TABLE db.c (g geometry(4326));\nCREATE TABLE db.d (g geometry(4326)\n",
    )
    .unwrap();
    env.fails_cleanly(&["sql", "-f", file.to_str().unwrap()], &["syntax error"]);
}

#[test]
fn bad_statements_fail_cleanly() {
    let env = Env::new();
    // In a fresh folder, a failing statement creates no catalog.
    env.fails_cleanly(&["sql", "CREATE TABLE db.t (g geometry(4269))"], &["4269"]);
    assert!(!env.warehouse().exists());
    env.run(&["sql", "CREATE TABLE db.t (id bigint, g geometry(4326))"])
        .ok();
    for (statement, message) in [
        ("CREATE TABLE db.u (g geometry(4269))", "4269"),
        ("CREATE TABLE db.u (g geography(3857))", "3857"),
        (
            "CREATE TABLE db.u (g geometry(4326)) PARTITIONED BY (g)",
            "partition",
        ),
        ("CREATE TABLE (", "syntax error"),
        ("SELEC count(*) FROM db.t", "syntax error"),
        ("SELECT count(*) FROM db.nope", "db.nope"),
        ("SELECT nope FROM db.t", "nope"),
        (
            "INSERT INTO db.t VALUES (1, ST_SetSRID(ST_Point(1, 2), 3857))",
            "SRID 3857",
        ),
        ("SHOW CREATE TABLE db.nope", "does not exist"),
        ("DESCRIBE t", "namespace"),
        ("SHOW CREATE TABLE other.db.t", "catalog"),
        (
            "SELECT count(*) FROM db.t WHERE ST_Intersects(g, ST_MakeEnvelope(0, 0, 1, 1, 3857))",
            "3857",
        ),
        ("", "give a statement"),
    ] {
        env.fails_cleanly(&["sql", statement], &[message]);
    }
}

#[test]
fn select_and_explain_prune_and_count_exactly() {
    let (env, points) = imported();
    let w = [-10.0, 10.0, 5.0, 20.0];
    let expected = count_in(&points, w);
    let select = format!("SELECT count(*) FROM db.points WHERE {}", window_sql(w));
    let j = env.run(&["--json", "sql", &select]).ok().json();
    assert_eq!(
        j["rows"][0]["count(*)"].as_u64().unwrap() as usize,
        expected
    );
    assert_eq!(j["scans"][0]["files_total"], 8);
    assert_eq!(j["scans"][0]["table"], "db.points");

    let explain = env.run(&["sql", &format!("EXPLAIN {select}")]).ok().stdout;
    assert!(explain.contains("files=8 of 8 read"), "{explain}");

    // ST_Within a polygon that is not a rectangle: refined exactly, not by bbox.
    let triangle = "SELECT count(*) FROM db.points WHERE ST_Within(geometry, \
                    ST_GeomFromText('POLYGON((-50 0, 50 0, -50 50, -50 0))', 4326))";
    let n: usize = env.run(&["sql", triangle]).ok().value().parse().unwrap();
    let exact = points.iter().filter(|p| p.2 < 25.0 - p.1 / 2.0).count();
    assert!(n.abs_diff(exact) <= 2, "{n} vs {exact}"); // points on the edge aside

    let rows = env
        .run(&[
            "sql",
            "SELECT id, geometry FROM db.points WHERE ST_Intersects(geometry, \
             ST_MakeEnvelope(-50, 0, 50, 50, 4326)) LIMIT 3",
        ])
        .ok();
    let table = rows.table_rows();
    assert_eq!(table.len(), 3, "{}", rows.stdout);
    assert!(rows.stdout.contains("| id "), "{}", rows.stdout);
    assert!(
        table.iter().all(|r| r[1].starts_with("POINT(")),
        "{}",
        rows.stdout
    );
    // The filter column is read for refinement but not returned when not selected.
    let names = env
        .run(&[
            "--json",
            "sql",
            &format!("SELECT name FROM db.points WHERE {} LIMIT 2", window_sql(w)),
        ])
        .ok()
        .json();
    let names = names["rows"].as_array().unwrap();
    assert_eq!(names.len(), 2.min(expected));
    assert!(
        names
            .iter()
            .all(|r| r.as_object().unwrap().keys().eq(["name"])),
        "{names:?}"
    );
}

#[test]
fn create_spatial_index_through_sql_cuts_files_read() {
    let (env, points) = imported();
    let w = [-10.0, 10.0, 5.0, 20.0];
    let select = format!("SELECT count(*) FROM db.points WHERE {}", window_sql(w));
    let before = env.run(&["--json", "sql", &select]).ok().json();

    // Bounds that do not cover the data are refused before anything is written.
    env.fails_cleanly(
        &[
            "sql",
            "CREATE SPATIAL INDEX FOR db.points USING hilbert(geometry, 8, 0, 0, 10, 10)",
        ],
        &["bounds"],
    );
    env.fails_cleanly(
        &[
            "sql",
            "CREATE SPATIAL INDEX FOR db.points USING hilbert(nope, 8)",
        ],
        &["nope"],
    );
    env.fails_cleanly(
        &[
            "sql",
            "CREATE SPATIAL INDEX FOR db.nope USING hilbert(geometry, 8)",
        ],
        &["does not exist"],
    );

    let index = env
        .run(&[
            "--json",
            "sql",
            "CREATE SPATIAL INDEX FOR db.points USING hilbert(geometry, 12) \
             OPTIONS map('target-file-size-bytes', '8000')",
        ])
        .ok()
        .json();
    assert_eq!(index["rows"][0]["rewritten_data_files_count"], 8);
    let after = env.run(&["--json", "sql", &select]).ok().json();
    assert_eq!(
        after["rows"][0]["count(*)"].as_u64().unwrap() as usize,
        count_in(&points, w)
    );
    assert_eq!(after["rows"], before["rows"]);
    let inspect = env.run(&["--json", "inspect", "db.points"]).ok().json();
    assert_eq!(inspect["snapshots"][1]["operation"], "replace");
    // The CALL form runs through the same path (rewrite-all defaults to false there).
    let call = env
        .run(&[
            "--json",
            "sql",
            "CALL geoberg.system.rewrite_data_files(table => 'db.points', strategy => 'sort', \
             sort_order => 'hilbert(geometry, 12)')",
        ])
        .ok()
        .json();
    assert!(
        call["rows"][0]["rewritten_data_files_count"].is_u64(),
        "{call}"
    );
    env.fails_cleanly(
        &[
            "sql",
            "CALL other.system.rewrite_data_files(table => 'db.points', strategy => 'sort', \
             sort_order => 'hilbert(geometry, 12)')",
        ],
        &["catalog"],
    );
    let fraction = |j: &serde_json::Value| {
        j["scans"][0]["files_read"].as_f64().unwrap()
            / j["scans"][0]["files_total"].as_f64().unwrap()
    };
    assert!(fraction(&after) < fraction(&before), "{before} {after}");
}

#[test]
fn import_applies_the_srid_rules() {
    let env = Env::new();
    let points = scattered_points(100);
    let mercator = env.path("mercator.parquet");
    write_points(
        &mercator,
        &points,
        Some(&geo_metadata(Some(
            r#"{"id":{"authority":"EPSG","code":3857}}"#,
        ))),
    );
    let plain = env.path("plain.parquet");
    write_points(&plain, &points, None);

    env.fails_cleanly(
        &[
            "import",
            plain.to_str().unwrap(),
            "--table",
            "db.t",
            "--srid",
            "4269",
        ],
        &["4269"],
    );
    env.fails_cleanly(
        &[
            "import",
            mercator.to_str().unwrap(),
            "--table",
            "db.t",
            "--srid",
            "4326",
        ],
        &["EPSG:3857", "reproject"],
    );
    env.fails_cleanly(
        &[
            "import",
            plain.to_str().unwrap(),
            "--table",
            "db.t",
            "--geometry-column",
            "name",
        ],
        &["not binary"],
    );
    env.fails_cleanly(
        &[
            "import",
            env.path("missing.parquet").to_str().unwrap(),
            "--table",
            "db.t",
        ],
        &["missing.parquet"],
    );

    let j = env
        .run(&[
            "--json",
            "import",
            mercator.to_str().unwrap(),
            "--table",
            "db.m",
        ])
        .ok()
        .json();
    assert_eq!(j["srid"], 3857);
    // Appending 4326-labelled values to the 3857 table is refused by the value SRID check,
    // and the table keeps its one snapshot.
    env.fails_cleanly(
        &[
            "import",
            plain.to_str().unwrap(),
            "--table",
            "db.m",
            "--srid",
            "4326",
        ],
        &["4326", "3857"],
    );
    let ddl = env.run(&["sql", "SHOW CREATE TABLE db.m"]).ok().stdout;
    assert!(
        ddl.contains("geometry GEOMETRY(3857)") && ddl.contains("id BIGINT NOT NULL"),
        "{ddl}"
    );
}

/// The real files of `shared/realdata` through the command: a CRS no column declares is
/// refused with the ways out and nothing written; `--srid 0` imports it; a GeoArrow-native file
/// is refused naming its encoding. (Every file is covered by `geoberg-table`'s realdata test.)
#[test]
fn import_reads_files_other_tools_wrote() {
    // As the table and geostats realdata tests: `GEOBERG_REALDATA`, or the shared folder next
    // to the checkout.
    let realdata = std::env::var_os("GEOBERG_REALDATA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/realdata")
        });
    assert!(
        realdata.is_dir(),
        "{} is missing: set GEOBERG_REALDATA to the shared/realdata folder",
        realdata.display()
    );
    let env = Env::new();
    let srid = realdata.join("parquet-testing/crs-srid.parquet");
    let srid = srid.to_str().unwrap();
    env.fails_cleanly(
        &["import", srid, "--table", "db.albers"],
        &["EPSG:5070", "--srid 0", "geometry(0)", "format-version 2"],
    );
    let j = env
        .run(&[
            "--json",
            "import",
            srid,
            "--table",
            "db.albers",
            "--srid",
            "0",
        ])
        .ok()
        .json();
    assert_eq!(j["column_type"], "GEOMETRY(0)");
    assert_eq!(j["rows"], 1);
    let props = env
        .run(&["sql", "SHOW TBLPROPERTIES db.albers"])
        .ok()
        .stdout;
    assert!(props.contains("geoberg.source-crs.geometry"), "{props}");
    let native = realdata.join("geoarrow-data/example/example_point_native.parquet");
    env.fails_cleanly(
        &["import", native.to_str().unwrap(), "--table", "db.native"],
        &["\"point\"", "WKB"],
    );
    let geography = realdata.join("parquet-testing/geography-points.parquet");
    let j = env
        .run(&[
            "--json",
            "import",
            geography.to_str().unwrap(),
            "--table",
            "db.g",
        ])
        .ok()
        .json();
    assert_eq!(j["column_type"], "GEOGRAPHY(4326)");
    assert_eq!(j["rows"], 500);
}

/// Writes `columns` as a Parquet file without geometry metadata.
fn write_plain_parquet(path: &std::path::Path, columns: Vec<(&str, arrow_array::ArrayRef)>) {
    let batch = arrow_array::RecordBatch::try_from_iter(columns).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// A file without geometry imports as it is, with a note naming `--geometry-column`; two plain
/// WKB columns named in one `--geometry-column a,b:SRID` both become geometry columns.
#[test]
fn import_takes_files_without_geometry_and_with_several_geometry_columns() {
    use std::sync::Arc;
    let env = Env::new();
    let customer = env.path("customer.parquet");
    write_plain_parquet(
        &customer,
        vec![
            (
                "id",
                Arc::new(arrow_array::Int64Array::from_iter_values(0..10)),
            ),
            (
                "name",
                Arc::new(arrow_array::StringArray::from_iter_values(
                    (0..10).map(|i| format!("c{i}")),
                )),
            ),
        ],
    );
    let run = env
        .run(&[
            "import",
            customer.to_str().unwrap(),
            "--table",
            "db.customer",
        ])
        .ok();
    for part in [
        "imported 10 rows",
        "no geometry column",
        "imported without geometry",
        "--geometry-column",
    ] {
        assert!(run.stdout.contains(part), "{part}: {}", run.stdout);
    }
    env.fails_cleanly(
        &[
            "import",
            customer.to_str().unwrap(),
            "--table",
            "db.customer2",
            "--srid",
            "4326",
        ],
        &["--srid", "--geometry-column"],
    );

    let points = scattered_points(50);
    let wkb = |shift: f64| -> arrow_array::ArrayRef {
        Arc::new(arrow_array::BinaryArray::from_iter_values(
            points
                .iter()
                .map(|p| common::wkb_point(p.1 * shift, p.2 * shift)),
        ))
    };
    let trips = env.path("trips.parquet");
    write_plain_parquet(
        &trips,
        vec![
            (
                "id",
                Arc::new(arrow_array::Int64Array::from_iter_values(
                    points.iter().map(|p| p.0),
                )),
            ),
            ("pickup", wkb(1.0)),
            ("dropoff", wkb(1000.0)),
        ],
    );
    let trips = trips.to_str().unwrap();
    // One SRID per column.
    env.fails_cleanly(
        &[
            "import",
            trips,
            "--table",
            "db.trips",
            "--geometry-column",
            "dropoff:3857,dropoff:4326",
        ],
        &["dropoff", "one SRID"],
    );
    let j = env
        .run(&[
            "--json",
            "import",
            trips,
            "--table",
            "db.trips",
            "--geometry-column",
            "pickup,dropoff:3857",
        ])
        .ok()
        .json();
    assert_eq!(j["rows"], 50);
    assert_eq!(j["geometry_columns"][0]["name"], "pickup");
    assert_eq!(j["geometry_columns"][0]["column_type"], "GEOMETRY(4326)");
    assert_eq!(j["geometry_columns"][1]["name"], "dropoff");
    assert_eq!(j["geometry_columns"][1]["srid"], 3857);
    // The first column under the keys of one-column imports.
    assert_eq!(j["geometry_column"], "pickup");
    assert_eq!(j["srid"], 4326);
    let ddl = env.run(&["sql", "SHOW CREATE TABLE db.trips"]).ok().stdout;
    assert!(
        ddl.contains("pickup GEOMETRY(4326)") && ddl.contains("dropoff GEOMETRY(3857)"),
        "{ddl}"
    );
    // The same file again, the flag repeated: appended to both columns; the text names both.
    let run = env
        .run(&[
            "import",
            trips,
            "--table",
            "db.trips",
            "--geometry-column",
            "pickup",
            "--geometry-column",
            "dropoff:3857",
        ])
        .ok();
    assert!(
        run.stdout
            .contains("pickup is GEOMETRY(4326), dropoff is GEOMETRY(3857)"),
        "{}",
        run.stdout
    );
}

#[test]
fn inspect_layout_and_audit_a_table() {
    let (env, _) = imported();
    let j = env
        .run(&["--json", "inspect", "db.points", "--files"])
        .ok()
        .json();
    assert_eq!(j["data_files"], 8);
    assert_eq!(j["records"], 2_000);
    assert_eq!(
        j["snapshots"].as_array().unwrap().len(),
        1,
        "an import is one commit"
    );
    assert_eq!(j["files"].as_array().unwrap().len(), 8);
    let depth = j["overlap_depth"].as_f64().unwrap();
    assert!(depth > 4.0, "scattered files overlap: {depth}");
    let text = env.run(&["inspect", "db.points"]).ok().stdout;
    assert!(
        text.contains("overlap depth") && text.contains("snapshots: 1"),
        "{text}"
    );
    // One commit, one manifest: far from the 5,000 that draw a warning.
    assert_eq!(j["manifests"], 1);
    assert_eq!(j["warnings"].as_array().unwrap().len(), 0);

    let svg_path = env.path("layout.svg");
    env.run(&[
        "layout",
        "db.points",
        "--svg",
        svg_path.to_str().unwrap(),
        "--window",
        "-10,10,5,20",
    ])
    .ok();
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert_eq!(svg.matches("<rect class=\"file\"").count(), 8);

    // Bounds are present and true; the scattered layout reads every file for any window.
    let audit = env.run(&["--json", "audit", "db.points"]).ok().json();
    assert_eq!(audit["ok"], true);
    assert_eq!(audit["rows"], 2_000);
    assert_eq!(audit["rows_outside_file_bounds"], 0);
    let failed = env.fails_cleanly(
        &[
            "--json",
            "audit",
            "db.points",
            "--window",
            "-10,10,5,20",
            "--max-fraction",
            "0.5",
        ],
        &["pruning regressed", "8/8 files"],
    );
    assert_eq!(failed.json()["pruning"]["ok"], false);
    env.run(&[
        "audit",
        "db.points",
        "--window",
        "-10,10,5,20",
        "--max-fraction",
        "1",
    ])
    .ok();
    env.fails_cleanly(
        &[
            "audit",
            "db.points",
            "--window",
            "1,2,3",
            "--max-fraction",
            "0.5",
        ],
        &["--window", "four numbers"],
    );
    env.fails_cleanly(
        &[
            "audit",
            "db.points",
            "--window",
            "0,0,1,1",
            "--max-fraction",
            "2",
        ],
        &["max-fraction"],
    );
}

/// A file of only null and empty geometries has no bounds to record (Iceberg's bounds leave
/// empty values out): the audit says so instead of failing (issue #30).
#[test]
fn audit_passes_a_file_of_only_null_and_empty_geometries() {
    let (env, _) = imported();
    // Two appends: a file of empty points, a file of an empty point and a null.
    env.run(&[
        "sql",
        "INSERT INTO db.points (id, name, geometry) VALUES \
         (900001, 'empty', ST_SetSRID(ST_GeomFromText('POINT EMPTY'), 4326))",
    ])
    .ok();
    env.run(&[
        "sql",
        "INSERT INTO db.points (id, name, geometry) SELECT 900002, 'empty', \
         ST_SetSRID(ST_GeomFromText('POINT EMPTY'), 4326) UNION ALL \
         SELECT 900003, 'null', ST_SetSRID(ST_GeomFromText(NULL), 4326)",
    ])
    .ok();
    let audit = env.run(&["--json", "audit", "db.points"]).ok().json();
    assert_eq!(audit["ok"], true, "{audit}");
    assert_eq!(audit["files_without_bounds"], 0);
    assert_eq!(audit["files_of_null_or_empty_geometries"], 2);
    assert_eq!(audit["rows"], 2_003);
    let text = env.run(&["audit", "db.points"]).ok().stdout;
    assert!(
        text.contains("2 files hold only null or empty geometries"),
        "{text}"
    );
}

#[test]
fn appends_stay_clustered_and_maintain_runs_what_is_due() {
    let (env, mut points) = imported();
    env.run(&[
        "sql",
        "CREATE SPATIAL INDEX FOR db.points USING hilbert(geometry, 12) \
         OPTIONS map('target-file-size-bytes', '8000')",
    ])
    .ok();
    let files = |env: &Env| {
        env.run(&["--json", "inspect", "db.points"]).ok().json()["data_files"]
            .as_u64()
            .unwrap()
    };
    let clustered = files(&env);
    env.run(&[
        "sql",
        "ALTER TABLE db.points SET TBLPROPERTIES \
         ('geoberg.write.cluster-on-write.min-file-rows' = '100')",
    ])
    .ok();

    // Appends (an import into the existing table) are cut at the clustered key ranges.
    let more: Vec<(i64, f64, f64)> = scattered_points(3_000)
        .into_iter()
        .skip(2_000)
        .map(|(i, x, y)| (i + 10_000, x, y))
        .collect();
    let file = env.path("more.parquet");
    write_points(&file, &more, Some(&geo_metadata(None)));
    env.run(&["import", file.to_str().unwrap(), "--table", "db.points"])
        .ok();
    points.extend(more);
    assert!(
        files(&env) > clustered + 1,
        "the append was cut into several files"
    );

    // Healthy by the table's thresholds: nothing rewritten, the expiry still runs.
    env.run(&[
        "sql",
        "ALTER TABLE db.points SET TBLPROPERTIES ('geoberg.maintain.max-overlap-depth' = '100', \
         'geoberg.maintain.max-new-files' = '1000')",
    ])
    .ok();
    let run = env.run(&["--json", "maintain", "db.points"]).ok().json();
    assert_eq!(run["column"], "geometry");
    assert!(run["clustering"].is_null(), "{run}");
    assert!(
        run["clustering_reason"]
            .as_str()
            .unwrap()
            .starts_with("healthy"),
        "{run}"
    );

    // Past the table's own threshold: an incremental clustering.
    env.run(&[
        "sql",
        "ALTER TABLE db.points SET TBLPROPERTIES ('geoberg.maintain.max-new-files' = '0')",
    ])
    .ok();
    let run = env.run(&["--json", "maintain", "db.points"]).ok().json();
    assert!(
        run["clustering_reason"]
            .as_str()
            .unwrap()
            .contains("new files"),
        "{run}"
    );
    assert!(
        run["clustering"]["rewritten_data_files_count"]
            .as_u64()
            .unwrap()
            > 0,
        "{run}"
    );
    let text = env.run(&["maintain", "db.points"]).ok().stdout;
    assert!(
        text.contains("clustering:") && text.contains("expired"),
        "{text}"
    );

    // The same through SQL, and every window still counts what a brute force counts.
    env.run(&[
        "sql",
        "CALL geoberg.system.rewrite_data_files(table => 'db.points', strategy => 'sort', \
         sort_order => 'hilbert(geometry, 12)', options => map('incremental', 'true'))",
    ])
    .ok();
    for w in [
        [-10.0, 10.0, 5.0, 20.0],
        [-50.0, 0.0, 50.0, 50.0],
        [20.0, 30.0, 21.0, 31.0],
    ] {
        let select = format!("SELECT count(*) FROM db.points WHERE {}", window_sql(w));
        let got = env.run(&["--json", "sql", &select]).ok().json();
        assert_eq!(
            got["rows"][0]["count(*)"].as_u64().unwrap() as usize,
            count_in(&points, w)
        );
    }
    env.fails_cleanly(&["maintain", "db.nope"], &["db.nope", "does not exist"]);
}

#[test]
fn ingest_streams_json_records_and_keeps_the_bad_ones_with_reasons() {
    let env = Env::new();
    env.run(&[
        "sql",
        "CREATE TABLE iot.telemetry (id string NOT NULL, velocity_value double, \
         geom geometry(4326))",
    ])
    .ok();
    let input = [
        r#"{"location": {"lon": "21.00", "lat": "52.00", "crs": "EPSG:4326"}, "velocity": {"value": 21.0}, "id": "a"}"#,
        r#"{"location": {"lon": "21.00"}, "id": "b"}"#,
        r#"{"location": {"lon": 2337709.3, "lat": 6800125.5, "crs": "EPSG:3857"}, "id": "c"}"#,
        r#"{"location": {"lon": "-3.7", "lat": "40.4", "crs": "EPSG:4326"}, "id": "d"}"#,
    ]
    .join("\n");
    let rejects = env.path("rejects.ndjson");
    let run = env
        .run_with_stdin(
            &[
                "--json",
                "ingest",
                "--table",
                "iot.telemetry",
                "--rejects",
                rejects.to_str().unwrap(),
                "--envelope",
                "14,49,24.5,55",
                "--within",
                "POLYGON ((14 49, 24.5 49, 24.5 55, 14 55, 14 49))",
            ],
            input.as_str(),
        )
        .ok()
        .json();
    assert_eq!(run["rows_committed"], 2, "{run}");
    assert_eq!(run["rows_filtered"], 1, "{run}");
    assert_eq!(run["rows_rejected"], 1, "{run}");
    assert_eq!(run["committed_through_line"], 4, "{run}");
    let rejected = std::fs::read_to_string(&rejects).unwrap();
    let reject: serde_json::Value = serde_json::from_str(rejected.trim()).unwrap();
    assert_eq!(reject["line"], 2);
    assert!(
        reject["reason"].as_str().unwrap().contains("location.lat"),
        "{reject}"
    );
    let count = env
        .run(&[
            "--json",
            "sql",
            "SELECT count(*) FROM iot.telemetry WHERE ST_Intersects(geom, \
             ST_MakeEnvelope(20.9, 51.9, 21.1, 52.1, 4326))",
        ])
        .ok()
        .json();
    assert_eq!(
        count["rows"][0]["count(*)"], 2,
        "the 3857 point landed at 21, 52: {count}"
    );

    env.fails_cleanly(
        &["ingest", "--table", "iot.telemetry", "--batch-rows", "0"],
        &["--batch-rows"],
    );
    env.fails_cleanly(
        &["ingest", "--table", "iot.telemetry", "--within", "nope"],
        &["--within", "WKT"],
    );
    env.fails_cleanly(
        &["ingest", "--table", "iot.telemetry", "--map", "velocity"],
        &["--map", "column=dotted.path"],
    );
}

#[test]
fn unknown_tables_and_missing_catalogs_fail_cleanly() {
    let env = Env::new();
    // No warehouse yet: read-only commands create nothing.
    for args in [
        &["inspect", "db.t"][..],
        &["audit", "db.t"],
        &["layout", "db.t", "--svg", "x.svg"],
        &["sql", "DESCRIBE db.t"],
        &["expire-snapshots", "db.t"],
        &["remove-orphans", "db.t"],
    ] {
        env.fails_cleanly(args, &["no catalog database"]);
    }
    assert!(!env.warehouse().exists());

    env.run(&["sql", "CREATE TABLE db.t (g geometry(4326))"])
        .ok();
    for args in [
        &["inspect", "db.nope"][..],
        &["audit", "db.nope"],
        &["layout", "db.nope", "--svg", "x.svg"],
        &["expire-snapshots", "db.nope"],
        &["remove-orphans", "db.nope", "--dry-run"],
    ] {
        env.fails_cleanly(args, &["db.nope", "does not exist"]);
    }
    env.fails_cleanly(&["inspect", "no_namespace"], &["<namespace>.<table>"]);
    env.fails_cleanly(
        &["expire-snapshots", "db.t", "--older-than", "yesterday"],
        &["RFC 3339"],
    );
    // An empty table has nothing to draw.
    env.fails_cleanly(
        &[
            "layout",
            "db.t",
            "--svg",
            env.path("e.svg").to_str().unwrap(),
        ],
        &["nothing to draw"],
    );
}

#[test]
fn malformed_command_lines_exit_with_usage_errors() {
    let env = Env::new();
    let run = env.run(&["demo", "--rows", "many"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = env.run(&["frobnicate"]);
    assert_eq!(run.code, 2);
    env.fails_cleanly(
        &["demo", "--rows", "10", "--files", "20"],
        &["--rows/--files"],
    );
    assert!(!env.warehouse().exists());
}

#[test]
fn expire_snapshots_and_remove_orphans_keep_the_data() {
    let (env, points) = imported();
    env.run(&[
        "sql",
        "CREATE SPATIAL INDEX FOR db.points USING hilbert(geometry, 12) \
         OPTIONS map('target-file-size-bytes', '8000')",
    ])
    .ok();
    let select = "SELECT count(*) FROM db.points";
    env.fails_cleanly(
        &["expire-snapshots", "db.points", "--retain-last", "0"],
        &["retain-last"],
    );

    // Keep only the current snapshot: the import's append goes, with its manifest list.
    let j = env
        .run(&[
            "--json",
            "expire-snapshots",
            "db.points",
            "--older-than",
            "0s",
            "--retain-last",
            "1",
        ])
        .ok()
        .json();
    assert_eq!(j["expired_snapshots"].as_array().unwrap().len(), 1);
    assert_eq!(j["remaining_snapshots"], 1);
    let deleted = j["deleted_files"].as_array().unwrap();
    let deleted_in_metadata = |suffix: &str| {
        deleted
            .iter()
            .map(|p| p.as_str().unwrap())
            .filter(|p| p.contains("/metadata/snap-") && p.ends_with(suffix))
            .count()
    };
    assert_eq!(
        deleted_in_metadata(".avro"),
        1,
        "manifest lists: {deleted:?}"
    );
    // The expired snapshot's file-bounds index root goes with it.
    assert_eq!(
        deleted_in_metadata(".puffin"),
        1,
        "index roots: {deleted:?}"
    );
    assert!(deleted.iter().all(|p| {
        std::path::Path::new(p.as_str().unwrap().trim_start_matches("file://"))
            .starts_with(env.warehouse())
    }));
    let count = env.run(&["sql", select]).ok();
    assert_eq!(count.value(), points.len().to_string());

    // A stray file under the table location is an orphan: listed by --dry-run, then removed.
    let stray = env.warehouse().join("db/points/data/stray.parquet");
    std::fs::write(&stray, b"not referenced").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let dry = env
        .run(&[
            "--json",
            "remove-orphans",
            "db.points",
            "--older-than",
            "0s",
            "--dry-run",
        ])
        .ok()
        .json();
    assert_eq!(dry["orphan_files"].as_array().unwrap().len(), 1, "{dry}");
    assert!(stray.exists());
    // A young file is left alone by the default 3-day horizon.
    let young = env
        .run(&["--json", "remove-orphans", "db.points"])
        .ok()
        .json();
    assert_eq!(young["orphan_files"].as_array().unwrap().len(), 0);
    env.run(&["remove-orphans", "db.points", "--older-than", "0s"])
        .ok();
    assert!(!stray.exists());
    let count = env.run(&["sql", select]).ok();
    assert_eq!(count.value(), points.len().to_string());
}

/// Seed 004's row-level statements, as written (the table named without its catalog), through
/// `geoberg sql` on a format-version 3 table: rows inserted with `ST_SetSRID`, updated and
/// deleted by id and by a polygon without a CRS, then merged.
#[test]
fn seed_004_update_delete_and_merge_run_as_written() {
    let env = Env::new();
    let script = env.path("changes.sql");
    std::fs::write(
        &script,
        "CREATE TABLE IF NOT EXISTS test_db.test_table (
             id bigint,
             data string,
             geom geometry(4326)
         ) USING iceberg TBLPROPERTIES ('format-version' = '3');
         INSERT INTO test_db.test_table VALUES
             (1, 'a', ST_SetSRID(ST_GeomFromText('POINT (1 1)'), 4326)),
             (2, 'b', ST_SetSRID(ST_GeomFromText('POINT (5 5)'), 4326)),
             (3, 'c', ST_SetSRID(ST_GeomFromText('POINT (1.5 0.5)'), 4326)),
             (4, 'e', ST_SetSRID(ST_GeomFromText('POINT (10 10)'), 4326));
         UPDATE test_db.test_table SET data = 'd' WHERE id = 1;
         UPDATE test_db.test_table
         SET data = 'd'
         WHERE ST_Intersects(geom, ST_GeomFromText('POLYGON ((0 0, 0 2, 2 2, 2 0, 0 0))'));
         DELETE FROM test_db.test_table WHERE id = 1;
         DELETE FROM test_db.test_table
         WHERE ST_Intersects(geom, ST_GeomFromText('POLYGON ((0 0, 0 2, 2 2, 2 0, 0 0))'));
         MERGE INTO test_db.test_table t
         USING (SELECT 2 AS id, 'm' AS data UNION ALL SELECT 9 AS id, 'n' AS data) s
         ON t.id = s.id
         WHEN MATCHED THEN UPDATE SET data = s.data
         WHEN NOT MATCHED THEN INSERT (id, data, geom)
             VALUES (s.id, s.data, ST_SetSRID(ST_Point(3, 3), 4326));",
    )
    .unwrap();
    let out = env
        .run(&["--json", "sql", "-f", script.to_str().unwrap()])
        .ok()
        .stdout;
    // One JSON document per statement: the counts each change reports.
    let docs: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&out)
        .into_iter::<serde_json::Value>()
        .map(Result::unwrap)
        .collect();
    let counts: Vec<&serde_json::Value> = docs.iter().map(|d| &d["rows"][0]).collect();
    // The change read the one data file the id bounds cannot rule out: copy-on-write kept
    // ids 2 and 4 in one file and wrote the updated 1 and 3 to another.
    assert!(
        docs[4]["notices"][0]
            .as_str()
            .unwrap()
            .contains("1 of 2 files scanned"),
        "{out}"
    );
    assert_eq!(counts.len(), 7, "{out}");
    assert_eq!(counts[2]["count"], 1, "{out}");
    assert_eq!(counts[3]["count"], 2, "{out}");
    assert_eq!(counts[4]["count"], 1, "{out}");
    assert_eq!(counts[5]["count"], 1, "{out}");
    assert_eq!(counts[6]["num_updated_rows"], 1, "{out}");
    assert_eq!(counts[6]["num_inserted_rows"], 1, "{out}");
    let rows = env
        .run(&[
            "--json",
            "sql",
            "SELECT id, data, ST_AsText(geom) AS wkt, _row_id FROM test_db.test_table ORDER BY id",
        ])
        .ok()
        .json();
    let rows: Vec<(i64, String, String)> = rows["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().unwrap(),
                r["data"].as_str().unwrap().to_string(),
                r["wkt"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (2, "m".to_string(), "POINT(5 5)".to_string()),
            (4, "e".to_string(), "POINT(10 10)".to_string()),
            (9, "n".to_string(), "POINT(3 3)".to_string()),
        ]
    );
    // The seed's strict write rule: a value without the column's SRID is refused.
    env.fails_cleanly(
        &[
            "sql",
            "INSERT INTO test_db.test_table VALUES (5, 'x', ST_GeomFromText('POINT (1 1)'))",
        ],
        &["SRID 0", "4326"],
    );
}

/// A geography table written through the library, then audited and drawn by the binary: rows
/// are boxed on the sphere, a window across the antimeridian (minx > maxx) is planned as the one
/// region it is and drawn at both edges of the map.
#[test]
fn geography_audit_layout_and_query_across_the_antimeridian() {
    use std::sync::Arc;

    use arrow_array::{BinaryArray, Int64Array, RecordBatch};
    use arrow_schema::{DataType as ArrowType, Field, Schema};
    use geoberg_table::{Storage, Table, TableIdent, connect_catalog};

    let env = Env::new();
    env.run(&[
        "sql",
        "CREATE TABLE db.g (id bigint NOT NULL, geog geography(4326)) \
         TBLPROPERTIES ('geoberg.parquet.row-group-rows' = '2')",
    ])
    .ok();
    let warehouse = format!("file://{}", env.warehouse().display());
    let catalog = connect_catalog(
        &format!("sqlite://{}", env.warehouse().join("catalog.db").display()),
        "geoberg",
        &warehouse,
        Storage::new(),
    )
    .unwrap();
    let mut table = Table::load(catalog, &TableIdent::new("db", "g").unwrap()).unwrap();
    let mut line = vec![1u8, 2, 0, 0, 0, 2, 0, 0, 0];
    for v in [170.0f64, 0.0, -170.0, 0.0] {
        line.extend(v.to_le_bytes());
    }
    let rows: Vec<(i64, Vec<u8>)> = vec![
        (1, line),
        (2, common::wkb_point(175.0, 5.0)),
        (3, common::wkb_point(0.0, 0.0)),
        (4, common::wkb_point(-179.0, -3.0)),
    ];
    for part in rows.chunks(2) {
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", ArrowType::Int64, false),
                Field::new("geog", ArrowType::Binary, true),
            ])),
            vec![
                Arc::new(Int64Array::from_iter_values(part.iter().map(|r| r.0))),
                Arc::new(BinaryArray::from_iter_values(part.iter().map(|r| &r.1))),
            ],
        )
        .unwrap();
        table = table.append(&[batch]).unwrap().0;
    }

    let audit = env
        .run(&[
            "--json",
            "audit",
            "db.g",
            "--window",
            "170,-10,-170,10",
            "--max-fraction",
            "1",
        ])
        .ok()
        .json();
    assert_eq!(audit["rows_outside_file_bounds"], 0, "{audit}");
    assert_eq!(audit["pruning"]["files_read"], 2, "{audit}");

    let svg = env.path("g.svg");
    env.run(&[
        "layout",
        "db.g",
        "--svg",
        svg.to_str().unwrap(),
        "--window",
        "170,-10,-170,10",
    ])
    .ok();
    let svg = std::fs::read_to_string(svg).unwrap();
    assert_eq!(svg.matches(r#"<rect class="window""#).count(), 2, "{svg}");

    // The same window in SQL means the sphere: the line along the equator from 170 to -170
    // crosses it, (0, 0) is outside.
    let j = env
        .run(&[
            "--json",
            "sql",
            "SELECT id FROM db.g WHERE ST_Intersects(geog, ST_MakeEnvelope(170, -10, -170, 10)) \
             ORDER BY id",
        ])
        .ok()
        .json();
    let ids: Vec<i64> = j["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 4], "{j}");
}

#[test]
fn rewrite_manifests_runs_from_geoberg_sql() {
    let (env, points) = imported();
    for id in 0..3 {
        env.run(&[
            "sql",
            &format!(
                "INSERT INTO db.points (id, geometry) VALUES ({}, ST_SetSRID(ST_Point(1, 1), 4326))",
                10_000 + id
            ),
        ])
        .ok();
    }
    let select = "SELECT count(*) FROM db.points";
    let before = env.run(&["--json", "sql", select]).ok().json();
    assert_eq!(before["rows"][0]["count(*)"], points.len() as u64 + 3);
    let inspect = env.run(&["--json", "inspect", "db.points"]).ok().json();
    assert_eq!(inspect["manifests"], 4);
    let call = env
        .run(&[
            "--json",
            "sql",
            "CALL geoberg.system.rewrite_manifests(table => 'db.points')",
        ])
        .ok()
        .json();
    assert_eq!(call["rows"][0]["rewritten_manifests_count"], 4, "{call}");
    assert_eq!(call["rows"][0]["added_manifests_count"], 1, "{call}");
    let after = env.run(&["--json", "sql", select]).ok().json();
    assert_eq!(after["rows"], before["rows"]);
    let inspect = env.run(&["--json", "inspect", "db.points"]).ok().json();
    assert_eq!(inspect["manifests"], 1);
    // upgrade_geometry runs through the same path; this column already declares its CRS.
    env.fails_cleanly(
        &[
            "sql",
            "CALL geoberg.system.upgrade_geometry(table => 'db.points', column => 'geometry', \
             srid => 4326)",
        ],
        &["nothing to upgrade"],
    );
}

/// Seed 002 from the command line: `bbox-columns add` puts the four columns before the
/// geometry (once), `bbox-columns backfill` fills the imported files into sorted ones and
/// reports the files a bbox-range window query reads before and after; a re-run skips.
#[test]
fn bbox_columns_add_and_backfill_cut_the_files_a_bbox_query_reads() {
    let (env, points) = imported();
    let w = [-10.0, 10.0, 5.0, 20.0];
    let window = "-10,10,5,20";
    // Nothing to backfill before the columns exist; the error names the command that adds them.
    env.fails_cleanly(
        &["bbox-columns", "backfill", "db.points"],
        &["bbox-columns add"],
    );
    env.fails_cleanly(
        &["bbox-columns", "add", "db.points", "--names", "a,b,c"],
        &["--names", "four"],
    );
    env.fails_cleanly(
        &["bbox-columns", "add", "db.points", "--column", "nope"],
        &["nope"],
    );

    let add = env
        .run(&["--json", "bbox-columns", "add", "db.points"])
        .ok()
        .json();
    let columns = ["bbox_min_x", "bbox_min_y", "bbox_max_x", "bbox_max_y"];
    assert_eq!(add["geometry"], "geometry", "{add}");
    assert_eq!(add["columns"], serde_json::json!(columns), "{add}");
    assert_eq!(add["added"], serde_json::json!(columns), "{add}");
    assert_eq!(
        add["properties"]["write.metadata.metrics.column.bbox_min_x"], "full",
        "{add}"
    );
    let describe = env.run(&["sql", "DESCRIBE db.points"]).ok().stdout;
    let at = |c: &str| {
        describe
            .find(&format!("| {c} "))
            .unwrap_or_else(|| panic!("{c}"))
    };
    assert!(at("bbox_max_y") < at("geometry"), "{describe}");
    let again = env.run(&["bbox-columns", "add", "db.points"]).ok().stdout;
    assert!(again.contains("exist"), "{again}");

    env.run(&[
        "sql",
        "ALTER TABLE db.points SET TBLPROPERTIES ('write.target-file-size-bytes' = '20000')",
    ])
    .ok();
    let fill = env
        .run(&[
            "--json",
            "bbox-columns",
            "backfill",
            "db.points",
            "--window",
            window,
        ])
        .ok()
        .json();
    assert_eq!(fill["partitions_total"], 1, "{fill}");
    assert_eq!(fill["partitions_backfilled"], 1, "{fill}");
    assert_eq!(fill["rewritten_data_files_count"], 8, "{fill}");
    assert_eq!(fill["rewritten_records_count"], points.len(), "{fill}");
    assert_eq!(fill["window"], serde_json::json!(w), "{fill}");
    assert_eq!(
        fill["files_read_before"], 8,
        "no file had bbox bounds: {fill}"
    );
    let inspect = env.run(&["--json", "inspect", "db.points"]).ok().json();
    assert_eq!(fill["files_total"], inspect["data_files"], "{fill}");
    assert_eq!(
        fill["added_data_files_count"], inspect["data_files"],
        "{fill}"
    );
    assert_eq!(inspect["records"], points.len(), "no row lost");
    let (total, read) = (
        fill["files_total"].as_u64().unwrap(),
        fill["files_read_after"].as_u64().unwrap(),
    );
    assert!(
        total >= 3 && read < total,
        "{read} of {total} files read after"
    );

    // The engine reads what the report says, and the bbox range finds exactly the points.
    let by_bbox = format!(
        "SELECT count(*) FROM db.points WHERE bbox_max_x >= {} AND bbox_min_x <= {} AND \
         bbox_max_y >= {} AND bbox_min_y <= {}",
        w[0], w[2], w[1], w[3]
    );
    let q = env.run(&["--json", "sql", &by_bbox]).ok().json();
    assert_eq!(
        q["rows"][0]["count(*)"].as_u64().unwrap() as usize,
        count_in(&points, w)
    );
    assert_eq!(q["scans"][0]["files_read"], read, "{q}");

    // Re-run: the partition is filled, nothing is committed; the text output says so.
    let text = env
        .run(&["bbox-columns", "backfill", "db.points", "--window", window])
        .ok()
        .stdout;
    assert!(
        text.contains("backfilled 0 of 1 partitions (1 already filled)"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{read} files before, {read} of {total} after")),
        "{text}"
    );
    env.fails_cleanly(
        &["bbox-columns", "backfill", "db.points", "--window", "1,2,3"],
        &["--window", "four numbers"],
    );
    env.fails_cleanly(
        &["bbox-columns", "backfill", "db.points", "--where", "id >"],
        &["syntax"],
    );
}
