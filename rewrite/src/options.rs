//! `rewrite_data_files` options: Iceberg's names and defaults, plus the resource settings that a
//! bounded-memory sort needs.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::RewriteError;

/// Iceberg's `write.target-file-size-bytes` default: 512 MiB.
pub const DEFAULT_TARGET_FILE_SIZE_BYTES: u64 = 512 * 1024 * 1024;
/// Default memory budget of one rewrite (routing buffers plus sort chunks): sized so that the
/// whole process stays near 300 MB (the budget plus reader, writer and allocator overhead).
pub const DEFAULT_MAX_MEMORY_BYTES: u64 = 208 * 1024 * 1024;

/// Every option key accepted by [`RewriteOptions::parse`], in documentation order.
pub const OPTION_KEYS: &[&str] = &[
    "target-file-size-bytes",
    "min-file-size-bytes",
    "max-file-size-bytes",
    "min-input-files",
    "rewrite-all",
    "max-file-group-size-bytes",
    "max-concurrent-file-group-rewrites",
    "partial-progress.enabled",
    "partial-progress.max-commits",
    "use-starting-sequence-number",
    "compression-factor",
    "target-file-count",
    "min-overlap-depth",
    "max-memory-bytes",
    "spill-dir",
    "threads",
    "row-group-rows",
    "compression-codec",
    "incremental",
    "incremental.min-new-data-ratio",
    "incremental.max-delta-generations",
];

/// Parquet codec of the output files (Iceberg's `write.parquet.compression-codec` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputCodec {
    /// zstd level 1: Iceberg's default codec, at its fastest level.
    Zstd,
    /// Snappy.
    Snappy,
    /// No compression.
    Uncompressed,
}

/// Options of one rewrite, parsed from the string map of `OPTIONS map(...)` /
/// `rewrite_data_files(options => map(...))`.
///
/// Sizes follow Iceberg's `SizeBasedFileRewritePlanner`; `target-file-count` is WherobotsDB's.
/// Without `target-file-size-bytes` and `target-file-count` the planner picks the output size
/// from the partition size (see [`RewriteOptions::explicit_sizing`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewriteOptions {
    /// Desired output file size.
    pub target_file_size_bytes: u64,
    /// Files smaller than this are rewrite candidates (default 0.75 × target).
    pub min_file_size_bytes: u64,
    /// Files larger than this are rewrite candidates (default 1.8 × target).
    pub max_file_size_bytes: u64,
    /// A partition is rewritten when it has at least this many candidates (and more than one).
    pub min_input_files: usize,
    /// Rewrite every selected file regardless of size or clustering (CREATE SPATIAL INDEX).
    pub rewrite_all: bool,
    /// Upper bound of the input bytes of one commit group when partial progress is on.
    pub max_file_group_size_bytes: u64,
    /// Upper bound of output tasks sorted and written at the same time.
    pub max_concurrent_file_group_rewrites: usize,
    /// Whether `table` may commit partitions in several snapshots.
    pub partial_progress_enabled: bool,
    /// Maximum number of commits when partial progress is on.
    pub partial_progress_max_commits: usize,
    /// Whether added files get the starting snapshot's data sequence number (read by `table`).
    pub use_starting_sequence_number: bool,
    /// Scales input bytes to estimate output bytes (sorted data compresses better: use < 1).
    pub compression_factor: f64,
    /// Desired number of output files over the whole rewrite, instead of a size.
    pub target_file_count: Option<usize>,
    /// A partition whose files overlap a grid cell this many times on average is re-clustered
    /// even when every file has a healthy size (apache/iceberg#17489).
    pub min_overlap_depth: f64,
    /// Memory budget for buffered rows and in-memory sorting.
    pub max_memory_bytes: u64,
    /// Directory for spill runs; the system temp directory when unset.
    pub spill_dir: Option<PathBuf>,
    /// Worker threads; the number of available cores when unset (0).
    pub threads: usize,
    /// Maximum rows per output row group: small groups let readers skip by row-group stats.
    pub row_group_rows: usize,
    /// Output Parquet codec.
    pub compression_codec: OutputCodec,
    /// Whether `target-file-size-bytes` or `target-file-count` was given.
    pub explicit_sizing: bool,
    /// Incremental clustering (read by `table`): only the key ranges of a clustered table that
    /// new rows have grown are re-clustered, the others are left as they are.
    #[serde(default)]
    pub incremental: bool,
    /// With `incremental`, a key range is re-clustered once its new rows reach this fraction
    /// of its clustered rows (default 0.5).
    #[serde(default = "default_min_new_data_ratio")]
    pub incremental_min_new_data_ratio: f64,
    /// With `incremental`, the most generations of delta files (new rows merged by one run
    /// outside the re-clustered ranges) left side by side: a run merges its new rows with the
    /// youngest earlier generations that are no larger than what it merges (size-tiered, as an
    /// LSM tree), and with more of them while this many would be exceeded. The default, 1,
    /// merges every delta again each run (fewest files per window); 3 rewrote 17% fewer bytes
    /// for 15% more files per window (BENCHMARKS.md, issue 28).
    #[serde(default = "default_max_delta_generations")]
    pub incremental_max_delta_generations: usize,
}

fn default_min_new_data_ratio() -> f64 {
    0.5
}

fn default_max_delta_generations() -> usize {
    1
}

impl Default for RewriteOptions {
    fn default() -> Self {
        RewriteOptions::with_target(DEFAULT_TARGET_FILE_SIZE_BYTES)
    }
}

impl RewriteOptions {
    fn with_target(target: u64) -> Self {
        RewriteOptions {
            target_file_size_bytes: target,
            min_file_size_bytes: (target as f64 * 0.75) as u64,
            max_file_size_bytes: (target as f64 * 1.8) as u64,
            min_input_files: 5,
            rewrite_all: false,
            max_file_group_size_bytes: 100 * 1024 * 1024 * 1024,
            max_concurrent_file_group_rewrites: 5,
            partial_progress_enabled: false,
            partial_progress_max_commits: 10,
            use_starting_sequence_number: true,
            compression_factor: 1.0,
            target_file_count: None,
            min_overlap_depth: 4.0,
            max_memory_bytes: DEFAULT_MAX_MEMORY_BYTES,
            spill_dir: None,
            threads: 0,
            row_group_rows: 64 * 1024,
            compression_codec: OutputCodec::Zstd,
            explicit_sizing: false,
            incremental: false,
            incremental_min_new_data_ratio: default_min_new_data_ratio(),
            incremental_max_delta_generations: default_max_delta_generations(),
        }
    }

    /// Parses string options. `table_target_file_size` is the table's
    /// `write.target-file-size-bytes` when set; it replaces the 512 MiB default.
    ///
    /// Unknown keys fail and list the valid ones; min/max sizes default to 0.75× / 1.8× of the
    /// target and must satisfy `min <= target <= max`.
    pub fn parse<K, V>(
        options: impl IntoIterator<Item = (K, V)>,
        table_target_file_size: Option<u64>,
    ) -> Result<Self, RewriteError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let pairs: Vec<(String, String)> = options
            .into_iter()
            .map(|(k, v)| (k.as_ref().trim().to_string(), v.as_ref().trim().to_string()))
            .collect();
        for (k, _) in &pairs {
            if !OPTION_KEYS.contains(&k.as_str()) {
                return Err(RewriteError::UnknownOption {
                    key: k.clone(),
                    valid: OPTION_KEYS.join(", "),
                });
            }
        }
        let get = |key: &str| pairs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v);

        let explicit_target = get("target-file-size-bytes")
            .map(|v| parse_positive_u64("target-file-size-bytes", v))
            .transpose()?;
        let target = explicit_target
            .or(table_target_file_size)
            .unwrap_or(DEFAULT_TARGET_FILE_SIZE_BYTES);
        if target == 0 {
            return Err(invalid(
                "target-file-size-bytes",
                "0",
                "the table's write.target-file-size-bytes must be positive",
            ));
        }
        let mut o = RewriteOptions::with_target(target);
        if let Some(v) = get("min-file-size-bytes") {
            o.min_file_size_bytes = parse_u64("min-file-size-bytes", v)?;
        }
        if let Some(v) = get("max-file-size-bytes") {
            o.max_file_size_bytes = parse_positive_u64("max-file-size-bytes", v)?;
        }
        if o.min_file_size_bytes > target {
            return Err(invalid(
                "min-file-size-bytes",
                &o.min_file_size_bytes.to_string(),
                &format!("must be <= target-file-size-bytes ({target})"),
            ));
        }
        if o.max_file_size_bytes < target {
            return Err(invalid(
                "max-file-size-bytes",
                &o.max_file_size_bytes.to_string(),
                &format!("must be >= target-file-size-bytes ({target})"),
            ));
        }
        if let Some(v) = get("min-input-files") {
            o.min_input_files = parse_positive_usize("min-input-files", v)?;
        }
        if let Some(v) = get("rewrite-all") {
            o.rewrite_all = parse_bool("rewrite-all", v)?;
        }
        if let Some(v) = get("max-file-group-size-bytes") {
            o.max_file_group_size_bytes = parse_positive_u64("max-file-group-size-bytes", v)?;
        }
        if let Some(v) = get("max-concurrent-file-group-rewrites") {
            o.max_concurrent_file_group_rewrites =
                parse_positive_usize("max-concurrent-file-group-rewrites", v)?;
        }
        if let Some(v) = get("partial-progress.enabled") {
            o.partial_progress_enabled = parse_bool("partial-progress.enabled", v)?;
        }
        if let Some(v) = get("partial-progress.max-commits") {
            o.partial_progress_max_commits =
                parse_positive_usize("partial-progress.max-commits", v)?;
        }
        if let Some(v) = get("use-starting-sequence-number") {
            o.use_starting_sequence_number = parse_bool("use-starting-sequence-number", v)?;
        }
        if let Some(v) = get("incremental") {
            o.incremental = parse_bool("incremental", v)?;
        }
        if let Some(v) = get("incremental.min-new-data-ratio") {
            o.incremental_min_new_data_ratio =
                parse_positive_f64("incremental.min-new-data-ratio", v)?;
        }
        if let Some(v) = get("incremental.max-delta-generations") {
            o.incremental_max_delta_generations =
                parse_positive_usize("incremental.max-delta-generations", v)?;
        }
        if let Some(v) = get("compression-factor") {
            o.compression_factor = parse_positive_f64("compression-factor", v)?;
        }
        if let Some(v) = get("target-file-count") {
            o.target_file_count = Some(parse_positive_usize("target-file-count", v)?);
        }
        if let Some(v) = get("min-overlap-depth") {
            o.min_overlap_depth = parse_positive_f64("min-overlap-depth", v)?;
        }
        if let Some(v) = get("max-memory-bytes") {
            o.max_memory_bytes = parse_u64("max-memory-bytes", v)?;
            if o.max_memory_bytes < 16 * 1024 * 1024 {
                return Err(invalid(
                    "max-memory-bytes",
                    v,
                    "must be at least 16777216 (16 MiB)",
                ));
            }
        }
        if let Some(v) = get("spill-dir") {
            if v.is_empty() {
                return Err(invalid("spill-dir", v, "give a directory path"));
            }
            o.spill_dir = Some(PathBuf::from(v));
        }
        if let Some(v) = get("threads") {
            o.threads = parse_positive_usize("threads", v)?;
        }
        if let Some(v) = get("row-group-rows") {
            o.row_group_rows = parse_positive_usize("row-group-rows", v)?;
        }
        if let Some(v) = get("compression-codec") {
            o.compression_codec = match v.to_ascii_lowercase().as_str() {
                "zstd" => OutputCodec::Zstd,
                "snappy" => OutputCodec::Snappy,
                "uncompressed" | "none" => OutputCodec::Uncompressed,
                _ => {
                    return Err(invalid(
                        "compression-codec",
                        v,
                        "expected one of zstd, snappy, uncompressed",
                    ));
                }
            };
        }
        o.explicit_sizing = explicit_target.is_some() || o.target_file_count.is_some();
        Ok(o)
    }

    /// The writer's roll-over size: target + ½(max − target), so that a task slightly over
    /// target does not leave a tiny remainder file.
    pub fn write_max_file_size(&self) -> u64 {
        self.target_file_size_bytes + (self.max_file_size_bytes - self.target_file_size_bytes) / 2
    }

    /// Worker threads to use (the option, or the available cores).
    pub fn effective_threads(&self) -> usize {
        if self.threads > 0 {
            self.threads
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    }
}

fn invalid(key: &str, value: &str, reason: &str) -> RewriteError {
    RewriteError::InvalidOption {
        key: key.to_string(),
        value: value.to_string(),
        reason: reason.to_string(),
    }
}

fn parse_u64(key: &str, v: &str) -> Result<u64, RewriteError> {
    v.parse::<u64>()
        .map_err(|_| invalid(key, v, "expected a non-negative integer number of bytes"))
}

fn parse_positive_u64(key: &str, v: &str) -> Result<u64, RewriteError> {
    match parse_u64(key, v)? {
        0 => Err(invalid(key, v, "expected a positive integer")),
        n => Ok(n),
    }
}

fn parse_positive_usize(key: &str, v: &str) -> Result<usize, RewriteError> {
    match v.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(invalid(key, v, "expected a positive integer")),
    }
}

fn parse_positive_f64(key: &str, v: &str) -> Result<f64, RewriteError> {
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(invalid(key, v, "expected a positive finite number")),
    }
}

fn parse_bool(key: &str, v: &str) -> Result<bool, RewriteError> {
    match v.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(invalid(key, v, "expected true or false")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_iceberg() {
        let o = RewriteOptions::parse(Vec::<(&str, &str)>::new(), None).unwrap();
        assert_eq!(o.target_file_size_bytes, 536_870_912);
        assert_eq!(o.min_file_size_bytes, 402_653_184);
        assert_eq!(o.max_file_size_bytes, 966_367_641);
        assert_eq!(
            o.write_max_file_size(),
            536_870_912 + (966_367_641 - 536_870_912) / 2
        );
        assert_eq!(o.min_input_files, 5);
        assert_eq!(o.max_file_group_size_bytes, 107_374_182_400);
        assert_eq!(o.max_concurrent_file_group_rewrites, 5);
        assert!(!o.partial_progress_enabled);
        assert_eq!(o.partial_progress_max_commits, 10);
        assert!(o.use_starting_sequence_number);
        assert!(!o.explicit_sizing);
    }

    #[test]
    fn table_target_replaces_default_and_derives_min_max() {
        let o = RewriteOptions::parse([("rewrite-all", "TRUE")], Some(100)).unwrap();
        assert_eq!((o.min_file_size_bytes, o.max_file_size_bytes), (75, 180));
        assert!(o.rewrite_all);
        assert!(!o.explicit_sizing);
        let o = RewriteOptions::parse([("target-file-size-bytes", "1000")], Some(100)).unwrap();
        assert_eq!(o.target_file_size_bytes, 1000);
        assert!(o.explicit_sizing);
    }

    #[test]
    fn unknown_option_lists_valid_ones() {
        let e = RewriteOptions::parse([("target-file-size", "1")], None).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("'target-file-size'"), "{msg}");
        assert!(msg.contains("target-file-size-bytes") && msg.contains("max-memory-bytes"));
    }

    #[test]
    fn bad_values_are_typed_errors() {
        for (k, v) in [
            ("target-file-size-bytes", "-1"),
            ("target-file-size-bytes", "0"),
            ("min-input-files", "0"),
            ("rewrite-all", "yes"),
            ("compression-factor", "NaN"),
            ("max-memory-bytes", "1024"),
            ("compression-codec", "brotli"),
        ] {
            let e = RewriteOptions::parse([(k, v)], None).unwrap_err();
            assert!(
                matches!(e, RewriteError::InvalidOption { .. }),
                "{k}={v}: {e}"
            );
            assert!(e.to_string().contains(k));
        }
        let e = RewriteOptions::parse([("max-file-size-bytes", "10")], Some(100)).unwrap_err();
        assert!(
            e.to_string().contains(">= target-file-size-bytes (100)"),
            "{e}"
        );
    }
}
