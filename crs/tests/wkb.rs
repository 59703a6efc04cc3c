//! WKB reprojection: every OGC type in 2D/Z/M/ZM, ISO and EWKB, both byte orders; hostile bytes.

use arrow_array::{Array, BinaryArray, LargeBinaryArray};
use geoberg_crs::{Crs, MAX_WKB_DEPTH, Reprojection, lonlat_to_web_mercator};
use proptest::prelude::*;

#[derive(Clone, Copy, Debug)]
struct Layout {
    little_endian: bool,
    z: bool,
    m: bool,
    ewkb_srid: Option<u32>,
}

/// A tiny WKB writer for tests; records every coordinate it writes, in order.
struct Writer {
    layout: Layout,
    bytes: Vec<u8>,
    coords: Vec<[f64; 4]>,
    next: f64,
}

impl Writer {
    fn new(layout: Layout) -> Self {
        Writer {
            layout,
            bytes: Vec::new(),
            coords: Vec::new(),
            next: 0.0,
        }
    }
    fn u32(&mut self, v: u32) {
        let b = if self.layout.little_endian {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        };
        self.bytes.extend_from_slice(&b);
    }
    fn f64(&mut self, v: f64) {
        let b = if self.layout.little_endian {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        };
        self.bytes.extend_from_slice(&b);
    }
    fn header(&mut self, base: u32, top: bool) {
        self.bytes.push(u8::from(self.layout.little_endian));
        let l = self.layout;
        match l.ewkb_srid {
            Some(srid) => {
                let mut code = base;
                if l.z {
                    code |= 0x8000_0000;
                }
                if l.m {
                    code |= 0x4000_0000;
                }
                if top {
                    code |= 0x2000_0000;
                }
                self.u32(code);
                if top {
                    self.u32(srid);
                }
            }
            None => {
                let dims = match (l.z, l.m) {
                    (false, false) => 0,
                    (true, false) => 1,
                    (false, true) => 2,
                    (true, true) => 3,
                };
                self.u32(base + 1000 * dims);
            }
        }
    }
    fn coord(&mut self) {
        // Deterministic lon/lat spread over the globe; z/m distinct sentinels.
        self.next += 1.0;
        let lon = (self.next * 37.0) % 360.0 - 180.0;
        let lat = (self.next * 23.0) % 170.0 - 85.0;
        let c = [lon, lat, 1000.0 + self.next, -self.next];
        self.f64(c[0]);
        self.f64(c[1]);
        if self.layout.z {
            self.f64(c[2]);
        }
        if self.layout.m {
            self.f64(c[3]);
        }
        self.coords.push(c);
    }
    fn points(&mut self, n: u32) {
        self.u32(n);
        for _ in 0..n {
            self.coord();
        }
    }
    fn geometry(&mut self, base: u32, top: bool) {
        self.header(base, top);
        match base {
            1 => self.coord(),
            2 => self.points(3),
            3 => {
                self.u32(2);
                self.points(4);
                self.points(5);
            }
            4..=6 => {
                self.u32(2);
                self.geometry(base - 3, false);
                self.geometry(base - 3, false);
            }
            7 => {
                self.u32(3);
                self.geometry(1, false);
                self.geometry(6, false);
                self.geometry(7, false);
            }
            _ => unreachable!(),
        }
    }
}

fn build(base: u32, layout: Layout) -> Writer {
    let mut w = Writer::new(layout);
    if base == 7 {
        // A collection whose nested collection is empty, to stop the recursion.
        w.header(7, true);
        w.u32(2);
        w.geometry(3, false);
        w.header(7, false);
        w.u32(0);
    } else {
        w.geometry(base, true);
    }
    w
}

fn layouts() -> Vec<Layout> {
    let mut all = Vec::new();
    for little_endian in [true, false] {
        for (z, m) in [(false, false), (true, false), (false, true), (true, true)] {
            for ewkb_srid in [None, Some(4326)] {
                all.push(Layout {
                    little_endian,
                    z,
                    m,
                    ewkb_srid,
                });
            }
        }
    }
    all
}

fn read_f64(bytes: &[u8], at: usize, le: bool) -> f64 {
    let b: [u8; 8] = bytes[at..at + 8].try_into().unwrap();
    if le {
        f64::from_le_bytes(b)
    } else {
        f64::from_be_bytes(b)
    }
}

#[test]
fn every_type_dimension_byte_order_and_flavour() {
    let wgs84 = Crs::Epsg(4326);
    for base in 1..=7 {
        for layout in layouts() {
            let w = build(base, layout);
            let out = Reprojection::LonLatToWebMercator
                .transform_wkb(&w.bytes, &wgs84)
                .unwrap();
            assert_eq!(out.len(), w.bytes.len());
            // Compare against a re-encoding with the expected coordinates.
            let mut expected = w.bytes.clone();
            let stride = 8 * (2 + usize::from(layout.z) + usize::from(layout.m));
            let mut positions = Vec::new();
            // Find coordinate positions by walking our own writer again with markers: every
            // coordinate's x is unique, so locate it by value.
            for c in &w.coords {
                let x_bytes = if layout.little_endian {
                    c[0].to_le_bytes()
                } else {
                    c[0].to_be_bytes()
                };
                let at = w.bytes.windows(8).position(|win| win == x_bytes).unwrap();
                positions.push(at);
                let (x, y) = lonlat_to_web_mercator(c[0], c[1]).unwrap();
                let (bx, by) = if layout.little_endian {
                    (x.to_le_bytes(), y.to_le_bytes())
                } else {
                    (x.to_be_bytes(), y.to_be_bytes())
                };
                expected[at..at + 8].copy_from_slice(&bx);
                expected[at + 8..at + 16].copy_from_slice(&by);
            }
            if layout.ewkb_srid.is_some() {
                let srid = if layout.little_endian {
                    3857u32.to_le_bytes()
                } else {
                    3857u32.to_be_bytes()
                };
                expected[5..9].copy_from_slice(&srid);
            }
            assert_eq!(out, expected, "type {base} {layout:?}");
            for (c, &at) in w.coords.iter().zip(&positions) {
                if layout.z {
                    assert_eq!(read_f64(&out, at + 16, layout.little_endian), c[2]);
                }
                if layout.m {
                    let m_at = at + stride - 8;
                    assert_eq!(read_f64(&out, m_at, layout.little_endian), c[3]);
                }
            }
            // And back, in place.
            let mut back = out.clone();
            Reprojection::WebMercatorToLonLat
                .transform_wkb_in_place(&mut back, &Crs::Epsg(3857))
                .unwrap();
            for (c, &at) in w.coords.iter().zip(&positions) {
                assert!((read_f64(&back, at, layout.little_endian) - c[0]).abs() < 1e-9);
                assert!((read_f64(&back, at + 8, layout.little_endian) - c[1]).abs() < 1e-9);
            }
            if layout.ewkb_srid.is_some() {
                assert_eq!(back[5..9], w.bytes[5..9], "SRID relabelled back to 4326");
            }
        }
    }
}

#[test]
fn empty_geometries_stay_empty() {
    let mut point = vec![1u8, 1, 0, 0, 0];
    point.extend_from_slice(&f64::NAN.to_le_bytes());
    point.extend_from_slice(&f64::NAN.to_le_bytes());
    let out = Reprojection::LonLatToWebMercator
        .transform_wkb(&point, &Crs::OgcCrs84)
        .unwrap();
    assert_eq!(out, point);
    let line = [1u8, 2, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(
        Reprojection::LonLatToWebMercator
            .transform_wkb(&line, &Crs::OgcCrs84)
            .unwrap(),
        line
    );
}

#[test]
fn domain_errors_leave_the_buffer_untouched() {
    let mut w = Writer::new(Layout {
        little_endian: true,
        z: false,
        m: false,
        ewkb_srid: None,
    });
    w.header(2, true);
    w.u32(2);
    w.f64(10.0);
    w.f64(10.0);
    w.f64(10.0);
    w.f64(90.0);
    let mut bytes = w.bytes.clone();
    let err = Reprojection::LonLatToWebMercator
        .transform_wkb_in_place(&mut bytes, &Crs::Epsg(4326))
        .unwrap_err();
    assert_eq!(err.code(), "ST_LATITUDE_OUT_OF_DOMAIN");
    assert!(err.to_string().contains("#1"));
    assert_eq!(bytes, w.bytes);
}

#[test]
fn ewkb_srid_must_match_the_source() {
    let w = build(
        1,
        Layout {
            little_endian: true,
            z: false,
            m: false,
            ewkb_srid: Some(4326),
        },
    );
    let err = Reprojection::WebMercatorToLonLat
        .transform_wkb(&w.bytes, &Crs::Epsg(3857))
        .unwrap_err();
    assert_eq!(err.code(), "ST_WKB_SRID_MISMATCH");
    assert!(err.to_string().contains("4326") && err.to_string().contains("EPSG:3857"));
}

#[test]
fn nested_srids_as_jts_writes_them() {
    // GEOMETRYCOLLECTION with SRID 4326 holding POINT (10 20) with SRID `member`.
    let collection = |member: u32| {
        let mut v = vec![1u8];
        for w in [0x2000_0007u32, 4326, 1] {
            v.extend(w.to_le_bytes());
        }
        v.push(1);
        for w in [0x2000_0001u32, member] {
            v.extend(w.to_le_bytes());
        }
        v.extend(10f64.to_le_bytes());
        v.extend(20f64.to_le_bytes());
        v
    };
    let to_mercator =
        |w: &[u8]| Reprojection::LonLatToWebMercator.transform_wkb(w, &Crs::Epsg(4326));
    // The member repeats the outer SRID: both are relabelled.
    let out = to_mercator(&collection(4326)).unwrap();
    assert_eq!(u32::from_le_bytes(out[5..9].try_into().unwrap()), 3857);
    assert_eq!(u32::from_le_bytes(out[18..22].try_into().unwrap()), 3857);
    // SRID 0 on the member says nothing: accepted and left alone.
    let out = to_mercator(&collection(0)).unwrap();
    assert_eq!(u32::from_le_bytes(out[18..22].try_into().unwrap()), 0);
    // Another SRID is a mismatch.
    let err = to_mercator(&collection(3857)).unwrap_err();
    assert_eq!(err.code(), "ST_WKB_SRID_MISMATCH");
}

#[test]
fn malformed_values_give_typed_errors() {
    let good = build(
        6,
        Layout {
            little_endian: false,
            z: true,
            m: false,
            ewkb_srid: None,
        },
    )
    .bytes;
    for len in 0..good.len() {
        let err = Reprojection::LonLatToWebMercator
            .transform_wkb(&good[..len], &Crs::OgcCrs84)
            .unwrap_err();
        assert_eq!(err.code(), "ST_WKB_TRUNCATED", "prefix {len}");
    }
    let mut trailing = good.clone();
    trailing.push(0);
    assert_eq!(
        Reprojection::Identity
            .transform_wkb(&trailing, &Crs::OgcCrs84)
            .unwrap_err()
            .code(),
        "ST_WKB_TRAILING_BYTES"
    );
    let mut order = good.clone();
    order[0] = 2;
    assert_eq!(
        Reprojection::Identity
            .transform_wkb(&order, &Crs::OgcCrs84)
            .unwrap_err()
            .code(),
        "ST_WKB_BYTE_ORDER"
    );
    for code in [0u32, 8, 17, 4001, 0x8000_0000 | 1001, 0x1000_0001] {
        let mut v = vec![1u8];
        v.extend_from_slice(&code.to_le_bytes());
        v.extend_from_slice(&[0; 32]);
        let err = Reprojection::Identity
            .transform_wkb(&v, &Crs::OgcCrs84)
            .unwrap_err();
        assert_eq!(err.code(), "ST_WKB_GEOMETRY_TYPE", "code {code}");
        assert!(err.to_string().contains(&code.to_string()));
    }
    // A MultiPoint holding a LineString.
    let mut v = vec![1u8, 4, 0, 0, 0, 1, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0];
    let err = Reprojection::Identity
        .transform_wkb(&v, &Crs::OgcCrs84)
        .unwrap_err();
    assert_eq!(err.code(), "ST_WKB_MEMBER_TYPE");
    assert!(err.to_string().contains("LineString inside a MultiPoint"));
    // A huge count is caught before any loop runs.
    v = vec![1u8, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
    let err = Reprojection::Identity
        .transform_wkb(&v, &Crs::OgcCrs84)
        .unwrap_err();
    assert_eq!(err.code(), "ST_WKB_TRUNCATED");
    // Collections nested past the limit.
    let mut deep = Vec::new();
    for _ in 0..=MAX_WKB_DEPTH + 1 {
        deep.extend_from_slice(&[1u8, 7, 0, 0, 0, 1, 0, 0, 0]);
    }
    let err = Reprojection::Identity
        .transform_wkb(&deep, &Crs::OgcCrs84)
        .unwrap_err();
    assert_eq!(err.code(), "ST_WKB_TOO_DEEP");
}

#[test]
fn arrow_binary_arrays_including_slices() {
    let a = build(
        3,
        Layout {
            little_endian: true,
            z: false,
            m: true,
            ewkb_srid: None,
        },
    )
    .bytes;
    let b = build(
        5,
        Layout {
            little_endian: false,
            z: true,
            m: true,
            ewkb_srid: Some(4326),
        },
    )
    .bytes;
    let array = BinaryArray::from(vec![
        Some(a.as_slice()),
        None,
        Some(b.as_slice()),
        Some(a.as_slice()),
    ]);
    let sliced = array.slice(1, 3);
    let out = Reprojection::LonLatToWebMercator
        .transform_wkb_array(&sliced, &Crs::Epsg(4326))
        .unwrap();
    assert_eq!(out.len(), 3);
    assert!(out.is_null(0));
    let r = Reprojection::LonLatToWebMercator;
    assert_eq!(
        out.value(1),
        r.transform_wkb(&b, &Crs::Epsg(4326)).unwrap().as_slice()
    );
    assert_eq!(
        out.value(2),
        r.transform_wkb(&a, &Crs::Epsg(4326)).unwrap().as_slice()
    );

    let large = LargeBinaryArray::from(vec![a.as_slice(), &a[..10]]);
    let err = r.transform_wkb_array(&large, &Crs::Epsg(4326)).unwrap_err();
    assert_eq!(err.code(), "ST_WKB_TRUNCATED");
    assert!(err.to_string().starts_with("row 1:"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        for r in [Reprojection::LonLatToWebMercator, Reprojection::WebMercatorToLonLat, Reprojection::Identity] {
            let _ = r.transform_wkb(&bytes, &Crs::Srid(4326));
        }
    }

    #[test]
    fn mutated_valid_values_never_panic(
        base in 1u32..=7,
        layout in 0usize..16,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let mut bytes = build(base, layouts()[layout]).bytes;
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        let mut copy = bytes.clone();
        let result = Reprojection::LonLatToWebMercator.transform_wkb_in_place(&mut copy, &Crs::Epsg(4326));
        if result.is_err() {
            prop_assert_eq!(copy, bytes);
        }
    }
}
