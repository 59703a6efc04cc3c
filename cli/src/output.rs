//! Where results go: text or JSON on stdout, progress bars on stderr.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

/// Output mode of one command.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    json: bool,
    progress: bool,
}

impl Output {
    /// Text, or one JSON document per command with `--json`. Progress bars show only when
    /// stderr is a terminal and the output is not JSON.
    pub fn new(json: bool) -> Self {
        Output {
            json,
            progress: !json && std::io::stderr().is_terminal(),
        }
    }

    /// Prints a result: `text` for people or `json` for machines.
    pub fn emit(&self, text: impl AsRef<str>, json: Value) {
        if self.json {
            println!("{json}");
        } else {
            let text = text.as_ref();
            if text.ends_with('\n') {
                print!("{text}");
            } else {
                println!("{text}");
            }
        }
    }

    /// A line of narration for people (suppressed under `--json`).
    pub fn note(&self, text: impl AsRef<str>) {
        if !self.json {
            println!("{}", text.as_ref());
        }
    }

    /// A bar counting `len` units of `unit` (rows, files), or a hidden one.
    pub fn bar(&self, len: u64, message: &str, unit: &str) -> ProgressBar {
        if !self.progress {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(len);
        let template = format!(
            "{{msg:>12}} [{{elapsed_precise}}] {{wide_bar}} {{human_pos}}/{{human_len}} {unit} \
             (eta {{eta}})"
        );
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style);
        }
        bar.set_message(message.to_string());
        bar
    }

    /// A bar counting bytes (the rewrite reports input bytes done), or a hidden one.
    pub fn bytes_bar(&self, message: &str) -> ProgressBar {
        if !self.progress {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(0);
        let template = "{msg:>12} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} \
                        ({bytes_per_sec}, eta {eta})";
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.set_message(message.to_string());
        bar
    }
}
