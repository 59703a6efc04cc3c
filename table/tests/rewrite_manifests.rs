//! `Table::rewrite_manifests`: the rows a scan returns, their row lineage and the snapshot
//! totals are those of the appended rows before and after; the manifests shrink to what the
//! target size asks for, clustered by partition; a lost race regroups the winner's manifests.

mod common;

use std::sync::Arc;

use common::*;
use geoberg_table::{
    Column, CreateTable, DataType, PartitionField, RowChangeMode, RowFilter, Table, TableIdent,
};

fn filter(condition: &str) -> RowFilter {
    RowFilter::from_predicate(geoberg_sql::parse_condition(condition).unwrap())
}

/// `appends` appends of 5 rows each, spread over the three partitions; the rows written.
fn many_appends(mut t: Table, appends: i64) -> (Table, Vec<Row>) {
    let mut written = Vec::new();
    for a in 0..appends {
        let batch = with_partition_data(points_batch(a * 5..a * 5 + 5, uniform(7)));
        written.extend(rows_of(&batch));
        t = t.append(&[batch]).unwrap().0;
    }
    written.sort();
    (t, written)
}

/// The rows of a batch, as [`rows`] renders them.
fn rows_of(b: &arrow_array::RecordBatch) -> Vec<Row> {
    use arrow_array::{Array, BinaryArray, Int64Array, StringArray};
    let id = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    let data = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
    let geom = b.column(2).as_any().downcast_ref::<BinaryArray>().unwrap();
    (0..b.num_rows())
        .map(|r| {
            (
                id.value(r),
                data.is_valid(r).then(|| data.value(r).to_string()),
                geom.is_valid(r).then(|| geom.value(r).to_vec()),
            )
        })
        .collect()
}

fn summary(t: &Table, key: &str) -> Option<String> {
    t.metadata()
        .current_snapshot()?
        .summary()
        .additional_properties
        .get(key)
        .cloned()
}

/// (`_row_id`, id) of every row, sorted.
fn lineage(t: &Table) -> Vec<(i64, i64)> {
    use arrow_array::Int64Array;
    let (batches, _) = t.scan().with_row_lineage(true).execute().unwrap();
    let mut out = Vec::new();
    for b in &batches {
        let col = |n: &str| {
            b.column(b.schema().index_of(n).unwrap())
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .clone()
        };
        let (row_id, id) = (col("_row_id"), col("id"));
        out.extend((0..b.num_rows()).map(|r| (row_id.value(r), id.value(r))));
    }
    out.sort_unstable();
    out
}

/// Partition values of the live data files in manifest order (the order `data_files` lists
/// them: manifest by manifest, entry by entry).
fn partitions_in_manifest_order(t: &Table) -> Vec<String> {
    t.data_files()
        .unwrap()
        .iter()
        .map(|f| format!("{:?}", f.partition()))
        .collect()
}

/// Each value occupies one contiguous run.
fn is_clustered(values: &[String]) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut last: Option<&String> = None;
    for v in values {
        if last != Some(v) && !seen.insert(v) {
            return false;
        }
        last = Some(v);
    }
    true
}

#[test]
fn regroups_into_one_manifest_per_content_and_keeps_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = partitioned_points_table(Arc::clone(&catalog), "t", &[]);
    let (t, mut written) = many_appends(t, 40);
    // A deletion vector: one delete manifest next to the 40 data manifests.
    let (t, _) = t
        .delete(filter("id = 3"))
        .mode(RowChangeMode::MergeOnRead)
        .execute()
        .unwrap();
    written.retain(|r| r.0 != 3);
    assert_eq!(rows(&t), written);
    let lineage_before = lineage(&t);
    let records_before = summary(&t, "total-records");
    let files_before = summary(&t, "total-data-files");

    let (t, report) = t.rewrite_manifests().execute().unwrap();
    assert_eq!(report.manifests_before, 41, "{report:?}");
    // The 40 data manifests become one; the delete manifest, alone in its group and under the
    // target size, is kept as it is (each content is rewritten on its own).
    assert_eq!(report.rewritten_manifests_count, 40, "{report:?}");
    assert_eq!(report.added_manifests_count, 1, "{report:?}");
    assert_eq!(report.manifests_after, 2, "{report:?}");
    let snapshot = t.metadata().current_snapshot().unwrap();
    assert_eq!(Some(snapshot.snapshot_id()), report.snapshot_id);
    assert_eq!(
        snapshot.summary().operation,
        iceberg::spec::Operation::Replace
    );
    assert_eq!(summary(&t, "manifests-replaced").as_deref(), Some("40"));
    assert_eq!(summary(&t, "manifests-created").as_deref(), Some("1"));
    assert_eq!(summary(&t, "manifests-kept").as_deref(), Some("1"));
    assert_eq!(summary(&t, "total-records"), records_before);
    assert_eq!(summary(&t, "total-data-files"), files_before);

    // The oracle: the rows appended, less the deleted one; and the same _row_id per row.
    assert_eq!(rows(&t), written);
    assert_eq!(lineage(&t), lineage_before);
    let reloaded = Table::load(catalog, &TableIdent::new("test_db", "t").unwrap()).unwrap();
    assert_eq!(rows(&reloaded), written);
    assert!(is_clustered(&partitions_in_manifest_order(&reloaded)));

    // Already one manifest per content: nothing to do, nothing committed.
    let (again, report) = reloaded.rewrite_manifests().execute().unwrap();
    assert_eq!(report.snapshot_id, None, "{report:?}");
    assert_eq!(report.rewritten_manifests_count, 0);
    assert_eq!(
        again.metadata().current_snapshot_id(),
        reloaded.metadata().current_snapshot_id()
    );
}

#[test]
fn a_small_target_cuts_partition_clustered_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = partitioned_points_table(Arc::clone(&catalog), "t", &[]);
    let (t, written) = many_appends(t, 30);
    // 30 appends x 3 partitions = 90 data files, one manifest per append.
    assert_eq!(t.data_files().unwrap().len(), 90);
    assert!(!is_clustered(&partitions_in_manifest_order(&t)));
    let bytes_per_manifest = {
        let f = t
            .storage()
            .list(&format!("{}/metadata", t.metadata().location()))
            .unwrap();
        let manifests: Vec<_> = f
            .iter()
            .filter(|f| f.location.ends_with(".avro") && !f.location.contains("/snap-"))
            .collect();
        manifests.iter().map(|f| f.size).sum::<u64>() / manifests.len() as u64
    };
    // Three of the old manifests' bytes per new manifest: 30 / 3 = 10 manifests.
    let (t, report) = t
        .rewrite_manifests()
        .target_size_bytes(bytes_per_manifest * 3)
        .execute()
        .unwrap();
    assert_eq!(report.rewritten_manifests_count, 30, "{report:?}");
    assert!(
        (9..=11).contains(&report.added_manifests_count),
        "{report:?}"
    );
    assert_eq!(report.manifests_after, report.added_manifests_count);
    assert_eq!(rows(&t), written);
    assert!(is_clustered(&partitions_in_manifest_order(&t)));
}

#[test]
fn a_lost_race_regroups_the_winners_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = partitioned_points_table(Arc::clone(&catalog), "t", &[]);
    let (stale, mut written) = many_appends(t, 10);
    // Another writer appends after `stale` was loaded.
    let winner = Table::load(
        Arc::clone(&catalog),
        &TableIdent::new("test_db", "t").unwrap(),
    )
    .unwrap();
    let batch = with_partition_data(points_batch(1000..1006, uniform(3)));
    written.extend(rows_of(&batch));
    written.sort();
    winner.append(&[batch]).unwrap();

    let (t, report) = stale.rewrite_manifests().execute().unwrap();
    // The retry re-planned on the winner's 11 manifests.
    assert_eq!(report.rewritten_manifests_count, 11, "{report:?}");
    assert_eq!(report.manifests_after, 1, "{report:?}");
    assert_eq!(rows(&t), written);
    let reloaded = Table::load(catalog, &TableIdent::new("test_db", "t").unwrap()).unwrap();
    assert_eq!(rows(&reloaded), written);
}

#[test]
fn format_version_2_keeps_position_deletes_and_sequence_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    // Format-version 2 takes no declared CRS: the geometry column is a no-CRS one.
    let t = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
        Column::new("geom", DataType::LEGACY_GEOMETRY),
    ])
    .partition_by(PartitionField::identity("data"))
    .allow_undeclared_crs()
    .create(
        Arc::clone(&catalog),
        &TableIdent::new("test_db", "t").unwrap(),
    )
    .unwrap();
    assert_eq!(t.metadata().format_version() as u8, 2);
    let (t, mut written) = many_appends(t, 6);
    // Two delete manifests (v2 position delete files), then more data.
    let (t, _) = t
        .delete(filter("id = 8"))
        .mode(RowChangeMode::MergeOnRead)
        .execute()
        .unwrap();
    written.retain(|r| r.0 != 8);
    let (t, _) = t
        .delete(filter("id = 7"))
        .mode(RowChangeMode::MergeOnRead)
        .execute()
        .unwrap();
    written.retain(|r| r.0 != 7);
    // Appended after the delete: its data sequence number is higher than the delete's, so
    // the delete must not apply to it even if the ids collided.
    let batch = with_partition_data(points_batch(7_000..7_003, uniform(1)));
    written.extend(rows_of(&batch));
    written.sort();
    // A column without a CRS keeps each value's SRID in the value: the points, labelled 4326
    // by `points_batch`, are stored as EWKB carrying it.
    for r in &mut written {
        r.2 =
            r.2.as_ref()
                .map(|g| geoberg_crs::ewkb_with_srid(g, 4326).unwrap());
    }
    let (t, _) = t.append(&[batch]).unwrap();
    assert_eq!(rows(&t), written);

    let before = t.manifest_count().unwrap();
    let (t, report) = t.rewrite_manifests().execute().unwrap();
    // 7 data manifests and 2 delete manifests become one of each.
    assert_eq!(before, 9, "{report:?}");
    assert_eq!(report.rewritten_manifests_count, 9, "{report:?}");
    assert_eq!(report.manifests_after, 2, "{report:?}");
    assert_eq!(rows(&t), written);
}

#[test]
fn manifest_bloat_warns_past_the_threshold_and_names_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = partitioned_points_table(Arc::clone(&catalog), "t", &[]);
    assert_eq!(t.manifest_count().unwrap(), 0);
    let (t, _) = many_appends(t, 4);
    // The oracle: one manifest per append, counted from the appends made.
    assert_eq!(t.manifest_count().unwrap(), 4);
    assert_eq!(t.manifest_bloat_over(4).unwrap(), None);
    let bloat = t.manifest_bloat_over(3).unwrap().unwrap();
    assert_eq!((bloat.manifests, bloat.threshold), (4, 3));
    let message = bloat.to_string();
    assert!(
        message.contains("rewrite_manifests(table => 'test_db.t')")
            && message.contains("4 manifests"),
        "{message}"
    );
    assert_eq!(t.manifest_bloat().unwrap(), None);
    let (t, _) = t.rewrite_manifests().execute().unwrap();
    assert_eq!(t.manifest_bloat_over(3).unwrap(), None);
}

#[test]
fn deletion_vector_manifests_are_regrouped_apart_from_data() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = partitioned_points_table(Arc::clone(&catalog), "t", &[]);
    let (mut t, mut written) = many_appends(t, 8);
    // Three deletes on rows of three different appends: three delete manifests.
    for id in [3, 17, 31] {
        t = t
            .delete(filter(&format!("id = {id}")))
            .mode(RowChangeMode::MergeOnRead)
            .execute()
            .unwrap()
            .0;
        written.retain(|r| r.0 != id);
    }
    assert_eq!(t.manifest_count().unwrap(), 11);
    let lineage_before = lineage(&t);
    let (t, report) = t.rewrite_manifests().execute().unwrap();
    assert_eq!(report.rewritten_manifests_count, 11, "{report:?}");
    assert_eq!(report.added_manifests_count, 2, "{report:?}");
    assert_eq!(rows(&t), written);
    assert_eq!(lineage(&t), lineage_before);
    // The regrouped deletion vectors still apply after a reload, and a later delete on a
    // file that already has one (ids 0 and 3 share a file) merges with it.
    let t = Table::load(catalog, &TableIdent::new("test_db", "t").unwrap()).unwrap();
    let (t, _) = t
        .delete(filter("id = 0"))
        .mode(RowChangeMode::MergeOnRead)
        .execute()
        .unwrap();
    written.retain(|r| r.0 != 0);
    assert_eq!(rows(&t), written);
}
