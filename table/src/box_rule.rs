//! How a data file's box on one geometry column is chosen from its manifest entry: the
//! column's own bounds (v3 geo bounds, or the legacy no-CRS ones), the double bounds of the
//! materialised bbox columns, or none. Decided once per table version and column, applied to
//! every entry; shared by the in-memory file index and the persisted file-bounds index, so that
//! both give every file the same box.

use geoberg_crs::{ColumnType, FormatVersion, can_skip_files};
use geoberg_pruning::{BoundSources, FileBounds};

use crate::bbox_columns::{BBOX_COLUMNS_PROPERTY_PREFIX, BBoxColumns, covers_every_geometry};
use crate::error::Result;
use crate::manifest::ColumnStats;
use crate::schema::BBOX_COLUMN_NAMES;
use crate::table::{GeoColumn, Table};

/// Where a file's box comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The column's own point bounds (v3 geo bounds, or the legacy no-CRS ones), falling back to
    /// the bbox columns when a file's point bounds do not decode.
    Column,
    /// Only the `double` bounds of the materialised bbox columns.
    BBoxColumns,
    /// None: the column's bounds cannot be used and there are no bbox columns.
    None,
}

/// The rule that gives each file of one table version its box on one column.
#[derive(Debug, Clone)]
pub(crate) struct BoxRule {
    column: GeoColumn,
    source: Source,
    declared: bool,
    /// The column's field id, then the four bbox columns' when the table has them.
    field_ids: Vec<i32>,
    bbox_names: Option<Vec<String>>,
    /// Why files are skipped on these bounds, or why they are all read.
    reasons: Vec<String>,
    index_type: ColumnType,
    index_version: FormatVersion,
}

/// One file's box under a [`BoxRule`], with what went wrong choosing it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FileBox {
    /// The file as the planner indexes it.
    pub(crate) file: FileBounds,
    /// Why a bound of the file did not decode (it is pruned on a looser source, or read).
    pub(crate) problem: Option<String>,
    /// The file carries no bounds for the column and no bbox-column bounds.
    pub(crate) boundless: bool,
}

impl BoxRule {
    /// The rule for `column` on this version of `table` (reads no manifest).
    pub(crate) fn of(table: &Table, column: &str) -> Result<BoxRule> {
        let geo = table.geo_column(column)?;
        let version = table.format_version();
        let decision = can_skip_files(version, &geo.column_type);
        let bbox = table.bbox_columns(&geo.name)?;
        let bbox_names =
            |b: &BBoxColumns| format!("{} (found by {})", b.names.join(", "), b.found_by);
        let declared = geo.column_type != ColumnType::GeometryWithoutCrs;
        let mut reasons = Vec::new();
        let source = match (decision.can_skip, &bbox) {
            (false, Some(b)) => {
                reasons.push(format!(
                    "{}; using the double bounds of the bbox columns {} instead",
                    decision.reason,
                    bbox_names(b)
                ));
                Source::BBoxColumns
            }
            (false, None) => {
                reasons.push(format!(
                    "no declared CRS on a v3 table: every file is read ({})",
                    decision.reason
                ));
                Source::None
            }
            (true, Some(b)) if !declared => {
                reasons.push(format!(
                    "files skipped on the double bounds of the bbox columns {} ({})",
                    bbox_names(b),
                    decision.reason
                ));
                Source::BBoxColumns
            }
            (true, None) if !table.bounds_are_points(geo.field_id) => {
                reasons.push(format!(
                    "every file is read: {:?} is a plain binary column written by another \
                     engine, whose bounds are WKB byte prefixes, not boxes; add bbox columns \
                     ({}, or bbox_xmin..., minx..., a bbox struct) or name yours with the table \
                     property {BBOX_COLUMNS_PROPERTY_PREFIX}{} to skip files",
                    geo.name,
                    BBOX_COLUMN_NAMES.join(", "),
                    geo.name,
                ));
                Source::None
            }
            (true, _) => {
                reasons.push(format!(
                    "files skipped on the bounds of {:?}: {}",
                    geo.name, decision.reason
                ));
                Source::Column
            }
        };
        let mut field_ids = vec![geo.field_id];
        field_ids.extend(bbox.iter().flat_map(|b| b.ids));
        // The format-version rule governs the column's own bounds; bbox-column bounds are
        // ordinary doubles, usable in every version.
        let (index_type, index_version) = match source {
            Source::BBoxColumns => (ColumnType::GeometryWithoutCrs, FormatVersion::V2),
            _ => (geo.column_type.clone(), version),
        };
        Ok(BoxRule {
            column: geo,
            source,
            declared,
            field_ids,
            bbox_names: bbox.map(|b| b.names.to_vec()),
            reasons,
            index_type,
            index_version,
        })
    }

    /// The column.
    pub(crate) fn column(&self) -> &GeoColumn {
        &self.column
    }

    /// The field ids whose statistics [`BoxRule::file`] reads, in the order it reads them.
    pub(crate) fn field_ids(&self) -> &[i32] {
        &self.field_ids
    }

    /// Why files are skipped on these bounds, or why they are all read.
    pub(crate) fn reasons(&self) -> &[String] {
        &self.reasons
    }

    /// The column type and format version the file index is built with.
    pub(crate) fn index_rules(&self) -> (&ColumnType, FormatVersion) {
        (&self.index_type, self.index_version)
    }

    /// A string that differs whenever two rules may give a file different boxes: a persisted
    /// box is used only under the rule that chose it.
    pub(crate) fn key(&self) -> String {
        format!(
            "{:?} declared={} fields={:?} type={:?} version={:?} column={:?}",
            self.source,
            self.declared,
            self.field_ids,
            self.index_type,
            self.index_version,
            self.column.column_type,
        )
    }

    /// The box of one live file from its entry's statistics of [`BoxRule::field_ids`]
    /// (`stats[i]` for `field_ids()[i]`).
    pub(crate) fn file(
        &self,
        path: String,
        record_count: u64,
        file_size: u64,
        stats: &[ColumnStats],
    ) -> FileBox {
        let none = ColumnStats::default();
        let own = stats.first().unwrap_or(&none);
        let point = match (&own.lower, &own.upper) {
            (Some(lo), Some(hi)) => Some((lo.as_slice(), hi.as_slice())),
            _ => None,
        };
        let count = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
        let bbox_columns = match stats.get(1..) {
            Some([a, b, c, d])
                if covers_every_geometry(
                    count(own.null_count),
                    [a, b, c, d].map(|s| count(s.null_count)),
                ) =>
            {
                match (&a.lower, &b.lower, &c.upper, &d.upper) {
                    (Some(a), Some(b), Some(c), Some(d)) => {
                        Some([a, b, c, d].map(|v| widen_float_bound(v)))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let bbox_columns = bbox_columns
            .as_ref()
            .map(|[a, b, c, d]| [&a[..], &b[..], &c[..], &d[..]]);
        let sources = match self.source {
            Source::Column if self.declared => BoundSources {
                geospatial: point,
                bbox_columns,
                ..BoundSources::default()
            },
            Source::Column => BoundSources {
                legacy: point,
                bbox_columns,
                ..BoundSources::default()
            },
            Source::BBoxColumns => BoundSources {
                bbox_columns,
                ..BoundSources::default()
            },
            Source::None => BoundSources::default(),
        };
        let best = sources.best(&self.column.column_type);
        let problem = best.rejected.first().map(|(_, p)| p.to_string());
        let all_null = matches!(
            (own.value_count, own.null_count),
            (Some(v), Some(n)) if v == n
        );
        let boundless = point.is_none() && bbox_columns.is_none() && !all_null;
        FileBox {
            file: FileBounds::new(path, record_count, file_size, best.bbox).with_all_null(all_null),
            problem,
            boundless,
        }
    }

    /// What the files' boxes say about the index: files whose bounds did not decode (and the
    /// first problem), files with no bounds at all, out of `total`.
    pub(crate) fn file_reasons(
        &self,
        undecodable: usize,
        first_problem: Option<&str>,
        boundless: usize,
        total: usize,
    ) -> Vec<String> {
        let mut reasons = Vec::new();
        let name = &self.column.name;
        if let Some(problem) = first_problem {
            reasons.push(format!(
                "{undecodable} files carry bounds for {name:?} that do not decode (first: \
                 {problem}); they are pruned on a looser source if one decodes, else read",
            ));
        }
        if self.source != Source::None && boundless > 0 {
            reasons.push(no_bounds_reason(
                name,
                boundless,
                total,
                self.bbox_names.as_deref(),
            ));
        }
        reasons
    }
}

/// A bbox column's bound as 8 little-endian double bytes (a `float` column's 4 bytes widen
/// exactly).
fn widen_float_bound(bound: &[u8]) -> Vec<u8> {
    match <[u8; 4]>::try_from(bound) {
        Ok(f) => f64::from(f32::from_le_bytes(f)).to_le_bytes().to_vec(),
        Err(_) => bound.to_vec(),
    }
}

/// Why `boundless` of `total` files are read whatever the window: no bounds for the column
/// (what Iceberg Java writes for geometry) and no usable bbox columns.
fn no_bounds_reason(
    column: &str,
    boundless: usize,
    total: usize,
    bbox: Option<&[String]>,
) -> String {
    let bbox_note = match bbox {
        Some(names) => format!(
            " and no bounds of the bbox columns {} that cover every row",
            names.join(", ")
        ),
        None => String::new(),
    };
    format!(
        "{boundless} of {total} files carry no bounds for {column:?}{bbox_note} (Iceberg Java \
         writes none for geometry columns): they are read whatever the window; CREATE SPATIAL \
         INDEX (or any rewrite by geoberg) writes bounds for the files it rewrites"
    )
}
