//! Measures on the sphere: `ST_Area` (square metres), `ST_Length` and `ST_Perimeter` (metres)
//! of geography values, one value at a time and as Arrow batch kernels.
//!
//! As in S2 / s2geography (spherely's `area`, `length`, `perimeter`) and PostGIS's
//! `geography` with `use_spheroid => false`: edges are great-circle arcs, the sphere has the
//! radius [`EARTH_RADIUS_METERS`], and each measure counts only the parts of its dimension: the
//! area of polygons, the length of lines, the perimeter (every ring, holes included) of
//! polygons; points and empty values measure 0. A polygon's area is its rings' areas with the
//! sign of their nesting (a hole subtracts, an island in a hole adds back), rings read as
//! everywhere in this crate (each bounds the smaller of its two sides), so ring orientation
//! does not matter. Values of a Multi* or a GeometryCollection add up.

use arrow_array::{Array, Float64Array};

use crate::error::GeographyError;
use crate::geography::{EARTH_RADIUS_METERS, Geography, Polygon};
use crate::kernels::float_kernel;
use crate::sphere::angle;
use crate::spherical_loop::Side;

impl Polygon {
    /// Area in steradians: the rings' areas, signed by how many other rings hold each.
    fn area(&self) -> f64 {
        let mut total = 0.0;
        for (i, ring) in self.loops.iter().enumerate() {
            let depth = self
                .loops
                .iter()
                .enumerate()
                .filter(|&(j, other)| j != i && holds(other, ring))
                .count();
            if depth % 2 == 0 {
                total += ring.area();
            } else {
                total -= ring.area();
            }
        }
        // Rings that cross (an invalid polygon) can make the signed sum negative.
        total.max(0.0)
    }

    fn perimeter(&self) -> f64 {
        self.loops.iter().map(|l| l.perimeter()).sum()
    }
}

/// Whether `outer`'s region holds `inner` (rings of a valid polygon do not cross, so one vertex
/// off `outer`'s boundary decides; a ring lying on it decides by its interior point).
fn holds(outer: &crate::spherical_loop::Loop, inner: &crate::spherical_loop::Loop) -> bool {
    let side = inner
        .vertices
        .iter()
        .map(|&v| outer.side(v))
        .find(|s| *s != Side::Boundary)
        .unwrap_or_else(|| outer.side(inner.interior_point()));
    side == Side::Inside
}

impl Geography {
    /// `ST_Area` in square metres on the sphere of radius [`EARTH_RADIUS_METERS`]: the area of
    /// the value's polygons (0 for points, lines and empty values).
    ///
    /// ```
    /// use geoberg_geography::{EARTH_RADIUS_METERS, Geography};
    /// // POLYGON ((0 0, 90 0, 0 90, 0 0)): one eighth of the sphere.
    /// let mut wkb = vec![1, 3, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0];
    /// for v in [0f64, 0.0, 90.0, 0.0, 0.0, 90.0, 0.0, 0.0] {
    ///     wkb.extend(v.to_le_bytes());
    /// }
    /// let octant = Geography::from_wkb(&wkb)?;
    /// let expected = 4.0 * std::f64::consts::PI * EARTH_RADIUS_METERS.powi(2) / 8.0;
    /// assert!((octant.area() - expected).abs() < 1e-6 * expected);
    /// # Ok::<(), geoberg_geography::GeographyError>(())
    /// ```
    pub fn area(&self) -> f64 {
        let steradians: f64 = self.polygons.iter().map(Polygon::area).sum();
        steradians * EARTH_RADIUS_METERS * EARTH_RADIUS_METERS
    }

    /// `ST_Length` in metres: the great-circle length of the value's lines (0 for points,
    /// polygons and empty values; a polygon's boundary is [`Geography::perimeter`]).
    pub fn length(&self) -> f64 {
        let radians: f64 = self
            .lines
            .iter()
            .flat_map(|l| l.windows(2).map(|w| angle(w[0], w[1])))
            .sum();
        radians * EARTH_RADIUS_METERS
    }

    /// `ST_Perimeter` in metres: the great-circle length of every ring of the value's polygons,
    /// holes included (0 for points, lines and empty values).
    pub fn perimeter(&self) -> f64 {
        let radians: f64 = self.polygons.iter().map(Polygon::perimeter).sum();
        radians * EARTH_RADIUS_METERS
    }
}

/// `ST_Area(row)` in square metres for every row ([`Geography::area`]).
pub fn area(array: &dyn Array) -> Result<Float64Array, GeographyError> {
    float_kernel(array, Geography::area)
}

/// `ST_Length(row)` in metres for every row ([`Geography::length`]).
pub fn length(array: &dyn Array) -> Result<Float64Array, GeographyError> {
    float_kernel(array, Geography::length)
}

/// `ST_Perimeter(row)` in metres for every row ([`Geography::perimeter`]).
pub fn perimeter(array: &dyn Array) -> Result<Float64Array, GeographyError> {
    float_kernel(array, Geography::perimeter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::BinaryArray;

    fn polygon(rings: &[&[(f64, f64)]]) -> Vec<u8> {
        let mut v = vec![1, 3, 0, 0, 0];
        v.extend((rings.len() as u32).to_le_bytes());
        for r in rings {
            v.extend((r.len() as u32).to_le_bytes());
            for (x, y) in *r {
                v.extend(x.to_le_bytes());
                v.extend(y.to_le_bytes());
            }
        }
        v
    }

    #[test]
    fn holes_subtract_whatever_their_orientation() {
        let shell = [
            (0.0, 0.0),
            (20.0, 0.0),
            (20.0, 20.0),
            (0.0, 20.0),
            (0.0, 0.0),
        ];
        let hole = [
            (5.0, 5.0),
            (10.0, 5.0),
            (10.0, 10.0),
            (5.0, 10.0),
            (5.0, 5.0),
        ];
        let reversed: Vec<(f64, f64)> = hole.iter().rev().copied().collect();
        let full = Geography::from_wkb(&polygon(&[&shell])).unwrap().area();
        let cut = Geography::from_wkb(&polygon(&[&hole])).unwrap().area();
        for h in [&hole[..], &reversed[..]] {
            let g = Geography::from_wkb(&polygon(&[&shell, h])).unwrap();
            assert!(
                (g.area() - (full - cut)).abs() < 1e-6 * full,
                "{}",
                g.area()
            );
        }
    }

    #[test]
    fn degenerate_rings_and_empty_values_measure_zero() {
        // A ring along one great circle has no area; an empty polygon has nothing.
        let flat = polygon(&[&[(0.0, 0.0), (10.0, 0.0), (20.0, 0.0), (0.0, 0.0)]]);
        assert_eq!(Geography::from_wkb(&flat).unwrap().area(), 0.0);
        let empty = polygon(&[]);
        let g = Geography::from_wkb(&empty).unwrap();
        assert_eq!((g.area(), g.length(), g.perimeter()), (0.0, 0.0, 0.0));
        let rows = BinaryArray::from(vec![Some(&empty[..]), None]);
        let a = area(&rows).unwrap();
        assert_eq!((a.value(0), a.is_null(1)), (0.0, true));
    }
}
