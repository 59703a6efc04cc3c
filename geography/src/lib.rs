//! Exact spherical predicates for `geography` columns: edges are great-circle arcs on a sphere,
//! distances are metres on the sphere of the mean Earth radius.
//!
//! The main API is a set of Arrow batch kernels over a column of WKB values and one constant query
//! geography, prepared once ([`PreparedGeography`]): [`intersects`], [`contains`], [`within`],
//! [`covers`], [`covered_by`], [`dwithin`] (metres) return a `BooleanArray`, [`distance`] a
//! `Float64Array` in metres. They are what an engine registers as `ST_Intersects(geog, geog)`
//! and friends. The measures [`area`] (square metres), [`length`] and [`perimeter`] (metres)
//! are kernels over one column. [`Geography`] is one parsed value with the same predicates and
//! measures, and the S2 cells of a level that cover it ([`Geography::s2_cell_ids`]).
//!
//! Semantics follow S2 / s2geography (what spherely, BigQuery and SedonaDB's S2 kernels use):
//! * Edges are minor great-circle arcs between consecutive vertices.
//! * Polygon rings are read as s2geography reads WKB without orientation (`oriented=false`, the
//!   default of spherely's `from_wkb`): each ring bounds the smaller of its two sides
//!   (`S2Loop::Normalize`), rings nest as holes (`S2Polygon::InitNested`), so clockwise and
//!   counter-clockwise rings mean the same polygon. A polygon larger than half the sphere cannot
//!   be written this way, as in spherely.
//! * Distances use [`EARTH_RADIUS_METERS`] = 6371.01 km, the radius of `S2Earth` in S2, in
//!   s2geography and in spherely (`spherely.EARTH_RADIUS_METERS == 6371010.0`).
//! * Boundaries are closed: a point on a polygon edge intersects and is covered by it; `contains`
//!   also needs the interiors to meet (OGC). S2's default polygon model is semi-open, so on exact
//!   boundary cases (a point exactly on an edge) the two can differ; off the boundary they agree,
//!   which `oracle/check.py` checks against spherely on thousands of random cases.
//!
//! Robustness: every topological decision (edge crossing, point on edge, crossing parity for
//! point-in-polygon) reduces to the orientation sign of three unit vectors, computed exactly by
//! `robust::orient3d` (Shewchuk's adaptive predicates, georust's `robust` crate) with the origin
//! as fourth point, as S2's `s2pred::Sign` does with its exact fallback. No Rust crate offers
//! S2's polygon predicates today: the `s2` crate (0.2) has cells and lat/lng types but no
//! polygon or boolean operations, `s2rst` is a young port, and `geo`'s spherical algorithms are
//! measures (haversine, geodesic) without topology. So the predicates are written here, on top
//! of `robust`, in a few hundred lines.
//!
//! ```
//! use arrow_array::{Array, BinaryArray};
//! use geoberg_geography::{PreparedGeography, dwithin, within};
//!
//! fn wkb_polygon(ring: &[(f64, f64)]) -> Vec<u8> {
//!     let mut v = vec![1, 3, 0, 0, 0, 1, 0, 0, 0];
//!     v.extend((ring.len() as u32).to_le_bytes());
//!     for (x, y) in ring {
//!         v.extend(x.to_le_bytes());
//!         v.extend(y.to_le_bytes());
//!     }
//!     v
//! }
//! fn wkb_point(x: f64, y: f64) -> Vec<u8> {
//!     let mut v = vec![1, 1, 0, 0, 0];
//!     v.extend(x.to_le_bytes());
//!     v.extend(y.to_le_bytes());
//!     v
//! }
//! // A window across the antimeridian, from 170E to 170W.
//! let window = wkb_polygon(&[(170.0, -10.0), (-170.0, -10.0), (-170.0, 10.0), (170.0, 10.0), (170.0, -10.0)]);
//! let query = PreparedGeography::from_wkb(&window)?;
//! let rows = BinaryArray::from(vec![&wkb_point(175.0, 5.0)[..], &wkb_point(0.0, 0.0)[..]]);
//! let inside = within(&rows, &query)?;
//! assert_eq!((inside.value(0), inside.value(1)), (true, false));
//! // Distances are metres: (175, 5) is inside (0 m), (0, 0) is about 18 900 km away.
//! let near = dwithin(&rows, &query, 1_000.0)?;
//! assert_eq!((near.value(0), near.value(1)), (true, false));
//! # Ok::<(), geoberg_geography::GeographyError>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod error;
mod geography;
mod kernels;
mod measures;
mod s2_cells;
mod sphere;
mod spherical_loop;
mod wkb_read;

pub use error::GeographyError;
pub use geography::{EARTH_RADIUS_METERS, Geography};
pub use kernels::{
    PreparedGeography, contains, covered_by, covers, distance, dwithin, intersects, within,
};
pub use measures::{area, length, perimeter};
pub use s2_cells::MAX_S2_LEVEL;
