//! Every plan geoberg sends to an executor comes back from DataFusion's protobuf with the same
//! results, geometry types included (the oracle: the same plan run without the round trip).

use std::sync::Arc;

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion_proto::physical_plan::AsExecutionPlan;
use datafusion_proto::protobuf::PhysicalPlanNode;
use geoberg_datafusion::engine_context;
use geoberg_distributed::{GeobergClusterCodec, KeepFieldTypes};

/// What the scheduler sends: the plan after its last rule, in DataFusion's default protobuf
/// (Ballista 54 writes stages that way) with geoberg's codec.
fn send(plan: &Arc<dyn ExecutionPlan>) -> Vec<u8> {
    let plan = KeepFieldTypes
        .optimize(Arc::clone(plan), &Default::default())
        .unwrap();
    let mut bytes = Vec::new();
    PhysicalPlanNode::try_from_physical_plan(plan, &GeobergClusterCodec::default())
        .unwrap()
        .try_encode(&mut bytes)
        .unwrap();
    bytes
}

async fn round_trip(sql: &str) -> (String, String) {
    let context = engine_context().await.unwrap();
    let frame = context.ctx.sql(sql).await.unwrap();
    let task = Arc::new(frame.task_ctx());
    let plan = frame.create_physical_plan().await.unwrap();
    let bytes = send(&plan);
    let codec = GeobergClusterCodec::default();
    // An executor reads the bytes as DataFusion's own node, with geoberg's codec.
    let decoded: Arc<dyn ExecutionPlan> = PhysicalPlanNode::try_decode(&bytes)
        .unwrap()
        .try_into_physical_plan(&task, &codec)
        .unwrap();
    let expected = collect(plan, Arc::clone(&task)).await.unwrap();
    let got = collect(decoded, task).await.unwrap();
    assert_eq!(expected[0].schema(), got[0].schema(), "{sql}");
    (
        pretty_format_batches(&expected).unwrap().to_string(),
        pretty_format_batches(&got).unwrap().to_string(),
    )
}

/// The negative control: without geoberg's rule, DataFusion's protobuf loses the constant's
/// type and SedonaDB finds no kernel on the executor (what the rule exists for).
#[tokio::test]
async fn without_the_rule_a_geometry_constant_arrives_as_binary() {
    let context = engine_context().await.unwrap();
    let frame = context
        .ctx
        .sql(
            "SELECT x FROM (VALUES (1.0, 1.0)) t(x, y) WHERE ST_Intersects(ST_Point(x, y), \
             ST_GeomFromText('POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))'))",
        )
        .await
        .unwrap();
    let task = Arc::new(frame.task_ctx());
    let plan = frame.create_physical_plan().await.unwrap();
    let codec = GeobergClusterCodec::default();
    let mut bytes = Vec::new();
    PhysicalPlanNode::try_from_physical_plan(plan, &codec)
        .unwrap()
        .try_encode(&mut bytes)
        .unwrap();
    let decoded = PhysicalPlanNode::try_decode(&bytes)
        .unwrap()
        .try_into_physical_plan(&task, &codec)
        .unwrap();
    let e = collect(decoded, task).await.unwrap_err().to_string();
    assert!(e.contains("binary"), "{e}");
}

#[tokio::test]
async fn geometry_constants_and_functions_keep_their_type() {
    for sql in [
        "SELECT x FROM (VALUES (1.0, 1.0), (5.0, 20.0)) t(x, y) \
         WHERE ST_Intersects(ST_Point(x, y), ST_GeomFromText('POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))'))",
        "SELECT ST_AsText(ST_Buffer(ST_Point(x, y), 1.0)) AS b FROM (VALUES (1.0, 1.0)) t(x, y)",
        "SELECT ST_Point(x, y) AS p, ST_GeomFromText('POINT (3 4)') AS c FROM (VALUES (1.0, 2.0)) t(x, y)",
    ] {
        let (expected, got) = round_trip(sql).await;
        assert_eq!(expected, got, "{sql}");
    }
}

/// Client to scheduler (logical plan, typed constants encoded) and scheduler to executor
/// (physical plan): the rows equal the plan run in one process.
#[tokio::test]
async fn client_to_scheduler_to_executor() {
    use datafusion_proto::logical_plan::AsLogicalPlan;
    use datafusion_proto::protobuf::LogicalPlanNode;
    use geoberg_distributed::{GeobergLogicalCodec, TypedLiteral, encode_typed_literals};

    let sql = "SELECT x FROM (VALUES (1.0, 1.0), (5.0, 20.0)) t(x, y) \
               WHERE ST_Intersects(ST_Point(x, y), ST_GeomFromText('POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))'))";
    let client = engine_context().await.unwrap();
    let frame = client.ctx.sql(sql).await.unwrap();
    let expected = frame.clone().collect().await.unwrap();
    let optimized = frame.into_optimized_plan().unwrap();
    let encoded = encode_typed_literals(optimized).unwrap();
    let codec = GeobergLogicalCodec::client();
    let mut bytes = Vec::new();
    LogicalPlanNode::try_from_logical_plan(&encoded, &codec)
        .unwrap()
        .try_encode(&mut bytes)
        .unwrap();

    let scheduler = engine_context().await.unwrap();
    scheduler.ctx.register_udf(TypedLiteral::udf());
    let task = scheduler.ctx.task_ctx();
    let decoded = LogicalPlanNode::try_decode(&bytes)
        .unwrap()
        .try_into_logical_plan(&task, &codec)
        .unwrap();
    let state = scheduler.ctx.state();
    let physical = state.create_physical_plan(&decoded).await.unwrap();
    let bytes = send(&physical);
    let cluster = GeobergClusterCodec::default();
    let executor = engine_context().await.unwrap();
    let task = executor.ctx.task_ctx();
    let remote: Arc<dyn ExecutionPlan> = PhysicalPlanNode::try_decode(&bytes)
        .unwrap()
        .try_into_physical_plan(&task, &cluster)
        .unwrap();
    let got = collect(remote, task).await.unwrap();
    assert_eq!(
        pretty_format_batches(&expected).unwrap().to_string(),
        pretty_format_batches(&got).unwrap().to_string()
    );
}

/// A rewrite's tasks: the table the client sends (logical) and the node the scheduler sends
/// (physical) carry the whole job; the executor's partitions run the parts and return their
/// outcomes, whose files are the job's.
#[tokio::test]
async fn a_rewrite_job_travels_to_an_executor_and_runs_there() {
    use arrow_array::{Array, BinaryArray, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType as ArrowType, Field, Schema};
    use datafusion_proto::logical_plan::AsLogicalPlan;
    use datafusion_proto::protobuf::LogicalPlanNode;
    use geoberg_distributed::{GeobergLogicalCodec, RewriteTasks, RewriteTasksTable};
    use geoberg_table::{
        Catalog, Column, CreateTable, DataType, RewriteJob, RewriteJobOutcome, SqliteCatalog,
        TableIdent,
    };

    let dir = tempfile::tempdir().unwrap();
    let catalog: Arc<dyn Catalog> = Arc::new(
        SqliteCatalog::open(dir.path().join("c.db"), "geoberg", dir.path().join("wh")).unwrap(),
    );
    catalog.create_namespace("db").unwrap();
    let mut table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .create(Arc::clone(&catalog), &TableIdent::new("db", "pts").unwrap())
    .unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("geom", ArrowType::Binary, true)
            .with_metadata([("srid".to_string(), "4326".to_string())].into()),
    ]));
    for f in 0..3i64 {
        let ids: Vec<i64> = (f * 400..(f + 1) * 400).collect();
        let wkb: Vec<Vec<u8>> = ids
            .iter()
            .map(|&i| {
                let (x, y) = ((i * 37 % 360) as f64 - 180.0, (i * 13 % 170) as f64 - 85.0);
                [&[1u8, 1, 0, 0, 0][..], &x.to_le_bytes(), &y.to_le_bytes()].concat()
            })
            .collect();
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(BinaryArray::from_iter_values(wkb.iter())),
            ],
        )
        .unwrap();
        table = table.append(&[batch]).unwrap().0;
    }
    let planned = table
        .rewrite()
        .hilbert("geom", 10)
        .option("target-file-count", "4")
        .plan()
        .unwrap();
    let job = RewriteJob {
        table: table.ident().to_string(),
        metadata_location: table.metadata_location().to_string(),
        run: "run-1".into(),
        tasks: (0..planned.plan.tasks.len()).collect(),
        plan: planned.plan,
    };
    let tasks = RewriteTasks {
        parts: job.split(2),
        job: job.clone(),
    };
    assert_eq!(tasks.parts.len(), 2, "{} tasks", job.tasks.len());

    // Client to scheduler.
    let client = engine_context().await.unwrap();
    let frame = client
        .ctx
        .read_table(Arc::new(RewriteTasksTable::new(tasks.clone())))
        .unwrap();
    let codec = GeobergLogicalCodec::client();
    let mut bytes = Vec::new();
    LogicalPlanNode::try_from_logical_plan(frame.logical_plan(), &codec)
        .unwrap()
        .try_encode(&mut bytes)
        .unwrap();
    let scheduler = engine_context().await.unwrap();
    let decoded = LogicalPlanNode::try_decode(&bytes)
        .unwrap()
        .try_into_logical_plan(&scheduler.ctx.task_ctx(), &codec)
        .unwrap();
    let physical = scheduler
        .ctx
        .state()
        .create_physical_plan(&decoded)
        .await
        .unwrap();
    assert_eq!(physical.properties().partitioning.partition_count(), 2);

    // Scheduler to executor, which runs both parts.
    let bytes = send(&physical);
    let executor = engine_context().await.unwrap();
    let task = executor.ctx.task_ctx();
    let remote: Arc<dyn ExecutionPlan> = PhysicalPlanNode::try_decode(&bytes)
        .unwrap()
        .try_into_physical_plan(&task, &GeobergClusterCodec::default())
        .unwrap();
    let batches = collect(remote, task).await.unwrap();
    let mut outcomes: Vec<RewriteJobOutcome> = batches
        .iter()
        .flat_map(|b| {
            let c = b.column(0).as_any().downcast_ref::<StringArray>().unwrap();
            (0..c.len())
                .map(|i| serde_json::from_str(c.value(i)).unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    outcomes.sort_by_key(|o| o.tasks.clone());
    let ran: Vec<Vec<usize>> = outcomes.iter().map(|o| o.tasks.clone()).collect();
    assert_eq!(ran, tasks.parts);
    let rows: u64 = outcomes
        .iter()
        .flat_map(|o| &o.outcome.added)
        .map(|f| f.record_count)
        .sum();
    assert_eq!(rows, 1_200, "every row written once");
    for f in outcomes.iter().flat_map(|o| &o.outcome.added) {
        assert!(f.location.contains("/data/run-1-"), "{}", f.location);
        let path = f.location.trim_start_matches("file://");
        assert!(std::path::Path::new(path).exists(), "{path}");
    }
}

/// Spatial joins: the client sends each as the join it was made from, the scheduler plans
/// SedonaDB's join again and makes it the cluster's, the executor runs a copy per probe
/// partition (as its tasks would); the rows equal the join run in one process, and the
/// inner join's rows are the ones worked out by hand.
#[test]
fn spatial_joins_travel_to_executors_and_run_per_probe_partition() {
    // The protobuf of these plans recurses deeper than a test thread's 2 MiB stack holds in a
    // debug build.
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(spatial_joins_round_trip())
        })
        .unwrap()
        .join()
        .unwrap();
}

async fn spatial_joins_round_trip() {
    use datafusion::physical_plan::displayable;
    use datafusion_proto::logical_plan::AsLogicalPlan;
    use datafusion_proto::protobuf::LogicalPlanNode;
    use geoberg_distributed::{
        GeobergLogicalCodec, TypedLiteral, encode_typed_literals, unplan_spatial_joins,
        with_cluster_rules,
    };

    // Two probe partitions (a union), three zones: circles around points.
    let points = "(SELECT * FROM (VALUES (1, 1.0, 1.0), (2, 5.0, 20.0), (3, 3.0, 3.0)) a(id, x, y) \
                  UNION ALL SELECT * FROM (VALUES (4, 9.5, 9.5), (5, -4.0, 2.0)) b(id, x, y))";
    let zones = "(SELECT * FROM (VALUES (10, 0.0, 0.0, 5.0), (11, 8.0, 8.0, 2.0), \
                 (12, 50.0, 50.0, 1.0)) z(zid, x, y, r))";
    let inner = format!(
        "SELECT p.id, z.zid FROM {points} p JOIN {zones} z \
         ON ST_Intersects(ST_Point(p.x, p.y), ST_Buffer(ST_Point(z.x, z.y), z.r)) \
         ORDER BY p.id, z.zid"
    );
    let queries = [
        inner.clone(),
        format!(
            "SELECT p.id, z.zid FROM {points} p JOIN {zones} z \
             ON ST_DWithin(ST_Point(p.x, p.y), ST_Point(z.x, z.y), 6.0) AND p.id + z.zid > 12 \
             ORDER BY p.id, z.zid"
        ),
        // zones 11 and 12 hold no point: each appears once, not once per probe partition
        format!(
            "SELECT z.zid, p.id FROM {zones} z LEFT JOIN {points} p \
             ON ST_Contains(ST_Buffer(ST_Point(z.x, z.y), z.r), ST_Point(p.x, p.y)) \
             ORDER BY z.zid, p.id"
        ),
        format!(
            "SELECT p.id, z.zid FROM {points} p JOIN {zones} z \
             ON ST_KNN(ST_Point(p.x, p.y), ST_Point(z.x, z.y), 1, false) ORDER BY p.id"
        ),
    ];
    let client = engine_context().await.unwrap();
    let scheduler = engine_context().await.unwrap();
    scheduler.ctx.register_udf(TypedLiteral::udf());
    let executor = engine_context().await.unwrap();
    let codec = GeobergLogicalCodec::client();
    for sql in &queries {
        let frame = client.ctx.sql(sql).await.unwrap();
        let expected = frame.clone().collect().await.unwrap();
        let optimized = frame.into_optimized_plan().unwrap();
        let sent = encode_typed_literals(unplan_spatial_joins(optimized).unwrap()).unwrap();
        let mut bytes = Vec::new();
        LogicalPlanNode::try_from_logical_plan(&sent, &codec)
            .unwrap()
            .try_encode(&mut bytes)
            .unwrap();
        let decoded = LogicalPlanNode::try_decode(&bytes)
            .unwrap()
            .try_into_logical_plan(&scheduler.ctx.task_ctx(), &codec)
            .unwrap();
        let state = with_cluster_rules(scheduler.ctx.state());
        let physical = state.create_physical_plan(&decoded).await.unwrap();
        let shown = displayable(physical.as_ref()).indent(true).to_string();
        assert!(
            shown.contains("GeobergClusterSpatialJoinExec"),
            "{sql}\n{shown}"
        );
        assert!(!shown.contains("ProbeShuffleExec"), "{sql}\n{shown}");

        let bytes = send(&physical);
        let task = executor.ctx.task_ctx();
        let remote: Arc<dyn ExecutionPlan> = PhysicalPlanNode::try_decode(&bytes)
            .unwrap()
            .try_into_physical_plan(&task, &GeobergClusterCodec::default())
            .unwrap();
        let got = collect(remote, task).await.unwrap();
        let expected = pretty_format_batches(&expected).unwrap().to_string();
        assert_eq!(
            expected,
            pretty_format_batches(&got).unwrap().to_string(),
            "{sql}\n{shown}"
        );
        if *sql == inner {
            // (1 1) and (3 3) lie within 5 of (0 0), (-4 2) at 4.47; (9.5 9.5) is 2.12 from
            // (8 8), outside its radius of 2.
            let rows: Vec<&str> = expected.lines().skip(3).collect();
            assert_eq!(
                rows,
                [
                    "| 1  | 10  |",
                    "| 3  | 10  |",
                    "| 5  | 10  |",
                    "+----+-----+"
                ],
                "{expected}"
            );
        }
    }
}
