//! Spatial predicates on a geography column through SQL mean the sphere: great-circle edges,
//! metres. Expected rows are derived by hand from facts of spherical geometry (written beside
//! each case), where the planar reading of the same coordinates gives a different answer, so a
//! kernel that fell back to planar edges would fail; distances are checked against the
//! haversine formula, an algorithm independent of the crate's arc distances.

use std::f64::consts::PI;
use std::sync::OnceLock;

use crate::common::{Warehouse, geography_values, ids};
use arrow_array::{Array, Float64Array, Int64Array, RecordBatch};
use geoberg_datafusion::BlockingSession;

/// The radius of the kernels' sphere (S2Earth, spherely's `EARTH_RADIUS_METERS`).
const R: f64 = 6_371_010.0;

/// The rows: (id, WKT; `None` for NULL).
const ROWS: [(i64, Option<&str>); 8] = [
    (1, Some("POINT (179.5 0)")),
    (2, Some("POINT (-179.5 0)")),
    (3, Some("POINT (0 0)")),
    // 20 degrees of the equator, the short way across the antimeridian.
    (4, Some("LINESTRING (170 0, -170 0)")),
    // A ring at latitude 85 around the north pole; it bounds its smaller side, the cap.
    (5, Some("POLYGON ((0 85, 90 85, 180 85, -90 85, 0 85))")),
    // Two points 180 degrees of longitude apart: the great circle through them is the
    // meridian -90/90, and the short arc (60 degrees) runs over the north pole.
    (6, Some("LINESTRING (-90 60, 90 60)")),
    (7, Some("POINT (0 -89.9)")),
    (8, None),
];

/// A small cap around the north pole (ring at latitude 89.5).
const POLE_CAP: &str = "POLYGON ((0 89.5, 90 89.5, 180 89.5, -90 89.5, 0 89.5))";

fn session() -> &'static (Warehouse, BlockingSession) {
    static S: OnceLock<(Warehouse, BlockingSession)> = OnceLock::new();
    S.get_or_init(|| {
        let w = Warehouse::new();
        let s = w.session();
        s.sql("CREATE SCHEMA geo").unwrap();
        s.sql("CREATE TABLE geo.places (id bigint, g geography(4326))")
            .unwrap();
        // One INSERT per two rows: several files.
        for pair in ROWS.chunks(2) {
            s.sql(&format!(
                "INSERT INTO geo.places VALUES {}",
                geography_values(pair)
            ))
            .unwrap();
        }
        (w, s)
    })
}

fn query_ids(filter: &str) -> Vec<i64> {
    let (_, s) = session();
    let sql = format!("SELECT id FROM geo.places WHERE {filter}");
    ids(&s.sql(&sql).unwrap_or_else(|e| panic!("{sql}: {e}")))
}

/// `(id, distance)` of every row, by id.
fn distances(batches: &[RecordBatch]) -> Vec<(i64, Option<f64>)> {
    let mut out: Vec<(i64, Option<f64>)> = batches
        .iter()
        .flat_map(|b| {
            let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            let d = b.column(1).as_any().downcast_ref::<Float64Array>().unwrap();
            (0..b.num_rows())
                .map(|i| (id.value(i), d.is_valid(i).then(|| d.value(i))))
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort_by_key(|(id, _)| *id);
    out
}

/// Great-circle distance in metres between two lon/lat points by the haversine formula.
fn haversine(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (la1, la2) = (a.1.to_radians(), b.1.to_radians());
    let (dla, dlo) = (la2 - la1, (b.0 - a.0).to_radians());
    let h = (dla / 2.0).sin().powi(2) + la1.cos() * la2.cos() * (dlo / 2.0).sin().powi(2);
    2.0 * R * h.sqrt().asin()
}

#[test]
fn intersects_a_box_across_the_antimeridian() {
    // 175E .. 175W, latitudes -5 .. 5: the two points half a degree either side of 180 and
    // the equator line through 180 are inside; (0, 0) is not (the planar reading of the same
    // ring, x from -175 to 175, would hold it and not the others).
    let window = "'POLYGON ((175 -5, -175 -5, -175 5, 175 5, 175 -5))'";
    assert_eq!(
        query_ids(&format!("ST_Intersects(g, ST_GeogFromText({window}))")),
        [1, 2, 4]
    );
    // The constant first.
    assert_eq!(
        query_ids(&format!("ST_Intersects(ST_GeogFromText({window}), g)")),
        [1, 2, 4]
    );
    // The same box as an envelope running east from 175 to -175, as the table crate reads a
    // window on a geography column.
    assert_eq!(
        query_ids("ST_Intersects(g, ST_MakeEnvelope(175, -5, -175, 5))"),
        [1, 2, 4]
    );
    assert_eq!(
        query_ids("ST_Within(g, ST_MakeEnvelope(175, -5, -175, 5))"),
        [1, 2]
    );
}

#[test]
fn the_arc_between_opposite_meridians_runs_over_the_pole() {
    // Row 6 passes the pole, which the cap holds; row 5's cap at 85 holds the cap at 89.5.
    // Planar, the line y = 60 never reaches y = 89.5.
    let cap = format!("ST_GeogFromText('{POLE_CAP}')");
    assert_eq!(query_ids(&format!("ST_Intersects(g, {cap})")), [5, 6]);
    assert_eq!(query_ids(&format!("ST_Contains(g, {cap})")), [5]);
    assert_eq!(query_ids(&format!("ST_Covers(g, {cap})")), [5]);
    assert_eq!(query_ids(&format!("ST_Within({cap}, g)")), [5]);
    // Within a cap at latitude 80: the cap at 85 is, the arc (down to latitude 60) is not.
    let cap80 = "ST_GeogFromText('POLYGON ((0 80, 90 80, 180 80, -90 80, 0 80))')";
    assert_eq!(query_ids(&format!("ST_Within(g, {cap80})")), [5]);
    // The north pole is in the cap and on the arc: within a metre of both (exactly on the
    // arc only up to rounding of the vertices' unit vectors, so not a test of intersects).
    assert_eq!(
        query_ids("ST_DWithin(g, ST_GeogFromText('POINT (0 90)'), 1)"),
        [5, 6]
    );
    assert_eq!(
        query_ids("ST_Intersects(g, ST_GeogFromText('POINT (0 90)'))")[0],
        5
    );
}

#[test]
fn dwithin_is_in_metres_across_the_antimeridian() {
    // (±179.5, 0) are half a degree of the equator from (180, 0): 0.5 * pi / 180 * R, about
    // 55.6 km; the line passes through (180, 0).
    let half_degree = 0.5 * PI / 180.0 * R;
    let near = |metres: f64| {
        query_ids(&format!(
            "ST_DWithin(g, ST_GeogFromText('POINT (180 0)'), {metres})"
        ))
    };
    assert_eq!(near(half_degree + 1.0), [1, 2, 4]);
    assert_eq!(near(half_degree - 1.0), [4]);
    // (0, -89.9) is 0.1 degrees from the south pole: 11.1 km.
    assert_eq!(
        query_ids("ST_DWithin(g, ST_GeogFromText('POINT (0 -90)'), 11200)"),
        [7]
    );
    assert_eq!(
        query_ids("ST_DWithin(g, ST_GeogFromText('POINT (0 -90)'), 11100)"),
        Vec::<i64>::new()
    );
}

#[test]
fn distance_is_metres_on_the_sphere() {
    let (_, s) = session();
    let batches = s
        .sql("SELECT id, ST_Distance(g, ST_GeogFromText('POINT (180 0)')) FROM geo.places")
        .unwrap();
    let got = distances(&batches);
    let points = [
        (1, (179.5, 0.0)),
        (2, (-179.5, 0.0)),
        (3, (0.0, 0.0)),
        (7, (0.0, -89.9)),
    ];
    for (id, p) in points {
        let expected = haversine(p, (180.0, 0.0));
        let d = got[(id - 1) as usize].1.unwrap();
        assert!(
            (d - expected).abs() <= 1e-6 * expected,
            "row {id}: {d} vs haversine {expected}"
        );
    }
    // The line passes through the query point.
    assert_eq!(got[3].1, Some(0.0));
    // The arc over the pole: the nearest point of the meridian -90/90 to (180, 0) is a
    // quarter circle away (every point of that meridian is 90 degrees from (180, 0)).
    let quarter = PI / 2.0 * R;
    let d6 = got[5].1.unwrap();
    assert!((d6 - quarter).abs() <= 1e-6 * quarter, "row 6: {d6}");
    assert_eq!(got[7], (8, None));
    // A NULL constant gives NULL on every row.
    let batches = s
        .sql("SELECT id, ST_Distance(g, ST_GeogFromText(NULL)) FROM geo.places")
        .unwrap();
    let got = distances(&batches);
    assert_eq!(got.len(), 8);
    assert!(got.iter().all(|(_, d)| d.is_none()), "{got:?}");
}

#[test]
fn two_geography_columns_compare_row_by_row() {
    let (_, s) = session();
    let batches = s
        .sql(
            "SELECT a.id * 10 + b.id FROM geo.places a, geo.places b \
             WHERE a.id < b.id AND ST_Intersects(a.g, b.g)",
        )
        .unwrap();
    // The points on the equator line, and the arc through the pole with the cap around it.
    assert_eq!(ids(&batches), [14, 24, 56]);
    let batches = s
        .sql(
            "SELECT a.id * 10 + b.id FROM geo.places a, geo.places b \
             WHERE a.id < b.id AND ST_DWithin(a.g, b.g, 112000)",
        )
        .unwrap();
    // Also the two points a degree of the equator apart (111.2 km).
    assert_eq!(ids(&batches), [12, 14, 24, 56]);
}

#[test]
fn wide_envelopes_and_geometry_columns_are_refused_with_the_fix() {
    let (_, s) = session();
    let err = s
        .sql("SELECT id FROM geo.places WHERE ST_Intersects(g, ST_MakeEnvelope(-100, 0, 100, 10))")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("200 degrees wide") && err.contains("narrower than 180"),
        "{err}"
    );
    let err = s
        .sql("SELECT id FROM geo.places WHERE ST_DWithin(g, ST_GeogFromText('POINT (0 0)'), -1)")
        .unwrap_err()
        .to_string();
    assert!(err.contains("metres"), "{err}");
    let err = s
        .sql(
            "SELECT id FROM geo.places \
             WHERE ST_Intersects(g, ST_SetSRID(ST_GeomFromWKB(ST_AsBinary(g)), 4326))",
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("ST_ToGeography"), "{err}");
}

/// The ids a query returns and the files its scan skipped on spatial bounds.
fn ids_and_skipped(filter: &str) -> (Vec<i64>, usize) {
    let (_, s) = session();
    let sql = format!("SELECT id FROM geo.places WHERE {filter}");
    let out = s.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let last = out.last().unwrap();
    let skipped = last
        .scans
        .iter()
        .map(|r| r.summary.files_skipped_spatial)
        .sum();
    (ids(&last.batches), skipped)
}

#[test]
fn pruned_scans_return_what_full_scans_return() {
    // Four files of two rows: {1, 2} at (±179.5, 0), {3, 4} (0, 0) and the equator line over
    // 180, {5, 6} the northern cap and arc (latitude 60 and up), {7, 8} near the south pole.
    let window = "ST_GeogFromText('POLYGON ((175 -5, -175 -5, -175 5, 175 5, 175 -5))')";
    let cap = format!("ST_GeogFromText('{POLE_CAP}')");
    let cases = [
        // (filter, rows, files that cannot match)
        (format!("ST_Intersects(g, {window})"), vec![1, 2, 4], 2),
        (
            "ST_Intersects(g, ST_MakeEnvelope(175, -5, -175, 5))".to_string(),
            vec![1, 2, 4],
            2,
        ),
        (format!("ST_Within(g, {window})"), vec![1, 2], 2),
        (format!("ST_Intersects({cap}, g)"), vec![5, 6], 3),
        (format!("ST_Contains(g, {cap})"), vec![5], 3),
        (
            "ST_DWithin(g, ST_GeogFromText('POINT (180 0)'), 56000)".to_string(),
            vec![1, 2, 4],
            2,
        ),
        (
            "ST_Distance(g, ST_GeogFromText('POINT (180 0)')) <= 56000".to_string(),
            vec![1, 2, 4],
            2,
        ),
        (
            "ST_DWithin(g, ST_GeogFromText('POINT (0 -90)'), 11200)".to_string(),
            vec![7],
            3,
        ),
        (
            format!("ST_Intersects(g, {cap}) OR ST_Intersects(g, {window})"),
            vec![1, 2, 4, 5, 6],
            1,
        ),
        (
            format!("ST_Intersects(g, {cap}) AND ST_Intersects(g, {window})"),
            vec![],
            4,
        ),
    ];
    for (filter, expected, skipped) in cases {
        let (rows, pruned) = ids_and_skipped(&filter);
        assert_eq!(rows, expected, "{filter}");
        assert_eq!(pruned, skipped, "files skipped for {filter}");
        // `OR id < 0` (no row) hides the predicate from pruning: every file is read and the
        // kernels decide every row.
        let (full, none) = ids_and_skipped(&format!("({filter}) OR id < 0"));
        assert_eq!(none, 0, "{filter} OR id < 0");
        assert_eq!(full, rows, "{filter}: pruned and full scans differ");
    }
}

/// Cases computed by spherely (S2), written by `data/spherely_cases.py`: rows, and per query
/// shape the rows each predicate holds for and every row's distance in metres.
#[derive(serde::Deserialize)]
struct SpherelyCases {
    rows: Vec<String>,
    cases: Vec<SpherelyCase>,
}

#[derive(serde::Deserialize)]
struct SpherelyCase {
    query: String,
    intersects: Vec<i64>,
    contains: Vec<i64>,
    within: Vec<i64>,
    covers: Vec<i64>,
    /// `None`: infinite (never for these non-empty shapes).
    distance: Vec<Option<f64>>,
}

#[test]
fn spherely_cases_through_sql() {
    let text = include_str!("data/spherely_cases.json");
    let data: SpherelyCases = serde_json::from_str(text).unwrap();
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE SCHEMA geo").unwrap();
    s.sql("CREATE TABLE geo.s2 (id bigint, g geography(4326))")
        .unwrap();
    // Four files.
    for (chunk_index, chunk) in data.rows.chunks(data.rows.len().div_ceil(4)).enumerate() {
        let start = chunk_index * data.rows.len().div_ceil(4);
        let values: Vec<String> = chunk
            .iter()
            .enumerate()
            .map(|(i, hex)| format!("({}, ST_GeogFromWKB(X'{hex}'))", start + i + 1))
            .collect();
        s.sql(&format!("INSERT INTO geo.s2 VALUES {}", values.join(", ")))
            .unwrap();
    }
    let query_ids = |sql: &str| ids(&s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}")));
    let mut positives = 0;
    for case in &data.cases {
        let q = format!("ST_GeogFromWKB(X'{}')", case.query);
        for (name, expected) in [
            ("ST_Intersects", &case.intersects),
            ("ST_Contains", &case.contains),
            ("ST_Within", &case.within),
            ("ST_Covers", &case.covers),
        ] {
            let got = query_ids(&format!("SELECT id FROM geo.s2 WHERE {name}(g, {q})"));
            assert_eq!(&got, expected, "{name}(g, {q})");
            positives += got.len();
        }
        let batches = s
            .sql(&format!("SELECT id, ST_Distance(g, {q}) FROM geo.s2"))
            .unwrap();
        let got = distances(&batches);
        assert_eq!(got.len(), case.distance.len());
        for ((id, d), expected) in got.iter().zip(&case.distance) {
            let (d, e) = (d.unwrap(), expected.unwrap());
            assert!(
                (d - e).abs() <= 1e-3 + 1e-9 * e,
                "row {id} to {q}: {d} m, spherely {e} m"
            );
        }
        // ST_DWithin at 500 km, unless a row lies within a metre of that (no boundary cases).
        let limit = 500_000.0;
        if case
            .distance
            .iter()
            .all(|e| (e.unwrap() - limit).abs() > 1.0)
        {
            let expected: Vec<i64> = case
                .distance
                .iter()
                .enumerate()
                .filter(|(_, e)| e.unwrap() <= limit)
                .map(|(i, _)| i as i64 + 1)
                .collect();
            let got = query_ids(&format!(
                "SELECT id FROM geo.s2 WHERE ST_DWithin(g, {q}, {limit})"
            ));
            assert_eq!(got, expected, "ST_DWithin(g, {q}, {limit})");
        }
    }
    // The cases are not all empty answers.
    assert!(positives >= 30, "{positives}");
}

#[test]
fn the_scan_node_round_trips_with_its_region_on_the_sphere() {
    use datafusion::physical_plan::{ExecutionPlan, collect};
    use datafusion_proto::bytes::{
        physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
    };
    use geoberg_datafusion::{GeobergPhysicalCodec, GeobergScanExec, SpatialPruning};

    fn find_scan(plan: &std::sync::Arc<dyn ExecutionPlan>) -> Option<&GeobergScanExec> {
        if let Some(scan) = plan.downcast_ref::<GeobergScanExec>() {
            return Some(scan);
        }
        plan.children().into_iter().find_map(find_scan)
    }

    let (_, s) = session();
    let ctx = &s.session().context().ctx;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let sql =
        format!("SELECT id FROM geo.places WHERE ST_Intersects(g, ST_GeogFromText('{POLE_CAP}'))");
    let plan = runtime
        .block_on(async { ctx.sql(&sql).await?.create_physical_plan().await })
        .unwrap();
    let scan = find_scan(&plan).expect("a GeobergScanExec");
    assert!(
        matches!(&scan.spec().spatial, SpatialPruning::Geography { column, distance: None, .. } if column == "g"),
        "{:?}",
        scan.spec().spatial
    );
    let scan: std::sync::Arc<dyn ExecutionPlan> = std::sync::Arc::new(scan.clone());
    let codec = GeobergPhysicalCodec;
    let bytes = physical_plan_to_bytes_with_extension_codec(scan.clone(), &codec).unwrap();
    let decoded =
        physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec).unwrap();
    let after = decoded.downcast_ref::<GeobergScanExec>().unwrap();
    assert_eq!(
        scan.downcast_ref::<GeobergScanExec>().unwrap().spec(),
        after.spec()
    );
    // Only the file of rows 5 and 6 can hold the cap: three of four skipped, in both.
    assert_eq!(after.spec().summary.files_skipped_spatial, 3);
    let before = runtime.block_on(collect(scan, ctx.task_ctx())).unwrap();
    let after = runtime.block_on(collect(decoded, ctx.task_ctx())).unwrap();
    assert_eq!(ids(&before), ids(&after));
    assert_eq!(ids(&after), [5, 6]);
}

/// Parquet keeps the first row-group geo statistics factory a process installs, and SedonaDB's
/// context installs its own: the engine installs geoberg's first, so files written through SQL
/// get the same sound geography boxes as files written by the table crate.
#[test]
fn the_engine_writes_geobergs_row_group_statistics() {
    let _ = session();
    assert_eq!(
        geoberg_geostats::install_parquet_geo_stats(),
        geoberg_geostats::GeoStatsInstall::Installed
    );
}
