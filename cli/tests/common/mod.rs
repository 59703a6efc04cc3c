//! Helpers for the CLI tests: run the built binary in a temporary warehouse, snapshot what is
//! on disk, write test Parquet files.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

/// A temporary warehouse.
pub struct Env {
    pub dir: tempfile::TempDir,
}

/// What a run printed and how it exited.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    #[track_caller]
    pub fn ok(self) -> Run {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Fails with a message containing every one of `parts` (case-insensitive).
    #[track_caller]
    pub fn fails_with(self, parts: &[&str]) -> Run {
        assert_ne!(
            self.code, 0,
            "expected failure, got success:\n{}",
            self.stdout
        );
        let err = self.stderr.to_lowercase();
        for p in parts {
            assert!(
                err.contains(&p.to_lowercase()),
                "stderr lacks {p:?}:\n{}",
                self.stderr
            );
        }
        assert!(
            !self.stderr.contains("panicked"),
            "a panic is not an error message:\n{}",
            self.stderr
        );
        self
    }

    /// The value of a one-row, one-column result printed as a table: the cell of its last
    /// row.
    #[track_caller]
    pub fn value(&self) -> &str {
        self.table_rows()
            .last()
            .and_then(|row| row.first().copied())
            .unwrap_or_else(|| panic!("no table in stdout:\n{}", self.stdout))
    }

    /// The data rows of the table printed last, each as its trimmed cells (its first `|` row
    /// is the header and is left out).
    pub fn table_rows(&self) -> Vec<Vec<&str>> {
        let lines: Vec<&str> = self.stdout.lines().collect();
        let in_table = |l: &&str| l.starts_with('+') || l.starts_with('|');
        let Some(end) = lines.iter().rposition(|l| l.starts_with('+')) else {
            return Vec::new();
        };
        let start = lines[..end]
            .iter()
            .rposition(|l| !in_table(l))
            .map_or(0, |i| i + 1);
        lines[start..=end]
            .iter()
            .filter(|l| l.starts_with('|'))
            .skip(1)
            .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
            .collect()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}", self.stdout))
    }
}

impl Env {
    pub fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn warehouse(&self) -> PathBuf {
        self.dir.path().join("wh")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs `geoberg --warehouse <wh> <args>`.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with_stdin(args, "")
    }

    /// Runs `geoberg --warehouse <wh> <args>` with `stdin` as its standard input (written from
    /// a thread, so a large input cannot deadlock against the child's output).
    pub fn run_with_stdin(&self, args: &[&str], stdin: impl Into<Vec<u8>>) -> Run {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_geoberg"))
            .arg("--warehouse")
            .arg(self.warehouse())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = child.stdin.take().unwrap();
        let stdin = stdin.into();
        let writer = std::thread::spawn(move || pipe.write_all(&stdin));
        let Output {
            status,
            stdout,
            stderr,
        } = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        Run {
            code: status.code().unwrap_or(-1),
            stdout: String::from_utf8(stdout).unwrap(),
            stderr: String::from_utf8(stderr).unwrap(),
        }
    }

    /// Every file under the temp dir with a hash of its bytes, plus the catalog's rows.
    pub fn state(&self) -> (BTreeMap<String, u64>, Vec<String>) {
        let mut files = BTreeMap::new();
        walk(self.dir.path(), self.dir.path(), &mut files);
        let db = self.warehouse().join("catalog.db");
        let rows = if db.exists() {
            let conn = rusqlite::Connection::open(&db).unwrap();
            let mut rows = Vec::new();
            for sql in [
                "SELECT catalog_name || '|' || table_namespace || '|' || table_name || '|' || \
                 coalesce(metadata_location, '') FROM iceberg_tables ORDER BY 1",
                "SELECT catalog_name || '|' || namespace || '|' || property_key || '|' || \
                 property_value FROM iceberg_namespace_properties ORDER BY 1",
            ] {
                let mut stmt = conn.prepare(sql).unwrap();
                rows.extend(
                    stmt.query_map([], |r| r.get::<_, String>(0))
                        .unwrap()
                        .map(Result::unwrap),
                );
            }
            rows
        } else {
            Vec::new()
        };
        (files, rows)
    }

    /// Runs `args`, expects failure with `parts` in the message and no change on disk.
    #[track_caller]
    pub fn fails_cleanly(&self, args: &[&str], parts: &[&str]) -> Run {
        let before = self.state();
        let run = self.run(args).fails_with(parts);
        assert_eq!(
            self.state(),
            before,
            "{args:?} changed files or catalog rows"
        );
        run
    }
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, u64>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let path = e.unwrap().path();
        if path.is_dir() {
            walk(root, &path, out);
        } else {
            let mut h = DefaultHasher::new();
            std::fs::read(&path).unwrap().hash(&mut h);
            out.insert(
                path.strip_prefix(root).unwrap().display().to_string(),
                h.finish(),
            );
        }
    }
}

/// ISO WKB point.
pub fn wkb_point(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1u8, 1, 0, 0, 0];
    v.extend(x.to_le_bytes());
    v.extend(y.to_le_bytes());
    v
}

/// `n` points on a 100 x 50 degree area in a scrambled (arrival-like) order, as `id`, `name`,
/// `geometry` columns. Point `i` is at a position fixed by `i`, so counts can be checked.
pub fn scattered_points(n: usize) -> Vec<(i64, f64, f64)> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..n as i64)
        .map(|i| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = (state >> 11) as f64 / (1u64 << 53) as f64 * 100.0 - 50.0;
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let y = (state >> 11) as f64 / (1u64 << 53) as f64 * 50.0;
            (i, x, y)
        })
        .collect()
}

/// Writes the points as Parquet; with `geo` set, adds that GeoParquet `geo` metadata.
pub fn write_points(path: &Path, points: &[(i64, f64, f64)], geo: Option<&str>) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("geometry", DataType::Binary, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(points.iter().map(|p| p.0))),
            Arc::new(StringArray::from_iter_values(
                points.iter().map(|p| format!("p{}", p.0)),
            )),
            Arc::new(BinaryArray::from_iter_values(
                points.iter().map(|p| wkb_point(p.1, p.2)),
            )),
        ],
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(500))
        .set_key_value_metadata(geo.map(|g| vec![KeyValue::new("geo".into(), g.to_string())]))
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = ArrowWriter::try_new(file, schema, Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// GeoParquet 1.1 metadata for a WKB `geometry` column with the given PROJJSON `crs` member
/// (`None`: no member, which means OGC:CRS84).
pub fn geo_metadata(crs: Option<&str>) -> String {
    let crs = crs.map_or(String::new(), |c| format!(r#","crs":{c}"#));
    format!(
        r#"{{"version":"1.1.0","primary_column":"geometry","columns":{{"geometry":{{"encoding":"WKB","geometry_types":["Point"]{crs}}}}}}}"#
    )
}

/// A warehouse in a fresh bucket of an S3 server and a fresh PostgreSQL catalog, shared by
/// every process a test starts.
pub struct Remote<'a> {
    pub s3: &'a geoberg_testkit::S3Server,
    pub bucket: String,
    pub warehouse: String,
    pub catalog: String,
    pub dir: tempfile::TempDir,
}

impl<'a> Remote<'a> {
    /// A new bucket and database on the shared servers.
    pub fn new(
        s3: &'a geoberg_testkit::S3Server,
        pg: &geoberg_testkit::PostgresServer,
    ) -> Remote<'a> {
        let bucket = s3.fresh_bucket().unwrap();
        Remote {
            s3,
            warehouse: format!("s3://{bucket}/warehouse"),
            bucket,
            catalog: pg.fresh_database().unwrap(),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// `geoberg --warehouse .. --catalog-uri .. <args>` with the S3 server's credentials.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_geoberg"));
        command
            .arg("--warehouse")
            .arg(&self.warehouse)
            .arg("--catalog-uri")
            .arg(&self.catalog)
            .args(args)
            .envs(self.s3.env())
            .current_dir(self.dir.path());
        command
    }

    /// Runs `geoberg <args>` to the end.
    pub fn run(&self, args: &[&str]) -> Run {
        let out = self.command(args).output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    /// Starts a long-running `geoberg` process, its output (log records at `info`) in `log`.
    pub fn spawn(&self, args: &[&str], log: &Path) -> std::process::Child {
        let log = std::fs::File::create(log).unwrap();
        self.command(args)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap()
    }
}
