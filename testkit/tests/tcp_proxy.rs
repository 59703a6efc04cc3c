//! The TCP fault proxy in front of a real PostgreSQL server.

use std::time::{Duration, Instant};

use geoberg_testkit::{Cut, FaultProxy, PostgresServer};

struct Setup {
    proxy: FaultProxy,
    url: String,
    direct: postgres::Client,
}

fn setup() -> Setup {
    let pg = PostgresServer::shared();
    let direct_url = pg.fresh_database().unwrap();
    let db = direct_url.rsplit('/').next().unwrap().to_string();
    let mut direct = postgres::Client::connect(&direct_url, postgres::NoTls).unwrap();
    direct
        .batch_execute("CREATE TABLE t (x int PRIMARY KEY)")
        .unwrap();
    let proxy = FaultProxy::start(pg.addr()).unwrap();
    let url = format!("postgresql://postgres@{}/{db}", proxy.addr());
    Setup { proxy, url, direct }
}

fn count(c: &mut postgres::Client) -> i64 {
    c.query_one("SELECT count(*) FROM t", &[]).unwrap().get(0)
}

#[test]
fn passes_traffic_through() {
    let mut s = setup();
    let mut c = postgres::Client::connect(&s.url, postgres::NoTls).unwrap();
    c.batch_execute("INSERT INTO t VALUES (1), (2)").unwrap();
    assert_eq!(count(&mut c), 2);
    assert_eq!(count(&mut s.direct), 2);
    assert_eq!(s.proxy.connections_accepted(), 1);
    assert_eq!(s.proxy.cuts_fired(), 0);
}

#[test]
fn a_cut_before_forwarding_means_the_server_never_saw_the_request() {
    let mut s = setup();
    let mut c = postgres::Client::connect(&s.url, postgres::NoTls).unwrap();
    s.proxy.arm(Cut::before("INSERT INTO t"));
    assert!(c.batch_execute("INSERT INTO t VALUES (1)").is_err());
    assert!(c.is_closed());
    assert_eq!(s.proxy.cuts_fired(), 1);
    assert_eq!(count(&mut s.direct), 0);
    // A new connection works; the cut fired once.
    let mut c = postgres::Client::connect(&s.url, postgres::NoTls).unwrap();
    c.batch_execute("INSERT INTO t VALUES (1)").unwrap();
    assert_eq!(count(&mut s.direct), 1);
}

#[test]
fn a_cut_after_the_reply_means_the_request_ran_unheard() {
    let mut s = setup();
    let mut c = postgres::Client::connect(&s.url, postgres::NoTls).unwrap();
    c.batch_execute("BEGIN; INSERT INTO t VALUES (7)").unwrap();
    s.proxy.arm(Cut::after_reply("COMMIT"));
    assert!(c.batch_execute("COMMIT").is_err());
    assert_eq!(s.proxy.cuts_fired(), 1);
    assert_eq!(count(&mut s.direct), 1, "the COMMIT reached the server");
}

#[test]
fn a_cut_that_keeps_the_server_side_open_leaves_the_transaction_holding_its_locks() {
    let mut s = setup();
    s.direct.batch_execute("INSERT INTO t VALUES (1)").unwrap();
    let mut c = postgres::Client::connect(&s.url, postgres::NoTls).unwrap();
    let pid: i32 = c.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
    c.batch_execute("BEGIN").unwrap();
    s.proxy.arm(Cut::after_reply("UPDATE t").keep_server_open());
    assert!(c.batch_execute("UPDATE t SET x = 2").is_err());
    let state = |d: &mut postgres::Client| -> Option<String> {
        d.query_opt("SELECT state FROM pg_stat_activity WHERE pid = $1", &[&pid])
            .unwrap()
            .map(|r| r.get(0))
    };
    assert_eq!(state(&mut s.direct).as_deref(), Some("idle in transaction"));
    // Its row lock blocks a writer (NOWAIT fails at once instead of waiting).
    let mut other = postgres::Client::connect(&s.url, postgres::NoTls).unwrap();
    let locked = other.batch_execute("BEGIN; SELECT * FROM t WHERE x = 1 FOR UPDATE NOWAIT");
    assert!(
        locked.is_err(),
        "the partitioned transaction should still hold the row"
    );
    // Releasing the held side ends the backend; the update was rolled back.
    s.proxy.release_held();
    let deadline = Instant::now() + Duration::from_secs(10);
    while state(&mut s.direct).is_some() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(state(&mut s.direct), None);
    let x: i32 = s.direct.query_one("SELECT x FROM t", &[]).unwrap().get(0);
    assert_eq!(x, 1);
}

#[test]
fn refused_connections_and_cut_all() {
    let s = setup();
    let mut c = postgres::Client::connect(&s.url, postgres::NoTls).unwrap();
    s.proxy.refuse_connections(true);
    assert!(postgres::Client::connect(&s.url, postgres::NoTls).is_err());
    // Open connections are untouched until cut_all.
    c.batch_execute("SELECT 1").unwrap();
    s.proxy.cut_all();
    assert!(c.batch_execute("SELECT 1").is_err());
    s.proxy.refuse_connections(false);
    let mut c = postgres::Client::connect(&s.url, postgres::NoTls).unwrap();
    c.batch_execute("SELECT 1").unwrap();
}

#[test]
fn a_cut_armed_later_does_not_fire_on_bytes_sent_earlier() {
    let mut s = setup();
    let mut c = postgres::Client::connect(&s.url, postgres::NoTls).unwrap();
    c.batch_execute("INSERT INTO t VALUES (1)").unwrap();
    s.proxy.arm(Cut::before("INSERT INTO t"));
    c.batch_execute("SELECT 1").unwrap();
    assert_eq!(s.proxy.cuts_fired(), 0);
    assert!(c.batch_execute("INSERT INTO t VALUES (2)").is_err());
    assert_eq!(count(&mut s.direct), 1);
}
