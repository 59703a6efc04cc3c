//! The batch kernel over the three Arrow binary layouts.

mod common;

use arrow_array::{Array, BinaryArray, BinaryViewArray, LargeBinaryArray, StringArray};
use common::{Encoding, encoded_geometry, point_wkb, write};
use geoberg_geostats::{BBoxColumns, BBoxColumnsBuilder, GeostatsError, bbox_columns, wkb_info};
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

/// One row of a mostly-points column.
#[derive(Debug, Clone)]
enum Row {
    /// A 21-byte little-endian XY POINT.
    Point(f64, f64),
    /// A null whose slot holds these bytes (garbage under the validity bit).
    Null(Vec<u8>),
    /// Any other valid WKB value.
    Other(Vec<u8>),
}

/// 21 bytes that are valid WKB but not a point: a POLYGON of three empty rings.
fn three_empty_rings() -> Vec<u8> {
    let mut v = vec![1, 3, 0, 0, 0, 3, 0, 0, 0];
    v.extend([0; 12]);
    v
}

fn big_endian_point(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![0, 0, 0, 0, 1];
    v.extend(x.to_be_bytes());
    v.extend(y.to_be_bytes());
    v
}

fn other_row() -> impl Strategy<Value = Row> {
    prop_oneof![
        (common::value(), common::value()).prop_map(|(x, y)| Row::Point(x, y)),
        prop_oneof![
            Just(Vec::new()),
            (common::value(), common::value()).prop_map(|(x, y)| point_wkb(x, y)),
            Just(vec![0xff; 21]),
        ]
        .prop_map(Row::Null),
        encoded_geometry().prop_map(|(g, e)| Row::Other(write(&g, &e))),
        Just(Row::Other(three_empty_rings())),
        (common::value(), common::value()).prop_map(|(x, y)| Row::Other(big_endian_point(x, y))),
    ]
}

/// Clean points (whole 64-row blocks of them) with a few other rows dropped in, and a slice
/// offset so that neither rows nor value offsets start at zero.
fn mostly_points() -> impl Strategy<Value = (Vec<Row>, usize)> {
    let clean = (-1.0e4..1.0e4f64, -1.0e4..1.0e4f64).prop_map(|(x, y)| Row::Point(x, y));
    (
        proptest::collection::vec(clean, 0..400),
        proptest::collection::vec((any::<proptest::sample::Index>(), other_row()), 0..4),
        0..3usize,
    )
        .prop_map(|(mut rows, others, skip)| {
            for (i, row) in others {
                if !rows.is_empty() {
                    let i = i.index(rows.len());
                    rows[i] = row;
                }
            }
            let skip = skip.min(rows.len());
            (rows, skip)
        })
}

fn binary<O: arrow_array::OffsetSizeTrait>(rows: &[Row]) -> arrow_array::GenericBinaryArray<O> {
    use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer};
    let bytes: Vec<Vec<u8>> = rows
        .iter()
        .map(|r| match r {
            Row::Point(x, y) => point_wkb(*x, *y),
            Row::Null(b) | Row::Other(b) => b.clone(),
        })
        .collect();
    let offsets = OffsetBuffer::<O>::from_lengths(bytes.iter().map(Vec::len));
    let values = Buffer::from_vec(bytes.concat());
    let nulls = NullBuffer::from_iter(rows.iter().map(|r| !matches!(r, Row::Null(_))));
    arrow_array::GenericBinaryArray::new(offsets, values, Some(nulls))
}

/// The columns built value by value with `wkb_info`, bit for bit (null slots NaN).
fn assert_matches_per_value(cols: &BBoxColumns, array: &dyn Array) -> Result<(), TestCaseError> {
    let mut any_srid = false;
    for i in 0..array.len() {
        let value = match array.as_any().downcast_ref::<BinaryArray>() {
            Some(a) => a.is_valid(i).then(|| a.value(i)),
            None => {
                let a = array.as_any().downcast_ref::<LargeBinaryArray>().unwrap();
                a.is_valid(i).then(|| a.value(i))
            }
        };
        let info = value.map(|v| wkb_info(v).unwrap());
        let expected = info
            .and_then(|i| i.bbox)
            .map_or([f64::NAN; 4], |b| [b.min_x, b.min_y, b.max_x, b.max_y]);
        let actual = [&cols.min_x, &cols.min_y, &cols.max_x, &cols.max_y].map(|c| c.values()[i]);
        prop_assert_eq!(
            actual.map(f64::to_bits),
            expected.map(f64::to_bits),
            "row {}",
            i
        );
        let present = info.is_some_and(|i| i.bbox.is_some());
        for c in [&cols.min_x, &cols.min_y, &cols.max_x, &cols.max_y] {
            prop_assert_eq!(c.is_valid(i), present, "row {}", i);
        }
        let srid = info.and_then(|i| i.srid);
        any_srid |= srid.is_some();
        if let Some(s) = &cols.srid {
            prop_assert_eq!(s.is_valid(i).then(|| s.value(i)), srid);
        }
    }
    prop_assert_eq!(cols.srid.is_some(), any_srid);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The block fast path for runs of points agrees with the per-value scanner, with nulls over
    /// point-shaped bytes, NaN points, 21-byte non-points and sliced arrays.
    #[test]
    fn point_blocks_agree_with_per_value((rows, skip) in mostly_points()) {
        let len = rows.len() - skip;
        let a = binary::<i32>(&rows).slice(skip, len);
        let cols = bbox_columns(&a).unwrap();
        assert_matches_per_value(&cols, &a)?;
        let large = binary::<i64>(&rows).slice(skip, len);
        prop_assert_eq!(&bbox_columns(&large).unwrap(), &cols);
        let view = BinaryViewArray::from_iter((0..len).map(|i| a.is_valid(i).then(|| a.value(i))));
        prop_assert_eq!(&bbox_columns(&view).unwrap(), &cols);
    }

    /// A reused builder gives what `bbox_columns` gives, batch after batch, and never writes into
    /// buffers that a kept clone of earlier columns still shares.
    #[test]
    fn builder_agrees_with_bbox_columns(
        batches in proptest::collection::vec((mostly_points(), any::<bool>()), 1..5),
    ) {
        let mut builder = BBoxColumnsBuilder::new();
        let mut kept = Vec::new();
        for ((rows, skip), keep) in batches {
            let a = binary::<i32>(&rows).slice(skip, rows.len() - skip);
            let expected = bbox_columns(&a).unwrap();
            let cols = builder.build(&a).unwrap();
            prop_assert_eq!(&cols, &expected);
            if keep {
                kept.push((cols.clone(), expected));
            }
            builder.recycle(cols);
        }
        for (cols, expected) in kept {
            prop_assert_eq!(cols, expected);
        }
    }
}

#[test]
fn bad_value_inside_a_block_of_points_names_its_row() {
    let p = point_wkb(1.0, 2.0);
    // 21 bytes that claim an SRID but have no room for it, then an invalid byte order.
    let mut ewkb_short = p.clone();
    ewkb_short[4] = 0x20;
    let mut bad_order = p.clone();
    bad_order[0] = 2;
    for (bad, row) in [(ewkb_short, 70), (bad_order, 3)] {
        let mut values = vec![p.as_slice(); 200];
        values[row] = &bad;
        let err = bbox_columns(&BinaryArray::from_iter_values(values)).unwrap_err();
        assert!(
            matches!(err, GeostatsError::Row { row: r, .. } if r == row),
            "{err}"
        );
        // The builder stays usable after an error.
        let mut builder = BBoxColumnsBuilder::new();
        assert!(
            builder
                .build(&BinaryArray::from_iter_values(vec![&bad[..]]))
                .is_err()
        );
        let ok = BinaryArray::from_iter_values(vec![p.as_slice(); 100]);
        assert_eq!(builder.build(&ok).unwrap(), bbox_columns(&ok).unwrap());
    }
}

#[test]
fn ewkb_points_among_points_get_an_srid_column() {
    let e = Encoding {
        big_endian: false,
        z: false,
        m: false,
        ewkb: true,
        srid: Some(4326),
    };
    let ewkb = write(&common::G::Point(Some(vec![5.0, 6.0])), &e);
    let p = point_wkb(1.0, 2.0);
    let mut values = vec![p.as_slice(); 130];
    values[100] = &ewkb;
    let cols = bbox_columns(&BinaryArray::from_iter_values(values)).unwrap();
    let srid = cols.srid.unwrap();
    assert_eq!((srid.len(), srid.null_count()), (130, 129));
    assert_eq!(srid.value(100), 4326);
    assert_eq!((cols.min_x.value(100), cols.max_y.value(100)), (5.0, 6.0));
    assert_eq!(cols.min_x.null_count(), 0);
}
