//! Crash consistency: append, rewrite, expire-snapshots and remove-orphans with every single step
//! failed in turn. After each failure the table loads, holds the rows of before or after (never a
//! mix), and the orphan listing finds exactly the files the failure left behind.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use arrow_array::Array;
use common::*;
use geoberg_table::testing::{Fault, FaultyCatalog};
use geoberg_table::{BBox, Catalog, RewriteReport, Table, TableIdent};

/// Row count and an order-independent checksum per column.
fn fingerprint(table: &Table) -> (usize, Vec<u64>) {
    let (batches, _) = table.scan().execute().unwrap();
    let mut rows = 0;
    let mut sums: HashMap<String, u64> = HashMap::new();
    for b in &batches {
        rows += b.num_rows();
        for (field, col) in b.schema().fields().iter().zip(b.columns()) {
            let sum = sums.entry(field.name().clone()).or_default();
            for row in 0..col.len() {
                let mut h = DefaultHasher::new();
                arrow_cast::display::array_value_to_string(col, row)
                    .unwrap()
                    .hash(&mut h);
                *sum = sum.wrapping_add(h.finish());
            }
        }
    }
    let mut names: Vec<_> = sums.into_iter().collect();
    names.sort();
    (rows, names.into_iter().map(|(_, s)| s).collect())
}

fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let ty = e.file_type().unwrap();
            if ty.is_dir() {
                stack.push(e.path());
            } else if ty.is_file() {
                out.insert(e.path());
            }
        }
    }
    out
}

fn location(table: &Table) -> PathBuf {
    PathBuf::from(table.metadata().location().trim_start_matches("file://"))
}

fn path_of(uri: &str) -> PathBuf {
    PathBuf::from(uri.trim_start_matches("file://"))
}

/// The orphan listing as local paths.
fn orphans(table: &Table, older_than: SystemTime) -> BTreeSet<PathBuf> {
    table
        .orphan_files(older_than)
        .unwrap()
        .iter()
        .map(|l| path_of(l))
        .collect()
}

fn future() -> SystemTime {
    SystemTime::now() + Duration::from_secs(3600)
}

/// Every fault to try for an operation: each write failed, each write done with its reply lost,
/// each delete failed, until the operation runs to the end without reaching the armed step; then
/// the swap failed, and the swap done but its reply lost.
fn each_fault(mut run: impl FnMut(Fault) -> bool) {
    let kinds: [fn(usize) -> Fault; 3] = [Fault::Write, Fault::WriteLost, Fault::Delete];
    for kind in kinds {
        for k in 1..200 {
            if !run(kind(k)) {
                break;
            }
            assert!(k < 199, "the operation never finished");
        }
    }
    run(Fault::Swap);
    run(Fault::SwapLost);
}

/// A table with `appends` snapshots of 5 rows each, opened through a fault-injecting catalog.
fn setup(dir: &Path, appends: i64) -> (Arc<dyn Catalog>, Arc<FaultyCatalog>, Table) {
    let catalog = sqlite_catalog(dir);
    let mut table = points_table(catalog.clone(), "t");
    for a in 0..appends {
        table = table
            .append(&[points_batch(a * 5..a * 5 + 5, |i| (i as f64, 0.0))])
            .unwrap()
            .0;
    }
    let faulty = Arc::new(FaultyCatalog::new(catalog.clone()));
    let table = Table::load(faulty.clone(), table.ident()).unwrap();
    (catalog, faulty, table)
}

#[test]
fn append_with_any_step_failed_is_all_or_nothing() {
    let expected_after = {
        let dir = tempfile::tempdir().unwrap();
        let (_, _, t) = setup(dir.path(), 2);
        fingerprint(&t)
    };
    let mut faults_tried = 0;
    each_fault(|fault| {
        let dir = tempfile::tempdir().unwrap();
        let (catalog, faulty, table) = setup(dir.path(), 1);
        let before = fingerprint(&table);
        let files_before = files_under(&location(&table));
        faulty.inject(fault);
        let result = table.append(&[points_batch(5..10, |i| (i as f64, 0.0))]);
        let fired = faulty.fired();
        faulty.inject(Fault::None);

        let loaded = Table::load(catalog.clone(), table.ident()).unwrap();
        let now = fingerprint(&loaded);
        let files_after = files_under(&location(&loaded));
        let orphans = orphans(&loaded, future());
        if fault == Fault::SwapLost {
            // The reply was lost, the commit found out by reading the pointer again.
            assert!(fired && result.is_ok(), "{fault:?}: {:?}", result.err());
        }
        if result.is_ok() {
            assert_eq!(now, expected_after, "{fault:?}");
            assert!(orphans.is_empty(), "{fault:?}: {orphans:?}");
        } else {
            assert!(fired, "{fault:?}: {:?}", result.err());
            assert_eq!(now, before, "{fault:?}: a failed append changed the rows");
            let left: BTreeSet<PathBuf> = files_after.difference(&files_before).cloned().collect();
            assert_eq!(orphans, left, "{fault:?}");
            // Removing them restores the directory exactly.
            loaded.remove_orphan_files(future()).unwrap();
            assert_eq!(files_under(&location(&loaded)), files_before, "{fault:?}");
            assert_eq!(fingerprint(&loaded.refresh().unwrap()), before);
            faults_tried += 1;
        }
        fired
    });
    // Data file, manifest, manifest list and metadata, each failed and each with its reply
    // lost: 8 writes; the swap.
    assert!(
        faults_tried >= 9,
        "only {faults_tried} faults were injected"
    );
}

#[test]
fn expire_snapshots_with_any_step_failed_keeps_rows_and_finds_leftovers() {
    let mut faults_tried = 0;
    each_fault(|fault| {
        let dir = tempfile::tempdir().unwrap();
        let (catalog, faulty, table) = setup(dir.path(), 4);
        let before = fingerprint(&table);
        let files_before = files_under(&location(&table));
        let current = table.metadata().current_snapshot_id();
        let expired_lists: BTreeSet<PathBuf> = table
            .metadata()
            .snapshots()
            .filter(|s| Some(s.snapshot_id()) != current)
            .map(|s| path_of(s.manifest_list()))
            .collect();
        assert_eq!(expired_lists.len(), 3);
        // The expired snapshots' file-bounds index roots go with their manifest lists (their
        // sidecars stay: the current root names every manifest).
        let expired_lists: BTreeSet<PathBuf> = table
            .metadata()
            .snapshots()
            .filter(|s| Some(s.snapshot_id()) != current)
            .filter_map(|s| {
                s.summary()
                    .additional_properties
                    .get(geoberg_table::FILE_BOUNDS_INDEX_SUMMARY_KEY)
            })
            .map(|l| path_of(l))
            .chain(expired_lists)
            .collect();

        faulty.inject(fault);
        let result = table.expire_snapshots(future(), 1);
        let fired = faulty.fired();
        faulty.inject(Fault::None);

        let loaded = Table::load(catalog.clone(), table.ident()).unwrap();
        assert_eq!(
            fingerprint(&loaded),
            before,
            "{fault:?}: expiry changed the rows"
        );
        let committed = loaded.metadata().snapshots().count() == 1;
        if !committed {
            assert_eq!(loaded.metadata().snapshots().count(), 4, "{fault:?}");
            assert!(result.is_err(), "{fault:?}");
        }
        let files_after = files_under(&location(&loaded));
        let mut expected: BTreeSet<PathBuf> = files_after
            .difference(&files_before)
            .filter(|p| **p != path_of(loaded.metadata_location()))
            .cloned()
            .collect();
        if committed {
            let left: BTreeSet<PathBuf> =
                expired_lists.intersection(&files_after).cloned().collect();
            match &result {
                Ok((_, report)) => {
                    assert_eq!(report.expired_snapshots.len(), 3);
                    let undeleted: BTreeSet<PathBuf> = report
                        .undeleted_files
                        .iter()
                        .map(|(l, _)| path_of(l))
                        .collect();
                    assert_eq!(undeleted, left, "{fault:?}");
                }
                Err(e) => panic!("{fault:?}: committed, yet {e}"),
            }
            expected.extend(left);
        }
        assert_eq!(orphans(&loaded, future()), expected, "{fault:?}");
        if fired {
            faults_tried += 1;
        }
        fired
    });
    assert!(
        faults_tried >= 6,
        "only {faults_tried} faults were injected"
    );
}

#[test]
fn remove_orphans_with_any_delete_failed_deletes_only_old_unreferenced_files() {
    let mut faults_tried = 0;
    each_fault(|fault| {
        let dir = tempfile::tempdir().unwrap();
        let (catalog, faulty, table) = setup(dir.path(), 2);
        let before = fingerprint(&table);
        let root = location(&table);
        let referenced = files_under(&root);
        let old_time = SystemTime::now() - Duration::from_secs(7 * 24 * 3600);
        let mut old = BTreeSet::new();
        for name in ["data/old-1.parquet", "metadata/old-2.avro", "data/.x.tmp"] {
            let p = root.join(name);
            std::fs::write(&p, b"left behind").unwrap();
            std::fs::File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_modified(old_time)
                .unwrap();
            old.insert(p);
        }
        let young = root.join("data/in-flight.parquet");
        std::fs::write(&young, b"a writer still running").unwrap();
        let horizon = SystemTime::now() - Duration::from_secs(24 * 3600);

        faulty.inject(fault);
        let result = table.remove_orphan_files(horizon);
        let fired = faulty.fired();
        faulty.inject(Fault::None);

        let loaded = Table::load(catalog.clone(), table.ident()).unwrap();
        assert_eq!(fingerprint(&loaded), before, "{fault:?}");
        let now = files_under(&root);
        assert!(
            now.is_superset(&referenced),
            "{fault:?}: a referenced file was deleted"
        );
        assert!(
            now.contains(&young),
            "{fault:?}: a file newer than the horizon was deleted"
        );
        let remaining: BTreeSet<PathBuf> = old.intersection(&now).cloned().collect();
        let listed = orphans(&loaded, horizon);
        assert_eq!(listed, remaining, "{fault:?}");
        match result {
            Ok(deleted) => {
                assert_eq!(
                    deleted.iter().map(|l| path_of(l)).collect::<BTreeSet<_>>(),
                    old
                );
                assert!(remaining.is_empty());
            }
            Err(e) => {
                assert!(fired, "{e}");
                assert!(!remaining.is_empty(), "{fault:?}");
            }
        }
        if fired {
            faults_tried += 1;
        }
        fired
    });
    assert_eq!(faults_tried, 3, "one fault per orphan delete");
}

/// Sorted ids of the rows a window over about a quarter of the world returns.
fn window_ids(table: &Table) -> Vec<i64> {
    let window = BBox::new(-90.0, -45.0, 90.0, 45.0);
    let (batches, _) = table.scan().with_window("geom", window).execute().unwrap();
    ids_of(&batches)
}

/// Live data files by partition.
fn live_by_partition(table: &Table) -> BTreeMap<String, BTreeSet<PathBuf>> {
    let mut out: BTreeMap<String, BTreeSet<PathBuf>> = BTreeMap::new();
    for f in table.data_files().unwrap() {
        out.entry(format!("{:?}", f.partition()))
            .or_default()
            .insert(path_of(f.file_path()));
    }
    out
}

/// A table to rewrite, opened through a fault-injecting catalog: four appends of 60 scattered
/// points, or (`partitioned`) three appends whose rows spread over three `data` partitions.
fn rewrite_setup(dir: &Path, partitioned: bool) -> (Arc<dyn Catalog>, Arc<FaultyCatalog>, Table) {
    let catalog = sqlite_catalog(dir);
    let mut table = if partitioned {
        partitioned_points_table(catalog.clone(), "t", &[])
    } else {
        points_table(catalog.clone(), "t")
    };
    let (appends, rows) = if partitioned { (3, 90) } else { (4, 60) };
    for a in 0..appends {
        let mut batch = points_batch(a * rows..(a + 1) * rows, uniform(7));
        if partitioned {
            batch = with_partition_data(batch);
        }
        table = table.append(&[batch]).unwrap().0;
    }
    let faulty = Arc::new(FaultyCatalog::new(catalog.clone()));
    let table = Table::load(faulty.clone(), table.ident()).unwrap();
    (catalog, faulty, table)
}

/// What a rewrite must preserve or replace whole.
struct BeforeRewrite {
    fingerprint: (usize, Vec<u64>),
    window: Vec<i64>,
    live: BTreeMap<String, BTreeSet<PathBuf>>,
    files: BTreeSet<PathBuf>,
}

impl BeforeRewrite {
    fn of(table: &Table) -> Self {
        BeforeRewrite {
            fingerprint: fingerprint(table),
            window: window_ids(table),
            live: live_by_partition(table),
            files: files_under(&location(table)),
        }
    }
}

/// Checks the table after a rewrite that ran with `fault` armed and returns how many partitions
/// it replaced: the table loads through the plain catalog with the same rows and window rows;
/// each partition holds either exactly its old files or only new ones; the orphan listing finds
/// exactly the unreferenced files the rewrite left behind, and removing them keeps the rows.
fn check_after_rewrite(
    fault: Fault,
    fired: bool,
    catalog: &Arc<dyn Catalog>,
    ident: &TableIdent,
    before: &BeforeRewrite,
    result: &geoberg_table::Result<(Table, RewriteReport)>,
) -> usize {
    let loaded = Table::load(catalog.clone(), ident)
        .unwrap_or_else(|e| panic!("{fault:?}: the table does not load: {e}"));
    if let Err(e) = loaded.scan().execute() {
        panic!("{fault:?}: the table does not read: {e}");
    }
    assert_eq!(
        fingerprint(&loaded),
        before.fingerprint,
        "{fault:?}: rows changed"
    );
    assert_eq!(
        window_ids(&loaded),
        before.window,
        "{fault:?}: window rows changed"
    );

    let live = live_by_partition(&loaded);
    assert_eq!(
        live.keys().collect::<Vec<_>>(),
        before.live.keys().collect::<Vec<_>>(),
        "{fault:?}"
    );
    let old: BTreeSet<&PathBuf> = before.live.values().flatten().collect();
    let mut replaced = 0;
    for (partition, files) in &live {
        if files != &before.live[partition] {
            assert!(
                files.iter().all(|f| !old.contains(f)),
                "{fault:?}: partition {partition} mixes old and new files: {files:?}"
            );
            replaced += 1;
        }
    }
    match result {
        Ok((table, report)) => {
            assert_eq!(
                table.metadata_location(),
                loaded.metadata_location(),
                "{fault:?}"
            );
            assert_eq!(
                report.failed_data_files_count == 0,
                replaced == live.len(),
                "{fault:?}"
            );
            assert_eq!(report.snapshot_ids.is_empty(), replaced == 0, "{fault:?}");
        }
        Err(e) => {
            assert!(fired, "{fault:?}: failed without the fault: {e}");
            assert_ne!(fault, Fault::SwapLost, "a lost reply is found out: {e}");
            assert_eq!(replaced, 0, "{fault:?}: {e}");
        }
    }

    let files_after = files_under(&location(&loaded));
    let left: BTreeSet<PathBuf> = files_after.difference(&before.files).cloned().collect();
    let orphans = orphans(&loaded, future());
    assert!(
        orphans.is_subset(&left),
        "{fault:?}: {orphans:?} vs {left:?}"
    );
    assert!(!orphans.contains(&path_of(loaded.metadata_location())));
    for f in live.values().flatten() {
        assert!(!orphans.contains(f), "{fault:?}: live file {f:?} listed");
        assert!(
            files_after.contains(f),
            "{fault:?}: live file {f:?} is gone"
        );
    }
    if replaced == 0 {
        // Nothing committed: everything the rewrite left is unreferenced.
        assert_eq!(orphans, left, "{fault:?}");
    }
    match fault {
        // Failures the rewrite knows to be definite (or none): it removes what it wrote, also a
        // file whose write reply was lost.
        Fault::None | Fault::Write(_) | Fault::WriteLost(_) => {
            assert!(orphans.is_empty(), "{fault:?}: {orphans:?}")
        }
        // An unknown outcome keeps every file (the commit may reference them).
        Fault::Swap => assert!(!orphans.is_empty(), "{fault:?}"),
        Fault::SwapLost => assert!(orphans.is_empty(), "{fault:?}: {orphans:?}"),
        // A failed cleanup delete leaves its file.
        Fault::Delete(_) => {}
    }

    // The leftovers are younger than an hour: a horizon before them keeps every one (they
    // could be a running writer's).
    let past = SystemTime::now() - Duration::from_secs(3600);
    assert!(loaded.remove_orphan_files(past).unwrap().is_empty());
    assert_eq!(files_under(&location(&loaded)), files_after, "{fault:?}");
    // Removing the orphans restores the directory to the referenced files, rows intact.
    let removed: BTreeSet<PathBuf> = loaded
        .remove_orphan_files(future())
        .unwrap()
        .iter()
        .map(|l| path_of(l))
        .collect();
    assert_eq!(removed, orphans, "{fault:?}");
    assert_eq!(
        files_under(&location(&loaded)),
        files_after.difference(&orphans).cloned().collect(),
        "{fault:?}"
    );
    let reloaded = loaded.refresh().unwrap();
    assert_eq!(fingerprint(&reloaded), before.fingerprint, "{fault:?}");
    assert_eq!(window_ids(&reloaded), before.window, "{fault:?}");
    assert!(reloaded.orphan_files(future()).unwrap().is_empty());
    replaced
}

#[test]
fn rewrite_with_any_step_failed_is_all_or_nothing() {
    let mut writes_failed = 0;
    let mut added_files = 0;
    each_fault(|fault| {
        let dir = tempfile::tempdir().unwrap();
        let (catalog, faulty, table) = rewrite_setup(dir.path(), false);
        let before = BeforeRewrite::of(&table);
        faulty.inject(fault);
        let result = table
            .rewrite()
            .hilbert("geom", 12)
            .option("target-file-count", "4")
            .execute();
        let fired = faulty.fired();
        faulty.inject(Fault::None);
        let replaced = check_after_rewrite(fault, fired, &catalog, table.ident(), &before, &result);
        if let Ok((_, report)) = &result {
            assert_eq!(replaced, 1);
            added_files = report.added_data_files_count;
        }
        if matches!(fault, Fault::Write(_)) && fired {
            writes_failed += 1;
        }
        fired
    });
    assert!(added_files >= 3, "{added_files} output files");
    // Each output file, then a manifest of the added and one of the deleted files, the manifest
    // list and the metadata file.
    assert!(
        writes_failed as u64 >= added_files + 4,
        "{writes_failed} writes failed for {added_files} output files"
    );
}

#[test]
fn partial_progress_rewrite_with_any_step_failed_keeps_the_groups_committed_before() {
    let mut kept_earlier_group = false;
    each_fault(|fault| {
        let dir = tempfile::tempdir().unwrap();
        let (catalog, faulty, table) = rewrite_setup(dir.path(), true);
        let before = BeforeRewrite::of(&table);
        assert_eq!(before.live.len(), 3);
        faulty.inject(fault);
        let result = rewrite_in_three_commits(&table).execute();
        let fired = faulty.fired();
        faulty.inject(Fault::None);
        let replaced = check_after_rewrite(fault, fired, &catalog, table.ident(), &before, &result);
        match &result {
            Ok((_, report)) => {
                assert_eq!(report.snapshot_ids.len(), replaced, "{fault:?}: {report}");
                if fault == Fault::SwapLost {
                    // The lost reply is found out: every group committed.
                    assert_eq!(replaced, 3, "{fault:?}: {report}");
                } else if fired {
                    // One group failed (its three input files); the others committed.
                    assert_eq!(replaced, 2, "{fault:?}: {report}");
                    assert_eq!(report.failed_data_files_count, 3, "{fault:?}: {report}");
                    kept_earlier_group = true;
                }
            }
            Err(e) => assert_eq!(replaced, 0, "{fault:?}: {e}"),
        }
        fired
    });
    assert!(kept_earlier_group, "no fault hit a later commit group");
}
