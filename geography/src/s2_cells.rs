//! The S2 cells of one level that cover a geography: `ST_S2CellIds(geom, level)`, Sedona's
//! function behind seed 000's S2 partitioning recipe.
//!
//! They are computed as Sedona computes them (its `S2Utils`): a point gives the cell of that
//! level holding it (S2's `S2CellId::FromLatLng(p).parent(level)`, exact, so a point on a cell
//! edge still has one cell); lines and polygons give every cell of the level they intersect,
//! found by descending S2's cell hierarchy from the six cube faces and keeping the children
//! that intersect the value. S2 cell edges are great-circle arcs, so a cell is an exact
//! spherical polygon for this crate's [`Geography::intersects`], and the value's own edges are
//! great-circle arcs too, as in S2. The cell ids and vertices come from the `s2` crate (a
//! pure-Rust port of S2's cell hierarchy, checked against S2's published ids in the tests); the
//! covering is written here because that crate has no polyline or polygon region.

use std::collections::BTreeSet;

use s2::cell::Cell;
use s2::cellid::CellID;
use s2::latlng::LatLng;
use s2::point::Point;
use s2::r3::vector::Vector;

use crate::error::GeographyError;
use crate::geography::Geography;

/// The finest S2 level: leaf cells of about a square centimetre.
pub const MAX_S2_LEVEL: i64 = 30;

impl Geography {
    /// The ids of the S2 cells of `level` (0 to [`MAX_S2_LEVEL`]) that cover this value, in
    /// ascending (unsigned) id order, without repeats; none for an empty value.
    ///
    /// Fails on a level outside 0..=30, and when the covering would need more than
    /// `max_cells` cells (a continent at level 20), naming a lower level as the fix.
    ///
    /// ```
    /// use geoberg_geography::Geography;
    /// // POINT (151.208889 -33.870456): Sydney.
    /// let mut wkb = vec![1, 1, 0, 0, 0];
    /// wkb.extend(151.208889f64.to_le_bytes());
    /// wkb.extend((-33.870456f64).to_le_bytes());
    /// let cells = Geography::from_wkb(&wkb)?.s2_cell_ids(24, 1_000)?;
    /// // S2's token for that cell is 6b12ae3fc7a1b.
    /// assert_eq!(cells, vec![0x6b12ae3fc7a1b000]);
    /// # Ok::<(), geoberg_geography::GeographyError>(())
    /// ```
    pub fn s2_cell_ids(&self, level: i64, max_cells: usize) -> Result<Vec<u64>, GeographyError> {
        let level = u64::try_from(level)
            .ok()
            .filter(|l| *l <= MAX_S2_LEVEL as u64)
            .ok_or(GeographyError::S2Level { level })?;
        let too_many = || GeographyError::TooManyS2Cells {
            level: level as i64,
            max_cells,
        };
        let mut cells = BTreeSet::new();
        for p in &self.points {
            let point = Point(Vector {
                x: p[0],
                y: p[1],
                z: p[2],
            });
            cells.insert(CellID::from(point).parent(level).0);
        }
        if cells.len() > max_cells {
            return Err(too_many());
        }
        let shape = self.without_points();
        if shape.is_empty() {
            return Ok(cells.into_iter().collect());
        }
        let mut pending: Vec<CellID> = (0..6).map(CellID::from_face).collect();
        while let Some(id) = pending.pop() {
            if !cell_geography(id)?.intersects(&shape) {
                continue;
            }
            if id.level() == level {
                cells.insert(id.0);
                if cells.len() > max_cells {
                    return Err(too_many());
                }
            } else {
                pending.extend(id.children());
            }
        }
        Ok(cells.into_iter().collect())
    }
}

/// The cell as a polygon with its four vertices (its edges are great-circle arcs).
fn cell_geography(id: CellID) -> Result<Geography, GeographyError> {
    let vertices = Cell::from(id).vertices();
    let mut wkb = Vec::with_capacity(9 + 5 * 16);
    wkb.extend([1, 3, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0]);
    for p in vertices.iter().chain(&vertices[..1]) {
        let ll = LatLng::from(p);
        wkb.extend(ll.lng.deg().to_le_bytes());
        wkb.extend(ll.lat.deg().to_le_bytes());
    }
    Geography::from_wkb(&wkb)
}
