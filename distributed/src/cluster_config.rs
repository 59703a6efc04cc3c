//! The engine settings every process of a cluster runs with.

use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::extension::SessionConfigExt;
use datafusion::prelude::SessionConfig;

/// Seconds between an executor's heartbeats to the scheduler (Ballista's default is 60).
pub(crate) const HEARTBEAT_SECONDS: u64 = 5;

/// Seconds without a heartbeat after which the scheduler takes an executor for lost and runs
/// its tasks elsewhere (Ballista's default is 180: a killed executor stalled a query for three
/// minutes).
pub(crate) const EXECUTOR_TIMEOUT_SECONDS: u64 = 30;

/// How tasks reach executors: they ask for work (pull). With Ballista 54.1's default (push),
/// a task reset on a lost executor is never offered again: the scheduler's `ExecutorLost`
/// handler resets it without reviving offers, and the job waits forever (a `CREATE SPATIAL
/// INDEX` whose executor was SIGKILLed mid-task waited > 10 minutes).
pub(crate) const SCHEDULING_POLICY: TaskSchedulingPolicy = TaskSchedulingPolicy::PullStaged;

/// DataFusion's setting that lets the partitions of one file scan take each other's files.
const WORK_STEALING: &str = "datafusion.execution.enable_file_stream_work_stealing";

/// geoberg's option of the Parquet bytes a scan partition reads at least.
const SCAN_PARTITION_BYTES: &str = "geoberg.scan_partition_bytes";

/// What a scan partition reads at least on a cluster: each partition is a task that an idle
/// executor asks the scheduler for (pull scheduling polls every 50 ms), so a 1% window that
/// reads a few MB runs as one task instead of sixteen (400 ms of polling on one executor).
const CLUSTER_SCAN_PARTITION_BYTES: u64 = 32 * 1024 * 1024;

/// `config` made Ballista's, with file-stream work stealing off and scans split into
/// partitions of at least [`CLUSTER_SCAN_PARTITION_BYTES`]. DataFusion 54 lets sibling
/// partitions of a scan share one queue of files (on by default); on a cluster each partition
/// runs as its own task with its own copy of the plan, so each would read every file of the
/// scan and every row would be counted once per partition. Found by the cluster suite
/// (`cli/tests/cluster.rs`): a windowed `count(*)` over 2 partitions returned twice the rows.
pub(crate) fn cluster_config(config: SessionConfig) -> SessionConfig {
    config
        .upgrade_for_ballista()
        .set_bool(WORK_STEALING, false)
        .set_u64(SCAN_PARTITION_BYTES, CLUSTER_SCAN_PARTITION_BYTES)
}
