//! Commit semantics: racing writers and a crash before the catalog swap.

mod common;

use common::*;
use geoberg_table::{Error, Table};

#[test]
fn racing_writers_one_wins_the_other_conflicts_then_retries() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let base = points_table(catalog.clone(), "race");
    let writer_a = base.clone();
    let writer_b = Table::load(catalog.clone(), base.ident()).unwrap();

    // Both stage against the same base; whoever swaps first wins.
    let (staged_a, _) = writer_a
        .stage_append(&[points_batch(0..10, |i| (i as f64, 0.0))])
        .unwrap();
    let (staged_b, _) = writer_b
        .stage_append(&[points_batch(10..20, |i| (i as f64, 0.0))])
        .unwrap();
    let b_location = staged_b.metadata_location().to_string();
    staged_a.commit().unwrap();
    let err = staged_b.commit().unwrap_err();
    assert!(matches!(err, Error::CommitConflict { .. }), "{err}");
    assert!(err.is_retryable());
    assert!(err.to_string().contains("retry"), "{err}");
    // The loser's metadata never became visible and is cleaned up.
    assert!(!std::path::Path::new(b_location.trim_start_matches("file://")).exists());

    // Retry on a fresh load succeeds and keeps the winner's rows.
    let fresh = writer_b.refresh().unwrap();
    fresh
        .append(&[points_batch(10..20, |i| (i as f64, 0.0))])
        .unwrap();
    let (batches, _) = base.refresh().unwrap().scan().execute().unwrap();
    assert_eq!(ids_of(&batches), (0..20).collect::<Vec<_>>());
}

#[test]
fn threads_racing_through_sqlite_all_land_with_retries() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let base = points_table(catalog.clone(), "threads");
    let conflicts = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for w in 0..4i64 {
            let base = &base;
            let conflicts = &conflicts;
            s.spawn(move || {
                let batch = points_batch(w * 5..w * 5 + 5, |i| (i as f64, 1.0));
                let mut table = base.refresh().unwrap();
                loop {
                    match table.append(std::slice::from_ref(&batch)) {
                        Ok(_) => break,
                        Err(e) if e.is_retryable() => {
                            conflicts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            table = table.refresh().unwrap();
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
            });
        }
    });
    let table = base.refresh().unwrap();
    assert_eq!(table.metadata().snapshots().count(), 4);
    let (batches, _) = table.scan().execute().unwrap();
    assert_eq!(ids_of(&batches), (0..20).collect::<Vec<_>>());
}

#[test]
fn crash_between_metadata_write_and_swap_keeps_the_old_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let (table, _) = points_table(catalog.clone(), "crash")
        .append(&[points_batch(0..5, |i| (i as f64, 0.0))])
        .unwrap();
    let before = table.metadata().current_snapshot_id();

    // Everything is written (data, manifest, list, metadata) and then the process "dies".
    let (staged, _) = table
        .stage_append(&[points_batch(5..10, |i| (i as f64, 0.0))])
        .unwrap();
    let orphan = staged
        .metadata_location()
        .trim_start_matches("file://")
        .to_string();
    drop(staged);

    assert!(std::path::Path::new(&orphan).exists());
    let reloaded = table.refresh().unwrap();
    assert_eq!(reloaded.metadata_location(), table.metadata_location());
    assert_eq!(reloaded.metadata().current_snapshot_id(), before);
    let (batches, _) = reloaded.scan().execute().unwrap();
    assert_eq!(ids_of(&batches), (0..5).collect::<Vec<_>>());
}
