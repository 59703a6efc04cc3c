//! The spatial file index of one snapshot: manifest entries decoded in parallel, each file's box
//! chosen from its bounds, and `pruning`'s R-tree over them; built once per table version and
//! column, then shared by every scan of that version.

use std::sync::Arc;

use geoberg_crs::{ColumnType, FormatVersion, can_skip_files};
use geoberg_pruning::{BoundSources, FileBounds, FileIndex, PrunePlan, SpatialFilter};
use iceberg::spec::{ManifestContentType, ManifestFile};

use crate::error::Result;
use crate::manifest::{Entry, read_entries, read_entries_map};
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

/// The live data files of one table version with an R-tree over one geometry column's bounds.
///
/// Get it with [`Table::file_index`], which builds it once per table version and column; plan
/// any number of filters against it.
#[derive(Debug)]
pub struct TableFileIndex {
    column: GeoColumn,
    index: FileIndex<FileBounds>,
    reasons: Vec<String>,
}

impl TableFileIndex {
    /// The indexed geometry column.
    pub fn column(&self) -> &GeoColumn {
        &self.column
    }

    /// The index; its entries are the live data files, in manifest order.
    pub fn files(&self) -> &FileIndex<FileBounds> {
        &self.index
    }

    /// How file boxes were chosen (which bounds, files whose bounds did not decode).
    pub fn reasons(&self) -> &[String] {
        &self.reasons
    }

    /// The files `filter` must read. Fails on a window that is not finite, is invalid for the
    /// column or is in another CRS.
    pub fn plan(&self, filter: &SpatialFilter) -> Result<PrunePlan> {
        if let Some(w) = filter.window() {
            let coords = [w.min_x, w.min_y, w.max_x, w.max_y];
            if coords.iter().any(|v| !v.is_finite()) {
                return Err(geoberg_pruning::PruneError::InvalidWindow {
                    window: format!("x [{}, {}] y [{}, {}]", w.min_x, w.max_x, w.min_y, w.max_y),
                    problem: "a coordinate is NaN or infinite; give every bound a finite number \
                              (the extent of the column's CRS for an open side)",
                }
                .into());
            }
        }
        Ok(self.index.plan(filter)?)
    }
}

impl Table {
    /// The file index of `column` for this table version, built on first use and cached: later
    /// scans of the same version (and clones of this handle) plan without reading manifests.
    pub fn file_index(&self, column: &str) -> Result<Arc<TableFileIndex>> {
        let key = format!("file-index/{column}");
        if let Some(hit) = self.derived().get::<TableFileIndex>(&key) {
            return Ok(hit);
        }
        let built = Arc::new(self.build_file_index(column)?);
        Ok(self.derived().insert(&key, built))
    }

    /// Data manifests of the current snapshot (delete manifests are read by the delete index).
    pub(crate) fn data_manifests(&self) -> Result<Vec<ManifestFile>> {
        let mut manifests = self.manifests()?;
        manifests.retain(|m| m.content == ManifestContentType::Data);
        Ok(manifests)
    }

    /// Live data files of the current snapshot without bounds (a scan with no spatial filter).
    pub(crate) fn live_files(&self) -> Result<Vec<FileBounds>> {
        Ok(read_entries(self.storage(), &self.data_manifests()?, &[])?
            .into_iter()
            .filter(Entry::is_live)
            .map(|e| FileBounds::new(e.path, e.record_count, e.file_size, None))
            .collect())
    }

    fn build_file_index(&self, column: &str) -> Result<TableFileIndex> {
        let geo = self.geo_column(column)?;
        let version = self.format_version();
        let decision = can_skip_files(version, &geo.column_type);
        let bbox_ids = self.bbox_column_ids();
        let declared = geo.column_type != ColumnType::GeometryWithoutCrs;
        let mut reasons = Vec::new();
        let source = match (decision.can_skip, bbox_ids) {
            (false, Some(_)) => {
                reasons.push(format!(
                    "{}; using the bbox columns' double bounds instead",
                    decision.reason
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
            (true, Some(_)) if !declared => {
                reasons.push(format!(
                    "files skipped on the double bounds of {} ({})",
                    BBOX_COLUMN_NAMES.join(", "),
                    decision.reason
                ));
                Source::BBoxColumns
            }
            (true, None) if !self.bounds_are_points(geo.field_id) => {
                reasons.push(format!(
                    "every file is read: {:?} is a plain binary column written by another \
                     engine, whose bounds are WKB byte prefixes, not boxes; add the bbox columns \
                     {} to skip files",
                    geo.name,
                    BBOX_COLUMN_NAMES.join(", "),
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
        let mut wanted = vec![geo.field_id];
        wanted.extend(bbox_ids.iter().flatten());
        let decoded = read_entries_map(self.storage(), &self.data_manifests()?, &wanted, |e| {
            if !e.is_live() {
                return None;
            }
            let own = &e.stats[0];
            let point = match (&own.lower, &own.upper) {
                (Some(lo), Some(hi)) => Some((lo.as_slice(), hi.as_slice())),
                _ => None,
            };
            let bbox_columns = match &e.stats[1..] {
                [a, b, c, d] => match (&a.lower, &b.lower, &c.upper, &d.upper) {
                    (Some(a), Some(b), Some(c), Some(d)) => Some([&a[..], &b[..], &c[..], &d[..]]),
                    _ => None,
                },
                _ => None,
            };
            let sources = match source {
                Source::Column if declared => BoundSources {
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
            let best = sources.best(&geo.column_type);
            let problem = best.rejected.first().map(|(_, p)| p.to_string());
            let all_null = matches!(
                (own.value_count, own.null_count),
                (Some(v), Some(n)) if v == n
            );
            let file = FileBounds::new(e.path, e.record_count, e.file_size, best.bbox)
                .with_all_null(all_null);
            Some((file, problem))
        })?;
        let mut undecodable = 0usize;
        let mut first_problem = None;
        let files: Vec<FileBounds> = decoded
            .into_iter()
            .map(|(file, problem)| {
                if let Some(p) = problem {
                    undecodable += 1;
                    first_problem.get_or_insert(p);
                }
                file
            })
            .collect();
        if let Some(problem) = first_problem {
            reasons.push(format!(
                "{undecodable} files carry bounds for {:?} that do not decode (first: {problem}); \
                 they are pruned on a looser source if one decodes, else read",
                geo.name
            ));
        }
        // The format-version rule governs the column's own bounds; bbox-column bounds are
        // ordinary doubles, usable in every version.
        let (index_type, index_version) = match source {
            Source::BBoxColumns => (ColumnType::GeometryWithoutCrs, FormatVersion::V2),
            _ => (geo.column_type.clone(), version),
        };
        let index = FileIndex::build(files, &index_type, index_version)?;
        Ok(TableFileIndex {
            column: geo,
            index,
            reasons,
        })
    }

    /// Field ids of the four bbox columns, when the table has them.
    fn bbox_column_ids(&self) -> Option<[i32; 4]> {
        let schema = self.metadata().current_schema();
        let mut ids = [0; 4];
        for (slot, name) in ids.iter_mut().zip(BBOX_COLUMN_NAMES) {
            *slot = schema.field_by_name(name)?.id;
        }
        Some(ids)
    }
}
