//! 4326 <-> 3857: reference points (closed form, 40-digit arithmetic), the domain, Arrow arrays,
//! and properties (round trip, monotonicity, batch == scalar).

use arrow_array::{Array, Float64Array};
use geoberg_crs::{
    Crs, Extent, Reprojection, WEB_MERCATOR_AREA_OF_USE_MAX_Y, WEB_MERCATOR_MAX,
    WEB_MERCATOR_MAX_LATITUDE, check_bounds_cover, extent_of, lonlat_to_web_mercator,
    web_mercator_to_lonlat,
};
use proptest::prelude::*;

/// (lon, lat) -> (x, y), the right side from `R * lon * pi / 180` and `R * asinh(tan(lat))`
/// evaluated with 40 significant digits (mpmath), then rounded to f64.
const FORWARD: [((f64, f64), (f64, f64)); 8] = [
    ((0.0, 0.0), (0.0, 0.0)),
    (
        (180.0, 85.051_128_779_806_59),
        (20_037_508.342_789_244, 20_037_508.342_789_24),
    ),
    (
        (90.0, 45.0),
        (10_018_754.171_394_622, 5_621_521.486_192_067),
    ), // y = R ln(1 + sqrt 2)
    (
        (-45.0, 30.0),
        (-5_009_377.085_697_311, 3_503_549.843_504_376),
    ), // y = R ln(3) / 2
    ((0.0, 60.0), (0.0, 8_399_737.889_818_36)), // y = R ln(2 + sqrt 3)
    (
        (1e-7, -1e-7),
        (0.011_131_949_079_327_358, -0.011_131_949_079_327_358),
    ),
    ((0.0, 85.06), (0.0, 20_048_966.104_014_6)),
    (
        (-179.999, -85.0),
        (-20_037_397.023_298_45, -19_971_868.880_408_563),
    ),
];

#[test]
fn forward_reference_points() {
    for ((lon, lat), (x, y)) in FORWARD {
        let (gx, gy) = lonlat_to_web_mercator(lon, lat).unwrap();
        assert!((gx - x).abs() <= 1e-8, "x({lon}) = {gx}, expected {x}");
        assert!((gy - y).abs() <= 2e-8, "y({lat}) = {gy}, expected {y}");
    }
    // The corner of the square extent, as usually quoted with 10 decimals of latitude: those
    // digits fix y only to ~1e-5 m.
    let (x, y) = lonlat_to_web_mercator(180.0, 85.051_128_779_8).unwrap();
    assert_eq!(x, 20_037_508.342_789_244);
    assert!((y - 20_037_508.342_789_244).abs() < 1e-5);
    // Exact at the edges: x of +-180 is the extent, and comes back as +-180.
    assert_eq!(
        lonlat_to_web_mercator(-180.0, 0.0).unwrap().0,
        -WEB_MERCATOR_MAX
    );
    assert_eq!(
        web_mercator_to_lonlat(-WEB_MERCATOR_MAX, 0.0).unwrap().0,
        -180.0
    );
}

#[test]
fn inverse_reference_points() {
    let cases = [
        (
            (6_378_137.0, 6_378_137.0),
            (57.295_779_513_082_32, 49.604_937_420_854_704),
        ), // gd(1)
        (
            (1e6, -3e6),
            (8.983_152_841_195_214, -26.007_420_231_981_246),
        ),
        (
            (WEB_MERCATOR_MAX, WEB_MERCATOR_MAX),
            (180.0, WEB_MERCATOR_MAX_LATITUDE),
        ),
        ((0.0, 1e8), (0.0, 89.999_982_215_535_87)),
        ((0.0, 1e300), (0.0, 90.0)),
    ];
    for ((x, y), (lon, lat)) in cases {
        let (glon, glat) = web_mercator_to_lonlat(x, y).unwrap();
        assert!(
            (glon - lon).abs() <= 1e-13,
            "lon({x}) = {glon}, expected {lon}"
        );
        assert!(
            (glat - lat).abs() <= 1e-13,
            "lat({y}) = {glat}, expected {lat}"
        );
    }
}

#[test]
fn domain_errors_instead_of_wrapping_or_infinity() {
    let forward = |lon, lat| lonlat_to_web_mercator(lon, lat).unwrap_err().code();
    assert_eq!(forward(0.0, 90.0), "ST_LATITUDE_OUT_OF_DOMAIN");
    assert_eq!(forward(0.0, -90.0), "ST_LATITUDE_OUT_OF_DOMAIN");
    assert_eq!(forward(181.0, 0.0), "ST_LONGITUDE_OUT_OF_DOMAIN");
    assert_eq!(forward(-180.000_000_001, 0.0), "ST_LONGITUDE_OUT_OF_DOMAIN");
    assert_eq!(forward(f64::NAN, 0.0), "ST_NON_FINITE_COORDINATE");
    assert_eq!(forward(0.0, f64::INFINITY), "ST_NON_FINITE_COORDINATE");
    let inverse = |x, y| web_mercator_to_lonlat(x, y).unwrap_err().code();
    assert_eq!(
        inverse(WEB_MERCATOR_MAX * 1.000_001, 0.0),
        "ST_MERCATOR_X_OUT_OF_DOMAIN"
    );
    assert_eq!(inverse(0.0, f64::NAN), "ST_NON_FINITE_COORDINATE");
    // Just inside the poles the result is finite.
    let (_, y) = lonlat_to_web_mercator(0.0, 89.999_999_999_999_99).unwrap();
    assert!(y.is_finite() && y > 2e8);

    let err = lonlat_to_web_mercator(181.0, 0.0).unwrap_err().to_string();
    assert!(err.contains("181") && err.contains("[-180, 180]") && err.contains("axis order"));
    let err = lonlat_to_web_mercator(1.0, 90.0).unwrap_err().to_string();
    assert!(err.contains("90") && err.contains("85.06") && err.contains("EPSG:4326"));
}

#[test]
fn between_and_unsupported_pairs() {
    assert_eq!(
        Reprojection::between(&Crs::OgcCrs84, &Crs::Srid(3857)).unwrap(),
        Reprojection::LonLatToWebMercator
    );
    assert_eq!(
        Reprojection::between(&Crs::Srid(0), &Crs::Srid(0)).unwrap(),
        Reprojection::Identity
    );
    let err = Reprojection::between(&Crs::Srid(0), &Crs::Epsg(4326)).unwrap_err();
    assert_eq!(err.code(), "ST_UNSUPPORTED_REPROJECTION");
    assert!(err.to_string().contains("SRID 0 records no CRS"));
    assert!(err.to_string().contains("PROJ"));
}

#[test]
fn slices_are_untouched_on_error_and_lengths_must_match() {
    let mut xs = vec![1.0, 2.0, 3.0];
    let mut ys = vec![1.0, 2.0, 91.0];
    let err = Reprojection::LonLatToWebMercator
        .transform_slices(&mut xs, &mut ys)
        .unwrap_err();
    assert!(err.to_string().contains("#2"));
    assert_eq!(
        (xs.as_slice(), ys.as_slice()),
        ([1.0, 2.0, 3.0].as_slice(), [1.0, 2.0, 91.0].as_slice())
    );
    let err = Reprojection::LonLatToWebMercator
        .transform_slices(&mut xs, &mut ys[..2])
        .unwrap_err();
    assert_eq!(err.code(), "ST_LENGTH_MISMATCH");
}

#[test]
fn arrow_arrays_keep_nulls_and_skip_their_values() {
    let lon = Float64Array::from(vec![Some(10.0), Some(f64::NAN), None, Some(-20.0)]);
    let lat = Float64Array::from(vec![Some(50.0), None, Some(1e300), Some(-30.0)]);
    let (x, y) = Reprojection::LonLatToWebMercator
        .transform_arrays(&lon, &lat)
        .unwrap();
    assert_eq!(x.len(), 4);
    assert_eq!((x.null_count(), y.null_count()), (2, 2));
    assert!(x.is_null(1) && y.is_null(2));
    assert_eq!(
        (x.value(0), y.value(0)),
        lonlat_to_web_mercator(10.0, 50.0).unwrap()
    );
    assert_eq!(
        (x.value(3), y.value(3)),
        lonlat_to_web_mercator(-20.0, -30.0).unwrap()
    );

    let bad = Float64Array::from(vec![0.0, 0.0, 0.0]);
    let lat = Float64Array::from(vec![0.0, 0.0, -95.0]);
    let err = Reprojection::LonLatToWebMercator
        .transform_arrays(&bad, &lat)
        .unwrap_err();
    assert!(err.to_string().contains("#2"), "{err}");
}

#[test]
fn extents_and_bounds() {
    assert_eq!(extent_of(&Crs::Srid(4326)).unwrap(), Extent::WGS84);
    assert_eq!(extent_of(&Crs::Epsg(3857)).unwrap(), Extent::WEB_MERCATOR);
    // The square's edge is latitude 85.0511...: projecting it gives the extent.
    let (_, y) = lonlat_to_web_mercator(0.0, WEB_MERCATOR_MAX_LATITUDE).unwrap();
    assert!((y - WEB_MERCATOR_MAX).abs() < 1e-7);
    let (_, y) = lonlat_to_web_mercator(0.0, 85.06).unwrap();
    assert!((y - WEB_MERCATOR_AREA_OF_USE_MAX_Y).abs() < 0.01);
    for crs in [Crs::Srid(0), Crs::Epsg(32633), Crs::Projjson("p".into())] {
        let err = extent_of(&crs).unwrap_err();
        assert_eq!(err.code(), "ST_UNKNOWN_EXTENT");
        assert!(err.to_string().contains("explicit bounds"));
    }

    let data = Extent::new(-10.0, -5.0, 200.0, 5.0);
    let err = check_bounds_cover(&Extent::WGS84, &data).unwrap_err();
    assert_eq!(err.code(), "ST_BOUNDS_DO_NOT_COVER");
    assert!(
        err.to_string()
            .contains("hilbert(geom, precision, -180, -90, 200, 90)"),
        "{err}"
    );
    check_bounds_cover(&Extent::WGS84, &Extent::new(-1.0, -1.0, 1.0, 1.0)).unwrap();
    check_bounds_cover(&Extent::WGS84, &Extent::WGS84).unwrap();
    for bad in [
        Extent::new(1.0, 0.0, 0.0, 1.0),
        Extent::new(0.0, f64::NAN, 1.0, 1.0),
    ] {
        assert_eq!(
            check_bounds_cover(&bad, &data).unwrap_err().code(),
            "ST_INVALID_BOUNDS"
        );
        assert_eq!(
            check_bounds_cover(&Extent::WGS84, &bad).unwrap_err().code(),
            "ST_INVALID_BOUNDS"
        );
    }
}

fn lon() -> impl Strategy<Value = f64> {
    -180.0..=180.0f64
}

/// Latitudes within the area of use, plus some near the poles.
fn lat() -> impl Strategy<Value = f64> {
    prop_oneof![
        -85.06..=85.06f64,
        -89.999_999..=89.999_999f64,
        -1e-6..1e-6f64
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn round_trip_within_1e9_degrees(lon in lon(), lat in lat()) {
        let (x, y) = lonlat_to_web_mercator(lon, lat).unwrap();
        let (lon2, lat2) = web_mercator_to_lonlat(x, y).unwrap();
        prop_assert!((lon2 - lon).abs() <= 1e-9, "{} -> {}", lon, lon2);
        prop_assert!((lat2 - lat).abs() <= 1e-9, "{} -> {}", lat, lat2);
    }

    #[test]
    fn round_trip_from_mercator(x in -WEB_MERCATOR_MAX..=WEB_MERCATOR_MAX, y in -3e7..3e7f64) {
        let (lon, lat) = web_mercator_to_lonlat(x, y).unwrap();
        let (x2, y2) = lonlat_to_web_mercator(lon, lat).unwrap();
        prop_assert!((x2 - x).abs() <= 1e-6 && (y2 - y).abs() <= 1e-6, "({}, {}) -> ({}, {})", x, y, x2, y2);
    }

    #[test]
    fn monotonic_in_each_axis(a in lon(), b in lon(), c in lat(), d in lat(), other in lat()) {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let (x_lo, y_lo) = lonlat_to_web_mercator(lo, other).unwrap();
        let (x_hi, y_hi) = lonlat_to_web_mercator(hi, other).unwrap();
        prop_assert!(x_lo <= x_hi);
        prop_assert_eq!(y_lo, y_hi, "x must not depend on latitude, y not on longitude");
        let (lo, hi) = if c <= d { (c, d) } else { (d, c) };
        let y_lo = lonlat_to_web_mercator(0.0, lo).unwrap().1;
        let y_hi = lonlat_to_web_mercator(0.0, hi).unwrap().1;
        prop_assert!(y_lo <= y_hi, "y({}) = {} > y({}) = {}", lo, y_lo, hi, y_hi);
        let lat_lo = web_mercator_to_lonlat(0.0, y_lo).unwrap().1;
        let lat_hi = web_mercator_to_lonlat(0.0, y_hi).unwrap().1;
        prop_assert!(lat_lo <= lat_hi);
    }

    #[test]
    fn odd_symmetry(lat in lat()) {
        let y = lonlat_to_web_mercator(0.0, lat).unwrap().1;
        prop_assert_eq!(lonlat_to_web_mercator(0.0, -lat).unwrap().1, -y);
    }

    #[test]
    fn batch_equals_scalar(points in prop::collection::vec((lon(), lat()), 0..300)) {
        let (mut xs, mut ys): (Vec<f64>, Vec<f64>) = points.iter().copied().unzip();
        let arrays = (Float64Array::from(xs.clone()), Float64Array::from(ys.clone()));
        Reprojection::LonLatToWebMercator.transform_slices(&mut xs, &mut ys).unwrap();
        let (ax, ay) = Reprojection::LonLatToWebMercator.transform_arrays(&arrays.0, &arrays.1).unwrap();
        for (i, &(lon, lat)) in points.iter().enumerate() {
            let (x, y) = lonlat_to_web_mercator(lon, lat).unwrap();
            prop_assert_eq!((xs[i].to_bits(), ys[i].to_bits()), (x.to_bits(), y.to_bits()));
            prop_assert_eq!((ax.value(i).to_bits(), ay.value(i).to_bits()), (x.to_bits(), y.to_bits()));
        }
        let (mut lons, mut lats) = (xs.clone(), ys.clone());
        Reprojection::WebMercatorToLonLat.transform_slices(&mut lons, &mut lats).unwrap();
        for i in 0..points.len() {
            let (lon, lat) = web_mercator_to_lonlat(xs[i], ys[i]).unwrap();
            prop_assert_eq!((lons[i].to_bits(), lats[i].to_bits()), (lon.to_bits(), lat.to_bits()));
        }
    }
}
