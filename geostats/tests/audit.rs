//! The audit counts each policy violation.

mod common;

use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, Float64Array, RecordBatch};
use common::point_wkb;
use geoberg_geostats::{AuditReport, BBoxColumnNames, audit, audit_batch, bbox_columns};

fn cols(v: &[Option<[f64; 4]>]) -> [Float64Array; 4] {
    [0, 1, 2, 3].map(|k| Float64Array::from(v.iter().map(|r| r.map(|r| r[k])).collect::<Vec<_>>()))
}

#[test]
fn counts_each_violation() {
    let p = point_wkb(3.0, 4.0);
    let origin = point_wkb(0.0, 0.0);
    let empty = point_wkb(f64::NAN, f64::NAN);
    let garbage = [7u8, 7];
    let geom = BinaryArray::from(vec![
        Some(&p[..]),       // 0: correct
        Some(&p[..]),       // 1: missing bbox
        Some(&p[..]),       // 2: zeros off origin (and mismatch)
        Some(&origin[..]),  // 3: zeros at origin: fine
        Some(&empty[..]),   // 4: empty with zeros: zeros off origin + mismatch
        Some(&p[..]),       // 5: inverted (and mismatch)
        None,               // 6: null geometry, null bbox: fine
        Some(&p[..]),       // 7: wrong values
        Some(&garbage[..]), // 8: invalid WKB
        Some(&empty[..]),   // 9: empty with null bbox: fine
    ]);
    let c = cols(&[
        Some([3.0, 4.0, 3.0, 4.0]),
        None,
        Some([0.0; 4]),
        Some([0.0; 4]),
        Some([0.0; 4]),
        Some([3.0, 4.0, 2.0, 4.0]),
        None,
        Some([3.0, 4.0, 3.5, 4.0]),
        None,
        None,
    ]);
    let report = audit(&geom, [&c[0], &c[1], &c[2], &c[3]]).unwrap();
    assert_eq!(
        report,
        AuditReport {
            rows: 10,
            missing_bbox: 1,
            zero_bbox_off_origin: 2,
            inverted_bbox: 1,
            mismatched_bbox: 4,
            invalid_geometry: 1,
        }
    );
    assert!(!report.is_clean());
}

#[test]
fn kernel_output_is_clean_and_batch_lookup_works() {
    let p = point_wkb(3.0, 4.0);
    let empty = point_wkb(f64::NAN, f64::NAN);
    let geom = BinaryArray::from(vec![Some(&p[..]), None, Some(&empty[..])]);
    let b = bbox_columns(&geom).unwrap();
    let names = BBoxColumnNames::default();
    let batch = RecordBatch::try_from_iter([
        ("geom", Arc::new(geom) as ArrayRef),
        (names.min_x.as_str(), Arc::new(b.min_x) as ArrayRef),
        (names.min_y.as_str(), Arc::new(b.min_y) as ArrayRef),
        (names.max_x.as_str(), Arc::new(b.max_x) as ArrayRef),
        (names.max_y.as_str(), Arc::new(b.max_y) as ArrayRef),
    ])
    .unwrap();
    let report = audit_batch(&batch, "geom", &names).unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(report.rows, 3);
    let missing = audit_batch(&batch, "geometry", &names).unwrap_err();
    assert!(missing.to_string().contains("geometry"));
}

#[test]
fn length_mismatch_is_an_error() {
    let p = point_wkb(3.0, 4.0);
    let geom = BinaryArray::from(vec![&p[..]]);
    let c = cols(&[]);
    assert!(audit(&geom, [&c[0], &c[1], &c[2], &c[3]]).is_err());
}
