//! Streaming ingest of seed 003's JSON messages: points built in each message's CRS and
//! transformed, the two-step filter, rejects with their reasons, micro-batch commits, a replay
//! after the last committed line, and cluster on write on a clustered table.

mod common;

use std::collections::BTreeMap;
use std::io::Cursor;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use arrow_array::{Array, BinaryArray, Float64Array, StringArray};
use common::sqlite_catalog;
use geoberg_table::{
    BBox, Column, CreateTable, DataType, IngestOptions, IngestProgress, Table, TableIdent,
};

fn telemetry(dir: &std::path::Path) -> Table {
    CreateTable::new([
        Column::new("id", DataType::String).required(),
        Column::new("velocity_value", DataType::Double),
        Column::new("unit", DataType::String),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(
        sqlite_catalog(dir),
        &TableIdent::new("test_db", "telemetry").unwrap(),
    )
    .unwrap()
}

fn message(id: &str, lon: &str, lat: &str, crs: &str, velocity: &str) -> String {
    format!(
        r#"{{"location": {{"lon": "{lon}", "lat": "{lat}", "crs": "{crs}"}}, "velocity": {{"value": {velocity}, "unitOfMeasure": "km/h"}}, "id": "{id}"}}"#
    )
}

fn options() -> IngestOptions {
    IngestOptions {
        columns: BTreeMap::from([("unit".to_string(), "velocity.unitOfMeasure".to_string())]),
        envelope: Some(BBox::new(14.0, 49.0, 24.5, 55.0)),
        // A square inside the envelope stands in for the country's shape.
        within: Some(geo_types::Geometry::Polygon(geo_types::Polygon::new(
            vec![
                (15.0, 50.0),
                (24.0, 50.0),
                (24.0, 54.5),
                (15.0, 54.5),
                (15.0, 50.0),
            ]
            .into(),
            vec![],
        ))),
        batch_rows: 3,
        batch_interval: Duration::from_secs(60),
        ..IngestOptions::default()
    }
}

/// One ingested row: id, velocity, unit, x, y.
type Row = (String, Option<f64>, Option<String>, f64, f64);

/// Every row, by id.
fn rows(table: &Table) -> Vec<Row> {
    let (batches, _) = table.scan().execute().unwrap();
    let mut out = Vec::new();
    for b in &batches {
        let col = |n: &str| b.column(b.schema().index_of(n).unwrap()).clone();
        let (id, v, unit, g) = (col("id"), col("velocity_value"), col("unit"), col("geom"));
        let id = id.as_any().downcast_ref::<StringArray>().unwrap();
        let v = v.as_any().downcast_ref::<Float64Array>().unwrap();
        let unit = unit.as_any().downcast_ref::<StringArray>().unwrap();
        let g = g.as_any().downcast_ref::<BinaryArray>().unwrap();
        for r in 0..b.num_rows() {
            let wkb = g.value(r);
            let f = |at: usize| f64::from_le_bytes(wkb[at..at + 8].try_into().unwrap());
            out.push((
                id.value(r).to_string(),
                v.is_valid(r).then(|| v.value(r)),
                unit.is_valid(r).then(|| unit.value(r).to_string()),
                f(5),
                f(13),
            ));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn seed_003_messages_are_filtered_transformed_committed_and_rejected_with_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let table = telemetry(dir.path());
    let lines = [
        message("a", "21.00", "52.00", "EPSG:4326", "21.0"), // 1: kept
        message("b", "2337709.3", "6800125.5", "EPSG:3857", "5"), // 2: kept after 3857 -> 4326
        "{not json".to_string(),                             // 3: rejected
        message("c", "-3.7", "40.4", "EPSG:4326", "1"),      // 4: outside the envelope
        message("d", "14.5", "49.5", "EPSG:4326", "1"),      // 5: in the envelope, not the shape
        message("e", "21", "52", "EPSG:2180", "1"),          // 6: rejected, no reprojection
        message("f", "20", "51", "EPSG:4326", "\"fast\""),   // 7: rejected, not a double
        r#"{"location": {"lon": "20"}, "id": "g"}"#.to_string(), // 8: rejected, no latitude
        r#"{"location": {"lon": 20, "lat": 51}}"#.to_string(), // 9: rejected, no id
        message("h", "16", "53", "OGC:CRS84", "7.5"),        // 10: kept
        message("i", "23", "54", "EPSG:4326", "8"),          // 11: kept
    ];
    let input = Cursor::new(lines.join("\n").into_bytes());
    let mut rejects = Vec::new();
    let mut commits = Vec::new();
    let stop = AtomicBool::new(false);
    let (table, progress) = table
        .ingest(
            input,
            &mut rejects,
            &options(),
            &stop,
            |p: &IngestProgress| commits.push(p.committed_through_line),
        )
        .unwrap();

    assert_eq!(progress.lines, 11);
    assert_eq!(progress.rows_committed, 4, "{progress:?}");
    assert_eq!(progress.rows_filtered, 2);
    assert_eq!(progress.rows_rejected, 5);
    assert_eq!(progress.committed_through_line, 11);
    assert!(progress.commits >= 2, "batches of 3 records: {progress:?}");
    assert_eq!(commits.last(), Some(&11));

    let got = rows(&table);
    let ids: Vec<&str> = got.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(ids, ["a", "b", "h", "i"]);
    assert_eq!((got[0].1, got[0].2.as_deref()), (Some(21.0), Some("km/h")));
    // EPSG:3857 (2337709.3, 6800125.5) is lon 21, lat 52 (pyproj: 20.99999999, 51.99999999).
    assert!(
        (got[1].3 - 21.0).abs() < 1e-6 && (got[1].4 - 52.0).abs() < 1e-6,
        "{:?}",
        got[1]
    );

    let rejects: Vec<serde_json::Value> = String::from_utf8(rejects)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let reasons: Vec<(u64, String)> = rejects
        .iter()
        .map(|r| {
            (
                r["line"].as_u64().unwrap(),
                r["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let lines: Vec<u64> = reasons.iter().map(|r| r.0).collect();
    assert_eq!(lines, [3, 6, 7, 8, 9], "{reasons:?}");
    assert!(reasons[0].1.contains("not JSON"), "{reasons:?}");
    assert!(
        reasons[1].1.contains("ST_UNSUPPORTED_REPROJECTION") || reasons[1].1.contains("2180"),
        "{reasons:?}"
    );
    assert!(
        reasons[2].1.contains("velocity.value") && reasons[2].1.contains("fast"),
        "{reasons:?}"
    );
    assert!(reasons[3].1.contains("location.lat"), "{reasons:?}");
    assert!(
        reasons[4].1.contains("id") && reasons[4].1.contains("required"),
        "{reasons:?}"
    );
    assert_eq!(rejects[2]["record"]["id"], "f", "the record itself is kept");
}

#[test]
fn a_replay_skips_committed_lines_and_a_stop_commits_what_is_buffered() {
    let dir = tempfile::tempdir().unwrap();
    let table = telemetry(dir.path());
    let lines: Vec<String> = (0..10)
        .map(|i| {
            message(
                &format!("m{i}"),
                "20",
                &format!("{}", 51.0 + i as f64 / 10.0),
                "EPSG:4326",
                "1",
            )
        })
        .collect();
    let text = lines.join("\n");
    let opts = IngestOptions {
        skip_lines: 6,
        ..options()
    };
    let stop = AtomicBool::new(false);
    let (table, progress) = table
        .ingest(
            Cursor::new(text.clone().into_bytes()),
            &mut std::io::sink(),
            &opts,
            &stop,
            |_| {},
        )
        .unwrap();
    assert_eq!(progress.rows_committed, 4);
    let ids: Vec<String> = rows(&table).into_iter().map(|r| r.0).collect();
    assert_eq!(ids, ["m6", "m7", "m8", "m9"]);

    // Following a file that stops growing until Ctrl-C: what was read is committed, once.
    let stop = Arc::new(AtomicBool::new(false));
    let later = stop.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        later.store(true, Ordering::Relaxed);
    });
    let follow = IngestOptions {
        batch_rows: 1_000,
        follow: true,
        ..options()
    };
    let (table, progress) = table
        .ingest(
            Cursor::new(text.into_bytes()),
            &mut std::io::sink(),
            &follow,
            &stop,
            |_| {},
        )
        .unwrap();
    assert_eq!(
        (progress.lines, progress.rows_committed, progress.commits),
        (10, 10, 1)
    );
    assert_eq!(rows(&table).len(), 14);

    let e = table
        .ingest(
            Cursor::new(Vec::new()),
            &mut std::io::sink(),
            &IngestOptions {
                columns: BTreeMap::from([("nope".to_string(), "x".to_string())]),
                ..options()
            },
            &AtomicBool::new(false),
            |_| {},
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("nope"), "{e}");
}
