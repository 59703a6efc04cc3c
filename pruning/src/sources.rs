//! Where a file's box comes from: the column bounds of a manifest entry, tightest source first.

use geoberg_crs::ColumnType;
use geoberg_geostats::{
    BBox, GeoKind, GeostatsError, decode_double_bound, decode_geospatial_bounds,
};

/// Which kind of stored bounds a box was decoded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoundSource {
    /// Iceberg v3 `geometry` / `geography` bounds (spec "Bounds for Geometry and Geography").
    Geospatial,
    /// Bounds of a geometry column without a declared CRS on a v1/v2 table (same point
    /// encoding, always planar).
    Legacy,
    /// `double` bounds of the materialized bbox columns (`bbox_min_x` ... `bbox_max_y`).
    BBoxColumns,
}

/// The raw `lower_bounds` / `upper_bounds` values a manifest entry may carry for one geometry
/// column. Fill what the entry has; [`BoundSources::best`] picks the tightest that decodes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BoundSources<'a> {
    /// `(lower, upper)` of the v3 geometry/geography column.
    pub geospatial: Option<(&'a [u8], &'a [u8])>,
    /// `(lower, upper)` of a no-CRS geometry column on a v1/v2 table.
    pub legacy: Option<(&'a [u8], &'a [u8])>,
    /// `[lower(min_x), lower(min_y), upper(max_x), upper(max_y)]` of the bbox columns.
    pub bbox_columns: Option<[&'a [u8]; 4]>,
}

/// The box chosen from [`BoundSources`], and what was wrong with the sources passed over.
#[derive(Debug, Clone, PartialEq)]
pub struct BestBounds {
    /// The box, `None` when no source decodes: the file is then read (unknown).
    pub bbox: Option<BBox>,
    /// The source the box came from.
    pub source: Option<BoundSource>,
    /// Sources present but undecodable (wrong length, NaN, min above max), to report.
    pub rejected: Vec<(BoundSource, GeostatsError)>,
}

impl BoundSources<'_> {
    /// Decodes the sources in order v3 bounds, legacy bounds, bbox columns and returns the first
    /// that decodes. A corrupt bound never fails the plan: it is passed over (and reported), so
    /// the file is pruned by a looser source or read.
    ///
    /// ```
    /// use geoberg_crs::{ColumnType, Crs};
    /// use geoberg_geostats::{BBox, encode_double_bound, encode_geospatial_bounds};
    /// use geoberg_pruning::{BoundSource, BoundSources};
    ///
    /// let (lo, hi) = encode_geospatial_bounds(&BBox::new(1.0, 2.0, 3.0, 4.0));
    /// let d = [0.0, 0.0, 9.0, 9.0].map(encode_double_bound);
    /// let sources = BoundSources {
    ///     geospatial: Some((&lo, &hi)),
    ///     bbox_columns: Some([&d[0], &d[1], &d[2], &d[3]]),
    ///     ..Default::default()
    /// };
    /// let best = sources.best(&ColumnType::geometry(Crs::Epsg(4326)));
    /// assert_eq!(best.bbox, Some(BBox::new(1.0, 2.0, 3.0, 4.0)));
    /// assert_eq!(best.source, Some(BoundSource::Geospatial));
    /// ```
    pub fn best(&self, column: &ColumnType) -> BestBounds {
        let kind = match column {
            ColumnType::Geography { .. } => GeoKind::Geography,
            _ => GeoKind::Geometry,
        };
        let mut rejected = Vec::new();
        let candidates = [
            (
                BoundSource::Geospatial,
                self.geospatial
                    .map(|(lo, hi)| decode_geospatial_bounds(kind, lo, hi)),
            ),
            (
                BoundSource::Legacy,
                self.legacy
                    .map(|(lo, hi)| decode_geospatial_bounds(GeoKind::Geometry, lo, hi)),
            ),
            (
                BoundSource::BBoxColumns,
                self.bbox_columns.map(decode_bbox_columns),
            ),
        ];
        for (source, decoded) in candidates {
            match decoded {
                Some(Ok(bbox)) => {
                    return BestBounds {
                        bbox: Some(bbox),
                        source: Some(source),
                        rejected,
                    };
                }
                Some(Err(e)) => rejected.push((source, e)),
                None => {}
            }
        }
        BestBounds {
            bbox: None,
            source: None,
            rejected,
        }
    }
}

/// `[lower(min_x), lower(min_y), upper(max_x), upper(max_y)]` as a box.
fn decode_bbox_columns(b: [&[u8]; 4]) -> Result<BBox, GeostatsError> {
    let v = [
        decode_double_bound(b[0])?,
        decode_double_bound(b[1])?,
        decode_double_bound(b[2])?,
        decode_double_bound(b[3])?,
    ];
    for (what, x) in [
        ("lower bound of the min_x column", v[0]),
        ("lower bound of the min_y column", v[1]),
        ("upper bound of the max_x column", v[2]),
        ("upper bound of the max_y column", v[3]),
    ] {
        if x.is_nan() {
            return Err(GeostatsError::BoundNaN { what });
        }
    }
    let hint = "some rows have min > max in their bbox columns; audit and rewrite them";
    for (what, lower, upper) in [
        ("bbox columns x", v[0], v[2]),
        ("bbox columns y", v[1], v[3]),
    ] {
        if lower > upper {
            return Err(GeostatsError::BoundOrder {
                what,
                lower,
                upper,
                hint,
            });
        }
    }
    Ok(BBox::new(v[0], v[1], v[2], v[3]))
}
