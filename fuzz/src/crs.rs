//! CRS strings, Iceberg type strings, and WKB reprojection.

use geoberg_crs::{
    ColumnType, Crs, EdgeAlgorithm, FormatVersion, Reprojection, can_skip_files,
    default_hilbert_bounds, ewkb_with_srid, extent_of, validate_declaration, wkb_without_srid,
};
use geoberg_geostats::{bbox_of_wkb, wkb_info};

use crate::reference_wkb::coordinates;

/// Fuzz target `crs_strings`: the input (lossy UTF-8) as a whole and each of its lines is parsed
/// as a CRS, an Iceberg type string and an edge algorithm.
///
/// * Whatever parses renders back (`Display`, `iceberg_type`) to text that parses to an equal
///   value, with the same SRID; rendering is a fixed point.
/// * Every rule taking a parsed column type (`validate_declaration` for each format version,
///   `can_skip_files`, `default_hilbert_bounds`, `extent_of`) returns without panicking, and a
///   known extent is itself valid.
/// * `Reprojection::between` two parsed CRSs (of the first [`PAIRED_CRSS`]) is the inverse of
///   the reverse direction.
pub fn crs_strings(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut crss = Vec::new();
    for part in std::iter::once(&*text).chain(text.lines()) {
        if let Ok(crs) = part.parse::<Crs>() {
            let shown = crs.to_string();
            let again: Crs = shown.parse().expect("a rendered CRS must parse");
            assert_eq!(again, crs, "{part:?} -> {shown:?}");
            assert_eq!(again.to_string(), shown);
            assert_eq!(again.srid(), crs.srid());
            assert!(crs.is_same_as(&again));
            crss.push(crs);
        }
        if let Ok(column) = ColumnType::from_iceberg_type(part) {
            let shown = column
                .iceberg_type()
                .expect("a parsed type has a type string");
            let again = ColumnType::from_iceberg_type(&shown).expect("a rendered type must parse");
            assert_eq!(again, column, "{part:?} -> {shown:?}");
            assert_eq!(again.iceberg_type().as_deref(), Some(&*shown));
            assert_eq!(column.to_string(), shown);
            exercise_rules(&column);
            if let Some(crs) = column.crs() {
                crss.push(crs.clone());
            }
        }
        if let Ok(edges) = part.parse::<EdgeAlgorithm>() {
            assert_eq!(edges.name().parse::<EdgeAlgorithm>(), Ok(edges));
        }
    }
    // Pairs are quadratic: inputs of many lines check the first few CRSs only.
    crss.truncate(PAIRED_CRSS);
    for from in &crss {
        exercise_rules(&ColumnType::geometry(from.clone()));
        exercise_rules(&ColumnType::geography(from.clone()));
        for to in &crss {
            if let Ok(r) = Reprojection::between(from, to) {
                assert_eq!(Reprojection::between(to, from), Ok(r.inverse()));
                assert_eq!(r.source_srid(), r.inverse().target_srid());
            }
        }
    }
}

/// How many parsed CRSs per input [`crs_strings`] checks pairwise and as column types.
pub const PAIRED_CRSS: usize = 16;

fn exercise_rules(column: &ColumnType) {
    for version in FormatVersion::ALL {
        let _ = validate_declaration("geom", column, version);
        let decision = can_skip_files(version, column);
        assert!(
            decision.can_skip || !decision.reason.is_empty(),
            "{decision:?}"
        );
    }
    if let Ok(extent) = default_hilbert_bounds("geom", column) {
        assert_eq!(extent.validate(), Ok(()), "{extent:?}");
    }
    if let Some(Ok(extent)) = column.crs().map(extent_of) {
        assert_eq!(extent.validate(), Ok(()), "{extent:?}");
    }
}

/// The CRSs [`crs_reproject`] picks from: each spelling of the two the reprojection knows, and
/// one it does not.
const CRS_CHOICES: [&str; 6] = [
    "EPSG:4326",
    "OGC:CRS84",
    "srid:4326",
    "EPSG:3857",
    "3857",
    "EPSG:32633",
];

/// Fuzz target `crs_reproject`: byte 0 picks the source CRS, byte 1 the target, the rest is a WKB
/// value.
///
/// * `transform_wkb` never panics; on success the output has the input's length, and
///   `transform_wkb_in_place` writes the same bytes; on error the in-place call fails alike and
///   leaves the buffer untouched.
/// * The identity reprojection returns the input unchanged.
/// * Each coordinate (read by the reference reader) becomes exactly `Reprojection::transform` of
///   it; Z, M and empty points are kept bit for bit.
/// * 4326 -> 3857 -> 4326 succeeds and returns every coordinate within 1e-9 degrees.
/// * geostats reads the output whenever it read the input.
/// * `ewkb_with_srid` and `wkb_without_srid` never panic; on a value geostats reads, the EWKB
///   one reads with the same box and the given SRID (or its own), and dropping the SRID again
///   gives a value with the same box and no SRID.
pub fn crs_reproject(data: &[u8]) {
    let [a, b, wkb @ ..] = data else { return };
    srid_in_and_out(wkb, i32::from(*a) * 100 + i32::from(*b));
    let pick = |i: u8| -> Crs {
        CRS_CHOICES[usize::from(i) % CRS_CHOICES.len()]
            .parse()
            .unwrap()
    };
    let (from, to) = (pick(*a), pick(*b));
    let Ok(r) = Reprojection::between(&from, &to) else {
        return;
    };
    let out = r.transform_wkb(wkb, &from);
    let mut in_place = wkb.to_vec();
    let in_place_result = r.transform_wkb_in_place(&mut in_place, &from);
    let out = match out {
        Err(e) => {
            // Compared as text: errors carry the offending coordinates, which may be NaN.
            let in_place_error = in_place_result.expect_err("in place accepted what copy refused");
            assert_eq!(
                in_place_error.to_string(),
                e.to_string(),
                "in place vs copy"
            );
            assert_eq!(in_place, wkb, "a failed in-place call changed the buffer");
            return;
        }
        Ok(out) => out,
    };
    assert_eq!(in_place_result, Ok(()));
    assert_eq!(in_place, out, "in place vs copy");
    assert_eq!(out.len(), wkb.len());
    if r == Reprojection::Identity {
        assert_eq!(out, wkb, "identity changed the value");
    }
    if bbox_of_wkb(wkb).is_ok() {
        assert!(
            bbox_of_wkb(&out).is_ok(),
            "geostats rejects the reprojected value"
        );
    }

    let (Some(before), Some(after)) = (coordinates(wkb), coordinates(&out)) else {
        return;
    };
    assert_eq!(before.len(), after.len());
    for (c, t) in before.iter().zip(&after) {
        let bits = |v: Option<f64>| v.map(f64::to_bits);
        assert_eq!(
            (bits(c.z), bits(c.m)),
            (bits(t.z), bits(t.m)),
            "Z/M changed"
        );
        if c.x.is_nan() && c.y.is_nan() {
            // An empty point (or its NaN pair elsewhere, which only Identity accepts) stays.
            assert_eq!(
                (c.x.to_bits(), c.y.to_bits()),
                (t.x.to_bits(), t.y.to_bits())
            );
            continue;
        }
        let expected = r
            .transform(c.x, c.y)
            .expect("a coordinate the walker accepted");
        assert_eq!(
            (expected.0.to_bits(), expected.1.to_bits()),
            (t.x.to_bits(), t.y.to_bits()),
            "{c:?} -> {t:?}, transform gives {expected:?}"
        );
    }
    if r == Reprojection::LonLatToWebMercator {
        let back = r
            .inverse()
            .transform_wkb(&out, &to)
            .expect("3857 -> 4326 of a forward result");
        let back = coordinates(&back).expect("the reference reader read the forward result");
        for (c, t) in before.iter().zip(&back) {
            if c.x.is_nan() && c.y.is_nan() {
                continue;
            }
            assert!(
                (c.x - t.x).abs() <= 1e-9 && (c.y - t.y).abs() <= 1e-9,
                "round trip {c:?} -> {t:?}"
            );
        }
    }
}

/// The EWKB SRID properties of [`crs_reproject`].
fn srid_in_and_out(wkb: &[u8], srid: i32) {
    let with = ewkb_with_srid(wkb, srid);
    let without = wkb_without_srid(wkb);
    let Ok(info) = wkb_info(wkb) else { return };
    let with = with.expect("a value geostats reads has a header");
    let with_info = wkb_info(&with).expect("geostats reads the EWKB value");
    assert_eq!(with_info.bbox, info.bbox, "EWKB changed the box");
    assert_eq!(with_info.srid, Some(info.srid.unwrap_or(srid)));
    let plain = wkb_without_srid(&with).expect("the EWKB value has a header");
    let plain_info = wkb_info(&plain).expect("geostats reads the plain value");
    assert_eq!(
        plain_info.bbox, info.bbox,
        "dropping the SRID changed the box"
    );
    assert_eq!(plain_info.srid, None);
    assert!(without.is_ok());
}
