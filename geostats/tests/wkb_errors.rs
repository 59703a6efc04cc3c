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
    for code in [0u32, 8, 15, 17, 4001, 1000, 0x8000_03E9, 0x1000_0001] {
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

#[test]
fn nested_srid_rejected() {
    let mut v = vec![1];
    v.extend(le(&[7, 1]));
    v.push(1);
    v.extend(le(&[0x2000_0001, 4326]));
    v.extend(1f64.to_le_bytes());
    v.extend(2f64.to_le_bytes());
    assert_eq!(
        bbox_of_wkb(&v),
        Err(GeostatsError::NestedSrid { offset: 9 })
    );
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
