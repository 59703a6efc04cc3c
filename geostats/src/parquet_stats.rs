//! Parquet row-group geo statistics for GEOMETRY and GEOGRAPHY columns (feature `parquet`).
//!
//! parquet 58 computes the `GeospatialStatistics` of every GEOMETRY and GEOGRAPHY column chunk
//! through one process-global factory (`parquet::geospatial::accumulator`,
//! `init_geo_stats_accumulator_factory`, a `OnceLock` set at most once, by the first call or
//! the first geo column chunk written). Its default writes no statistics for GEOGRAPHY, since
//! a planar box does not hold great-circle edges. [`ParquetGeoStatsFactory`] keeps parquet's own
//! accumulator for GEOMETRY (with a fast path for 2D points) and bounds GEOGRAPHY (spherical
//! edges, the default algorithm) with [`GeographyBBoxAccumulator`]: the box of each row group
//! holds every value on the sphere, and its X range wraps (`xmin > xmax`, as the Parquet spec
//! allows for geography) when that is narrower. Geography with another edge algorithm
//! (vincenty, karney, ...) gets no statistics, as in SedonaDB's factory: geodesics on the
//! ellipsoid are not great circles.
//!
//! The factory lives here, not in a crate that writes Parquet, because it is this crate's
//! accumulators and bound semantics (wrap, poles, error margin) put into Parquet's interface;
//! the writers (`geoberg-table`, `geoberg-rewrite`) only call [`install_parquet_geo_stats`]
//! before their first write.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use parquet::basic::{EdgeInterpolationAlgorithm, LogicalType};
use parquet::geospatial::accumulator::{
    GeoStatsAccumulator, GeoStatsAccumulatorFactory, ParquetGeoStatsAccumulator,
    VoidGeoStatsAccumulator, init_geo_stats_accumulator_factory,
};
use parquet::geospatial::bounding_box::BoundingBox;
use parquet::geospatial::statistics::GeospatialStatistics;
use parquet::schema::types::ColumnDescPtr;

use crate::accumulator::GeographyBBoxAccumulator;
use crate::wkb_scan::iso_type_code;

/// Parquet's geo statistics factory with sound GEOGRAPHY boxes; install it with
/// [`install_parquet_geo_stats`].
///
/// ```
/// use std::sync::Arc;
/// use parquet::basic::{LogicalType, Type};
/// use parquet::geospatial::accumulator::GeoStatsAccumulatorFactory;
/// use parquet::schema::types::{ColumnDescriptor, ColumnPath, Type as SchemaType};
/// use geoberg_geostats::ParquetGeoStatsFactory;
///
/// let column = SchemaType::primitive_type_builder("geog", Type::BYTE_ARRAY)
///     .with_logical_type(Some(LogicalType::Geography { crs: None, algorithm: None }))
///     .build()?;
/// let descr = Arc::new(ColumnDescriptor::new(Arc::new(column), 1, 0, ColumnPath::new(vec![])));
/// let mut acc = ParquetGeoStatsFactory.new_accumulator(&descr);
/// // LINESTRING (170 0, -170 0): the short way, across the antimeridian.
/// let mut line = vec![1, 2, 0, 0, 0, 2, 0, 0, 0];
/// for v in [170.0f64, 0.0, -170.0, 0.0] {
///     line.extend(v.to_le_bytes());
/// }
/// acc.update_wkb(&line);
/// let stats = acc.finish().unwrap();
/// let b = stats.bounding_box().unwrap();
/// assert_eq!((b.get_xmin(), b.get_xmax()), (170.0, -170.0));
/// assert_eq!(stats.geospatial_types(), Some(&vec![2]));
/// # Ok::<(), parquet::errors::ParquetError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ParquetGeoStatsFactory;

impl GeoStatsAccumulatorFactory for ParquetGeoStatsFactory {
    fn new_accumulator(&self, descr: &ColumnDescPtr) -> Box<dyn GeoStatsAccumulator> {
        match descr.logical_type_ref() {
            Some(LogicalType::Geometry { .. }) => Box::new(PlanarStats::default()),
            Some(LogicalType::Geography {
                algorithm: None | Some(EdgeInterpolationAlgorithm::SPHERICAL),
                ..
            }) => Box::new(SphericalStats::default()),
            _ => Box::new(VoidGeoStatsAccumulator::default()),
        }
    }
}

/// One GEOMETRY column chunk's statistics: parquet's own accumulator, with a fast path for the
/// commonest value, a little-endian 2D point. Parquet parses each value with the generic WKB
/// reader, walks it once per dimension and inserts its type into a SipHash set: 5% of the CPU
/// of a 100 M-point rewrite (BENCHMARKS.md, "cli: `CREATE SPATIAL INDEX` side by side", on the
/// statistics of points). Points only widen a box here; [`PlanarStats::finish`] replays that
/// box into parquet's accumulator as at most two points, so the statistics are parquet's for
/// the same values (a property test compares the two).
#[derive(Debug, Default)]
struct PlanarStats {
    points: PointBox,
    parquet: ParquetGeoStatsAccumulator,
}

/// The x and y ranges of 2D points, NaN coordinates ignored (as parquet's bounder ignores them).
#[derive(Debug, Clone, Copy)]
struct PointBox {
    seen: bool,
    x: (f64, f64),
    y: (f64, f64),
}

impl Default for PointBox {
    fn default() -> Self {
        PointBox {
            seen: false,
            x: (f64::INFINITY, f64::NEG_INFINITY),
            y: (f64::INFINITY, f64::NEG_INFINITY),
        }
    }
}

impl PointBox {
    /// Two points whose statistics are this box's: each range's ends, or NaN for an empty range
    /// (parquet's emptiness test: nothing widened it).
    fn corners(&self) -> [[f64; 2]; 2] {
        let ends = |(lo, hi): (f64, f64)| {
            if hi - lo == f64::NEG_INFINITY {
                (f64::NAN, f64::NAN)
            } else {
                (lo, hi)
            }
        };
        let (x, y) = (ends(self.x), ends(self.y));
        [[x.0, y.0], [x.1, y.1]]
    }
}

/// Byte order (little-endian) and ISO type code (1, a 2D point) that open the values the fast
/// path takes; x and y follow as two little-endian doubles.
const LE_POINT_HEADER: [u8; 5] = [1, 1, 0, 0, 0];

/// `(x, y)` of a little-endian 2D WKB point, the value the fast path takes.
#[inline]
fn le_point(wkb: &[u8]) -> Option<(f64, f64)> {
    let wkb: &[u8; 21] = wkb.try_into().ok()?;
    if wkb[..5] != LE_POINT_HEADER {
        return None;
    }
    let x = f64::from_le_bytes(wkb[5..13].try_into().expect("8 bytes"));
    let y = f64::from_le_bytes(wkb[13..21].try_into().expect("8 bytes"));
    Some((x, y))
}

/// The little-endian 2D WKB point `(x, y)`: what [`le_point`] reads.
fn le_point_wkb(x: f64, y: f64) -> [u8; 21] {
    let mut wkb = [0u8; 21];
    wkb[..5].copy_from_slice(&LE_POINT_HEADER);
    wkb[5..13].copy_from_slice(&x.to_le_bytes());
    wkb[13..21].copy_from_slice(&y.to_le_bytes());
    wkb
}

impl GeoStatsAccumulator for PlanarStats {
    fn is_valid(&self) -> bool {
        self.parquet.is_valid()
    }

    fn update_wkb(&mut self, wkb: &[u8]) {
        match le_point(wkb) {
            Some((x, y)) => {
                let b = &mut self.points;
                b.seen = true;
                b.x = (b.x.0.min(x), b.x.1.max(x));
                b.y = (b.y.0.min(y), b.y.1.max(y));
            }
            None => self.parquet.update_wkb(wkb),
        }
    }

    fn finish(&mut self) -> Option<Box<GeospatialStatistics>> {
        let points = std::mem::take(&mut self.points);
        if points.seen {
            for [x, y] in points.corners() {
                self.parquet.update_wkb(&le_point_wkb(x, y));
            }
        }
        self.parquet.finish()
    }
}

/// One GEOGRAPHY column chunk's statistics: its box on the sphere and its geometry types.
#[derive(Debug, Default)]
struct SphericalStats {
    bounds: GeographyBBoxAccumulator,
    types: BTreeSet<i32>,
    invalid: bool,
}

impl GeoStatsAccumulator for SphericalStats {
    fn is_valid(&self) -> bool {
        !self.invalid
    }

    fn update_wkb(&mut self, wkb: &[u8]) {
        if self.invalid {
            return;
        }
        match (iso_type_code(wkb), self.bounds.add_wkb(wkb)) {
            (Ok(code), Ok(())) => {
                self.types.insert(code);
            }
            // No statistics rather than wrong ones; the writer rejects invalid WKB anyway.
            _ => self.invalid = true,
        }
    }

    fn finish(&mut self) -> Option<Box<GeospatialStatistics>> {
        let done = std::mem::take(self);
        if done.invalid {
            return None;
        }
        let bbox = done.bounds.finish().map(|b| {
            let mut bbox = BoundingBox::new(b.min_x, b.max_x, b.min_y, b.max_y);
            if let Some(z) = b.z {
                bbox = bbox.with_zrange(z.min, z.max);
            }
            if let Some(m) = b.m {
                bbox = bbox.with_mrange(m.min, m.max);
            }
            bbox
        });
        let types = (!done.types.is_empty()).then(|| done.types.into_iter().collect());
        Some(Box::new(GeospatialStatistics::new(bbox, types)))
    }
}

/// What [`install_parquet_geo_stats`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeoStatsInstall {
    /// [`ParquetGeoStatsFactory`] computes this process's Parquet geo statistics.
    Installed,
    /// Another factory was set first (by other code, or by parquet's default when a geo column
    /// was written before the first call): GEOGRAPHY row groups get whatever it writes, usually
    /// nothing. Files still get correct Iceberg bounds from their writer; only row-group
    /// skipping on geography columns is lost.
    TakenByAnother,
}

/// Installs [`ParquetGeoStatsFactory`] as parquet's process-global geo statistics factory, once;
/// later calls return the first outcome. Call it before the first Parquet write of a geo column
/// in the process. When another factory was set first this falls back quietly
/// ([`GeoStatsInstall::TakenByAnother`]): writes keep working.
pub fn install_parquet_geo_stats() -> GeoStatsInstall {
    static OUTCOME: OnceLock<GeoStatsInstall> = OnceLock::new();
    *OUTCOME.get_or_init(|| {
        match init_geo_stats_accumulator_factory(Arc::new(ParquetGeoStatsFactory)) {
            Ok(()) => GeoStatsInstall::Installed,
            Err(_) => GeoStatsInstall::TakenByAnother,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A coordinate, often one that bounders must treat with care.
    fn coordinate() -> impl Strategy<Value = f64> {
        prop_oneof![
            4 => -1e3..1e3f64,
            1 => Just(f64::NAN),
            1 => Just(f64::INFINITY),
            1 => Just(f64::NEG_INFINITY),
            1 => Just(-0.0f64),
        ]
    }

    /// WKB values of every kind the fast path must take or leave to parquet: little-endian 2D
    /// points, big-endian points, points with Z, linestrings, bytes that are not WKB, and
    /// point-sized values of other types.
    fn value() -> impl Strategy<Value = Vec<u8>> {
        let le = |code: u32, coords: &[f64]| {
            let mut w = vec![1u8];
            w.extend(code.to_le_bytes());
            if code == 2 {
                w.extend(((coords.len() / 2) as u32).to_le_bytes());
            }
            coords.iter().for_each(|c| w.extend(c.to_le_bytes()));
            w
        };
        prop_oneof![
            6 => (coordinate(), coordinate()).prop_map(move |(x, y)| le(1, &[x, y])),
            1 => (coordinate(), coordinate()).prop_map(|(x, y)| {
                let mut w = vec![0u8, 0, 0, 0, 1];
                w.extend(x.to_be_bytes());
                w.extend(y.to_be_bytes());
                w
            }),
            1 => (coordinate(), coordinate(), coordinate())
                .prop_map(move |(x, y, z)| le(1001, &[x, y, z])),
            1 => prop::collection::vec(coordinate(), 4..8)
                .prop_map(move |c| le(2, &c[..c.len() / 2 * 2])),
            1 => prop::collection::vec(any::<u8>(), 0..30),
            // 21 little-endian bytes that are not a 2D point: EWKB flags, other ISO codes.
            1 => (
                prop::sample::select(vec![0x2000_0001u32, 0x8000_0001, 0x0100_0001, 1001, 4, 0]),
                coordinate(),
                coordinate(),
            )
                .prop_map(|(code, x, y)| {
                    let mut w = vec![1u8];
                    w.extend(code.to_le_bytes());
                    w.extend(x.to_le_bytes());
                    w.extend(y.to_le_bytes());
                    w
                }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        /// The fast path changes no statistic: parquet's own accumulator, fed the same values,
        /// finishes every column chunk with the same box and types (or the same `None`).
        #[test]
        fn planar_stats_are_parquets(
            chunks in prop::collection::vec(prop::collection::vec(value(), 0..40), 1..4)
        ) {
            let mut ours = PlanarStats::default();
            let mut theirs = ParquetGeoStatsAccumulator::default();
            for chunk in &chunks {
                for wkb in chunk {
                    ours.update_wkb(wkb);
                    theirs.update_wkb(wkb);
                }
                prop_assert_eq!(ours.is_valid(), theirs.is_valid());
                prop_assert_eq!(ours.finish(), theirs.finish());
            }
        }
    }

    fn point(x: f64, y: f64) -> Vec<u8> {
        [&[1u8, 1, 0, 0, 0][..], &x.to_le_bytes(), &y.to_le_bytes()].concat()
    }

    #[test]
    fn bulge_wrap_types_and_reset() {
        let mut acc = SphericalStats::default();
        // LINESTRING (-90 60, 90 60) passes over the North Pole.
        let mut line = vec![1, 2, 0, 0, 0, 2, 0, 0, 0];
        for v in [-90.0f64, 60.0, 90.0, 60.0] {
            line.extend(v.to_le_bytes());
        }
        acc.update_wkb(&line);
        acc.update_wkb(&point(0.0, 0.0));
        let s = acc.finish().unwrap();
        let b = s.bounding_box().unwrap();
        assert_eq!((b.get_ymin(), b.get_ymax()), (0.0, 90.0));
        assert_eq!(s.geospatial_types(), Some(&vec![1, 2]));
        // finish() reset the state.
        acc.update_wkb(&point(179.0, 1.0));
        acc.update_wkb(&point(-179.0, 2.0));
        let s = acc.finish().unwrap();
        let b = s.bounding_box().unwrap();
        assert_eq!((b.get_xmin(), b.get_xmax()), (179.0, -179.0));
        // Nothing added (all null): statistics without a box.
        let s = acc.finish().unwrap();
        assert!(s.bounding_box().is_none() && s.geospatial_types().is_none());
        // Invalid WKB: no statistics, then a fresh start.
        acc.update_wkb(&[1, 2, 3]);
        assert!(!acc.is_valid());
        assert!(acc.finish().is_none());
        assert!(acc.is_valid());
    }

    #[test]
    fn z_and_m_types_follow_iso_codes() {
        let mut acc = SphericalStats::default();
        // POINT Z (1 2 3), ISO code 1001.
        let mut p = vec![1u8];
        p.extend(1001u32.to_le_bytes());
        for v in [1.0f64, 2.0, 3.0] {
            p.extend(v.to_le_bytes());
        }
        acc.update_wkb(&p);
        let s = acc.finish().unwrap();
        assert_eq!(s.geospatial_types(), Some(&vec![1001]));
        let b = s.bounding_box().unwrap();
        assert_eq!((b.get_zmin(), b.get_zmax()), (Some(3.0), Some(3.0)));
    }
}
