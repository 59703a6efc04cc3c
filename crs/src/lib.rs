//! CRS and SRID rules for Iceberg tables with geometry columns, the extents of the CRSs they may
//! declare, and reprojection between WGS84 and Web Mercator.
//!
//! Every geometry column has one coordinate reference system ([`Crs`]), declared in its
//! [`ColumnType`] (Iceberg v3 `geometry(C)` / `geography(C, A)`), or none for legacy columns.
//! The rules that follow from it are plain functions returning [`CrsError`], whose message says
//! what was wrong, with the values, and every way out; [`CrsError::code`] is stable:
//!
//! | rule | function |
//! |---|---|
//! | which CRS a column may declare, and in which format version | [`validate_declaration`] |
//! | which value SRIDs a column accepts | [`check_value_srid`] |
//! | whether spatial filters skip files | [`can_skip_files`] |
//! | a Hilbert curve's precision and bounds | [`HilbertSpec`] |
//! | bounds of `hilbert(geom, precision)` | [`default_hilbert_bounds`] |
//! | extents, and bounds that must cover the data | [`extent_of`], [`check_bounds_cover`] |
//! | 4326 <-> 3857 for points, slices, Arrow arrays, WKB | [`Reprojection`] |
//! | a value's SRID kept in the value (EWKB) or dropped from it | [`ewkb_with_srid`], [`wkb_without_srid`] |
//!
//! [`Extent`] is the workspace's box in CRS units (curve bounds, file and partition extents);
//! the `serde` feature makes it serializable.
//!
//! ```
//! use geoberg_crs::{
//!     check_value_srid, default_hilbert_bounds, validate_declaration, ColumnType, Crs,
//!     FormatVersion, Reprojection, ValueSrid,
//! };
//!
//! // CREATE TABLE t (geom geometry(3857))
//! let column = ColumnType::geometry("3857".parse::<Crs>()?);
//! validate_declaration("geom", &column, FormatVersion::V3)?;
//!
//! // A value labelled 4326 is rejected; reproject it first.
//! let err = check_value_srid("geom", &column, ValueSrid::Srid(4326)).unwrap_err();
//! assert_eq!(err.code(), "ST_SRID_MISMATCH");
//! let to_column = Reprojection::between(&Crs::Epsg(4326), column.crs().unwrap())?;
//! let (x, y) = to_column.transform(13.4, 52.5)?;
//! assert!((x - 1_491_681.3).abs() < 1.0 && (y - 6_891_041.0).abs() < 10.0);
//!
//! // hilbert(geom, 10) would use WGS84 bounds, which do not fit 3857 metres.
//! assert_eq!(
//!     default_hilbert_bounds("geom", &column).unwrap_err().code(),
//!     "ST_DEFAULT_BOUNDS_NOT_WGS84"
//! );
//! # Ok::<(), geoberg_crs::CrsError>(())
//! ```
#![deny(missing_docs)]
#![deny(unsafe_code)]

mod column_type;
mod crs;
mod declaration;
mod error;
mod ewkb;
mod extent;
mod extent_checks;
mod file_skipping;
mod format_version;
mod hilbert_bounds;
mod hilbert_spec;
mod mercator;
mod parse;
mod reproject;
mod value_check;
mod value_srid;
mod wkb;

pub use column_type::{ColumnType, EdgeAlgorithm};
pub use crs::Crs;
pub use declaration::{GEOGRAPHY_SRIDS, GEOMETRY_SRIDS, validate_declaration};
pub use error::CrsError;
pub use ewkb::{ewkb_with_srid, wkb_without_srid};
pub use extent::{
    Extent, WEB_MERCATOR_AREA_OF_USE_MAX_Y, WEB_MERCATOR_MAX, WEB_MERCATOR_MAX_LATITUDE,
};
pub use extent_checks::{check_bounds_cover, extent_of};
pub use file_skipping::{SkipDecision, can_skip_files};
pub use format_version::FormatVersion;
pub use hilbert_bounds::default_hilbert_bounds;
pub use hilbert_spec::HilbertSpec;
pub use mercator::{WEB_MERCATOR_RADIUS, lonlat_to_web_mercator, web_mercator_to_lonlat};
pub use reproject::Reprojection;
pub use value_check::check_value_srid;
pub use value_srid::ValueSrid;
pub use wkb::MAX_WKB_DEPTH;
