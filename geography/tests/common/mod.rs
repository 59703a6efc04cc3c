//! WKB writers for the tests.
#![allow(dead_code)]

fn coords(out: &mut Vec<u8>, cs: &[(f64, f64)]) {
    out.extend((cs.len() as u32).to_le_bytes());
    for (x, y) in cs {
        out.extend(x.to_le_bytes());
        out.extend(y.to_le_bytes());
    }
}

pub fn point(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1, 1, 0, 0, 0];
    v.extend(x.to_le_bytes());
    v.extend(y.to_le_bytes());
    v
}

pub fn line(cs: &[(f64, f64)]) -> Vec<u8> {
    let mut v = vec![1, 2, 0, 0, 0];
    coords(&mut v, cs);
    v
}

pub fn polygon(rings: &[Vec<(f64, f64)>]) -> Vec<u8> {
    let mut v = vec![1, 3, 0, 0, 0];
    v.extend((rings.len() as u32).to_le_bytes());
    for r in rings {
        coords(&mut v, r);
    }
    v
}

/// A closed rectangle ring (counter-clockwise in lon/lat).
pub fn rect(x0: f64, y0: f64, x1: f64, y1: f64) -> Vec<(f64, f64)> {
    vec![(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]
}

/// The point `dist` degrees from `c` along `bearing` radians.
pub fn destination(c: (f64, f64), bearing: f64, dist: f64) -> (f64, f64) {
    let (la, lo, d) = (c.1.to_radians(), c.0.to_radians(), dist.to_radians());
    let la2 = (la.sin() * d.cos() + la.cos() * d.sin() * bearing.cos()).asin();
    let lo2 = lo + (bearing.sin() * d.sin() * la.cos()).atan2(d.cos() - la.sin() * la2.sin());
    (
        (lo2.to_degrees() + 180.0).rem_euclid(360.0) - 180.0,
        la2.to_degrees(),
    )
}

pub fn unit(p: (f64, f64)) -> [f64; 3] {
    let (lo, la) = (p.0.to_radians(), p.1.to_radians());
    [la.cos() * lo.cos(), la.cos() * lo.sin(), la.sin()]
}
