//! Which data files (and Parquet row groups) a spatial filter must read.
//!
//! Spatial filter push-down compares each file's bounding box (its MBR, from the Iceberg column
//! bounds) with the query window before anything is read, and skips the files that cannot hold a
//! matching row. Every predicate ([`BoxPredicate`]) reduces to a box test: touching counts, Z and M
//! are compared only when both sides have them, and geography boxes may wrap the antimeridian.
//! The exact predicate is evaluated later, on the rows that are read.
//!
//! Geography columns are compared on the sphere: a WKB window is bounded with its great-circle
//! edges (`geoberg_geostats::geography_bbox_of_wkb`), longitudes are a circle (180 and -180 are
//! one meridian; `min_x > max_x` wraps, on windows and file boxes alike), a box that reaches
//! latitude ±90 spans every longitude (writers box a point at the pole with any longitude), and
//! a distance is in metres, grown on the sphere. A [`BoxFilter`] box window on a geography
//! column is the lon/lat rectangle itself; to prune for a polygon envelope with great-circle
//! edges, pass the polygon as WKB ([`BoxFilter::from_wkb`]) so that its bulge is bounded.
//!
//! [`FileIndex`] holds any [`Bounded`] entries (manifest entries, [`FileBounds`], row groups,
//! simulated layouts) in an `rstar` R-tree and returns a [`PrunePlan`]: the entries to read,
//! counts and bytes, the reasons, an [`explain`](PrunePlan::explain) report and
//! [`assert_pruning`](PrunePlan::assert_pruning), the build-breaking check that pruning still
//! works. The rules: a file without bounds is read; a file whose geometries are all null is
//! skipped; a column without a declared CRS on a format-version 3 table reads every file, and the
//! plan says why; a window in another CRS than the column is an error.
//!
//! ```
//! use geoberg_crs::{ColumnType, Crs, FormatVersion};
//! use geoberg_geostats::BBox;
//! use geoberg_pruning::{FileBounds, FileIndex, BoxFilter};
//!
//! // A 10 x 10 grid of files, one per unit square.
//! let files: Vec<FileBounds> = (0..100)
//!     .map(|i| {
//!         let (x, y) = ((i % 10) as f64, (i / 10) as f64);
//!         FileBounds::new(format!("f{i}.parquet"), 1_000, 1 << 20, Some(BBox::new(x, y, x + 1.0, y + 1.0)))
//!     })
//!     .collect();
//! let index = FileIndex::build(files, &ColumnType::geometry(Crs::Epsg(3857)), FormatVersion::V3)?;
//!
//! let filter = BoxFilter::intersects(BBox::new(2.2, 2.2, 2.8, 2.8)).with_crs(Crs::Epsg(3857));
//! let plan = index.plan(&filter)?;
//! assert_eq!(plan.read().files, 1);
//! plan.assert_pruning(0.05)?;
//! print!("{}", plan.explain());
//! # Ok::<(), geoberg_pruning::PruneError>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod bounded;
mod column;
mod error;
mod filter;
mod index;
mod plan;
mod row_groups;
mod sources;
mod window;

pub use bounded::{Bounded, Bounds, FileBounds};
pub use error::PruneError;
pub use filter::{BoxFilter, BoxPredicate};
pub use index::FileIndex;
pub use plan::{PlannedRead, PrunePlan, ReadReason, SkipReason, Tally};
pub use row_groups::{RowGroupBounds, prune_row_groups};
pub use sources::{BestBounds, BoundSource, BoundSources};
