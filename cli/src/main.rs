//! `geoberg`: the command-line tool for Iceberg tables with geometry columns.
//!
//! One command shows what geoberg does, on the embedded default (a local warehouse folder and
//! the SQLite catalog):
//!
//! ```text
//! cargo run --release -p geoberg-cli -- demo
//! ```
//!
//! It appends a few million skewed points in arrival order, runs a 1% window query, clusters
//! the table with `CREATE SPATIAL INDEX`, runs the query again, prints a before/after table and
//! writes `before.svg` / `after.svg` of the data files' boxes. The same tool then works on your
//! own data: `import` (Parquet / GeoParquet with WKB), `sql` (CREATE TABLE, CREATE SPATIAL
//! INDEX, CALL rewrite_data_files, SHOW, DESCRIBE, EXPLAIN, SELECT count(*)), `inspect`,
//! `audit`, `layout`, `ingest`, `maintain`, `expire-snapshots`, `remove-orphans`,
//! `bbox-columns add|backfill`, and `cluster scheduler|executor` with `--scheduler` to run
//! queries on more than one machine (built with the `cluster` feature:
//! `cargo build --release -p geoberg-cli --features cluster`).
//!
//! The binary lives in its own crate, not in `geoberg-table`, so that library users of
//! `geoberg-table` do not compile clap, indicatif and the demo data generator
//! (`geoberg-bench-data`).
//!
//! Conventions: `--json` prints one JSON document per result on stdout; progress bars go to
//! stderr, only when it is a terminal and never under `--json`; every error prints its message
//! (what was wrong, the value, the fix) on stderr and exits with status 1 (2 for a malformed
//! command line). Commands that only read or change existing tables never create the catalog.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod args;
mod audit;
mod bbox_columns;
#[cfg(feature = "cluster")]
mod cluster;
#[cfg(feature = "cluster")]
mod cluster_log;
mod context;
mod demo;
mod error;
mod files;
mod import;
mod index;
mod ingest;
mod inspect;
mod layout;
mod maintenance;
mod output;
mod sql;
mod svg;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{BBoxColumnsCommand, Cli, ClusterCommand, Command, GlobalArgs};
use crate::error::Result;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if cli.global.json {
                let error = serde_json::json!({ "error": e.to_string() });
                eprintln!("{error}");
            } else {
                eprintln!("error: {e}");
            }
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> Result<()> {
    let g = &cli.global;
    match &cli.command {
        Command::Demo(a) => demo::run(g, a),
        Command::Sql(a) => sql::run(g, a),
        Command::Import(a) => import::run(g, a),
        Command::Inspect(a) => inspect::run(g, a),
        Command::Audit(a) => audit::run(g, a),
        Command::Layout(a) => layout::run(g, a),
        Command::ExpireSnapshots(a) => maintenance::expire_snapshots(g, a),
        Command::Ingest(a) => ingest::run(g, a),
        Command::Maintain(a) => maintenance::maintain(g, a),
        Command::RemoveOrphans(a) => maintenance::remove_orphans(g, a),
        Command::BboxColumns(BBoxColumnsCommand::Add(a)) => bbox_columns::add(g, a),
        Command::BboxColumns(BBoxColumnsCommand::Backfill(a)) => bbox_columns::backfill(g, a),
        Command::Cluster(c) => run_cluster(g, c),
    }
}

#[cfg(feature = "cluster")]
fn run_cluster(g: &GlobalArgs, command: &ClusterCommand) -> Result<()> {
    match command {
        ClusterCommand::Scheduler(a) => cluster::scheduler(g, a),
        ClusterCommand::Executor(a) => cluster::executor(g, a),
    }
}

#[cfg(not(feature = "cluster"))]
fn run_cluster(_: &GlobalArgs, _: &ClusterCommand) -> Result<()> {
    Err(error::CliError::ClusterNotBuilt)
}
