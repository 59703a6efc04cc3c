//! Plain reference implementations the fast paths are checked against.
#![allow(dead_code)]

use geoberg_hilbert::{Bounds, Kernel};

/// Wikipedia's `xy2d` on a `2^p × 2^p` grid, with branches, one bit per step.
pub fn xy2d(p: u8, x: u32, y: u32) -> u64 {
    let n: u64 = 1 << p;
    let (mut x, mut y) = (u64::from(x), u64::from(y));
    let mut d = 0u64;
    let mut s = n / 2;
    while s > 0 {
        let rx = u64::from(x & s > 0);
        let ry = u64::from(y & s > 0);
        d += s * s * ((3 * rx) ^ ry);
        // rot
        if ry == 0 {
            if rx == 1 {
                x = n - 1 - x;
                y = n - 1 - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        s /= 2;
    }
    d
}

/// Wikipedia's `d2xy`.
pub fn d2xy(p: u8, d: u64) -> (u32, u32) {
    let n: u64 = 1 << p;
    let (mut x, mut y) = (0u64, 0u64);
    let mut t = d;
    let mut s = 1u64;
    while s < n {
        let rx = 1 & (t / 2);
        let ry = 1 & (t ^ rx);
        if ry == 0 {
            if rx == 1 {
                x = s - 1 - x;
                y = s - 1 - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        x += s * rx;
        y += s * ry;
        t /= 4;
        s *= 2;
    }
    (x as u32, y as u32)
}

/// The documented cell: `floor((v - min) * (2^p / width))`, `max` in the last cell.
pub fn cell(p: u8, v: f64, min: f64, max: f64) -> u32 {
    let t = ((v - min) * ((1u64 << p) as f64 / (max - min))).floor();
    (t.max(0.0) as u64).min((1u64 << p) - 1) as u32
}

pub fn cells(p: u8, b: &Bounds, x: f64, y: f64) -> (u32, u32) {
    (cell(p, x, b.min_x, b.max_x), cell(p, y, b.min_y, b.max_y))
}

/// Morton with x in the higher bit of each pair, one bit at a time.
pub fn morton(p: u8, x: u32, y: u32) -> u64 {
    let mut key = 0u64;
    for bit in (0..p).rev() {
        key = (key << 2) | (u64::from((x >> bit) & 1) << 1) | u64::from((y >> bit) & 1);
    }
    key
}

/// GeoHash by interval bisection, as in the original description.
pub fn geohash(lon: f64, lat: f64, len: usize) -> String {
    const ALPHABET: &[u8] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let (mut lon_lo, mut lon_hi, mut lat_lo, mut lat_hi) = (-180.0, 180.0, -90.0, 90.0);
    let mut out = String::new();
    let mut even = true;
    let (mut bits, mut ch) = (0, 0usize);
    while out.len() < len {
        if even {
            let mid = (lon_lo + lon_hi) / 2.0;
            if lon >= mid {
                ch = ch * 2 + 1;
                lon_lo = mid;
            } else {
                ch *= 2;
                lon_hi = mid;
            }
        } else {
            let mid = (lat_lo + lat_hi) / 2.0;
            if lat >= mid {
                ch = ch * 2 + 1;
                lat_lo = mid;
            } else {
                ch *= 2;
                lat_hi = mid;
            }
        }
        even = !even;
        bits += 1;
        if bits == 5 {
            out.push(char::from(ALPHABET[ch]));
            bits = 0;
            ch = 0;
        }
    }
    out
}

/// Every kernel this CPU can run (always includes the portable one).
pub fn kernels() -> Vec<Kernel> {
    [Kernel::Portable, Kernel::Avx2]
        .into_iter()
        .filter(|k| k.is_available())
        .collect()
}
