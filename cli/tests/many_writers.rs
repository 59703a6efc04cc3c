//! Many writers at once, as separate OS processes: four `geoberg import` loops appending and one
//! `CREATE SPATIAL INDEX` loop rewriting the same table for a bounded time, on the embedded
//! SQLite catalog and on PostgreSQL + S3 (real servers). Afterwards every row of every import
//! that reported success is there exactly once, no import that failed left a row, and no
//! rewrite lost one.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use common::*;
use geoberg_table::{Catalog, Storage, Table, TableIdent, connect_catalog};
use geoberg_testkit::{PostgresServer, S3Server};

const WRITERS: usize = 4;
const ROWS: usize = 40;
const RUN_FOR: Duration = Duration::from_secs(8);

/// How to run `geoberg` against one warehouse and catalog.
#[derive(Clone)]
struct Target {
    warehouse: String,
    catalog: String,
    env: Vec<(&'static str, String)>,
}

impl Target {
    fn run(&self, args: &[&str]) -> Run {
        let out = Command::new(env!("CARGO_BIN_EXE_geoberg"))
            .args([
                "--warehouse",
                &self.warehouse,
                "--catalog-uri",
                &self.catalog,
            ])
            .args(args)
            .envs(self.env.iter().cloned())
            .output()
            .unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    fn catalog(&self) -> Arc<dyn Catalog> {
        connect_catalog(
            &self.catalog,
            "geoberg",
            &self.warehouse,
            Storage::with_options(self.env.iter().cloned()),
        )
        .unwrap()
    }
}

fn race(target: &Target, files: &std::path::Path) {
    target
        .run(&[
            "sql",
            "CREATE TABLE db.points (id bigint, name string, geometry geometry(4326)) \
             TBLPROPERTIES ('commit.retry.num-retries' = '30', 'commit.retry.min-wait-ms' = '10', \
             'commit.retry.max-wait-ms' = '400')",
        ])
        .ok();
    let imported = Mutex::new(BTreeMap::<i64, usize>::new());
    let failed_imports = Mutex::new(Vec::<(usize, usize, String)>::new());
    let rewrites = Mutex::new((0usize, 0usize));
    let start = Instant::now();
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let (imported, failed) = (&imported, &failed_imports);
            s.spawn(move || {
                let mut round = 0usize;
                while start.elapsed() < RUN_FOR {
                    // Ids unique per writer and round.
                    let first = ((w * 100_000) + round * ROWS) as i64;
                    let points: Vec<(i64, f64, f64)> = scattered_points(ROWS)
                        .into_iter()
                        .map(|(i, x, y)| (first + i, x, y))
                        .collect();
                    let file: PathBuf = files.join(format!("w{w}-r{round}.parquet"));
                    write_points(&file, &points, None);
                    let run =
                        target.run(&["import", file.to_str().unwrap(), "--table", "db.points"]);
                    if run.code == 0 {
                        let mut m = imported.lock().unwrap();
                        for (id, _, _) in &points {
                            *m.entry(*id).or_default() += 1;
                        }
                    } else {
                        failed.lock().unwrap().push((w, round, run.stderr));
                    }
                    round += 1;
                }
            });
        }
        let rewrites = &rewrites;
        s.spawn(move || {
            while start.elapsed() < RUN_FOR {
                let run = target.run(&[
                    "sql",
                    "CREATE SPATIAL INDEX FOR db.points USING hilbert(geometry, 10)",
                ]);
                let mut r = rewrites.lock().unwrap();
                if run.code == 0 {
                    r.0 += 1;
                } else {
                    r.1 += 1;
                    assert!(
                        run.stderr.contains("conflict") || run.stderr.contains("Conflict"),
                        "a rewrite failed for another reason: {}",
                        run.stderr
                    );
                }
            }
        });
    });
    let imported = imported.into_inner().unwrap();
    let failed = failed_imports.into_inner().unwrap();
    let (rewrites_ok, rewrites_failed) = rewrites.into_inner().unwrap();
    let table = Table::load(target.catalog(), &TableIdent::new("db", "points").unwrap()).unwrap();
    let (batches, _) = table.scan().select(["id"]).execute().unwrap();
    let mut seen = BTreeMap::<i64, usize>::new();
    for b in &batches {
        for id in b.column(0).as_primitive::<Int64Type>().values() {
            *seen.entry(*id).or_default() += 1;
        }
    }
    assert!(
        imported.len() >= WRITERS * ROWS,
        "too few imports succeeded: {} rows; failures: {failed:?}",
        imported.len()
    );
    assert!(imported.values().all(|&n| n == 1));
    assert_eq!(
        seen,
        imported,
        "every imported row exactly once, nothing else ({} failed imports: {:?})",
        failed.len(),
        failed.first()
    );
    eprintln!(
        "{} imports ({} rows), {} failed; {rewrites_ok} rewrites committed, {rewrites_failed} \
         conflicted; {} snapshots",
        imported.len() / ROWS,
        imported.len(),
        failed.len(),
        table.metadata().snapshots().count()
    );
}

#[test]
fn four_importers_and_a_rewriter_on_sqlite() {
    let env = Env::new();
    let target = Target {
        warehouse: env.warehouse().display().to_string(),
        catalog: format!("sqlite://{}", env.path("catalog.db").display()),
        env: Vec::new(),
    };
    race(&target, env.dir.path());
}

#[test]
fn four_importers_and_a_rewriter_on_postgresql_and_s3() {
    let s3 = S3Server::shared();
    let pg = PostgresServer::shared();
    let dir = tempfile::tempdir().unwrap();
    let target = Target {
        warehouse: format!("s3://{}/warehouse", s3.fresh_bucket().unwrap()),
        catalog: pg.fresh_database().unwrap(),
        env: s3.env(),
    };
    race(&target, dir.path());
}
