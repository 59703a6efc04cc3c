//! The one error type of the crate.

use std::path::PathBuf;

/// Everything that can go wrong in a table operation.
///
/// Messages name the problem, the values involved and the fix. [`Error::CommitConflict`] is the
/// only retryable kind: reload the table and try the operation again.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Another writer swapped the catalog pointer first; nothing of ours became visible.
    #[error(
        "commit conflict on table {table}: expected current metadata {expected}, but the catalog \
         now points to {found}; another writer committed first. Reload the table and retry \
         (the operation is safe to repeat)"
    )]
    CommitConflict {
        /// `namespace.table`.
        table: String,
        /// The metadata location this writer started from.
        expected: String,
        /// The metadata location the catalog held at commit time (`<none>` if the table is gone).
        found: String,
    },
    /// A namespace or table name that cannot be stored or that would escape the warehouse.
    #[error("invalid name {name:?}: {reason}")]
    InvalidName {
        /// The rejected name.
        name: String,
        /// Why, and what to use instead.
        reason: String,
    },
    /// A table location outside the warehouse or otherwise unusable.
    #[error("invalid location {location:?}: {reason}")]
    InvalidLocation {
        /// The rejected location.
        location: String,
        /// Why, and what to use instead.
        reason: String,
    },
    /// The namespace does not exist.
    #[error("namespace {0:?} does not exist; create it first with create_namespace")]
    NoSuchNamespace(String),
    /// The table does not exist.
    #[error("table {0:?} does not exist; check the name or create it with create_table")]
    NoSuchTable(String),
    /// A table with that name already exists.
    #[error("table {0:?} already exists; load it instead, or drop it first")]
    TableAlreadyExists(String),
    /// A CRS rule was violated (declaration, value SRID, format version) or a CRS or geo type
    /// string is malformed.
    #[error(transparent)]
    Crs(#[from] geoberg_crs::CrsError),
    /// A geometry value could not be summarised (invalid WKB and the like).
    #[error(transparent)]
    GeoStats(#[from] geoberg_geostats::GeostatsError),
    /// A column that the table does not have.
    #[error("table {table} has no column {column:?}; its columns are: {available}")]
    NoSuchColumn {
        /// `namespace.table`.
        table: String,
        /// The name asked for.
        column: String,
        /// The table's columns, comma-separated.
        available: String,
    },
    /// A column whose type does not fit what was asked of it.
    #[error("column {column:?} is {found}, not {expected}")]
    WrongColumnType {
        /// The column.
        column: String,
        /// Its type.
        found: String,
        /// What the operation needs (and how to get it, where there is a way).
        expected: String,
    },
    /// `rewrite_data_files(strategy => 'sort')` without a `sort_order` on a table that has no
    /// `write.sort-order` property.
    #[error(
        "table {table} has no write.sort-order property, so strategy => 'sort' needs a \
         sort_order; pass one (e.g. sort_order => 'bbox_min_x ASC, bbox_min_y ASC', \
         'zorder(bbox_min_x, bbox_min_y)' or 'hilbert(geom, 16)'), or register it: ALTER TABLE \
         {table} SET TBLPROPERTIES ('write.sort-order' = 'bbox_min_x ASC, bbox_min_y ASC')"
    )]
    NoSortOrder {
        /// `namespace.table`.
        table: String,
    },
    /// Something the table holds or asks for that geoberg does not do yet.
    #[error("not supported: {what}; {fix}")]
    Unsupported {
        /// What was asked for or found.
        what: String,
        /// What to do instead.
        fix: String,
    },
    /// A rewrite's tasks failed where a [`crate::RewriteRunner`] ran them (a cluster).
    #[error(
        "the rewrite's tasks failed on {runner}: {reason}; nothing was committed (files that \
         failed tasks wrote are orphans, which `geoberg remove-orphans` lists); {fix}"
    )]
    RewriteRunner {
        /// Where the tasks ran.
        runner: String,
        /// The runner's error.
        reason: String,
        /// What to do.
        fix: String,
    },
    /// A schema that cannot become an Iceberg table schema.
    #[error("invalid schema: {0}")]
    Schema(String),
    /// A schema change (`ALTER TABLE ... ADD / DROP / RENAME COLUMN`) that Iceberg's
    /// schema-evolution rules refuse; nothing was written.
    #[error("cannot {change} in table {table}: {reason}")]
    SchemaChange {
        /// `namespace.table`.
        table: String,
        /// The change, as `add column "c"`.
        change: String,
        /// Why, and what to do instead.
        reason: String,
    },
    /// A table property with a value we cannot use.
    #[error("invalid table property {key}={value:?}: {reason}")]
    InvalidProperty {
        /// Property key.
        key: String,
        /// Property value.
        value: String,
        /// Why, and the accepted values.
        reason: String,
    },
    /// `UNSET TBLPROPERTIES` of a key the table does not have (without `IF EXISTS`).
    #[error(
        "table {table} has no property {key:?}, so it cannot be unset; its properties are: \
         {available}. Check the key, or use UNSET TBLPROPERTIES IF EXISTS to skip missing keys"
    )]
    NoSuchProperty {
        /// `namespace.table`.
        table: String,
        /// The key asked for.
        key: String,
        /// The table's property keys, comma-separated (`<none>` when it has none).
        available: String,
    },
    /// A batch's value of a derived partition column disagrees with the value derived from its
    /// geometry.
    #[error(
        "column {column:?}, row {row}: the batch gives Hilbert cell {given:?} but geometry \
         column {geometry:?} derives {derived:?}; drop the column from the batch and let the \
         append compute it"
    )]
    HilbertCellMismatch {
        /// The derived cell column.
        column: String,
        /// The geometry column it derives from.
        geometry: String,
        /// First mismatching row of the batch.
        row: usize,
        /// The batch's value.
        given: Option<i64>,
        /// The value derived from the geometry's bbox centre.
        derived: Option<i64>,
    },
    /// Data handed to append that does not match the table.
    #[error("invalid data: {0}")]
    InvalidData(String),
    /// A batch column that does not fit its table column.
    #[error("column {column:?}: {reason}")]
    InvalidColumnData {
        /// The table column.
        column: String,
        /// What is wrong, with the values involved, and the fix.
        reason: String,
    },
    /// Planar geometry values written into a geography column (seed 004: there is no implicit
    /// cast from geometry to geography); nothing was written.
    #[error(
        "column {column:?} is {column_type}, but the values written into it are a planar \
         geometry: geoberg does not turn a geometry into a geography by itself, because its \
         edges would change from straight lines to great-circle arcs. Convert the values with \
         ST_GeomToGeography(<geometry>) (same coordinates and CRS, read on the sphere), or build \
         them as geography (ST_GeogFromText, ST_GeogFromWKB, ST_GeogPoint)"
    )]
    GeometryIntoGeography {
        /// The geography column.
        column: String,
        /// Its declared type, `geography(4326)`.
        column_type: String,
    },
    /// Table metadata, a manifest or a data file that is not what the spec says.
    #[error("corrupt or unsupported table file {location}: {reason}")]
    Corrupt {
        /// The file.
        location: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A read or write of the object store failed (network, permissions, a missing file, a
    /// create that found the file already there).
    #[error("storage error on {location}: {source}")]
    Storage {
        /// The file or store.
        location: String,
        /// The store's error.
        source: Box<object_store::Error>,
    },
    /// Filesystem failure.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Failure inside the `iceberg` crate.
    #[error("iceberg: {0}")]
    Iceberg(#[from] iceberg::Error),
    /// Failure of the SQLite catalog database.
    #[error("catalog database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The PostgreSQL catalog could not be reached or a statement failed; nothing of an
    /// unfinished commit became visible (see [`Error::CommitStateUnknown`] for when that is not
    /// known).
    #[error("PostgreSQL catalog {server}: {source}")]
    Postgres {
        /// `user@host:port/database` (never the password).
        server: String,
        /// The client error.
        source: postgres::Error,
    },
    /// The catalog connection broke during a commit and the outcome could not be read back.
    /// Not retryable: repeating the operation could apply it twice.
    #[error(
        "the commit of table {table} (to {metadata_location}) may or may not have happened: \
         {reason}. Do not repeat the operation blindly: reload the table once the catalog is \
         reachable; the commit happened if {metadata_location} is its current metadata or in \
         its metadata log"
    )]
    CommitStateUnknown {
        /// `namespace.table`.
        table: String,
        /// The metadata file the commit would have made current.
        metadata_location: String,
        /// Why the outcome could not be read back.
        reason: String,
    },
    /// Failure writing or reading Parquet.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// A spatial filter the planner rejects (window not finite, in another CRS, ...).
    #[error(transparent)]
    Prune(#[from] geoberg_pruning::PruneError),
    /// A geography value or window the spherical predicates cannot read (invalid WKB, a
    /// distance that is not metres >= 0, ...).
    #[error(transparent)]
    Geography(#[from] geoberg_geography::GeographyError),
    /// Failure in an Arrow kernel.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// A rewrite option, curve or plan was rejected, or executing the rewrite failed (its files
    /// are already removed).
    #[error(transparent)]
    Rewrite(Box<geoberg_rewrite::RewriteError>),
    /// A statement or WHERE condition that does not parse.
    #[error(transparent)]
    Sql(#[from] geoberg_sql::SqlError),
    /// A file that cannot be imported as it is (its geometry column, its metadata); nothing
    /// was written.
    #[error("cannot import {location}: {reason}")]
    Import {
        /// The file.
        location: String,
        /// What is wrong, and the way out.
        reason: String,
    },
    /// A file whose geometry CRS no column can declare; nothing was written.
    #[error(
        "cannot import {location}: its column {column:?} is in {file_crs}. {source}. Or import \
         the values as they are: --srid 0 (ImportOptions::srid(0)) writes them unchanged into \
         geometry(0) and records the file's CRS in the table property \
         geoberg.source-crs.{column}"
    )]
    ImportCrs {
        /// The file.
        location: String,
        /// The geometry column.
        column: String,
        /// The CRS the file declares, described.
        file_crs: String,
        /// The declaration rule it breaks (`ST_INVALID_SRID_VALUE`).
        source: Box<geoberg_crs::CrsError>,
    },
    /// A geometry column whose Parquet CRS and GeoParquet CRS disagree; nothing was written.
    #[error(
        "cannot import {location}: column {column:?} has two CRSs that disagree: its Parquet \
         logical type says {parquet}, its GeoParquet metadata says {geoparquet}. geoberg does not \
         guess which is right: pass --srid (ImportOptions::srid) with the SRID that is (it must \
         agree with both, as 4326 does with OGC:CRS84 and EPSG:4326 for longitude/latitude \
         data), or --srid 0 to keep the values in geometry(0), or fix the file's metadata"
    )]
    ImportCrsConflict {
        /// The file.
        location: String,
        /// The geometry column.
        column: String,
        /// The Parquet logical type's CRS, described.
        parquet: String,
        /// The GeoParquet metadata's CRS, described.
        geoparquet: String,
    },
    /// An import that stopped after it started writing; `state` says what is true now.
    #[error("import of {location} into {table} failed: {source}. {state}")]
    ImportFailed {
        /// The file.
        location: String,
        /// `namespace.table`.
        table: String,
        /// What was committed, removed or kept, and whether running it again is safe.
        state: String,
        /// Why it stopped.
        source: Box<Error>,
    },
    /// A rewrite whose inputs changed underneath it: committing would lose or resurrect rows.
    /// Not retryable as is; run the rewrite again on the reloaded table.
    #[error(
        "cannot commit the rewrite of table {table}: {reason}. Nothing was committed and the \
         rewrite's files were removed; reload the table and run the rewrite again"
    )]
    RewriteConflict {
        /// `namespace.table`.
        table: String,
        /// What changed, naming the file(s).
        reason: String,
    },
    /// `upgrade_geometry`: values whose SRID is not the one the new column declares (seed 004:
    /// one CRS per column). Nothing was written.
    #[error(
        "cannot upgrade {table}.{column} to geometry({srid}): {mismatched} of {values} values \
         carry another SRID ({by_srid}); nothing was copied. Where the coordinates already are \
         SRID {srid} and only the label is wrong, relabel them with ST_SetSRID(geom, {srid}) \
         (coordinates unchanged); where they are in another CRS, reproject them with \
         ST_Transform(geom, 'EPSG:<their srid>', 'EPSG:{srid}'); then run upgrade_geometry again"
    )]
    UpgradeSridMismatch {
        /// The source table, `namespace.table`.
        table: String,
        /// The geometry column.
        column: String,
        /// The SRID asked for.
        srid: i32,
        /// Non-null values read.
        values: u64,
        /// Of those, values with another SRID.
        mismatched: u64,
        /// Counts by SRID, `"3 with SRID 3857, 1 with SRID 0"`.
        by_srid: String,
    },
    /// A geometry value that is not WKB, found while reading a table for a copy.
    #[error(
        "cannot upgrade {table}.{column}: the value at position {position} of data file {file} \
         is not WKB ({reason}); fix the row (UPDATE ... SET {column} = ...) or delete it, then \
         run the upgrade again"
    )]
    MalformedGeometry {
        /// The source table, `namespace.table`.
        table: String,
        /// The geometry column.
        column: String,
        /// The data file holding the value.
        file: String,
        /// The row's position in that file.
        position: i64,
        /// What the WKB reader found.
        reason: String,
    },
}

impl From<geoberg_rewrite::RewriteError> for Error {
    fn from(e: geoberg_rewrite::RewriteError) -> Self {
        Error::Rewrite(Box::new(e))
    }
}

impl Error {
    /// True for errors that go away by reloading the table and repeating the operation.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::CommitConflict { .. })
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn storage(location: impl Into<String>, source: object_store::Error) -> Self {
        Error::Storage {
            location: location.into(),
            source: Box::new(source),
        }
    }

    pub(crate) fn storage_message(location: impl Into<String>, message: &str) -> Self {
        let location = location.into();
        Error::Storage {
            source: Box::new(object_store::Error::Generic {
                store: "geoberg",
                source: message.to_string().into(),
            }),
            location,
        }
    }

    /// True for a storage error saying the file does not exist.
    pub fn is_not_found(&self) -> bool {
        match self {
            Error::Storage { source, .. } => {
                matches!(**source, object_store::Error::NotFound { .. })
            }
            Error::Io { source, .. } => source.kind() == std::io::ErrorKind::NotFound,
            _ => false,
        }
    }

    pub(crate) fn corrupt(location: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Corrupt {
            location: location.into(),
            reason: reason.into(),
        }
    }
}

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
