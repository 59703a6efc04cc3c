//! [`Table::maintain`] (`geoberg maintain`): the scheduled maintenance of a table that data
//! streams into, deciding for the user what is due. Safe next to a streaming writer: every step
//! is a commit that validates against concurrent appends and keeps them.
//!
//! 1. Clustering: when the table has a spatial index and its live files overlap more than
//!    `geoberg.maintain.max-overlap-depth` deep, or more than `geoberg.maintain.max-new-files`
//!    files arrived since the last clustering, an incremental clustering
//!    ([`crate::ops::incremental_clustering`]) on that index, which also merges the small files.
//! 2. Manifests: `rewrite_manifests` when the current snapshot has more than
//!    [`MANIFEST_COUNT_WARNING_THRESHOLD`] manifests.
//! 3. Snapshots: expired per Iceberg's retention properties
//!    (`history.expire.max-snapshot-age-ms`, `history.expire.min-snapshots-to-keep`).

use std::collections::{HashMap, HashSet};
use std::time::SystemTime;

use geoberg_crs::Extent;

use crate::clustered_layout::ClusteredLayout;
use crate::error::Result;
use crate::manifest_bloat::MANIFEST_COUNT_WARNING_THRESHOLD;
use crate::ops::maintenance::ExpireReport;
use crate::ops::rewrite::RewriteReport;
use crate::ops::rewrite_manifests::RewriteManifestsReport;
use crate::table::Table;

/// What [`Table::maintain`] found and did.
#[derive(Debug, Clone)]
pub struct MaintainReport {
    /// The geometry column of the table's spatial index, if it has one.
    pub column: Option<String>,
    /// Overlap depth of the live files' boxes on that column before the run.
    pub overlap_depth: Option<f64>,
    /// Live files the clustered layout does not list as clustered, before the run.
    pub new_files: usize,
    /// Why clustering ran or not.
    pub clustering_reason: String,
    /// The incremental clustering, when it ran.
    pub clustering: Option<RewriteReport>,
    /// Manifests of the current snapshot before the run.
    pub manifests: usize,
    /// The manifest rewrite, when it ran.
    pub manifest_rewrite: Option<RewriteManifestsReport>,
    /// The expiry (always runs; it may expire nothing).
    pub expiry: ExpireReport,
}

impl Table {
    /// Runs the maintenance that is due (see the module docs) and returns the maintained table.
    ///
    /// ```no_run
    /// # fn f(table: geoberg_table::Table) -> geoberg_table::Result<()> {
    /// let (table, report) = table.maintain()?;
    /// println!("{}", report.clustering_reason);
    /// # Ok(()) }
    /// ```
    pub fn maintain(&self) -> Result<(Table, MaintainReport)> {
        let properties = self.properties()?;
        let thresholds = properties.maintain;
        let (max_depth, max_new) = (thresholds.max_overlap_depth, thresholds.max_new_files);

        let mut table = self.clone();
        let index = properties.spatial_indexes.into_iter().next();
        let (mut overlap_depth, mut new_files, mut clustering) = (None, 0, None);
        let clustering_reason = match &index {
            None => "no spatial index: run CREATE SPATIAL INDEX to cluster the table".to_string(),
            Some(index) => {
                let files = table.file_index(&index.column)?.files().entries().to_vec();
                let boxes: Vec<Extent> = files
                    .iter()
                    .filter_map(|f| f.bbox.map(Extent::from))
                    .collect();
                let depth = geoberg_rewrite::overlap_depth(&boxes);
                let clustered: HashSet<String> = ClusteredLayout::current(&table)
                    .unwrap_or(None)
                    .map(|l| {
                        l.partitions
                            .into_iter()
                            .flat_map(|p| p.files.into_iter().map(|f| f.path))
                            .collect()
                    })
                    .unwrap_or_default();
                let new = files
                    .iter()
                    .filter(|f| !clustered.contains(&f.path))
                    .count();
                (overlap_depth, new_files) = (Some(depth), new);
                let due = if depth > max_depth {
                    Some(format!("overlap depth {depth:.2} > {max_depth}"))
                } else if new > max_new {
                    Some(format!("{new} new files > {max_new}"))
                } else {
                    None
                };
                match due {
                    None => format!(
                        "healthy: overlap depth {depth:.2} <= {max_depth}, {new} new files <= \
                         {max_new}"
                    ),
                    Some(reason) => {
                        let (next, report) = table
                            .rewrite()
                            .hilbert(&index.column, index.spec.precision)
                            .bounds(index.spec.bounds)
                            .options(HashMap::from([("incremental", "true")]))
                            .execute()?;
                        table = next;
                        clustering = Some(report);
                        reason
                    }
                }
            }
        };

        let manifests = table.manifest_count()?;
        let mut manifest_rewrite = None;
        if manifests > MANIFEST_COUNT_WARNING_THRESHOLD {
            let (next, report) = table.rewrite_manifests().execute()?;
            table = next;
            manifest_rewrite = Some(report);
        }

        let horizon = SystemTime::now() - thresholds.max_snapshot_age;
        let (table, expiry) = table.expire_snapshots(horizon, thresholds.min_snapshots_to_keep)?;
        Ok((
            table,
            MaintainReport {
                column: index.map(|i| i.column),
                overlap_depth,
                new_files,
                clustering_reason,
                clustering,
                manifests,
                manifest_rewrite,
                expiry,
            },
        ))
    }
}
