//! FileIndex behaviour: R-tree equals linear scan at scale, rules, errors, explain snapshot.

use geoberg_crs::{ColumnType, Crs, FormatVersion};
use geoberg_geostats::BBox;
use geoberg_pruning::{
    BoxFilter, BoxPredicate, FileBounds, FileIndex, PruneError, ReadReason, RowGroupBounds,
    SkipReason, prune_row_groups,
};

fn grid(n: usize, cell: f64) -> Vec<FileBounds> {
    (0..n * n)
        .map(|i| {
            let (x, y) = ((i % n) as f64 * cell, (i / n) as f64 * cell);
            FileBounds::new(
                format!("f{i}"),
                10,
                1000,
                Some(BBox::new(x, y, x + cell, y + cell)),
            )
        })
        .collect()
}

fn mercator() -> ColumnType {
    ColumnType::geometry(Crs::Epsg(3857))
}

#[test]
fn rtree_equals_linear_scan_on_many_files() {
    let mut files = grid(100, 1.0);
    // Some unknown, all-null, empty, infinite and invalid entries among them.
    files[5].bbox = None;
    files[6].all_null = true;
    files[7].record_count = 0;
    files[8].bbox = Some(BBox::new(f64::NEG_INFINITY, 3.0, 4.0, 5.0));
    files[9].bbox = Some(BBox::new(9.0, 3.0, 4.0, 5.0));
    let index = FileIndex::build(files, &mercator(), FormatVersion::V3).unwrap();
    let mut state = 12345u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    for _ in 0..300 {
        let (x, y, w, h) = (
            next() * 110.0 - 5.0,
            next() * 110.0 - 5.0,
            next() * 20.0,
            next() * 20.0,
        );
        for f in [
            BoxFilter::intersects(BBox::new(x, y, x + w, y + h)),
            BoxFilter::within(BBox::point(x, y)),
            BoxFilter::distance_within(BBox::point(x, y), w),
        ] {
            assert_eq!(
                index.plan(&f).unwrap(),
                index.plan_linear(&f).unwrap(),
                "{f}"
            );
        }
    }
}

#[test]
fn rules_for_unknown_all_null_and_empty_entries() {
    let files = vec![
        FileBounds::new("in", 1, 10, Some(BBox::new(0.0, 0.0, 1.0, 1.0))),
        FileBounds::new("out", 1, 10, Some(BBox::new(5.0, 5.0, 6.0, 6.0))),
        FileBounds::new("unknown", 1, 10, None),
        FileBounds::new("nulls", 1, 10, Some(BBox::new(0.0, 0.0, 1.0, 1.0))).with_all_null(true),
        FileBounds::new("empty", 0, 10, Some(BBox::new(0.0, 0.0, 1.0, 1.0))),
    ];
    let index = FileIndex::build(files, &mercator(), FormatVersion::V3).unwrap();
    let plan = index
        .plan(&BoxFilter::intersects(BBox::new(1.0, 1.0, 2.0, 2.0)))
        .unwrap();
    let reads: Vec<_> = plan.reads().iter().map(|r| (r.index, r.reason)).collect();
    assert_eq!(
        reads,
        [(0, ReadReason::Overlaps), (2, ReadReason::NoBounds)]
    );
    assert_eq!(plan.skipped_count(SkipReason::OutsideWindow), 1);
    assert_eq!(plan.skipped_count(SkipReason::AllNull), 1);
    assert_eq!(plan.skipped_count(SkipReason::NoRows), 1);
    assert_eq!((plan.read().bytes, plan.skipped().bytes), (20, 30));
}

#[test]
fn empty_window_geometry_reads_nothing() {
    let index = FileIndex::build(grid(3, 1.0), &mercator(), FormatVersion::V3).unwrap();
    // LINESTRING EMPTY
    let wkb = [1u8, 2, 0, 0, 0, 0, 0, 0, 0];
    let plan = index
        .plan(&BoxFilter::from_wkb(BoxPredicate::Intersects, &wkb).unwrap())
        .unwrap();
    assert_eq!(plan.read().files, 0);
    assert_eq!(plan.skipped_count(SkipReason::OutsideWindow), 9);
}

#[test]
fn window_in_another_crs_is_an_error() {
    let index = FileIndex::build(grid(2, 1.0), &mercator(), FormatVersion::V3).unwrap();
    let f = BoxFilter::intersects(BBox::new(0.0, 0.0, 1.0, 1.0)).with_crs(Crs::OgcCrs84);
    let err = index.plan(&f).unwrap_err();
    assert!(matches!(err, PruneError::CrsMismatch { .. }));
    let msg = err.to_string();
    assert!(msg.contains("OGC:CRS84") && msg.contains("EPSG:3857") && msg.contains("ST_Transform"));
    // Same CRS under another spelling is fine.
    let ok = BoxFilter::intersects(BBox::new(0.0, 0.0, 1.0, 1.0)).with_crs(Crs::Srid(3857));
    assert_eq!(index.plan(&ok).unwrap().read().files, 4);
    // An EWKB window carries its SRID: POINT(0 0) with SRID 4326.
    let mut ewkb = vec![1u8];
    ewkb.extend((1u32 | 0x2000_0000).to_le_bytes());
    ewkb.extend(4326i32.to_le_bytes());
    ewkb.extend([0.0f64, 0.0].iter().flat_map(|v| v.to_le_bytes()));
    let f = BoxFilter::from_wkb(BoxPredicate::Intersects, &ewkb).unwrap();
    assert!(matches!(
        index.plan(&f),
        Err(PruneError::CrsMismatch { .. })
    ));
}

#[test]
fn invalid_windows_are_errors_not_panics() {
    let geom = FileIndex::build(grid(2, 1.0), &mercator(), FormatVersion::V3).unwrap();
    let wrap = BoxFilter::intersects(BBox::new(10.0, 0.0, -10.0, 1.0));
    assert!(
        geom.plan(&wrap)
            .unwrap_err()
            .to_string()
            .contains("only geography")
    );
    let nan = BoxFilter::intersects(BBox::new(f64::NAN, 0.0, 1.0, 1.0));
    assert!(geom.plan(&nan).unwrap_err().to_string().contains("NaN"));
    let d = BoxFilter::distance_within(BBox::point(0.0, 0.0), -1.0);
    assert!(matches!(
        geom.plan(&d),
        Err(PruneError::InvalidDistance { .. })
    ));
    let geog = FileIndex::build(
        grid(2, 1.0),
        &ColumnType::geography(Crs::OgcCrs84),
        FormatVersion::V3,
    )
    .unwrap();
    let out = BoxFilter::intersects(BBox::new(170.0, 0.0, 190.0, 1.0));
    assert!(
        geog.plan(&out)
            .unwrap_err()
            .to_string()
            .contains("[-180, 180]")
    );
    assert!(matches!(
        BoxFilter::from_wkb(BoxPredicate::Intersects, &[1, 99]),
        Err(PruneError::Wkb(_))
    ));
}

#[test]
fn geography_window_across_the_antimeridian() {
    let files = vec![
        FileBounds::new("east", 1, 1, Some(BBox::new(175.0, 0.0, 179.0, 1.0))),
        FileBounds::new("west", 1, 1, Some(BBox::new(-179.0, 0.0, -175.0, 1.0))),
        FileBounds::new("wrapping", 1, 1, Some(BBox::new(178.0, 0.0, -178.0, 1.0))),
        FileBounds::new("greenwich", 1, 1, Some(BBox::new(-1.0, 0.0, 1.0, 1.0))),
    ];
    let geog = ColumnType::geography(Crs::OgcCrs84);
    let index = FileIndex::build(files.clone(), &geog, FormatVersion::V3).unwrap();
    let f = BoxFilter::intersects(BBox::new(177.0, 0.0, -177.0, 1.0));
    assert_eq!(
        index.plan(&f).unwrap().read_indices().collect::<Vec<_>>(),
        [0, 1, 2]
    );
    let g = BoxFilter::intersects(BBox::new(-2.0, 0.0, 2.0, 1.0));
    assert_eq!(
        index.plan(&g).unwrap().read_indices().collect::<Vec<_>>(),
        [3]
    );
    // On a geometry column the wrapping file's bounds are invalid: it is read, never skipped.
    let index = FileIndex::build(files, &mercator(), FormatVersion::V3).unwrap();
    let plan = index.plan(&g).unwrap();
    assert_eq!(plan.read_count(ReadReason::InvalidBounds), 1);
}

#[test]
fn assert_pruning_names_scanned_and_total() {
    let index = FileIndex::build(grid(10, 1.0), &mercator(), FormatVersion::V3).unwrap();
    let plan = index
        .plan(&BoxFilter::intersects(BBox::new(0.5, 0.5, 1.5, 0.6)))
        .unwrap();
    assert_eq!(plan.read().files, 2);
    plan.assert_pruning(0.05).unwrap();
    let err = plan.assert_pruning(0.01).unwrap_err();
    assert!(err.to_string().contains("2/100 files scanned"), "{err}");
    assert!(matches!(
        plan.assert_pruning(1.5),
        Err(PruneError::InvalidFraction { .. })
    ));
}

#[test]
fn explain_is_stable() {
    let mut files = grid(4, 10.0);
    files[3].bbox = None;
    files[15].all_null = true;
    let index = FileIndex::build(files, &mercator(), FormatVersion::V3).unwrap();
    let f = BoxFilter::intersects(BBox::new(5.0, 5.0, 15.0, 12.0)).with_crs(Crs::Epsg(3857));
    let expected = "\
spatial filter: intersects box x [5, 15] y [5, 12] in EPSG:3857
target: data files of a geometry(EPSG:3857) column, format-version 3
files: read 5 of 16 (31.25%), skipped 11
records: read 50 of 160 (31.25%), skipped 110
bytes: read 5000 of 16000 (31.25%), skipped 11000
read: 4 overlap the window, 1 have no bounds
skipped: 10 lie outside the window, 1 hold only nulls
";
    assert_eq!(index.plan(&f).unwrap().explain(), expected);

    let legacy = FileIndex::build(
        grid(2, 1.0),
        &ColumnType::GeometryWithoutCrs,
        FormatVersion::V3,
    )
    .unwrap();
    let text = legacy.plan(&f).unwrap().explain();
    assert!(
        text.contains("read: 4 cannot be skipped on this column\n"),
        "{text}"
    );
    assert!(text.contains("note: the column declares no CRS"), "{text}");
}

#[test]
fn row_groups_use_the_same_rules() {
    let groups = [
        RowGroupBounds::new(100, 10, Some(BBox::new(0.0, 0.0, 1.0, 1.0))),
        RowGroupBounds::new(100, 10, None),
        RowGroupBounds::from_bbox_column_stats(100, 10, Some(3.0), Some(3.0), Some(4.0), None),
        RowGroupBounds::from_bbox_column_stats(100, 10, Some(3.0), Some(3.0), Some(4.0), Some(4.0)),
        RowGroupBounds::new(100, 10, Some(BBox::new(0.0, 0.0, 1.0, 1.0))).with_all_null(true),
    ];
    // No CRS on v3 blocks manifest bounds, not Parquet statistics.
    let plan = prune_row_groups(
        &ColumnType::GeometryWithoutCrs,
        &BoxFilter::intersects(BBox::new(0.5, 0.5, 0.6, 0.6)),
        &groups,
    )
    .unwrap();
    assert_eq!(plan.read_indices().collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(plan.skipped_count(SkipReason::AllNull), 1);
}
