//! How two geography boxes relate: longitudes are a circle (180 and -180 are one meridian,
//! `min_x > max_x` wraps the antimeridian) and a box that reaches latitude ±90 spans every
//! longitude (a point at a pole is boxed with whatever longitude it was given).

use crate::bbox::BBox;

/// The longitude arc of a geography box as `[lo, hi]` with `hi - lo` in `[0, 360]`: plain boxes
/// `[min_x, max_x]`, wrapping ones `[min_x, max_x + 360]`, boxes reaching a pole `[-180, 180]`.
fn lon_arc(b: &BBox) -> (f64, f64) {
    if b.max_y >= 90.0 || b.min_y <= -90.0 {
        (-180.0, 180.0)
    } else if b.min_x <= b.max_x {
        (b.min_x, b.max_x)
    } else {
        (b.min_x, b.max_x + 360.0)
    }
}

fn has_nan(b: &BBox) -> bool {
    [b.min_x, b.min_y, b.max_x, b.max_y]
        .iter()
        .any(|v| v.is_nan())
}

/// Whether two geography boxes may share a point (closed edges). A box with a NaN bound meets
/// everything: it cannot rule anything out.
///
/// ```
/// use geoberg_geostats::{BBox, geography_boxes_meet};
/// // 170E..170W wraps the antimeridian: it meets a box at 179W, not one at 0.
/// let fiji = BBox::new(170.0, -20.0, -170.0, -10.0);
/// assert!(geography_boxes_meet(&fiji, &BBox::new(-179.5, -15.0, -179.0, -14.0)));
/// assert!(!geography_boxes_meet(&fiji, &BBox::new(-1.0, -15.0, 1.0, -14.0)));
/// // 180 and -180 are one meridian.
/// assert!(geography_boxes_meet(&BBox::point(180.0, 0.0), &BBox::point(-180.0, 0.0)));
/// ```
pub fn geography_boxes_meet(a: &BBox, b: &BBox) -> bool {
    if has_nan(a) || has_nan(b) {
        return true;
    }
    if a.max_y < b.min_y || b.max_y < a.min_y {
        return false;
    }
    let ((a0, a1), (b0, b1)) = (lon_arc(a), lon_arc(b));
    [-360.0, 0.0, 360.0]
        .iter()
        .any(|s| a0 <= b1 + s && b0 + s <= a1)
}

/// Whether the geography box `outer` holds every point of `inner` (closed edges). False when
/// either has a NaN bound.
///
/// ```
/// use geoberg_geostats::{BBox, geography_box_contains};
/// let file = BBox::new(170.0, -20.0, -170.0, 20.0);
/// assert!(geography_box_contains(&file, &BBox::new(175.0, 0.0, -175.0, 1.0)));
/// // Both ends of [-175, 175] are in the file's box, but the arc between them is not.
/// assert!(!geography_box_contains(&file, &BBox::new(-175.0, 0.0, 175.0, 1.0)));
/// ```
pub fn geography_box_contains(outer: &BBox, inner: &BBox) -> bool {
    if has_nan(outer) || has_nan(inner) {
        return false;
    }
    if !(outer.min_y <= inner.min_y && inner.max_y <= outer.max_y) {
        return false;
    }
    let ((o0, o1), (i0, i1)) = (lon_arc(outer), lon_arc(inner));
    o1 - o0 >= 360.0
        || [-360.0, 0.0, 360.0]
            .iter()
            .any(|s| o0 <= i0 + s && i1 + s <= o1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poles_span_every_longitude() {
        let polar_point = BBox::point(37.0, 90.0);
        assert!(geography_boxes_meet(
            &polar_point,
            &BBox::new(-100.0, 89.0, -99.0, 90.0)
        ));
        // A file box that reaches the pole holds a polar point whatever its longitude.
        assert!(geography_box_contains(
            &BBox::new(0.0, 80.0, 1.0, 90.0),
            &polar_point
        ));
        // A row box that reaches the pole needs a file box that does.
        assert!(!geography_box_contains(
            &BBox::new(0.0, 80.0, 1.0, 89.0),
            &polar_point
        ));
    }

    #[test]
    fn antimeridian_is_one_meridian() {
        assert!(geography_box_contains(
            &BBox::new(-180.0, 0.0, -170.0, 1.0),
            &BBox::point(180.0, 0.5)
        ));
        assert!(geography_boxes_meet(
            &BBox::new(175.0, 0.0, 180.0, 1.0),
            &BBox::new(-180.0, 0.0, -175.0, 1.0)
        ));
        assert!(!geography_boxes_meet(
            &BBox::new(175.0, 0.0, 179.0, 1.0),
            &BBox::new(-179.0, 0.0, -175.0, 1.0)
        ));
        // Latitudes apart: disjoint whatever the longitudes.
        assert!(!geography_boxes_meet(
            &BBox::new(-180.0, 0.0, 180.0, 1.0),
            &BBox::new(-180.0, 2.0, 180.0, 3.0)
        ));
    }

    #[test]
    fn nan_is_never_ruled_out_and_never_contained() {
        let nan = BBox::new(f64::NAN, 0.0, 1.0, 1.0);
        let b = BBox::new(50.0, 50.0, 51.0, 51.0);
        assert!(geography_boxes_meet(&nan, &b));
        assert!(!geography_box_contains(&b, &nan));
        assert!(!geography_box_contains(&nan, &b));
    }
}
