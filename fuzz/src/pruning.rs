//! Pruning soundness: the planned reads hold every file that can hold a matching row.

use arbitrary::{Result, Unstructured};
use geoberg_crs::{ColumnType, Crs, FormatVersion, can_skip_files};
use geoberg_geostats::{BBox, Interval};
use geoberg_pruning::{
    BoxFilter, BoxPredicate, FileBounds, FileIndex, PruneError, PrunePlan, prune_row_groups,
};

use crate::numbers::{any_f64, near};

/// Mean Earth radius (m): distances on it are at least those on the inner sphere the planner
/// grows windows by, so "within `d` here" implies "within `d` for the planner".
const MEAN_RADIUS_M: f64 = 6_371_008.8;

/// Fuzz target `pruning_plan`: a column type and format version, up to 48 files (bounds
/// arbitrary, often valid, sometimes wrapped, NaN, inverted or missing; Z/M; empty and all-null
/// files) and one filter (any predicate; a box window or a WKB window built from vertices; a
/// CRS or none).
///
/// * `FileIndex::plan` (R-tree) equals `plan_linear`, including errors; for a column with a
///   declared CRS `prune_row_groups` equals them too.
/// * Soundness, plan ⊇ brute force: every file with rows that is not all-null is read when its
///   bounds are missing or unusable, when the column's bounds cannot be used, or when a point row
///   inside its box would match: for a box window, the boxes share a point (with the geography
///   wrap rule); for a WKB window, a window vertex lies in the file box; for distance filters,
///   the boxes (or a vertex and the box) are within `d` (planar), or sampled points are within
///   `d` on the sphere (geography).
/// * Files without rows or with only nulls are never read, nor is anything for an empty window
///   unless the column's bounds cannot be used; tallies add up.
/// * A planar box window with ordered finite bounds in the column's CRS always plans.
pub fn pruning_plan(data: &[u8]) {
    let _ = run(&mut Unstructured::new(data));
}

#[derive(Debug, Clone)]
enum WindowSpec {
    Box(BBox),
    Vertices(Vec<(f64, f64)>),
}

fn run(u: &mut Unstructured<'_>) -> Result<()> {
    let column = match u.int_in_range(0u8..=3)? {
        0 => ColumnType::geometry(Crs::Epsg(3857)),
        1 => ColumnType::geometry(Crs::OgcCrs84),
        2 => ColumnType::GeometryWithoutCrs,
        _ => ColumnType::geography(Crs::OgcCrs84),
    };
    let version = *u.choose(&FormatVersion::ALL)?;
    let sphere = matches!(column, ColumnType::Geography { .. });
    let (lo, hi) = if sphere {
        (-180.0, 180.0)
    } else {
        (-100.0, 100.0)
    };

    let n = u.int_in_range(0..=48)?;
    let mut files = Vec::with_capacity(n);
    for i in 0..n {
        let records = *u.choose(&[0, 1, 1, 1, 7, 1_000])?;
        let bbox = if u.ratio(1, 8)? {
            None
        } else {
            Some(file_box(u, lo, hi, sphere)?)
        };
        let size = u64::from(u.arbitrary::<u32>()?);
        files.push(
            FileBounds::new(format!("f{i}"), records, size, bbox).with_all_null(u.ratio(1, 12)?),
        );
    }

    let predicate = match u.int_in_range(0u8..=4)? {
        0 | 1 => BoxPredicate::Intersects,
        2 => BoxPredicate::Contains,
        3 => BoxPredicate::Within,
        _ => BoxPredicate::DistanceWithin {
            distance: if u.ratio(1, 8)? {
                any_f64(u)?
            } else if sphere {
                f64::from(u.int_in_range(0u32..=3_000_000)?)
            } else {
                f64::from(u.int_in_range(0u16..=300)?) / 10.0
            },
        },
    };
    let window = if u.ratio(2, 3)? {
        WindowSpec::Box(if u.ratio(1, 10)? {
            BBox::new(any_f64(u)?, any_f64(u)?, any_f64(u)?, any_f64(u)?)
        } else {
            file_box(u, lo, hi, sphere)?
        })
    } else {
        let k = u.int_in_range(0..=6)?;
        let mut vertices = Vec::with_capacity(k);
        for _ in 0..k {
            vertices.push((near(u, lo, hi)?, near(u, lo / 2.0, hi / 2.0)?));
        }
        WindowSpec::Vertices(vertices)
    };
    let crs = match u.int_in_range(0u8..=3)? {
        0 | 1 => None,
        2 => column.crs().cloned(),
        _ => Some(Crs::Epsg(32633)),
    };
    let mut filter = match &window {
        WindowSpec::Box(b) => BoxFilter::new(predicate, *b),
        WindowSpec::Vertices(v) => {
            BoxFilter::from_wkb(predicate, &multipoint_wkb(v)).expect("our own WKB")
        }
    };
    if let Some(crs) = crs.clone() {
        filter = filter.with_crs(crs);
    }

    let index = FileIndex::build(files.clone(), &column, version).expect("under the entry limit");
    let plan = index.plan(&filter);
    let linear = index.plan_linear(&filter);
    // Errors compared as text: they may carry a NaN distance, which is unequal to itself.
    let text =
        |p: &std::result::Result<PrunePlan, PruneError>| p.clone().map_err(|e| e.to_string());
    assert_eq!(text(&plan), text(&linear), "R-tree plan vs linear plan");
    if column.crs().is_some() {
        // The same decisions; only the report's wording ("row groups of ...") differs.
        let summary = |p: &std::result::Result<PrunePlan, PruneError>| {
            p.as_ref()
                .map(|p| (p.reads().to_vec(), p.read(), p.total()))
                .map_err(ToString::to_string)
        };
        assert_eq!(
            summary(&prune_row_groups(&column, &filter, &files)),
            summary(&linear),
            "row groups vs files"
        );
    }

    let crs_ok = match (&crs, column.crs()) {
        (Some(w), Some(c)) => w.is_same_as(c),
        _ => true,
    };
    if let WindowSpec::Box(b) = &window {
        let finite = [b.min_x, b.min_y, b.max_x, b.max_y]
            .iter()
            .all(|v| v.is_finite());
        let distance_ok = match predicate {
            BoxPredicate::DistanceWithin { distance } => distance.is_finite() && distance >= 0.0,
            _ => true,
        };
        // Z and M are optional, but when given they are numbers in order.
        let zm_ok = [b.z, b.m].iter().flatten().all(|i| i.is_valid());
        if !sphere
            && crs_ok
            && finite
            && zm_ok
            && b.min_x <= b.max_x
            && b.min_y <= b.max_y
            && distance_ok
        {
            assert!(plan.is_ok(), "a valid planar window failed: {plan:?}");
        }
    }
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => {
            assert!(
                matches!(
                    e,
                    PruneError::CrsMismatch { .. }
                        | PruneError::InvalidWindow { .. }
                        | PruneError::InvalidDistance { .. }
                ),
                "unexpected error {e:?}"
            );
            assert!(
                !crs_ok || !matches!(e, PruneError::CrsMismatch { .. }),
                "{e}"
            );
            return Ok(());
        }
    };

    let read: Vec<bool> = {
        let mut r = vec![false; files.len()];
        for i in plan.read_indices() {
            assert!(!r[i], "file {i} planned twice");
            r[i] = true;
        }
        r
    };
    let total_files = files.len() as u64;
    assert_eq!(plan.total().files, total_files);
    assert_eq!(plan.read().files + plan.skipped().files, total_files);
    let cannot_skip = !can_skip_files(version, &column).can_skip;
    for (i, f) in files.iter().enumerate() {
        if f.record_count == 0 || f.all_null {
            assert!(
                !read[i],
                "file {i} without rows or with only nulls is read: {f:?}"
            );
            continue;
        }
        // A window without a box (no vertex, or NaN in every X or in every Y: geostats' rule
        // for WKB values) matches no row.
        let empty_window = matches!(&window, WindowSpec::Vertices(v)
            if v.iter().all(|p| p.0.is_nan()) || v.iter().all(|p| p.1.is_nan()));
        let must = cannot_skip
            || !empty_window
                && match f.bbox {
                    None => true,
                    Some(b) if !usable(&b, sphere) => true,
                    Some(b) => may_match(&b, &window, predicate, sphere),
                };
        assert!(
            !must || read[i],
            "unsound: file {i} {f:?} can match {predicate} {window:?} but is skipped \
             ({column}, v{version:?})"
        );
    }
    Ok(())
}

/// A file box: mostly ordered inside `[lo, hi]`, sometimes wrapped (geography), sometimes with
/// Z/M, sometimes raw floats.
fn file_box(u: &mut Unstructured<'_>, lo: f64, hi: f64, sphere: bool) -> Result<BBox> {
    if u.ratio(1, 10)? {
        return Ok(BBox::new(
            any_f64(u)?,
            any_f64(u)?,
            any_f64(u)?,
            any_f64(u)?,
        ));
    }
    let (ylo, yhi) = if sphere { (-90.0, 90.0) } else { (lo, hi) };
    let (x0, x1) = (near(u, lo, hi)?, near(u, lo, hi)?);
    let (y0, y1) = (near(u, ylo, yhi)?, near(u, ylo, yhi)?);
    let wrap = sphere && u.ratio(1, 4)?;
    let (min_x, max_x) = if wrap {
        (x0.max(x1), x0.min(x1))
    } else {
        (x0.min(x1), x0.max(x1))
    };
    let mut b = BBox::new(min_x, y0.min(y1), max_x, y0.max(y1));
    if u.ratio(1, 5)? {
        let (a, c) = (near(u, -10.0, 10.0)?, near(u, -10.0, 10.0)?);
        b.z = Some(Interval::new(a.min(c), a.max(c)));
    }
    if u.ratio(1, 8)? {
        let (a, c) = (near(u, -10.0, 10.0)?, near(u, -10.0, 10.0)?);
        b.m = Some(Interval::new(a.min(c), a.max(c)));
    }
    Ok(b)
}

/// Little-endian ISO WKB MultiPoint of `vertices` (empty for none).
fn multipoint_wkb(vertices: &[(f64, f64)]) -> Vec<u8> {
    let mut wkb = vec![1, 4, 0, 0, 0];
    wkb.extend((vertices.len() as u32).to_le_bytes());
    for (x, y) in vertices {
        wkb.extend([1, 1, 0, 0, 0]);
        wkb.extend(x.to_le_bytes());
        wkb.extend(y.to_le_bytes());
    }
    wkb
}

/// Whether a file box can be compared at all (else it must be read).
fn usable(b: &BBox, sphere: bool) -> bool {
    let geography_range = (-180.0..=180.0).contains(&b.min_x)
        && (-180.0..=180.0).contains(&b.max_x)
        && (-90.0..=90.0).contains(&b.min_y)
        && (-90.0..=90.0).contains(&b.max_y);
    !b.min_x.is_nan()
        && !b.max_x.is_nan()
        && b.min_y <= b.max_y
        && if sphere {
            geography_range
        } else {
            b.min_x <= b.max_x
        }
}

/// The X values of a range under the wrap rule, as closed plain pieces.
fn x_pieces(min: f64, max: f64) -> Vec<(f64, f64)> {
    if min > max {
        vec![(min, f64::INFINITY), (f64::NEG_INFINITY, max)]
    } else {
        vec![(min, max)]
    }
}

/// Closed intervals that both exist share a point.
fn meet(a: (f64, f64), b: (f64, f64)) -> bool {
    a.0.max(b.0) <= a.1.min(b.1)
}

/// Z or M: compared only when both sides have a usable range.
fn dimension_compatible(file: Option<Interval>, window: Option<Interval>) -> bool {
    match (
        file.filter(|i| i.is_valid()),
        window.filter(|i| i.is_valid()),
    ) {
        (Some(f), Some(w)) => meet((f.min, f.max), (w.min, w.max)),
        _ => true,
    }
}

/// Brute force: can a point row inside `file` match the filter?
fn may_match(file: &BBox, window: &WindowSpec, predicate: BoxPredicate, sphere: bool) -> bool {
    // A vertex with a NaN coordinate is no location (its other axis still widens the window's
    // box, which only makes the planner read more).
    let located: Vec<(f64, f64)>;
    let window = match window {
        WindowSpec::Vertices(v) => {
            located = v
                .iter()
                .copied()
                .filter(|(x, y)| !x.is_nan() && !y.is_nan())
                .collect();
            &WindowSpec::Vertices(located.clone())
        }
        w => w,
    };
    let distance = match predicate {
        BoxPredicate::DistanceWithin { distance } => Some(distance),
        _ => None,
    };
    match (window, distance) {
        (WindowSpec::Box(w), None) => {
            let x = x_pieces(file.min_x, file.max_x)
                .into_iter()
                .any(|f| x_pieces(w.min_x, w.max_x).into_iter().any(|p| meet(f, p)));
            x && meet((file.min_y, file.max_y), (w.min_y, w.max_y))
                && dimension_compatible(file.z, w.z)
                && dimension_compatible(file.m, w.m)
        }
        (WindowSpec::Vertices(v), None) => {
            predicate == BoxPredicate::Intersects && v.iter().any(|&(x, y)| in_box(file, x, y))
        }
        (WindowSpec::Box(w), Some(d)) if !sphere => planar_box_distance(file, w) <= shrink(d),
        (WindowSpec::Vertices(v), Some(d)) if !sphere => v
            .iter()
            .any(|&(x, y)| planar_box_distance(file, &BBox::point(x, y)) <= shrink(d)),
        (WindowSpec::Box(w), Some(d)) => {
            let ws = box_samples(w);
            box_samples(file)
                .iter()
                .any(|p| ws.iter().any(|q| haversine(*p, *q) <= shrink(d)))
        }
        (WindowSpec::Vertices(v), Some(d)) => {
            let fs = box_samples(file);
            v.iter()
                .any(|q| fs.iter().any(|p| haversine(*p, *q) <= shrink(d)))
        }
    }
}

/// `d` less a rounding margin, so that the brute force never asks more than exact arithmetic.
fn shrink(d: f64) -> f64 {
    d * (1.0 - 1e-9) - 1e-9
}

/// Closed containment, with the wrap rule on X.
fn in_box(b: &BBox, x: f64, y: f64) -> bool {
    let x_in = x_pieces(b.min_x, b.max_x)
        .into_iter()
        .any(|(lo, hi)| lo <= x && x <= hi);
    x_in && b.min_y <= y && y <= b.max_y
}

/// Euclidean distance between two ordered boxes (0 when they meet).
fn planar_box_distance(a: &BBox, b: &BBox) -> f64 {
    let gap = |a0: f64, a1: f64, b0: f64, b1: f64| (b0 - a1).max(a0 - b1).max(0.0);
    let dx = gap(a.min_x, a.max_x, b.min_x, b.max_x);
    let dy = gap(a.min_y, a.max_y, b.min_y, b.max_y);
    dx.hypot(dy)
}

/// Lon/lat points of a geography box: corners, edge midpoints, centre (canonical ranges only).
fn box_samples(b: &BBox) -> Vec<(f64, f64)> {
    let xs: Vec<f64> = if b.min_x <= b.max_x {
        vec![b.min_x, (b.min_x + b.max_x) / 2.0, b.max_x]
    } else {
        vec![b.min_x, 180.0, -180.0, b.max_x]
    };
    let ys = [b.min_y, (b.min_y + b.max_y) / 2.0, b.max_y];
    xs.iter()
        .flat_map(|&x| ys.iter().map(move |&y| (x, y)))
        .filter(|&(x, y)| (-180.0..=180.0).contains(&x) && (-90.0..=90.0).contains(&y))
        .filter(|&(x, y)| in_box(b, x, y))
        .collect()
}

/// Great-circle distance in metres on the mean-radius sphere.
fn haversine((lon1, lat1): (f64, f64), (lon2, lat2): (f64, f64)) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let dp = p2 - p1;
    let dl = (lon2 - lon1).to_radians();
    let h = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * MEAN_RADIUS_M * h.sqrt().min(1.0).asin()
}
