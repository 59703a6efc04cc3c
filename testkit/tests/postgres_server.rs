//! The PostgreSQL harness: start, connect, databases, concurrent starts, stop.

use std::net::TcpStream;

use geoberg_testkit::{PG_DATABASE, PostgresServer};

#[test]
fn starts_serves_sql_and_is_gone_after_drop() {
    let pg = PostgresServer::start();
    assert_eq!(
        pg.url(),
        format!(
            "postgresql://postgres@127.0.0.1:{}/{PG_DATABASE}",
            pg.port()
        )
    );
    let mut client = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    client
        .batch_execute("CREATE TABLE t (x int); INSERT INTO t VALUES (1), (2)")
        .unwrap();
    let n: i64 = client
        .query_one("SELECT sum(x) FROM t", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 3);
    let server_version: String = client.query_one("SHOW server_version", &[]).unwrap().get(0);
    assert!(!server_version.is_empty());

    // A second database of the same server is separate.
    let other = pg.fresh_database().unwrap();
    let mut c2 = postgres::Client::connect(&other, postgres::NoTls).unwrap();
    assert!(c2.query("SELECT * FROM t", &[]).is_err());

    let (addr, dir) = (pg.addr(), pg.dir().to_path_buf());
    assert!(dir.join("data/PG_VERSION").is_file());
    drop((client, c2));
    drop(pg);
    assert!(
        TcpStream::connect(addr).is_err(),
        "still listening after drop"
    );
    assert!(!dir.exists(), "{} left behind", dir.display());
}

#[test]
fn concurrent_starts_get_their_own_servers() {
    let servers: Vec<PostgresServer> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3).map(|_| s.spawn(PostgresServer::start)).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut ports: Vec<u16> = servers.iter().map(PostgresServer::port).collect();
    ports.sort();
    ports.dedup();
    assert_eq!(ports.len(), 3);
    for (i, pg) in servers.iter().enumerate() {
        let mut c = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
        c.batch_execute(&format!("CREATE TABLE mark{i} (x int)"))
            .unwrap();
    }
    // Each server has only its own table.
    for (i, pg) in servers.iter().enumerate() {
        let mut c = pg.connect(PG_DATABASE).unwrap();
        let names: Vec<String> = c
            .query(
                "SELECT tablename::text FROM pg_tables WHERE tablename LIKE 'mark%'",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(names, vec![format!("mark{i}")]);
    }
}

#[test]
fn invalid_database_names_are_refused() {
    let err = PostgresServer::shared()
        .create_database("x\"; DROP DATABASE geoberg; --")
        .unwrap_err();
    assert!(err.to_string().contains("letters, digits or '_'"), "{err}");
}

/// The watchdog cleans up a server whose process died without dropping it: a child process
/// (this test binary, re-run on one test) starts a server, prints its port and directory, and
/// exits without running destructors.
#[test]
fn a_server_of_a_process_that_died_is_stopped() {
    if let Ok(out) = std::env::var("GEOBERG_TESTKIT_LEAK_CHILD") {
        let pg = PostgresServer::start();
        std::fs::write(out, format!("{}\n{}", pg.port(), pg.dir().display())).unwrap();
        std::process::exit(0); // no Drop
    }
    let out = tempfile::NamedTempFile::new().unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_server_of_a_process_that_died_is_stopped",
            "--nocapture",
        ])
        .env("GEOBERG_TESTKIT_LEAK_CHILD", out.path())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(out.path()).unwrap();
    let (port, dir) = text.split_once('\n').unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::path::Path::new(dir).exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!std::path::Path::new(dir).exists(), "{dir} left behind");
    assert!(TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).is_err());
}
