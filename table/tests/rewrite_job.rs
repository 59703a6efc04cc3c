//! A rewrite whose tasks run elsewhere ([`RewriteRunner`]): the job travels as JSON, its parts
//! run on their own (as on a cluster's executors), and the coordinator commits once, checked as
//! a local rewrite is. Runners that lose, repeat or fail parts commit nothing.

mod common;

use std::sync::Mutex;

use common::{
    data_dir_files, live_paths, points_batch, points_table, rows, sqlite_catalog, uniform,
};
use geoberg_table::{
    BBox, ClusteredLayout, Error, RewriteJob, RewriteJobOutcome, RewriteRunner, Storage, Table,
};

/// A table of 6 appended files of 1,500 uniform points each.
fn scattered(dir: &std::path::Path) -> Table {
    let mut table = points_table(sqlite_catalog(dir), "pts");
    for f in 0..6 {
        let batch = points_batch(f * 1_500..(f + 1) * 1_500, uniform(11));
        table = table.append(&[batch]).unwrap().0;
    }
    table
}

/// How a test runner treats the parts it ran.
#[derive(Debug, Clone, Copy)]
enum Parts {
    /// Returns every part.
    All,
    /// Drops the last part.
    LoseOne,
    /// Returns the first part twice.
    RepeatOne,
    /// Fails after running every part.
    Fail,
}

/// Runs each part from the job's JSON, through its own storage handle, as a worker does.
#[derive(Debug)]
struct PartsRunner {
    parts: usize,
    behaviour: Parts,
    jobs: Mutex<Vec<String>>,
}

impl PartsRunner {
    fn new(parts: usize, behaviour: Parts) -> Self {
        PartsRunner {
            parts,
            behaviour,
            jobs: Mutex::new(Vec::new()),
        }
    }
}

impl RewriteRunner for PartsRunner {
    fn run(&self, job: &RewriteJob) -> geoberg_table::Result<Vec<RewriteJobOutcome>> {
        let json = job.to_json()?;
        self.jobs.lock().unwrap().push(json.clone());
        let remote = RewriteJob::from_json(&json)?;
        assert_eq!(&remote, job, "a job survives its JSON");
        let mut outcomes = Vec::new();
        for part in remote.split(self.parts) {
            let outcome = remote.run_tasks(&Storage::new(), &part)?;
            // What crosses the wire.
            let wire = serde_json::to_string(&outcome).unwrap();
            outcomes.push(serde_json::from_str::<RewriteJobOutcome>(&wire).unwrap());
        }
        match self.behaviour {
            Parts::All => {}
            Parts::LoseOne => {
                outcomes.pop();
            }
            Parts::RepeatOne => outcomes.push(outcomes[0].clone()),
            Parts::Fail => {
                return Err(Error::RewriteRunner {
                    runner: "the test runner".into(),
                    reason: "an executor was lost".into(),
                    fix: "run it again".into(),
                });
            }
        }
        Ok(outcomes)
    }
}

#[test]
fn a_rewrite_run_in_parts_commits_once_with_every_row_and_ordered_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let table = scattered(dir.path());
    let before = rows(&table);
    let inputs = data_dir_files(&table);
    let snapshots = table.metadata().snapshots().count();
    let runner = PartsRunner::new(3, Parts::All);
    let (table, report) = table
        .rewrite()
        .hilbert("geom", 14)
        .option("target-file-count", "9")
        .runner(&runner)
        .execute()
        .unwrap();

    assert_eq!(rows(&table), before, "the multiset of rows is unchanged");
    assert_eq!(table.metadata().snapshots().count(), snapshots + 1);
    assert_eq!(report.snapshot_ids.len(), 1);
    assert_eq!(report.rewritten_data_files_count, 6);
    assert_eq!(report.rewritten_records_count, 9_000);
    assert_eq!(report.workers.len(), 3, "{:?}", report.workers);
    let job = RewriteJob::from_json(&runner.jobs.lock().unwrap()[0]).unwrap();
    assert!(job.tasks.len() >= 3, "{} tasks", job.tasks.len());
    // The data folder holds the inputs (until expired) and the committed files: the parts
    // wrote nothing else.
    let mut expected = inputs;
    expected.extend(live_paths(&table));
    assert_eq!(data_dir_files(&table), expected);
    assert_eq!(
        report.added_data_files_count as usize,
        table.data_files().unwrap().len()
    );

    // The files' key ranges are disjoint and ordered, as a local rewrite's are.
    let layout = ClusteredLayout::current(&table).unwrap().unwrap();
    for p in &layout.partitions {
        for pair in p.files.windows(2) {
            assert!(pair[0].last < pair[1].first, "{pair:?}");
        }
    }
    // A window reads few files and finds what brute force finds.
    let window = BBox::new(10.0, 10.0, 46.0, 27.0);
    let points: Vec<(f64, f64)> = (0..9_000).map(uniform(11)).collect();
    let explain = table.scan().with_window("geom", window).explain().unwrap();
    assert_eq!(explain.rows_returned, common::count_inside(&points, window));
    assert!(
        explain.files_read < table.data_files().unwrap().len(),
        "{explain}"
    );
}

#[test]
fn parts_that_do_not_add_up_commit_nothing_and_leave_no_files() {
    for behaviour in [Parts::LoseOne, Parts::RepeatOne, Parts::Fail] {
        let dir = tempfile::tempdir().unwrap();
        let table = scattered(dir.path());
        let before = rows(&table);
        let files_before = data_dir_files(&table);
        let runner = PartsRunner::new(3, behaviour);
        let e = table
            .rewrite()
            .hilbert("geom", 14)
            .option("target-file-count", "9")
            .runner(&runner)
            .execute()
            .unwrap_err()
            .to_string();
        match behaviour {
            Parts::LoseOne => assert!(e.contains("missed"), "{e}"),
            Parts::RepeatOne => assert!(e.contains("more than once"), "{e}"),
            _ => assert!(e.contains("nothing was committed"), "{e}"),
        }
        let table = table.refresh().unwrap();
        assert_eq!(rows(&table), before, "{behaviour:?}");
        // The parts that came back had their files removed; a lost part's files are orphans,
        // all of one attempt (named `<rewrite>-<attempt>-<task>-<seq>.parquet`).
        let left: Vec<String> = data_dir_files(&table)
            .difference(&files_before)
            .cloned()
            .collect();
        let attempts: std::collections::BTreeSet<&str> = left
            .iter()
            .map(|f| f.rsplitn(3, '-').nth(2).unwrap())
            .collect();
        match behaviour {
            Parts::RepeatOne => assert!(left.is_empty(), "{left:?}"),
            Parts::LoseOne => assert_eq!(attempts.len(), 1, "{left:?}"),
            _ => {}
        }
    }
}

#[test]
fn a_part_runs_only_its_own_job_s_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let table = scattered(dir.path());
    let runner = PartsRunner::new(2, Parts::All);
    table
        .rewrite()
        .hilbert("geom", 14)
        .option("target-file-count", "4")
        .runner(&runner)
        .execute()
        .unwrap();
    let mut job = RewriteJob::from_json(&runner.jobs.lock().unwrap()[0]).unwrap();
    let last = *job.tasks.last().unwrap();
    job.tasks.pop();
    let e = job
        .run_tasks(&Storage::new(), &[last])
        .unwrap_err()
        .to_string();
    assert!(e.contains("not one of this job's tasks"), "{e}");
    assert!(RewriteJob::from_json("{}").is_err());
}
