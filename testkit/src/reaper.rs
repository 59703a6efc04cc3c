//! Cleanup that runs even when the test process dies.
//!
//! A server outlives the process that started it (`pg_ctl` daemonises PostgreSQL; a killed
//! parent leaves `weed` running). Each server therefore gets a small `sh` watchdog whose standard
//! input is a pipe from this process: the watchdog blocks reading it, and when the pipe closes —
//! on `Drop`, or when the kernel closes it because the process exited, panicked with
//! `panic = "abort"` or was killed — it stops the server and deletes its directory. That makes
//! servers held in `static`s (never dropped) safe too. The watchdog has its own process group so
//! that a Ctrl-C aimed at `cargo test` does not kill it before it has cleaned up.

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};

use crate::error::{Error, Result};

/// A watchdog running `script` once this value is dropped or the process is gone.
#[derive(Debug)]
pub(crate) struct Reaper {
    child: Child,
    pipe: Option<ChildStdin>,
}

impl Reaper {
    /// Starts the watchdog; `script` is `sh` code with positional parameters `args` ($1, $2...).
    pub(crate) fn spawn<I, S>(script: &str, args: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!("read _ignored || true\n{script}"))
            .arg("sh")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| Error::io("spawning the cleanup watchdog (sh)", e))?;
        let pipe = child.stdin.take();
        Ok(Reaper { child, pipe })
    }

    /// Runs the cleanup now and waits for it.
    pub(crate) fn finish(&mut self) {
        if self.pipe.take().is_some() {
            // Closing the pipe releases the watchdog.
            let _ = self.child.wait();
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        self.finish();
    }
}
