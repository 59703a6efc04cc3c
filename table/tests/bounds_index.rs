//! The file-bounds index persisted with each snapshot: a fresh handle plans a window from it
//! and gets the plan the manifests give; a deleted, garbled or stale index (root or sidecar)
//! is never trusted: planning falls back to the manifests and says so, and the next commit
//! rebuilds it; expiry and orphan removal treat its files like the table's other files.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, SystemTime};

use geoberg_geostats::encode_geospatial_bounds;
use geoberg_table::{BBox, FILE_BOUNDS_INDEX_SUMMARY_KEY, Table};
use iceberg::spec::{DataContentType, DataFile, DataFileBuilder, DataFileFormat, Datum, Struct};
use proptest::prelude::*;

use common::{points_table, sqlite_catalog};

/// A data-file entry (no Parquet behind it) whose geometry bounds are `b` (`None`: no bounds).
fn entry(table: &Table, name: &str, b: Option<BBox>) -> DataFile {
    let geom = table.geo_column("geom").unwrap().field_id;
    let (mut lower, mut upper) = (HashMap::new(), HashMap::new());
    if let Some(b) = b {
        let (lo, hi) = encode_geospatial_bounds(&b);
        lower.insert(geom, Datum::binary(lo));
        upper.insert(geom, Datum::binary(hi));
    }
    DataFileBuilder::default()
        .content(DataContentType::Data)
        .file_path(format!(
            "{}/data/{name}.parquet",
            table.metadata().location()
        ))
        .file_format(DataFileFormat::Parquet)
        .partition(Struct::empty())
        .record_count(10)
        .file_size_in_bytes(1000)
        .value_counts(HashMap::from([(geom, 10)]))
        .null_value_counts(HashMap::from([(geom, 0)]))
        .lower_bounds(lower)
        .upper_bounds(upper)
        .build()
        .unwrap()
}

/// Appends one commit per band: band `k` holds `n` unit boxes along y = 10 k.
fn banded(table: Table, bands: usize, n: usize) -> Table {
    let mut table = table;
    for k in 0..bands {
        let files = (0..n)
            .map(|i| {
                let (x, y) = (i as f64, 10.0 * k as f64);
                entry(
                    &table,
                    &format!("b{k}-{i}"),
                    Some(BBox::new(x, y, x + 1.0, y + 1.0)),
                )
            })
            .collect();
        table = table.stage_data_files(files).unwrap().commit().unwrap();
    }
    table
}

/// Paths a fresh handle plans for `w`, with the plan's reasons.
fn planned(table: &Table, w: BBox) -> (BTreeSet<String>, Vec<String>) {
    let fresh = table.refresh().unwrap();
    let plan = fresh.scan().with_window("geom", w).plan().unwrap();
    let files = plan.files.iter().map(|f| f.path.clone()).collect();
    (files, plan.explain.reasons)
}

/// Paths planned from the manifests alone (the in-memory file index, built first).
fn from_manifests(table: &Table, w: BBox) -> BTreeSet<String> {
    let fresh = table.refresh().unwrap();
    fresh.file_index("geom").unwrap();
    let plan = fresh.scan().with_window("geom", w).plan().unwrap();
    assert!(
        !plan
            .explain
            .reasons
            .iter()
            .any(|r| r.contains("file-bounds index")),
        "{:?}",
        plan.explain.reasons
    );
    plan.files.iter().map(|f| f.path.clone()).collect()
}

fn root(table: &Table) -> String {
    table
        .metadata()
        .current_snapshot()
        .unwrap()
        .summary()
        .additional_properties[FILE_BOUNDS_INDEX_SUMMARY_KEY]
        .clone()
}

fn metadata_files(table: &Table, suffix: &str) -> Vec<String> {
    let dir = format!("{}/metadata", table.metadata().location());
    let mut out: Vec<String> = table
        .storage()
        .list(&dir)
        .unwrap()
        .into_iter()
        .map(|f| f.location)
        .filter(|l| l.ends_with(suffix))
        .collect();
    out.sort();
    out
}

fn overwrite(table: &Table, location: &str, bytes: Vec<u8>) {
    table.storage().delete(location).unwrap();
    table.storage().write_new(location, bytes).unwrap();
}

fn uses_index(reasons: &[String]) -> bool {
    reasons
        .iter()
        .any(|r| r.starts_with("planned from the file-bounds index"))
}

fn fell_back(reasons: &[String]) -> bool {
    reasons
        .iter()
        .any(|r| r.ends_with("planned from the manifests"))
}

#[test]
fn fresh_handle_plans_from_the_index_and_skips_manifests() {
    let dir = tempfile::tempdir().unwrap();
    let table = banded(points_table(sqlite_catalog(dir.path()), "t"), 5, 20);
    let w = BBox::new(2.5, 19.5, 5.5, 21.5);
    let (files, reasons) = planned(&table, w);
    assert!(uses_index(&reasons), "{reasons:?}");
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("4 of 5 manifests skipped")),
        "{reasons:?}"
    );
    assert_eq!(files, from_manifests(&table, w));
    assert_eq!(files.len(), 4, "{files:?}");
    let plan = table
        .refresh()
        .unwrap()
        .scan()
        .with_window("geom", w)
        .plan()
        .unwrap();
    assert_eq!(plan.explain.files_total, 100);
    assert_eq!(plan.explain.bytes_total, 100 * 1000);
    assert_eq!(plan.explain.records_total, 100 * 10);
}

#[test]
fn deleted_garbled_or_stale_index_is_never_trusted_and_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let table = banded(points_table(sqlite_catalog(dir.path()), "t"), 3, 10);
    let w = BBox::new(0.5, 0.0, 3.5, 30.0);
    let want = from_manifests(&table, w);
    assert_eq!(want.len(), 4 * 3);

    // Stale: another snapshot's root in place of the current one.
    let current = root(&table);
    let parent_root = metadata_files(&table, ".puffin")
        .into_iter()
        .find(|p| p.contains("snap-") && *p != current)
        .unwrap();
    let stale = table.storage().read(&parent_root).unwrap().to_vec();
    overwrite(&table, &current, stale);
    let (files, reasons) = planned(&table, w);
    assert_eq!(files, want);
    assert!(
        fell_back(&reasons) && reasons.iter().any(|r| r.contains("not the current")),
        "{reasons:?}"
    );

    // Garbage bytes.
    overwrite(&table, &current, b"not a puffin file at all".repeat(10));
    let (files, reasons) = planned(&table, w);
    assert_eq!(files, want);
    assert!(
        fell_back(&reasons) && reasons.iter().any(|r| r.contains("unreadable")),
        "{reasons:?}"
    );

    // Deleted.
    table.storage().delete(&current).unwrap();
    let (files, reasons) = planned(&table, w);
    assert_eq!(files, want);
    assert!(fell_back(&reasons), "{reasons:?}");

    // The next commit rebuilds it (every manifest, since the parent's index is gone).
    let table = banded(table, 1, 10);
    let want = from_manifests(&table, w);
    let (files, reasons) = planned(&table, w);
    assert_eq!(files, want);
    assert!(uses_index(&reasons) && !fell_back(&reasons), "{reasons:?}");

    // Garbled sidecars (same length: the CRC catches it), then deleted ones. Every sidecar
    // is garbled: the ones of the root deleted above are orphans that expiry cannot attribute,
    // so "a sidecar" might be one no root names.
    let later = SystemTime::now() + Duration::from_secs(3600);
    let (table, _) = table.expire_snapshots(later, 1).unwrap();
    let victims: Vec<String> = metadata_files(&table, ".puffin")
        .into_iter()
        .filter(|p| p.contains("-bounds-") && !p.contains("/snap-"))
        .collect();
    assert!(!victims.is_empty());
    for victim in &victims {
        let mut bytes = table.storage().read(victim).unwrap().to_vec();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x55;
        overwrite(&table, victim, bytes);
    }
    let (files, reasons) = planned(&table, w);
    assert_eq!(files, want);
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("CRC-32") && r.contains("read from their Avro")),
        "{reasons:?}"
    );
    for victim in &victims {
        table.storage().delete(victim).unwrap();
    }
    let (files, reasons) = planned(&table, w);
    assert_eq!(files, want);
    assert!(fell_back(&reasons), "{reasons:?}");
}

#[test]
fn expiry_and_orphan_removal_keep_the_live_index_only() {
    let dir = tempfile::tempdir().unwrap();
    let table = banded(points_table(sqlite_catalog(dir.path()), "t"), 4, 5);
    let later = SystemTime::now() + Duration::from_secs(3600);
    assert_eq!(table.orphan_files(later).unwrap(), Vec::<String>::new());
    let before = metadata_files(&table, ".puffin");
    // 4 sidecars and 4 roots.
    assert_eq!(before.len(), 8, "{before:?}");
    let (table, report) = table.expire_snapshots(later, 1).unwrap();
    let after = metadata_files(&table, ".puffin");
    // The 3 expired roots go; every sidecar stays (the last root names all 4 manifests).
    assert_eq!(after.len(), 5, "{after:?}");
    assert!(report.deleted_statistics_files_count >= 3, "{report:?}");
    assert_eq!(table.orphan_files(later).unwrap(), Vec::<String>::new());
    let w = BBox::new(0.0, 0.0, 100.0, 100.0);
    let (files, reasons) = planned(&table, w);
    assert!(uses_index(&reasons), "{reasons:?}");
    assert_eq!(files.len(), 20);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, .. ProptestConfig::default() })]

    /// Planned with the index, planned from the manifests and a brute-force filter over every
    /// file's box agree, for random files in random commits (some without bounds).
    #[test]
    fn index_plan_equals_brute_force(
        commits in prop::collection::vec(
            prop::collection::vec(
                (0i32..40, 0i32..40, 1i32..8, 1i32..8, 0u8..10),
                1..12,
            ),
            1..5,
        ),
        window in (0i32..40, 0i32..40, 0i32..20, 0i32..20),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut table = points_table(sqlite_catalog(dir.path()), "p");
        let mut all: Vec<(String, Option<BBox>)> = Vec::new();
        for (c, files) in commits.iter().enumerate() {
            let entries = files
                .iter()
                .enumerate()
                .map(|(i, &(x, y, w, h, nobounds))| {
                    let b = (nobounds > 0).then(|| {
                        let (x, y) = (f64::from(x) / 2.0, f64::from(y) / 2.0);
                        BBox::new(x, y, x + f64::from(w) / 2.0, y + f64::from(h) / 2.0)
                    });
                    let e = entry(&table, &format!("c{c}-{i}"), b);
                    all.push((e.file_path().to_string(), b));
                    e
                })
                .collect();
            table = table.stage_data_files(entries).unwrap().commit().unwrap();
        }
        let (x, y, w, h) = window;
        let (x, y) = (f64::from(x) / 2.0, f64::from(y) / 2.0);
        let win = BBox::new(x, y, x + f64::from(w) / 2.0, y + f64::from(h) / 2.0);
        let brute: BTreeSet<String> = all
            .iter()
            .filter(|(_, b)| match b {
                None => true,
                Some(b) => b.min_x <= win.max_x && win.min_x <= b.max_x
                    && b.min_y <= win.max_y && win.min_y <= b.max_y,
            })
            .map(|(p, _)| p.clone())
            .collect();
        let (indexed, reasons) = planned(&table, win);
        prop_assert!(uses_index(&reasons), "{:?}", reasons);
        prop_assert_eq!(&indexed, &brute);
        prop_assert_eq!(&from_manifests(&table, win), &brute);
    }
}
