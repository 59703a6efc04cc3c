//! The batch kernel over the three Arrow binary layouts.

mod common;

use arrow_array::{Array, BinaryArray, BinaryViewArray, LargeBinaryArray, StringArray};
use common::{Encoding, encoded_geometry, point_wkb, write};
use geoberg_geostats::{BBoxColumns, GeostatsError, bbox_columns, wkb_info};
use proptest::prelude::*;

fn row(cols: &BBoxColumns, i: usize) -> Option<[f64; 4]> {
    cols.min_x.is_valid(i).then(|| {
        [
            cols.min_x.value(i),
            cols.min_y.value(i),
            cols.max_x.value(i),
            cols.max_y.value(i),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// All three layouts give the per-value answer row for row, nulls included.
    #[test]
    fn layouts_agree_with_per_value(values in proptest::collection::vec(proptest::option::weighted(0.8, encoded_geometry()), 0..20)) {
        let bytes: Vec<Option<Vec<u8>>> = values.iter().map(|v| v.as_ref().map(|(g, e)| write(g, e))).collect();
        let refs: Vec<Option<&[u8]>> = bytes.iter().map(|b| b.as_deref()).collect();
        let a = bbox_columns(&BinaryArray::from(refs.clone())).unwrap();
        let b = bbox_columns(&LargeBinaryArray::from(refs.clone())).unwrap();
        let c = bbox_columns(&BinaryViewArray::from(refs.clone())).unwrap();
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(&a, &c);
        let mut any_srid = false;
        for (i, v) in refs.iter().enumerate() {
            let info = v.map(|v| wkb_info(v).unwrap());
            let expected = info.and_then(|i| i.bbox).map(|b| [b.min_x, b.min_y, b.max_x, b.max_y]);
            prop_assert_eq!(row(&a, i), expected);
            let srid = info.and_then(|i| i.srid);
            any_srid |= srid.is_some();
            if let Some(s) = &a.srid {
                prop_assert_eq!(s.is_valid(i).then(|| s.value(i)), srid);
            }
        }
        prop_assert_eq!(a.srid.is_some(), any_srid);
        // Null slots hold NaN, never zeros.
        for i in 0..a.min_x.len() {
            if a.min_x.is_null(i) {
                prop_assert!(a.min_x.values()[i].is_nan());
            }
        }
    }
}

#[test]
fn sliced_arrays_keep_row_numbers() {
    let p = point_wkb(1.0, 2.0);
    let bad = [1u8, 1, 0];
    let a = BinaryArray::from(vec![Some(&bad[..]), Some(&p[..]), None, Some(&bad[..])]);
    let sliced = a.slice(1, 2);
    let cols = bbox_columns(&sliced).unwrap();
    assert_eq!(row(&cols, 0), Some([1.0, 2.0, 1.0, 2.0]));
    assert_eq!(row(&cols, 1), None);
    let err = bbox_columns(&a.slice(1, 3)).unwrap_err();
    assert!(matches!(err, GeostatsError::Row { row: 2, .. }), "{err}");
}

#[test]
fn srid_column_backfills_earlier_rows() {
    let e = Encoding {
        big_endian: false,
        z: false,
        m: false,
        ewkb: true,
        srid: Some(3857),
    };
    let ewkb = write(&common::G::Point(Some(vec![5.0, 6.0])), &e);
    let iso = point_wkb(1.0, 2.0);
    let cols = bbox_columns(&BinaryArray::from(vec![&iso[..], &ewkb[..], &iso[..]])).unwrap();
    let srid = cols.srid.unwrap();
    assert_eq!(srid.len(), 3);
    assert!(srid.is_null(0) && srid.is_null(2));
    assert_eq!(srid.value(1), 3857);
    assert_eq!(cols.min_x.null_count(), 0);
}

#[test]
fn non_binary_column_is_rejected() {
    let err = bbox_columns(&StringArray::from(vec!["POINT (1 2)"])).unwrap_err();
    assert!(matches!(err, GeostatsError::UnsupportedArray { .. }));
    assert!(err.to_string().contains("Utf8"), "{err}");
}
