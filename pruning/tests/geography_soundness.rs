//! Soundness of pruning on geography columns, against oracles that are not box code.
//!
//! Random geography rows (points, great-circle lines, polygons of either orientation, near the
//! antimeridian and the poles, tiny to continent-sized) are cut into files whose bounds are what
//! a writer stores (`GeographyBBoxAccumulator::add_wkb`). For every filter, each file that holds
//! a matching row must be read. A row matches:
//! * a geometry window (polygon, line or point WKB) when the exact spherical predicate of
//!   `geoberg-geography` says so (intersects / window contains row / distance within metres);
//! * a lon/lat box window when a point sampled on the row (vertices, slerp samples along every
//!   edge) lies in the box, or a polygon row covers one of the box's corners or its centre:
//!   samples only under-approximate the matching rows, so the oracle can miss a match but never
//!   invent one.

use geoberg_crs::{ColumnType, Crs, FormatVersion};
use geoberg_geography::Geography;
use geoberg_geostats::{BBox, GeographyBBoxAccumulator};
use geoberg_pruning::{BoxFilter, BoxPredicate, FileBounds, FileIndex};
use proptest::prelude::*;

fn coords(out: &mut Vec<u8>, cs: &[(f64, f64)]) {
    out.extend((cs.len() as u32).to_le_bytes());
    for (x, y) in cs {
        out.extend(x.to_le_bytes());
        out.extend(y.to_le_bytes());
    }
}

fn point_wkb(p: (f64, f64)) -> Vec<u8> {
    let mut v = vec![1, 1, 0, 0, 0];
    v.extend(p.0.to_le_bytes());
    v.extend(p.1.to_le_bytes());
    v
}

fn line_wkb(cs: &[(f64, f64)]) -> Vec<u8> {
    let mut v = vec![1, 2, 0, 0, 0];
    coords(&mut v, cs);
    v
}

fn polygon_wkb(ring: &[(f64, f64)]) -> Vec<u8> {
    let mut v = vec![1, 3, 0, 0, 0, 1, 0, 0, 0];
    coords(&mut v, ring);
    v
}

/// The point `dist` degrees from `c` along `bearing` radians, on the sphere.
fn destination(c: (f64, f64), bearing: f64, dist: f64) -> (f64, f64) {
    let (la, lo, d) = (c.1.to_radians(), c.0.to_radians(), dist.to_radians());
    let la2 = (la.sin() * d.cos() + la.cos() * d.sin() * bearing.cos()).asin();
    let lo2 = lo + (bearing.sin() * d.sin() * la.cos()).atan2(d.cos() - la.sin() * la2.sin());
    let lon = (lo2.to_degrees() + 180.0).rem_euclid(360.0) - 180.0;
    (lon, la2.to_degrees())
}

#[derive(Debug, Clone)]
enum Shape {
    Point((f64, f64)),
    Line(Vec<(f64, f64)>),
    Polygon(Vec<(f64, f64)>),
}

impl Shape {
    fn wkb(&self) -> Vec<u8> {
        match self {
            Shape::Point(p) => point_wkb(*p),
            Shape::Line(l) => line_wkb(l),
            Shape::Polygon(r) => polygon_wkb(r),
        }
    }

    fn vertices(&self) -> Vec<(f64, f64)> {
        match self {
            Shape::Point(p) => vec![*p],
            Shape::Line(l) | Shape::Polygon(l) => l.clone(),
        }
    }
}

fn center() -> impl Strategy<Value = (f64, f64)> {
    prop_oneof![
        3 => (-180.0..180.0f64, -1.0..1.0f64).prop_map(|(x, z)| (x, z.asin().to_degrees())),
        2 => (prop::sample::select(vec![-1.0, 1.0]), 170.0..180.0f64, -60.0..60.0f64)
            .prop_map(|(s, x, y)| (s * x, y)),
        1 => (-180.0..180.0f64, prop::sample::select(vec![-1.0, 1.0]), 75.0..89.9f64)
            .prop_map(|(x, s, y)| (x, s * y)),
    ]
}

fn shape(max_radius: f64) -> impl Strategy<Value = Shape> {
    let radius = prop_oneof![1 => 1e-4..1e-2f64, 2 => 0.1..5.0f64, 1 => 5.0..max_radius];
    (
        center(),
        radius,
        0..3u8,
        prop::collection::vec(0.6..1.0f64, 4..10),
        0.0..6.3f64,
        any::<bool>(),
    )
        .prop_map(|(c, r, kind, radii, start, reverse)| match kind {
            0 => Shape::Point(c),
            1 => {
                let mut pts = vec![c];
                for (i, f) in radii.iter().take(4).enumerate() {
                    let last = pts[pts.len() - 1];
                    pts.push(destination(last, start + i as f64 * 2.1, r * f));
                }
                Shape::Line(pts)
            }
            _ => {
                let n = radii.len();
                let mut ring: Vec<(f64, f64)> = radii
                    .iter()
                    .enumerate()
                    .map(|(k, f)| {
                        destination(
                            c,
                            start + std::f64::consts::TAU * k as f64 / n as f64,
                            r * f,
                        )
                    })
                    .collect();
                if reverse {
                    ring.reverse();
                }
                ring.push(ring[0]);
                Shape::Polygon(ring)
            }
        })
}

#[derive(Debug, Clone)]
enum Window {
    Geometry(Shape, BoxPredicate),
    Box(BBox),
}

fn window() -> impl Strategy<Value = Window> {
    let geometry = (shape(60.0), 0..3u8, 0.0..3_000_000.0f64).prop_map(|(s, k, d)| {
        let p = match k {
            0 => BoxPredicate::Intersects,
            1 => BoxPredicate::Within,
            _ => BoxPredicate::DistanceWithin { distance: d },
        };
        Window::Geometry(s, p)
    });
    let bx =
        (-180.0..180.0f64, -90.0..90.0f64, 0.0..90.0f64, 0.0..40.0f64).prop_map(|(x, y, w, h)| {
            let max_x = if x + w > 180.0 { x + w - 360.0 } else { x + w };
            Window::Box(BBox::new(x, y, max_x, (y + h).min(90.0)))
        });
    prop_oneof![3 => geometry, 1 => bx]
}

fn unit(p: (f64, f64)) -> [f64; 3] {
    let (lo, la) = (p.0.to_radians(), p.1.to_radians());
    [la.cos() * lo.cos(), la.cos() * lo.sin(), la.sin()]
}

fn slerp(a: (f64, f64), b: (f64, f64), n: usize) -> Vec<(f64, f64)> {
    let (p, q) = (unit(a), unit(b));
    let omega = (p[0] * q[0] + p[1] * q[1] + p[2] * q[2])
        .clamp(-1.0, 1.0)
        .acos();
    (0..=n)
        .map(|i| {
            let t = i as f64 / n as f64;
            let (wa, wb) = if omega < 1e-12 {
                (1.0 - t, t)
            } else {
                (
                    ((1.0 - t) * omega).sin() / omega.sin(),
                    (t * omega).sin() / omega.sin(),
                )
            };
            let v = [0, 1, 2].map(|k| wa * p[k] + wb * q[k]);
            (
                v[1].atan2(v[0]).to_degrees(),
                v[2].atan2((v[0] * v[0] + v[1] * v[1]).sqrt()).to_degrees(),
            )
        })
        .collect()
}

fn in_box(b: &BBox, (x, y): (f64, f64)) -> bool {
    let xin = if b.min_x <= b.max_x {
        b.min_x <= x && x <= b.max_x
    } else {
        x >= b.min_x || x <= b.max_x
    };
    xin && b.min_y <= y && y <= b.max_y
}

/// Whether `row` matches `w`, by the oracles described at the top.
fn matches(row: &Shape, geog: &Geography, w: &Window, wgeog: Option<&Geography>) -> bool {
    match (w, wgeog) {
        (Window::Geometry(_, p), Some(q)) => match p {
            BoxPredicate::Intersects => geog.intersects(q),
            BoxPredicate::Within | BoxPredicate::Contains => q.contains(geog),
            BoxPredicate::DistanceWithin { distance } => geog.dwithin(q, *distance),
        },
        (Window::Box(b), _) => {
            let v = row.vertices();
            let on_row = v.iter().any(|p| in_box(b, *p))
                || v.windows(2)
                    .any(|e| slerp(e[0], e[1], 32).iter().any(|p| in_box(b, *p)));
            let covers_corner = matches!(row, Shape::Polygon(_)) && {
                let cx = if b.min_x <= b.max_x {
                    (b.min_x + b.max_x) / 2.0
                } else {
                    let c = (b.min_x + b.max_x + 360.0) / 2.0;
                    if c > 180.0 { c - 360.0 } else { c }
                };
                [
                    (b.min_x, b.min_y),
                    (b.max_x, b.max_y),
                    (b.min_x, b.max_y),
                    (b.max_x, b.min_y),
                    (cx, (b.min_y + b.max_y) / 2.0),
                ]
                .iter()
                .any(|&p| geog.covers(&Geography::from_wkb(&point_wkb(p)).unwrap()))
            };
            on_row || covers_corner
        }
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_file_with_a_matching_row_is_read(
        rows in prop::collection::vec(shape(30.0), 1..60),
        cuts in prop::collection::vec(1usize..8, 1..20),
        windows in prop::collection::vec(window(), 1..6),
    ) {
        let geogs: Vec<Geography> = rows.iter().map(|r| Geography::from_wkb(&r.wkb()).unwrap()).collect();
        let (mut files, mut ranges, mut start) = (Vec::new(), Vec::new(), 0);
        for (i, n) in cuts.iter().enumerate() {
            let end = (start + n).min(rows.len());
            let mut acc = GeographyBBoxAccumulator::new();
            for r in &rows[start..end] {
                acc.add_wkb(&r.wkb()).unwrap();
            }
            files.push(FileBounds::new(format!("f{i}"), (end - start) as u64, 1, acc.finish()));
            ranges.push(start..end);
            start = end;
        }
        let index = FileIndex::build(files, &ColumnType::geography(Crs::OgcCrs84), FormatVersion::V3).unwrap();
        for w in &windows {
            let (filter, wgeog) = match w {
                Window::Geometry(s, p) => (
                    BoxFilter::from_wkb(*p, &s.wkb()).unwrap(),
                    Some(Geography::from_wkb(&s.wkb()).unwrap()),
                ),
                Window::Box(b) => (BoxFilter::intersects(*b), None),
            };
            let plan = index.plan(&filter).unwrap();
            prop_assert_eq!(&plan, &index.plan_linear(&filter).unwrap());
            let read: Vec<usize> = plan.read_indices().collect();
            for (i, range) in ranges.iter().enumerate() {
                for r in range.clone() {
                    if matches(&rows[r], &geogs[r], w, wgeog.as_ref()) {
                        prop_assert!(
                            read.contains(&i),
                            "file {} holds matching row {:?} but {} skipped it: {:?}",
                            i, rows[r], filter, index.entries()[i]
                        );
                    }
                }
            }
        }
    }
}
