//! Each kind of malformed WKB gives its typed error with the right byte offset.

mod common;

use common::point_wkb;
use geoberg_geostats::{GeostatsError, MAX_NESTING_DEPTH, bbox_of_wkb, wkb_info};

fn le(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn empty_buffer_is_truncated() {
    assert_eq!(
        bbox_of_wkb(&[]),
        Err(GeostatsError::Truncated {
            offset: 0,
            needed: 1,
            available: 0
        })
    );
}

#[test]
fn truncated_point() {
    let p = point_wkb(1.0, 2.0);
    assert_eq!(
        bbox_of_wkb(&p[..20]),
        Err(GeostatsError::Truncated {
            offset: 5,
            needed: 16,
            available: 15
        })
    );
}

#[test]
fn bad_byte_order() {
    let mut p = point_wkb(1.0, 2.0);
    p[0] = b'P';
    assert_eq!(
        bbox_of_wkb(&p),
        Err(GeostatsError::InvalidByteOrder {
            offset: 0,
            value: b'P'
        })
    );
}

#[test]
fn unknown_types() {
    for code in [0u32, 18, 99, 4001, 1000, 0x8000_03E9, 0x1000_0001] {
        let mut v = vec![1];
        v.extend(le(&[code, 0]));
        assert_eq!(
            bbox_of_wkb(&v),
            Err(GeostatsError::UnknownGeometryType { offset: 1, code }),
            "code {code:#x}"
        );
    }
}

#[test]
fn count_larger_than_buffer() {
    // LINESTRING with u32::MAX points: must be rejected before any walk or allocation.
    let mut v = vec![1];
    v.extend(le(&[2, u32::MAX]));
    assert_eq!(
        bbox_of_wkb(&v),
        Err(GeostatsError::CountTooLarge {
            offset: 5,
            count: u32::MAX,
            needed: u64::from(u32::MAX) * 16,
            available: 0
        })
    );
    // MULTIPOLYGON claiming 2 members with 9 bytes left.
    let mut v = vec![1];
    v.extend(le(&[6, 2]));
    v.extend([1, 3, 0, 0, 0, 0, 0, 0, 0]);
    assert!(matches!(
        bbox_of_wkb(&v),
        Err(GeostatsError::CountTooLarge {
            offset: 5,
            count: 2,
            ..
        })
    ));
}

#[test]
fn trailing_bytes() {
    let mut p = point_wkb(1.0, 2.0);
    p.push(0);
    assert_eq!(
        bbox_of_wkb(&p),
        Err(GeostatsError::TrailingBytes {
            offset: 21,
            trailing: 1
        })
    );
}

#[test]
fn nesting_limit() {
    let depth = MAX_NESTING_DEPTH + 1;
    let mut v = Vec::new();
    for _ in 0..depth {
        v.push(1);
        v.extend(le(&[7, 1]));
    }
    v.extend(point_wkb(1.0, 2.0));
    assert_eq!(
        bbox_of_wkb(&v),
        Err(GeostatsError::NestingTooDeep {
            offset: 9 * depth,
            limit: MAX_NESTING_DEPTH
        })
    );
    // One level less is accepted.
    assert_eq!(bbox_of_wkb(&v[9..]).unwrap().unwrap().min_x, 1.0);
}

#[test]
fn multipoint_member_must_be_point() {
    let mut v = vec![1];
    v.extend(le(&[4, 1]));
    v.push(1);
    v.extend(le(&[2, 1]));
    v.extend([0u8; 16]);
    assert_eq!(
        bbox_of_wkb(&v),
        Err(GeostatsError::UnexpectedMemberType {
            offset: 9,
            parent: "MultiPoint",
            expected: 1,
            found: 2
        })
    );
}

#[test]
fn member_dimensions_must_match() {
    let mut v = vec![1];
    v.extend(le(&[1007, 1]));
    v.extend(point_wkb(1.0, 2.0));
    assert_eq!(
        bbox_of_wkb(&v),
        Err(GeostatsError::MixedDimensions {
            offset: 9,
            expected: "XYZ",
            found: "XY"
        })
    );
}

/// GEOMETRYCOLLECTION (outer SRID, then one POINT (1 2) with `nested` SRID flag/value).
fn collection_with_srids(outer: Option<u32>, nested: Option<u32>) -> Vec<u8> {
    let mut v = vec![1];
    match outer {
        Some(s) => v.extend(le(&[0x2000_0007, s, 1])),
        None => v.extend(le(&[7, 1])),
    }
    v.push(1);
    match nested {
        Some(s) => v.extend(le(&[0x2000_0001, s])),
        None => v.extend(le(&[1])),
    }
    v.extend(1f64.to_le_bytes());
    v.extend(2f64.to_le_bytes());
    v
}

#[test]
fn nested_srids_as_jts_writes_them() {
    // JTS's WKBWriter with SRIDs (Sedona's ST_AsEWKB) repeats the SRID on every member: accepted
    // when it is the outer SRID or 0.
    for (outer, nested) in [
        (Some(4326), Some(4326)),
        (Some(4326), Some(0)),
        (None, Some(0)),
    ] {
        let info = wkb_info(&collection_with_srids(outer, nested)).unwrap();
        assert_eq!(info.srid, outer.map(|s| s as i32));
        assert_eq!(info.bbox, Some(geoberg_geostats::BBox::point(1.0, 2.0)));
    }
    // A different SRID inside is a typed error naming both.
    let e = wkb_info(&collection_with_srids(Some(4326), Some(3857))).unwrap_err();
    assert_eq!(
        e,
        GeostatsError::NestedSridMismatch {
            offset: 13,
            outer: Some(4326),
            nested: 3857
        }
    );
    let msg = e.to_string();
    assert!(msg.contains("3857") && msg.contains("SRID 4326"), "{msg}");
    assert_eq!(
        bbox_of_wkb(&collection_with_srids(None, Some(4326))),
        Err(GeostatsError::NestedSridMismatch {
            offset: 9,
            outer: None,
            nested: 4326
        })
    );
    assert_eq!(
        geoberg_geostats::geography_bbox_of_wkb(&collection_with_srids(Some(4326), Some(3857)))
            .unwrap_err(),
        e
    );
}

#[test]
fn curve_types_are_rejected_by_name() {
    let names = [
        (8, "CircularString"),
        (9, "CompoundCurve"),
        (10, "CurvePolygon"),
        (11, "MultiCurve"),
        (12, "MultiSurface"),
        (13, "Curve"),
        (14, "Surface"),
        (15, "PolyhedralSurface"),
        (16, "TIN"),
        (17, "Triangle"),
    ];
    for (kind, name) in names {
        // ISO XY, ISO Z (1000 + kind) and EWKB with the Z flag.
        for code in [kind, 1000 + kind, 0x8000_0000 | kind] {
            let mut v = vec![1];
            v.extend(le(&[code, 0]));
            let e = bbox_of_wkb(&v).unwrap_err();
            assert_eq!(
                e,
                GeostatsError::CurveType {
                    offset: 1,
                    code,
                    name
                }
            );
            assert!(e.to_string().contains(name));
        }
    }
}

#[test]
fn empty_geometries_have_no_box() {
    let nan_point = point_wkb(f64::NAN, f64::NAN);
    let half_nan = point_wkb(1.0, f64::NAN);
    let mut empty_polygon = vec![1];
    empty_polygon.extend(le(&[3, 0]));
    let mut empty_gc = vec![0, 0, 0, 0, 7, 0, 0, 0, 0];
    assert_eq!(bbox_of_wkb(&nan_point), Ok(None));
    assert_eq!(bbox_of_wkb(&half_nan), Ok(None));
    assert_eq!(bbox_of_wkb(&empty_polygon), Ok(None));
    assert_eq!(bbox_of_wkb(&empty_gc), Ok(None));
    // A GC holding an empty point and a real one: the box is the real point's.
    empty_gc = vec![1];
    empty_gc.extend(le(&[7, 2]));
    empty_gc.extend(nan_point);
    empty_gc.extend(point_wkb(3.0, 4.0));
    assert_eq!(
        bbox_of_wkb(&empty_gc).unwrap(),
        Some(geoberg_geostats::BBox::point(3.0, 4.0))
    );
}

#[test]
fn postgis_ewkb_point_with_srid() {
    // SELECT ST_AsEWKB('SRID=4326;POINT(1 2)'::geometry)
    let mut v = vec![1];
    v.extend(le(&[0x2000_0001, 4326]));
    v.extend(1f64.to_le_bytes());
    v.extend(2f64.to_le_bytes());
    let info = wkb_info(&v).unwrap();
    assert_eq!(info.srid, Some(4326));
    assert_eq!(info.bbox, Some(geoberg_geostats::BBox::point(1.0, 2.0)));
}

#[test]
fn messages_name_problem_values_and_fix() {
    let mut v = vec![1];
    v.extend(le(&[2, u32::MAX]));
    let msg = bbox_of_wkb(&v).unwrap_err().to_string();
    assert!(
        msg.contains("4294967295") && msg.contains("byte 5"),
        "{msg}"
    );
    let err = geoberg_geostats::bbox_columns(&arrow_array::BinaryArray::from(vec![
        &point_wkb(1.0, 2.0)[..],
        &v[..],
    ]))
    .unwrap_err();
    assert!(matches!(err, GeostatsError::Row { row: 1, .. }));
    assert!(err.to_string().starts_with("row 1: WKB count"), "{err}");
}
