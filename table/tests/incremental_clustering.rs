//! Incremental clustering (`rewrite_data_files` with `incremental`): only the key ranges new rows
//! have grown are rewritten, the rows stay the same multiset, ranges stay disjoint, and windows
//! answer as a brute-force filter over the generated points does after every step.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{
    count_inside, live_file_paths, points_batch, points_table, rows, sqlite_catalog, uniform,
};
use geoberg_table::{BBox, CLUSTER_MIN_FILE_ROWS_PROPERTY, ClusteredLayout, Table};
use proptest::prelude::*;

/// A table of `rows` uniform points (seed 7) in 4 appends, clustered into `files` files.
fn clustered_table(dir: &Path, rows: i64, files: usize) -> Table {
    let mut table = points_table(sqlite_catalog(dir), "pts");
    for f in 0..4 {
        let batch = points_batch(f * rows / 4..(f + 1) * rows / 4, uniform(7));
        table = table.append(&[batch]).unwrap().0;
    }
    table
        .rewrite()
        .hilbert("geom", 16)
        .option("target-file-count", files.to_string())
        .execute()
        .unwrap()
        .0
        .set_properties([(CLUSTER_MIN_FILE_ROWS_PROPERTY, "1")])
        .unwrap()
}

fn incremental(table: &Table) -> (Table, geoberg_table::RewriteReport) {
    table
        .rewrite()
        .hilbert("geom", 16)
        .option("incremental", "true")
        .execute()
        .unwrap()
}

/// Points in lon [0, 40) x lat [0, 20): new rows that grow only a few ranges.
fn in_one_region(seed: u64) -> impl Fn(i64) -> (f64, f64) {
    let u = uniform(seed);
    move |i| {
        let (x, y) = u(i);
        ((x + 180.0) / 9.0, (y + 85.0) / 8.5)
    }
}

#[test]
fn only_the_ranges_new_rows_grew_are_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let table = clustered_table(dir.path(), 16_000, 16);
    let layout = ClusteredLayout::current(&table).unwrap().unwrap();
    let firsts: Vec<u64> = layout.partitions[0].files.iter().map(|f| f.first).collect();
    let clustered = live_file_paths(&table);
    let clustered_bytes: u64 = table
        .data_files()
        .unwrap()
        .iter()
        .map(|f| f.file_size_in_bytes())
        .sum();

    let (table, _) = table
        .append(&[points_batch(100_000..103_000, in_one_region(1))])
        .unwrap();
    let before = rows(&table);
    let (table, report) = incremental(&table);
    assert_eq!(rows(&table), before, "the multiset of rows is unchanged");

    let after = live_file_paths(&table);
    let kept = clustered.intersection(&after).count();
    assert!(
        kept >= clustered.len() / 2,
        "ranges the new rows did not reach stay as they are: {kept} of {} kept; {report}",
        clustered.len()
    );
    assert!(report.rewritten_data_files_count > 0, "{report}");
    assert!(
        report.rewritten_bytes_count < clustered_bytes,
        "the run cost what arrived, not the table: {report}"
    );

    // The new layout: disjoint ranges, none crossing a range start of the old one, all live.
    let layout = ClusteredLayout::current(&table).unwrap().unwrap();
    let files = &layout.partitions[0].files;
    for pair in files.windows(2) {
        assert!(pair[0].last < pair[1].first, "disjoint: {pair:?}");
    }
    for f in files {
        assert!(
            !firsts.iter().any(|&c| f.first < c && c <= f.last),
            "{} crosses a range start",
            f.path
        );
    }
    let listed: BTreeSet<String> = files.iter().map(|f| f.path.clone()).collect();
    assert!(listed.is_subset(&after));

    // Nothing new: nothing to do.
    let (table2, report) = incremental(&table);
    assert_eq!(report.rewritten_data_files_count, 0, "{report}");
    assert_eq!(live_file_paths(&table2), after);
}

/// Deltas of one run are a generation: a later run that merges fewer bytes leaves them alone
/// (size-tiered), and merges them again once the generation cap would be passed.
#[test]
fn earlier_deltas_stay_until_the_generations_pile_up() {
    let dir = tempfile::tempdir().unwrap();
    let table = clustered_table(dir.path(), 16_000, 16);
    let run = |table: &Table, generations: &str| {
        table
            .rewrite()
            .hilbert("geom", 16)
            .option("incremental", "true")
            .option("incremental.max-delta-generations", generations)
            .execute()
            .unwrap()
    };
    let deltas = |table: &Table| -> Vec<(String, u64)> {
        let layout = ClusteredLayout::current(table).unwrap().unwrap();
        let mut d: Vec<(String, u64)> = layout.partitions[0]
            .deltas
            .iter()
            .map(|f| (f.path.clone(), f.generation))
            .collect();
        d.sort();
        d
    };
    // The files an append added (cluster on write cuts it at the ranges).
    let append = |table: &Table, ids: std::ops::Range<i64>, seed: u64| {
        let before = live_file_paths(table).len();
        let (table, _) = table.append(&[points_batch(ids, uniform(seed))]).unwrap();
        let added = live_file_paths(&table).len() - before;
        (table, added as u64)
    };
    // 10% new rows everywhere: no range grows to half its rows, all become deltas.
    let (table, added) = append(&table, 100_000..101_600, 11);
    let (table, report) = run(&table, "3");
    assert_eq!(
        report.rewritten_data_files_count, added,
        "only the append: {report}"
    );
    let first = deltas(&table);
    assert!(
        !first.is_empty() && first.iter().all(|d| d.1 == 1),
        "{first:?}"
    );

    // A smaller append: merged on its own, the first generation stays as it is.
    let (table, added) = append(&table, 200_000..200_300, 12);
    let before = rows(&table);
    let (table, report) = run(&table, "3");
    assert_eq!(rows(&table), before);
    assert_eq!(report.rewritten_data_files_count, added, "{report}");
    let second = deltas(&table);
    let live = live_file_paths(&table);
    assert!(
        first
            .iter()
            .all(|d| live.contains(&d.0) && second.contains(d))
    );
    assert!(second.iter().any(|d| d.1 == 2), "{second:?}");

    // One generation at most: every earlier delta is merged with the next append.
    let (table, added) = append(&table, 300_000..300_300, 13);
    let before = rows(&table);
    let (table, report) = run(&table, "1");
    assert_eq!(rows(&table), before);
    let third = deltas(&table);
    assert!(third.iter().all(|d| d.1 == 3), "{third:?}");
    assert_eq!(
        report.rewritten_data_files_count,
        added + second.len() as u64,
        "the deltas and the append: {report}"
    );
}

#[test]
fn without_a_layout_the_whole_table_is_clustered_and_one_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let mut table = points_table(sqlite_catalog(dir.path()), "pts");
    for f in 0..3 {
        table = table
            .append(&[points_batch(f * 1_000..(f + 1) * 1_000, uniform(9))])
            .unwrap()
            .0;
    }
    let (table, report) = incremental(&table);
    assert_eq!(report.rewritten_data_files_count, 3, "{report}");
    assert!(ClusteredLayout::current(&table).unwrap().is_some());

    let e = table
        .rewrite()
        .binpack()
        .option("incremental", "true")
        .execute()
        .unwrap_err()
        .to_string();
    assert!(e.contains("incremental") && e.contains("hilbert"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Random appends (uniform or in one region) and incremental runs in any order: after every
    /// step, every window counts what a brute-force filter over the generated points counts.
    #[test]
    fn answers_are_unchanged_by_every_step(
        steps in proptest::collection::vec((0u8..3, 1u64..50, 100i64..1_500), 1..7),
        ratio in prop_oneof![Just("0.1"), Just("0.5"), Just("2")],
        generations in prop_oneof![Just("1"), Just("2"), Just("3")],
        windows in proptest::collection::vec((-180.0f64..150.0, -85.0f64..60.0, 1.0f64..60.0), 4),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut table = clustered_table(dir.path(), 4_000, 8);
        let mut points: Vec<(f64, f64)> = (0..4_000).map(uniform(7)).collect();
        let mut next_id = 10_000;
        for (kind, seed, n) in steps {
            match kind {
                0 | 1 => {
                    let ids = next_id..next_id + n;
                    next_id += n;
                    let batch = if kind == 0 {
                        points.extend(ids.clone().map(uniform(seed)));
                        points_batch(ids, uniform(seed))
                    } else {
                        points.extend(ids.clone().map(in_one_region(seed)));
                        points_batch(ids, in_one_region(seed))
                    };
                    table = table.append(&[batch]).unwrap().0;
                }
                _ => {
                    table = table
                        .rewrite()
                        .hilbert("geom", 16)
                        .option("incremental", "true")
                        .option("incremental.min-new-data-ratio", ratio)
                        .option("incremental.max-delta-generations", generations)
                        .execute()
                        .unwrap()
                        .0;
                    let layout = ClusteredLayout::current(&table).unwrap().unwrap();
                    for pair in layout.partitions[0].files.windows(2) {
                        prop_assert!(pair[0].last < pair[1].first);
                    }
                }
            }
            let total = table.scan().explain().unwrap().rows_returned;
            prop_assert_eq!(total, points.len());
            for &(x, y, size) in &windows {
                let w = BBox::new(x, y, x + size, y + size / 2.0);
                let found = table.scan().with_window("geom", w).explain().unwrap().rows_returned;
                prop_assert_eq!(found, count_inside(&points, w), "window {:?}", w);
            }
        }
    }
}
