//! `ALTER TABLE ... SET / UNSET TBLPROPERTIES` through `Table::set_properties` and
//! `Table::unset_properties`: a new metadata version that the catalog serves, no new snapshot,
//! invalid values refused with nothing changed, Spark's rule for missing keys, lost races
//! re-applied, and a changed `write.delete.mode` changing what a DELETE writes.

mod common;

use std::sync::Arc;

use common::*;
use geoberg_table::{
    Catalog, Column, CreateTable, DataType, Error, RowChangeMode, RowFilter, Table, TableIdent,
};

fn ident(name: &str) -> TableIdent {
    TableIdent::new("test_db", name).unwrap()
}

fn reload(catalog: &Arc<dyn Catalog>, name: &str) -> Table {
    Table::load(Arc::clone(catalog), &ident(name)).unwrap()
}

fn property<'a>(table: &'a Table, key: &str) -> Option<&'a str> {
    table.metadata().properties().get(key).map(String::as_str)
}

/// The table as the catalog points to it: the pointer, and the properties there.
fn as_stored(catalog: &Arc<dyn Catalog>, name: &str) -> (String, Vec<(String, String)>) {
    let t = reload(catalog, name);
    let mut props: Vec<(String, String)> = t
        .metadata()
        .properties()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    props.sort();
    (t.metadata_location().to_string(), props)
}

#[test]
fn set_is_visible_after_reload_without_a_new_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = points_table(Arc::clone(&catalog), "t");
    let t = t.append(&[points_batch(0..10, uniform(1))]).unwrap().0;
    let snapshot = t.metadata().current_snapshot_id();
    let snapshots = t.metadata().snapshots().count();
    let before = t.metadata_location().to_string();

    let changed = t
        .set_properties([
            ("write.metadata.metrics.column.id", "full"),
            ("write.metadata.metrics.column.geom", "none"),
            ("commit.retry.num-retries", "7"),
            ("owner", "geo team"),
        ])
        .unwrap();
    assert_ne!(changed.metadata_location(), before);
    assert_eq!(changed.metadata().current_snapshot_id(), snapshot);
    assert_eq!(changed.metadata().snapshots().count(), snapshots);

    // SHOW TBLPROPERTIES reads the metadata's properties: a fresh load through the catalog.
    let loaded = reload(&catalog, "t");
    assert_eq!(loaded.metadata_location(), changed.metadata_location());
    assert_eq!(property(&loaded, "owner"), Some("geo team"));
    assert_eq!(property(&loaded, "commit.retry.num-retries"), Some("7"));
    assert_eq!(loaded.properties().unwrap().commit_retry.num_retries, 7);
    assert_eq!(loaded.metadata().current_snapshot_id(), snapshot);
    // The previous version is in the metadata log.
    assert!(
        loaded
            .metadata()
            .metadata_log()
            .iter()
            .any(|l| l.metadata_file == before)
    );
    // The rows are unchanged.
    assert_eq!(
        ids_of(&loaded.scan().execute().unwrap().0),
        (0..10).collect::<Vec<_>>()
    );

    // Setting a value again replaces it; setting what is there commits nothing.
    let again = loaded.set_properties([("owner", "ops")]).unwrap();
    assert_eq!(property(&reload(&catalog, "t"), "owner"), Some("ops"));
    let same = again.set_properties([("owner", "ops")]).unwrap();
    assert_eq!(same.metadata_location(), again.metadata_location());
}

#[test]
fn unset_removes_and_a_missing_key_needs_if_exists() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = points_table(Arc::clone(&catalog), "t")
        .set_properties([("a", "1"), ("b", "2")])
        .unwrap();

    let t = t.unset_properties(["a"], false).unwrap();
    let loaded = reload(&catalog, "t");
    assert_eq!(property(&loaded, "a"), None);
    assert_eq!(property(&loaded, "b"), Some("2"));

    // Spark refuses to unset a key the table does not have, naming it.
    let stored = as_stored(&catalog, "t");
    let e = t.unset_properties(["b", "nope"], false).unwrap_err();
    match &e {
        Error::NoSuchProperty { key, available, .. } => {
            assert_eq!(key, "nope");
            assert!(available.contains('b'), "{available}");
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("IF EXISTS"), "{e}");
    assert_eq!(as_stored(&catalog, "t"), stored, "nothing changed");

    // IF EXISTS skips it, and removes the rest.
    let t = t.unset_properties(["b", "nope"], true).unwrap();
    assert_eq!(property(&reload(&catalog, "t"), "b"), None);
    // Nothing left to remove: nothing committed.
    let same = t.unset_properties(["b", "nope"], true).unwrap();
    assert_eq!(same.metadata_location(), t.metadata_location());
}

#[test]
fn invalid_values_are_refused_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = points_table(Arc::clone(&catalog), "t")
        .append(&[points_batch(0..4, uniform(2))])
        .unwrap()
        .0;
    let stored = as_stored(&catalog, "t");
    let cases: &[(&str, &str, &str)] = &[
        (
            "write.delete.mode",
            "merge-on-write",
            "copy-on-write or merge-on-read",
        ),
        (
            "write.update.mode",
            "fast",
            "copy-on-write or merge-on-read",
        ),
        ("commit.retry.num-retries", "-1", "retry count"),
        ("commit.retry.min-wait-ms", "soon", "milliseconds"),
        ("write.target-file-size-bytes", "0", "positive byte count"),
        (
            "geoberg.parquet.row-group-rows",
            "many",
            "positive row count",
        ),
        ("write.metadata.metrics.default", "truncate(0)", "truncate"),
        ("write.metadata.metrics.column.id", "most", "id"),
        (
            "write.metadata.metrics.column.nosuch",
            "full",
            "has no column \"nosuch\"",
        ),
        ("format-version", "2", "can only go up"),
        ("format-version", "four", "expected 1, 2 or 3"),
        ("uuid", "x", "reserved"),
        ("current-snapshot-id", "1", "reserved"),
        (
            "geoberg.legacy-geometry-field-ids",
            "3",
            "written by geoberg",
        ),
    ];
    for (key, value, fix) in cases {
        let e = t
            .set_properties([("owner", "x"), (*key, *value)])
            .unwrap_err();
        let message = e.to_string();
        assert!(
            matches!(e, Error::InvalidProperty { .. }),
            "{key}={value}: {e:?}"
        );
        assert!(
            message.contains(key) && message.contains(value) && message.contains(fix),
            "{key}={value}: {message}\n  expected to contain: {fix}"
        );
        assert_eq!(
            as_stored(&catalog, "t"),
            stored,
            "{key}={value} changed the table"
        );
    }
    for key in [
        "format-version",
        "uuid",
        "geoberg.legacy-geometry-field-ids",
    ] {
        let e = t.unset_properties([key], true).unwrap_err();
        assert!(matches!(e, Error::InvalidProperty { .. }), "{key}: {e:?}");
        assert!(e.to_string().contains("cannot be unset"), "{e}");
    }
    assert_eq!(as_stored(&catalog, "t"), stored);

    // The table's own format version may be restated; it is not stored as a property.
    let same = t.set_properties([("format-version", "3")]).unwrap();
    assert_eq!(same.metadata_location(), t.metadata_location());
    assert_eq!(property(&same, "format-version"), None);
}

#[test]
fn raising_the_format_version_is_refused_with_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("data", DataType::String),
    ])
    .format_version(2)
    .create(Arc::clone(&catalog), &ident("v2"))
    .unwrap();
    let stored = as_stored(&catalog, "v2");
    let e = t.set_properties([("format-version", "3")]).unwrap_err();
    let message = e.to_string();
    assert!(matches!(e, Error::Unsupported { .. }), "{e:?}");
    assert!(
        message.contains("from 2 to 3") && message.contains("create a new table"),
        "{message}"
    );
    assert_eq!(as_stored(&catalog, "v2"), stored);
    // Restating 2 is fine, lowering to 1 is not.
    assert!(t.set_properties([("format-version", "2")]).is_ok());
    let e = t.set_properties([("format-version", "1")]).unwrap_err();
    assert!(e.to_string().contains("can only go up"), "{e}");
}

#[test]
fn a_stale_handle_re_applies_its_change_on_the_newer_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let base = points_table(Arc::clone(&catalog), "t")
        .set_properties([("commit.retry.min-wait-ms", "1"), ("gone", "x")])
        .unwrap();
    let stale = base.clone();

    // Another writer commits first: a property, and an append.
    base.set_properties([("a", "1")])
        .unwrap()
        .append(&[points_batch(0..3, uniform(3))])
        .unwrap();
    // The stale handle loses the swap, reloads and re-applies: both changes are kept.
    let t = stale.set_properties([("b", "2")]).unwrap();
    let loaded = reload(&catalog, "t");
    assert_eq!(loaded.metadata_location(), t.metadata_location());
    assert_eq!(property(&loaded, "a"), Some("1"));
    assert_eq!(property(&loaded, "b"), Some("2"));
    assert_eq!(ids_of(&loaded.scan().execute().unwrap().0), vec![0, 1, 2]);

    // A key removed by the other writer: the re-applied unset finds it missing.
    loaded.unset_properties(["gone"], false).unwrap();
    let e = stale.unset_properties(["gone"], false).unwrap_err();
    assert!(matches!(e, Error::NoSuchProperty { .. }), "{e:?}");
    assert!(stale.unset_properties(["gone"], true).is_ok());
    assert_eq!(property(&reload(&catalog, "t"), "b"), Some("2"));
}

#[test]
fn no_retries_means_a_lost_race_is_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let base = points_table(Arc::clone(&catalog), "t")
        .set_properties([("commit.retry.num-retries", "0")])
        .unwrap();
    base.set_properties([("a", "1")]).unwrap();
    let e = base.set_properties([("b", "2")]).unwrap_err();
    assert!(e.is_retryable(), "{e:?}");
    assert_eq!(property(&reload(&catalog, "t"), "b"), None);
}

#[test]
fn merge_on_read_set_by_alter_makes_delete_write_deletion_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = points_table(Arc::clone(&catalog), "t")
        .append(&[points_batch(0..20, |i| (i as f64, 0.0))])
        .unwrap()
        .0;
    let filter = |c: &str| RowFilter::from_predicate(geoberg_sql::parse_condition(c).unwrap());

    // The default, copy-on-write: the file is rewritten, no delete file.
    let (t, cow) = t.delete(filter("id < 2")).execute().unwrap();
    assert_eq!(cow.mode, RowChangeMode::CopyOnWrite);
    assert_eq!((cow.added_delete_files, cow.removed_data_files), (0, 1));

    t.set_properties([("write.delete.mode", "merge-on-read")])
        .unwrap();
    let t = reload(&catalog, "t");
    assert_eq!(
        t.properties().unwrap().delete_mode,
        RowChangeMode::MergeOnRead
    );
    let (t, mor) = t.delete(filter("id >= 18")).execute().unwrap();
    assert_eq!(mor.mode, RowChangeMode::MergeOnRead);
    assert_eq!((mor.added_delete_files, mor.removed_data_files), (1, 0));
    let puffins: Vec<String> = t
        .delete_files()
        .unwrap()
        .into_iter()
        .map(|f| f.file_path().to_string())
        .collect();
    assert_eq!(puffins.len(), 1);
    assert!(
        puffins[0].ends_with(".puffin"),
        "a deletion vector: {puffins:?}"
    );
    assert_eq!(
        ids_of(&t.scan().execute().unwrap().0),
        (2..18).collect::<Vec<_>>()
    );

    // Unsetting returns to the default.
    let t = t.unset_properties(["write.delete.mode"], false).unwrap();
    let (_, back) = t.delete(filter("id = 5")).execute().unwrap();
    assert_eq!(back.mode, RowChangeMode::CopyOnWrite);
}

#[test]
fn a_value_that_was_already_unusable_does_not_block_other_changes() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    // Another tool wrote a value geoberg cannot use.
    let t = CreateTable::new([Column::new("id", DataType::Long).required()])
        .property("commit.retry.num-retries", "lots")
        .create(Arc::clone(&catalog), &ident("old"))
        .unwrap();
    assert!(t.properties().is_err());
    let t = t.set_properties([("owner", "me")]).unwrap();
    assert_eq!(property(&reload(&catalog, "old"), "owner"), Some("me"));
    // A bad value of this change is still refused, behind the old one.
    let e = t
        .set_properties([("write.delete.mode", "sometimes")])
        .unwrap_err();
    assert!(e.to_string().contains("write.delete.mode"), "{e}");
    // And the old value can be fixed or removed.
    let t = t
        .set_properties([("commit.retry.num-retries", "2")])
        .unwrap();
    assert_eq!(t.properties().unwrap().commit_retry.num_retries, 2);
    let t = t
        .unset_properties(["commit.retry.num-retries"], false)
        .unwrap();
    assert_eq!(t.properties().unwrap().commit_retry.num_retries, 4);
}

/// The metadata JSON files in the table's `metadata/` folder.
fn metadata_files(table: &Table) -> Vec<String> {
    let dir = format!(
        "{}/metadata",
        table.metadata().location().trim_start_matches("file://")
    );
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".metadata.json"))
        .collect();
    out.sort();
    out
}

#[test]
fn delete_after_commit_keeps_only_the_logged_metadata_files() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let mut kept = points_table(Arc::clone(&catalog), "kept");
    let mut trimmed = points_table(Arc::clone(&catalog), "trimmed");
    trimmed = trimmed
        .set_properties([
            ("write.metadata.delete-after-commit.enabled", "true"),
            ("write.metadata.previous-versions-max", "2"),
        ])
        .unwrap();
    for i in 0..5 {
        let batch = points_batch(i * 10..(i + 1) * 10, uniform(i as u64));
        kept = kept.append(std::slice::from_ref(&batch)).unwrap().0;
        trimmed = trimmed.append(&[batch]).unwrap().0;
    }
    // Without the property every version stays: create + 5 appends.
    assert_eq!(metadata_files(&kept).len(), 6);
    // With it: the current file and the two the log keeps; the log names only files that exist.
    let files = metadata_files(&trimmed);
    assert_eq!(files.len(), 3, "{files:?}");
    let reloaded = reload(&catalog, "trimmed");
    let logged: Vec<String> = reloaded
        .metadata()
        .metadata_log()
        .iter()
        .map(|m| m.metadata_file.rsplit('/').next().unwrap().to_string())
        .collect();
    assert_eq!(logged.len(), 2);
    assert!(
        logged.iter().all(|l| files.contains(l)),
        "{logged:?} {files:?}"
    );
    // Nothing is lost: every row reads back.
    assert_eq!(rows(&reloaded).len(), 50);
    // A value that is not a boolean is refused.
    let err = reloaded
        .set_properties([("write.metadata.delete-after-commit.enabled", "yes")])
        .unwrap_err();
    assert!(err.to_string().contains("true or false"), "{err}");
}
