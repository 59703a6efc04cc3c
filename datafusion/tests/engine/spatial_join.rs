//! SedonaDB's spatial join over geoberg tables, against a brute-force nested loop over the
//! rows the test wrote, evaluated with the `geo` crate (not SedonaDB's kernels): random points
//! (some NULL, some on the polygons' vertices) against random polygons with holes,
//! multi-polygons, an empty polygon and a NULL, for every predicate the join operator plans.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geo::{Contains, Distance, Euclidean, Intersects};
use geo_types::{Geometry, LineString, MultiPolygon, Point, Polygon, coord};
use geoberg_table::{Column, CreateTable, DataType, SRID_FIELD_METADATA, TableIdent};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::common::{Row, Warehouse, append_files, create_points, pairs, plan_text};

/// A deterministic generator, so that a failure is reproducible from its seed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn ring(cx: f64, cy: f64, r: f64, n: usize, g: &mut Lcg) -> LineString<f64> {
    let mut pts: Vec<_> = (0..n)
        .map(|i| {
            let a = i as f64 / n as f64 * std::f64::consts::TAU;
            let rr = r * (0.6 + 0.4 * g.next());
            coord! { x: cx + rr * a.cos(), y: cy + rr * a.sin() }
        })
        .collect();
    pts.push(pts[0]);
    LineString::new(pts)
}

/// A star-shaped polygon around (cx, cy), with a hole when `hole`.
fn polygon(cx: f64, cy: f64, r: f64, hole: bool, g: &mut Lcg) -> Polygon<f64> {
    let outer = ring(cx, cy, r, 7 + (g.next() * 6.0) as usize, g);
    let holes = if hole {
        vec![ring(cx, cy, r * 0.3, 5, g)]
    } else {
        vec![]
    };
    Polygon::new(outer, holes)
}

/// Zones: polygons (every third with a hole), multi-polygons, one empty polygon, one NULL.
fn zones(seed: u64, n: usize) -> Vec<(i64, Option<Geometry<f64>>)> {
    let mut g = Lcg(seed);
    let mut out = Vec::new();
    for id in 0..n as i64 {
        let (cx, cy) = (g.next() * 100.0, g.next() * 100.0);
        let r = 2.0 + g.next() * 10.0;
        let geom: Geometry<f64> = match id % 5 {
            3 => MultiPolygon::new(vec![
                polygon(cx, cy, r * 0.5, false, &mut g),
                polygon(cx + r * 1.5, cy, r * 0.5, true, &mut g),
            ])
            .into(),
            _ => polygon(cx, cy, r, id % 3 == 0, &mut g).into(),
        };
        out.push((id, Some(geom)));
    }
    out.push((
        n as i64,
        Some(Polygon::new(LineString::new(vec![]), vec![]).into()),
    ));
    out.push((n as i64 + 1, None));
    out
}

/// Points: uniform, every 50th NULL, every 97th on a zone's first vertex.
fn points(
    seed: u64,
    n: usize,
    zones: &[(i64, Option<Geometry<f64>>)],
) -> Vec<(i64, Option<Point<f64>>)> {
    let mut g = Lcg(seed);
    (0..n as i64)
        .map(|id| {
            let p = if id % 50 == 49 {
                None
            } else if id % 97 == 0 {
                match zones.get((id as usize / 97) % zones.len().max(1)) {
                    Some((_, Some(Geometry::Polygon(p)))) if !p.exterior().0.is_empty() => {
                        Some(Point::from(p.exterior().0[0]))
                    }
                    _ => Some(Point::new(50.0, 50.0)),
                }
            } else {
                Some(Point::new(g.next() * 110.0 - 5.0, g.next() * 110.0 - 5.0))
            };
            (id, p)
        })
        .collect()
}

/// Points as the geometry rows `create` writes.
fn geometries(rows: &[(i64, Option<Point<f64>>)]) -> Vec<(i64, Option<Geometry<f64>>)> {
    rows.iter()
        .map(|(id, p)| (*id, p.map(Geometry::from)))
        .collect()
}

fn wkb(g: &Geometry<f64>) -> Vec<u8> {
    let mut out = Vec::new();
    wkb::writer::write_geometry(&mut out, g, &Default::default()).unwrap();
    out
}

fn create(
    w: &Warehouse,
    name: &str,
    srid: i32,
    rows: &[(i64, Option<Geometry<f64>>)],
    files: usize,
) {
    if !w.catalog.namespace_exists("geo").unwrap() {
        w.catalog.create_namespace("geo").unwrap();
    }
    let table = CreateTable::new([
        Column::new("id", DataType::Long).required(),
        Column::new("geom", DataType::geometry(srid)),
    ])
    .create(
        Arc::clone(&w.catalog),
        &TableIdent::new("geo", name).unwrap(),
    )
    .unwrap();
    let meta = HashMap::from([(SRID_FIELD_METADATA.to_string(), srid.to_string())]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("geom", ArrowType::Binary, true).with_metadata(meta),
    ]));
    let chunk = rows.len().div_ceil(files.max(1)).max(1);
    let batches: Vec<RecordBatch> = rows
        .chunks(chunk)
        .map(|c| {
            RecordBatch::try_new(
                Arc::clone(&schema),
                vec![
                    Arc::new(Int64Array::from_iter_values(c.iter().map(|r| r.0))),
                    Arc::new(
                        c.iter()
                            .map(|r| r.1.as_ref().map(wkb))
                            .collect::<BinaryArray>(),
                    ),
                ],
            )
            .unwrap()
        })
        .collect();
    let mut table = table;
    for b in batches {
        table = table.append(&[b]).unwrap().0;
    }
}

fn is_empty(g: &Geometry<f64>) -> bool {
    match g {
        Geometry::Polygon(p) => p.exterior().0.is_empty(),
        _ => false,
    }
}

/// The pairs `(point id, zone id)` for which `keep(point, zone)` holds, NULL and empty
/// geometries matching nothing.
fn brute_force(
    points: &[(i64, Option<Point<f64>>)],
    zones: &[(i64, Option<Geometry<f64>>)],
    keep: impl Fn(&Point<f64>, &Geometry<f64>) -> bool,
) -> Vec<(i64, i64)> {
    use geo::BoundingRect;
    // Each point only against the zones whose box, grown by 20, holds it: farther than any
    // distance the tests join within.
    let boxes: Vec<Option<geo_types::Rect<f64>>> = zones
        .iter()
        .map(|(_, z)| z.as_ref().and_then(|z| z.bounding_rect()))
        .collect();
    let mut out = Vec::new();
    for (pid, p) in points {
        let Some(p) = p else { continue };
        for ((zid, z), bbox) in zones.iter().zip(&boxes) {
            let Some(z) = z.as_ref().filter(|z| !is_empty(z)) else {
                continue;
            };
            let far = bbox.is_some_and(|b| {
                let margin = 20.0;
                p.x() < b.min().x - margin
                    || p.x() > b.max().x + margin
                    || p.y() < b.min().y - margin
                    || p.y() > b.max().y + margin
            });
            if far {
                continue;
            }
            if keep(p, z) {
                out.push((*pid, *zid));
            }
        }
    }
    out.sort_unstable();
    out
}

/// Every predicate the join operator plans, on tables of several files each, equals the
/// brute force; the plan is SedonaDB's `SpatialJoinExec`, and turning the operator off
/// (`sedona.spatial_join.enable = false`, a nested loop over the scalar kernels) changes no
/// answer.
#[test]
fn every_join_predicate_matches_a_brute_force_nested_loop() {
    let w = Warehouse::new();
    let zs = zones(7, 60);
    let ps = points(11, 3000, &zs);
    let as_geometry = geometries(&ps);
    create(&w, "points", 4326, &as_geometry, 4);
    create(&w, "zones", 4326, &zs, 3);
    let s = w.session();

    let d = 1.5;
    let cases: Vec<(String, Vec<(i64, i64)>)> = vec![
        (
            "SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_Intersects(p.geom, z.geom)"
                .into(),
            brute_force(&ps, &zs, |p, z| z.intersects(p)),
        ),
        (
            "SELECT p.id, z.id FROM geo.points p, geo.zones z WHERE ST_Contains(z.geom, p.geom)"
                .into(),
            brute_force(&ps, &zs, |p, z| z.contains(p)),
        ),
        (
            "SELECT p.id, z.id FROM geo.zones z JOIN geo.points p ON ST_Within(p.geom, z.geom)"
                .into(),
            brute_force(&ps, &zs, |p, z| z.contains(p)),
        ),
        (
            "SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_Covers(z.geom, p.geom)"
                .into(),
            brute_force(&ps, &zs, |p, z| z.intersects(p)),
        ),
        (
            format!(
                "SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_DWithin(p.geom, z.geom, {d})"
            ),
            brute_force(&ps, &zs, |p, z| Euclidean.distance(p, z) <= d),
        ),
        (
            format!(
                "SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_Distance(p.geom, z.geom) < {d}"
            ),
            brute_force(&ps, &zs, |p, z| Euclidean.distance(p, z) < d),
        ),
    ];
    for (sql, expected) in &cases {
        assert!(!expected.is_empty(), "{sql}: the case matches something");
        let plan = plan_text(&s.sql(&format!("EXPLAIN {sql}")).unwrap());
        assert!(plan.contains("SpatialJoinExec"), "{sql}:\n{plan}");
        assert_eq!(&pairs(&s.sql(sql).unwrap()), expected, "{sql}");
    }
    s.sql("SET sedona.spatial_join.enable = false").unwrap();
    for (sql, expected) in &cases {
        let plan = plan_text(&s.sql(&format!("EXPLAIN {sql}")).unwrap());
        assert!(!plan.contains("SpatialJoinExec"), "{sql}:\n{plan}");
        assert_eq!(
            &pairs(&s.sql(sql).unwrap()),
            expected,
            "{sql} (nested loop)"
        );
    }
}

/// `ST_KNN(p.geom, s.geom, k, false)`: each point's k nearest sites, against a brute-force
/// sort of every site by distance (random coordinates: no ties).
#[test]
fn knn_join_finds_each_points_nearest_sites() {
    let w = Warehouse::new();
    let ps: Vec<(i64, Option<Point<f64>>)> = points(5, 300, &[])
        .into_iter()
        .filter(|(id, _)| id % 97 != 0)
        .collect();
    let sites: Vec<(i64, Option<Point<f64>>)> = points(17, 120, &[])
        .into_iter()
        .filter(|(id, _)| id % 97 != 0)
        .collect();
    let geometries = |rows: &[(i64, Option<Point<f64>>)]| -> Vec<(i64, Option<Geometry<f64>>)> {
        rows.iter()
            .map(|(id, p)| (*id, p.map(Geometry::from)))
            .collect()
    };
    create(&w, "points", 4326, &geometries(&ps), 2);
    create(&w, "sites", 4326, &geometries(&sites), 2);
    let s = w.session();
    let k = 3;
    let sql = format!(
        "SELECT p.id, s.id FROM geo.points p JOIN geo.sites s ON ST_KNN(p.geom, s.geom, {k}, false)"
    );
    let plan = plan_text(&s.sql(&format!("EXPLAIN {sql}")).unwrap());
    assert!(plan.contains("SpatialJoinExec"), "{plan}");
    let mut expected = Vec::new();
    for (pid, p) in &ps {
        let Some(p) = p else { continue };
        let mut by_distance: Vec<(f64, i64)> = sites
            .iter()
            .filter_map(|(sid, q)| Some((Euclidean.distance(p, q.as_ref()?), *sid)))
            .collect();
        by_distance.sort_by(|a, b| a.0.total_cmp(&b.0));
        expected.extend(by_distance.iter().take(k).map(|(_, sid)| (*pid, *sid)));
    }
    expected.sort_unstable();
    assert_eq!(pairs(&s.sql(&sql).unwrap()), expected);

    for bad in ["0", "-1"] {
        let err = s
            .sql(&format!(
                "SELECT p.id FROM geo.points p JOIN geo.sites s ON ST_KNN(p.geom, s.geom, {bad}, false)"
            ))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ST_KNN's k") && err.contains("at least 1"),
            "k = {bad}: {err}"
        );
    }
    let err = s
        .sql("SELECT p.id FROM geo.points p JOIN geo.sites s ON ST_DWithin(p.geom, s.geom, -1)")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("ST_DWithin's distance must be zero or more"),
        "{err}"
    );
}

/// The smallest x of a geometry (NULL and empty last).
fn min_x(g: &Option<Geometry<f64>>) -> f64 {
    use geo::BoundingRect;
    g.as_ref()
        .and_then(|g| g.bounding_rect())
        .map_or(f64::MAX, |r| r.min().x)
}

/// Random tables (sizes, seeds, file counts, in arrival order or sorted into bands, joined
/// whole or by file-pair groups of every size), the join operator against the brute force.
#[test]
fn random_tables_join_like_the_brute_force() {
    let mut runner = TestRunner::new(Config {
        cases: 12,
        ..Config::default()
    });
    runner
        .run(
            &(
                (1u64..1_000_000, 1usize..40, 1usize..600, 1usize..6, 1usize..6),
                (any::<bool>(), any::<bool>(), prop::sample::select(vec![1u64, 2_000, 1 << 28])),
            ),
            |((seed, nz, np, zf, pf), (sort_zones, sort_points, group_bytes))| {
                let w = Warehouse::new();
                let mut zs = zones(seed, nz);
                let mut ps = points(seed + 1, np, &zs);
                // Sorted by x, the files are bands: clustered, as after a spatial sort.
                if sort_zones {
                    zs.sort_by(|a, b| min_x(&a.1).total_cmp(&min_x(&b.1)));
                }
                if sort_points {
                    ps.sort_by(|a, b| {
                        let x = |p: &Option<Point<f64>>| p.map_or(f64::MAX, |p| p.x());
                        x(&a.1).total_cmp(&x(&b.1))
                    });
                }
                let as_geometry = geometries(&ps);
                create(&w, "points", 4326, &as_geometry, pf);
                create(&w, "zones", 4326, &zs, zf);
                let s = w.session();
                s.sql(&format!("SET geoberg.join_group_bytes = {group_bytes}")).unwrap();
                let got = pairs(
                    &s.sql("SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_Intersects(z.geom, p.geom)")
                        .unwrap(),
                );
                prop_assert_eq!(got, brute_force(&ps, &zs, |p, z| z.intersects(p)));
                Ok(())
            },
        )
        .unwrap();
}

/// A literal without SRID is taken in the column's CRS wherever it meets the column: a
/// projection, ORDER BY, a join condition (seed 004's query shapes, beyond WHERE).
#[test]
fn an_unlabelled_constant_takes_the_columns_crs_outside_where_too() {
    let w = Warehouse::new();
    let zs = zones(9, 10);
    let ps = points(13, 200, &zs);
    let as_geometry = geometries(&ps);
    create(&w, "points", 4326, &as_geometry, 1);
    create(&w, "zones", 4326, &zs, 1);
    let s = w.session();
    let near = |p: &Point<f64>| Euclidean.distance(p, &Point::new(50.0, 50.0));

    let sql = "SELECT id, ST_DWithin(geom, ST_GeomFromText('POINT (50 50)'), 20) AS near, \
               ST_Distance(geom, ST_Point(50, 50)) AS d FROM geo.points \
               WHERE geom IS NOT NULL ORDER BY ST_Distance(geom, ST_GeomFromText('POINT (50 50)')) LIMIT 5";
    let out = s.sql(sql).unwrap();
    let mut expected: Vec<(f64, i64)> = ps
        .iter()
        .filter_map(|(id, p)| Some((near(p.as_ref()?), *id)))
        .collect();
    expected.sort_by(|a, b| a.0.total_cmp(&b.0));
    let ids: Vec<i64> = out
        .iter()
        .flat_map(|b| {
            let c = arrow::compute::cast(b.column(0), &ArrowType::Int64).unwrap();
            c.as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .values()
                .to_vec()
        })
        .collect();
    assert_eq!(
        ids,
        expected.iter().take(5).map(|e| e.1).collect::<Vec<_>>()
    );

    // In a join condition beside the columns.
    let sql = "SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_Intersects(p.geom, z.geom) \
               AND ST_DWithin(z.geom, ST_GeomFromText('POINT (50 50)'), 30)";
    let expected = brute_force(&ps, &zs, |p, z| {
        z.intersects(p) && Euclidean.distance(z, &Point::new(50.0, 50.0)) <= 30.0
    });
    assert_eq!(pairs(&s.sql(sql).unwrap()), expected);

    // Still refused: a constant in another CRS, in a projection as in WHERE.
    let err = s
        .sql("SELECT ST_DWithin(geom, ST_GeomFromText('POINT (1 1)', 3857), 1) FROM geo.points")
        .unwrap_err()
        .to_string();
    assert!(err.contains("Mismatched CRS"), "{err}");
}

/// Columns in different CRSs do not join: the error names both CRSs and the way to align them.
#[test]
fn a_join_across_crss_is_refused_naming_both_and_the_fix() {
    let w = Warehouse::new();
    let zs = zones(9, 10);
    create(&w, "a", 4326, &zs, 1);
    create(&w, "b", 3857, &zs, 1);
    let s = w.session();
    let err = s
        .sql("SELECT a.id, b.id FROM geo.a a JOIN geo.b b ON ST_Intersects(a.geom, b.geom)")
        .unwrap_err()
        .to_string();
    for part in ["Mismatched CRS", "3857", "ST_Transform"] {
        assert!(err.contains(part), "{part:?} missing: {err}");
    }

    // A geometry against a geography: the error names the conversions.
    s.sql("CREATE TABLE geo.places (id bigint, geog geography(4326))")
        .unwrap();
    s.sql("INSERT INTO geo.places VALUES (1, ST_GeogFromText('POINT (1 1)'))")
        .unwrap();
    let err = s
        .sql("SELECT a.id, g.id FROM geo.a a JOIN geo.places g ON ST_Intersects(a.geom, g.geog)")
        .unwrap_err()
        .to_string();
    for part in ["geometry", "geography", "ST_ToGeography"] {
        assert!(err.contains(part), "{part:?} missing: {err}");
    }
    // A predicate with no geography kernel at all: SedonaDB's refusal, then the conversions.
    let err = s
        .sql("SELECT a.id FROM geo.a a JOIN geo.places g ON ST_Touches(a.geom, g.geog)")
        .unwrap_err()
        .to_string();
    for part in [
        "No kernel matching",
        "ST_GeomToGeography",
        "ST_GeogToGeometry",
    ] {
        assert!(err.contains(part), "{part:?} missing: {err}");
    }
}

/// The `GeobergScanExec` line pruned by a join's build side, and its metric `name`.
fn join_pruned_metric(plan: &str, name: &str) -> u64 {
    metric(plan, &["GeobergScanExec", "join_bounds="], name)
}

/// Metric `name` of the first line of `plan` containing each of `marks`.
fn metric(plan: &str, marks: &[&str], name: &str) -> u64 {
    let line = plan
        .lines()
        .find(|l| marks.iter().all(|m| l.contains(m)))
        .unwrap_or_else(|| panic!("no line with {marks:?} in\n{plan}"));
    // The metrics close the line: the last `[name=` or ` name=`.
    let (start, key) = [format!("[{name}="), format!(" {name}=")]
        .into_iter()
        .filter_map(|key| Some((line.rfind(&key)?, key)))
        .max_by_key(|(at, _)| *at)
        .unwrap_or_else(|| panic!("no metric {name} in {line}"));
    let digits: String = line[start + key.len()..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().unwrap()
}

/// `files` files of `per_file` points each, file k in the band `k * width <= x < (k + 1) *
/// width`, `0 <= y < 100`.
fn banded_points(
    seed: u64,
    files: usize,
    width: f64,
    per_file: usize,
) -> Vec<(i64, Option<Point<f64>>)> {
    let mut g = Lcg(seed);
    (0..files * per_file)
        .map(|i| {
            let k = (i / per_file) as f64;
            (
                i as i64,
                Some(Point::new(k * width + g.next() * width, g.next() * 100.0)),
            )
        })
        .collect()
}

/// Two tables sorted into bands join by file pairs: only the pairs of files whose boxes meet
/// are read together (a zone band with the two point bands under it), the zone file of NULLs
/// with none, and joining group by group (one zone file each) or whole, or with the pruning
/// off, finds the brute force's pairs.
#[test]
fn clustered_tables_join_by_file_pairs() {
    let w = Warehouse::new();
    let ps = banded_points(3, 8, 12.5, 200);
    create(&w, "points", 4326, &geometries(&ps), 8);
    // Four files of ten zones, file j inside 25j + 1 <= x <= 25j + 24 (every third with a
    // hole), and a fifth file of NULLs.
    let mut g = Lcg(4);
    let mut zs: Vec<(i64, Option<Geometry<f64>>)> = Vec::new();
    for j in 0..4 {
        for i in 0..10 {
            let cx = 25.0 * j as f64 + 4.0 + g.next() * 17.0;
            let cy = 4.0 + g.next() * 92.0;
            let zone = polygon(cx, cy, 1.0 + g.next() * 2.0, i % 3 == 0, &mut g);
            zs.push((j * 10 + i, Some(zone.into())));
        }
    }
    zs.extend((40..50).map(|id| (id, None)));
    create(&w, "zones", 4326, &zs, 5);
    let s = w.session();

    let d = 0.4;
    let cases = [
        (
            "SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_Intersects(p.geom, z.geom)"
                .to_string(),
            brute_force(&ps, &zs, |p, z| z.intersects(p)),
        ),
        (
            format!(
                "SELECT p.id, z.id FROM geo.zones z JOIN geo.points p ON ST_DWithin(z.geom, p.geom, {d})"
            ),
            brute_force(&ps, &zs, |p, z| Euclidean.distance(p, z) <= d),
        ),
    ];
    let file_pair_line = ["GeobergFilePairJoinExec"];
    for (sql, expected) in &cases {
        assert!(!expected.is_empty(), "{sql}");
        // One zone file per group.
        s.sql("SET geoberg.join_group_bytes = 1").unwrap();
        let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {sql}")).unwrap());
        assert_eq!(
            metric(&plan, &file_pair_line, "file_pairs_total"),
            40,
            "{plan}"
        );
        assert_eq!(metric(&plan, &file_pair_line, "file_pairs"), 8, "{plan}");
        assert_eq!(metric(&plan, &file_pair_line, "groups"), 4, "{plan}");
        assert_eq!(
            metric(&plan, &file_pair_line, "probe_files_read"),
            8,
            "{plan}"
        );
        assert!(plan.contains("ran as 4 groups"), "{plan}");
        assert_eq!(
            metric(&plan, &file_pair_line, "build_files_read"),
            4,
            "{plan}"
        );
        assert_eq!(
            metric(&plan, &file_pair_line, "output_rows"),
            expected.len() as u64,
            "{plan}"
        );
        assert_eq!(&pairs(&s.sql(sql).unwrap()), expected, "{sql} (by groups)");
        // Whole: the zone file of NULLs meets no point file and is not read.
        s.sql("SET geoberg.join_group_bytes = 268435456").unwrap();
        let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {sql}")).unwrap());
        assert!(plan.contains("ran whole"), "{plan}");
        assert_eq!(metric(&plan, &file_pair_line, "groups"), 0, "{plan}");
        assert_eq!(
            metric(
                &plan,
                &["GeobergScanExec", "probe_file_bounds="],
                "files_skipped_by_join"
            ),
            1,
            "{plan}"
        );
        assert_eq!(&pairs(&s.sql(sql).unwrap()), expected, "{sql} (whole)");
        // No pruning by the layout at all.
        s.sql("SET geoberg.join_pruning = false").unwrap();
        let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {sql}")).unwrap());
        assert!(!plan.contains("skipped at run time"), "{plan}");
        assert_eq!(&pairs(&s.sql(sql).unwrap()), expected, "{sql} (no pruning)");
        s.sql("SET geoberg.join_pruning = true").unwrap();
    }
}

/// The build side's boxes prune the probe side's files at run time: a file whose box meets no
/// (distance-expanded) zone box is never read. Oracles: the files' boxes and the pairs, both
/// computed from the generated rows; the nested loop (no operator, no pruning) agrees.
#[test]
fn the_build_side_prunes_the_probe_sides_files() {
    let w = Warehouse::new();
    // Eight files of points, file k in the band k * 12.5 <= x < (k + 1) * 12.5.
    let mut g = Lcg(21);
    let mut ps: Vec<(i64, Option<Point<f64>>)> = Vec::new();
    let mut file_boxes = Vec::new();
    let mut rows = Vec::new();
    for k in 0..8 {
        let band: Vec<(i64, Option<Geometry<f64>>)> = (0..300)
            .map(|i| {
                let p = Point::new(k as f64 * 12.5 + g.next() * 12.5, g.next() * 100.0);
                ps.push((k * 300 + i, Some(p)));
                (k * 300 + i, Some(Geometry::from(p)))
            })
            .collect();
        let (xs, ys): (Vec<f64>, Vec<f64>) = band
            .iter()
            .filter_map(|(_, p)| match p {
                Some(Geometry::Point(p)) => Some((p.x(), p.y())),
                _ => None,
            })
            .unzip();
        let fold = |v: &[f64], f: fn(f64, f64) -> f64, init: f64| v.iter().copied().fold(init, f);
        file_boxes.push([
            fold(&xs, f64::min, f64::MAX),
            fold(&ys, f64::min, f64::MAX),
            fold(&xs, f64::max, f64::MIN),
            fold(&ys, f64::max, f64::MIN),
        ]);
        rows.extend(band);
    }
    create(&w, "points", 4326, &rows, 8);
    // Zones: 2 x 2 squares with 20 <= x <= 30.
    let zs: Vec<(i64, Option<Geometry<f64>>)> = (0..20)
        .map(|i| {
            let (x, y) = (20.0 + (i % 5) as f64 * 2.0, (i / 5) as f64 * 20.0 + 5.0);
            let ring = LineString::from(vec![
                (x, y),
                (x + 2.0, y),
                (x + 2.0, y + 2.0),
                (x, y + 2.0),
                (x, y),
            ]);
            (i, Some(Polygon::new(ring, vec![]).into()))
        })
        .collect();
    create(&w, "zones", 4326, &zs, 1);
    let s = w.session();

    let skipped_files = |zones: &[&(i64, Option<Geometry<f64>>)], d: f64| -> u64 {
        let boxes: Vec<[f64; 4]> = zones
            .iter()
            .filter_map(|(_, z)| match z {
                Some(Geometry::Polygon(p)) => {
                    let xs = p.exterior().0.iter().map(|c| c.x);
                    let ys = p.exterior().0.iter().map(|c| c.y);
                    Some([
                        xs.clone().fold(f64::MAX, f64::min) - d,
                        ys.clone().fold(f64::MAX, f64::min) - d,
                        xs.fold(f64::MIN, f64::max) + d,
                        ys.fold(f64::MIN, f64::max) + d,
                    ])
                }
                _ => None,
            })
            .collect();
        file_boxes
            .iter()
            .filter(|f| {
                !boxes
                    .iter()
                    .any(|b| f[0] <= b[2] && b[0] <= f[2] && f[1] <= b[3] && b[1] <= f[3])
            })
            .count() as u64
    };
    let all: Vec<&(i64, Option<Geometry<f64>>)> = zs.iter().collect();
    let few: Vec<&(i64, Option<Geometry<f64>>)> = zs.iter().filter(|z| z.0 < 5).collect();
    let owned =
        |z: &[&(i64, Option<Geometry<f64>>)]| z.iter().map(|z| (*z).clone()).collect::<Vec<_>>();
    let d = 6.0;
    let cases = [
        (
            "SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_Intersects(p.geom, z.geom)"
                .to_string(),
            skipped_files(&all, 0.0),
            brute_force(&ps, &zs, |p, z| z.intersects(p)),
        ),
        (
            "SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_Intersects(p.geom, z.geom) \
             WHERE z.id < 5"
                .to_string(),
            skipped_files(&few, 0.0),
            brute_force(&ps, &owned(&few), |p, z| z.intersects(p)),
        ),
        (
            format!(
                "SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_DWithin(z.geom, p.geom, {d})"
            ),
            skipped_files(&all, d),
            brute_force(&ps, &zs, |p, z| Euclidean.distance(p, z) <= d),
        ),
    ];
    for (sql, skipped, expected) in &cases {
        assert!(*skipped >= 4, "{sql}: the case skips files ({skipped})");
        assert!(!expected.is_empty(), "{sql}");
        let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {sql}")).unwrap());
        assert!(plan.contains("GeobergBuildBoundsExec"), "{plan}");
        assert_eq!(
            join_pruned_metric(&plan, "files_skipped_by_join"),
            *skipped,
            "{sql}:\n{plan}"
        );
        assert_eq!(&pairs(&s.sql(sql).unwrap()), expected, "{sql}");
    }
    s.sql("SET sedona.spatial_join.enable = false").unwrap();
    for (sql, _, expected) in &cases {
        assert_eq!(
            &pairs(&s.sql(sql).unwrap()),
            expected,
            "{sql} (nested loop)"
        );
    }
}

/// A build side with no geometry to match (all NULL, or filtered away) reads no probe file;
/// an outer join keeps its unmatched probe rows, so it prunes nothing.
#[test]
fn an_empty_build_side_reads_no_probe_file_and_outer_joins_prune_nothing() {
    let w = Warehouse::new();
    let zs = zones(31, 10);
    let ps = points(37, 400, &zs);
    let as_geometry = geometries(&ps);
    create(&w, "points", 4326, &as_geometry, 4);
    create(&w, "zones", 4326, &zs, 1);
    let s = w.session();
    let sql = "SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_Intersects(p.geom, z.geom) \
               WHERE z.geom IS NULL";
    let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {sql}")).unwrap());
    assert_eq!(
        join_pruned_metric(&plan, "files_skipped_by_join"),
        4,
        "{plan}"
    );
    assert!(pairs(&s.sql(sql).unwrap()).is_empty());

    let outer = "SELECT p.id, z.id FROM geo.points p LEFT JOIN geo.zones z \
                 ON ST_Intersects(p.geom, z.geom)";
    let plan = plan_text(&s.sql(&format!("EXPLAIN {outer}")).unwrap());
    assert!(!plan.contains("join_bounds="), "{plan}");
    let rows: usize = s
        .sql(outer)
        .unwrap()
        .iter()
        .map(RecordBatch::num_rows)
        .sum();
    let matched = brute_force(&ps, &zs, |p, z| z.intersects(p));
    let unmatched = ps
        .iter()
        .filter(|(id, _)| !matched.iter().any(|(pid, _)| pid == id))
        .count();
    assert_eq!(rows, matched.len() + unmatched);
}

/// Inside one file, the row groups whose geo statistics meet no build box are not read either.
#[test]
fn the_build_side_prunes_row_groups_inside_a_file() {
    let w = Warehouse::new();
    // One file of 8 row groups of 100 points, row group k in the band 10k <= x < 10k + 10.
    let points_table = create_points(&w, "points", 4326, 100);
    let mut g = Lcg(5);
    let rows: Vec<Row> = (0..800)
        .map(|i| Row {
            id: i,
            n: 0,
            x: 0.0,
            state: None,
            point: Some(((i / 100) as f64 * 10.0 + g.next() * 10.0, g.next() * 100.0)),
        })
        .collect();
    append_files(points_table, std::slice::from_ref(&rows), 4326);
    // Zones in 31 <= x <= 44: row groups 3 and 4 only.
    let zs: Vec<(i64, Option<Geometry<f64>>)> = (0..4)
        .map(|i| {
            let (x, y) = (31.0 + i as f64 * 3.0, i as f64 * 20.0);
            let ring = LineString::from(vec![
                (x, y),
                (x + 4.0, y),
                (x + 4.0, y + 15.0),
                (x, y + 15.0),
                (x, y),
            ]);
            (i, Some(Polygon::new(ring, vec![]).into()))
        })
        .collect();
    create(&w, "zones", 4326, &zs, 1);
    let s = w.session();
    let sql =
        "SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_Intersects(p.geom, z.geom)";
    let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {sql}")).unwrap());
    assert_eq!(
        join_pruned_metric(&plan, "files_skipped_by_join"),
        0,
        "{plan}"
    );
    assert_eq!(
        join_pruned_metric(&plan, "row_groups_skipped_by_join"),
        6,
        "{plan}"
    );
    let ps: Vec<(i64, Option<Point<f64>>)> = rows
        .iter()
        .map(|r| (r.id, r.point.map(|(x, y)| Point::new(x, y))))
        .collect();
    let expected = brute_force(&ps, &zs, |p, z| z.intersects(p));
    assert!(!expected.is_empty());
    assert_eq!(pairs(&s.sql(sql).unwrap()), expected);
}

/// A build side larger than the session's memory limit is joined, not refused: by file-pair
/// groups that each fit, or whole through SedonaDB's spilling partitions; either way the
/// brute force's pairs.
#[test]
fn a_build_side_past_the_memory_limit_still_joins() {
    let w = Warehouse::new();
    let ps = banded_points(8, 8, 12.5, 2000);
    create(&w, "points", 4326, &geometries(&ps), 8);
    // 4000 zones of 60 vertices in four files.
    let mut g = Lcg(9);
    let zs: Vec<(i64, Option<Geometry<f64>>)> = (0..4000)
        .map(|i| {
            let cx = (i / 1000) as f64 * 25.0 + 1.0 + g.next() * 23.0;
            let cy = g.next() * 100.0;
            let zone = Polygon::new(ring(cx, cy, 0.2 + g.next() * 0.5, 60, &mut g), vec![]);
            (i, Some(zone.into()))
        })
        .collect();
    create(&w, "zones", 4326, &zs, 4);
    let s = w.session();
    let sql =
        "SELECT p.id, z.id FROM geo.points p JOIN geo.zones z ON ST_Intersects(p.geom, z.geom)";
    let expected = brute_force(&ps, &zs, |p, z| z.intersects(p));
    assert!(!expected.is_empty());
    s.sql("SET datafusion.runtime.memory_limit = '2M'").unwrap();
    // One partition: with two, both build-side collectors reserve from the 2 MB pool at once
    // and, on a loaded machine, one could fail before the other spilled (seen in CI-like runs).
    s.sql("SET datafusion.execution.target_partitions = 1")
        .unwrap();
    for (group_bytes, grouped) in [(1u64, true), (1 << 28, false)] {
        s.sql(&format!("SET geoberg.join_group_bytes = {group_bytes}"))
            .unwrap();
        let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {sql}")).unwrap());
        let join = ["SpatialJoinExec"];
        if grouped {
            // One group per file of the build side (the zones or the points, as SedonaDB
            // chooses).
            let groups = metric(&plan, &["GeobergFilePairJoinExec"], "groups");
            assert!(groups == 4 || groups == 8, "{plan}");
        } else {
            assert!(plan.contains("ran whole"), "{plan}");
            assert!(metric(&plan, &join, "spill_count") > 0, "{plan}");
        }
        let got = s
            .sql(sql)
            .unwrap_or_else(|e| panic!("groups of {group_bytes} bytes: {e}"));
        assert_eq!(pairs(&got), expected, "groups of {group_bytes} bytes");
    }
}
