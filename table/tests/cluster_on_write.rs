//! Cluster on write: appends to a table that CREATE SPATIAL INDEX clustered are cut at the key
//! ranges the rewrite recorded (a Puffin statistics file of its snapshot), checked against keys
//! computed here from the points with the Hilbert crate, and windows against a brute-force count.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{Array, BinaryArray, RecordBatch};
use common::{count_inside, live_file_paths, points_batch, points_table, sqlite_catalog, uniform};
use geoberg_hilbert::{Bounds, HilbertCurve};
use geoberg_table::{
    BBox, CLUSTER_MIN_FILE_ROWS_PROPERTY, CLUSTER_ON_WRITE_PROPERTY, CLUSTERED_LAYOUT_BLOB,
    ClusteredLayout, Table,
};

/// A table of 8 appended files of 2 000 uniform points, clustered into 16 files.
fn clustered_table(dir: &Path, name: &str) -> Table {
    let mut table = points_table(sqlite_catalog(dir), name);
    for f in 0..8 {
        let batch = points_batch(f * 2_000..(f + 1) * 2_000, uniform(7));
        table = table.append(&[batch]).unwrap().0;
    }
    table
        .rewrite()
        .hilbert("geom", 16)
        .option("target-file-count", "16")
        .execute()
        .unwrap()
        .0
}

/// The points of the rows of one data file.
fn points_of(table: &Table, path: &str) -> Vec<Option<(f64, f64)>> {
    let (batches, _) = table.scan().files([path]).execute().unwrap();
    batches
        .iter()
        .flat_map(|b: &RecordBatch| {
            let geom = b.column(b.schema().index_of("geom").unwrap()).clone();
            let geom = geom.as_any().downcast_ref::<BinaryArray>().unwrap().clone();
            (0..geom.len())
                .map(|r| {
                    geom.is_valid(r).then(|| {
                        let v = geom.value(r);
                        let f = |at: usize| f64::from_le_bytes(v[at..at + 8].try_into().unwrap());
                        (f(5), f(13))
                    })
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn appends_to_a_clustered_table_are_cut_at_its_key_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let table = clustered_table(dir.path(), "pts");

    // The rewrite recorded its layout as a statistics file of its snapshot.
    let snapshot = table.metadata().current_snapshot_id().unwrap();
    let stats = table.metadata().statistics_for_snapshot(snapshot).unwrap();
    // The Puffin footer names the blob (the table metadata lists none: pyiceberg 0.12 accepts
    // only the spec's two blob types there).
    let bytes = std::fs::read(stats.statistics_path.trim_start_matches("file://")).unwrap();
    let reader = geoberg_puffin::PuffinReader::open(std::io::Cursor::new(bytes), "stats").unwrap();
    let types: Vec<&str> = reader
        .metadata()
        .blobs
        .iter()
        .map(|b| b.blob_type.as_str())
        .collect();
    assert_eq!(types, [CLUSTERED_LAYOUT_BLOB]);
    assert!(stats.blob_metadata.is_empty());
    let layout = ClusteredLayout::current(&table).unwrap().unwrap();
    assert_eq!((layout.column.as_str(), layout.precision), ("geom", 16));
    let [part] = &layout.partitions[..] else {
        panic!("one partition: {layout:?}");
    };
    let clustered = live_file_paths(&table);
    let recorded: BTreeSet<String> = part.files.iter().map(|f| f.path.clone()).collect();
    assert_eq!(recorded, clustered, "every clustered file is in the layout");
    for pair in part.files.windows(2) {
        assert!(pair[0].last < pair[1].first, "disjoint ordered ranges");
    }

    // One range per file: the smallest group.
    let table = table
        .set_properties([(CLUSTER_MIN_FILE_ROWS_PROPERTY, "1")])
        .unwrap();
    let appended = points_batch(100_000..104_000, uniform(99));
    let (table, _) = table.append(&[appended]).unwrap();
    let new: Vec<String> = live_file_paths(&table)
        .difference(&clustered)
        .cloned()
        .collect();
    assert!(new.len() > 1, "the append was cut: {new:?}");

    // Oracle: keys computed here from the points, on the curve the layout names.
    let curve = HilbertCurve::new(16, Bounds::new(-180.0, -90.0, 180.0, 90.0).unwrap()).unwrap();
    let firsts: Vec<u64> = part.files.iter().map(|f| f.first).collect();
    let range_of = |key: u64| firsts.partition_point(|&f| f <= key).saturating_sub(1);
    let mut rows = 0;
    for path in &new {
        let ranges: BTreeSet<usize> = points_of(&table, path)
            .into_iter()
            .map(|p| {
                let (x, y) = p.expect("every appended row has a point");
                range_of(curve.encode(x, y).unwrap())
            })
            .collect();
        assert_eq!(ranges.len(), 1, "{path} holds the rows of one range");
        rows += table.scan().files([path]).explain().unwrap().rows_returned;
    }
    assert_eq!(rows, 4_000, "no row lost or doubled");

    // A window reads few of the new files, and finds every row a brute force finds.
    let window = BBox::new(10.0, 10.0, 46.0, 27.0);
    let mut points: Vec<(f64, f64)> = (0..16_000).map(uniform(7)).collect();
    points.extend((100_000..104_000).map(uniform(99)));
    let explain = table.scan().with_window("geom", window).explain().unwrap();
    assert_eq!(explain.rows_returned, count_inside(&points, window));
    assert!(
        explain.files_read <= 4,
        "a 1% window reads about one clustered and one appended file: {explain}"
    );
}

#[test]
fn small_groups_merge_and_the_property_turns_it_off() {
    let dir = tempfile::tempdir().unwrap();
    let table = clustered_table(dir.path(), "pts");
    let clustered = live_file_paths(&table);

    // 4 000 rows over 16 ranges at the default 1 000 rows per file: neighbouring ranges merge.
    let (table, _) = table
        .append(&[points_batch(100_000..104_000, uniform(5))])
        .unwrap();
    let new: BTreeSet<String> = live_file_paths(&table)
        .difference(&clustered)
        .cloned()
        .collect();
    assert!((2..=4).contains(&new.len()), "{new:?}");
    for path in &new {
        let rows = table.scan().files([path]).explain().unwrap().rows_returned;
        assert!(rows >= 1_000, "{path}: {rows} rows");
    }

    // Turned off: one file per append, as before.
    let table = table
        .set_properties([(CLUSTER_ON_WRITE_PROPERTY, "false")])
        .unwrap();
    let before = live_file_paths(&table);
    let (table, _) = table
        .append(&[points_batch(200_000..204_000, uniform(6))])
        .unwrap();
    assert_eq!(live_file_paths(&table).len(), before.len() + 1);

    let bad = table.set_properties([(CLUSTER_ON_WRITE_PROPERTY, "sometimes")]);
    let e = bad.unwrap_err().to_string();
    assert!(
        e.contains(CLUSTER_ON_WRITE_PROPERTY) && e.contains("true or false"),
        "{e}"
    );
}

#[test]
fn rows_without_a_location_go_apart_and_a_binpack_ends_the_layout() {
    let dir = tempfile::tempdir().unwrap();
    let table = clustered_table(dir.path(), "pts");
    let clustered = live_file_paths(&table);
    let table = table
        .set_properties([(CLUSTER_MIN_FILE_ROWS_PROPERTY, "1")])
        .unwrap();

    // Half the rows have no geometry: they share one file of their own, with no box.
    let batch = points_batch(100_000..102_000, uniform(3));
    let geom = batch
        .column(2)
        .as_any()
        .downcast_ref::<BinaryArray>()
        .unwrap();
    let with_nulls: BinaryArray = (0..geom.len())
        .map(|r| (r % 2 == 0).then(|| geom.value(r)))
        .collect();
    let mut columns = batch.columns().to_vec();
    columns[2] = Arc::new(with_nulls);
    let batch = RecordBatch::try_new(batch.schema(), columns).unwrap();
    let (table, _) = table.append(&[batch]).unwrap();
    let new: Vec<String> = live_file_paths(&table)
        .difference(&clustered)
        .cloned()
        .collect();
    let null_files: Vec<&String> = new
        .iter()
        .filter(|p| points_of(&table, p).iter().all(Option::is_none))
        .collect();
    assert_eq!(null_files.len(), 1, "{new:?}");
    assert!(
        new.iter()
            .filter(|p| !null_files.contains(p))
            .all(|p| points_of(&table, p).iter().all(Option::is_some)),
        "located rows never share a file with unlocated ones"
    );

    // A bin-pack replaces the clustered files without recording ranges: appends stop cutting.
    let (table, _) = table.rewrite().binpack().execute().unwrap();
    assert!(ClusteredLayout::current(&table).unwrap().is_none());
    let before = live_file_paths(&table).len();
    let (table, _) = table
        .append(&[points_batch(300_000..302_000, uniform(4))])
        .unwrap();
    assert_eq!(live_file_paths(&table).len(), before + 1);

    // Clustering again records a new layout, which the next append follows.
    let (table, _) = table.rewrite().hilbert("geom", 16).execute().unwrap();
    assert!(ClusteredLayout::current(&table).unwrap().is_some());
}

#[test]
fn a_corrupt_layout_names_the_file_and_the_fixes_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let table = clustered_table(dir.path(), "pts");
    let snapshot = table.metadata().current_snapshot_id().unwrap();
    let path = table
        .metadata()
        .statistics_for_snapshot(snapshot)
        .unwrap()
        .statistics_path
        .clone();
    std::fs::write(path.trim_start_matches("file://"), b"not a puffin file").unwrap();

    let rows_before = table.scan().explain().unwrap().rows_returned;
    let e = table
        .append(&[points_batch(100_000..100_010, uniform(1))])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&path)
            && e.contains("CREATE SPATIAL INDEX")
            && e.contains(CLUSTER_ON_WRITE_PROPERTY),
        "{e}"
    );
    assert_eq!(table.scan().explain().unwrap().rows_returned, rows_before);

    // Either fix works: appending without the layout, or clustering again.
    let off = table
        .set_properties([(CLUSTER_ON_WRITE_PROPERTY, "false")])
        .unwrap();
    let (off, _) = off
        .append(&[points_batch(100_000..100_010, uniform(1))])
        .unwrap();
    let (again, _) = off.rewrite().hilbert("geom", 16).execute().unwrap();
    assert!(ClusteredLayout::current(&again).unwrap().is_some());
    assert_eq!(
        again.scan().explain().unwrap().rows_returned,
        rows_before + 10
    );
}
