//! Running the harness's helper commands and reading server logs.

use std::path::Path;
use std::process::Command;

use crate::error::{Error, Result};

/// Runs `command` to completion; its stdout on success, else an error with status and output.
pub(crate) fn run(command: &mut Command) -> Result<String> {
    let line = format!("{command:?}");
    let out = command.output().map_err(|e| Error::Command {
        command: line.clone(),
        reason: e.to_string(),
    })?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    Err(Error::Command {
        command: line,
        reason: format!(
            "{}\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    })
}

/// The last 40 lines of a log file (empty if it cannot be read).
pub(crate) fn log_tail(path: &Path) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}
