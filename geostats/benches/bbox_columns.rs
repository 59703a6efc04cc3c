//! `bbox_columns` (four Float64 bbox columns from a WKB BinaryArray) against the two `wkb`-crate
//! baselines, in the same run, on points, polygons and multilinestrings larger than L3; and the
//! throughput of geography bounds (values/s: per value with `geography_bbox_of_wkb`, per row
//! group with `GeographyBBoxAccumulator`) beside the planar accumulator and `bbox_columns`.
//!
//! cargo bench -p geoberg-geostats --bench bbox_columns -- --warm-up-time 1 --measurement-time 3
//! cargo bench -p geoberg-geostats --bench bbox_columns -- geography_bounds --warm-up-time 1 --measurement-time 3

use std::hint::black_box;

use arrow_array::{Array, BinaryArray};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use geo::BoundingRect;
use geo_traits::{
    CoordTrait, GeometryCollectionTrait, GeometryTrait, GeometryType, LineStringTrait,
    MultiLineStringTrait, MultiPointTrait, MultiPolygonTrait, PointTrait, PolygonTrait,
    to_geo::ToGeoGeometry,
};
use geoberg_geostats::{
    BBoxAccumulator, BBoxColumnsBuilder, GeographyBBoxAccumulator, bbox_columns,
    geography_bbox_of_wkb,
};

/// Deterministic 64-bit generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }

    fn int(&mut self, lo: u32, hi: u32) -> u32 {
        lo + (self.next() % u64::from(hi - lo + 1)) as u32
    }
}

fn header(out: &mut Vec<u8>, kind: u32) {
    out.push(1);
    out.extend(kind.to_le_bytes());
}

fn coords(out: &mut Vec<u8>, cs: &[(f64, f64)]) {
    out.extend((cs.len() as u32).to_le_bytes());
    for (x, y) in cs {
        out.extend(x.to_le_bytes());
        out.extend(y.to_le_bytes());
    }
}

/// 21-byte POINTs, x in [-180, 180), y in [-90, 90).
fn points(n: usize, rng: &mut Rng) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            let mut v = Vec::with_capacity(21);
            header(&mut v, 1);
            v.extend(rng.uniform(-180.0, 180.0).to_le_bytes());
            v.extend(rng.uniform(-90.0, 90.0).to_le_bytes());
            v
        })
        .collect()
}

/// POLYGONs of one closed ring of 20..=60 vertices: jittered circles of radius 0.001..1 degree.
fn polygons(n: usize, rng: &mut Rng) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            let (cx, cy) = (rng.uniform(-179.0, 179.0), rng.uniform(-89.0, 89.0));
            let r = rng.uniform(0.001, 1.0);
            let k = rng.int(20, 60);
            let mut ring: Vec<(f64, f64)> = (0..k)
                .map(|i| {
                    let a = std::f64::consts::TAU * f64::from(i) / f64::from(k);
                    let rr = r * rng.uniform(0.8, 1.2);
                    (cx + rr * a.cos(), cy + rr * a.sin())
                })
                .collect();
            ring.push(ring[0]);
            let mut v = Vec::new();
            header(&mut v, 3);
            v.extend(1u32.to_le_bytes());
            coords(&mut v, &ring);
            v
        })
        .collect()
}

/// MULTILINESTRINGs of 3 random-walk parts of 10..=30 points.
fn multilines(n: usize, rng: &mut Rng) -> Vec<Vec<u8>> {
    (0..n)
        .map(|_| {
            let mut v = Vec::new();
            header(&mut v, 5);
            v.extend(3u32.to_le_bytes());
            for _ in 0..3 {
                let (mut x, mut y) = (rng.uniform(-179.0, 179.0), rng.uniform(-89.0, 89.0));
                let line: Vec<(f64, f64)> = (0..rng.int(10, 30))
                    .map(|_| {
                        x += rng.uniform(-0.01, 0.01);
                        y += rng.uniform(-0.01, 0.01);
                        (x, y)
                    })
                    .collect();
                header(&mut v, 2);
                coords(&mut v, &line);
            }
            v
        })
        .collect()
}

/// Rows per record batch in the timed loops.
const BATCH_ROWS: usize = 8192;

struct Columns([Vec<f64>; 4]);

impl Columns {
    fn new(n: usize) -> Self {
        Columns(std::array::from_fn(|_| Vec::with_capacity(n)))
    }

    fn push(&mut self, b: [f64; 4]) {
        for (c, v) in self.0.iter_mut().zip(b) {
            c.push(v);
        }
    }
}

/// Baseline 1: `wkb` read -> geo-types -> geo `BoundingRect`.
fn wkb_geo_bounding_rect(a: &BinaryArray) -> Columns {
    let mut out = Columns::new(a.len());
    for v in a.iter().flatten() {
        let g = wkb::reader::read_wkb(v).unwrap();
        out.push(match g.try_to_geometry().and_then(|g| g.bounding_rect()) {
            Some(r) => [r.min().x, r.min().y, r.max().x, r.max().y],
            None => [f64::NAN; 4],
        });
    }
    out
}

fn add(b: &mut [f64; 4], x: f64, y: f64) {
    b[0] = if x < b[0] { x } else { b[0] };
    b[1] = if y < b[1] { y } else { b[1] };
    b[2] = if x > b[2] { x } else { b[2] };
    b[3] = if y > b[3] { y } else { b[3] };
}

fn walk_line(l: &impl LineStringTrait<T = f64>, b: &mut [f64; 4]) {
    for c in l.coords() {
        add(b, c.x(), c.y());
    }
}

fn walk_polygon(p: &impl PolygonTrait<T = f64>, b: &mut [f64; 4]) {
    if let Some(e) = p.exterior() {
        walk_line(&e, b);
    }
    for r in p.interiors() {
        walk_line(&r, b);
    }
}

fn walk(g: &wkb::reader::Wkb<'_>, b: &mut [f64; 4]) {
    match g.as_type() {
        GeometryType::Point(p) => {
            if let Some(c) = p.coord() {
                add(b, c.x(), c.y());
            }
        }
        GeometryType::LineString(l) => walk_line(l, b),
        GeometryType::Polygon(p) => walk_polygon(p, b),
        GeometryType::MultiPoint(mp) => {
            for p in mp.points() {
                if let Some(c) = p.coord() {
                    add(b, c.x(), c.y());
                }
            }
        }
        GeometryType::MultiLineString(ml) => ml.line_strings().for_each(|l| walk_line(&l, b)),
        GeometryType::MultiPolygon(mp) => mp.polygons().for_each(|p| walk_polygon(&p, b)),
        GeometryType::GeometryCollection(gc) => gc.geometries().for_each(|g| walk(g, b)),
        _ => {}
    }
}

/// Baseline 2: `wkb` read + a geo-traits coordinate loop (compare-select min/max).
fn wkb_geo_traits_loop(a: &BinaryArray) -> Columns {
    let mut out = Columns::new(a.len());
    for v in a.iter().flatten() {
        let g = wkb::reader::read_wkb(v).unwrap();
        let mut b = [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ];
        walk(&g, &mut b);
        out.push(if b[0] <= b[2] { b } else { [f64::NAN; 4] });
    }
    out
}

fn bench(c: &mut Criterion) {
    let mut rng = Rng(42);
    // Each set is larger than the 32 MiB L3 of the reference machine.
    let sets = [
        ("points", points(2_000_000, &mut rng)),
        ("polygons", polygons(100_000, &mut rng)),
        ("multilinestrings", multilines(60_000, &mut rng)),
    ];
    for (name, values) in &sets {
        let array = BinaryArray::from_iter_values(values.iter());
        let bytes = array.value_data().len() as u64;
        // The kernel and both baselines agree before anything is timed.
        let ours = bbox_columns(&array).unwrap();
        assert_eq!(
            BBoxColumnsBuilder::new().build(&array).unwrap(),
            ours,
            "{name}"
        );
        let base = wkb_geo_bounding_rect(&array);
        let traits = wkb_geo_traits_loop(&array);
        for (k, col) in [&ours.min_x, &ours.min_y, &ours.max_x, &ours.max_y]
            .into_iter()
            .enumerate()
        {
            assert_eq!(col.values().as_ref(), &base.0[k][..], "{name} column {k}");
            assert_eq!(col.values().as_ref(), &traits.0[k][..], "{name} column {k}");
        }
        // Writers see record batches, not one huge array: time the kernel over 8192-row slices
        // (zero-copy), so the output buffers are reused by the allocator as in a real write path
        // instead of being page-faulted in afresh (which cost every method about 40 ns/row here).
        let batches: Vec<BinaryArray> = (0..array.len())
            .step_by(BATCH_ROWS)
            .map(|i| array.slice(i, BATCH_ROWS.min(array.len() - i)))
            .collect();
        // The timed batches agree with the whole column, through a reused builder.
        let mut builder = BBoxColumnsBuilder::new();
        for (i, a) in batches.iter().enumerate() {
            let cols = builder.build(a).unwrap();
            let whole = [&ours.min_x, &ours.min_y, &ours.max_x, &ours.max_y];
            let batch = [&cols.min_x, &cols.min_y, &cols.max_x, &cols.max_y];
            for (w, b) in whole.into_iter().zip(batch) {
                assert_eq!(&w.slice(i * BATCH_ROWS, a.len()), b, "{name} batch {i}");
            }
            builder.recycle(cols);
        }
        let mut g = c.benchmark_group(format!("bbox_columns/{name}"));
        g.sample_size(10);
        g.throughput(Throughput::Bytes(bytes));
        g.bench_function("geostats", |b| {
            b.iter(|| {
                for a in &batches {
                    black_box(bbox_columns(black_box(a)).unwrap());
                }
            })
        });
        // What a writer keeping one builder per column does: the output buffers of one batch
        // hold the next batch's columns once it has been written.
        g.bench_function("geostats_builder", |b| {
            b.iter(|| {
                for a in &batches {
                    let cols = builder.build(black_box(a)).unwrap();
                    builder.recycle(black_box(cols));
                }
            })
        });
        g.bench_function("wkb_geo_traits_loop", |b| {
            b.iter(|| {
                for a in &batches {
                    black_box(wkb_geo_traits_loop(black_box(a)));
                }
            })
        });
        g.bench_function("wkb_to_geo_bounding_rect", |b| {
            b.iter(|| {
                for a in &batches {
                    black_box(wkb_geo_bounding_rect(black_box(a)));
                }
            })
        });
        g.finish();

        // Geography bounds (great-circle edges, poles, wrapping longitudes) in values per second,
        // beside the planar paths over the same batches.
        let mut g = c.benchmark_group(format!("geography_bounds/{name}"));
        g.sample_size(10);
        g.throughput(Throughput::Elements(array.len() as u64));
        g.bench_function("planar_bbox_columns", |b| {
            b.iter(|| {
                for a in &batches {
                    black_box(bbox_columns(black_box(a)).unwrap());
                }
            })
        });
        g.bench_function("planar_accumulator", |b| {
            b.iter(|| {
                let mut acc = BBoxAccumulator::new();
                for a in &batches {
                    acc.add_wkb_array(black_box(a)).unwrap();
                }
                black_box(acc.finish())
            })
        });
        g.bench_function("geography_accumulator", |b| {
            b.iter(|| {
                let mut acc = GeographyBBoxAccumulator::new();
                for a in &batches {
                    acc.add_wkb_array(black_box(a)).unwrap();
                }
                black_box(acc.finish())
            })
        });
        g.bench_function("geography_bbox_of_wkb", |b| {
            b.iter(|| {
                for v in values {
                    black_box(geography_bbox_of_wkb(black_box(v)).unwrap());
                }
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
