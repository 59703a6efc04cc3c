//! The scan node and its pruning boxes survive a trip through DataFusion's protobuf with
//! geoberg's extension codec (what a distributed engine ships to its workers).

use std::sync::Arc;

use crate::common::{Row, Warehouse, append_files, create_points, ids};
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion_proto::bytes::{
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use geoberg_datafusion::{GeobergPhysicalCodec, GeobergScanExec, SpatialPruning};

fn table(w: &Warehouse) {
    let t = create_points(w, "t", 4326, 3);
    let files: Vec<Vec<Row>> = (0..4)
        .map(|f| {
            (0..9)
                .map(|i| Row {
                    id: f * 100 + i,
                    n: i as i32,
                    x: i as f64,
                    state: Some(["CA", "NY"][(i % 2) as usize].to_string()),
                    point: Some(((f * 10 + i) as f64, i as f64)),
                })
                .collect()
        })
        .collect();
    append_files(t, &files, 4326);
}

fn find_scan(plan: &Arc<dyn ExecutionPlan>) -> Option<Arc<dyn ExecutionPlan>> {
    if plan.downcast_ref::<GeobergScanExec>().is_some() {
        return Some(Arc::clone(plan));
    }
    plan.children().into_iter().find_map(find_scan)
}

#[test]
fn the_scan_node_round_trips_with_its_boxes() {
    let w = Warehouse::new();
    table(&w);
    let s = w.session();
    let ctx = &s.session().context().ctx;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let sql = "SELECT id FROM geo.t WHERE ST_Intersects(geom, ST_MakeEnvelope(0, 0, 12, 4)) \
               AND state = 'CA'";
    let plan = runtime
        .block_on(async { ctx.sql(sql).await?.create_physical_plan().await })
        .unwrap();
    let scan = find_scan(&plan).expect("a GeobergScanExec");
    let codec = GeobergPhysicalCodec;
    let bytes = physical_plan_to_bytes_with_extension_codec(Arc::clone(&scan), &codec).unwrap();
    let task = ctx.task_ctx();
    let decoded = physical_plan_from_bytes_with_extension_codec(&bytes, &task, &codec).unwrap();
    let (before, after) = (
        scan.downcast_ref::<GeobergScanExec>().unwrap(),
        decoded
            .downcast_ref::<GeobergScanExec>()
            .expect("decoded as a GeobergScanExec"),
    );
    assert_eq!(before.spec(), after.spec());
    assert_eq!(before.table_schema(), after.table_schema());
    assert_eq!(
        before.predicate().map(|p| p.to_string()),
        after.predicate().map(|p| p.to_string())
    );
    let boxes = after.spec().spatial.boxes();
    assert_eq!(boxes, [("geom", [0.0, 0.0, 12.0, 4.0])]);
    assert!(!matches!(after.spec().spatial, SpatialPruning::Anything));
    assert!(
        after.spec().summary.files_skipped_spatial >= 2,
        "{:?}",
        after.spec().summary
    );

    // Both read the same rows.
    let rows_before = runtime.block_on(collect(scan, ctx.task_ctx())).unwrap();
    let rows_after = runtime.block_on(collect(decoded, ctx.task_ctx())).unwrap();
    assert_eq!(ids(&rows_before), ids(&rows_after));
    assert!(!ids(&rows_after).is_empty());
}

#[test]
fn a_whole_plan_without_geometry_literals_round_trips() {
    let w = Warehouse::new();
    table(&w);
    let s = w.session();
    let ctx = &s.session().context().ctx;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let sql = "SELECT n, count(*) FROM geo.t WHERE state = 'NY' AND id BETWEEN 100 AND 300 \
               GROUP BY n ORDER BY n";
    let plan = runtime
        .block_on(async { ctx.sql(sql).await?.create_physical_plan().await })
        .unwrap();
    let codec = GeobergPhysicalCodec;
    let bytes = physical_plan_to_bytes_with_extension_codec(Arc::clone(&plan), &codec).unwrap();
    let decoded =
        physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec).unwrap();
    let before = runtime.block_on(collect(plan, ctx.task_ctx())).unwrap();
    let after = runtime.block_on(collect(decoded, ctx.task_ctx())).unwrap();
    assert_eq!(
        geoberg_datafusion::pretty_format(&before).unwrap(),
        geoberg_datafusion::pretty_format(&after).unwrap()
    );
}

#[test]
fn damaged_bytes_are_an_error() {
    let w = Warehouse::new();
    table(&w);
    let s = w.session();
    let ctx = &s.session().context().ctx;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let plan = runtime
        .block_on(async {
            ctx.sql("SELECT id FROM geo.t")
                .await?
                .create_physical_plan()
                .await
        })
        .unwrap();
    let scan = find_scan(&plan).unwrap();
    let codec = GeobergPhysicalCodec;
    let mut buf = Vec::new();
    codec.try_encode(Arc::clone(&scan), &mut buf).unwrap();
    let task = ctx.task_ctx();
    for cut in [0, 4, 8, 12, buf.len() / 2, buf.len() - 1] {
        assert!(
            codec.try_decode(&buf[..cut], &[], &task).is_err(),
            "cut at {cut}"
        );
    }
    let mut flipped = buf.clone();
    flipped[20] ^= 0xff;
    let _ = codec.try_decode(&flipped, &[], &task); // an error or a plan, never a panic
    assert!(codec.try_decode(&buf, &[], &task).is_ok());
}
