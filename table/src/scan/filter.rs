//! The one filter a scan is planned with: comparisons on ordinary columns and spatial relations
//! on geometry and geography columns, under AND / OR. Every form a filter arrives in (a
//! WHERE condition, a window box, the engine's pushed expressions) becomes a [`ScanFilter`]
//! before planning; the planner (`scan::planner`) is the only code that decides files from it.

use geoberg_crs::{ColumnType, Crs};
use geoberg_pruning::{BoxFilter, BoxPredicate};
use geoberg_sql::{CompareOp, Predicate, SpatialRelation};

use crate::error::Result;
use crate::geography_window::{GeographyWindow, wrapping_envelope_on_planar_column};
use crate::table::Table;

/// What rows a scan may keep, as far as file and row-group statistics can tell.
///
/// A file is skipped only when its statistics prove that no row passes; whatever cannot be
/// decided keeps the file. Build one with [`ScanFilter::window`], [`ScanFilter::spatial`],
/// [`ScanFilter::from_predicate`] and [`ScanFilter::and`] / [`ScanFilter::or`].
#[derive(Debug, Clone, PartialEq)]
pub enum ScanFilter {
    /// Any row may match: nothing to prune on.
    Anything,
    /// No row matches (a constant `false`).
    Nothing,
    /// All must hold.
    And(Vec<ScanFilter>),
    /// At least one must hold.
    Or(Vec<ScanFilter>),
    /// A condition on an ordinary column: a [`Predicate`] leaf (`Compare`, `In`, `Between` or
    /// `IsNull`), decided on the column's bounds, null and NaN counts.
    Column(Predicate),
    /// `column`'s values may relate to the filter's window: decided on the column's spatial
    /// bounds (planar boxes for geometry, bounds on the sphere for geography).
    Spatial {
        /// The geometry or geography column.
        column: String,
        /// The relation and its window.
        filter: BoxFilter,
    },
}

impl ScanFilter {
    /// Rows whose `column` box meets `window`'s region: the pruning part of
    /// [`crate::Scan::with_window`].
    pub fn spatial(column: impl Into<String>, filter: BoxFilter) -> ScanFilter {
        ScanFilter::Spatial {
            column: column.into(),
            filter,
        }
    }

    /// Conjunction, simplified (`Anything` drops out, `Nothing` absorbs, nested `And`s flatten).
    pub fn and(parts: impl IntoIterator<Item = ScanFilter>) -> ScanFilter {
        let mut flat = Vec::new();
        for p in parts {
            match p {
                ScanFilter::Anything => {}
                ScanFilter::Nothing => return ScanFilter::Nothing,
                ScanFilter::And(inner) => flat.extend(inner),
                p => flat.push(p),
            }
        }
        match flat.len() {
            0 => ScanFilter::Anything,
            1 => flat.pop().unwrap_or(ScanFilter::Anything),
            _ => ScanFilter::And(flat),
        }
    }

    /// Disjunction, simplified (`Nothing` drops out, `Anything` absorbs, nested `Or`s flatten).
    pub fn or(parts: impl IntoIterator<Item = ScanFilter>) -> ScanFilter {
        let mut flat = Vec::new();
        for p in parts {
            match p {
                ScanFilter::Nothing => {}
                ScanFilter::Anything => return ScanFilter::Anything,
                ScanFilter::Or(inner) => flat.extend(inner),
                p => flat.push(p),
            }
        }
        match flat.len() {
            0 => ScanFilter::Nothing,
            1 => flat.pop().unwrap_or(ScanFilter::Nothing),
            _ => ScanFilter::Or(flat),
        }
    }

    /// A WHERE condition of `table` as a scan filter: `NOT` is pushed to the leaves (Iceberg's
    /// `rewriteNot`), spatial leaves become windows on their column (on the sphere for
    /// geography), and a negated spatial leaf, which bounds cannot decide, prunes nothing.
    /// Fails on a column the table does not have as geometry, or on a window its column
    /// cannot take (an envelope across the antimeridian on a planar column, an invalid
    /// geography region).
    pub fn from_predicate(table: &Table, predicate: &Predicate) -> Result<ScanFilter> {
        convert(table, push_not_down(predicate.clone(), false))
    }

    /// True when the filter prunes nothing.
    pub fn is_anything(&self) -> bool {
        matches!(self, ScanFilter::Anything)
    }

    /// The columns of spatial leaves, each once, in order of appearance.
    pub fn spatial_columns(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.visit(&mut |leaf| {
            if let ScanFilter::Spatial { column, .. } = leaf
                && !out.contains(&column.as_str())
            {
                out.push(column.as_str());
            }
        });
        out
    }

    /// Whether some leaf is a condition on an ordinary column (deciding it needs every
    /// column's statistics from the manifests, not only the spatial bounds).
    pub fn has_column_leaves(&self) -> bool {
        let mut any = false;
        self.visit(&mut |leaf| any |= matches!(leaf, ScanFilter::Column(_)));
        any
    }

    fn visit<'a>(&'a self, f: &mut impl FnMut(&'a ScanFilter)) {
        match self {
            ScanFilter::And(ps) | ScanFilter::Or(ps) => ps.iter().for_each(|p| p.visit(f)),
            leaf => f(leaf),
        }
    }
}

fn convert(table: &Table, p: Predicate) -> Result<ScanFilter> {
    Ok(match p {
        Predicate::And(ps) => ScanFilter::and(
            ps.into_iter()
                .map(|p| convert(table, p))
                .collect::<Result<Vec<_>>>()?,
        ),
        Predicate::Or(ps) => ScanFilter::or(
            ps.into_iter()
                .map(|p| convert(table, p))
                .collect::<Result<Vec<_>>>()?,
        ),
        // Only a negated spatial leaf is left under NOT: its window is still checked.
        Predicate::Not(inner) => {
            convert(table, *inner)?;
            ScanFilter::Anything
        }
        Predicate::Spatial(s) => {
            let geo = table.geo_column(&s.column)?;
            let predicate = match s.relation {
                SpatialRelation::Intersects => BoxPredicate::Intersects,
                SpatialRelation::Contains => BoxPredicate::Contains,
                SpatialRelation::Within => BoxPredicate::Within,
                SpatialRelation::DWithin(distance) => BoxPredicate::DistanceWithin { distance },
            };
            // Geography: the region the window means on the sphere (an envelope by its
            // corners, so that one across the antimeridian is the one region it is); an
            // envelope across the antimeridian means nothing on a planar column.
            let mut filter = match &geo.column_type {
                ColumnType::Geography { .. } => {
                    GeographyWindow::from_sql(&s.window)?.filter(predicate)?
                }
                planar if s.window.wraps() => {
                    return Err(wrapping_envelope_on_planar_column(&s, planar));
                }
                _ => BoxFilter::from_wkb(predicate, s.window.wkb())?,
            };
            if let Some(srid) = s.window.srid() {
                filter = filter.with_crs(Crs::Srid(srid));
            }
            ScanFilter::spatial(s.column, filter)
        }
        leaf => ScanFilter::Column(leaf),
    })
}

/// `NOT` pushed to the leaves (Iceberg's `rewriteNot`), so that every leaf asks "may a row
/// match?". A negated spatial leaf cannot be decided from bounds and stays a `Not`.
fn push_not_down(p: Predicate, negate: bool) -> Predicate {
    use Predicate as P;
    match (p, negate) {
        (P::Not(inner), n) => push_not_down(*inner, !n),
        (P::And(ps), false) => P::And(ps.into_iter().map(|p| push_not_down(p, false)).collect()),
        (P::Or(ps), false) => P::Or(ps.into_iter().map(|p| push_not_down(p, false)).collect()),
        (P::And(ps), true) => P::Or(ps.into_iter().map(|p| push_not_down(p, true)).collect()),
        (P::Or(ps), true) => P::And(ps.into_iter().map(|p| push_not_down(p, true)).collect()),
        (P::Compare { column, op, value }, true) => P::Compare {
            column,
            op: match op {
                CompareOp::Eq => CompareOp::NotEq,
                CompareOp::NotEq => CompareOp::Eq,
                CompareOp::Lt => CompareOp::GtEq,
                CompareOp::LtEq => CompareOp::Gt,
                CompareOp::Gt => CompareOp::LtEq,
                CompareOp::GtEq => CompareOp::Lt,
            },
            value,
        },
        (
            P::In {
                column,
                values,
                negated,
            },
            true,
        ) => P::In {
            column,
            values,
            negated: !negated,
        },
        (
            P::Between {
                column,
                low,
                high,
                negated,
            },
            true,
        ) => P::Between {
            column,
            low,
            high,
            negated: !negated,
        },
        (P::IsNull { column, negated }, true) => P::IsNull {
            column,
            negated: !negated,
        },
        (p @ P::Spatial(_), true) => P::Not(Box::new(p)),
        (p, false) => p,
    }
}

/// A builder's predicate and its WHERE text (`where_sql`), parsed and combined with AND.
pub(crate) fn combined_predicate(
    predicate: Option<&Predicate>,
    sql: Option<&str>,
) -> Result<Option<Predicate>> {
    let parsed = sql.map(geoberg_sql::parse_condition).transpose()?;
    Ok(match (predicate, parsed) {
        (Some(p), Some(q)) => Predicate::and(vec![p.clone(), q]),
        (Some(p), None) => Some(p.clone()),
        (None, q) => q,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use geoberg_geostats::BBox;

    #[test]
    fn not_is_pushed_to_the_leaves() {
        let p = geoberg_sql::parse_condition("NOT (a < 5 OR b IS NULL)").unwrap();
        let q = push_not_down(p, false);
        assert_eq!(
            q,
            geoberg_sql::parse_condition("a >= 5 AND b IS NOT NULL").unwrap()
        );
    }

    #[test]
    fn junctions_simplify() {
        let w = || ScanFilter::spatial("g", BoxFilter::intersects(BBox::new(0., 0., 1., 1.)));
        assert_eq!(ScanFilter::and([ScanFilter::Anything, w()]), w());
        assert_eq!(
            ScanFilter::and([w(), ScanFilter::Nothing]),
            ScanFilter::Nothing
        );
        assert_eq!(ScanFilter::or([ScanFilter::Nothing, w()]), w());
        assert_eq!(
            ScanFilter::or([w(), ScanFilter::Anything]),
            ScanFilter::Anything
        );
        assert_eq!(ScanFilter::and([]), ScanFilter::Anything);
        assert_eq!(ScanFilter::or([]), ScanFilter::Nothing);
        let nested = ScanFilter::and([ScanFilter::and([w(), w()]), w()]);
        assert!(matches!(&nested, ScanFilter::And(ps) if ps.len() == 3));
        assert_eq!(nested.spatial_columns(), ["g"]);
        assert!(!nested.has_column_leaves());
    }
}
