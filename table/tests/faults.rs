//! Crash consistency: append, expire-snapshots and remove-orphans with every single step failed
//! in turn. After each failure the table loads, holds the rows of before or after (never a mix),
//! and the orphan listing finds exactly the files the failure left behind.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use arrow_array::Array;
use common::*;
use geoberg_table::testing::{Fault, FaultyCatalog};
use geoberg_table::{Catalog, Table};

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

fn future() -> SystemTime {
    SystemTime::now() + Duration::from_secs(3600)
}

/// Every fault to try for an operation: each write, each link/delete, the swap, until the
/// operation runs to the end without reaching the armed step.
fn each_fault(mut run: impl FnMut(Fault) -> bool) {
    for kind in [Fault::Write as fn(usize) -> Fault, Fault::LinkOrDelete] {
        for k in 1..200 {
            if !run(kind(k)) {
                break;
            }
            assert!(k < 199, "the operation never finished");
        }
    }
    run(Fault::Swap);
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
        let orphans: BTreeSet<PathBuf> =
            loaded.orphan_files(future()).unwrap().into_iter().collect();
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
    // Data file, manifest, manifest list and metadata: 4 writes, 8 links/deletes, the swap.
    assert!(
        faults_tried >= 13,
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
            let (_, report) = result.as_ref().unwrap();
            assert_eq!(report.expired_snapshots.len(), 3);
            let undeleted: BTreeSet<PathBuf> = report
                .undeleted_files
                .iter()
                .map(|(p, _)| p.clone())
                .collect();
            let left: BTreeSet<PathBuf> =
                expired_lists.intersection(&files_after).cloned().collect();
            assert_eq!(undeleted, left, "{fault:?}");
            expected.extend(left);
        }
        let orphans: BTreeSet<PathBuf> =
            loaded.orphan_files(future()).unwrap().into_iter().collect();
        assert_eq!(orphans, expected, "{fault:?}");
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
        let listed: BTreeSet<PathBuf> = loaded.orphan_files(horizon).unwrap().into_iter().collect();
        assert_eq!(listed, remaining, "{fault:?}");
        match result {
            Ok(deleted) => {
                assert_eq!(deleted.into_iter().collect::<BTreeSet<_>>(), old);
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
