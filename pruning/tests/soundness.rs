//! Soundness on planar geometry columns: random rows -> random files -> random filters; the plan
//! must read every file that holds a matching row (found by brute force over the rows), and the
//! R-tree plan must equal the linear scan. Geography columns have their own property with an
//! exact spherical oracle (`geography_soundness.rs`): a box-over-the-rows oracle cannot see edges
//! that bulge beyond their vertices.

use geoberg_crs::{ColumnType, Crs, FormatVersion};
use geoberg_geostats::{BBox, BBoxAccumulator, Interval, bbox_of_wkb};
use geoberg_pruning::{BoxFilter, BoxPredicate, FileBounds, FileIndex};
use proptest::prelude::*;

/// A row: null, or the vertices of a point (one) or linestring (zero = empty, or several).
type Row = Option<Vec<[f64; 3]>>;

fn wkb(vertices: &[[f64; 3]], has_z: bool) -> Vec<u8> {
    let mut out = vec![1u8];
    let dims = if has_z { 3 } else { 2 };
    let base: u32 = if vertices.len() == 1 { 1 } else { 2 };
    out.extend((base + if has_z { 1000 } else { 0 }).to_le_bytes());
    if vertices.len() != 1 {
        out.extend((vertices.len() as u32).to_le_bytes());
    }
    for v in vertices {
        for c in &v[..dims] {
            out.extend(c.to_le_bytes());
        }
    }
    out
}

fn coord(lo: f64, hi: f64) -> impl Strategy<Value = f64> + Clone {
    prop_oneof![
        8 => lo..=hi,
        1 => Just(f64::NAN),
        1 => prop::sample::select(vec![lo, hi, 0.0]),
    ]
}

fn row(geography: bool) -> impl Strategy<Value = Row> {
    let (xr, yr) = if geography {
        (180.0, 90.0)
    } else {
        (1000.0, 1000.0)
    };
    let vertex =
        move || (coord(-xr, xr), coord(-yr, yr), -10.0..10.0f64).prop_map(|(x, y, z)| [x, y, z]);
    prop_oneof![
        1 => Just(None),
        1 => Just(Some(vec![])),
        6 => vertex().prop_map(|v| Some(vec![v])),
        2 => (vertex(), prop::collection::vec((-3.0..3.0f64, -3.0..3.0f64), 1..3)).prop_map(
            move |(v, steps)| {
                let mut out = vec![v];
                for (dx, dy) in steps {
                    let mut x = v[0] + dx;
                    if geography && x > 180.0 {
                        x -= 360.0;
                    }
                    if geography && x < -180.0 {
                        x += 360.0;
                    }
                    let y = if geography { (v[1] + dy).clamp(-90.0, 90.0) } else { v[1] + dy };
                    out.push([x, y, v[2] + dx]);
                }
                Some(out)
            }
        ),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    geography: bool,
    has_z: bool,
    rows: Vec<Row>,
    /// File sizes in rows; the rows are cut into files in order.
    cuts: Vec<usize>,
    /// Files whose bounds are dropped (unknown).
    drop_bounds: Vec<bool>,
    filters: Vec<BoxFilter>,
}

fn window(geography: bool, has_z: bool) -> impl Strategy<Value = BBox> {
    let (xr, yr) = if geography {
        (180.0, 90.0)
    } else {
        (1000.0, 1000.0)
    };
    (
        -xr..=xr,
        -yr..=yr,
        0.0..(xr / 2.0),
        0.0..(yr / 2.0),
        prop::option::of((-10.0..10.0f64, 0.0..5.0f64)).prop_map(move |z| z.filter(|_| has_z)),
        any::<bool>(),
    )
        .prop_map(move |(x, y, w, h, z, degenerate)| {
            let (w, h) = if degenerate { (0.0, 0.0) } else { (w, h) };
            let mut b = if geography {
                // X may wrap: x + w past 180 becomes xmin > xmax.
                let max_x = if x + w > 180.0 { x + w - 360.0 } else { x + w };
                BBox::new(x, y, max_x, (y + h).min(90.0))
            } else {
                BBox::new(x, y, x + w, y + h)
            };
            if let Some((z0, dz)) = z {
                b = b.with_z(Interval::new(z0, z0 + dz));
            }
            b
        })
}

fn filter(geography: bool, has_z: bool) -> impl Strategy<Value = BoxFilter> {
    let max_d = if geography { 2_000_000.0 } else { 200.0 };
    (window(geography, has_z), 0..5u8, 0.0..max_d).prop_map(move |(w, kind, d)| match kind {
        0 => BoxFilter::intersects(w),
        1 => BoxFilter::contains(w),
        2 => BoxFilter::within(w),
        3 if geography => {
            // Distance from a point window: the brute force uses great-circle distance.
            BoxFilter::distance_within(BBox::point(w.min_x, w.min_y), d)
        }
        3 => BoxFilter::distance_within(w, d),
        _ if geography => BoxFilter::intersects(w),
        // A WKB window: its planar box is what prunes.
        _ => {
            let line = [[w.min_x, w.min_y, 0.0], [w.max_x, w.max_y, 0.0]];
            BoxFilter::from_wkb(BoxPredicate::Intersects, &wkb(&line, false)).unwrap()
        }
    })
}

fn case() -> impl Strategy<Value = Case> {
    (Just(false), any::<bool>()).prop_flat_map(|(geography, has_z)| {
        (
            prop::collection::vec(row(geography), 0..120),
            prop::collection::vec(0usize..12, 1..30),
            prop::collection::vec(prop::bool::weighted(0.1), 30),
            prop::collection::vec(filter(geography, has_z), 1..6),
        )
            .prop_map(move |(rows, cuts, drop_bounds, filters)| Case {
                geography,
                has_z,
                rows,
                cuts,
                drop_bounds,
                filters,
            })
    })
}

/// The row's box as a writer would compute it.
fn row_box(r: &Row, geography: bool, has_z: bool) -> Option<BBox> {
    let v = r.as_ref()?;
    assert!(
        !geography,
        "geography rows are checked by geography_soundness.rs"
    );
    bbox_of_wkb(&wkb(v, has_z)).unwrap()
}

/// Plain pieces of an X range (independent of the crate's own wrap code).
fn x_pieces(min: f64, max: f64, geography: bool) -> Vec<(f64, f64)> {
    if geography && min > max {
        vec![(min, f64::INFINITY), (f64::NEG_INFINITY, max)]
    } else {
        vec![(min, max)]
    }
}

fn overlaps(row: &BBox, w: &BBox, geography: bool) -> bool {
    let x = x_pieces(row.min_x, row.max_x, geography)
        .into_iter()
        .any(|a| {
            x_pieces(w.min_x, w.max_x, geography)
                .into_iter()
                .any(|b| a.0 <= b.1 && b.0 <= a.1)
        });
    let y = row.min_y <= w.max_y && w.min_y <= row.max_y;
    let z = match (row.z, w.z) {
        (Some(a), Some(b)) => a.min <= b.max && b.min <= a.max,
        _ => true,
    };
    x && y && z
}

/// Great-circle distance in metres on the mean-radius sphere.
fn haversine(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (la1, la2) = (a.1.to_radians(), b.1.to_radians());
    let dla = la2 - la1;
    let dlo = (b.0 - a.0).to_radians();
    let h = (dla / 2.0).sin().powi(2) + la1.cos() * la2.cos() * (dlo / 2.0).sin().powi(2);
    2.0 * 6_371_008.8 * h.sqrt().min(1.0).asin()
}

/// Whether a row may match: a superset of the exact predicate, computed row by row.
fn row_matches(r: &Row, f: &BoxFilter, geography: bool, has_z: bool) -> bool {
    let Some(rb) = row_box(r, geography, has_z) else {
        return false; // null, empty or all-NaN geometries match nothing
    };
    let w = f.window().unwrap();
    match f.predicate() {
        BoxPredicate::DistanceWithin { distance } if geography => r
            .as_ref()
            .unwrap()
            .iter()
            .filter(|v| !v[0].is_nan() && !v[1].is_nan())
            .any(|v| haversine((v[0], v[1]), (w.min_x, w.min_y)) <= distance),
        BoxPredicate::DistanceWithin { distance } => {
            let dx = (w.min_x - rb.max_x).max(rb.min_x - w.max_x).max(0.0);
            let dy = (w.min_y - rb.max_y).max(rb.min_y - w.max_y).max(0.0);
            (dx * dx + dy * dy).sqrt() <= distance
        }
        _ => overlaps(&rb, &w, geography),
    }
}

fn files_of(c: &Case) -> (Vec<FileBounds>, Vec<std::ops::Range<usize>>) {
    let mut files = Vec::new();
    let mut ranges = Vec::new();
    let mut start = 0;
    for (i, &n) in c.cuts.iter().enumerate() {
        let end = (start + n).min(c.rows.len());
        let rows = &c.rows[start..end];
        let mut acc = BBoxAccumulator::default();
        rows.iter()
            .for_each(|r| acc.add(row_box(r, c.geography, c.has_z)));
        let bbox = acc.finish();
        let bbox = if c.drop_bounds[i] { None } else { bbox };
        let all_null = !rows.is_empty() && rows.iter().all(Option::is_none);
        files.push(
            FileBounds::new(
                format!("f{i}"),
                rows.len() as u64,
                100 * rows.len() as u64,
                bbox,
            )
            .with_all_null(all_null),
        );
        ranges.push(start..end);
        start = end;
    }
    (files, ranges)
}

fn column(geography: bool) -> ColumnType {
    if geography {
        ColumnType::geography(Crs::OgcCrs84)
    } else {
        ColumnType::geometry(Crs::Epsg(3857))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn plan_reads_every_file_with_a_matching_row(c in case()) {
        let (files, ranges) = files_of(&c);
        let index = FileIndex::build(files, &column(c.geography), FormatVersion::V3).unwrap();
        for f in &c.filters {
            let plan = index.plan(f).unwrap();
            prop_assert_eq!(&plan, &index.plan_linear(f).unwrap());
            let read: Vec<usize> = plan.read_indices().collect();
            for (i, range) in ranges.iter().enumerate() {
                let hit = c.rows[range.clone()].iter().any(|r| row_matches(r, f, c.geography, c.has_z));
                prop_assert!(
                    !hit || read.contains(&i),
                    "file {} holds a matching row but was skipped by {}: {:?}\n{}",
                    i, f, index.entries()[i], plan.explain()
                );
            }
            let (t, r, s) = (plan.total(), plan.read(), plan.skipped());
            prop_assert_eq!(t.files, r.files + s.files);
            prop_assert_eq!(t.bytes, r.bytes + s.bytes);
            prop_assert_eq!(t.records, r.records + s.records);
        }
    }

    #[test]
    fn no_crs_on_v3_reads_every_non_null_file(c in case()) {
        let (files, _) = files_of(&c);
        let expect: Vec<usize> = files
            .iter()
            .enumerate()
            .filter(|(_, f)| f.record_count > 0 && !f.all_null)
            .map(|(i, _)| i)
            .collect();
        let index = FileIndex::build(files, &ColumnType::GeometryWithoutCrs, FormatVersion::V3).unwrap();
        // Geography windows may wrap, which a planar column rejects; use an ordinary box.
        let plan = index.plan(&BoxFilter::intersects(BBox::new(0.0, 0.0, 1.0, 1.0))).unwrap();
        prop_assert_eq!(plan.read_indices().collect::<Vec<_>>(), expect);
        prop_assert!(plan.note().unwrap().contains("every data file"));
    }
}
