//! Racing writers: append, rewrite (CREATE SPATIAL INDEX) and expire-snapshots interleaved at
//! chosen points, deterministically, plus a bounded threaded stress run on the SQLite catalog.
//!
//! An interleaving is a victim operation on a handle loaded before an intruder (one or more
//! complete operations) runs at one point of the victim: before it starts (stale handle), after
//! it wrote its files (before the commit), or right before its n-th catalog swap. Every outcome
//! is checked against an oracle (the loser gets the retryable `CommitConflict`, a rewrite whose
//! inputs changed gets `RewriteConflict`, a rewrite re-applies itself over appends and expiries),
//! and after every scenario the table is checked: it loads; its rows are the initial rows plus
//! every successful append's rows exactly once; every snapshot in the history is readable and
//! consistent with its parent; every file a retained snapshot references exists; the only
//! unreferenced data files are those of appends that lost, and the orphan listing finds them.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use common::*;
use geoberg_table::testing::{Fault, FaultyCatalog};
use geoberg_table::{Catalog, Error, MemoryCatalog, Result, Rewrite, Table, TableIdent};
use iceberg::spec::Operation;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    /// Five new rows.
    Append,
    /// CREATE SPATIAL INDEX over every file.
    RewriteAll,
    /// A rewrite of the files that may hold ids < 20 (initially files 0 and 1).
    RewriteLow,
    /// A rewrite of the files that may hold ids >= 20 (initially files 2 and 3, and appends).
    RewriteHigh,
    /// Expire every snapshot but the current one.
    Expire,
}

impl Op {
    fn is_rewrite(self) -> bool {
        matches!(self, Op::RewriteAll | Op::RewriteLow | Op::RewriteHigh)
    }
}

/// Initial table: 4 appends of 10 rows (ids 0..40), one data file each.
const INITIAL_FILES: i64 = 4;
const INITIAL_ROWS: i64 = 10;
const APPEND_ROWS: i64 = 5;

fn row(i: i64) -> Row {
    let (x, y) = uniform(7)(i);
    (i, Some(format!("row{i}")), Some(wkb_point(x, y)))
}

fn future() -> SystemTime {
    SystemTime::now() + Duration::from_secs(3600)
}

fn path_of(uri: &str) -> PathBuf {
    PathBuf::from(uri.trim_start_matches("file://"))
}

/// One scenario's table and bookkeeping, shared with the intruder hooks.
struct World {
    dir: tempfile::TempDir,
    catalog: Arc<dyn Catalog>,
    ident: TableIdent,
    /// Rows of the initial table and of every append that committed.
    committed: Mutex<Vec<Row>>,
    next_id: AtomicI64,
    /// Append attempts that failed (each leaves its one data file behind).
    lost_appends: AtomicUsize,
    time_travel: AtomicUsize,
}

impl World {
    /// On the SQLite catalog, or (faster, for the many deterministic scenarios) in memory.
    fn new(sqlite: bool) -> Arc<World> {
        let dir = tempfile::tempdir().unwrap();
        let catalog: Arc<dyn Catalog> = if sqlite {
            sqlite_catalog(dir.path())
        } else {
            let c = MemoryCatalog::new("geoberg", dir.path().join("warehouse")).unwrap();
            c.create_namespace("test_db").unwrap();
            Arc::new(c)
        };
        let mut table = points_table(catalog.clone(), "t");
        for f in 0..INITIAL_FILES {
            let ids = f * INITIAL_ROWS..(f + 1) * INITIAL_ROWS;
            table = table.append(&[points_batch(ids, uniform(7))]).unwrap().0;
        }
        let ident = table.ident().clone();
        Arc::new(World {
            dir,
            catalog,
            ident,
            committed: Mutex::new((0..INITIAL_FILES * INITIAL_ROWS).map(row).collect()),
            next_id: AtomicI64::new(1_000),
            lost_appends: AtomicUsize::new(0),
            time_travel: AtomicUsize::new(0),
        })
    }

    fn load(&self) -> Table {
        Table::load(self.catalog.clone(), &self.ident).unwrap()
    }

    /// The ids an operation appends (empty for the others).
    fn ids_for(&self, op: Op) -> std::ops::Range<i64> {
        if op == Op::Append {
            let start = self.next_id.fetch_add(APPEND_ROWS, Ordering::SeqCst);
            start..start + APPEND_ROWS
        } else {
            0..0
        }
    }

    /// Books the outcome of one attempt of `op`.
    fn record(&self, op: Op, ids: &std::ops::Range<i64>, result: &Result<Table>) {
        if op != Op::Append {
            return;
        }
        match result {
            Ok(_) => self.committed.lock().unwrap().extend(ids.clone().map(row)),
            Err(_) => {
                self.lost_appends.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    /// Runs `op` on fresh loads until it succeeds, as a caller retrying conflicts does.
    fn run_to_success(&self, op: Op, ids: std::ops::Range<i64>) -> Table {
        for _ in 0..20 {
            let result = apply(&self.load(), op, &ids);
            self.record(op, &ids, &result);
            match result {
                Ok(t) => return t,
                Err(e) if e.is_retryable() || matches!(e, Error::RewriteConflict { .. }) => {}
                Err(e) => panic!("{op:?} failed: {e}"),
            }
        }
        panic!("{op:?} never succeeded");
    }
}

fn rewrite(table: &Table, op: Op) -> Rewrite<'_> {
    let r = table
        .rewrite()
        .hilbert("geom", 8)
        .option("target-file-count", "2");
    match op {
        Op::RewriteLow => r.where_sql("id < 20"),
        Op::RewriteHigh => r.where_sql("id >= 20"),
        _ => r,
    }
}

/// One attempt of `op` on `table`.
fn apply(table: &Table, op: Op, ids: &std::ops::Range<i64>) -> Result<Table> {
    match op {
        Op::Append => Ok(table.append(&[points_batch(ids.clone(), uniform(7))])?.0),
        Op::Expire => Ok(table.expire_snapshots(future(), 1)?.0),
        _ => Ok(rewrite(table, op).execute()?.0),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Point {
    /// The intruder runs after the victim loaded the table, before it starts.
    Stale,
    /// After the victim rewrite wrote its files, before it validates and commits.
    AfterWrite,
    /// Right before the victim's first catalog swap.
    BeforeSwap,
    /// Before each of the victim's first n swaps: every retry loses again.
    EverySwap(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Ok,
    /// `Error::CommitConflict`, retryable.
    Retryable,
    /// `Error::RewriteConflict`: the rewrite's inputs changed; rerun it on the reloaded table.
    RewriteConflict,
    /// Another error, nothing committed (a stale rewrite reading an input an expiry deleted).
    Failed,
}

fn outcome(result: &Result<Table>) -> Outcome {
    match result {
        Ok(_) => Outcome::Ok,
        Err(e) if e.is_retryable() => {
            assert!(matches!(e, Error::CommitConflict { .. }), "{e}");
            Outcome::Retryable
        }
        Err(e @ Error::RewriteConflict { .. }) => {
            assert!(!e.is_retryable());
            Outcome::RewriteConflict
        }
        Err(_) => Outcome::Failed,
    }
}

/// Data files (local paths) live in the current snapshot of `table`.
fn live_files(table: &Table) -> BTreeSet<PathBuf> {
    table
        .data_files()
        .unwrap()
        .iter()
        .map(|f| path_of(f.file_path()))
        .collect()
}

/// Whether `starting` is the current snapshot or one of its ancestors still in the metadata.
fn is_ancestor(table: &Table, starting: Option<i64>) -> bool {
    let md = table.metadata();
    let mut cursor = md.current_snapshot();
    while let Some(s) = cursor {
        if Some(s.snapshot_id()) == starting {
            return true;
        }
        cursor = s.parent_snapshot_id().and_then(|p| md.snapshot_by_id(p));
    }
    false
}

/// What the victim must see, given the table after the intruder ran.
fn expected_outcome(
    victim: Op,
    point: Point,
    before: &Table,
    inputs: &BTreeSet<PathBuf>,
    intrusions: usize,
    after: &Table,
) -> Outcome {
    let moved = after.metadata_location() != before.metadata_location();
    if !moved {
        return Outcome::Ok;
    }
    let stale_snapshot_gone = || {
        let list = before
            .metadata()
            .current_snapshot()
            .unwrap()
            .manifest_list();
        !path_of(list).exists()
    };
    if victim == Op::Expire {
        // An expiry goes through the one commit driver: re-applied on newer metadata (no
        // intruder points a branch or tag at what it expires), unless its stale handle's own
        // snapshot was expired before it started: it cannot read what it keeps, and reloading
        // is the fix.
        if point == Point::Stale && stale_snapshot_gone() {
            return Outcome::Retryable;
        }
        return Outcome::Ok;
    }
    if victim == Op::Append {
        // An append never conflicts: it is re-applied on newer metadata, up to
        // commit.retry.num-retries (4) times, even when its base snapshot was expired.
        if matches!(point, Point::EverySwap(_)) && intrusions > 4 {
            return Outcome::Retryable;
        }
        return Outcome::Ok;
    }
    if point == Point::Stale {
        if stale_snapshot_gone() {
            // Its snapshot was expired: planning cannot read it, reloading is the fix.
            return Outcome::Retryable;
        }
        if inputs.iter().any(|p| !p.exists()) {
            return Outcome::Failed;
        }
    }
    let live = live_files(after);
    let starting = before.metadata().current_snapshot_id();
    if !inputs.is_subset(&live) || !is_ancestor(after, starting) {
        return Outcome::RewriteConflict;
    }
    // Re-applied on newer metadata, up to commit.retry.num-retries (4) times.
    if matches!(point, Point::EverySwap(_)) && intrusions > 4 {
        return Outcome::Retryable;
    }
    Outcome::Ok
}

/// Parquet files under the table's data directory.
fn data_files_on_disk(table: &Table) -> BTreeSet<PathBuf> {
    let dir = path_of(table.metadata().location()).join("data");
    data_dir_files(table)
        .into_iter()
        .map(|n| dir.join(n))
        .collect()
}

/// The table as of `snapshot_id`: a copy of the current metadata with `main` moved there,
/// registered in `catalog` (the table API has no time travel).
fn at_snapshot(
    world: &World,
    catalog: &Arc<dyn Catalog>,
    table: &Table,
    snapshot_id: i64,
) -> Table {
    let bytes = std::fs::read(path_of(table.metadata_location())).unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    doc["current-snapshot-id"] = snapshot_id.into();
    doc["refs"] = serde_json::json!({"main": {"snapshot-id": snapshot_id, "type": "branch"}});
    let n = world.time_travel.fetch_add(1, Ordering::SeqCst);
    let path = world
        .dir
        .path()
        .join(format!("time-travel/{n}.metadata.json"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let ident = TableIdent::new("test_db", &format!("tt_{n}")).unwrap();
    catalog
        .register_table(&ident, &format!("file://{}", path.display()))
        .unwrap();
    Table::load(catalog.clone(), &ident).unwrap()
}

/// The invariants every scenario ends with (see the module docs); `history` also reads every
/// snapshot.
fn check(world: &World, label: &str, history: bool) {
    let table = Table::load(world.catalog.clone(), &world.ident)
        .unwrap_or_else(|e| panic!("{label}: the table does not load: {e}"));
    let mut expected = world.committed.lock().unwrap().clone();
    expected.sort();
    let current = rows(&table);
    assert_eq!(
        current.len(),
        expected.len(),
        "{label}: row count differs from the committed appends"
    );
    assert!(current == expected, "{label}: rows lost or duplicated");

    let mut by_snapshot: HashMap<i64, Vec<Row>> = HashMap::new();
    let mut live_any = BTreeSet::new();
    let time_travel: Arc<dyn Catalog> = {
        let c = MemoryCatalog::new("time-travel", world.dir.path()).unwrap();
        c.create_namespace("test_db").unwrap();
        Arc::new(c)
    };
    for s in table.metadata().snapshots() {
        let tt = at_snapshot(world, &time_travel, &table, s.snapshot_id());
        for f in live_files(&tt) {
            assert!(f.exists(), "{label}: {} of {s:?} is gone", f.display());
            live_any.insert(f);
        }
        if !history {
            continue;
        }
        let r = rows(&tt);
        let ids: BTreeSet<i64> = r.iter().map(|r| r.0).collect();
        assert_eq!(ids.len(), r.len(), "{label}: duplicate rows in {s:?}");
        let total = &s.summary().additional_properties["total-records"];
        assert_eq!(total, &r.len().to_string(), "{label}: {s:?}");
        by_snapshot.insert(s.snapshot_id(), r);
    }
    for s in table.metadata().snapshots() {
        let Some(parent) = s.parent_snapshot_id().and_then(|p| by_snapshot.get(&p)) else {
            continue;
        };
        let child: BTreeSet<&Row> = by_snapshot[&s.snapshot_id()].iter().collect();
        let parent: BTreeSet<&Row> = parent.iter().collect();
        match &s.summary().operation {
            Operation::Replace => assert!(child == parent, "{label}: a REPLACE changed rows"),
            Operation::Append => {
                assert!(parent.is_subset(&child), "{label}: an append lost rows");
                let added = child.len() - parent.len();
                assert!(
                    added as i64 == APPEND_ROWS || added as i64 == INITIAL_ROWS,
                    "{label}: an append added {added} rows"
                );
            }
            op => panic!("{label}: unexpected operation {op:?}"),
        }
    }

    // Nothing a rewrite that lost, or an expiry, should have removed is left behind.
    let on_disk = data_files_on_disk(&table);
    assert!(
        live_any.is_subset(&on_disk),
        "{label}: referenced files missing"
    );
    let unreferenced: BTreeSet<PathBuf> = on_disk.difference(&live_any).cloned().collect();
    assert_eq!(
        unreferenced.len(),
        world.lost_appends.load(Ordering::SeqCst),
        "{label}: unreferenced data files other than the lost appends': {unreferenced:?}"
    );
    let data_dir = path_of(table.metadata().location()).join("data");
    let orphans: BTreeSet<PathBuf> = table
        .orphan_files(future())
        .unwrap()
        .iter()
        .map(|l| path_of(l))
        .filter(|p| p.starts_with(&data_dir))
        .collect();
    assert_eq!(orphans, unreferenced, "{label}: orphan listing");
}

/// Runs one interleaving and checks the oracle and the invariants.
fn scenario(victim: Op, intruder: &'static [Op], point: Point) {
    let label = format!("{victim:?} vs {intruder:?} at {point:?}");
    let world = World::new(false);
    let wrapped = Arc::new(FaultyCatalog::new(world.catalog.clone()));
    let table = Table::load(wrapped.clone(), &world.ident).unwrap();
    let ids = world.ids_for(victim);
    let inputs: BTreeSet<PathBuf> = if victim.is_rewrite() {
        let planned = rewrite(&table, victim).plan().unwrap();
        planned
            .plan
            .inputs
            .iter()
            .map(|f| path_of(&f.location))
            .collect()
    } else {
        BTreeSet::new()
    };
    let intrusions = Arc::new(AtomicUsize::new(0));
    // The table as the (last) intruder left it.
    let after_intruder = Arc::new(Mutex::new(None));
    let intrude = {
        let world = world.clone();
        let intrusions = intrusions.clone();
        let after_intruder = after_intruder.clone();
        move || {
            intrusions.fetch_add(1, Ordering::SeqCst);
            for &op in intruder {
                let ids = world.ids_for(op);
                world.run_to_success(op, ids);
            }
            *after_intruder.lock().unwrap() = Some(world.load());
        }
    };

    let result = match point {
        Point::Stale => {
            intrude();
            apply(&table, victim, &ids)
        }
        Point::AfterWrite => {
            assert!(victim.is_rewrite(), "{label}");
            let hook = Mutex::new(Some(intrude));
            rewrite(&table, victim)
                .on_progress(|done, total| {
                    if done == total
                        && let Some(f) = hook.lock().unwrap().take()
                    {
                        f();
                    }
                })
                .execute()
                .map(|(t, _)| t)
        }
        Point::BeforeSwap => {
            wrapped.before_swap(1, intrude);
            apply(&table, victim, &ids)
        }
        Point::EverySwap(n) => {
            for k in 1..=n {
                wrapped.before_swap(k, intrude.clone());
            }
            apply(&table, victim, &ids)
        }
    };
    world.record(victim, &ids, &result);
    let got = outcome(&result);
    let after_intruder = after_intruder
        .lock()
        .unwrap()
        .take()
        .unwrap_or_else(|| panic!("{label}: the intruder never ran"));
    let want = expected_outcome(
        victim,
        point,
        &table,
        &inputs,
        intrusions.load(Ordering::SeqCst),
        &after_intruder,
    );
    assert_eq!(
        got,
        want,
        "{label}: {:?}",
        result.as_ref().err().map(ToString::to_string)
    );
    if got != Outcome::Ok {
        // Nothing of the loser is visible; a rewrite that lost leaves none of its files.
        assert_eq!(
            world.load().metadata_location(),
            after_intruder.metadata_location(),
            "{label}"
        );
        check(&world, &format!("{label} (before the retry)"), false);
        // Reload and repeat, as the error says.
        world.run_to_success(victim, ids);
    }
    check(&world, &label, true);
}

const INTRUDERS: &[&[Op]] = &[
    &[Op::Append],
    &[Op::RewriteAll],
    &[Op::RewriteHigh],
    &[Op::Expire],
    &[Op::Append, Op::Expire],
    &[Op::RewriteAll, Op::Expire],
];

/// Runs `victim` against every intruder at every point, a few scenarios per thread (each in
/// its own warehouse).
fn every_interleaving(victim: Op) {
    // An append's AfterWrite is its BeforeSwap (staged, then committed); an expiry writes
    // only its metadata file.
    let mut points = vec![Point::Stale, Point::BeforeSwap];
    if victim.is_rewrite() {
        points.push(Point::AfterWrite);
    }
    let cases: Vec<(&'static [Op], Point)> = INTRUDERS
        .iter()
        .flat_map(|i| points.iter().map(move |p| (*i, *p)))
        .collect();
    let n = cases.len();
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get().min(8));
    std::thread::scope(|s| {
        for chunk in cases.chunks(n.div_ceil(threads)) {
            s.spawn(move || {
                for &(intruder, point) in chunk {
                    scenario(victim, intruder, point);
                }
            });
        }
    });
}

#[test]
fn append_is_reapplied_over_any_concurrent_commit() {
    every_interleaving(Op::Append);
}

#[test]
fn rewrite_all_reapplies_over_appends_and_expiries_and_conflicts_on_its_inputs() {
    every_interleaving(Op::RewriteAll);
}

#[test]
fn rewrites_of_disjoint_files_both_commit() {
    every_interleaving(Op::RewriteLow);
}

#[test]
fn rewrite_of_appended_files_races_everything() {
    every_interleaving(Op::RewriteHigh);
}

#[test]
fn expire_is_reapplied_over_any_commit_and_deletes_nothing_in_use() {
    every_interleaving(Op::Expire);
}

#[test]
fn a_rewrite_that_loses_every_retry_gives_up_with_a_retryable_conflict() {
    std::thread::scope(|s| {
        for victim in [Op::RewriteAll, Op::RewriteLow] {
            // 5 losses exhaust the 4 retries; 4 losses leave the last attempt to win.
            for n in [1, 4, 5] {
                s.spawn(move || scenario(victim, &[Op::Append], Point::EverySwap(n)));
            }
        }
    });
}

/// 4 threads x 5 operations on one SQLite catalog; losers reload and retry.
#[test]
fn threads_racing_on_sqlite_keep_every_row_exactly_once() {
    const SCHEDULE: [[Op; 5]; 4] = [
        [
            Op::Append,
            Op::Append,
            Op::RewriteAll,
            Op::Append,
            Op::Append,
        ],
        [
            Op::RewriteAll,
            Op::Append,
            Op::RewriteLow,
            Op::Append,
            Op::RewriteHigh,
        ],
        [Op::Append, Op::Expire, Op::Append, Op::Expire, Op::Append],
        [
            Op::RewriteHigh,
            Op::Append,
            Op::Expire,
            Op::RewriteAll,
            Op::Append,
        ],
    ];
    let world = World::new(true);
    let counts = Mutex::new(BTreeMap::<(Op, Outcome), usize>::new());
    std::thread::scope(|s| {
        for ops in SCHEDULE {
            let (world, counts) = (&world, &counts);
            s.spawn(move || {
                for op in ops {
                    let ids = world.ids_for(op);
                    for attempt in 0.. {
                        assert!(attempt < 50, "{op:?} never got through");
                        let result = apply(&world.load(), op, &ids);
                        world.record(op, &ids, &result);
                        let o = outcome(&result);
                        *counts.lock().unwrap().entry((op, o)).or_default() += 1;
                        match (o, &result) {
                            (Outcome::Ok, _) => break,
                            (Outcome::Retryable | Outcome::RewriteConflict, _) => {}
                            // A handle loaded just before an expiry may name a manifest list
                            // or input the expiry deleted; nothing was committed. Retry.
                            (Outcome::Failed, Err(e)) if is_not_found(e) => {}
                            (_, Err(e)) => panic!("{op:?}: {e}"),
                            (_, Ok(_)) => unreachable!(),
                        }
                    }
                }
            });
        }
    });
    let table = world.load();
    let appends = SCHEDULE
        .iter()
        .flatten()
        .filter(|o| **o == Op::Append)
        .count();
    assert_eq!(
        rows(&table).len() as i64,
        INITIAL_FILES * INITIAL_ROWS + appends as i64 * APPEND_ROWS
    );
    check(
        &world,
        &format!("threads {:?}", counts.into_inner().unwrap()),
        true,
    );
}

fn is_not_found(e: &Error) -> bool {
    let s = e.to_string();
    s.contains("No such file") || s.contains("not found") || s.contains("NotFound")
}

/// Reported by the CLI author: after CREATE SPATIAL INDEX, expiring the old snapshots must
/// delete the data files the REPLACE removed (no remaining snapshot references them: a DELETED
/// entry does not keep a file alive), and if a delete fails the orphan listing must find them.
#[test]
fn expire_after_a_rewrite_deletes_the_replaced_data_files() {
    let world = World::new(true);
    let table = world.load();
    let originals = live_files(&table);
    assert_eq!(originals.len(), INITIAL_FILES as usize);
    let (table, _) = rewrite(&table, Op::RewriteAll).execute().unwrap();
    let rewritten = live_files(&table);
    assert!(rewritten.is_disjoint(&originals));

    let (table, report) = table.expire_snapshots(future(), 1).unwrap();
    assert_eq!(report.expired_snapshots.len(), INITIAL_FILES as usize);
    let deleted: BTreeSet<PathBuf> = report.deleted_files.iter().map(|l| path_of(l)).collect();
    assert!(
        originals.is_subset(&deleted),
        "replaced data files not deleted: {:?}",
        originals.difference(&deleted).collect::<Vec<_>>()
    );
    assert!(originals.iter().all(|p| !p.exists()));
    assert!(rewritten.iter().all(|p| p.exists()));
    assert!(table.orphan_files(future()).unwrap().is_empty());
    assert!(report.undeleted_files.is_empty());
    check(&world, "expire after rewrite", true);

    // Same, with the first data-file delete of the expiry failing: the file it left behind is
    // an orphan that the listing finds and remove_orphan_files deletes.
    for k in 1.. {
        assert!(k < 20, "no delete of a data file was failed");
        let world = World::new(false);
        let table = world.load();
        let originals = live_files(&table);
        rewrite(&table, Op::RewriteAll).execute().unwrap();
        let faulty = Arc::new(FaultyCatalog::new(world.catalog.clone()));
        let table = Table::load(faulty.clone(), &world.ident).unwrap();
        faulty.inject(Fault::Delete(k));
        let result = table.expire_snapshots(future(), 1);
        faulty.inject(Fault::None);
        let Ok((table, report)) = result else {
            continue; // a step of the commit itself failed
        };
        let Some((left, _)) = report.undeleted_files.first() else {
            continue;
        };
        assert_eq!(report.undeleted_files.len(), 1, "{report:?}");
        assert!(
            originals.contains(&path_of(left)),
            "data files go first: {report:?}"
        );
        assert_eq!(table.orphan_files(future()).unwrap(), vec![left.clone()]);
        assert_eq!(
            table.remove_orphan_files(future()).unwrap(),
            vec![left.clone()]
        );
        assert!(originals.iter().all(|p| !p.exists()));
        check(&world, "expire after rewrite, one delete failed", true);
        break;
    }
}
