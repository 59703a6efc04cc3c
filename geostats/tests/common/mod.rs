//! Test-only WKB writer with Z/M, both byte orders, ISO and EWKB codes, plus proptest
//! strategies. geo-types has no Z/M, so these tests build coordinates themselves and use the
//! `wkb` crate as an independent reader and writer.
#![allow(dead_code)]

use proptest::prelude::*;

/// A geometry whose coordinates all have the same number of values (2, 3 or 4).
#[derive(Debug, Clone)]
pub enum G {
    /// An empty point is `None` (written as NaN coordinates).
    Point(Option<Vec<f64>>),
    LineString(Vec<Vec<f64>>),
    Polygon(Vec<Vec<Vec<f64>>>),
    MultiPoint(Vec<Option<Vec<f64>>>),
    MultiLineString(Vec<Vec<Vec<f64>>>),
    MultiPolygon(Vec<Vec<Vec<Vec<f64>>>>),
    Collection(Vec<G>),
}

#[derive(Debug, Clone, Copy)]
pub struct Encoding {
    pub big_endian: bool,
    pub z: bool,
    pub m: bool,
    /// EWKB type flags instead of ISO codes.
    pub ewkb: bool,
    /// Written on the outermost geometry only (EWKB).
    pub srid: Option<i32>,
}

impl Encoding {
    pub fn dims(&self) -> usize {
        2 + self.z as usize + self.m as usize
    }
}

fn u32b(out: &mut Vec<u8>, v: u32, be: bool) {
    out.extend(if be { v.to_be_bytes() } else { v.to_le_bytes() });
}

fn f64b(out: &mut Vec<u8>, v: f64, be: bool) {
    out.extend(if be { v.to_be_bytes() } else { v.to_le_bytes() });
}

fn header(out: &mut Vec<u8>, kind: u32, e: &Encoding, top: bool) {
    out.push(if e.big_endian { 0 } else { 1 });
    let srid = if top { e.srid } else { None };
    let code = if e.ewkb || srid.is_some() {
        kind | if e.z { 0x8000_0000 } else { 0 }
            | if e.m { 0x4000_0000 } else { 0 }
            | if srid.is_some() { 0x2000_0000 } else { 0 }
    } else {
        kind + match (e.z, e.m) {
            (false, false) => 0,
            (true, false) => 1000,
            (false, true) => 2000,
            (true, true) => 3000,
        }
    };
    u32b(out, code, e.big_endian);
    if let Some(s) = srid {
        u32b(out, s as u32, e.big_endian);
    }
}

fn coords(out: &mut Vec<u8>, cs: &[Vec<f64>], e: &Encoding) {
    u32b(out, cs.len() as u32, e.big_endian);
    for c in cs {
        for v in c {
            f64b(out, *v, e.big_endian);
        }
    }
}

fn point(out: &mut Vec<u8>, p: &Option<Vec<f64>>, e: &Encoding, top: bool) {
    header(out, 1, e, top);
    match p {
        Some(c) => c.iter().for_each(|v| f64b(out, *v, e.big_endian)),
        None => (0..e.dims()).for_each(|_| f64b(out, f64::NAN, e.big_endian)),
    }
}

fn polygon(out: &mut Vec<u8>, rings: &[Vec<Vec<f64>>], e: &Encoding, top: bool) {
    header(out, 3, e, top);
    u32b(out, rings.len() as u32, e.big_endian);
    rings.iter().for_each(|r| coords(out, r, e));
}

fn line(out: &mut Vec<u8>, cs: &[Vec<f64>], e: &Encoding, top: bool) {
    header(out, 2, e, top);
    coords(out, cs, e);
}

pub fn write(g: &G, e: &Encoding) -> Vec<u8> {
    let mut out = Vec::new();
    write_into(&mut out, g, e, true);
    out
}

fn write_into(out: &mut Vec<u8>, g: &G, e: &Encoding, top: bool) {
    let be = e.big_endian;
    match g {
        G::Point(p) => point(out, p, e, top),
        G::LineString(cs) => line(out, cs, e, top),
        G::Polygon(rings) => polygon(out, rings, e, top),
        G::MultiPoint(ps) => {
            header(out, 4, e, top);
            u32b(out, ps.len() as u32, be);
            ps.iter().for_each(|p| point(out, p, e, false));
        }
        G::MultiLineString(ls) => {
            header(out, 5, e, top);
            u32b(out, ls.len() as u32, be);
            ls.iter().for_each(|l| line(out, l, e, false));
        }
        G::MultiPolygon(ps) => {
            header(out, 6, e, top);
            u32b(out, ps.len() as u32, be);
            ps.iter().for_each(|p| polygon(out, p, e, false));
        }
        G::Collection(gs) => {
            header(out, 7, e, top);
            u32b(out, gs.len() as u32, be);
            gs.iter().for_each(|g| write_into(out, g, e, false));
        }
    }
}

/// Every coordinate tuple of the geometry (empty points contribute none).
pub fn all_coords(g: &G) -> Vec<Vec<f64>> {
    let mut out = Vec::new();
    collect(g, &mut out);
    out
}

fn collect(g: &G, out: &mut Vec<Vec<f64>>) {
    match g {
        G::Point(p) => out.extend(p.iter().cloned()),
        G::LineString(cs) => out.extend(cs.iter().cloned()),
        G::Polygon(rs) => rs.iter().for_each(|r| out.extend(r.iter().cloned())),
        G::MultiPoint(ps) => out.extend(ps.iter().flatten().cloned()),
        G::MultiLineString(ls) => ls.iter().for_each(|l| out.extend(l.iter().cloned())),
        G::MultiPolygon(ps) => ps
            .iter()
            .flatten()
            .for_each(|r| out.extend(r.iter().cloned())),
        G::Collection(gs) => gs.iter().for_each(|g| collect(g, out)),
    }
}

/// The expected box: min/max per dimension skipping NaN; none when X or Y has no value.
pub fn expected_bbox(g: &G, e: &Encoding) -> Option<geoberg_geostats::BBox> {
    let cs = all_coords(g);
    let range = |i: usize| {
        let vals: Vec<f64> = cs.iter().map(|c| c[i]).filter(|v| !v.is_nan()).collect();
        (!vals.is_empty()).then(|| {
            geoberg_geostats::Interval::new(
                vals.iter().cloned().fold(f64::INFINITY, f64::min),
                vals.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
            )
        })
    };
    let (x, y) = (range(0)?, range(1)?);
    let mut b = geoberg_geostats::BBox::new(x.min, y.min, x.max, y.max);
    b.z = if e.z { range(2) } else { None };
    b.m = if e.m {
        range(if e.z { 3 } else { 2 })
    } else {
        None
    };
    Some(b)
}

pub fn value() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![
        8 => -1.0e4..1.0e4f64,
        1 => Just(f64::NAN),
        1 => Just(0.0f64),
        1 => Just(-0.0f64),
    ]
}

pub fn coord(dims: usize) -> impl Strategy<Value = Vec<f64>> + Clone {
    proptest::collection::vec(value(), dims)
}

pub fn coords_of(dims: usize, max: usize) -> impl Strategy<Value = Vec<Vec<f64>>> + Clone {
    proptest::collection::vec(coord(dims), 0..max)
}

pub fn geometry(dims: usize) -> impl Strategy<Value = G> {
    let pt = proptest::option::weighted(0.9, coord(dims));
    let rings = proptest::collection::vec(coords_of(dims, 8), 0..3);
    let leaf = prop_oneof![
        pt.clone().prop_map(G::Point),
        coords_of(dims, 10).prop_map(G::LineString),
        rings.clone().prop_map(G::Polygon),
        proptest::collection::vec(pt, 0..5).prop_map(G::MultiPoint),
        proptest::collection::vec(coords_of(dims, 6), 0..4).prop_map(G::MultiLineString),
        proptest::collection::vec(rings, 0..3).prop_map(G::MultiPolygon),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        proptest::collection::vec(inner, 0..4).prop_map(G::Collection)
    })
}

/// Dimensions, byte order and EWKB/ISO choice, then a geometry of those dimensions.
pub fn encoded_geometry() -> impl Strategy<Value = (G, Encoding)> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(any::<i32>()),
    )
        .prop_flat_map(|(big_endian, z, m, ewkb, srid)| {
            let e = Encoding {
                big_endian,
                z,
                m,
                ewkb,
                srid: if ewkb { srid } else { None },
            };
            geometry(e.dims()).prop_map(move |g| (g, e))
        })
}

/// Little-endian XY POINT.
pub fn point_wkb(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1, 1, 0, 0, 0];
    v.extend(x.to_le_bytes());
    v.extend(y.to_le_bytes());
    v
}
