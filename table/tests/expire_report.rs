//! `Table::expire_snapshots` reports Iceberg's result columns (deleted data, position delete,
//! equality delete, manifest, manifest list and statistics file counts), checked against what
//! disappeared from storage, classified by the file names Iceberg writers use.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use common::*;
use geoberg_table::{Column, CreateTable, DataType, RowChangeMode, RowFilter, Table, TableIdent};
use iceberg::spec::{StatisticsFile, TableMetadataBuilder};

fn future() -> SystemTime {
    SystemTime::now() + Duration::from_secs(3600)
}

fn files(table: &Table) -> BTreeSet<String> {
    table
        .storage()
        .list(table.metadata().location())
        .unwrap()
        .into_iter()
        .map(|f| f.location)
        .collect()
}

fn filter(condition: &str) -> RowFilter {
    RowFilter::from_predicate(geoberg_sql::parse_condition(condition).unwrap())
}

/// Counts by file name: `.parquet` under `data/` (data), `.puffin` under `data/` (deletion
/// vectors), `snap-*.avro` (manifest lists), other `.avro` under `metadata/` (manifests),
/// `.stats` (the statistics file this test writes) and `.puffin` under `metadata/` (file-bounds
/// index files, which expiry counts as statistics files).
#[derive(Debug, Default, PartialEq, Eq)]
struct ByName {
    data: u64,
    deletion_vectors: u64,
    manifests: u64,
    manifest_lists: u64,
    statistics: u64,
}

fn classify(paths: &BTreeSet<String>) -> ByName {
    let mut out = ByName::default();
    for p in paths {
        let name = p.rsplit('/').next().unwrap();
        if p.contains("/data/") && name.ends_with(".parquet") {
            out.data += 1;
        } else if p.contains("/data/") && name.ends_with(".puffin") {
            out.deletion_vectors += 1;
        } else if name.starts_with("snap-") && name.ends_with(".avro") {
            out.manifest_lists += 1;
        } else if p.contains("/metadata/") && name.ends_with(".avro") {
            out.manifests += 1;
        } else if name.ends_with(".stats")
            || (p.contains("/metadata/") && name.ends_with(".puffin"))
        {
            out.statistics += 1;
        } else {
            panic!("unexpected deleted file {p}");
        }
    }
    out
}

#[test]
fn counts_match_the_files_that_disappeared() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let mut t = points_table(Arc::clone(&catalog), "t");
    for a in 0..3 {
        t = t
            .append(&[points_batch(a * 10..a * 10 + 10, |i| (i as f64, 0.0))])
            .unwrap()
            .0;
    }
    // A deletion vector, then a copy-on-write delete that rewrites the file it applies to:
    // the vector and the old data file are referenced by expired snapshots only.
    t = t
        .delete(filter("id = 1"))
        .mode(RowChangeMode::MergeOnRead)
        .execute()
        .unwrap()
        .0;
    t = t
        .delete(filter("id = 2"))
        .mode(RowChangeMode::CopyOnWrite)
        .execute()
        .unwrap()
        .0;
    let rows = ids_of(&t.scan().execute().unwrap().0);

    let before = files(&t);
    let (t, report) = t.expire_snapshots(future(), 1).unwrap();
    let after = files(&t);
    let gone: BTreeSet<String> = before.difference(&after).cloned().collect();

    assert_eq!(report.expired_snapshots.len(), 4, "{report:?}");
    assert!(report.undeleted_files.is_empty(), "{report:?}");
    assert_eq!(
        report
            .deleted_files
            .iter()
            .cloned()
            .collect::<BTreeSet<_>>(),
        gone
    );
    let by_name = classify(&gone);
    // The rewritten data file, the vector, the four expired manifest lists.
    assert_eq!(by_name.data, 1, "{gone:?}");
    assert_eq!(by_name.deletion_vectors, 1, "{gone:?}");
    assert_eq!(by_name.manifest_lists, 4, "{gone:?}");
    // The delete manifest of the vector, and the manifest the rewrite replaced.
    assert!(by_name.manifests >= 2, "{gone:?}");
    assert_eq!(
        (
            report.deleted_data_files_count,
            report.deleted_position_delete_files_count,
            report.deleted_equality_delete_files_count,
            report.deleted_manifest_files_count,
            report.deleted_manifest_lists_count,
            report.deleted_statistics_files_count,
        ),
        (
            by_name.data,
            by_name.deletion_vectors,
            0,
            by_name.manifests,
            by_name.manifest_lists,
            // The expired snapshots' file-bounds index files.
            by_name.statistics
        )
    );
    assert!(by_name.statistics >= 4, "{gone:?}");
    assert_eq!(ids_of(&t.scan().execute().unwrap().0), rows);
    assert!(t.orphan_files(future()).unwrap().is_empty());

    // Nothing left to expire: an empty report.
    let (_, again) = t.expire_snapshots(future(), 1).unwrap();
    assert_eq!(again, Default::default());
}

/// A statistics file of an expired snapshot is dropped from the metadata and deleted; one of a
/// kept snapshot stays. The table has no geometry column, so its metadata is plain Iceberg JSON
/// that this test can write itself.
#[test]
fn statistics_files_of_expired_snapshots_are_deleted_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let ident = TableIdent::new("test_db", "s").unwrap();
    let mut t = CreateTable::new([Column::new("id", DataType::Long).required()])
        .create(Arc::clone(&catalog), &ident)
        .unwrap();
    let schema = Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "id",
        arrow_schema::DataType::Int64,
        false,
    )]));
    for a in 0..2i64 {
        let batch = arrow_array::RecordBatch::try_new(
            Arc::clone(&schema),
            vec![Arc::new(arrow_array::Int64Array::from(vec![a]))],
        )
        .unwrap();
        t = t.append(&[batch]).unwrap().0;
    }
    let ids: Vec<i64> = {
        let mut s: Vec<_> = t
            .metadata()
            .snapshots()
            .map(|s| (s.sequence_number(), s.snapshot_id()))
            .collect();
        s.sort();
        s.into_iter().map(|(_, id)| id).collect()
    };
    let location = t.metadata().location().to_string();
    let mut builder = TableMetadataBuilder::new_from_metadata(
        t.metadata().clone(),
        Some(t.metadata_location().to_string()),
    );
    for (i, id) in ids.iter().enumerate() {
        let path = format!("{location}/metadata/{id}.stats");
        t.storage().write_new(&path, vec![i as u8; 8]).unwrap();
        builder = builder.set_statistics(StatisticsFile {
            snapshot_id: *id,
            statistics_path: path,
            file_size_in_bytes: 8,
            file_footer_size_in_bytes: 4,
            key_metadata: None,
            blob_metadata: Vec::new(),
        });
    }
    let metadata = builder.build().unwrap().metadata;
    let next = format!("{location}/metadata/99999-stats.metadata.json");
    t.storage()
        .write_new(&next, serde_json::to_vec(&metadata).unwrap())
        .unwrap();
    catalog
        .swap_metadata_location(&ident, t.metadata_location(), &next)
        .unwrap();
    let t = Table::load(Arc::clone(&catalog), &ident).unwrap();
    assert_eq!(t.metadata().statistics_iter().count(), 2);

    let before = files(&t);
    let (t, report) = t.expire_snapshots(future(), 1).unwrap();
    let gone: BTreeSet<String> = before.difference(&files(&t)).cloned().collect();
    assert_eq!(report.expired_snapshots, vec![ids[0]]);
    let by_name = classify(&gone);
    assert_eq!(by_name.statistics, 1, "{gone:?}");
    assert_eq!(report.deleted_statistics_files_count, 1);
    assert_eq!(report.deleted_manifest_lists_count, by_name.manifest_lists);
    assert_eq!(report.deleted_manifest_lists_count, 1);
    let kept: Vec<i64> = t
        .metadata()
        .statistics_iter()
        .map(|s| s.snapshot_id)
        .collect();
    assert_eq!(kept, vec![ids[1]]);
    assert!(t.orphan_files(future()).unwrap().is_empty());
}
