//! `Geography::s2_cell_ids` against S2's own ids (computed with s2sphere 0.2.5, the Python port
//! of S2: `CellId.from_lat_lng(LatLng.from_degrees(lat, lon)).parent(level).id()`), and
//! properties of line and polygon coverings. The full comparison with S2 on random lines and
//! polygons is `oracle/s2_cells_check.py` (s2sphere candidates, spherely intersections).

use geoberg_geography::{Geography, GeographyError};

fn point(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1, 1, 0, 0, 0];
    v.extend(x.to_le_bytes());
    v.extend(y.to_le_bytes());
    v
}

fn curve(kind: u8, coords: &[(f64, f64)]) -> Vec<u8> {
    let mut v = vec![1, kind, 0, 0, 0];
    if kind == 3 {
        v.extend(1u32.to_le_bytes());
    }
    v.extend((coords.len() as u32).to_le_bytes());
    for (x, y) in coords {
        v.extend(x.to_le_bytes());
        v.extend(y.to_le_bytes());
    }
    v
}

/// `(lon, lat, level, S2 cell id)` from s2sphere.
const POINTS: [(f64, f64, i64, u64); 9] = [
    (13.405, 52.52, 0, 0x5000000000000000),
    (13.405, 52.52, 1, 0x4400000000000000),
    (13.405, 52.52, 10, 0x47a8510000000000),
    (13.405, 52.52, 16, 0x47a851dff0000000),
    (13.405, 52.52, 30, 0x47a851dfecc9a86d),
    (-179.9999, 0.5, 12, 0x7aaad33000000000),
    (179.9999, -0.5, 12, 0x6fffd63000000000),
    (45.0, 90.0, 5, 0x5004000000000000),
    (0.0, -90.0, 7, 0xb000400000000000),
];

#[test]
fn a_points_cell_is_s2s() {
    for (x, y, level, id) in POINTS {
        let cells = Geography::from_wkb(&point(x, y))
            .unwrap()
            .s2_cell_ids(level, 10)
            .unwrap();
        assert_eq!(cells, vec![id], "({x} {y}) at level {level}");
    }
}

#[test]
fn a_line_is_covered_by_the_cells_of_its_points_and_no_far_cell() {
    let line = [(13.0, 52.0), (14.0, 53.0), (15.5, 52.5)];
    let g = Geography::from_wkb(&curve(2, &line)).unwrap();
    for level in [4, 8, 12] {
        let cells = g.s2_cell_ids(level, 100_000).unwrap();
        // Every vertex's own cell is in the cover.
        for (x, y) in line {
            let own = Geography::from_wkb(&point(x, y))
                .unwrap()
                .s2_cell_ids(level, 1)
                .unwrap();
            assert!(cells.contains(&own[0]), "level {level}: vertex ({x} {y})");
        }
        // Sorted and without repeats, and a line's cells are few: S2 cells of level L are
        // at least ~2^-L of a face edge (about 10,000 km / 2^L) wide, so a 300 km line crosses
        // at most a few per 10,000 / 2^L km.
        assert!(cells.windows(2).all(|w| w[0] < w[1]));
        let widest = 10_000.0 / 2f64.powi(level as i32);
        assert!(
            (cells.len() as f64) < 4.0 * (300.0 / widest + 2.0),
            "level {level}: {} cells",
            cells.len()
        );
    }
}

#[test]
fn a_polygon_cover_holds_every_inner_points_cell() {
    let ring = [
        (10.0, 50.0),
        (16.0, 50.0),
        (16.0, 54.0),
        (10.0, 54.0),
        (10.0, 50.0),
    ];
    let g = Geography::from_wkb(&curve(3, &ring)).unwrap();
    let cells = g.s2_cell_ids(6, 10_000).unwrap();
    for i in 0..20 {
        for j in 0..20 {
            let (x, y) = (10.1 + 5.8 * i as f64 / 19.0, 50.1 + 3.8 * j as f64 / 19.0);
            let own = Geography::from_wkb(&point(x, y))
                .unwrap()
                .s2_cell_ids(6, 1)
                .unwrap();
            assert!(cells.contains(&own[0]), "({x} {y})");
        }
    }
    // A far point's cell is not in it.
    let far = Geography::from_wkb(&point(30.0, 52.0))
        .unwrap()
        .s2_cell_ids(6, 1)
        .unwrap();
    assert!(!cells.contains(&far[0]));
}

#[test]
fn levels_and_sizes_are_bounded() {
    let g = Geography::from_wkb(&point(1.0, 2.0)).unwrap();
    for level in [-1, 31] {
        assert!(matches!(
            g.s2_cell_ids(level, 10),
            Err(GeographyError::S2Level { .. })
        ));
    }
    let big = [
        (0.0, 0.0),
        (40.0, 0.0),
        (40.0, 40.0),
        (0.0, 40.0),
        (0.0, 0.0),
    ];
    let err = Geography::from_wkb(&curve(3, &big))
        .unwrap()
        .s2_cell_ids(10, 1000)
        .unwrap_err();
    assert!(err.to_string().contains("pass a lower level"), "{err}");
    let empty = Geography::from_wkb(&curve(2, &[])).unwrap();
    assert_eq!(empty.s2_cell_ids(10, 10).unwrap(), Vec::<u64>::new());
}
