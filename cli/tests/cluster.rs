//! A geoberg cluster of real processes: PostgreSQL (the catalog), an S3 server (the warehouse),
//! `geoberg cluster scheduler` and two `geoberg cluster executor`s on 127.0.0.1, each started
//! here and stopped at the end. Every query of the suite returns, through the scheduler, the
//! rows the same query returns on one machine (the oracle: the single-node engine, itself
//! checked against brute force in the engine's tests), also after an executor is killed.

mod common;

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use common::*;
use geoberg_testkit::{PostgresServer, S3Server};

/// A scheduler and executors, killed when dropped.
struct Cluster {
    scheduler: String,
    processes: Vec<Child>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for p in &mut self.processes {
            let _ = p.kill();
            let _ = p.wait();
        }
    }
}

/// A free port on 127.0.0.1 whose successor is free too (an executor serves on both).
fn free_port_pair() -> u16 {
    loop {
        let first = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = first.local_addr().unwrap().port();
        if port < u16::MAX && TcpListener::bind((Ipv4Addr::LOCALHOST, port + 1)).is_ok() {
            return port;
        }
    }
}

fn wait_for_port(port: u16, what: &str, log: &Path) {
    let start = Instant::now();
    while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what} did not listen on {port} within 60 s; its log:\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn start_cluster(remote: &Remote<'_>, executors: usize) -> Cluster {
    let port = free_port_pair();
    let scheduler = format!("127.0.0.1:{port}");
    let log = remote.dir.path().join("scheduler.log");
    let mut cluster = Cluster {
        scheduler: format!("df://{scheduler}"),
        processes: vec![remote.spawn(&["cluster", "scheduler", "--bind", &scheduler], &log)],
    };
    wait_for_port(port, "the scheduler", &log);
    for i in 0..executors {
        let port = free_port_pair();
        let bind = format!("127.0.0.1:{port}");
        let log = remote.dir.path().join(format!("executor-{i}.log"));
        let work = remote.dir.path().join(format!("executor-{i}"));
        cluster.processes.push(remote.spawn(
            &[
                "cluster",
                "executor",
                "--scheduler",
                &scheduler,
                "--bind",
                &bind,
                "--concurrent-tasks",
                "1",
                "--work-dir",
                work.to_str().unwrap(),
            ],
            &log,
        ));
        wait_for_port(port, "an executor", &log);
    }
    cluster
}

/// The rows of one `sql --json` statement (one JSON object), as JSON text (order as returned).
fn rows(run: Run) -> String {
    let j = run.ok().json();
    let rows = &j["rows"];
    assert!(rows.is_array(), "no rows in {j}");
    rows.to_string()
}

#[test]
fn queries_on_a_cluster_return_the_single_node_rows() {
    let s3 = S3Server::shared();
    let pg = PostgresServer::shared();
    let remote = Remote::new(s3, pg);
    let points = scattered_points(3_000);
    let file = remote.dir.path().join("points.parquet");
    write_points(&file, &points, None);
    remote
        .run(&[
            "import",
            file.to_str().unwrap(),
            "--table",
            "db.points",
            "--rows-per-file",
            "500",
        ])
        .ok();
    remote
        .run(&[
            "sql",
            "CREATE TABLE db.zones (zid BIGINT, zone GEOMETRY(4326)); \
             INSERT INTO db.zones VALUES \
             (1, ST_GeomFromText('POLYGON ((0 0, 90 0, 90 45, 0 45, 0 0))', 4326)), \
             (2, ST_GeomFromText('POLYGON ((-120 -60, -30 -60, -30 10, -120 10, -120 -60))', 4326)), \
             (3, ST_GeomFromText('POLYGON ((60 60, 70 60, 70 70, 60 70, 60 60))', 4326))",
        ])
        .ok();
    let mut cluster = start_cluster(&remote, 2);

    let suite = [
        "SELECT count(*) AS n FROM db.points",
        // a spatial filter with a constant (pruned by file bounds on the scheduler)
        "SELECT count(*) AS n FROM db.points WHERE ST_Intersects(geometry, \
         ST_GeomFromText('POLYGON ((0 0, 90 0, 90 45, 0 45, 0 0))'))",
        // a constant without SRID outside WHERE, and a function returning geometry
        "SELECT id, ST_AsText(ST_Buffer(geometry, 1.0)) IS NOT NULL AS buffered, \
         ST_DWithin(geometry, ST_GeomFromText('POINT (10 10)'), 30.0) AS near \
         FROM db.points WHERE id % 97 = 0 ORDER BY id",
        // GROUP BY over a shuffle
        "SELECT name, count(*) AS n, min(id) AS first FROM db.points GROUP BY name ORDER BY name",
        // top-k, and the nearest points to a constant (the sort expression carries a geometry)
        "SELECT id FROM db.points ORDER BY ST_X(geometry) DESC, id LIMIT 7",
        "SELECT id FROM db.points ORDER BY ST_Distance(geometry, ST_GeomFromText('POINT (10 10)')), id \
         LIMIT 5",
        // an equality join
        "SELECT p.id, z.zid FROM db.points p JOIN db.zones z ON p.id % 2 + 1 = z.zid \
         WHERE p.id < 20 ORDER BY p.id",
        // spatial joins (SedonaDB's join operator on the executors): point in polygon,
        "SELECT z.zid, count(*) AS n FROM db.points p JOIN db.zones z \
         ON ST_Intersects(p.geometry, z.zone) GROUP BY z.zid ORDER BY z.zid",
        // within a distance, with a filter on the pairs,
        "SELECT p.id, z.zid FROM db.points p JOIN db.zones z \
         ON ST_DWithin(p.geometry, z.zone, 2.0) AND p.id % 3 = z.zid % 3 ORDER BY p.id, z.zid",
        // an outer join whose unmatched zone (3) must appear once, not once per task,
        "SELECT z.zid, p.id FROM db.zones z LEFT JOIN db.points p \
         ON ST_Contains(z.zone, p.geometry) WHERE p.id IS NULL OR p.id % 10 = 0 \
         ORDER BY z.zid, p.id",
        // Iceberg's metadata tables (read by the client from the table's metadata),
        "SELECT count(*) AS files, sum(record_count) AS n FROM db.points.files",
        // and the nearest zone of each point
        "SELECT p.id, z.zid FROM db.points p JOIN db.zones z ON ST_KNN(p.geometry, z.zone, 1, false) \
         WHERE p.id % 41 = 0 ORDER BY p.id",
    ];
    for sql in suite {
        let local = rows(remote.run(&["--json", "sql", sql]));
        let distributed =
            rows(remote.run(&["--scheduler", &cluster.scheduler, "--json", "sql", sql]));
        assert_eq!(local, distributed, "{sql}");
        assert_ne!(local, "[]", "{sql}: the suite's queries all return rows");
    }

    // The joins ran on the executors, and match a brute-force count of the points in the
    // zones (axis-aligned rectangles).
    let join = "SELECT z.zid, count(*) AS n FROM db.points p JOIN db.zones z \
                ON ST_Intersects(p.geometry, z.zone) GROUP BY z.zid ORDER BY z.zid";
    let explain = remote
        .run(&[
            "--scheduler",
            &cluster.scheduler,
            "sql",
            &format!("EXPLAIN {join}"),
        ])
        .ok();
    assert!(
        explain.stdout.contains("GeobergClusterSpatialJoinExec"),
        "{}",
        explain.stdout
    );
    let inside = |x0: f64, y0: f64, x1: f64, y1: f64| {
        points
            .iter()
            .filter(|&&(_, x, y)| (x0..=x1).contains(&x) && (y0..=y1).contains(&y))
            .count()
    };
    let expected = serde_json::json!([
        {"zid": 1, "n": inside(0.0, 0.0, 90.0, 45.0)},
        {"zid": 2, "n": inside(-120.0, -60.0, -30.0, 10.0)},
    ]);
    let distributed = remote
        .run(&["--scheduler", &cluster.scheduler, "--json", "sql", join])
        .ok()
        .json();
    assert_eq!(distributed["rows"], expected);

    // The plan shows the stages the scheduler made.
    let explain = remote
        .run(&[
            "--scheduler",
            &cluster.scheduler,
            "sql",
            "EXPLAIN SELECT name, count(*) FROM db.points GROUP BY name",
        ])
        .ok();
    assert!(
        explain.stdout.contains("distributed_plan"),
        "{}",
        explain.stdout
    );
    assert!(
        explain.stdout.contains("GeobergScanExec"),
        "{}",
        explain.stdout
    );

    // CREATE SPATIAL INDEX through the cluster: the executors run the key-range tasks (the
    // notice names the processes, which must be the executors started here), the coordinator
    // commits once, and every query still returns the single-node rows.
    let snapshots = |remote: &Remote<'_>| {
        let j = remote.run(&["--json", "inspect", "db.points"]).ok().json();
        (
            j["snapshots"].as_array().unwrap().len(),
            j["overlap_depth"].as_f64().unwrap(),
        )
    };
    let (before, depth_before) = snapshots(&remote);
    let before_rows: Vec<String> = suite[..6]
        .iter()
        .map(|sql| rows(remote.run(&["--json", "sql", sql])))
        .collect();
    let index = remote
        .run(&[
            "--scheduler",
            &cluster.scheduler,
            "--json",
            "sql",
            "CREATE SPATIAL INDEX FOR db.points USING hilbert(geometry, 12) \
             OPTIONS map('target-file-count', '6')",
        ])
        .ok()
        .json();
    let notices = index["notices"].to_string();
    let executor_pids: Vec<String> = cluster.processes[1..]
        .iter()
        .map(|p| format!("executor pid {}", p.id()))
        .collect();
    let parts = notices
        .split("executor pid ")
        .skip(1)
        .map(|rest| {
            let pid: String = rest.chars().take_while(char::is_ascii_digit).collect();
            format!("executor pid {pid}")
        })
        .collect::<Vec<_>>();
    assert!(!parts.is_empty(), "the tasks ran on the executors: {index}");
    for part in &parts {
        assert!(
            executor_pids.contains(part),
            "{part} in {notices} is not one of {executor_pids:?}"
        );
    }
    let (after, depth_after) = snapshots(&remote);
    assert_eq!(after, before + 1, "one commit");
    assert!(
        depth_after < depth_before,
        "clustered files overlap less: {depth_before} -> {depth_after}"
    );
    for (sql, before) in suite[..6].iter().zip(&before_rows) {
        let distributed =
            rows(remote.run(&["--scheduler", &cluster.scheduler, "--json", "sql", sql]));
        assert_eq!(&distributed, before, "after the distributed rewrite: {sql}");
    }

    // An executor killed (SIGKILL) as soon as it receives a part of a rewrite: the scheduler
    // takes it for lost after the heartbeat timeout and the other executor runs the part again.
    // One commit, every row once. (With Ballista's default push scheduling the job waited
    // forever; see `distributed/src/cluster_config.rs`.)
    let big = scattered_points(300_000);
    let big_file = remote.dir.path().join("big.parquet");
    write_points(&big_file, &big, None);
    remote
        .run(&[
            "import",
            big_file.to_str().unwrap(),
            "--table",
            "db.big",
            "--rows-per-file",
            "50000",
        ])
        .ok();
    let count_big = "SELECT count(*) AS n, count(DISTINCT id) AS ids FROM db.big";
    let before_big = rows(remote.run(&["--json", "sql", count_big]));
    let big_snapshots = |remote: &Remote<'_>| {
        let j = remote.run(&["--json", "inspect", "db.big"]).ok().json();
        j["snapshots"].as_array().unwrap().len()
    };
    let snapshots_before = big_snapshots(&remote);
    let victim_log = remote.dir.path().join("executor-1.log");
    let tasks_started = || {
        std::fs::read_to_string(&victim_log)
            .unwrap_or_default()
            .matches("Received task")
            .count()
    };
    let started_before = tasks_started();
    let rewrite = remote
        .command(&[
            "--scheduler",
            &cluster.scheduler,
            "--json",
            "sql",
            "CREATE SPATIAL INDEX FOR db.big USING hilbert(geometry, 12) \
             OPTIONS map('target-file-count', '4', 'max-concurrent-file-group-rewrites', '2')",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while tasks_started() == started_before && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut killed = cluster.processes.pop().unwrap();
    let killed_pid = killed.id();
    killed.kill().unwrap();
    killed.wait().unwrap();
    let out = rewrite.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "rewrite with executor pid {killed_pid} killed in {:.1?}: {stdout}",
        start.elapsed()
    );
    // Killed within milliseconds of receiving its part (which runs for seconds): the part ran
    // again on the survivor.
    assert!(
        !stdout.contains(&format!("executor pid {killed_pid} ")),
        "the killed executor's part was run again elsewhere: {stdout}"
    );
    assert_eq!(big_snapshots(&remote), snapshots_before + 1, "one commit");
    assert_eq!(rows(remote.run(&["--json", "sql", count_big])), before_big);
    // The surviving executor runs the suite.
    for sql in &suite[..4] {
        let local = rows(remote.run(&["--json", "sql", sql]));
        let distributed =
            rows(remote.run(&["--scheduler", &cluster.scheduler, "--json", "sql", sql]));
        assert_eq!(local, distributed, "after a lost executor: {sql}");
    }

    // Writes run on the coordinator, say so, and are seen by the cluster's next query.
    let insert = remote
        .run(&[
            "--scheduler",
            &cluster.scheduler,
            "--json",
            "sql",
            "INSERT INTO db.zones VALUES (3, ST_GeomFromText('POINT (1 1)', 4326))",
        ])
        .ok()
        .json();
    assert!(
        insert["notices"]
            .to_string()
            .contains("ran on the coordinator"),
        "{insert}"
    );
    let n = remote
        .run(&[
            "--scheduler",
            &cluster.scheduler,
            "sql",
            "SELECT count(*) FROM db.zones",
        ])
        .ok();
    assert_eq!(n.value(), "4");
}

#[test]
fn an_unreachable_scheduler_is_named_with_the_fix() {
    let env = Env::new();
    env.run(&["sql", "CREATE TABLE db.t (id BIGINT, geom GEOMETRY(4326))"])
        .ok();
    let port = {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        l.local_addr().unwrap().port()
    };
    let scheduler = format!("df://127.0.0.1:{port}");
    env.run(&[
        "--scheduler",
        &scheduler,
        "sql",
        "SELECT count(*) FROM db.t",
    ])
    .fails_with(&[
        "cannot reach the geoberg scheduler at 127.0.0.1:",
        "geoberg cluster scheduler --bind",
    ]);
    env.run(&["--scheduler", "http://127.0.0.1:1", "sql", "SELECT 1"])
        .fails_with(&["df://host:port"]);
}
