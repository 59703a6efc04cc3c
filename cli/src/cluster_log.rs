//! The log of a cluster process: Ballista's and DataFusion's `log` records on stderr, at the
//! level `RUST_LOG` names (`error`, `warn`, `info`, `debug`, `trace`; `warn` by default), so
//! that a lost executor, a failed task or a retried stage shows up where the process runs.
//! A plain level is all it reads (no per-module filters).

use std::io::Write;

/// Writes each record as `<time> <LEVEL> <target>: <message>`.
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let _ = writeln!(
            std::io::stderr().lock(),
            "{}.{:03} {} {}: {}",
            since_epoch.as_secs(),
            since_epoch.subsec_millis(),
            record.level(),
            record.target(),
            record.args()
        );
    }

    fn flush(&self) {}
}

/// Installs the stderr log at `RUST_LOG`'s level (once; later calls change nothing).
pub fn install() {
    let level = std::env::var("RUST_LOG")
        .ok()
        .and_then(|v| v.trim().parse::<log::LevelFilter>().ok())
        .unwrap_or(log::LevelFilter::Warn);
    if log::set_logger(&StderrLog).is_ok() {
        log::set_max_level(level);
    }
}
