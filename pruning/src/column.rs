//! What the column allows: planar or spherical X, the CRS windows must match, and whether its
//! bounds may be used at all (`crs::can_skip_files`).

use geoberg_crs::{ColumnType, Crs, FormatVersion, can_skip_files};

use crate::error::PruneError;
use crate::filter::BoxFilter;
use crate::plan::{PrunePlan, Tally};
use crate::window::{QueryBox, Surface};

/// The column facts every plan consults.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ColumnRules {
    surface: Surface,
    crs: Option<Crs>,
    /// Why bounds cannot be used, when they cannot.
    cannot_skip: Option<String>,
    /// What is being pruned, for the report.
    target: String,
}

impl ColumnRules {
    fn new(column: &ColumnType, target: String, cannot_skip: Option<String>) -> Self {
        ColumnRules {
            surface: match column {
                ColumnType::Geography { .. } => Surface::Sphere,
                _ => Surface::Planar,
            },
            crs: column.crs().cloned(),
            cannot_skip,
            target,
        }
    }

    /// Data files of an Iceberg table: the format-version rule applies.
    pub(crate) fn for_files(column: &ColumnType, format_version: FormatVersion) -> Self {
        let decision = can_skip_files(format_version, column);
        Self::new(
            column,
            format!("data files of a {column} column, format-version {format_version}"),
            (!decision.can_skip).then_some(decision.reason),
        )
    }

    /// Row groups of one Parquet file: their statistics come from the file, not from Iceberg
    /// metadata, so the format-version rule does not apply.
    pub(crate) fn for_row_groups(column: &ColumnType) -> Self {
        Self::new(column, format!("row groups of a {column} column"), None)
    }

    pub(crate) fn surface(&self) -> Surface {
        self.surface
    }

    pub(crate) fn cannot_skip(&self) -> bool {
        self.cannot_skip.is_some()
    }

    /// The query box for `filter`, after the CRS check; `None` when the window matches nothing.
    pub(crate) fn query(&self, filter: &BoxFilter) -> Result<Option<QueryBox>, PruneError> {
        if let (Some(window), Some(column)) = (filter.crs(), &self.crs)
            && !window.is_same_as(column)
        {
            return Err(PruneError::CrsMismatch {
                window_crs: window.to_string(),
                column_crs: column.to_string(),
            });
        }
        filter.query(self.surface)
    }

    /// A plan with nothing counted yet.
    pub(crate) fn empty_plan(&self, filter: &BoxFilter) -> PrunePlan {
        PrunePlan {
            filter: filter.to_string(),
            target: self.target.clone(),
            reads: Vec::new(),
            total: Tally::default(),
            read: Tally::default(),
            all_null: 0,
            no_rows: 0,
            note: self.cannot_skip.clone(),
        }
    }
}
