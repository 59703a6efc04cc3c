//! The PostgreSQL catalog against a real server started by `geoberg-testkit`: the behaviours of
//! the SQLite catalog, tables on it, conflicts, many threads swapping at once, and connections
//! cut before and after the swap by a fault proxy.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

use common::*;
use geoberg_table::{Catalog, Error, PostgresCatalog, Table, TableIdent};
use geoberg_testkit::{Cut, FaultProxy, PostgresServer};

/// A fresh database on the shared server, its URL and a warehouse directory.
struct Db {
    url: String,
    name: String,
    dir: tempfile::TempDir,
}

fn db() -> Db {
    let url = PostgresServer::shared().fresh_database().unwrap();
    let name = url.rsplit('/').next().unwrap().to_string();
    Db {
        url,
        name,
        dir: tempfile::tempdir().unwrap(),
    }
}

impl Db {
    fn catalog(&self) -> PostgresCatalog {
        PostgresCatalog::connect(&self.url, "geoberg", self.dir.path().join("warehouse")).unwrap()
    }

    fn direct(&self) -> postgres::Client {
        postgres::Client::connect(&self.url, postgres::NoTls).unwrap()
    }

    /// A proxy in front of the server and a catalog connected through it.
    fn proxied(&self) -> (FaultProxy, PostgresCatalog) {
        let proxy = FaultProxy::start(PostgresServer::shared().addr()).unwrap();
        let url = format!("postgresql://postgres@{}/{}", proxy.addr(), self.name);
        let catalog = PostgresCatalog::connect(&url, "geoberg", self.dir.path().join("warehouse"))
            .unwrap()
            .with_commit_settle_timeout(Duration::from_secs(2));
        (proxy, catalog)
    }
}

/// (metadata_location, previous_metadata_location) of `t` as the database holds them.
fn row_of(c: &mut postgres::Client, t: &TableIdent) -> (Option<String>, Option<String>) {
    let r = c
        .query_one(
            "SELECT metadata_location, previous_metadata_location FROM iceberg_tables \
             WHERE catalog_name = 'geoberg' AND table_namespace = $1 AND table_name = $2",
            &[&t.namespace_str(), &t.name()],
        )
        .unwrap();
    (r.get(0), r.get(1))
}

/// The sequence `catalogs.rs` runs on the SQLite and in-memory catalogs.
fn exercise(cat: &dyn Catalog) {
    let t = TableIdent::new("a.b", "t").unwrap();
    assert!(matches!(
        cat.register_table(&t, "file:///x/0.json"),
        Err(Error::NoSuchNamespace(_))
    ));
    cat.create_namespace("a.b").unwrap();
    cat.create_namespace("a.b").unwrap(); // idempotent
    assert!(cat.namespace_exists("a.b").unwrap());
    assert!(!cat.namespace_exists("a").unwrap());
    cat.register_table(&t, "file:///x/0.json").unwrap();
    assert!(matches!(
        cat.register_table(&t, "file:///x/1.json"),
        Err(Error::TableAlreadyExists(_))
    ));
    assert_eq!(cat.list_tables("a.b").unwrap(), vec![t.clone()]);
    cat.swap_metadata_location(&t, "file:///x/0.json", "file:///x/1.json")
        .unwrap();
    let err = cat
        .swap_metadata_location(&t, "file:///x/0.json", "file:///x/2.json")
        .unwrap_err();
    assert!(err.is_retryable(), "{err}");
    assert!(err.to_string().contains("file:///x/1.json"), "{err}");
    assert_eq!(
        cat.metadata_location(&t).unwrap().as_deref(),
        Some("file:///x/1.json")
    );
    // RENAME TO: one atomic update of the row's key; a taken name is refused.
    let u = TableIdent::new("a.b", "u").unwrap();
    cat.register_table(&u, "file:///y/0.json").unwrap();
    assert!(matches!(
        cat.rename_table(&t, &u),
        Err(Error::TableAlreadyExists(_))
    ));
    assert!(cat.drop_table(&u).unwrap());
    cat.rename_table(&t, &u).unwrap();
    assert_eq!(cat.metadata_location(&t).unwrap(), None);
    assert_eq!(
        cat.metadata_location(&u).unwrap().as_deref(),
        Some("file:///x/1.json")
    );
    assert!(matches!(
        cat.rename_table(&t, &u),
        Err(Error::NoSuchTable(_))
    ));
    cat.rename_table(&u, &t).unwrap();
    assert!(cat.drop_table(&t).unwrap());
    assert!(!cat.drop_table(&t).unwrap());
    assert_eq!(cat.metadata_location(&t).unwrap(), None);
    assert!(matches!(
        cat.swap_metadata_location(&t, "file:///x/1.json", "y"),
        Err(Error::CommitConflict { .. })
    ));
}

#[test]
fn behaves_like_the_sqlite_catalog_in_the_jdbc_v1_layout() {
    let db = db();
    let cat = db.catalog();
    exercise(&cat);

    let mut c = db.direct();
    let cols: Vec<String> = c
        .query(
            "SELECT column_name::text FROM information_schema.columns \
             WHERE table_name = 'iceberg_tables' ORDER BY ordinal_position",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        cols,
        [
            "catalog_name",
            "table_namespace",
            "table_name",
            "metadata_location",
            "previous_metadata_location",
            "iceberg_type"
        ]
    );
    let exists: String = c
        .query_one(
            "SELECT property_value FROM iceberg_namespace_properties \
             WHERE namespace = 'a.b' AND property_key = 'exists'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(exists, "true");

    // Rows of other catalogs and of views are invisible; namespaces and tables come sorted.
    c.batch_execute(
        "INSERT INTO iceberg_tables VALUES
           ('other', 'a.b', 'hidden', 'file:///o.json', NULL, 'TABLE'),
           ('geoberg', 'a.b', 'a_view', 'file:///v.json', NULL, 'VIEW'),
           ('geoberg', 'z', 'legacy_v0_row', 'file:///l.json', NULL, NULL),
           ('geoberg', 'a.b', 'B', 'file:///b.json', NULL, 'TABLE'),
           ('geoberg', 'a.b', 'a', 'file:///a.json', NULL, 'TABLE')",
    )
    .unwrap();
    cat.create_namespace("M").unwrap();
    assert_eq!(cat.list_namespaces().unwrap(), ["M", "a.b", "z"]);
    let names: Vec<String> = cat
        .list_tables("a.b")
        .unwrap()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    assert_eq!(names, ["B", "a"]);
    let view = TableIdent::new("a.b", "a_view").unwrap();
    assert_eq!(cat.metadata_location(&view).unwrap(), None);
    assert!(!cat.drop_table(&view).unwrap());
    let legacy = TableIdent::new("z", "legacy_v0_row").unwrap();
    assert_eq!(
        cat.metadata_location(&legacy).unwrap().as_deref(),
        Some("file:///l.json")
    );
}

#[test]
fn many_processes_opening_a_new_database_at_once_all_succeed() {
    let db = db();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| db.catalog().create_namespace("ns").unwrap());
        }
    });
    assert_eq!(db.catalog().list_namespaces().unwrap(), ["ns"]);
}

#[test]
fn passwords_stay_out_of_debug_output_and_errors() {
    let db = db();
    // Trust authentication ignores the password, so the catalog connects with it.
    let with_password = db.url.replace("postgres@", "postgres:s3cr3t-pw@");
    let cat = PostgresCatalog::connect(&with_password, "geoberg", db.dir.path()).unwrap();
    let debug = format!("{cat:?}");
    assert!(!debug.contains("s3cr3t"), "{debug}");
    assert!(debug.contains(&format!(
        "postgres@127.0.0.1:{}",
        PostgresServer::shared().port()
    )));
    // A server that is not there: the error names it, without the password.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgresql://postgres:s3cr3t-pw@127.0.0.1:{port}/x?connect_timeout=2");
    let err = PostgresCatalog::connect(&url, "geoberg", db.dir.path()).unwrap_err();
    let text = format!("{err} / {err:?}");
    assert!(!text.contains("s3cr3t"), "{text}");
    assert!(
        text.contains(&format!("postgres@127.0.0.1:{port}/x")),
        "{text}"
    );
}

#[test]
fn tables_are_created_appended_and_scanned_through_the_table_api() {
    let db = db();
    let catalog: Arc<dyn Catalog> = Arc::new(db.catalog());
    catalog.create_namespace("test_db").unwrap();
    let mut table = points_table(catalog.clone(), "points");
    for f in 0..3 {
        table = table
            .append(&[points_batch(f * 10..(f + 1) * 10, uniform(3))])
            .unwrap()
            .0;
    }
    // A separate catalog object (another process would do the same) loads what was committed.
    let other: Arc<dyn Catalog> = Arc::new(db.catalog());
    let loaded = Table::load(other, table.ident()).unwrap();
    assert_eq!(loaded.metadata_location(), table.metadata_location());
    let expected: Vec<Row> = {
        let mut all = Vec::new();
        for f in 0..3 {
            all.extend(rows_of_batch(f * 10..(f + 1) * 10));
        }
        all.sort();
        all
    };
    assert_eq!(rows(&loaded), expected);
    let (metadata, previous) = row_of(&mut db.direct(), table.ident());
    assert_eq!(metadata.as_deref(), Some(table.metadata_location()));
    assert!(previous.is_some());

    // CREATE SPATIAL INDEX commits through the same swap.
    let (rewritten, _) = loaded.rewrite().hilbert("geom", 8).execute().unwrap();
    assert_eq!(rows(&rewritten), expected);
}

/// The rows `points_batch(ids, uniform(3))` holds, computed independently of the table.
fn rows_of_batch(ids: std::ops::Range<i64>) -> Vec<Row> {
    ids.map(|i| {
        let (x, y) = uniform(3)(i);
        (i, Some(format!("row{i}")), Some(wkb_point(x, y)))
    })
    .collect()
}

#[test]
fn a_stale_writer_conflicts_once_and_its_append_is_reapplied() {
    let db = db();
    let catalog: Arc<dyn Catalog> = Arc::new(db.catalog());
    catalog.create_namespace("test_db").unwrap();
    let table = points_table(catalog.clone(), "t");
    let stale = Table::load(catalog.clone(), table.ident()).unwrap();
    table.append(&[points_batch(0..5, uniform(3))]).unwrap();
    // One attempt on the stale version: the swap is a retryable conflict.
    let (pending, _) = stale
        .stage_append(&[points_batch(5..10, uniform(3))])
        .unwrap();
    let err = pending.commit().unwrap_err();
    assert!(
        err.is_retryable() && matches!(err, Error::CommitConflict { .. }),
        "{err}"
    );
    // The append itself re-applies its files on the newer metadata.
    let (done, _) = stale.append(&[points_batch(5..10, uniform(3))]).unwrap();
    let mut expected = rows_of_batch(0..10);
    expected.sort();
    assert_eq!(rows(&done), expected);
}

/// Rounds of threads swapping the same pointer at once, each round from the pointer the last
/// one left: exactly one wins each round, every loser is told who won.
#[test]
fn concurrent_swaps_have_exactly_one_winner_per_round() {
    const THREADS: usize = 8;
    const ROUNDS: usize = 25;
    let db = db();
    // Half the threads share one catalog (its connection pool), the others have their own.
    let shared = Arc::new(db.catalog());
    let catalogs: Vec<Arc<PostgresCatalog>> = (0..THREADS)
        .map(|i| {
            if i % 2 == 0 {
                shared.clone()
            } else {
                Arc::new(db.catalog())
            }
        })
        .collect();
    let t = TableIdent::new("ns", "t").unwrap();
    shared.create_namespace("ns").unwrap();
    shared.register_table(&t, "v0").unwrap();
    let barrier = Barrier::new(THREADS);
    let winners = Mutex::new(vec![Vec::new(); ROUNDS]);
    let conflicts = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for (i, cat) in catalogs.iter().enumerate() {
            let (barrier, winners, conflicts, t) = (&barrier, &winners, &conflicts, &t);
            s.spawn(move || {
                for round in 0..ROUNDS {
                    let expected = if round == 0 {
                        "v0".to_string()
                    } else {
                        format!("r{}", round - 1)
                    };
                    barrier.wait();
                    let mine = format!("r{round}-t{i}");
                    match cat.swap_metadata_location(t, &expected, &mine) {
                        Ok(()) => winners.lock().unwrap()[round].push(mine),
                        Err(Error::CommitConflict { found, .. }) => {
                            assert!(found.starts_with(&format!("r{round}-t")), "{found}");
                            conflicts.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(e) => panic!("round {round}: {e}"),
                    }
                    barrier.wait();
                    // One thread moves the pointer to the name the next round expects.
                    if i == 0 {
                        let won = winners.lock().unwrap()[round].clone();
                        assert_eq!(won.len(), 1, "round {round}: winners {won:?}");
                        cat.swap_metadata_location(t, &won[0], &format!("r{round}"))
                            .unwrap();
                    }
                    barrier.wait();
                }
            });
        }
    });
    assert_eq!(conflicts.load(Ordering::SeqCst), ROUNDS * (THREADS - 1));
    let (now, previous) = row_of(&mut db.direct(), &t);
    assert_eq!(now.as_deref(), Some(format!("r{}", ROUNDS - 1).as_str()));
    assert_eq!(
        previous,
        winners.lock().unwrap()[ROUNDS - 1].first().cloned()
    );
}

/// 4 threads x 5 appends on PostgreSQL, each reloading and retrying on conflict, next to a
/// thread running CREATE SPATIAL INDEX three times (re-run when its inputs changed).
#[test]
fn threads_appending_and_rewriting_at_once_keep_every_row_exactly_once() {
    let db = db();
    let setup: Arc<dyn Catalog> = Arc::new(db.catalog());
    setup.create_namespace("test_db").unwrap();
    let ident = points_table(setup, "t").ident().clone();
    let rewrites = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let (db, ident, rewrites) = (&db, &ident, &rewrites);
        s.spawn(move || {
            let catalog: Arc<dyn Catalog> = Arc::new(db.catalog());
            for attempt in 0.. {
                assert!(attempt < 200, "the rewrites never got through");
                let table = Table::load(catalog.clone(), ident).unwrap();
                match table.rewrite().hilbert("geom", 8).execute() {
                    Ok(_) if rewrites.fetch_add(1, Ordering::SeqCst) == 2 => break,
                    Ok(_) => {}
                    Err(e) if e.is_retryable() || matches!(e, Error::RewriteConflict { .. }) => {}
                    Err(e) => panic!("rewrite: {e}"),
                }
            }
        });
        for thread in 0..4i64 {
            let (db, ident) = (db, ident);
            s.spawn(move || {
                let catalog: Arc<dyn Catalog> = Arc::new(db.catalog());
                for k in 0..5i64 {
                    let start = (thread * 5 + k) * 10;
                    for attempt in 0.. {
                        assert!(attempt < 50, "append never got through");
                        let table = Table::load(catalog.clone(), ident).unwrap();
                        match table.append(&[points_batch(start..start + 10, uniform(3))]) {
                            Ok(_) => break,
                            Err(e) if e.is_retryable() => {}
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            });
        }
    });
    let table = Table::load(Arc::new(db.catalog()), &ident).unwrap();
    let mut expected = rows_of_batch(0..200);
    expected.sort();
    assert_eq!(rows(&table), expected);
    assert_eq!(rewrites.load(Ordering::SeqCst), 3);
}

/// A swap whose connection the proxy cuts at `cut`: the catalog finds out what happened and
/// either retries (nothing committed) or reports success (it committed); never both.
fn swap_survives(cut: Cut) {
    let db = db();
    let (proxy, cat) = db.proxied();
    let t = TableIdent::new("ns", "t").unwrap();
    cat.create_namespace("ns").unwrap();
    cat.register_table(&t, "file:///m/0.json").unwrap();
    proxy.arm(cut.clone());
    cat.swap_metadata_location(&t, "file:///m/0.json", "file:///m/1.json")
        .unwrap_or_else(|e| panic!("{cut:?}: {e}"));
    assert_eq!(proxy.cuts_fired(), 1, "{cut:?} did not fire");
    let (now, previous) = row_of(&mut db.direct(), &t);
    assert_eq!(now.as_deref(), Some("file:///m/1.json"), "{cut:?}");
    assert_eq!(previous.as_deref(), Some("file:///m/0.json"), "{cut:?}");
    // The catalog is still usable, and sees its own commit.
    assert_eq!(
        cat.metadata_location(&t).unwrap().as_deref(),
        Some("file:///m/1.json")
    );
}

#[test]
fn a_connection_cut_before_the_update_is_retried() {
    swap_survives(Cut::before("UPDATE iceberg_tables"));
}

#[test]
fn a_connection_cut_after_the_update_is_rolled_back_and_retried() {
    swap_survives(Cut::after_reply("UPDATE iceberg_tables"));
}

#[test]
fn a_session_left_open_by_a_partition_is_ended_before_the_retry() {
    // The old session keeps its row lock: without ending it the retry would wait forever.
    swap_survives(Cut::after_reply("UPDATE iceberg_tables").keep_server_open());
}

#[test]
fn a_connection_cut_before_the_commit_is_retried() {
    swap_survives(Cut::before("COMMIT"));
    swap_survives(Cut::before("COMMIT").keep_server_open());
}

#[test]
fn a_commit_whose_reply_is_lost_is_found_committed() {
    // A retry would conflict with the commit itself (the pointer is already the new one), so
    // success means the fate was read, not guessed.
    swap_survives(Cut::after_reply("COMMIT"));
}

#[test]
fn a_catalog_unreachable_after_the_cut_reports_an_unknown_outcome_honestly() {
    for (cut, committed) in [
        (Cut::after_reply("COMMIT"), true),
        (Cut::before("UPDATE iceberg_tables"), false),
    ] {
        let db = db();
        let (proxy, cat) = db.proxied();
        let t = TableIdent::new("ns", "t").unwrap();
        cat.create_namespace("ns").unwrap();
        cat.register_table(&t, "file:///m/0.json").unwrap();
        proxy.arm(cut.clone());
        proxy.refuse_connections(true);
        let err = cat
            .swap_metadata_location(&t, "file:///m/0.json", "file:///m/1.json")
            .unwrap_err();
        assert!(
            matches!(err, Error::CommitStateUnknown { .. }),
            "{cut:?}: {err}"
        );
        assert!(!err.is_retryable());
        assert!(err.to_string().contains("file:///m/1.json"), "{err}");
        let (now, _) = row_of(&mut db.direct(), &t);
        let expect = if committed {
            "file:///m/1.json"
        } else {
            "file:///m/0.json"
        };
        assert_eq!(now.as_deref(), Some(expect), "{cut:?}");
    }
}

#[test]
fn a_swap_cut_every_time_gives_up_without_committing() {
    let db = db();
    let (proxy, cat) = db.proxied();
    let t = TableIdent::new("ns", "t").unwrap();
    cat.create_namespace("ns").unwrap();
    cat.register_table(&t, "file:///m/0.json").unwrap();
    for _ in 0..3 {
        proxy.arm(Cut::before("UPDATE iceberg_tables"));
    }
    let err = cat
        .swap_metadata_location(&t, "file:///m/0.json", "file:///m/1.json")
        .unwrap_err();
    assert!(matches!(err, Error::Postgres { .. }), "{err}");
    assert_eq!(proxy.cuts_fired(), 3);
    assert_eq!(
        row_of(&mut db.direct(), &t).0.as_deref(),
        Some("file:///m/0.json")
    );
}

/// Appends whose commit connection is cut: each commits exactly once.
#[test]
fn appends_through_cut_connections_commit_every_row_exactly_once() {
    let db = db();
    let (proxy, cat) = db.proxied();
    let catalog: Arc<dyn Catalog> = Arc::new(cat);
    catalog.create_namespace("test_db").unwrap();
    let mut table = points_table(catalog.clone(), "t");
    let cuts = [
        Cut::before("UPDATE iceberg_tables"),
        Cut::after_reply("UPDATE iceberg_tables").keep_server_open(),
        Cut::after_reply("COMMIT"),
    ];
    for (k, cut) in cuts.iter().enumerate() {
        proxy.arm(cut.clone());
        let ids = k as i64 * 10..(k as i64 + 1) * 10;
        table = table
            .append(&[points_batch(ids, uniform(3))])
            .unwrap_or_else(|e| panic!("{cut:?}: {e}"))
            .0;
    }
    assert_eq!(proxy.cuts_fired(), 3);
    let reloaded = Table::load(Arc::new(db.catalog()), table.ident()).unwrap();
    let mut expected = rows_of_batch(0..30);
    expected.sort();
    assert_eq!(rows(&reloaded), expected);
    assert_eq!(reloaded.metadata().snapshots().count(), 3);
}
