//! geoberg's session options, set with `SET geoberg.<name> = <value>` like DataFusion's and
//! SedonaDB's own (`SHOW ALL` lists them).

use datafusion::common::config::ConfigExtension;
use datafusion::common::extensions_options;

extensions_options! {
    /// geoberg's options of a session (prefix `geoberg.`).
    pub struct GeobergOptions {
        /// Prune spatial joins by the tables' layout at run time: the probe side by the build
        /// side's boxes, the build side by the probe side's file boxes, and joins of two
        /// geoberg tables in groups of overlapping file pairs. `false` reads what a join
        /// without geoberg would (the answers are the same).
        pub join_pruning: bool, default = true
        /// Parquet bytes of the build-side files one group of a file-pair join reads at most
        /// (a single larger file forms its own group): what bounds a join's memory. A join
        /// whose build side fits runs whole, as one group.
        pub join_group_bytes: u64, default = 256 * 1024 * 1024
        /// Parquet bytes a table scan's partition reads at least: a scan of `n` bytes has at
        /// most `ceil(n / scan_partition_bytes)` partitions (and at most DataFusion's
        /// `target_partitions`). 0 splits every scan over `target_partitions`. A cluster sets
        /// 32 MiB: each partition is a task that an executor fetches and starts on its own.
        pub scan_partition_bytes: u64, default = 0
    }
}

impl ConfigExtension for GeobergOptions {
    const PREFIX: &'static str = "geoberg";
}

impl GeobergOptions {
    /// The options of a task's session (the defaults where the session has none registered).
    pub fn of(config: &datafusion::prelude::SessionConfig) -> GeobergOptions {
        config
            .options()
            .extensions
            .get::<GeobergOptions>()
            .cloned()
            .unwrap_or_default()
    }
}
