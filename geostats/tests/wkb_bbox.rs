//! Properties of the WKB scanner against independent oracles: geo's `BoundingRect` on geo-types
//! geometries written by the `wkb` crate (XY), and a direct min/max over generated coordinates
//! (Z/M, NaN, EWKB), re-encoded by the `wkb` crate in the other byte order.

mod common;

use common::{Encoding, all_coords, encoded_geometry, expected_bbox, write};
use geo::BoundingRect;
use geo_types::{
    Coord, Geometry, GeometryCollection, LineString, MultiLineString, MultiPoint, MultiPolygon,
    Point, Polygon,
};
use geoberg_geostats::{BBox, bbox_of_wkb, wkb_info};
use proptest::prelude::*;
use wkb::Endianness;
use wkb::writer::{WriteOptions, write_geometry};

fn geo_coord() -> impl Strategy<Value = Coord<f64>> {
    (-1.0e6..1.0e6f64, -1.0e6..1.0e6f64).prop_map(|(x, y)| Coord { x, y })
}

fn geo_line(max: usize) -> impl Strategy<Value = LineString<f64>> {
    proptest::collection::vec(geo_coord(), 0..max).prop_map(LineString::new)
}

fn geo_polygon() -> impl Strategy<Value = Polygon<f64>> {
    // geo's BoundingRect reads only the exterior ring, which is right for valid polygons, so
    // holes are built from points between exterior vertices (inside the exterior's box).
    let lerp = (
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        0.0..=1.0f64,
    );
    let holes = proptest::collection::vec(proptest::collection::vec(lerp, 0..6), 0..3);
    (geo_line(12), holes).prop_map(|(exterior, holes)| {
        let ext = &exterior.0;
        let holes = if ext.is_empty() {
            // (`wkb` 0.9.3 would also write such holes after a ring count of 0.)
            vec![]
        } else {
            holes
                .into_iter()
                .map(|h| {
                    LineString::new(
                        h.into_iter()
                            .map(|(i, j, t)| {
                                let (a, b) = (ext[i.index(ext.len())], ext[j.index(ext.len())]);
                                let l =
                                    |p: f64, q: f64| (p + t * (q - p)).clamp(p.min(q), p.max(q));
                                Coord {
                                    x: l(a.x, b.x),
                                    y: l(a.y, b.y),
                                }
                            })
                            .collect(),
                    )
                })
                .collect()
        };
        Polygon::new(exterior, holes)
    })
}

fn geo_geometry() -> impl Strategy<Value = Geometry<f64>> {
    let leaf = prop_oneof![
        geo_coord().prop_map(|c| Geometry::Point(Point(c))),
        geo_line(16).prop_map(Geometry::LineString),
        geo_polygon().prop_map(Geometry::Polygon),
        proptest::collection::vec(geo_coord().prop_map(Point), 0..6)
            .prop_map(|p| Geometry::MultiPoint(MultiPoint(p))),
        proptest::collection::vec(geo_line(8), 0..4)
            .prop_map(|l| Geometry::MultiLineString(MultiLineString(l))),
        proptest::collection::vec(geo_polygon(), 0..3)
            .prop_map(|p| Geometry::MultiPolygon(MultiPolygon(p))),
    ];
    leaf.prop_recursive(3, 32, 4, |inner| {
        proptest::collection::vec(inner, 0..4)
            .prop_map(|g| Geometry::GeometryCollection(GeometryCollection(g)))
    })
}

fn to_wkb(g: &impl geo_traits::GeometryTrait<T = f64>, endianness: Endianness) -> Vec<u8> {
    let mut out = Vec::new();
    write_geometry(&mut out, g, &WriteOptions { endianness }).unwrap();
    out
}

fn geo_coords(g: &Geometry<f64>) -> Vec<Coord<f64>> {
    use geo::CoordsIter;
    g.coords_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// XY: equals geo's BoundingRect, contains every coordinate, same in both byte orders.
    #[test]
    fn xy_matches_geo_bounding_rect(g in geo_geometry()) {
        let le = bbox_of_wkb(&to_wkb(&g, Endianness::LittleEndian)).unwrap();
        let be = bbox_of_wkb(&to_wkb(&g, Endianness::BigEndian)).unwrap();
        let expected = g.bounding_rect().map(|r| BBox::new(r.min().x, r.min().y, r.max().x, r.max().y));
        prop_assert_eq!(le, expected);
        prop_assert_eq!(be, le);
        for c in geo_coords(&g) {
            prop_assert!(le.unwrap().contains_point(c.x, c.y));
        }
        if let Some(b) = le {
            prop_assert!(b.is_valid());
        }
    }

    /// Z/M, NaN, EWKB and ISO codes: per-dimension min/max skipping NaN, no box without X or Y.
    #[test]
    fn all_dimensions_match_direct_min_max((g, e) in encoded_geometry()) {
        let bytes = write(&g, &e);
        let info = wkb_info(&bytes).unwrap();
        prop_assert_eq!(info.bbox, expected_bbox(&g, &e));
        prop_assert_eq!(info.srid, e.srid);
        if let Some(b) = info.bbox {
            prop_assert!(b.is_valid());
            for c in all_coords(&g) {
                prop_assert!(c[0].is_nan() || b.x().contains(c[0]));
                prop_assert!(c[1].is_nan() || b.y().contains(c[1]));
                if e.z && !c[2].is_nan() {
                    prop_assert!(b.z.unwrap().contains(c[2]));
                }
            }
            prop_assert_eq!(b.z.is_some(), e.z && b.z.is_some());
        }
    }

    /// The `wkb` crate reads our test encoding and re-writes it (ISO codes, other byte order):
    /// the box is unchanged. Checks the test writer and the scanner against a second writer.
    #[test]
    fn wkb_crate_rewrite_agrees((g, e) in encoded_geometry()) {
        let e = Encoding { ewkb: false, srid: None, ..e };
        let bytes = write(&g, &e);
        let parsed = wkb::reader::read_wkb(&bytes).unwrap();
        let other = if e.big_endian { Endianness::LittleEndian } else { Endianness::BigEndian };
        let rewritten = to_wkb(&parsed, other);
        prop_assert_eq!(bbox_of_wkb(&rewritten).unwrap(), bbox_of_wkb(&bytes).unwrap());
    }

    /// EWKB SRID round trip in both byte orders.
    #[test]
    fn ewkb_srid_round_trip(srid in any::<i32>(), big_endian in any::<bool>(), x in -180.0..180.0f64, y in -90.0..90.0f64) {
        let e = Encoding { big_endian, z: false, m: false, ewkb: true, srid: Some(srid) };
        let bytes = write(&common::G::Point(Some(vec![x, y])), &e);
        let info = wkb_info(&bytes).unwrap();
        prop_assert_eq!(info.srid, Some(srid));
        prop_assert_eq!(info.bbox, Some(BBox::point(x, y)));
    }

    /// Arbitrary bytes never panic.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = wkb_info(&bytes);
        let _ = geoberg_geostats::geography_bbox_of_wkb(&bytes);
    }

    /// Valid WKB with a corrupted byte, or cut short, never panics; truncation is an error.
    #[test]
    fn mutated_wkb_never_panics((g, e) in encoded_geometry(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = write(&g, &e);
        let i = at.index(bytes.len());
        prop_assert!(wkb_info(&bytes[..i]).is_err());
        bytes[i] = byte;
        let _ = wkb_info(&bytes);
    }
}
