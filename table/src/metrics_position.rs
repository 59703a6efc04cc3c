//! Seed 002's silent failures made loud: a column that pruning depends on (a geometry or
//! geography column, a bbox column, a column of `write.sort-order`, a spatial index column)
//! placed past `write.metadata.metrics.max-inferred-column-defaults` gets metrics mode `none`,
//! and one given a mode without bounds (seed 002 advises `'none'` for a WKB geometry column,
//! whose byte bounds are useless; geoberg's geometry bounds are boxes that prune) loses them
//! too: data files carry no bounds for it and nothing is ever skipped on it.
//!
//! Positions are counted as Iceberg Java's `MetricsConfig.limitFieldIds` counts them
//! (core/src/main/java/org/apache/iceberg/MetricsConfig.java): the primitive fields of the top
//! level in schema order first, then those of each nested struct (list elements and map keys and
//! values as their fields), depth first. An explicit `write.metadata.metrics.default` lifts the
//! cap, an explicit `write.metadata.metrics.column.<c>` decides the column's mode, and a column
//! of the table's Iceberg sort order is raised to `truncate(16)`: none of those is warned about.

use std::fmt;

use crate::error::Result;
use crate::metrics::{
    METRICS_COLUMN_PREFIX, METRICS_DEFAULT, METRICS_MAX_INFERRED, MetricsMode,
    inferred_metrics_order,
};
use crate::properties::SORT_ORDER_PROPERTY;
use crate::table::Table;

/// Iceberg's default for `write.metadata.metrics.max-inferred-column-defaults`.
const DEFAULT_LIMIT: usize = 100;

/// Why a column matters for pruning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PruningRole {
    /// A geometry or geography column: its bounds are the files' boxes.
    GeoColumn,
    /// One of a geometry column's bbox columns.
    BBoxColumn,
    /// Named in `write.sort-order`.
    SortOrder,
    /// The column of a recorded spatial index (`geoberg.spatial-index.<c>`).
    SpatialIndex,
}

/// A pruning column that will get no metrics: data files written from now on carry no bounds
/// for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsPositionWarning {
    /// The column (dotted for nested fields).
    pub column: String,
    /// Why it matters.
    pub role: PruningRole,
    /// Its 1-based position among the columns Iceberg counts against the limit.
    pub position: usize,
    /// The limit in force.
    pub limit: usize,
}

impl fmt::Display for MetricsPositionWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "warning: {} {:?} is metrics column {} but {METRICS_MAX_INFERRED} is {}, so it \
             gets metrics mode none: data files will carry no bounds for it and no file is \
             skipped on it. Fix: ALTER TABLE ... SET TBLPROPERTIES \
             ('{METRICS_COLUMN_PREFIX}{}' = 'full')",
            self.role, self.column, self.position, self.limit, self.column
        )
    }
}

impl fmt::Display for PruningRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PruningRole::GeoColumn => "geo column",
            PruningRole::BBoxColumn => "bbox column",
            PruningRole::SortOrder => "sort-order column",
            PruningRole::SpatialIndex => "spatial index column",
        })
    }
}

/// A pruning column whose metrics mode, set by a property, stores no bounds: data files
/// written from now on carry none for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsModeWarning {
    /// The column (dotted for nested fields).
    pub column: String,
    /// Why it matters.
    pub role: PruningRole,
    /// The mode in force (`none`, `counts`).
    pub mode: MetricsMode,
    /// The property that sets it (`write.metadata.metrics.column.<c>` or `...default`).
    pub property: String,
}

impl fmt::Display for MetricsModeWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.mode {
            MetricsMode::None => "none".to_string(),
            MetricsMode::Counts => "counts".to_string(),
            other => format!("{other:?}").to_lowercase(),
        };
        let why = match self.role {
            PruningRole::GeoColumn => {
                " (geoberg's geometry bounds are boxes, not WKB bytes: they are what skips files)"
            }
            _ => "",
        };
        write!(
            f,
            "warning: {} {:?} has metrics mode {mode} ({}): data files written from now on \
             carry no bounds for it, so no file is skipped on it{why}. Fix: ALTER TABLE ... SET \
             TBLPROPERTIES ('{METRICS_COLUMN_PREFIX}{}' = 'full')",
            self.role, self.column, self.property, self.column
        )
    }
}

/// The column names a `write.sort-order` value sorts by: the leading name of each term
/// (`bbox_min_x DESC NULLS LAST`), and the column arguments of `hilbert(...)` / `zorder(...)`.
fn sort_order_columns(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut term) = (0usize, String::new());
    let mut terms = Vec::new();
    for c in value.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                terms.push(std::mem::take(&mut term));
                continue;
            }
            _ => {}
        }
        term.push(c);
    }
    terms.push(term);
    let unquote = |s: &str| s.trim().trim_matches('`').trim_matches('"').to_string();
    for t in terms {
        let t = t.trim();
        if let Some(open) = t.find('(') {
            let inner = t[open + 1..].trim_end().trim_end_matches(')');
            for arg in inner.split(',') {
                let arg = unquote(arg);
                let is_name = arg
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_');
                if is_name {
                    out.push(arg);
                }
            }
        } else if let Some(first) = t.split_whitespace().next() {
            out.push(unquote(first));
        }
    }
    out
}

impl Table {
    /// The pruning columns of this version that get metrics mode `none` because of where they
    /// sit (see the module docs); empty when every one keeps its bounds. Statements that add
    /// columns or change metrics properties return these as warnings.
    pub fn metrics_position_warnings(&self) -> Result<Vec<MetricsPositionWarning>> {
        let props = self.metadata().properties();
        if props.contains_key(METRICS_DEFAULT) {
            return Ok(Vec::new());
        }
        let limit = props
            .get(METRICS_MAX_INFERRED)
            .and_then(|v| v.trim().parse::<i64>().ok())
            .and_then(|v| usize::try_from(v).ok())
            .unwrap_or(DEFAULT_LIMIT);
        let order = inferred_metrics_order(self.metadata().current_schema().as_struct());
        if order.len() <= limit {
            return Ok(Vec::new());
        }
        let sorted: Vec<i32> = self
            .metadata()
            .default_sort_order()
            .fields
            .iter()
            .map(|f| f.source_id)
            .collect();
        let mut out: Vec<MetricsPositionWarning> = Vec::new();
        for (column, role) in self.pruning_columns()? {
            let Some(index) = order.iter().position(|(_, n)| *n == column) else {
                continue;
            };
            let explicit = props.contains_key(&format!("{METRICS_COLUMN_PREFIX}{column}"));
            if index < limit || explicit || sorted.contains(&order[index].0) {
                continue;
            }
            if out.iter().any(|w| w.column == column) {
                continue;
            }
            out.push(MetricsPositionWarning {
                column,
                role,
                position: index + 1,
                limit,
            });
        }
        Ok(out)
    }

    /// The pruning columns whose metrics mode is set, by `write.metadata.metrics.column.<c>` or
    /// `write.metadata.metrics.default`, to one without bounds (`none`, `counts`). Statements
    /// that change metrics properties return these as warnings.
    pub fn metrics_mode_warnings(&self) -> Result<Vec<MetricsModeWarning>> {
        let props = self.metadata().properties();
        let config = self.metrics_config()?;
        let schema = self.metadata().current_schema();
        let mut out: Vec<MetricsModeWarning> = Vec::new();
        for (column, role) in self.pruning_columns()? {
            let Some(field) = schema.field_by_name(&column) else {
                continue;
            };
            let mode = config.mode(field.id);
            if mode.has_bounds() || out.iter().any(|w| w.column == column) {
                continue;
            }
            let own = format!("{METRICS_COLUMN_PREFIX}{column}");
            let property = if props.contains_key(&own) {
                own
            } else if props.contains_key(METRICS_DEFAULT) {
                METRICS_DEFAULT.to_string()
            } else {
                // Past the inferred-defaults cap: `metrics_position_warnings` says so.
                continue;
            };
            out.push(MetricsModeWarning {
                column,
                role,
                mode,
                property,
            });
        }
        Ok(out)
    }

    /// The columns pruning depends on, each with its role (a column may appear twice).
    fn pruning_columns(&self) -> Result<Vec<(String, PruningRole)>> {
        let props = self.metadata().properties();
        let mut wanted: Vec<(String, PruningRole)> = self
            .geo_columns()
            .iter()
            .map(|g| (g.name.clone(), PruningRole::GeoColumn))
            .collect();
        for g in self.geo_columns() {
            if let Some(b) = self.bbox_columns(&g.name)? {
                wanted.extend(b.names.into_iter().map(|n| (n, PruningRole::BBoxColumn)));
            }
        }
        if let Some(v) = props.get(SORT_ORDER_PROPERTY) {
            wanted.extend(
                sort_order_columns(v)
                    .into_iter()
                    .map(|n| (n, PruningRole::SortOrder)),
            );
        }
        for index in self.properties()?.spatial_indexes {
            wanted.push((index.column, PruningRole::SpatialIndex));
        }
        Ok(wanted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iceberg::spec::{ListType, NestedField, PrimitiveType, StructType, Type};
    use std::sync::Arc;

    #[test]
    fn java_counts_top_level_primitives_before_nested_fields() {
        let long = || Type::Primitive(PrimitiveType::Long);
        let schema = StructType::new(vec![
            Arc::new(NestedField::optional(
                10,
                "s",
                Type::Struct(StructType::new(vec![
                    Arc::new(NestedField::optional(11, "a", long())),
                    Arc::new(NestedField::optional(
                        12,
                        "l",
                        Type::List(ListType::new(Arc::new(NestedField::list_element(
                            13,
                            long(),
                            false,
                        )))),
                    )),
                ])),
            )),
            Arc::new(NestedField::optional(3, "late", long())),
            Arc::new(NestedField::optional(1, "id", long())),
        ]);
        let order: Vec<String> = inferred_metrics_order(&schema)
            .into_iter()
            .map(|(_, n)| n)
            .collect();
        // Schema order, not field-id order: a column added FIRST after creation counts first.
        assert_eq!(order, ["late", "id", "s.a", "s.l.element"]);
    }

    #[test]
    fn sort_order_terms_name_their_columns() {
        assert_eq!(
            sort_order_columns("bbox_min_x ASC NULLS FIRST, `bbox_min_y` DESC"),
            ["bbox_min_x", "bbox_min_y"]
        );
        assert_eq!(
            sort_order_columns("hilbert(geom, 12, -180, -90, 180, 90), zorder(a, b)"),
            ["geom", "a", "b"]
        );
    }
}
