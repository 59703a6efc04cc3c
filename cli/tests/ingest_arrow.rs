//! `geoberg ingest --format arrow`: Arrow IPC streams from a file (`--input`) and from stdin
//! into a table, checked against the records the test generated: counts in the `--json`
//! output, the rejects file, a replay with `--skip-records`, window counts through SQL, and the
//! errors that name the flag to pass.

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{
    Array, ArrayRef, BinaryArray, Float64Array, RecordBatch, StringArray, StructArray,
};
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, Field, Fields, Schema};
use common::*;

fn ipc_stream(batches: &[RecordBatch]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut writer = StreamWriter::try_new(&mut out, &batches[0].schema()).unwrap();
    for b in batches {
        writer.write(b).unwrap();
    }
    writer.finish().unwrap();
    drop(writer);
    out
}

fn struct_array(fields: Vec<(&str, ArrayRef)>) -> StructArray {
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = fields
        .into_iter()
        .map(|(name, a)| (Field::new(name, a.data_type().clone(), true), a))
        .unzip();
    StructArray::new(Fields::from(fields), arrays, None)
}

/// Point `i` of a fixed, scrambled grid over 20 x 10 degrees of Europe.
fn point(i: usize) -> (f64, f64) {
    let k = (i * 7_919) % 10_000;
    (4.0 + (k % 100) as f64 * 0.2, 45.0 + (k / 100) as f64 * 0.1)
}

/// Seed 003's messages as IPC batches of 500 rows: `id`, `location {lon, lat, crs}`,
/// `velocity {value, unitOfMeasure}`; the rows in `bad` have a latitude that is not a number.
fn messages(n: usize, bad: &[usize]) -> Vec<u8> {
    let ids: Vec<String> = (0..n).map(|i| format!("m{i:05}")).collect();
    let lon: Vec<f64> = (0..n).map(|i| point(i).0).collect();
    let lat: Vec<String> = (0..n)
        .map(|i| match bad.contains(&i) {
            true => "north".to_string(),
            false => point(i).1.to_string(),
        })
        .collect();
    let location = struct_array(vec![
        ("lon", Arc::new(Float64Array::from(lon))),
        ("lat", Arc::new(StringArray::from(lat))),
        ("crs", Arc::new(StringArray::from(vec!["EPSG:4326"; n]))),
    ]);
    let velocity = struct_array(vec![
        (
            "value",
            Arc::new(Float64Array::from(
                (0..n).map(|i| (i % 90) as f64).collect::<Vec<_>>(),
            )),
        ),
        (
            "unitOfMeasure",
            Arc::new(StringArray::from(vec!["km/h"; n])),
        ),
    ]);
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("location", location.data_type().clone(), true),
            Field::new("velocity", velocity.data_type().clone(), true),
        ])),
        vec![
            Arc::new(StringArray::from(ids)),
            Arc::new(location),
            Arc::new(velocity),
        ],
    )
    .unwrap();
    let batches: Vec<RecordBatch> = (0..n)
        .step_by(500)
        .map(|at| batch.slice(at, 500.min(n - at)))
        .collect();
    ipc_stream(&batches)
}

/// `n` WKB points (ids `w…`) labelled SRID 4326.
fn wkb_points(n: usize) -> Vec<u8> {
    let geom: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let (x, y) = point(i);
            wkb_point(x, y)
        })
        .collect();
    let srid = HashMap::from([("srid".to_string(), "4326".to_string())]);
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("geom", DataType::Binary, true).with_metadata(srid),
        ])),
        vec![
            Arc::new(StringArray::from(
                (0..n).map(|i| format!("w{i:05}")).collect::<Vec<_>>(),
            )),
            Arc::new(BinaryArray::from_iter_values(geom.iter())),
        ],
    )
    .unwrap();
    ipc_stream(&[batch])
}

fn count_in_window(env: &Env, table: &str) -> u64 {
    let sql = format!(
        "SELECT count(*) FROM {table} WHERE ST_Intersects(geom, \
         ST_MakeEnvelope(8.05, 46.05, 12.05, 48.05, 4326))"
    );
    env.run(&["--json", "sql", &sql]).ok().json()["rows"][0]["count(*)"]
        .as_u64()
        .unwrap()
}

fn brute_force_in_window(ids: impl Iterator<Item = usize>) -> u64 {
    ids.filter(|&i| {
        let (x, y) = point(i);
        (8.05..=12.05).contains(&x) && (46.05..=48.05).contains(&y)
    })
    .count() as u64
}

#[test]
fn ingest_format_arrow_reads_ipc_streams_from_a_file_and_from_stdin() {
    let env = Env::new();
    for table in ["iot.telemetry", "iot.replayed"] {
        env.run(&[
            "sql",
            &format!(
                "CREATE TABLE {table} (id string NOT NULL, velocity_value double, unit string, \
                 geom geometry(4326))"
            ),
        ])
        .ok();
    }
    let bad = [3, 1_234, 2_499];
    let input = env.path("messages.arrows");
    std::fs::write(&input, messages(2_500, &bad)).unwrap();
    let rejects = env.path("rejects.ndjson");
    let ingest = |table: &str, extra: &[&str]| {
        let mut args = vec![
            "--json",
            "ingest",
            "--table",
            table,
            "--format",
            "arrow",
            "--input",
            input.to_str().unwrap(),
            "--batch-rows",
            "1000",
            "--map",
            "unit=velocity.unitOfMeasure",
            "--rejects",
            rejects.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        env.run(&args).ok().json()
    };
    let run = ingest("iot.telemetry", &[]);
    assert_eq!(run["format"], "arrow", "{run}");
    assert_eq!(run["records"], 2_500, "{run}");
    assert_eq!(run["rows_committed"], 2_497, "{run}");
    assert_eq!(run["rows_rejected"], 3, "{run}");
    assert_eq!(run["rows_filtered"], 0, "{run}");
    assert_eq!(
        run["commits"], 3,
        "every 1,000 records, then the end: {run}"
    );
    assert_eq!(run["committed_through_record"], 2_500, "{run}");
    assert!(run.get("lines").is_none(), "{run}");

    let rejected: Vec<serde_json::Value> = std::fs::read_to_string(&rejects)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let numbers: Vec<u64> = rejected
        .iter()
        .map(|r| r["record_number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [4, 1_235, 2_500]);
    assert_eq!(
        (&rejected[1]["batch"], &rejected[1]["row"]),
        (&2.into(), &234.into())
    );
    assert!(
        rejected[1]["reason"]
            .as_str()
            .unwrap()
            .contains("location.lat"),
        "{}",
        rejected[1]
    );
    let good = || (0..2_500).filter(|i| !bad.contains(i));
    assert_eq!(
        count_in_window(&env, "iot.telemetry"),
        brute_force_in_window(good())
    );
    let units = env
        .run(&[
            "--json",
            "sql",
            "SELECT count(*) FROM iot.telemetry WHERE unit = 'km/h' AND velocity_value < 90",
        ])
        .ok()
        .json();
    assert_eq!(units["rows"][0]["count(*)"], 2_497, "{units}");

    // A replay after record 2,000 commits exactly the rest.
    let run = ingest("iot.replayed", &["--skip-records", "2000"]);
    assert_eq!(run["rows_committed"], 499, "{run}");
    assert_eq!(run["rows_rejected"], 1, "{run}");
    assert_eq!(
        count_in_window(&env, "iot.replayed"),
        brute_force_in_window(good().filter(|&i| i >= 2_000))
    );

    // WKB geometries piped through stdin.
    let run = env
        .run_with_stdin(
            &[
                "--json",
                "ingest",
                "--table",
                "iot.telemetry",
                "--format",
                "arrow",
                "--rejects",
                rejects.to_str().unwrap(),
            ],
            wkb_points(800),
        )
        .ok()
        .json();
    assert_eq!(
        (
            &run["rows_committed"],
            &run["commits"],
            &run["rows_rejected"]
        ),
        (&800.into(), &1.into(), &0.into()),
        "{run}"
    );
    assert_eq!(
        count_in_window(&env, "iot.telemetry"),
        brute_force_in_window(good()) + brute_force_in_window(0..800)
    );
}

#[test]
fn ingest_format_arrow_errors_name_the_flags_to_pass() {
    let env = Env::new();
    env.run(&[
        "sql",
        "CREATE TABLE iot.telemetry (id string NOT NULL, geom geometry(4326))",
    ])
    .ok();
    let rejects = env.path("rejects.ndjson");
    let rejects = rejects.to_str().unwrap();
    let arrow = ["ingest", "--table", "iot.telemetry", "--format", "arrow"];

    // Fields that are neither the geometry nor the default point paths.
    let position = struct_array(vec![
        ("x", Arc::new(Float64Array::from(vec![21.0]))),
        ("y", Arc::new(Float64Array::from(vec![52.0]))),
    ]);
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("position", position.data_type().clone(), true),
        ])),
        vec![Arc::new(StringArray::from(vec!["a"])), Arc::new(position)],
    )
    .unwrap();
    let stream = ipc_stream(&[batch]);
    env.run_with_stdin(
        &[&arrow[..], &["--rejects", rejects]].concat(),
        stream.clone(),
    )
    .fails_with(&["position.x", "position.y", "--lon", "--lat"]);
    let run = env
        .run_with_stdin(
            &[
                &["--json"][..],
                &arrow[..],
                &[
                    "--rejects",
                    rejects,
                    "--lon",
                    "position.x",
                    "--lat",
                    "position.y",
                ],
            ]
            .concat(),
            stream,
        )
        .ok()
        .json();
    assert_eq!(run["rows_committed"], 1, "{run}");

    // JSON given as Arrow, and the replay flag of the other format.
    env.run_with_stdin(
        &[&arrow[..], &["--rejects", rejects]].concat(),
        br#"{"location": {"lon": 1, "lat": 2}, "id": "j"}"#.to_vec(),
    )
    .fails_with(&["--format json"]);
    env.fails_cleanly(
        &[&arrow[..], &["--skip-lines", "5"]].concat(),
        &["--skip-records"],
    );
    env.fails_cleanly(
        &["ingest", "--table", "iot.telemetry", "--skip-records", "5"],
        &["--skip-lines", "--format arrow"],
    );
    let help = env.run(&["ingest", "--help"]).ok().stdout;
    for flag in ["--format", "arrow", "--skip-records"] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
}
