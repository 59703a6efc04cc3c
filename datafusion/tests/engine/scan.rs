//! The scan node: projection, LIMIT, partitions spread over the session's target partitions,
//! and row counts from the manifests.

use crate::common::{Row, Warehouse, append_files, create_points, ids, plan_text, scalar_i64};

fn rows(file: i64, n: i64) -> Vec<Row> {
    (0..n)
        .map(|i| Row {
            id: file * 1000 + i,
            n: (i % 5) as i32,
            x: i as f64,
            state: Some(if i % 2 == 0 { "a" } else { "b" }.to_string()),
            point: Some((file as f64, i as f64)),
        })
        .collect()
}

fn table(w: &Warehouse, files: i64, per_file: i64, row_group_rows: usize) {
    let t = create_points(w, "t", 4326, row_group_rows);
    let files: Vec<Vec<Row>> = (0..files).map(|f| rows(f, per_file)).collect();
    append_files(t, &files, 4326);
}

#[test]
fn files_spread_over_the_target_partitions() {
    let w = Warehouse::new();
    table(&w, 12, 20, 5);
    let s = w.session();
    s.sql("SET datafusion.execution.target_partitions = 4")
        .unwrap();
    let plan = plan_text(
        &s.sql("EXPLAIN SELECT id, state FROM geo.t WHERE n < 3")
            .unwrap(),
    );
    assert!(plan.contains("partitions=4"), "{plan}");
    assert_eq!(
        ids(&s.sql("SELECT id FROM geo.t WHERE n < 3").unwrap()).len(),
        12 * 12
    );

    // One big file: its row groups are read in parallel.
    let w = Warehouse::new();
    table(&w, 1, 40, 5);
    let s = w.session();
    s.sql("SET datafusion.execution.target_partitions = 4")
        .unwrap();
    let plan = plan_text(&s.sql("EXPLAIN SELECT id FROM geo.t").unwrap());
    assert!(plan.contains("partitions=4"), "{plan}");
    assert!(plan.contains("row_groups=8 of 8 read"), "{plan}");
    assert_eq!(
        ids(&s.sql("SELECT id FROM geo.t").unwrap()),
        (0..40).collect::<Vec<_>>()
    );
}

#[test]
fn limit_and_projection_reach_the_reader() {
    let w = Warehouse::new();
    table(&w, 3, 50, 10);
    let s = w.session();
    let got = s.sql("SELECT id FROM geo.t LIMIT 7").unwrap();
    assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 7);
    assert_eq!(got[0].num_columns(), 1);
    let plan = plan_text(&s.sql("EXPLAIN SELECT id FROM geo.t LIMIT 7").unwrap());
    assert!(plan.contains("limit=7"), "{plan}");
    // With a filter DataFusion applies, the limit stays above it and the answer is right.
    let got = s
        .sql("SELECT id FROM geo.t WHERE state = 'b' LIMIT 7")
        .unwrap();
    assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 7);
}

#[test]
fn counts_come_from_the_manifests_when_nothing_filters() {
    let w = Warehouse::new();
    table(&w, 4, 25, 10);
    let s = w.session();
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM geo.t").unwrap()),
        100
    );
    let plan = plan_text(&s.sql("EXPLAIN SELECT count(*) FROM geo.t").unwrap());
    assert!(
        !plan.contains("GeobergScanExec"),
        "answered from statistics:\n{plan}"
    );
    // A filter the reader may prune with makes the counts inexact: the rows are read.
    assert_eq!(
        scalar_i64(
            &s.sql("SELECT count(*) FROM geo.t WHERE id >= 2000")
                .unwrap()
        ),
        50
    );
    assert_eq!(
        scalar_i64(
            &s.sql(
                "SELECT count(*) FROM geo.t WHERE ST_Intersects(geom, ST_MakeEnvelope(0, 0, 1, 4))"
            )
            .unwrap()
        ),
        10
    );
}

#[test]
fn the_async_session_and_the_bare_context_work_from_async_code() {
    let w = Warehouse::new();
    table(&w, 2, 5, 10);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        // Inside a runtime the blocking session refuses, with the fix.
        let err = geoberg_datafusion::BlockingSession::new(w.catalog.clone(), "geoberg")
            .unwrap_err()
            .to_string();
        assert!(err.contains("use Session"), "{err}");

        let session = geoberg_datafusion::Session::new(w.catalog.clone(), "geoberg")
            .await
            .unwrap();
        let n = scalar_i64(
            &session
                .sql("SELECT count(*) FROM geoberg.geo.t")
                .await
                .unwrap(),
        );
        assert_eq!(n, 10);

        let (ctx, _catalog) = geoberg_datafusion::sedona_context(w.catalog.clone(), "geoberg")
            .await
            .unwrap();
        let frame = ctx
            .sql("SELECT id FROM geo.t WHERE ST_Intersects(geom, ST_MakeEnvelope(0, 0, 0, 2))")
            .await
            .unwrap();
        assert_eq!(ids(&frame.collect().await.unwrap()), [0, 1, 2]);
    });
}

#[test]
fn nan_rows_survive_float_comparisons() {
    // Parquet keeps NaN out of float statistics; DataFusion orders NaN above every number, so
    // `x >= 0.5` matches a NaN row and no row group holding one may be skipped.
    let w = Warehouse::new();
    let t = create_points(&w, "t", 4326, 2);
    let mut rows = rows(0, 4);
    for r in &mut rows {
        r.x = 0.0;
    }
    rows[2].x = f64::NAN;
    append_files(t, &[rows], 4326);
    let s = w.session();
    for sql in [
        "SELECT id FROM geo.t WHERE x >= 0.5",
        "SELECT id FROM geo.t WHERE n = 1 OR x >= 0.5",
        "SELECT id FROM geo.t WHERE x > 100",
    ] {
        let got = ids(&s.sql(sql).unwrap());
        assert!(got.contains(&2), "{sql}: {got:?}");
    }
}
