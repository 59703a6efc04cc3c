//! Table-driven pruning cases with their expected files: the examples of issue 16 (lines and
//! polygons across the antimeridian, over a pole, the great-circle bulge, points near ±180,
//! wrapping windows, tiny and whole-world windows, metres for distance), and the semantics of
//! Iceberg Java's `GeospatialPredicateEvaluators` / iceberg-go's bound evaluators, which pruning
//! must never be less inclusive than.

use geoberg_crs::{ColumnType, Crs, FormatVersion};
use geoberg_geostats::{BBox, GeographyBBoxAccumulator, Interval};
use geoberg_pruning::{BoxFilter, BoxPredicate, FileBounds, FileIndex};

fn coords(out: &mut Vec<u8>, cs: &[(f64, f64)]) {
    out.extend((cs.len() as u32).to_le_bytes());
    for (x, y) in cs {
        out.extend(x.to_le_bytes());
        out.extend(y.to_le_bytes());
    }
}

fn point(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1, 1, 0, 0, 0];
    v.extend(x.to_le_bytes());
    v.extend(y.to_le_bytes());
    v
}

fn line(cs: &[(f64, f64)]) -> Vec<u8> {
    let mut v = vec![1, 2, 0, 0, 0];
    coords(&mut v, cs);
    v
}

fn polygon(ring: &[(f64, f64)]) -> Vec<u8> {
    let mut v = vec![1, 3, 0, 0, 0, 1, 0, 0, 0];
    coords(&mut v, ring);
    v
}

/// One file per row, bounded as a writer bounds geography.
fn geography_files(rows: &[(&str, Vec<u8>)]) -> FileIndex<FileBounds> {
    let files = rows
        .iter()
        .map(|(name, wkb)| {
            let mut acc = GeographyBBoxAccumulator::new();
            acc.add_wkb(wkb).unwrap();
            FileBounds::new(*name, 1, 100, acc.finish())
        })
        .collect();
    FileIndex::build(
        files,
        &ColumnType::geography(Crs::OgcCrs84),
        FormatVersion::V3,
    )
    .unwrap()
}

fn read(index: &FileIndex<FileBounds>, filter: &BoxFilter) -> Vec<String> {
    let plan = index.plan(filter).unwrap();
    assert_eq!(plan, index.plan_linear(filter).unwrap(), "{filter}");
    plan.read_indices()
        .map(|i| index.entries()[i].path.clone())
        .collect()
}

fn wkb_filter(p: BoxPredicate, wkb: &[u8]) -> BoxFilter {
    BoxFilter::from_wkb(p, wkb).unwrap()
}

#[test]
fn issue_examples_on_geography() {
    let antimeridian_window = polygon(&[
        (170.0, -10.0),
        (-170.0, -10.0),
        (-170.0, 10.0),
        (170.0, 10.0),
        (170.0, -10.0),
    ]);
    let index = geography_files(&[
        (
            "line across the antimeridian",
            line(&[(170.0, 0.0), (-170.0, 0.0)]),
        ),
        ("point 175 5", point(175.0, 5.0)),
        ("point 0 0", point(0.0, 0.0)),
        ("bulge over the pole", line(&[(-90.0, 60.0), (90.0, 60.0)])),
        ("bulge at 60N", line(&[(0.0, 60.0), (90.0, 60.0)])),
        ("point past 180", point(180.000_000_000_000_06, 10.0)),
        ("point at -180", point(-180.0, -30.0)),
    ]);
    let cases: Vec<(&str, BoxFilter, Vec<&str>)> = vec![
        (
            "box 176..179 meets the line along the antimeridian",
            BoxFilter::intersects(BBox::new(176.0, -1.0, 179.0, 1.0)),
            vec!["line across the antimeridian"],
        ),
        (
            "box around 0 does not meet it (and holds point 0 0)",
            BoxFilter::intersects(BBox::new(-1.0, -1.0, 1.0, 1.0)),
            vec!["point 0 0"],
        ),
        (
            "polygon window across the antimeridian",
            wkb_filter(BoxPredicate::Intersects, &antimeridian_window),
            vec![
                "line across the antimeridian",
                "point 175 5",
                "point past 180",
            ],
        ),
        (
            "within the polygon window across the antimeridian",
            wkb_filter(BoxPredicate::Within, &antimeridian_window),
            vec![
                "line across the antimeridian",
                "point 175 5",
                "point past 180",
            ],
        ),
        (
            "a wrapping envelope, 170 .. -170",
            BoxFilter::intersects(BBox::new(170.0, -10.0, -170.0, 10.0)),
            vec![
                "line across the antimeridian",
                "point 175 5",
                "point past 180",
            ],
        ),
        (
            "a box over the North Pole meets the arc through it",
            BoxFilter::intersects(BBox::new(-10.0, 85.0, 10.0, 90.0)),
            vec!["bulge over the pole"],
        ),
        (
            // (The arc over the pole has every longitude from 60N up: its file is read too.)
            "the arc from (0 60) to (90 60) rises to 67.8 at lon 45",
            BoxFilter::intersects(BBox::new(40.0, 66.0, 50.0, 70.0)),
            vec!["bulge over the pole", "bulge at 60N"],
        ),
        (
            "180.00000000000006 is the antimeridian, seen from the west",
            BoxFilter::intersects(BBox::new(-180.0, 5.0, -179.0, 15.0)),
            vec!["point past 180"],
        ),
        (
            "-180 is the antimeridian, seen from the east",
            BoxFilter::intersects(BBox::new(179.0, -31.0, 180.0, -29.0)),
            vec!["point at -180"],
        ),
        (
            "a tiny window",
            BoxFilter::intersects(BBox::new(
                174.999_999_9,
                4.999_999_9,
                175.000_000_1,
                5.000_000_1,
            )),
            vec!["point 175 5"],
        ),
        (
            "the whole world",
            BoxFilter::intersects(BBox::new(-180.0, -90.0, 180.0, 90.0)),
            vec![
                "line across the antimeridian",
                "point 175 5",
                "point 0 0",
                "bulge over the pole",
                "bulge at 60N",
                "point past 180",
                "point at -180",
            ],
        ),
        (
            // (0 0) is 111 195 m from (1 0): 100 km prunes it, 120 km does not.
            "dwithin 100 km is metres, not degrees",
            wkb_filter(
                BoxPredicate::DistanceWithin {
                    distance: 100_000.0,
                },
                &point(1.0, 0.0),
            ),
            vec![],
        ),
        (
            "dwithin 120 km",
            wkb_filter(
                BoxPredicate::DistanceWithin {
                    distance: 120_000.0,
                },
                &point(1.0, 0.0),
            ),
            vec!["point 0 0"],
        ),
        (
            "dwithin 2 m (2 degrees would reach (0 0))",
            BoxFilter::distance_within(BBox::point(1.0, 0.0), 2.0),
            vec![],
        ),
    ];
    for (what, filter, expected) in cases {
        assert_eq!(read(&index, &filter), expected, "{what}: {filter}");
    }
}

/// (what, window, file box, read?) on a geography column: Iceberg Java's `GeographyEvaluator`
/// wrap rules, with ±180 one meridian.
#[test]
fn wrapping_boxes_against_wrapping_and_plain_windows() {
    let cases = [
        (
            "wrap file, wrap window",
            (175.0, -175.0),
            (170.0, -170.0),
            true,
        ),
        (
            "wrap file, plain window east of 180",
            (-175.0, -160.0),
            (170.0, -170.0),
            true,
        ),
        (
            "wrap file, plain window west of 180",
            (160.0, 171.0),
            (170.0, -170.0),
            true,
        ),
        (
            "wrap file, plain window far away",
            (0.0, 10.0),
            (170.0, -170.0),
            false,
        ),
        (
            "plain file, wrap window",
            (170.0, -170.0),
            (-10.0, 10.0),
            false,
        ),
        (
            "plain file touching the wrap window",
            (170.0, -170.0),
            (-170.0, -160.0),
            true,
        ),
        (
            "plain file at 180, wrap window",
            (179.0, -179.0),
            (175.0, 180.0),
            true,
        ),
        (
            "plain file at -180, plain window at 180",
            (179.0, 180.0),
            (-180.0, -179.5),
            true,
        ),
        (
            "plain file at 180, plain window at -180",
            (-180.0, -179.0),
            (180.0, 180.0),
            true,
        ),
    ];
    for (what, (wx0, wx1), (fx0, fx1), expected) in cases {
        let files = vec![FileBounds::new(
            "f",
            1,
            1,
            Some(BBox::new(fx0, 0.0, fx1, 1.0)),
        )];
        let index = FileIndex::build(
            files,
            &ColumnType::geography(Crs::OgcCrs84),
            FormatVersion::V3,
        )
        .unwrap();
        let got = !read(
            &index,
            &BoxFilter::intersects(BBox::new(wx0, 0.0, wx1, 1.0)),
        )
        .is_empty();
        assert_eq!(got, expected, "{what}");
    }
}

/// (what, geography?, window, file bounds (None = missing), all null, records, read?)
type EvaluatorCase = (&'static str, bool, BBox, Option<BBox>, bool, u64, bool);

/// The evaluator rules shared by Iceberg Java (`GeospatialPredicateEvaluators`,
/// `InclusiveMetricsEvaluator`) and iceberg-go: closed intervals, Z and M compared only when both
/// sides have them, a missing bound reads the file, bounds Java would reject are read here.
#[test]
fn iceberg_evaluator_semantics() {
    let z = |b: BBox, lo: f64, hi: f64| b.with_z(Interval::new(lo, hi));
    let m = |b: BBox, lo: f64, hi: f64| b.with_m(Interval::new(lo, hi));
    let unit = BBox::new(0.0, 0.0, 1.0, 1.0);
    let cases: Vec<EvaluatorCase> = vec![
        (
            "touching corners intersect",
            false,
            unit,
            Some(BBox::new(1.0, 1.0, 2.0, 2.0)),
            false,
            1,
            true,
        ),
        (
            "touching edges intersect",
            false,
            unit,
            Some(BBox::new(1.0, 0.5, 3.0, 0.7)),
            false,
            1,
            true,
        ),
        (
            "apart by an ulp",
            false,
            unit,
            Some(BBox::new(1.000_000_000_000_000_2, 0.0, 2.0, 1.0)),
            false,
            1,
            false,
        ),
        (
            "Z disjoint, both have Z",
            false,
            z(unit, 0.0, 5.0),
            Some(z(unit, 10.0, 20.0)),
            false,
            1,
            false,
        ),
        (
            "Z only on the file",
            false,
            unit,
            Some(z(unit, 10.0, 20.0)),
            false,
            1,
            true,
        ),
        (
            "Z only on the window",
            false,
            z(unit, 0.0, 5.0),
            Some(unit),
            false,
            1,
            true,
        ),
        (
            "M disjoint, both have M",
            false,
            m(unit, 0.0, 5.0),
            Some(m(unit, 6.0, 7.0)),
            false,
            1,
            false,
        ),
        (
            "M touching",
            false,
            m(unit, 0.0, 5.0),
            Some(m(unit, 5.0, 7.0)),
            false,
            1,
            true,
        ),
        ("missing bounds are read", false, unit, None, false, 1, true),
        (
            "all-null files are skipped",
            false,
            unit,
            Some(unit),
            true,
            1,
            false,
        ),
        (
            "empty files are skipped",
            false,
            unit,
            Some(unit),
            false,
            0,
            false,
        ),
        (
            "geometry min x > max x (Java throws) is read",
            false,
            unit,
            Some(BBox::new(5.0, 0.0, -5.0, 1.0)),
            false,
            1,
            true,
        ),
        (
            "geometry min y > max y (Java throws) is read",
            false,
            unit,
            Some(BBox::new(0.0, 5.0, 1.0, -5.0)),
            false,
            1,
            true,
        ),
        (
            "geography latitude past 90 (Java throws) is read",
            true,
            unit,
            Some(BBox::new(0.0, 0.0, 1.0, 91.0)),
            false,
            1,
            true,
        ),
        (
            "geography longitude past 180 (Java throws) is read",
            true,
            unit,
            Some(BBox::new(0.0, 0.0, 181.0, 1.0)),
            false,
            1,
            true,
        ),
        (
            "geography touching",
            true,
            unit,
            Some(BBox::new(1.0, 1.0, 2.0, 2.0)),
            false,
            1,
            true,
        ),
        (
            "geography disjoint",
            true,
            unit,
            Some(BBox::new(2.0, 0.0, 3.0, 1.0)),
            false,
            1,
            false,
        ),
    ];
    for (what, geography, window, bbox, all_null, records, expected) in cases {
        let column = if geography {
            ColumnType::geography(Crs::OgcCrs84)
        } else {
            ColumnType::geometry(Crs::Epsg(3857))
        };
        let files = vec![FileBounds::new("f", records, 1, bbox).with_all_null(all_null)];
        let index = FileIndex::build(files, &column, FormatVersion::V3).unwrap();
        let got = !read(&index, &BoxFilter::intersects(window)).is_empty();
        assert_eq!(got, expected, "{what}");
    }
}
