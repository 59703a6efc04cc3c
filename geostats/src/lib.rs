//! Bounding-box statistics for WKB geometry columns, the numbers Iceberg data skipping compares.
//!
//! * [`bbox_of_wkb`] / [`wkb_info`]: the box (and EWKB SRID) of one ISO WKB or EWKB value, with a
//!   zero-copy scanner that rejects malformed input with a typed error and never panics.
//! * [`bbox_columns`]: four `Float64` bbox columns for an Arrow `Binary`, `LargeBinary` or
//!   `BinaryView` WKB column; null where the geometry is null or empty. A writer can keep a
//!   [`BBoxColumnsBuilder`] per column to reuse the output buffers from batch to batch.
//! * [`geography_bbox_of_wkb`]: the box of a `geography` value on the sphere: great-circle edges
//!   that bulge poleward, polygons that contain a pole, longitudes wrapping the antimeridian
//!   (`min_x > max_x`), as S2's `S2LatLngRectBounder` bounds them.
//!   [`geography_bbox_columns`] is its batch kernel; [`geography_boxes_meet`] and
//!   [`geography_box_contains`] compare such boxes (longitudes a circle, poles every longitude).
//! * [`BBoxAccumulator`] and [`GeographyBBoxAccumulator`]: per row group and per file unions,
//!   the latter the smallest longitude range covering every value, wrapping the antimeridian
//!   when that is narrower, independent of the order of adds and merges.
//! * Feature `parquet`: [`ParquetGeoStatsFactory`], parquet's row-group geo statistics with
//!   sound GEOGRAPHY boxes (the default writes none), installed once per process by
//!   [`install_parquet_geo_stats`].
//! * EWKB as other writers produce it: the SRID on the outermost geometry (PostGIS) or repeated
//!   on every member of a collection (JTS's `WKBWriter`, Sedona); a member SRID other than the
//!   outer one (or 0) is [`GeostatsError::NestedSridMismatch`]. Curve and surface types (codes
//!   8..=17) are [`GeostatsError::CurveType`], by name.
//! * [`encode_geospatial_bounds`] / [`decode_geospatial_bounds`]: Iceberg v3 `geometry` and
//!   `geography` bounds (spec "Bounds for Geometry and Geography");
//!   [`BBoxColumnNames::file_bbox`]: a file's box from the bounds of materialized bbox columns.
//! * [`audit`]: counts rows whose bbox columns break the null / empty / point policy.
//!
//! ```
//! use arrow_array::{Array, BinaryArray};
//! use geoberg_geostats::{bbox_columns, encode_geospatial_bounds, BBox, BBoxAccumulator};
//!
//! // LINESTRING (0 0, 10 5) as little-endian ISO WKB.
//! let mut line = vec![1, 2, 0, 0, 0, 2, 0, 0, 0];
//! for v in [0.0f64, 0.0, 10.0, 5.0] {
//!     line.extend(v.to_le_bytes());
//! }
//! let column = BinaryArray::from(vec![Some(&line[..]), None]);
//!
//! let cols = bbox_columns(&column).unwrap();
//! assert_eq!((cols.min_x.value(0), cols.max_x.value(0)), (0.0, 10.0));
//! assert!(cols.min_x.is_null(1));
//!
//! let mut file = BBoxAccumulator::new();
//! file.add_wkb_array(&column).unwrap();
//! let bbox = file.finish().unwrap();
//! assert_eq!(bbox, BBox::new(0.0, 0.0, 10.0, 5.0));
//! let (lower, upper) = encode_geospatial_bounds(&bbox);
//! assert_eq!((lower.len(), upper.len()), (16, 16));
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod accumulator;
mod audit;
mod batch;
mod bbox;
mod bbox_column_bounds;
mod error;
mod extent;
mod geography_batch;
mod geospatial_bounds;
mod lon_cover;
#[cfg(feature = "parquet")]
mod parquet_stats;
mod sphere_box;
mod spherical_bounds;
mod wkb_bbox;
mod wkb_scan;

pub use accumulator::{BBoxAccumulator, GeographyBBoxAccumulator};
pub use audit::{AuditReport, audit, audit_batch};
pub use batch::{BBoxColumns, BBoxColumnsBuilder, bbox_columns};
pub use bbox::{BBox, Interval};
pub use bbox_column_bounds::{BBoxColumnNames, decode_double_bound, encode_double_bound};
pub use error::GeostatsError;
pub use geography_batch::geography_bbox_columns;
pub use geospatial_bounds::{
    GeoKind, GeospatialBound, bounds_of_bbox, decode_geospatial_bounds, encode_geospatial_bounds,
};
#[cfg(feature = "parquet")]
pub use parquet_stats::{GeoStatsInstall, ParquetGeoStatsFactory, install_parquet_geo_stats};
pub use sphere_box::{geography_box_contains, geography_boxes_meet};
pub use spherical_bounds::MARGIN_DEG;
pub use wkb_bbox::{WkbInfo, bbox_of_wkb, geography_bbox_of_wkb, wkb_info};
pub use wkb_scan::MAX_NESTING_DEPTH;
