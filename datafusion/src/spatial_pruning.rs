//! The spatial part of a scan's pushed filters: boxes per geometry column (recognised by
//! SedonaDB's [`SpatialFilterFactory`]) and regions per geography column (recognised in
//! `geography_pushdown`), under AND / OR, and their translation into the table's
//! [`ScanFilter`] and into row-group decisions.

use datafusion::logical_expr::Expr;
use geoberg_geostats::BBox;
use geoberg_pruning::{BoxFilter, BoxPredicate};
use geoberg_table::ScanFilter;
use sedona_expr::spatial_filter::{SpatialFilter as SedonaFilter, SpatialFilterFactory};
use sedona_geometry::interval::IntervalTrait;
use serde::{Deserialize, Serialize};

/// The spatial part of a scan's filters: boxes per geometry column under AND / OR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SpatialPruning {
    /// Rows may match only where `column`'s geometry box meets `bbox` (`[min_x, min_y, max_x,
    /// max_y]`): `ST_Intersects`, `ST_Within`, `ST_DWithin` (the box grown by the distance),
    /// and `ST_Contains` / `ST_Covers`, whose box test is the same for pruning.
    Intersects {
        /// The geometry column.
        column: String,
        /// The constant geometry's box.
        bbox: [f64; 4],
    },
    /// Rows may match only where `column`'s geography bounds (on the sphere) meet the region
    /// `wkb` (a constant, its edges great-circle arcs), or come within `distance` metres of it:
    /// `ST_Intersects`, `ST_Contains`, `ST_Within`, `ST_Covers`, `ST_CoveredBy`, `ST_DWithin`
    /// and `ST_Distance(..) <= d` on a geography column.
    Geography {
        /// The geography column.
        column: String,
        /// The constant region, WKB.
        wkb: Vec<u8>,
        /// Metres for `ST_DWithin`; `None`: the row must share a point with the region.
        distance: Option<f64>,
    },
    /// Both must hold.
    And(Box<SpatialPruning>, Box<SpatialPruning>),
    /// Either may hold.
    Or(Box<SpatialPruning>, Box<SpatialPruning>),
    /// No row matches (a constant `false`).
    Nothing,
    /// Any row may match: nothing to prune on.
    Anything,
}

impl SpatialPruning {
    /// The pruning of one filter expression, or [`SpatialPruning::Anything`].
    ///
    /// `geo_columns` are the planar geometry columns; a box on any other column prunes
    /// nothing (geography columns are recognised by [`PushedFilters::new`], on the sphere).
    pub fn from_expr(expr: &Expr, geo_columns: &[String]) -> SpatialPruning {
        match SpatialFilterFactory::default().try_from_logical_expr(expr) {
            Ok(filter) => Self::from_sedona(&filter, geo_columns),
            Err(_) => SpatialPruning::Anything,
        }
    }

    fn from_sedona(filter: &SedonaFilter, geo_columns: &[String]) -> SpatialPruning {
        match filter {
            SedonaFilter::Intersects(column, bbox) | SedonaFilter::Covers(column, bbox) => {
                let (x, y) = (bbox.x(), bbox.y());
                let coords = [x.lo(), y.lo(), x.hi(), y.hi()];
                // An empty or unbounded box (an empty constant, a NaN distance) and a box that
                // wraps the antimeridian are not planar windows: prune nothing on them.
                let usable = !x.is_wraparound()
                    && coords.iter().all(|v| v.is_finite())
                    && coords[0] <= coords[2]
                    && coords[1] <= coords[3];
                if usable && geo_columns.iter().any(|c| c == column.name()) {
                    SpatialPruning::Intersects {
                        column: column.name().to_string(),
                        bbox: coords,
                    }
                } else {
                    SpatialPruning::Anything
                }
            }
            SedonaFilter::And(a, b) => {
                Self::from_sedona(a, geo_columns).and(Self::from_sedona(b, geo_columns))
            }
            SedonaFilter::Or(a, b) => {
                Self::from_sedona(a, geo_columns).or(Self::from_sedona(b, geo_columns))
            }
            SedonaFilter::LiteralFalse => SpatialPruning::Nothing,
            SedonaFilter::HasZ(_) | SedonaFilter::Unknown => SpatialPruning::Anything,
        }
    }

    /// Conjunction, simplified.
    pub fn and(self, other: SpatialPruning) -> SpatialPruning {
        match (self, other) {
            (SpatialPruning::Anything, p) | (p, SpatialPruning::Anything) => p,
            (SpatialPruning::Nothing, _) | (_, SpatialPruning::Nothing) => SpatialPruning::Nothing,
            (a, b) => SpatialPruning::And(Box::new(a), Box::new(b)),
        }
    }

    /// Disjunction, simplified.
    pub fn or(self, other: SpatialPruning) -> SpatialPruning {
        match (self, other) {
            (SpatialPruning::Nothing, p) | (p, SpatialPruning::Nothing) => p,
            (SpatialPruning::Anything, _) | (_, SpatialPruning::Anything) => {
                SpatialPruning::Anything
            }
            (a, b) => SpatialPruning::Or(Box::new(a), Box::new(b)),
        }
    }

    /// True when the filter prunes nothing.
    pub fn is_anything(&self) -> bool {
        matches!(self, SpatialPruning::Anything)
    }

    /// The columns with a box, each once, in order of appearance.
    pub fn columns(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.visit(&mut |leaf| {
            let column = match leaf {
                SpatialPruning::Intersects { column, .. }
                | SpatialPruning::Geography { column, .. } => column.as_str(),
                _ => return,
            };
            if !out.contains(&column) {
                out.push(column);
            }
        });
        out
    }

    /// `(column, bbox)` of every planar box, depth first.
    pub fn boxes(&self) -> Vec<(&str, [f64; 4])> {
        let mut out = Vec::new();
        self.visit(&mut |leaf| {
            if let SpatialPruning::Intersects { column, bbox } = leaf {
                out.push((column.as_str(), *bbox));
            }
        });
        out
    }

    fn visit<'a>(&'a self, f: &mut impl FnMut(&'a SpatialPruning)) {
        match self {
            SpatialPruning::Intersects { .. } | SpatialPruning::Geography { .. } => f(self),
            SpatialPruning::And(a, b) | SpatialPruning::Or(a, b) => {
                a.visit(f);
                b.visit(f);
            }
            SpatialPruning::Nothing | SpatialPruning::Anything => {}
        }
    }

    /// The pruning crate's filter of a leaf (`None` for the others, and for a region the
    /// pruning crate cannot bound: then nothing is pruned on it).
    pub fn leaf_filter(&self) -> Option<BoxFilter> {
        match self {
            SpatialPruning::Intersects { bbox, .. } => Some(BoxFilter::intersects(BBox::new(
                bbox[0], bbox[1], bbox[2], bbox[3],
            ))),
            SpatialPruning::Geography { wkb, distance, .. } => {
                let predicate = match distance {
                    None => BoxPredicate::Intersects,
                    Some(d) => BoxPredicate::DistanceWithin { distance: *d },
                };
                BoxFilter::from_wkb(predicate, wkb).ok()
            }
            _ => None,
        }
    }

    /// The table crate's scan filter of this tree: what the file planner plans with.
    pub fn scan_filter(&self) -> ScanFilter {
        match self {
            SpatialPruning::Intersects { column, .. }
            | SpatialPruning::Geography { column, .. } => match self.leaf_filter() {
                Some(filter) => ScanFilter::spatial(column.clone(), filter),
                None => ScanFilter::Anything,
            },
            SpatialPruning::And(a, b) => ScanFilter::and([a.scan_filter(), b.scan_filter()]),
            SpatialPruning::Or(a, b) => ScanFilter::or([a.scan_filter(), b.scan_filter()]),
            SpatialPruning::Nothing => ScanFilter::Nothing,
            SpatialPruning::Anything => ScanFilter::Anything,
        }
    }
}

impl std::fmt::Display for SpatialPruning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpatialPruning::Intersects { column, bbox } => write!(
                f,
                "{column} && [{}, {}, {}, {}]",
                bbox[0], bbox[1], bbox[2], bbox[3]
            ),
            SpatialPruning::Geography {
                column,
                wkb,
                distance,
            } => {
                let bounds = match geoberg_geostats::geography_bbox_of_wkb(wkb) {
                    Ok(Some(b)) => format!("[{}, {}, {}, {}]", b.min_x, b.min_y, b.max_x, b.max_y),
                    Ok(None) => "empty".to_string(),
                    Err(_) => "invalid WKB".to_string(),
                };
                write!(f, "{column} && sphere {bounds}")?;
                match distance {
                    Some(d) => write!(f, " within {d} m"),
                    None => Ok(()),
                }
            }
            SpatialPruning::And(a, b) => write!(f, "({a} AND {b})"),
            SpatialPruning::Or(a, b) => write!(f, "({a} OR {b})"),
            SpatialPruning::Nothing => f.write_str("false"),
            SpatialPruning::Anything => f.write_str("true"),
        }
    }
}
