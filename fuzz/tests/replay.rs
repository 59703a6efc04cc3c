//! Replays every checked-in corpus file through its target: the seeds, and every input the
//! fuzzer ever minimized from a crash, stay regression tests in a plain `cargo test`.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

fn files(target: &str) -> Vec<PathBuf> {
    let dir = corpus_dir().join(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_corpus_file_passes_its_target() {
    let mut failures = Vec::new();
    let mut replayed = 0;
    for (name, target) in geoberg_fuzz::TARGETS {
        let files = files(name);
        assert!(!files.is_empty(), "corpus/{name} has no seeds");
        for file in files {
            let data = fs::read(&file).unwrap();
            if catch_unwind(AssertUnwindSafe(|| target(&data))).is_err() {
                failures.push(file.display().to_string());
            }
            replayed += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {replayed} inputs failed: {failures:#?}",
        failures.len()
    );
}

#[test]
fn every_corpus_directory_is_a_target() {
    for entry in fs::read_dir(corpus_dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            geoberg_fuzz::TARGETS.iter().any(|(t, _)| *t == name),
            "corpus/{name} belongs to no target"
        );
    }
}

/// Every target accepts the empty input and short garbage (libFuzzer starts there).
#[test]
fn targets_accept_trivial_inputs() {
    for (_, target) in geoberg_fuzz::TARGETS {
        for data in [&[][..], &[0], &[0xff; 3], &[1, 1, 0, 0, 0]] {
            target(data);
        }
    }
}
