//! Streaming ingest of seed 003's messages, as JSON lines and as Arrow IPC streams: points built
//! in each message's CRS and transformed, WKB geometries taken as they are or transformed, the
//! two-step filter, rejects with their reasons and positions, micro-batch commits at the
//! cadence asked, a replay after the last committed line or record, and following a growing
//! file.

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
            Cursor::new(format!("{text}\n").into_bytes()),
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

// ---- Arrow IPC ----------------------------------------------------------------------------

use arrow_array::{
    ArrayRef, Float64Array as F64, RecordBatch, StructArray, builder::BinaryBuilder, cast::AsArray,
};
use arrow_buffer::NullBuffer;
use arrow_ipc::writer::{FileWriter, StreamWriter};
use arrow_schema::{DataType as ArrowType, Field, Fields, Schema};

/// Web Mercator's sphere (EPSG:3857), written here rather than taken from geoberg.
const R: f64 = 6_378_137.0;

fn to_mercator(lon: f64, lat: f64) -> (f64, f64) {
    let x = R * lon.to_radians();
    let y = R
        * (std::f64::consts::FRAC_PI_4 + lat.to_radians() / 2.0)
            .tan()
            .ln();
    (x, y)
}

fn from_mercator(x: f64, y: f64) -> (f64, f64) {
    let lon = (x / R).to_degrees();
    let lat = (2.0 * (y / R).exp().atan() - std::f64::consts::FRAC_PI_2).to_degrees();
    (lon, lat)
}

/// A small deterministic generator (xorshift64*), values in [0, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `batches` as an Arrow IPC stream.
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

/// `batch` cut into IPC batches of `rows` rows.
fn cut(batch: &RecordBatch, rows: usize) -> Vec<RecordBatch> {
    (0..batch.num_rows())
        .step_by(rows)
        .map(|at| batch.slice(at, rows.min(batch.num_rows() - at)))
        .collect()
}

/// The coordinates of a little-endian ISO WKB point or line string.
fn coords(wkb: &[u8]) -> Vec<(f64, f64)> {
    let f = |at: usize| f64::from_le_bytes(wkb[at..at + 8].try_into().unwrap());
    match u32::from_le_bytes(wkb[1..5].try_into().unwrap()) {
        1 => vec![(f(5), f(13))],
        2 => {
            let n = u32::from_le_bytes(wkb[5..9].try_into().unwrap()) as usize;
            (0..n).map(|i| (f(9 + 16 * i), f(17 + 16 * i))).collect()
        }
        t => panic!("unexpected WKB type {t}"),
    }
}

/// A stored row: velocity, unit, WKB.
type Stored = (Option<f64>, Option<String>, Vec<u8>);

/// Every row by id.
fn rows_by_id(table: &Table) -> BTreeMap<String, Stored> {
    let (batches, _) = table.scan().execute().unwrap();
    let mut out = BTreeMap::new();
    for b in &batches {
        let col = |n: &str| b.column(b.schema().index_of(n).unwrap()).clone();
        let (id, v, unit, g) = (col("id"), col("velocity_value"), col("unit"), col("geom"));
        let (id, v, unit, g) = (
            id.as_string::<i32>(),
            v.as_primitive::<arrow_array::types::Float64Type>(),
            unit.as_string::<i32>(),
            g.as_binary::<i32>(),
        );
        for r in 0..b.num_rows() {
            let old = out.insert(
                id.value(r).to_string(),
                (
                    v.is_valid(r).then(|| v.value(r)),
                    unit.is_valid(r).then(|| unit.value(r).to_string()),
                    g.value(r).to_vec(),
                ),
            );
            assert!(old.is_none(), "id {} committed twice", id.value(r));
        }
    }
    out
}

fn rejects_of(bytes: Vec<u8>) -> Vec<serde_json::Value> {
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn struct_array(fields: Vec<(&str, ArrayRef)>, nulls: Option<NullBuffer>) -> StructArray {
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = fields
        .into_iter()
        .map(|(name, a)| (Field::new(name, a.data_type().clone(), true), a))
        .unzip();
    StructArray::new(Fields::from(fields), arrays, nulls)
}

/// A seed 003 record generated for the stream: where it is and what the table should hold.
struct Generated {
    id: String,
    /// The stored point expected, in EPSG:4326 (`None`: the record is rejected).
    expected: Option<(f64, f64)>,
    velocity: f64,
}

/// `n` seed 003 messages as one Arrow batch: `id`, `location {lon, lat, crs}` (a third each in
/// EPSG:3857, EPSG:4326 and OGC:CRS84), `velocity {value, unitOfMeasure}` (value as text, as
/// the seed sends it); `bad` injects a fault at a 0-based row, and such rows expect nothing.
fn seed_003_batch(n: usize, seed: u64, bad: &[(usize, &str)]) -> (RecordBatch, Vec<Generated>) {
    let mut rng = Rng(seed);
    let (mut lon, mut lat, mut crs, mut ids, mut value) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut location_valid = Vec::with_capacity(n);
    let mut generated = Vec::new();
    for i in 0..n {
        let (x, y) = (-10.0 + 40.0 * rng.next(), 35.0 + 25.0 * rng.next());
        let velocity = (i % 130) as f64;
        let id = format!("r{i:05}");
        let (crs_name, stored_x, stored_y, expected) = match i % 3 {
            0 => {
                let (mx, my) = to_mercator(x, y);
                ("EPSG:3857", mx, my, from_mercator(mx, my))
            }
            1 => ("EPSG:4326", x, y, (x, y)),
            _ => ("OGC:CRS84", x, y, (x, y)),
        };
        let mut row_lon = Some(stored_x);
        let mut row_lat = stored_y;
        let mut row_crs = crs_name.to_string();
        let mut row_id = Some(id.clone());
        let mut row_value = velocity.to_string();
        let fault = bad.iter().find(|(at, _)| *at == i).map(|(_, f)| *f);
        match fault {
            Some("null lon") => row_lon = None,
            Some("nan lat") => row_lat = f64::NAN,
            Some("crs 2180") => row_crs = "EPSG:2180".into(),
            Some("fast") => row_value = "fast".into(),
            Some("null location") => {}
            Some("null id") => row_id = None,
            Some(other) => panic!("unknown fault {other}"),
            None => {}
        }
        location_valid.push(fault != Some("null location"));
        lon.push(row_lon);
        lat.push(Some(row_lat));
        crs.push(Some(row_crs));
        ids.push(row_id);
        value.push(Some(row_value));
        generated.push(Generated {
            id,
            expected: fault.is_none().then_some(expected),
            velocity,
        });
    }
    let location = struct_array(
        vec![
            ("lon", Arc::new(F64::from(lon))),
            ("lat", Arc::new(F64::from(lat))),
            ("crs", Arc::new(StringArray::from(crs))),
        ],
        Some(NullBuffer::from(location_valid)),
    );
    let velocity = struct_array(
        vec![
            ("value", Arc::new(StringArray::from(value))),
            (
                "unitOfMeasure",
                Arc::new(StringArray::from(vec![Some("km/h"); n])),
            ),
        ],
        None,
    );
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Utf8, true),
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
    (batch, generated)
}

/// Seed 003's mapping of `unit`, for streams that carry it.
fn arrow_options(batch_rows: usize) -> IngestOptions {
    IngestOptions {
        columns: BTreeMap::from([("unit".to_string(), "velocity.unitOfMeasure".to_string())]),
        ..wkb_options(batch_rows)
    }
}

/// No mapping: `unit` has no field and stays null.
fn wkb_options(batch_rows: usize) -> IngestOptions {
    IngestOptions {
        batch_rows,
        batch_interval: Duration::from_secs(600),
        ..IngestOptions::default()
    }
}

#[test]
fn arrow_ipc_lon_lat_structs_commit_every_batch_rows_and_reject_bad_rows() {
    let dir = tempfile::tempdir().unwrap();
    let table = telemetry(dir.path());
    // 0-based rows; the rejects name them 1-based as record numbers.
    let bad = [
        (17, "null lon"),
        (2_500, "nan lat"),
        (5_000, "crs 2180"),
        (7_777, "fast"),
        (9_000, "null location"),
        (9_999, "null id"),
    ];
    let (batch, generated) = seed_003_batch(10_000, 7, &bad);
    // IPC batches of 1,024 rows: commits fall inside them.
    let stream = ipc_stream(&cut(&batch, 1_024));
    let mut rejects = Vec::new();
    let mut commits = Vec::new();
    let (table, progress) = table
        .ingest_arrow(
            Cursor::new(stream),
            &mut rejects,
            &arrow_options(3_000),
            &AtomicBool::new(false),
            |p: &IngestProgress| commits.push((p.committed_through_record, p.rows_committed)),
        )
        .unwrap();

    // Every 3,000 records, then the end: 4 commits, each short of the rows rejected so far.
    assert_eq!(
        commits,
        [
            (3_000, 2_998),
            (6_000, 5_997),
            (9_000, 8_996),
            (10_000, 9_994)
        ]
    );
    assert_eq!(progress.commits, 4);
    assert_eq!(
        (
            progress.records,
            progress.rows_rejected,
            progress.rows_filtered,
            progress.lines
        ),
        (10_000, 6, 0, 0)
    );

    let got = rows_by_id(&table);
    assert_eq!(got.len(), 9_994);
    let mut worst: f64 = 0.0;
    for g in &generated {
        let Some((x, y)) = g.expected else {
            assert!(!got.contains_key(&g.id), "{} was rejected", g.id);
            continue;
        };
        let (velocity, unit, wkb) = &got[&g.id];
        assert_eq!(
            (*velocity, unit.as_deref()),
            (Some(g.velocity), Some("km/h"))
        );
        let [(gx, gy)] = coords(wkb)[..] else {
            panic!("not a point")
        };
        worst = worst.max((gx - x).abs()).max((gy - y).abs());
    }
    assert!(worst < 1e-9, "worst coordinate error {worst} degrees");

    let rejects = rejects_of(rejects);
    let numbers: Vec<u64> = rejects
        .iter()
        .map(|r| r["record_number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [18, 2_501, 5_001, 7_778, 9_001, 10_000]);
    for (r, (row, _)) in rejects.iter().zip(bad) {
        assert_eq!(r["batch"], row / 1_024, "{r}");
        assert_eq!(r["row"], row % 1_024, "{r}");
    }
    let reason = |i: usize| rejects[i]["reason"].as_str().unwrap().to_string();
    assert!(reason(0).contains("location.lon is null"), "{}", reason(0));
    assert!(
        reason(1).contains("location.lat") && reason(1).contains("not a number"),
        "{}",
        reason(1)
    );
    assert!(reason(2).contains("2180"), "{}", reason(2));
    assert!(
        reason(3).contains("velocity.value") && reason(3).contains("fast"),
        "{}",
        reason(3)
    );
    assert!(reason(4).contains("location.lon is null"), "{}", reason(4));
    assert!(
        reason(5).contains("id") && reason(5).contains("required"),
        "{}",
        reason(5)
    );
    assert_eq!(
        rejects[3]["record"]["id"], "r07777",
        "the record itself is kept"
    );
    assert_eq!(rejects[3]["record"]["velocity"]["value"], "fast");
    assert_eq!(rejects[2]["record"]["location"]["crs"], "EPSG:2180");

    // A window returns exactly the rows a brute force over the generated points finds.
    let window = BBox::new(0.0, 40.0, 12.5, 50.0);
    let (batches, _) = table.scan().with_window("geom", window).execute().unwrap();
    let mut scanned: Vec<String> = batches
        .iter()
        .flat_map(|b| {
            let ids = b.column(b.schema().index_of("id").unwrap()).clone();
            (0..b.num_rows())
                .map(move |r| ids.as_string::<i32>().value(r).to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    scanned.sort();
    let brute: Vec<String> = generated
        .iter()
        .filter(|g| {
            g.expected.is_some_and(|(x, y)| {
                window.min_x <= x && x <= window.max_x && window.min_y <= y && y <= window.max_y
            })
        })
        .map(|g| g.id.clone())
        .collect();
    assert!(
        brute.len() > 500,
        "a window worth checking: {}",
        brute.len()
    );
    assert_eq!(scanned, brute);
}

#[test]
fn arrow_ipc_replay_with_skip_records_commits_exactly_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let table = telemetry(dir.path());
    let (batch, generated) = seed_003_batch(5_000, 11, &[]);
    let stream = ipc_stream(&cut(&batch, 700));
    // A crash stand-in: Ctrl-C right after the second commit.
    let stop = AtomicBool::new(false);
    let (table, first) = table
        .ingest_arrow(
            Cursor::new(stream.clone()),
            &mut std::io::sink(),
            &arrow_options(1_000),
            &stop,
            |p| {
                if p.commits == 2 {
                    stop.store(true, Ordering::Relaxed);
                }
            },
        )
        .unwrap();
    let through = first.committed_through_record;
    assert!(
        (2_000..5_000).contains(&through),
        "stopped part way: {first:?}"
    );
    assert_eq!(first.rows_committed, through);
    assert_eq!(rows_by_id(&table).len() as u64, through);

    let replay = IngestOptions {
        skip_records: through,
        ..arrow_options(1_000)
    };
    let (table, second) = table
        .ingest_arrow(
            Cursor::new(stream),
            &mut std::io::sink(),
            &replay,
            &AtomicBool::new(false),
            |_| {},
        )
        .unwrap();
    assert_eq!(second.rows_committed, 5_000 - through);
    assert_eq!(second.committed_through_record, 5_000);
    let got = rows_by_id(&table);
    let want: Vec<&String> = generated.iter().map(|g| &g.id).collect();
    assert_eq!(got.keys().collect::<Vec<_>>(), want, "every record once");

    // A skip that ends inside an IPC batch.
    let dir = tempfile::tempdir().unwrap();
    let (table, p) = telemetry(dir.path())
        .ingest_arrow(
            Cursor::new(ipc_stream(&cut(&batch, 700))),
            &mut std::io::sink(),
            &IngestOptions {
                skip_records: 2_345,
                ..arrow_options(1_000)
            },
            &AtomicBool::new(false),
            |_| {},
        )
        .unwrap();
    assert_eq!((p.rows_committed, p.records), (2_655, 5_000));
    let got = rows_by_id(&table);
    assert_eq!(got.keys().next().map(String::as_str), Some("r02345"));
    assert_eq!(got.len(), 2_655);
}

/// `geom` as WKB: `geom` values (None: null), the field labelled `srid`, with an `id` and a
/// `velocity_value`.
fn wkb_batch(ids: &[String], geoms: &[Option<Vec<u8>>], srid: i32) -> RecordBatch {
    let mut builder = BinaryBuilder::new();
    for g in geoms {
        match g {
            Some(v) => builder.append_value(v),
            None => builder.append_null(),
        }
    }
    let geom = Field::new("geom", ArrowType::Binary, true).with_metadata(
        [("srid".to_string(), srid.to_string())]
            .into_iter()
            .collect(),
    );
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Utf8, false),
            geom,
            Field::new("velocity_value", ArrowType::Float64, true),
        ])),
        vec![
            Arc::new(StringArray::from(ids.to_vec())),
            Arc::new(builder.finish()),
            Arc::new(F64::from(
                (0..ids.len()).map(|i| i as f64 / 2.0).collect::<Vec<_>>(),
            )),
        ],
    )
    .unwrap()
}

fn wkb_line(points: &[(f64, f64)]) -> Vec<u8> {
    let mut v = vec![1u8, 2, 0, 0, 0];
    v.extend_from_slice(&(points.len() as u32).to_le_bytes());
    for (x, y) in points {
        v.extend_from_slice(&x.to_le_bytes());
        v.extend_from_slice(&y.to_le_bytes());
    }
    v
}

fn wkb_point(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1u8, 1, 0, 0, 0];
    v.extend_from_slice(&x.to_le_bytes());
    v.extend_from_slice(&y.to_le_bytes());
    v
}

#[test]
fn arrow_ipc_wkb_in_3857_is_transformed_filtered_and_bad_values_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let table = telemetry(dir.path());
    let mut rng = Rng(3);
    let n = 3_000;
    let ids: Vec<String> = (0..n).map(|i| format!("w{i:05}")).collect();
    let mut geoms = Vec::new();
    // The lon/lat each stored vertex should have (the test's inverse of what it sent).
    let mut expected: Vec<Vec<(f64, f64)>> = Vec::new();
    for i in 0..n {
        let (lon, lat) = (-5.0 + 30.0 * rng.next(), 38.0 + 20.0 * rng.next());
        let vertices = if i % 100 == 42 {
            vec![(lon, lat), (lon + 0.5, lat + 0.25)]
        } else {
            vec![(lon, lat)]
        };
        let mercator: Vec<(f64, f64)> = vertices.iter().map(|&(x, y)| to_mercator(x, y)).collect();
        expected.push(mercator.iter().map(|&(x, y)| from_mercator(x, y)).collect());
        geoms.push(Some(if mercator.len() == 1 {
            wkb_point(mercator[0].0, mercator[0].1)
        } else {
            wkb_line(&mercator)
        }));
    }
    // Faults: a null, bytes that are not WKB, an EWKB value in a CRS with no reprojection.
    geoms[10] = None;
    geoms[20] = Some(vec![1, 2, 3]);
    let mut ewkb = vec![1u8];
    ewkb.extend_from_slice(&(1u32 | 0x2000_0000).to_le_bytes());
    ewkb.extend_from_slice(&2180u32.to_le_bytes());
    ewkb.extend_from_slice(&500_000f64.to_le_bytes());
    ewkb.extend_from_slice(&400_000f64.to_le_bytes());
    geoms[30] = Some(ewkb);
    let bad = [10usize, 20, 30];

    let envelope = BBox::new(0.0, 40.0, 20.0, 55.0);
    let square = (2.0, 42.0, 18.0, 53.0);
    let options = IngestOptions {
        envelope: Some(envelope),
        within: Some(geo_types::Geometry::Polygon(geo_types::Polygon::new(
            vec![
                (square.0, square.1),
                (square.2, square.1),
                (square.2, square.3),
                (square.0, square.3),
                (square.0, square.1),
            ]
            .into(),
            vec![],
        ))),
        ..wkb_options(1_000)
    };
    let batch = wkb_batch(&ids, &geoms, 3857);
    let mut rejects = Vec::new();
    let (table, progress) = table
        .ingest_arrow(
            Cursor::new(ipc_stream(&cut(&batch, 512))),
            &mut rejects,
            &options,
            &AtomicBool::new(false),
            |_| {},
        )
        .unwrap();

    // Brute force: inside the square (so inside the envelope too), every vertex.
    let inside = |v: &[(f64, f64)]| {
        v.iter()
            .all(|&(x, y)| square.0 < x && x < square.2 && square.1 < y && y < square.3)
    };
    let kept: Vec<usize> = (0..n)
        .filter(|i| !bad.contains(i) && inside(&expected[*i]))
        .collect();
    assert!(kept.iter().any(|i| i % 100 == 42), "a line string is kept");
    assert_eq!(progress.rows_committed, kept.len() as u64);
    assert_eq!(progress.rows_rejected, 3);
    assert_eq!(
        progress.rows_filtered,
        (n - bad.len() - kept.len()) as u64,
        "every other row filtered"
    );
    assert_eq!(progress.commits, 3, "3,000 records, 1,000 a commit");

    let got = rows_by_id(&table);
    assert_eq!(got.len(), kept.len());
    for &i in &kept {
        let (velocity, unit, wkb) = &got[&ids[i]];
        assert_eq!((*velocity, unit.as_deref()), (Some(i as f64 / 2.0), None));
        let stored = coords(wkb);
        assert_eq!(stored.len(), expected[i].len());
        for ((x, y), (ex, ey)) in stored.iter().zip(&expected[i]) {
            assert!(
                (x - ex).abs() < 1e-9 && (y - ey).abs() < 1e-9,
                "{}: {:?} vs {:?}",
                ids[i],
                stored,
                expected[i]
            );
        }
    }

    let rejects = rejects_of(rejects);
    let rows: Vec<u64> = rejects
        .iter()
        .map(|r| r["record_number"].as_u64().unwrap() - 1)
        .collect();
    assert_eq!(rows, [10, 20, 30]);
    assert!(
        rejects[0]["reason"]
            .as_str()
            .unwrap()
            .contains("geom is null"),
        "{}",
        rejects[0]
    );
    assert!(
        rejects[1]["reason"].as_str().unwrap().contains("not WKB"),
        "{}",
        rejects[1]
    );
    assert!(
        rejects[2]["reason"].as_str().unwrap().contains("2180"),
        "{}",
        rejects[2]
    );
    assert_eq!(rejects[2]["record"]["id"], "w00030");
}

#[test]
fn arrow_ipc_wkb_in_the_column_crs_goes_in_as_it_is_also_from_an_ipc_file() {
    let dir = tempfile::tempdir().unwrap();
    let table = telemetry(dir.path());
    let mut rng = Rng(5);
    let ids: Vec<String> = (0..1_500).map(|i| format!("f{i:05}")).collect();
    let geoms: Vec<Option<Vec<u8>>> = ids
        .iter()
        .map(|_| {
            Some(wkb_point(
                -180.0 + 360.0 * rng.next(),
                -90.0 + 180.0 * rng.next(),
            ))
        })
        .collect();
    let batch = wkb_batch(&ids, &geoms, 4326);
    // The IPC file format (`ARROW1`, padding, the stream, a footer), read as its stream.
    let mut file = Vec::new();
    let mut writer = FileWriter::try_new(&mut file, &batch.schema()).unwrap();
    for b in cut(&batch, 400) {
        writer.write(&b).unwrap();
    }
    writer.finish().unwrap();
    drop(writer);
    assert!(file.starts_with(b"ARROW1"));
    let (table, p) = table
        .ingest_arrow(
            Cursor::new(file),
            &mut std::io::sink(),
            &wkb_options(100_000),
            &AtomicBool::new(false),
            |_| {},
        )
        .unwrap();
    assert_eq!(
        (p.rows_committed, p.commits, p.rows_rejected),
        (1_500, 1, 0)
    );
    let got = rows_by_id(&table);
    for (id, g) in ids.iter().zip(&geoms) {
        assert_eq!(&got[id].2, g.as_ref().unwrap(), "{id}: the same bytes");
    }
}

#[test]
fn arrow_schemas_that_cannot_be_ingested_fail_naming_their_fields_and_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let table = telemetry(dir.path());
    let position = struct_array(
        vec![
            ("x", Arc::new(F64::from(vec![21.0]))),
            ("y", Arc::new(F64::from(vec![52.0]))),
        ],
        None,
    );
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Utf8, false),
            Field::new("position", position.data_type().clone(), true),
        ])),
        vec![Arc::new(StringArray::from(vec!["a"])), Arc::new(position)],
    )
    .unwrap();
    let stream = ipc_stream(&[batch]);
    let before = table.metadata().current_snapshot_id();
    let e = table
        .ingest_arrow(
            Cursor::new(stream.clone()),
            &mut std::io::sink(),
            &wkb_options(10),
            &AtomicBool::new(false),
            |_| {},
        )
        .unwrap_err()
        .to_string();
    for part in ["position.x", "position.y", "--lon", "--lat", "geom"] {
        assert!(e.contains(part), "{part}: {e}");
    }
    let table = table.refresh().unwrap();
    assert_eq!(table.metadata().current_snapshot_id(), before);

    // A mapped field the stream lacks, and a required column without a field.
    let geoms = [Some(wkb_point(21.0, 52.0))];
    let ingest = |batch: RecordBatch, options: &IngestOptions| {
        table
            .ingest_arrow(
                Cursor::new(ipc_stream(&[batch])),
                &mut std::io::sink(),
                options,
                &AtomicBool::new(false),
                |_| {},
            )
            .unwrap_err()
            .to_string()
    };
    let e = ingest(wkb_batch(&["a".into()], &geoms, 4326), &arrow_options(10));
    assert!(
        e.contains("velocity.unitOfMeasure") && e.contains("velocity_value: Float64"),
        "{e}"
    );
    let no_id = wkb_batch(&["a".into()], &geoms, 4326)
        .project(&[1])
        .unwrap();
    let e = ingest(no_id, &wkb_options(10));
    assert!(
        e.contains("\"id\" is required") && e.contains("--map id="),
        "{e}"
    );

    // With the paths named, the same stream goes in (no CRS field: the column's).
    let (table, p) = table
        .ingest_arrow(
            Cursor::new(stream),
            &mut std::io::sink(),
            &IngestOptions {
                lon: "position.x".into(),
                lat: "position.y".into(),
                ..wkb_options(10)
            },
            &AtomicBool::new(false),
            |_| {},
        )
        .unwrap();
    assert_eq!(p.rows_committed, 1);
    assert_eq!(coords(&rows_by_id(&table)["a"].2), [(21.0, 52.0)]);

    // Each format recognises the other and names the flag.
    let json = message("a", "21", "52", "EPSG:4326", "1");
    let e = table
        .ingest_arrow(
            Cursor::new(json.into_bytes()),
            &mut std::io::sink(),
            &wkb_options(10),
            &AtomicBool::new(false),
            |_| {},
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("--format json"), "{e}");
    let (batch, _) = seed_003_batch(3, 1, &[]);
    let e = table
        .ingest(
            Cursor::new(ipc_stream(&[batch])),
            &mut std::io::sink(),
            &options(),
            &AtomicBool::new(false),
            |_| {},
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("--format arrow"), "{e}");
}

#[test]
fn following_a_growing_file_reads_records_written_later_and_whole() {
    // Arrow: the stream's end (EOS) ends the ingest, however long the writer takes.
    let dir = tempfile::tempdir().unwrap();
    let table = telemetry(dir.path());
    let (batch, _) = seed_003_batch(300, 13, &[]);
    let path = dir.path().join("growing.arrows");
    let mut writer =
        StreamWriter::try_new(std::fs::File::create(&path).unwrap(), &batch.schema()).unwrap();
    writer.write(&batch.slice(0, 100)).unwrap();
    writer.flush().unwrap();
    let follow = IngestOptions {
        follow: true,
        batch_interval: Duration::from_millis(200),
        ..arrow_options(100_000)
    };
    let input = std::fs::File::open(&path).unwrap();
    let ingest = std::thread::spawn(move || {
        let mut commits = Vec::new();
        let (_, p) = table
            .ingest_arrow(
                input,
                &mut std::io::sink(),
                &follow,
                &AtomicBool::new(false),
                |p| commits.push(p.committed_through_record),
            )
            .unwrap();
        (p, commits)
    });
    std::thread::sleep(Duration::from_millis(700));
    writer.write(&batch.slice(100, 200)).unwrap();
    writer.finish().unwrap();
    let (p, commits) = ingest.join().unwrap();
    assert_eq!((p.records, p.rows_committed), (300, 300));
    assert_eq!(
        commits.first(),
        Some(&100),
        "the first part committed on time"
    );

    // JSON: a line the writer has not finished is read once its newline arrives.
    let dir = tempfile::tempdir().unwrap();
    let table = telemetry(dir.path());
    let path = dir.path().join("growing.ndjson");
    let whole = message("late", "20", "51", "EPSG:4326", "3");
    let (head, tail) = whole.split_at(40);
    std::fs::write(
        &path,
        format!("{}\n{head}", message("early", "20", "51", "EPSG:4326", "1")),
    )
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let input = std::io::BufReader::new(std::fs::File::open(&path).unwrap());
    let stopper = stop.clone();
    let ingest = std::thread::spawn(move || {
        let mut rejects = Vec::new();
        let (table, p) = table
            .ingest(
                input,
                &mut rejects,
                &IngestOptions {
                    follow: true,
                    ..options()
                },
                &stopper,
                |_| {},
            )
            .unwrap();
        (table, p, rejects)
    });
    std::thread::sleep(Duration::from_millis(500));
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, format!("{tail}\n").as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let (table, p, rejects) = ingest.join().unwrap();
    assert!(rejects.is_empty(), "{}", String::from_utf8_lossy(&rejects));
    assert_eq!((p.lines, p.rows_committed), (2, 2));
    let ids: Vec<String> = rows(&table).into_iter().map(|r| r.0).collect();
    assert_eq!(ids, ["early", "late"]);
}
