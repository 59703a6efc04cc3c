//! WKB -> bbox: the scalar functions against a reference reader, and the Arrow batch kernels
//! against the scalar function.

use arrow_array::{Array, BinaryArray, BinaryViewArray, LargeBinaryArray};
use geoberg_geostats::{
    BBox, BBoxAccumulator, GeographyBBoxAccumulator, Interval, bbox_columns, bbox_of_wkb,
    geography_bbox_of_wkb, wkb_info,
};

use crate::reference_wkb::{Coord, coordinates};

/// Fuzz target `wkb_bbox`: the input is one WKB value.
///
/// * `bbox_of_wkb`, `wkb_info` and `geography_bbox_of_wkb` never panic and accept or reject the
///   same bytes; the planar boxes agree.
/// * A box is valid (`min <= max` on every dimension present).
/// * Where the reference reader decodes the value too, the box is exactly the per-dimension
///   min/max of the non-NaN coordinates (so it contains every coordinate and is tight), and
///   `None` exactly when X or Y has no non-NaN value.
/// * The geography box lies in the lon/lat ranges, has the planar Z/M ranges, and holds every
///   vertex that has finite X and Y in those ranges (its X range may wrap the antimeridian, its
///   Y range may exceed the vertices' where great-circle edges bulge); it is `None` exactly when
///   no vertex can be placed on the sphere.
/// * `BBoxAccumulator` over the value gives the same box.
pub fn wkb_bbox(data: &[u8]) {
    let planar = bbox_of_wkb(data);
    let info = wkb_info(data);
    let geography = geography_bbox_of_wkb(data);
    match (&planar, &info, &geography) {
        (Ok(p), Ok(i), Ok(_)) => assert_eq!(*p, i.bbox, "wkb_info disagrees with bbox_of_wkb"),
        (Err(a), Err(b), Err(c)) => {
            assert_eq!(a, b);
            assert_eq!(a, c);
            return;
        }
        _ => panic!("scalar functions disagree: {planar:?} / {info:?} / {geography:?}"),
    }
    let (planar, geography) = (planar.unwrap(), geography.unwrap());

    if let Some(b) = planar {
        assert!(b.is_valid(), "invalid box {b:?}");
    }
    if let Some(coords) = coordinates(data) {
        assert_eq!(
            planar,
            reference_bbox(&coords),
            "box is not the coordinates' extent"
        );
        // Geography places each vertex with finite X and Y on the sphere; the box (edges bulge,
        // so it may be larger than the planar one) holds every vertex in the canonical range.
        let on_sphere: Vec<&Coord> = coords
            .iter()
            .filter(|c| c.x.is_finite() && c.y.is_finite())
            .collect();
        assert_eq!(
            geography.is_some(),
            !on_sphere.is_empty(),
            "geography box {geography:?} vs vertices {coords:?}"
        );
        if let Some(g) = geography {
            assert!(
                (-180.0..=180.0).contains(&g.min_x)
                    && (-180.0..=180.0).contains(&g.max_x)
                    && -90.0 <= g.min_y
                    && g.min_y <= g.max_y
                    && g.max_y <= 90.0,
                "geography box {g:?} outside the lon/lat ranges"
            );
            let p = planar.expect("a vertex on the sphere has planar X and Y");
            assert_eq!((p.z, p.m), (g.z, g.m), "geography Z/M differ");
            for c in on_sphere {
                if c.x.abs() > 180.0 || c.y.abs() > 90.0 {
                    continue; // wrapped or clamped onto the sphere
                }
                let covered = c.y.abs() == 90.0
                    || c.x.abs() == 180.0 && (g.min_x.abs() == 180.0 || g.max_x.abs() == 180.0)
                    || if g.min_x <= g.max_x {
                        g.min_x <= c.x && c.x <= g.max_x
                    } else {
                        c.x >= g.min_x || c.x <= g.max_x
                    };
                assert!(covered, "geography box {g:?} misses longitude {}", c.x);
                assert!(
                    g.min_y <= c.y && c.y <= g.max_y,
                    "geography box {g:?} misses latitude {}",
                    c.y
                );
            }
        }
    }

    let mut acc = BBoxAccumulator::new();
    acc.add_wkb(data)
        .expect("accumulator rejected accepted WKB");
    assert_eq!(acc.finish().map(xy), planar.map(xy));
}

/// Fuzz target `wkb_batch`: the input is split into rows at the byte sequence `0xFF 0xFE`
/// (a row of exactly `0xFD` is a null), and the rows become `Binary`, `LargeBinary` and
/// `BinaryView` columns.
///
/// * `bbox_columns` on each array type equals `bbox_of_wkb` row by row: null where the value is
///   null or empty, the XY box otherwise; the SRID column holds each EWKB SRID.
/// * It fails exactly when some row fails, on the same three array types alike.
/// * `BBoxAccumulator::add_wkb_array` equals the fold of the per-row boxes (or covers it, when a
///   value has X or Y only NaN: such a value has no box, but the accumulator keeps its other
///   axis); `GeographyBBoxAccumulator::add_wkb_array` spans exactly the latitudes of the rows'
///   own geography boxes.
pub fn wkb_batch(data: &[u8]) {
    let rows = split_rows(data);
    let binary = BinaryArray::from(rows.clone());
    let large = LargeBinaryArray::from(rows.clone());
    let view = BinaryViewArray::from(rows.clone());
    let scalar: Result<Vec<_>, _> = rows.iter().map(|r| r.map(wkb_info).transpose()).collect();

    let arrays: [&dyn Array; 3] = [&binary, &large, &view];
    let results: Vec<_> = arrays.iter().map(|a| bbox_columns(*a)).collect();
    for (array, cols) in arrays.iter().zip(&results) {
        let (Ok(infos), Ok(cols)) = (&scalar, cols) else {
            assert_eq!(
                scalar.is_ok(),
                cols.is_ok(),
                "{:?}: batch vs scalar",
                array.data_type()
            );
            continue;
        };
        for (row, info) in infos.iter().enumerate() {
            let bbox = info.and_then(|i| i.bbox);
            let got = (!cols.min_x.is_null(row)).then(|| {
                BBox::new(
                    cols.min_x.value(row),
                    cols.min_y.value(row),
                    cols.max_x.value(row),
                    cols.max_y.value(row),
                )
            });
            assert_eq!(got, bbox.map(xy), "row {row} of {:?}", array.data_type());
            for c in [&cols.min_y, &cols.max_x, &cols.max_y] {
                assert_eq!(
                    c.is_null(row),
                    cols.min_x.is_null(row),
                    "row {row}: partial nulls"
                );
            }
            let srid = info.and_then(|i| i.srid);
            let got_srid = cols
                .srid
                .as_ref()
                .and_then(|s| (!s.is_null(row)).then(|| s.value(row)));
            assert_eq!(got_srid, srid, "row {row}: SRID");
        }
    }

    let Ok(infos) = scalar else { return };
    let expected = infos
        .iter()
        .flatten()
        .filter_map(|i| i.bbox.map(xy))
        .reduce(|a, b| a.union(&b));
    let mut planar = BBoxAccumulator::new();
    let mut geography = GeographyBBoxAccumulator::new();
    for a in arrays {
        planar.add_wkb_array(a).expect("planar accumulator");
        geography.add_wkb_array(a).expect("geography accumulator");
    }
    let (planar, geography) = (planar.finish().map(xy), geography.finish());
    // A value with X all NaN but some Y (or the reverse) has no box of its own, yet the
    // accumulators skip NaN per dimension and keep its Y: then they may only be larger.
    let lopsided = rows
        .iter()
        .zip(&infos)
        .any(|(wkb, info)| match (wkb, info) {
            (Some(wkb), Some(info)) => {
                info.bbox.is_none()
                    && coordinates(wkb)
                        .is_some_and(|c| c.iter().any(|c| !c.x.is_nan() || !c.y.is_nan()))
            }
            _ => false,
        });
    if lopsided {
        if let Some(e) = expected {
            let p = planar.expect("the accumulator lost the rows' boxes");
            assert!(
                p.union(&e) == p,
                "accumulator {p:?} does not cover the rows' {e:?}"
            );
        }
    } else {
        assert_eq!(planar, expected, "accumulator vs union of the rows' boxes");
    }
    // The geography accumulator spans the latitudes of the rows' own geography boxes.
    let rows_y = rows
        .iter()
        .flatten()
        .filter_map(|wkb| geography_bbox_of_wkb(wkb).ok().flatten())
        .map(|b| b.y())
        .reduce(Interval::union);
    assert_eq!(geography.map(|b| b.y()), rows_y, "geography accumulator Y");
}

/// The rows of a [`wkb_batch`] input.
fn split_rows(data: &[u8]) -> Vec<Option<&[u8]>> {
    let mut rows = Vec::new();
    let mut rest = data;
    loop {
        let end = rest.windows(2).position(|w| w == [0xFF, 0xFE]);
        let row = &rest[..end.unwrap_or(rest.len())];
        rows.push((row != [0xFD]).then_some(row));
        match end {
            Some(e) => rest = &rest[e + 2..],
            None => return rows,
        }
    }
}

/// The XY part of a box (what the bbox columns hold).
fn xy(b: BBox) -> BBox {
    BBox::new(b.min_x, b.min_y, b.max_x, b.max_y)
}

/// The box of a coordinate list by the Iceberg rule: NaN skipped per dimension, no box when X or
/// Y has no value.
fn reference_bbox(coords: &[Coord]) -> Option<BBox> {
    fn range(values: impl Iterator<Item = f64>) -> Option<Interval> {
        values
            .filter(|v| !v.is_nan())
            .map(|v| Interval::new(v, v))
            .reduce(Interval::union)
    }
    let x = range(coords.iter().map(|c| c.x))?;
    let y = range(coords.iter().map(|c| c.y))?;
    let mut b = BBox::new(x.min, y.min, x.max, y.max);
    b.z = range(coords.iter().filter_map(|c| c.z));
    b.m = range(coords.iter().filter_map(|c| c.m));
    Some(b)
}
