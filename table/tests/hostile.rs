//! Hostile input: names and locations that try to leave the warehouse, corrupt or oversized
//! metadata and manifests, and query windows that are not numbers. Each is a typed error; none
//! panics, and nothing is written outside the warehouse.

mod common;

use std::path::Path;

use common::*;
use geoberg_table::{BBox, Column, CreateTable, DataType, Error, Table, TableIdent};

fn files_outside(root: &Path, warehouse: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.starts_with(warehouse) || p.file_name().is_some_and(|n| n == "catalog.db") {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn names_that_traverse_paths_are_rejected_and_nothing_is_written_outside() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    for ns in [
        "..",
        "../etc",
        "a/../../b",
        "/abs",
        "a\\b",
        "a\0b",
        "",
        "x..y",
    ] {
        let err = catalog.create_namespace(ns).unwrap_err();
        assert!(matches!(err, Error::InvalidName { .. }), "{ns:?}: {err}");
    }
    for name in ["..", ".", "../../escape", "a/b", "c:", "t\n", "x\u{0}"] {
        let err = TableIdent::new("test_db", name).unwrap_err();
        assert!(matches!(err, Error::InvalidName { .. }), "{name:?}: {err}");
        assert!(err.to_string().contains(&format!("{name:?}")), "{err}");
    }
    // A quote in a name is just a character: the catalog's queries are parameterised.
    let ident = TableIdent::new("test_db", "x'; DROP TABLE iceberg_tables; --").unwrap();
    let table = CreateTable::new([Column::new("id", DataType::Long)])
        .create(catalog.clone(), &ident)
        .unwrap();
    assert_eq!(
        catalog.list_tables("test_db").unwrap(),
        std::slice::from_ref(&ident)
    );
    assert!(Table::load(catalog.clone(), &ident).is_ok());
    assert!(table.metadata().location().contains("/warehouse/test_db/"));
    assert!(files_outside(dir.path(), &dir.path().join("warehouse")).is_empty());
}

#[test]
fn explicit_locations_must_be_absolute_uris_without_dot_dot() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let escape = format!("file://{}/warehouse/../../escape", dir.path().display());
    for (i, location) in [escape.as_str(), "relative/path", "http://example.com/t"]
        .into_iter()
        .enumerate()
    {
        let err = CreateTable::new([Column::new("id", DataType::Long)])
            .location(location)
            .create(
                catalog.clone(),
                &TableIdent::new("test_db", &format!("t{i}")).unwrap(),
            )
            .unwrap_err();
        assert!(
            matches!(err, Error::InvalidLocation { .. }),
            "{location}: {err}"
        );
    }
    assert!(files_outside(dir.path(), &dir.path().join("warehouse")).is_empty());
    // An explicit absolute location is honoured.
    let elsewhere = dir.path().join("elsewhere");
    let t = CreateTable::new([Column::new("id", DataType::Long)])
        .location(format!("file://{}", elsewhere.display()))
        .create(catalog, &TableIdent::new("test_db", "ok").unwrap())
        .unwrap();
    assert_eq!(
        t.metadata().location(),
        format!("file://{}", elsewhere.display())
    );
}

/// A table whose current metadata file is replaced by `json`; returns the load result.
fn load_with_metadata(
    edit: impl FnOnce(serde_json::Value) -> Vec<u8>,
) -> (tempfile::TempDir, geoberg_table::Result<Table>) {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let (table, _) = points_table(catalog.clone(), "t")
        .append(&[points_batch(0..3, |i| (i as f64, 0.0))])
        .unwrap();
    let path = table
        .metadata_location()
        .trim_start_matches("file://")
        .to_string();
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    std::fs::write(&path, edit(doc)).unwrap();
    let loaded = Table::load(catalog, table.ident());
    (dir, loaded)
}

#[test]
fn metadata_with_unknown_fields_loads() {
    let (_dir, table) = load_with_metadata(|mut doc| {
        doc["x-vendor-extension"] = serde_json::json!({"nested": [1, 2, {"deep": true}]});
        doc["schemas"][0]["x-doc"] = serde_json::json!("ignored");
        serde_json::to_vec(&doc).unwrap()
    });
    let (batches, _) = table.unwrap().scan().execute().unwrap();
    assert_eq!(ids_of(&batches), [0, 1, 2]);
}

/// Turns a metadata document into the bytes stored instead.
type Edit = dyn FnOnce(serde_json::Value) -> Vec<u8>;

#[test]
fn corrupt_metadata_is_a_typed_error_not_a_panic() {
    let cases: Vec<(&str, Box<Edit>)> = vec![
        (
            "format-version as text",
            Box::new(|mut d| {
                d["format-version"] = "three".into();
                serde_json::to_vec(&d).unwrap()
            }),
        ),
        (
            "snapshot id as text",
            Box::new(|mut d| {
                d["current-snapshot-id"] = "latest".into();
                serde_json::to_vec(&d).unwrap()
            }),
        ),
        (
            "schemas as a number",
            Box::new(|mut d| {
                d["schemas"] = 5.into();
                serde_json::to_vec(&d).unwrap()
            }),
        ),
        (
            "field id as text",
            Box::new(|mut d| {
                d["schemas"][0]["fields"][0]["id"] = "one".into();
                serde_json::to_vec(&d).unwrap()
            }),
        ),
        (
            "malformed geo type",
            Box::new(|mut d| {
                d["schemas"][0]["fields"][2]["type"] = "geometry(((".into();
                serde_json::to_vec(&d).unwrap()
            }),
        ),
        (
            "a million bogus snapshots",
            Box::new(|mut d| {
                d["snapshots"] =
                    serde_json::Value::Array(vec![serde_json::json!({"x": 1}); 1_000_000]);
                serde_json::to_vec(&d).unwrap()
            }),
        ),
        (
            "a huge array of fields",
            Box::new(|mut d| {
                d["schemas"][0]["fields"] =
                    serde_json::Value::Array(vec![serde_json::json!([[[[1]]]]); 200_000]);
                serde_json::to_vec(&d).unwrap()
            }),
        ),
        (
            "nesting 100 000 deep",
            Box::new(|_| {
                let mut s = "[".repeat(100_000);
                s.push_str(&"]".repeat(100_000));
                s.into_bytes()
            }),
        ),
        (
            "truncated",
            Box::new(|d| {
                let b = serde_json::to_vec(&d).unwrap();
                b[..b.len() / 2].to_vec()
            }),
        ),
        ("empty", Box::new(|_| Vec::new())),
        ("not UTF-8", Box::new(|_| vec![0xff, 0xfe, 0x00, 0x7b])),
    ];
    for (what, edit) in cases {
        match load_with_metadata(edit).1 {
            Err(Error::Corrupt { location, reason }) => {
                assert!(location.ends_with(".metadata.json"), "{what}: {location}");
                assert!(!reason.is_empty(), "{what}");
            }
            Err(Error::Crs(e)) => assert!(what.contains("geo"), "{what}: {e}"),
            other => panic!("{what}: expected a corrupt-metadata error, got {other:?}"),
        }
    }
}

#[test]
fn corrupt_manifests_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let (table, _) = points_table(catalog, "t")
        .append(&[points_batch(0..3, |i| (i as f64, 0.0))])
        .unwrap();
    let meta_dir = table
        .metadata()
        .location()
        .trim_start_matches("file://")
        .to_string()
        + "/metadata";
    let manifest_path = std::fs::read_dir(&meta_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("-m0.avro"))
        .unwrap();
    let good = std::fs::read(&manifest_path).unwrap();
    let window = BBox::new(0.0, 0.0, 1.0, 1.0);
    let paths = |plan: &geoberg_table::ScanPlan| -> Vec<String> {
        plan.files.iter().map(|f| f.path.clone()).collect()
    };
    let intact = paths(&table.scan().with_window("geom", window).plan().unwrap());
    let mut flipped = good.clone();
    let n = flipped.len();
    flipped[n - 40..n - 17].fill(0xff); // inside the last block
    for (what, bytes) in [
        ("truncated", good[..good.len() - 30].to_vec()),
        ("garbage", vec![0x4f; 64]),
        ("flipped block bytes", flipped),
        ("empty", Vec::new()),
    ] {
        std::fs::write(&manifest_path, &bytes).unwrap();
        let fresh = table.refresh().unwrap();
        // Building the file index decodes the manifest. A window plan need not: the persisted
        // file-bounds index (its sidecars checked by length and CRC-32 against the root) holds
        // the manifest's live files as committed, so the plan is the intact one, or, where it
        // reads the manifest, a typed error.
        let err = fresh.file_index("geom").unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{what}: {err}");
        let plan = table
            .refresh()
            .unwrap()
            .scan()
            .with_window("geom", window)
            .plan();
        match plan {
            Err(err) => assert!(matches!(err, Error::Corrupt { .. }), "{what}: {err}"),
            Ok(plan) => assert_eq!(paths(&plan), intact, "{what}"),
        }
    }
}

#[test]
fn non_finite_query_windows_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let (table, _) = points_table(catalog, "t")
        .append(&[points_batch(0..3, |i| (i as f64, 0.0))])
        .unwrap();
    for w in [
        BBox::new(f64::NAN, 0.0, 1.0, 1.0),
        BBox::new(0.0, 0.0, f64::NAN, 1.0),
        BBox::new(0.0, f64::NEG_INFINITY, 1.0, 1.0),
        BBox::new(0.0, 0.0, f64::INFINITY, 1.0),
    ] {
        let err = table.scan().with_window("geom", w).execute().unwrap_err();
        assert!(matches!(err, Error::Prune(_)), "{w:?}: {err}");
        assert!(err.to_string().contains("NaN or infinite"), "{err}");
    }
    // A window in the wrong order is an error too, naming the fix.
    let err = table
        .scan()
        .with_window("geom", BBox::new(0.0, 1.0, 1.0, 0.0))
        .plan()
        .unwrap_err();
    assert!(err.to_string().contains("swap"), "{err}");
}

#[test]
fn orphan_removal_never_follows_symlinks_out_of_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let (table, _) = points_table(catalog, "t")
        .append(&[points_batch(0..3, |i| (i as f64, 0.0))])
        .unwrap();
    let outside = dir.path().join("precious");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep.parquet"), b"not the table's").unwrap();
    let data = Path::new(table.metadata().location().trim_start_matches("file://")).join("data");
    std::os::unix::fs::symlink(&outside, data.join("linked-dir")).unwrap();
    std::os::unix::fs::symlink(outside.join("keep.parquet"), data.join("linked.parquet")).unwrap();
    let stray = data.join("stray.parquet");
    std::fs::write(&stray, b"orphan").unwrap();

    let horizon = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    let stray_location = format!("file://{}", stray.display());
    assert_eq!(
        table.orphan_files(horizon).unwrap(),
        std::slice::from_ref(&stray_location)
    );
    assert_eq!(
        table.remove_orphan_files(horizon).unwrap(),
        std::slice::from_ref(&stray_location)
    );
    assert!(!stray.exists());
    assert!(outside.join("keep.parquet").exists());
    assert!(data.join("linked.parquet").exists());
    let (batches, _) = table.refresh().unwrap().scan().execute().unwrap();
    assert_eq!(ids_of(&batches), [0, 1, 2]);
}
