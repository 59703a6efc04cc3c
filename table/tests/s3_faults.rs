//! Object-storage faults from a real S3 server behind a fault-injecting proxy: 5xx and
//! throttling answers, a reply held past the client timeout, a PUT whose reply is lost after the
//! object was written, a truncated ranged read, a reset connection — at every write (and read)
//! of an append and of a rewrite. After each, the table loads, holds the rows of before or all
//! of after (no row lost or duplicated), and whatever was left behind is listed as an orphan and
//! removable.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use common::*;
use geoberg_table::{Catalog, SqliteCatalog, Storage, Table};
use geoberg_testkit::{S3Fault, S3FaultProxy, S3FaultRule, S3Server};

fn future() -> SystemTime {
    SystemTime::now() + Duration::from_secs(3600)
}

/// A catalog whose storage talks to the server through `proxy`, with short client timeouts
/// and few retries (so that a fault is felt, not only retried away).
fn catalog_via(
    dir: &std::path::Path,
    s3: &S3Server,
    proxy: &S3FaultProxy,
    warehouse: &str,
) -> Arc<dyn Catalog> {
    let mut options = s3.env_via(&proxy.endpoint_url());
    options.push(("timeout", "2s".into()));
    options.push(("connect_timeout", "2s".into()));
    options.push(("aws_max_retries", "1".into()));
    options.push(("aws_retry_timeout", "5s".into()));
    let options: Vec<(String, String)> = options
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    Arc::new(
        SqliteCatalog::open(dir.join("catalog.db"), "geoberg", warehouse)
            .unwrap()
            .with_storage(Storage::with_options(options)),
    )
}

fn clean_catalog(dir: &std::path::Path, s3: &S3Server, warehouse: &str) -> Arc<dyn Catalog> {
    Arc::new(
        SqliteCatalog::open(dir.join("catalog.db"), "geoberg", warehouse)
            .unwrap()
            .with_storage(Storage::with_options(s3.env())),
    )
}

fn ids(t: &Table) -> Vec<i64> {
    let (b, _) = t.scan().execute().unwrap();
    ids_of(&b)
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Append,
    Rewrite,
}

#[test]
fn every_fault_at_every_request_leaves_the_table_whole() {
    let s3 = S3Server::shared();
    // Every fault at every request is the full sweep (GEOBERG_FULL_FAULT_SWEEP=1, a few
    // minutes). By default the faults the client retries alike (503, SlowDown) and the slow
    // one (a held reply) are tried at the first requests of each method only; the faults that
    // can leave an object half-written or written-but-unacknowledged at every request.
    let full = std::env::var_os("GEOBERG_FULL_FAULT_SWEEP").is_some();
    let faults = [
        (S3Fault::Status(500), usize::MAX),
        (S3Fault::Status(503), if full { usize::MAX } else { 0 }),
        (S3Fault::SlowDown, if full { usize::MAX } else { 2 }),
        (
            S3Fault::Delay(Duration::from_secs(3)),
            if full { usize::MAX } else { 1 },
        ),
        (S3Fault::DropReply, usize::MAX),
        (S3Fault::TruncateBody, usize::MAX),
        (S3Fault::Reset, usize::MAX),
    ];
    // One bucket, a warehouse prefix per case: every SeaweedFS bucket is a collection that
    // preallocates its own volumes, and hundreds of them would fill the disk.
    let bucket = s3.fresh_bucket().unwrap();
    let mut case = 0;
    let mut outcomes = std::collections::BTreeMap::<String, (usize, usize)>::new();
    for op in [Op::Append, Op::Rewrite] {
        for (fault, first_requests) in faults {
            let methods: &[&str] = match fault {
                S3Fault::TruncateBody => &["GET"],
                _ => &["PUT", "GET", "POST"],
            };
            for method in methods {
                for k in 0..first_requests {
                    case += 1;
                    let warehouse = format!("s3://{bucket}/case-{case}");
                    let dir = tempfile::tempdir().unwrap();
                    // Set up through a clean path (a new bucket's first writes can be slow), then
                    // run the operation through the proxy.
                    let clean = clean_catalog(dir.path(), s3, &warehouse);
                    clean.create_namespace("test_db").unwrap();
                    let mut t = points_table(clean.clone(), "t");
                    for a in 0..2i64 {
                        t = t
                            .append(&[points_batch(a * 30..(a + 1) * 30, uniform(3))])
                            .unwrap()
                            .0;
                    }
                    let proxy = S3FaultProxy::start(s3.addr()).unwrap();
                    let catalog = catalog_via(dir.path(), s3, &proxy, &warehouse);
                    let t = Table::load(catalog, t.ident()).unwrap();
                    let before = ids(&t);
                    let listed_before: BTreeSet<String> = t
                        .storage()
                        .list(t.metadata().location())
                        .unwrap()
                        .into_iter()
                        .map(|f| f.location)
                        .collect();
                    let applied_before = proxy.faults_applied();
                    let mut rule = S3FaultRule::new(fault).method(method).skip(k);
                    if fault == S3Fault::TruncateBody {
                        rule = rule.ranged();
                    }
                    proxy.add(rule);
                    let result = match op {
                        Op::Append => t
                            .append(&[points_batch(60..90, uniform(3))])
                            .map(|(t, _)| t),
                        Op::Rewrite => t.rewrite().hilbert("geom", 8).execute().map(|(t, _)| t),
                    };
                    let fired = proxy.faults_applied() > applied_before;
                    proxy.clear();
                    let label = format!("{op:?} {fault:?} on {method} #{}", k + 1);
                    if !fired {
                        assert!(result.is_ok(), "{label}: {:?}", result.err());
                        break;
                    }
                    let e = outcomes
                        .entry(format!("{op:?} {fault:?} {method}"))
                        .or_default();
                    if result.is_ok() {
                        e.0 += 1;
                    } else {
                        e.1 += 1;
                    }
                    // Read back through the clean path.
                    let loaded = Table::load(clean, t.ident())
                        .unwrap_or_else(|e| panic!("{label}: the table does not load: {e}"));
                    let now = ids(&loaded);
                    let after: Vec<i64> = match op {
                        Op::Append => (0..90).collect(),
                        Op::Rewrite => before.clone(),
                    };
                    match &result {
                        Ok(_) => assert_eq!(now, after, "{label}"),
                        Err(err) => assert!(
                            now == before || now == after,
                            "{label}: rows are neither before nor after: {err}"
                        ),
                    }
                    let orphans: BTreeSet<String> =
                        loaded.orphan_files(future()).unwrap().into_iter().collect();
                    assert!(
                        orphans.is_disjoint(&listed_before),
                        "{label}: an old file is an orphan"
                    );
                    loaded.remove_orphan_files(future()).unwrap();
                    assert_eq!(ids(&loaded.refresh().unwrap()), now, "{label}");
                    assert!(loaded.orphan_files(future()).unwrap().is_empty(), "{label}");
                    assert!(k < 60, "{label}: too many requests");
                }
            }
        }
    }
    eprintln!("(succeeded, failed) by fault: {outcomes:#?}");
    assert!(!outcomes.is_empty());
}
