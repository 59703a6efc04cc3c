//! The command line: global options and one struct per subcommand.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Iceberg tables with geometry columns: a local warehouse folder and an embedded SQLite catalog
/// by default; object storage (S3, GCS, Azure) and a shared PostgreSQL catalog on request.
#[derive(Debug, Parser)]
#[command(name = "geoberg", version, about, propagate_version = true)]
pub struct Cli {
    /// Where the catalog and tables live.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every subcommand takes, before or after its name.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Where tables are created: a folder, or an object-store URI such as s3://bucket/prefix
    /// (credentials and endpoint from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION,
    /// AWS_ENDPOINT_URL, AWS_ALLOW_HTTP, or the GOOGLE_* / AZURE_* variables).
    #[arg(
        long,
        global = true,
        default_value = "./warehouse",
        value_name = "DIR|URI"
    )]
    pub warehouse: String,
    /// The catalog: sqlite:///path/catalog.db or postgresql://user@host:port/db
    /// [default: sqlite:///<warehouse>/catalog.db for a local warehouse].
    #[arg(long, global = true, value_name = "URI", env = "GEOBERG_CATALOG_URI")]
    pub catalog_uri: Option<String>,
    /// SQLite catalog database (the same as --catalog-uri sqlite:///PATH).
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        conflicts_with = "catalog_uri"
    )]
    pub catalog_db: Option<PathBuf>,
    /// Catalog name (the `catalog_name` column of the catalog database).
    #[arg(long, global = true, default_value = "geoberg", value_name = "NAME")]
    pub catalog_name: String,
    /// Machine-readable JSON on stdout; progress bars are hidden.
    #[arg(long, global = true)]
    pub json: bool,
    /// A geoberg cluster's scheduler, df://host:port: `sql` runs its queries there (writes and
    /// table operations still run in this process); `cluster executor` registers with it
    /// [default for the executor: 127.0.0.1:50050].
    #[arg(
        long,
        global = true,
        value_name = "df://HOST:PORT",
        env = "GEOBERG_SCHEDULER"
    )]
    pub scheduler: Option<String>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate skewed points, query them, cluster with CREATE SPATIAL INDEX, query again,
    /// and draw the file layout before and after.
    Demo(DemoArgs),
    /// Run SQL: queries, EXPLAIN [ANALYZE], INSERT, CREATE TABLE [AS SELECT], DELETE, UPDATE and
    /// MERGE INTO through SedonaDB / DataFusion; CREATE SPATIAL INDEX, CALL rewrite_data_files /
    /// expire_snapshots / remove_orphan_files / rewrite_manifests / upgrade_geometry /
    /// add_bbox_columns / maintain, ALTER TABLE SET / UNSET TBLPROPERTIES, SHOW
    /// CREATE TABLE, SHOW TBLPROPERTIES and DESCRIBE by geoberg.
    Sql(SqlArgs),
    /// Load a Parquet file another tool wrote (GEOMETRY/GEOGRAPHY columns, GeoParquet, plain
    /// WKB) into a table, created from the file's schema if missing; one commit.
    Import(ImportArgs),
    /// Stream records (seed 003's messages as newline-delimited JSON, or Arrow IPC with
    /// `--format arrow`) from stdin or a (growing) file into a table in micro-batch commits; bad
    /// records go to a rejects file with the reason.
    Ingest(IngestArgs),
    /// Snapshots, data files, bounds and how much the files overlap.
    Inspect(InspectArgs),
    /// Check bounds and bbox columns against the geometry, and optionally that a window query
    /// prunes files; exits non-zero when a check fails.
    Audit(AuditArgs),
    /// Draw the data files' bounding boxes as an SVG picture.
    Layout(LayoutArgs),
    /// Remove old snapshots from the table metadata.
    ExpireSnapshots(ExpireArgs),
    /// Run the maintenance that is due: incremental clustering past the table's overlap-depth
    /// or new-files threshold, rewrite_manifests past the manifest threshold, expiry per the
    /// table's retention. Safe to run from cron next to a streaming writer.
    Maintain(MaintainArgs),
    /// Delete files under the table location that no snapshot references.
    RemoveOrphans(OrphanArgs),
    /// Bbox columns for engines without geometry support (seed 002): add the four columns
    /// before the geometry with their metrics set, then backfill the files written before.
    #[command(subcommand)]
    BboxColumns(BBoxColumnsCommand),
    /// Run a geoberg cluster on Ballista: a scheduler that plans queries against the catalog,
    /// and executors that run their tasks reading the warehouse (use an object-store warehouse
    /// and a PostgreSQL catalog to span machines). Needs a build with `--features cluster`.
    #[command(subcommand)]
    Cluster(ClusterCommand),
}

/// `geoberg cluster scheduler|executor`.
#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Serve a scheduler until Ctrl-C: clients (`geoberg --scheduler df://HOST:PORT sql`)
    /// send it queries; it plans them against the catalog and hands tasks to executors.
    Scheduler(SchedulerArgs),
    /// Serve an executor until Ctrl-C: it registers with the scheduler (--scheduler), runs
    /// tasks and reads the warehouse's files (credentials from the environment, as for every
    /// command).
    Executor(ExecutorArgs),
}

/// `geoberg cluster scheduler`.
#[cfg_attr(not(feature = "cluster"), allow(dead_code))]
#[derive(Debug, Args)]
pub struct SchedulerArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:50050", value_name = "HOST:PORT")]
    pub bind: std::net::SocketAddr,
}

/// `geoberg cluster executor`.
#[cfg_attr(not(feature = "cluster"), allow(dead_code))]
#[derive(Debug, Args)]
pub struct ExecutorArgs {
    /// Address to serve shuffle data on (Arrow Flight); its gRPC service takes the next port.
    #[arg(long, default_value = "127.0.0.1:50051", value_name = "HOST:PORT")]
    pub bind: std::net::SocketAddr,
    /// Tasks run at once [default: one per core].
    #[arg(long, default_value_t = 0)]
    pub concurrent_tasks: usize,
    /// Folder for shuffle files [default: a new folder under the system's temporary folder].
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
}

/// `geoberg bbox-columns add|backfill`.
#[derive(Debug, Subcommand)]
pub enum BBoxColumnsCommand {
    /// Add the four bbox columns right before the geometry column, set their metrics to full
    /// and make every append derive them; one metadata commit, nothing rewritten. Idempotent.
    Add(BBoxAddArgs),
    /// Fill the bbox columns in the files written before they existed, one atomic overwrite
    /// per partition (sorted while rewriting; safe to re-run, filled partitions are skipped),
    /// and print the files a window query on the bbox columns reads before and after.
    Backfill(BBoxBackfillArgs),
}

/// `geoberg bbox-columns add`.
#[derive(Debug, Args)]
pub struct BBoxAddArgs {
    /// `namespace.table`.
    pub table: String,
    /// Geometry column [default: the first one].
    #[arg(long)]
    pub column: Option<String>,
    /// The four columns' names, min x, min y, max x, max y [default: bbox_min_x, bbox_min_y,
    /// bbox_max_x, bbox_max_y].
    #[arg(long, value_name = "MINX,MINY,MAXX,MAXY")]
    pub names: Option<String>,
}

/// `geoberg bbox-columns backfill`.
#[derive(Debug, Args)]
pub struct BBoxBackfillArgs {
    /// `namespace.table`.
    pub table: String,
    /// Geometry column [default: the one the table's bbox columns derive from].
    #[arg(long)]
    pub column: Option<String>,
    /// Backfill only partitions that may hold rows matching this condition, e.g.
    /// "event_day < '2026-01-01'" (leave the partition still being written for later).
    #[arg(long = "where", value_name = "CONDITION")]
    pub where_sql: Option<String>,
    /// Window `minx,miny,maxx,maxy` of the before/after files-read counts [default: the
    /// central 1% of the table's extent].
    #[arg(long, value_name = "MINX,MINY,MAXX,MAXY", allow_hyphen_values = true)]
    pub window: Option<String>,
}

/// `geoberg demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Rows to generate.
    #[arg(long, default_value_t = 4_000_000)]
    pub rows: u64,
    /// Appends (each one commit and one data file).
    #[arg(long, default_value_t = 64)]
    pub files: u64,
    /// Seed of the synthetic data.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Folder for before.svg and after.svg [default: the warehouse].
    #[arg(long, value_name = "DIR")]
    pub svg_dir: Option<PathBuf>,
}

/// `geoberg sql`.
#[derive(Debug, Args)]
pub struct SqlArgs {
    /// The statement; read from --file or stdin when absent. Several statements may be given
    /// separated by `;` at the end of a line.
    pub statement: Option<String>,
    /// Read the statements from this file (`-` for stdin).
    #[arg(short, long, value_name = "FILE", conflicts_with = "statement")]
    pub file: Option<PathBuf>,
    /// Print each statement's run time after its result (`--json` always carries it as
    /// `seconds`).
    #[arg(long)]
    pub timing: bool,
}

/// `geoberg import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The Parquet or GeoParquet file.
    pub file: PathBuf,
    /// Target table `namespace.table`; created from the file's schema when missing.
    #[arg(long)]
    pub table: String,
    /// A binary WKB column to import as geometry; repeat the flag or separate names with
    /// commas (`--geometry-column pickup,dropoff`), and give one column its own SRID with
    /// `COLUMN:SRID` (`--geometry-column dropoff:3857`). Only the named columns are typed
    /// [default: every column the file declares as geometry, GeoParquet's primary column first;
    /// with none, a binary column named `geometry`, `geom`, `wkb_geometry` or `geog`; with none
    /// of those, the file is imported without geometry].
    #[arg(long, value_name = "COLUMN[:SRID]", value_delimiter = ',')]
    pub geometry_column: Vec<String>,
    /// SRID of the geometry values of every geometry column without its own `COLUMN:SRID`
    /// [default: the file's CRS; OGC:CRS84 (4326) when it gives none]. 0 imports a CRS no
    /// column can declare (UTM, EPSG:5070, a custom projection) into geometry(0) and records it
    /// in the table property geoberg.source-crs.<column>.
    #[arg(long)]
    pub srid: Option<i32>,
    /// Rows per data file (the whole import is one commit).
    #[arg(long, default_value_t = 1_000_000)]
    pub rows_per_file: usize,
}

/// `geoberg ingest`.
#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Target table `namespace.table` (it must exist).
    #[arg(long)]
    pub table: String,
    /// The records [default: stdin]: one JSON object per line, or with `--format arrow` an
    /// Arrow IPC stream (or file).
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// How the records come: `json`, one object per line; `arrow`, the record batches of an
    /// Arrow IPC stream (an IPC file is read as the stream it holds), each row a record, with
    /// the geometry column as binary WKB (SRID from the field metadata `srid`) or the
    /// --lon / --lat / --crs-field fields (dotted paths into struct columns).
    #[arg(long, value_enum, default_value_t = crate::ingest::InputFormat::Json)]
    pub format: crate::ingest::InputFormat,
    /// At the end of the file, wait for more input (until Ctrl-C, which commits what is
    /// buffered, or the end of an Arrow IPC stream).
    #[arg(long)]
    pub follow: bool,
    /// Commit after this many records.
    #[arg(long, default_value_t = 100_000)]
    pub batch_rows: usize,
    /// Commit at least this often while records are buffered.
    #[arg(long, default_value_t = 1.0)]
    pub batch_seconds: f64,
    /// The geometry column [default: the first geometry column]; with `--format arrow`, a
    /// binary field of its name is read as the geometry (WKB) instead of --lon / --lat.
    #[arg(long, value_name = "COLUMN")]
    pub geometry_column: Option<String>,
    /// Dotted path of the longitude (x).
    #[arg(long, default_value = "location.lon")]
    pub lon: String,
    /// Dotted path of the latitude (y).
    #[arg(long, default_value = "location.lat")]
    pub lat: String,
    /// Dotted path of each record's CRS; an empty value: every record is in the column's CRS.
    #[arg(long, default_value = "location.crs")]
    pub crs_field: String,
    /// A column read from a field not named after it, `column=dotted.path` (repeatable).
    #[arg(long = "map", value_name = "COLUMN=PATH")]
    pub maps: Vec<String>,
    /// Keep only points inside this box, minx,miny,maxx,maxy (checked first).
    #[arg(long, value_name = "MINX,MINY,MAXX,MAXY", allow_hyphen_values = true)]
    pub envelope: Option<String>,
    /// Then keep only points inside this shape (WKT, in the column's CRS).
    #[arg(long, value_name = "WKT")]
    pub within: Option<String>,
    /// Where rejected records go, one JSON line each: `line`, `reason`, `record` (the record);
    /// Arrow IPC: `record_number` (1-based), `batch` and `row` (0-based), `reason`, `record`.
    #[arg(long, default_value = "geoberg-ingest-rejects.ndjson")]
    pub rejects: PathBuf,
    /// JSON: skip this many lines first: a replay after a crash starts after the last committed
    /// line.
    #[arg(long, default_value_t = 0)]
    pub skip_lines: u64,
    /// Arrow IPC: skip this many records (rows, counted over every batch) first: a replay after
    /// a crash starts after the last committed record.
    #[arg(long, default_value_t = 0)]
    pub skip_records: u64,
}

/// `geoberg inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// `namespace.table`.
    pub table: String,
    /// Geometry column [default: the first one].
    #[arg(long)]
    pub column: Option<String>,
    /// List every data file (path, rows, bytes, bounds).
    #[arg(long)]
    pub files: bool,
}

/// `geoberg audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// `namespace.table`.
    pub table: String,
    /// Geometry column [default: the first one].
    #[arg(long)]
    pub column: Option<String>,
    /// Query window `minx,miny,maxx,maxy` for the pruning assertion (`minx > maxx` crosses the
    /// antimeridian, on a geography column).
    #[arg(long, value_name = "MINX,MINY,MAXX,MAXY", allow_hyphen_values = true)]
    pub window: Option<String>,
    /// Largest share of files the window query may read, in [0, 1].
    #[arg(long, default_value_t = 0.05, requires = "window")]
    pub max_fraction: f64,
}

/// `geoberg layout`.
#[derive(Debug, Args)]
pub struct LayoutArgs {
    /// `namespace.table`.
    pub table: String,
    /// Output SVG file.
    #[arg(long, value_name = "FILE")]
    pub svg: PathBuf,
    /// Geometry column [default: the first one].
    #[arg(long)]
    pub column: Option<String>,
    /// Also draw this query window `minx,miny,maxx,maxy` (`minx > maxx` crosses the
    /// antimeridian and is drawn at both edges).
    #[arg(long, value_name = "MINX,MINY,MAXX,MAXY", allow_hyphen_values = true)]
    pub window: Option<String>,
}

/// `geoberg expire-snapshots`.
#[derive(Debug, Args)]
pub struct ExpireArgs {
    /// `namespace.table`.
    pub table: String,
    /// Expire snapshots older than this: an RFC 3339 time, milliseconds since the epoch, or an
    /// age such as `5d`, `12h`, `30m`, `0s`.
    #[arg(long, default_value = "5d")]
    pub older_than: String,
    /// Always keep this many of the most recent snapshots.
    #[arg(long, default_value_t = 1)]
    pub retain_last: usize,
}

/// `geoberg maintain`.
#[derive(Debug, Args)]
pub struct MaintainArgs {
    /// `namespace.table`.
    pub table: String,
}

/// `geoberg remove-orphans`.
#[derive(Debug, Args)]
pub struct OrphanArgs {
    /// `namespace.table`.
    pub table: String,
    /// Only files older than this are removed (a younger file may belong to a commit in
    /// flight): RFC 3339, epoch milliseconds, or an age such as `3d`.
    #[arg(long, default_value = "3d")]
    pub older_than: String,
    /// List the orphans without deleting them.
    #[arg(long)]
    pub dry_run: bool,
}
