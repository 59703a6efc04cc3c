//! Row-level changes under failure and concurrency: every write and swap of a DELETE or UPDATE
//! failed in turn, in both modes, leaves the table readable with the old rows or the new ones
//! (never a mix), with the orphans listed and removable; a concurrent append is never lost; a
//! concurrent rewrite of an affected file makes the change fail cleanly.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use common::*;
use geoberg_table::testing::{Fault, FaultyCatalog};
use geoberg_table::{Catalog, Error, RowChangeMode, RowFilter, Table};

fn future() -> SystemTime {
    SystemTime::now() + Duration::from_secs(3600)
}

fn filter(sql: &str) -> RowFilter {
    RowFilter::from_predicate(geoberg_sql::parse_condition(sql).unwrap())
}

/// Sorted (id, data) of every row.
fn rows(t: &Table) -> Vec<(i64, String)> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    let (batches, _) = t.scan().select(["id", "data"]).execute().unwrap();
    let mut out: Vec<(i64, String)> = batches
        .iter()
        .flat_map(|b| {
            let ids = b.column(0).as_primitive::<Int64Type>().clone();
            let data = b.column(1).as_string::<i32>().clone();
            (0..b.num_rows())
                .map(move |r| (ids.value(r), data.value(r).to_string()))
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort();
    out
}

fn setup(dir: &std::path::Path) -> (Arc<dyn Catalog>, Arc<FaultyCatalog>, Table) {
    let catalog = sqlite_catalog(dir);
    let mut t = points_table(catalog.clone(), "t");
    for a in 0..3i64 {
        t = t
            .append(&[points_batch(a * 20..(a + 1) * 20, |i| {
                (i as f64 - 30.0, 0.0)
            })])
            .unwrap()
            .0;
    }
    let faulty = Arc::new(FaultyCatalog::new(catalog.clone()));
    let t = Table::load(faulty.clone(), t.ident()).unwrap();
    (catalog, faulty, t)
}

enum Change {
    Delete,
    Update,
}

fn run(t: &Table, change: &Change, mode: RowChangeMode) -> geoberg_table::Result<Table> {
    let f = filter("id >= 15 AND id < 45");
    match change {
        Change::Delete => Ok(t.delete(f).mode(mode).execute()?.0),
        Change::Update => Ok(t
            .update(f)
            .set("data", |b: &RecordBatch| {
                Ok(Arc::new(StringArray::from(vec!["new"; b.num_rows()])) as ArrayRef)
            })
            .mode(mode)
            .execute()?
            .0),
    }
}

#[test]
fn every_step_failed_leaves_old_or_new_rows_and_listed_orphans() {
    for change in [Change::Delete, Change::Update] {
        for mode in [RowChangeMode::CopyOnWrite, RowChangeMode::MergeOnRead] {
            let expected_after = {
                let dir = tempfile::tempdir().unwrap();
                let (_, _, t) = setup(dir.path());
                rows(&run(&t, &change, mode).unwrap())
            };
            let mut tried = 0;
            let kinds: [fn(usize) -> Fault; 3] = [Fault::Write, Fault::WriteLost, Fault::Delete];
            let mut faults: Vec<Fault> = Vec::new();
            for kind in kinds {
                faults.extend((1..40).map(kind));
            }
            faults.extend([Fault::Swap, Fault::SwapLost]);
            let mut skip_kind: Option<std::mem::Discriminant<Fault>> = None;
            for fault in faults {
                if skip_kind == Some(std::mem::discriminant(&fault)) {
                    continue;
                }
                let dir = tempfile::tempdir().unwrap();
                let (catalog, faulty, t) = setup(dir.path());
                let before = rows(&t);
                let files_before: BTreeSet<String> = t
                    .storage()
                    .list(t.metadata().location())
                    .unwrap()
                    .into_iter()
                    .map(|f| f.location)
                    .collect();
                faulty.inject(fault);
                let result = run(&t, &change, mode);
                let fired = faulty.fired();
                faulty.inject(Fault::None);
                if !fired {
                    // This kind has no k-th step: the next kinds.
                    skip_kind = Some(std::mem::discriminant(&fault));
                    assert!(result.is_ok(), "{fault:?}: {:?}", result.err());
                    continue;
                }
                tried += 1;
                let label = format!("{fault:?} {mode:?}");
                let loaded = Table::load(catalog.clone(), t.ident()).unwrap();
                let now = rows(&loaded);
                match &result {
                    Ok(_) => assert_eq!(now, expected_after, "{label}"),
                    Err(e) => {
                        assert!(
                            now == before || now == expected_after,
                            "{label}: a mix of old and new rows after {e}"
                        );
                        if !matches!(fault, Fault::Swap) {
                            assert_eq!(now, before, "{label}: {e}");
                        }
                    }
                }
                // Whatever is left over is unreferenced, listed, and removable.
                let orphans: BTreeSet<String> =
                    loaded.orphan_files(future()).unwrap().into_iter().collect();
                let files_after: BTreeSet<String> = loaded
                    .storage()
                    .list(loaded.metadata().location())
                    .unwrap()
                    .into_iter()
                    .map(|f| f.location)
                    .collect();
                assert!(orphans.is_subset(&files_after), "{label}");
                assert!(
                    orphans.is_disjoint(&files_before),
                    "{label}: an old file is an orphan"
                );
                loaded.remove_orphan_files(future()).unwrap();
                assert_eq!(rows(&loaded.refresh().unwrap()), now, "{label}");
                assert!(loaded.orphan_files(future()).unwrap().is_empty(), "{label}");
            }
            assert!(tried >= 5, "only {tried} faults fired");
        }
    }
}

#[test]
fn a_concurrent_append_is_kept_and_a_concurrent_rewrite_conflicts() {
    for mode in [RowChangeMode::CopyOnWrite, RowChangeMode::MergeOnRead] {
        // An append lands right before the delete's swap: the delete is re-applied over it.
        let dir = tempfile::tempdir().unwrap();
        let (catalog, faulty, t) = setup(dir.path());
        let intruder = Table::load(catalog.clone(), t.ident()).unwrap();
        faulty.before_swap(1, move || {
            intruder
                .append(&[points_batch(100..105, |i| (i as f64, 1.0))])
                .unwrap();
        });
        let done = t.delete(filter("id < 10")).mode(mode).execute().unwrap().0;
        let ids: Vec<i64> = rows(&done).into_iter().map(|(i, _)| i).collect();
        let expect: Vec<i64> = (10..60).chain(100..105).collect();
        assert_eq!(ids, expect, "{mode:?}: the append is kept");

        // A rewrite replaces the files the delete changes: the delete fails, nothing is lost.
        let dir = tempfile::tempdir().unwrap();
        let (catalog, faulty, t) = setup(dir.path());
        let before = rows(&t);
        let intruder = Table::load(catalog.clone(), t.ident()).unwrap();
        faulty.before_swap(1, move || {
            intruder.rewrite().hilbert("geom", 8).execute().unwrap();
        });
        let err = t
            .delete(filter("id < 10"))
            .mode(mode)
            .execute()
            .unwrap_err();
        assert!(
            matches!(err, Error::RewriteConflict { .. }),
            "{mode:?}: {err}"
        );
        let loaded = Table::load(catalog.clone(), t.ident()).unwrap();
        assert_eq!(
            rows(&loaded),
            before,
            "{mode:?}: the rewrite's rows, all of them"
        );
        assert!(
            loaded.orphan_files(future()).unwrap().is_empty(),
            "{mode:?}: the failed delete removed its files"
        );
        // Run again on the reloaded table, as the error says.
        let done = loaded
            .delete(filter("id < 10"))
            .mode(mode)
            .execute()
            .unwrap()
            .0;
        assert_eq!(rows(&done).len(), 50);
    }
}
