//! Table-driven predicates with their expected rows: the examples of issue 16 (across the
//! antimeridian, over a pole, the great-circle bulge, points near ±180, holes, metres), through
//! the batch kernels.

mod common;

use arrow_array::{Array, BinaryArray, BinaryViewArray, BooleanArray};
use common::{line, point, polygon, rect};
use geoberg_geography::{
    EARTH_RADIUS_METERS, GeographyError, PreparedGeography, contains, covered_by, covers, distance,
    dwithin, intersects, within,
};

fn rows() -> Vec<(&'static str, Vec<u8>)> {
    let pole_ring: Vec<(f64, f64)> = (0..=8).map(|i| (-180.0 + 45.0 * i as f64, 80.0)).collect();
    vec![
        ("point 175 5", point(175.0, 5.0)),
        ("point 0 0", point(0.0, 0.0)),
        ("point past 180", point(180.000_000_000_000_06, 1.0)),
        (
            "line across the antimeridian",
            line(&[(170.0, 0.0), (-170.0, 0.0)]),
        ),
        ("line over the pole", line(&[(-90.0, 60.0), (90.0, 60.0)])),
        ("line at 60N", line(&[(0.0, 60.0), (90.0, 60.0)])),
        ("cap round the North Pole", polygon(&[pole_ring])),
        (
            "square with a hole",
            polygon(&[rect(0.0, 20.0, 10.0, 30.0), rect(4.0, 24.0, 6.0, 26.0)]),
        ),
    ]
}

fn names_where(mask: &BooleanArray, rows: &[(&'static str, Vec<u8>)]) -> Vec<&'static str> {
    (0..mask.len())
        .filter(|&i| mask.value(i))
        .map(|i| rows[i].0)
        .collect()
}

#[test]
fn expected_rows_per_query() {
    let rows = rows();
    let array = BinaryArray::from_iter_values(rows.iter().map(|r| &r.1));
    let window = |x0, y0, x1, y1| polygon(&[rect(x0, y0, x1, y1)]);
    let across = polygon(&[vec![
        (165.0, -10.0),
        (-165.0, -10.0),
        (-165.0, 10.0),
        (165.0, 10.0),
        (165.0, -10.0),
    ]]);
    let cap: Vec<(f64, f64)> = (0..=12).map(|i| (-180.0 + 30.0 * i as f64, 85.0)).collect();
    // (what, query, kernel, expected rows)
    type Kernel = fn(&dyn Array, &PreparedGeography) -> Result<BooleanArray, GeographyError>;
    let cases: Vec<(&str, Vec<u8>, Kernel, Vec<&str>)> = vec![
        (
            "window 176..179 meets the antimeridian line",
            window(176.0, -1.0, 179.0, 1.0),
            intersects,
            vec!["line across the antimeridian"],
        ),
        (
            "window -1..1 does not (the line goes the short way, through 180)",
            window(-1.0, -1.0, 1.0, 1.0),
            intersects,
            vec!["point 0 0"],
        ),
        (
            "within a polygon across the antimeridian",
            across.clone(),
            within,
            vec![
                "point 175 5",
                "point past 180",
                "line across the antimeridian",
            ],
        ),
        (
            "a cap over the North Pole meets the arc through the pole",
            polygon(std::slice::from_ref(&cap)),
            intersects,
            vec!["line over the pole", "cap round the North Pole"],
        ),
        (
            "the cap down to 80N covers the cap down to 85N",
            polygon(&[cap]),
            covers,
            vec!["cap round the North Pole"],
        ),
        (
            "the arc from (0 60) to (90 60) bulges to 67.8N at 45E",
            window(40.0, 66.0, 50.0, 70.0),
            intersects,
            vec!["line at 60N"],
        ),
        (
            "a point in the hole is not in the polygon",
            point(5.0, 25.0),
            covered_by,
            vec![],
        ),
        (
            "a point between hole and shell is",
            point(2.0, 22.0),
            contains,
            vec!["square with a hole"],
        ),
        (
            "a tiny window",
            window(174.999_999, 4.999_999, 175.000_001, 5.000_001),
            intersects,
            vec!["point 175 5"],
        ),
    ];
    for (what, query, kernel, expected) in cases {
        let q = PreparedGeography::from_wkb(&query).unwrap();
        let got = kernel(&array, &q).unwrap();
        assert_eq!(names_where(&got, &rows), expected, "{what}");
    }
    // The small cap is covered by the larger one: the relation seen from the other side.
    let big: Vec<(f64, f64)> = (0..=8).map(|i| (-180.0 + 45.0 * i as f64, 80.0)).collect();
    let small: Vec<(f64, f64)> = (0..=12).map(|i| (-180.0 + 30.0 * i as f64, 85.0)).collect();
    let q = PreparedGeography::from_wkb(&polygon(&[small])).unwrap();
    let a = BinaryArray::from_iter_values([polygon(&[big])]);
    assert!(covers(&a, &q).unwrap().value(0));
    assert!(contains(&a, &q).unwrap().value(0));
}

#[test]
fn distances_are_metres_on_the_mean_sphere() {
    // One degree of the equator is R * pi / 180 metres.
    let degree = EARTH_RADIUS_METERS * std::f64::consts::PI / 180.0;
    let q = PreparedGeography::from_wkb(&point(1.0, 0.0)).unwrap();
    let rows = BinaryArray::from(vec![
        Some(&point(0.0, 0.0)[..]),
        Some(&point(1.0, 0.0)[..]),
        None,
        Some(&line(&[(0.0, -1.0), (0.0, 1.0)])[..]),
        Some(&point(-179.0, 0.0)[..]),
    ]);
    let d = distance(&rows, &q).unwrap();
    assert!((d.value(0) - degree).abs() < 1e-6, "{}", d.value(0));
    assert_eq!(d.value(1), 0.0);
    assert!(d.is_null(2));
    assert!((d.value(3) - degree).abs() < 1e-6);
    assert!((d.value(4) - 180.0 * degree).abs() < 1e-6);
    let near = dwithin(&rows, &q, degree + 0.01).unwrap();
    assert_eq!(
        (0..5)
            .map(|i| near.is_valid(i).then(|| near.value(i)))
            .collect::<Vec<_>>(),
        [Some(true), Some(true), None, Some(true), Some(false)]
    );
    let not_quite = dwithin(&rows, &q, degree - 0.01).unwrap();
    assert!(!not_quite.value(0));
    assert_eq!(
        dwithin(&rows, &q, -1.0).unwrap_err(),
        GeographyError::InvalidDistance { distance: -1.0 }
    );
}

#[test]
fn bad_values_are_typed_errors_with_their_row() {
    let q = PreparedGeography::from_wkb(&point(0.0, 0.0)).unwrap();
    // A CircularString (type 8) in row 1.
    let curve = [1u8, 8, 0, 0, 0, 0, 0, 0, 0];
    let rows = BinaryViewArray::from(vec![&point(1.0, 1.0)[..], &curve[..]]);
    let e = intersects(&rows, &q).unwrap_err();
    assert!(matches!(e, GeographyError::Row { row: 1, .. }), "{e:?}");
    assert!(e.to_string().contains("CircularString"), "{e}");
    let strings = arrow_array::StringArray::from(vec!["POINT (0 0)"]);
    assert!(matches!(
        intersects(&strings, &q),
        Err(GeographyError::UnsupportedArray { .. })
    ));
    assert!(PreparedGeography::from_wkb(&[1, 1, 0]).is_err());
}

#[test]
fn empty_values_match_nothing() {
    let empty = polygon(&[]);
    let q = PreparedGeography::from_wkb(&empty).unwrap();
    let rows = BinaryArray::from_iter_values([point(0.0, 0.0), empty.clone()]);
    assert_eq!(intersects(&rows, &q).unwrap().true_count(), 0);
    assert_eq!(covers(&rows, &q).unwrap().true_count(), 0);
    assert_eq!(distance(&rows, &q).unwrap().value(0), f64::INFINITY);
}
