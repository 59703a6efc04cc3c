//! Every table property geoberg reads, parsed once and typed: Iceberg's `commit.retry.*` and
//! `write.*` keys with their Java defaults, and geoberg's own `geoberg.*` keys. A value that
//! cannot be used is [`Error::InvalidProperty`], naming the key, the value and what is accepted.
//!
//! The metrics keys (`write.metadata.metrics.*`) need the schema as well and are read by
//! [`crate::MetricsConfig`].

use std::collections::HashMap;
use std::time::Duration;

use crate::bbox_columns::property::{is_bbox_columns_value, parse_bbox_column_properties};
use crate::error::{Error, Result};
use crate::spatial_index::{HilbertCell, SpatialIndex};
use geoberg_geostats::BBoxColumnNames;

/// `commit.retry.num-retries`: how often a commit that lost the race to a concurrent writer is
/// re-applied on the newer metadata (Iceberg's default is 4).
pub const COMMIT_RETRIES_PROPERTY: &str = "commit.retry.num-retries";
/// `commit.retry.min-wait-ms`: the first backoff (Iceberg's default is 100).
pub const COMMIT_MIN_WAIT_PROPERTY: &str = "commit.retry.min-wait-ms";
/// `commit.retry.max-wait-ms`: the longest backoff (Iceberg's default is 60000).
pub const COMMIT_MAX_WAIT_PROPERTY: &str = "commit.retry.max-wait-ms";
/// `commit.retry.total-timeout-ms`: no retry starts after this long (Iceberg's default is
/// 1800000).
pub const COMMIT_TOTAL_TIMEOUT_PROPERTY: &str = "commit.retry.total-timeout-ms";
/// `write.target-file-size-bytes`: the size rewrites aim for (Iceberg's default is 512 MiB).
pub const TARGET_FILE_SIZE_PROPERTY: &str = "write.target-file-size-bytes";
/// Rows per Parquet row group of appended files (default 1 048 576); smaller groups skip more
/// finely.
pub const ROW_GROUP_ROWS_PROPERTY: &str = "geoberg.parquet.row-group-rows";
/// `geoberg.write.cluster-on-write` (default `true`): appends to a table a Hilbert rewrite
/// clustered cut their rows at its recorded key ranges, so that new files stay small in space.
pub const CLUSTER_ON_WRITE_PROPERTY: &str = "geoberg.write.cluster-on-write";
/// `geoberg.write.cluster-on-write.min-file-rows` (default 1000): neighbouring key ranges are
/// merged into one appended file until it holds at least this many rows.
pub const CLUSTER_MIN_FILE_ROWS_PROPERTY: &str = "geoberg.write.cluster-on-write.min-file-rows";
/// `geoberg.maintain.max-overlap-depth` (default 2.0): `maintain` clusters past this depth.
pub const MAINTAIN_MAX_OVERLAP_DEPTH_PROPERTY: &str = "geoberg.maintain.max-overlap-depth";
/// `geoberg.maintain.max-new-files` (default 64): `maintain` clusters past this many files that
/// arrived since the last clustering.
pub const MAINTAIN_MAX_NEW_FILES_PROPERTY: &str = "geoberg.maintain.max-new-files";
/// Iceberg's `write.metadata.delete-after-commit.enabled` (default `false`): after each commit,
/// the metadata files that fell out of the metadata log (which keeps the last
/// `write.metadata.previous-versions-max`, default 100) are deleted.
pub const METADATA_DELETE_AFTER_COMMIT_PROPERTY: &str =
    "write.metadata.delete-after-commit.enabled";
/// Iceberg's `history.expire.max-snapshot-age-ms` (default 5 days).
pub const MAX_SNAPSHOT_AGE_PROPERTY: &str = "history.expire.max-snapshot-age-ms";
/// Iceberg's `history.expire.min-snapshots-to-keep` (default 1).
pub const MIN_SNAPSHOTS_TO_KEEP_PROPERTY: &str = "history.expire.min-snapshots-to-keep";
/// Default of [`CLUSTER_MIN_FILE_ROWS_PROPERTY`].
pub const DEFAULT_CLUSTER_MIN_FILE_ROWS: usize = 1000;
/// Table property listing, by field id, the binary columns that hold no-CRS (legacy) geometry.
pub const LEGACY_GEOMETRY_PROPERTY: &str = "geoberg.legacy-geometry-field-ids";
/// Table property naming the geometry column whose bbox columns we materialise.
pub const BBOX_SOURCE_PROPERTY: &str = "geoberg.bbox-columns.source";
/// Prefix of `geoberg.source-crs.<column>`: the CRS (PROJJSON, or an authority code) that an
/// imported file declared for a column imported into `geometry(0)`, which records no CRS
/// itself.
pub const SOURCE_CRS_PROPERTY_PREFIX: &str = "geoberg.source-crs.";
/// Table property recording a derived Hilbert-cell partition column, as JSON
/// `{"column": <geometry column>, "precision": <bits per axis>, "bounds": [minX, minY, maxX, maxY]}`.
pub const HILBERT_CELL_PROPERTY: &str = "geoberg.partition.hilbert-cell";
/// Prefix of the table property that records a spatial index: `geoberg.spatial-index.<column>`
/// = `{"precision": p, "bounds": [minX, minY, maxX, maxY]}`. Later rewrites without an explicit
/// `hilbert(...)` reuse it, so compactions keep the clustering.
pub const SPATIAL_INDEX_PROPERTY_PREFIX: &str = "geoberg.spatial-index.";

/// `write.sort-order`: the order appends sort each data file by and that
/// `rewrite_data_files(strategy => 'sort')` uses without a `sort_order`: a column list
/// (`bbox_min_x ASC, bbox_min_y ASC NULLS LAST`), `zorder(c1, c2)` or `hilbert(geom, 16)`
/// ([`geoberg_sql::SortOrder`]). Its columns are checked against the schema when it is set.
pub const SORT_ORDER_PROPERTY: &str = "write.sort-order";

/// `write.delete.mode`: how DELETE writes (`copy-on-write`, the default, or `merge-on-read`).
pub const DELETE_MODE_PROPERTY: &str = "write.delete.mode";
/// `write.update.mode`: how UPDATE writes.
pub const UPDATE_MODE_PROPERTY: &str = "write.update.mode";
/// `write.merge.mode`: how MERGE writes.
pub const MERGE_MODE_PROPERTY: &str = "write.merge.mode";

const DEFAULT_ROW_GROUP_ROWS: usize = 1 << 20;

/// How a row-level change is written (Iceberg's `write.{delete,update,merge}.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowChangeMode {
    /// Rewrite each affected data file without the deleted rows (and with the updated ones):
    /// slower writes, no work for readers. Iceberg's default.
    #[default]
    CopyOnWrite,
    /// Record the deleted rows (v3: deletion vectors; v2: position delete files), append the
    /// updated ones: fast writes, readers apply the deletes until a compaction.
    MergeOnRead,
}

impl RowChangeMode {
    /// `copy-on-write` or `merge-on-read`, as the property is spelled.
    pub fn name(self) -> &'static str {
        match self {
            RowChangeMode::CopyOnWrite => "copy-on-write",
            RowChangeMode::MergeOnRead => "merge-on-read",
        }
    }

    fn parse(key: &str, value: &str) -> Result<RowChangeMode> {
        match value.trim().to_ascii_lowercase().as_str() {
            "copy-on-write" => Ok(RowChangeMode::CopyOnWrite),
            "merge-on-read" => Ok(RowChangeMode::MergeOnRead),
            _ => Err(Error::InvalidProperty {
                key: key.to_string(),
                value: value.to_string(),
                reason: "expected copy-on-write or merge-on-read".into(),
            }),
        }
    }
}

/// How a commit that lost the race to another writer is retried (Iceberg's `commit.retry.*`):
/// jittered exponential backoff from `min_wait` to `max_wait`, at most `num_retries` times, and
/// none started after `total_timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitRetry {
    /// Retries after the first attempt.
    pub num_retries: usize,
    /// The first backoff.
    pub min_wait: Duration,
    /// The longest backoff.
    pub max_wait: Duration,
    /// No retry starts after this much time since the first attempt.
    pub total_timeout: Duration,
}

impl Default for CommitRetry {
    fn default() -> Self {
        CommitRetry {
            num_retries: 4,
            min_wait: Duration::from_millis(100),
            max_wait: Duration::from_millis(60_000),
            total_timeout: Duration::from_millis(1_800_000),
        }
    }
}

impl CommitRetry {
    /// The wait before retry `attempt` (1-based): `min_wait * 2^(attempt-1)`, capped at
    /// `max_wait`, scaled by a random factor in [0.5, 1.0] so that racing writers spread out.
    pub fn backoff(&self, attempt: usize) -> Duration {
        let exp = self
            .min_wait
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(20));
        let capped = exp.min(self.max_wait);
        let (a, b) = uuid::Uuid::new_v4().as_u64_pair();
        let jitter = 0.5 + ((a ^ b) >> 11) as f64 / (1u64 << 53) as f64 / 2.0;
        capped.mul_f64(jitter)
    }
}

/// The table properties geoberg acts on.
#[derive(Debug, Clone, PartialEq)]
pub struct TableProperties {
    /// `commit.retry.*`.
    pub commit_retry: CommitRetry,
    /// `write.target-file-size-bytes`, when set.
    pub target_file_size_bytes: Option<u64>,
    /// `geoberg.parquet.row-group-rows`.
    pub row_group_rows: usize,
    /// `geoberg.bbox-columns.source`: the geometry column the bbox columns are derived from.
    pub bbox_source: Option<String>,
    /// `geoberg.bbox-columns.<geometry column>`: bbox columns under other names, by geometry
    /// column.
    pub bbox_columns: std::collections::BTreeMap<String, BBoxColumnNames>,
    /// `geoberg.source-crs.<column>`: the CRS an imported file declared for a column that was
    /// imported into `geometry(0)`, by column.
    pub source_crs: std::collections::BTreeMap<String, String>,
    /// `geoberg.partition.hilbert-cell`: the derived cell column's curve.
    pub hilbert_cell: Option<HilbertCell>,
    /// `geoberg.legacy-geometry-field-ids`: binary columns holding no-CRS geometry.
    pub legacy_geometry_field_ids: Vec<i32>,
    /// `geoberg.spatial-index.<column>`, sorted by column.
    pub spatial_indexes: Vec<SpatialIndex>,
    /// `write.sort-order`.
    pub sort_order: Option<geoberg_sql::SortOrder>,
    /// `write.delete.mode`.
    pub delete_mode: RowChangeMode,
    /// `write.update.mode`.
    pub update_mode: RowChangeMode,
    /// `write.merge.mode`.
    pub merge_mode: RowChangeMode,
    /// `geoberg.write.cluster-on-write`.
    pub cluster_on_write: bool,
    /// `geoberg.write.cluster-on-write.min-file-rows`.
    pub cluster_min_file_rows: usize,
    /// Iceberg's `write.metadata.delete-after-commit.enabled`.
    pub metadata_delete_after_commit: bool,
    /// `geoberg.maintain.*` and Iceberg's `history.expire.*`: when `maintain` acts.
    pub maintain: MaintainThresholds,
}

/// The thresholds of [`crate::Table::maintain`], from the table's properties.
#[derive(Debug, Clone, PartialEq)]
pub struct MaintainThresholds {
    /// `geoberg.maintain.max-overlap-depth` (default 2.0).
    pub max_overlap_depth: f64,
    /// `geoberg.maintain.max-new-files` (default 64).
    pub max_new_files: usize,
    /// `history.expire.max-snapshot-age-ms` (default 5 days).
    pub max_snapshot_age: Duration,
    /// `history.expire.min-snapshots-to-keep` (default 1; at least 1).
    pub min_snapshots_to_keep: usize,
}

impl TableProperties {
    /// Parses the properties of a table's metadata.
    pub fn parse(properties: &HashMap<String, String>) -> Result<TableProperties> {
        fn entry<'a>(
            properties: &'a HashMap<String, String>,
            key: &'a str,
        ) -> Option<(&'a str, &'a str)> {
            properties.get(key).map(|v| (key, v.as_str()))
        }
        let get = |key: &'static str| entry(properties, key);
        let defaults = CommitRetry::default();
        let millis = |key: &'static str, default: Duration| -> Result<Duration> {
            get(key).map_or(Ok(default), |(k, v)| {
                parse_number::<u64>(k, v, "a non-negative number of milliseconds")
                    .map(Duration::from_millis)
            })
        };
        let commit_retry = CommitRetry {
            num_retries: get(COMMIT_RETRIES_PROPERTY)
                .map_or(Ok(defaults.num_retries), |(k, v)| {
                    parse_number(k, v, "a non-negative retry count")
                })?,
            min_wait: millis(COMMIT_MIN_WAIT_PROPERTY, defaults.min_wait)?,
            max_wait: millis(COMMIT_MAX_WAIT_PROPERTY, defaults.max_wait)?,
            total_timeout: millis(COMMIT_TOTAL_TIMEOUT_PROPERTY, defaults.total_timeout)?,
        };
        let target_file_size_bytes = get(TARGET_FILE_SIZE_PROPERTY)
            .map(|(k, v)| parse_positive(k, v, "a positive byte count"))
            .transpose()?;
        let row_group_rows = get(ROW_GROUP_ROWS_PROPERTY)
            .map_or(Ok(DEFAULT_ROW_GROUP_ROWS), |(k, v)| {
                parse_positive(k, v, "a positive row count")
            })?;
        let hilbert_cell = get(HILBERT_CELL_PROPERTY)
            .map(|(k, v)| HilbertCell::parse_property(k, v))
            .transpose()?;
        let legacy_geometry_field_ids = match get(LEGACY_GEOMETRY_PROPERTY) {
            None => Vec::new(),
            Some((k, v)) => v
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| parse_number::<i32>(k, s, "comma-separated field ids"))
                .collect::<Result<_>>()?,
        };
        let mut spatial_indexes: Vec<SpatialIndex> = properties
            .iter()
            .filter_map(|(k, v)| {
                let column = k.strip_prefix(SPATIAL_INDEX_PROPERTY_PREFIX)?;
                Some(SpatialIndex::parse_property(column, k, v))
            })
            .collect::<Result<_>>()?;
        spatial_indexes.sort_by(|a, b| a.column.cmp(&b.column));
        let mode = |key: &'static str| {
            get(key).map_or(Ok(RowChangeMode::default()), |(k, v)| {
                RowChangeMode::parse(k, v)
            })
        };
        let sort_order = get(SORT_ORDER_PROPERTY)
            .map(|(k, v)| {
                geoberg_sql::parse_sort_order(v).map_err(|e| Error::InvalidProperty {
                    key: k.to_string(),
                    value: v.to_string(),
                    reason: format!("{e}; write one of: {}", geoberg_sql::SORT_ORDER_FORMS),
                })
            })
            .transpose()?;
        let flag = |key: &'static str, default: bool| -> Result<bool> {
            match get(key) {
                None => Ok(default),
                Some((k, v)) => match v.trim().to_ascii_lowercase().as_str() {
                    "true" => Ok(true),
                    "false" => Ok(false),
                    _ => Err(Error::InvalidProperty {
                        key: k.to_string(),
                        value: v.to_string(),
                        reason: "expected true or false".into(),
                    }),
                },
            }
        };
        let cluster_on_write = flag(CLUSTER_ON_WRITE_PROPERTY, true)?;
        let metadata_delete_after_commit = flag(METADATA_DELETE_AFTER_COMMIT_PROPERTY, false)?;
        let cluster_min_file_rows = get(CLUSTER_MIN_FILE_ROWS_PROPERTY)
            .map_or(Ok(DEFAULT_CLUSTER_MIN_FILE_ROWS), |(k, v)| {
                parse_positive(k, v, "a positive row count")
            })?;
        let max_overlap_depth = match get(MAINTAIN_MAX_OVERLAP_DEPTH_PROPERTY) {
            None => 2.0,
            Some((k, v)) => Some(parse_number::<f64>(k, v, "a non-negative number")?)
                .filter(|n| *n >= 0.0)
                .ok_or_else(|| Error::InvalidProperty {
                    key: k.to_string(),
                    value: v.to_string(),
                    reason: "expected a non-negative number".into(),
                })?,
        };
        let maintain = MaintainThresholds {
            max_overlap_depth,
            max_new_files: get(MAINTAIN_MAX_NEW_FILES_PROPERTY).map_or(Ok(64), |(k, v)| {
                parse_number(k, v, "a non-negative file count")
            })?,
            max_snapshot_age: millis(
                MAX_SNAPSHOT_AGE_PROPERTY,
                Duration::from_secs(5 * 24 * 3600),
            )?,
            min_snapshots_to_keep: get(MIN_SNAPSHOTS_TO_KEEP_PROPERTY)
                .map_or(Ok(1usize), |(k, v)| {
                    parse_number(k, v, "a non-negative snapshot count")
                })?
                .max(1),
        };
        Ok(TableProperties {
            maintain,
            cluster_on_write,
            metadata_delete_after_commit,
            cluster_min_file_rows,
            sort_order,
            delete_mode: mode(DELETE_MODE_PROPERTY)?,
            update_mode: mode(UPDATE_MODE_PROPERTY)?,
            merge_mode: mode(MERGE_MODE_PROPERTY)?,
            commit_retry,
            target_file_size_bytes,
            row_group_rows,
            bbox_source: properties
                .get(BBOX_SOURCE_PROPERTY)
                .filter(|v| !is_bbox_columns_value(v))
                .cloned(),
            bbox_columns: parse_bbox_column_properties(properties)?,
            source_crs: properties
                .iter()
                .filter_map(|(k, v)| {
                    let column = k.strip_prefix(SOURCE_CRS_PROPERTY_PREFIX)?;
                    Some((column.to_string(), v.clone()))
                })
                .collect(),
            hilbert_cell,
            legacy_geometry_field_ids,
            spatial_indexes,
        })
    }
}

/// A number property; `expected` names what is accepted.
fn parse_number<T: std::str::FromStr>(key: &str, value: &str, expected: &str) -> Result<T> {
    value.trim().parse().map_err(|_| Error::InvalidProperty {
        key: key.to_string(),
        value: value.to_string(),
        reason: format!("expected {expected}"),
    })
}

/// A number property that must be above zero.
pub(crate) fn parse_positive<T>(key: &str, value: &str, expected: &str) -> Result<T>
where
    T: std::str::FromStr + PartialOrd + Default,
{
    let n: T = parse_number(key, value, expected)?;
    if n > T::default() {
        Ok(n)
    } else {
        Err(Error::InvalidProperty {
            key: key.to_string(),
            value: value.to_string(),
            reason: format!("expected {expected}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(kv: &[(&str, &str)]) -> HashMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_are_iceberg_java_defaults() {
        let p = TableProperties::parse(&HashMap::new()).unwrap();
        assert_eq!(p.commit_retry, CommitRetry::default());
        assert_eq!(p.commit_retry.num_retries, 4);
        assert_eq!(p.row_group_rows, 1 << 20);
        assert_eq!(p.target_file_size_bytes, None);
    }

    #[test]
    fn bad_values_name_key_value_and_what_is_accepted() {
        for (k, v) in [
            (COMMIT_RETRIES_PROPERTY, "-1"),
            (COMMIT_MIN_WAIT_PROPERTY, "soon"),
            (TARGET_FILE_SIZE_PROPERTY, "0"),
            (ROW_GROUP_ROWS_PROPERTY, "lots"),
            (LEGACY_GEOMETRY_PROPERTY, "3,x"),
            (DELETE_MODE_PROPERTY, "merge-on-write"),
        ] {
            let e = TableProperties::parse(&props(&[(k, v)])).unwrap_err();
            let msg = e.to_string();
            assert!(msg.contains(k) && msg.contains("expected"), "{msg}");
        }
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let r = CommitRetry {
            num_retries: 10,
            min_wait: Duration::from_millis(100),
            max_wait: Duration::from_millis(1000),
            total_timeout: Duration::from_secs(60),
        };
        for attempt in 1..=12 {
            let w = r.backoff(attempt);
            let full = (100u64 << (attempt - 1).min(20)).min(1000);
            assert!(w >= Duration::from_millis(full / 2) && w <= Duration::from_millis(full));
        }
    }
}
