//! Importing a Parquet file that another tool wrote into a table, in one commit.
//!
//! A file's geometry may be Parquet GEOMETRY or GEOGRAPHY columns (Arrow C++, DuckDB,
//! DataFusion), WKB columns described by GeoParquet 1.0/1.1 metadata (GeoPandas, GDAL, Sedona),
//! or plain binary WKB columns named by [`ImportOptions::geometry_columns`]. Every column the
//! file declares is typed by default (see [`ImportSource::open`]), each with its own type from
//! the file's CRS; a file without any geometry is imported as it is. Every other column keeps
//! its type, nested ones included (a GeoParquet 1.1 `bbox` covering struct becomes a struct
//! column and that geometry column's bbox columns). Into an existing table, each typed column
//! must have the table column's type, except that plain WKB (no logical type, no GeoParquet
//! metadata) goes into a geography column as seed 004 takes a value with no SRID: under the
//! column's CRS.
//!
//! An import writes all its data files, then commits them as one append: an import that
//! fails leaves the table as it was (and a table it created is dropped again), so it can be
//! run again; only a commit whose outcome is unknown keeps its files, and the error says so.
//! The source file's row groups are kept (each becomes a row group of a data file), so their
//! geo statistics carry over.
//!
//! ```no_run
//! use std::sync::Arc;
//! use geoberg_table::{Catalog, ImportOptions, SqliteCatalog, TableIdent, import_parquet};
//!
//! # fn main() -> geoberg_table::Result<()> {
//! let catalog = Arc::new(SqliteCatalog::open("warehouse/catalog.db", "geoberg", "warehouse")?);
//! let options = ImportOptions::default()
//!     .geometry_column("pickup")
//!     .geometry_column("dropoff")
//!     .srid(4326);
//! let report = import_parquet(catalog, &TableIdent::new("geo", "trips")?, "trips.parquet", &options)?;
//! for (column, column_type) in &report.geometry_columns {
//!     println!("{column} is {column_type}");
//! }
//! # Ok(())
//! # }
//! ```

mod column_choice;
mod geoparquet;
mod source_crs;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType as ArrowType, Field, Schema};
use geoberg_crs::{ColumnType, EdgeAlgorithm};
use iceberg::spec::DataFile;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::basic::LogicalType;

use self::column_choice::{ColumnChoice, Declarations, GeoKind};
use self::geoparquet::GeoParquet;
use self::source_crs::SourceCrs;
use crate::bbox_columns::{BBOX_COLUMNS_PROPERTY_PREFIX, bbox_columns_property_value};
use crate::catalog::Catalog;
use crate::create::CreateTable;
use crate::error::{Error, Result};
use crate::ident::TableIdent;
use crate::properties::SOURCE_CRS_PROPERTY_PREFIX;
use crate::schema::{Column, DataType};
use crate::snapshot::CommitFailure;
use crate::storage::{Storage, StorageFile, normalize_location};
use crate::table::Table;
use crate::write::{SRID_FIELD_METADATA, write_data_files_keeping_row_groups};
use geoberg_geostats::BBoxColumnNames;

/// Names tried for the geometry column of a file that declares none (no GeoParquet metadata,
/// no GEOMETRY or GEOGRAPHY logical type).
const CONVENTIONAL_NAMES: [&str; 4] = ["geometry", "geom", "wkb_geometry", "geog"];

/// How to import a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    /// The binary WKB columns to import as geometry, in this order; the file's other columns
    /// keep their types (a geometry column it declares stays binary WKB, with a note).
    /// Empty (the default): every column the file declares as geometry (the GeoParquet primary
    /// column first, then the other GeoParquet columns and the GEOMETRY or GEOGRAPHY columns in
    /// file order); with none declared, the first binary column named `geometry`, `geom`,
    /// `wkb_geometry` or `geog`; with none of those, no geometry column (a note says so).
    pub geometry_columns: Vec<String>,
    /// The SRID of every geometry column's values without its own in
    /// [`ImportOptions::column_srids`], overriding the file: 0 imports any CRS into
    /// `geometry(0)` (coordinates unchanged, the file's CRS recorded in
    /// `geoberg.source-crs.<column>`); another SRID must agree with the file's CRS (it settles
    /// a file whose two CRS declarations disagree, or labels one whose CRS is unknown).
    pub srid: Option<i32>,
    /// SRIDs of single geometry columns, by column name, each as [`ImportOptions::srid`] is
    /// for all; every name must be a column the import types as geometry.
    pub column_srids: BTreeMap<String, i32>,
    /// Rows per data file (whole source row groups are kept together up to this count).
    pub rows_per_file: usize,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            geometry_columns: Vec::new(),
            srid: None,
            column_srids: BTreeMap::new(),
            rows_per_file: 1_000_000,
        }
    }
}

impl ImportOptions {
    /// Adds a binary WKB column to import as geometry (see
    /// [`ImportOptions::geometry_columns`]); naming one again changes nothing.
    pub fn geometry_column(mut self, column: impl Into<String>) -> Self {
        let column = column.into();
        if !self.geometry_columns.contains(&column) {
            self.geometry_columns.push(column);
        }
        self
    }

    /// Sets the SRID of every geometry column's values (see [`ImportOptions::srid`]).
    pub fn srid(mut self, srid: i32) -> Self {
        self.srid = Some(srid);
        self
    }

    /// Sets the SRID of one geometry column's values (see [`ImportOptions::column_srids`]).
    pub fn column_srid(mut self, column: impl Into<String>, srid: i32) -> Self {
        self.column_srids.insert(column.into(), srid);
        self
    }

    /// Sets the rows per data file.
    pub fn rows_per_file(mut self, rows: usize) -> Self {
        self.rows_per_file = rows;
        self
    }
}

/// What an import did.
#[derive(Debug, Clone)]
pub struct ImportReport {
    /// The table after the import's commit.
    pub table: Table,
    /// Whether the import created the table.
    pub created: bool,
    /// Rows imported.
    pub rows: u64,
    /// Data files written.
    pub data_files: usize,
    /// Bytes of Parquet written.
    pub bytes: u64,
    /// The columns imported as geometry or geography, with their type in the table, in the
    /// order of [`ImportSource::geometry_columns`]; empty for a file imported without geometry.
    pub geometry_columns: Vec<(String, ColumnType)>,
    /// Decisions worth telling the user (an unknown CRS imported as `geometry(0)`, the file's
    /// CRS recorded in a property, a file imported without geometry, ...).
    pub notes: Vec<String>,
}

/// A file opened for import: its footer read, its geometry columns and the table it becomes
/// decided, nothing written yet.
#[derive(Debug, Clone)]
pub struct ImportSource {
    location: String,
    file: StorageFile,
    metadata: ArrowReaderMetadata,
    typed: Vec<TypedColumn>,
    create: CreateTable,
    rows_per_file: usize,
    notes: Vec<String>,
}

/// One column the import types as geometry or geography.
#[derive(Debug, Clone)]
struct TypedColumn {
    name: String,
    choice: ColumnChoice,
    /// The file declares nothing about the column (no GEOMETRY or GEOGRAPHY logical type, no
    /// GeoParquet metadata): plain WKB, which an existing geography column takes as its own.
    plain_wkb: bool,
    /// Its GeoParquet 1.1 `bbox` covering, when the file has every field it names.
    bbox_columns: Option<BBoxColumnNames>,
}

/// What the file declares: its key-value metadata, GeoParquet metadata and GEOMETRY or
/// GEOGRAPHY columns.
struct FileDeclarations<'a> {
    location: &'a str,
    schema: &'a Schema,
    kv: HashMap<String, String>,
    geo: Option<GeoParquet>,
    parquet_geo: Vec<(String, LogicalType)>,
}

/// Imports the Parquet file at `location` (a path or URI, read through the catalog's storage)
/// into table `ident`, creating the table (and its namespace) from the file's schema when it
/// does not exist. One commit; see the [module docs](self).
pub fn import_parquet(
    catalog: Arc<dyn Catalog>,
    ident: &TableIdent,
    location: &str,
    options: &ImportOptions,
) -> Result<ImportReport> {
    ImportSource::open(catalog.storage(), location, options)?.import(catalog, ident)
}

impl ImportSource {
    /// Reads the footer of the file at `location` and decides what it becomes: its geometry
    /// columns (see [`ImportOptions::geometry_columns`]), each one's type (an omitted CRS is
    /// OGC:CRS84 → `geometry(4326)`, EPSG:3857 → `geometry(3857)`, geography stays geography,
    /// GeoParquet's unknown CRS → `geometry(0)`; a CRS no column can declare, and a Parquet CRS
    /// that contradicts the GeoParquet one, are refused naming the way out), and the table's
    /// other columns. Fails, writing nothing, on a file that cannot be imported: a named
    /// column it lacks or that is not binary WKB, GeoArrow-native coordinates (not WKB), a
    /// column type no table holds, metadata that does not parse, an SRID for a column that is
    /// not imported as geometry.
    pub fn open(
        storage: &Storage,
        location: &str,
        options: &ImportOptions,
    ) -> Result<ImportSource> {
        let location = normalize_location(location)?;
        let fail = |reason: String| Error::Import {
            location: location.clone(),
            reason,
        };
        if options.rows_per_file == 0 {
            return Err(fail(
                "rows per file must be at least 1, e.g. 1000000".into(),
            ));
        }
        let file = StorageFile::open(storage, &location)?;
        let metadata =
            ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()).map_err(|e| {
                fail(format!(
                    "it is not a Parquet file this reader can read ({e})"
                ))
            })?;
        let kv: HashMap<String, String> = metadata
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .into_iter()
            .flatten()
            .filter_map(|e| Some((e.key.clone(), e.value.clone()?)))
            .collect();
        let geo = kv
            .get("geo")
            .map(|t| GeoParquet::parse(t))
            .transpose()
            .map_err(&fail)?;
        let schema = metadata.schema().clone();
        let file_decl = FileDeclarations {
            location: &location,
            schema: &schema,
            kv,
            parquet_geo: parquet_geo_columns(&metadata),
            geo,
        };
        let mut notes = Vec::new();

        let names = file_decl.columns_to_type(options, &mut notes);
        if let Some(s) = options.srid
            && names.is_empty()
        {
            return Err(fail(format!(
                "--srid {s} (ImportOptions::srid) is for geometry columns, but the import has \
                 none; name the WKB columns with --geometry-column (ImportOptions::\
                 geometry_column), or drop --srid"
            )));
        }
        if let Some((c, s)) = options
            .column_srids
            .iter()
            .find(|(c, _)| !names.contains(c))
        {
            return Err(fail(format!(
                "an SRID ({s}) is given for column {c:?}, which the import does not type as \
                 geometry (it types {}); name the column with --geometry-column {c}:{s} \
                 (ImportOptions::geometry_column and column_srid)",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )));
        }
        let mut typed = Vec::with_capacity(names.len());
        for name in &names {
            let srid = options.column_srids.get(name).copied().or(options.srid);
            let named = options.geometry_columns.contains(name);
            let column = file_decl.type_column(name, named, srid, &mut notes)?;
            notes.extend(column.choice.notes.iter().cloned());
            typed.push(column);
        }

        // The other columns keep their types; a declared geometry column not typed stays binary.
        let mut columns = Vec::with_capacity(schema.fields().len());
        for f in schema.fields() {
            let data_type = if let Some(t) = typed.iter().find(|t| t.name == *f.name()) {
                DataType::Geo(t.choice.column_type.clone())
            } else {
                if file_decl.declares(f.name()) {
                    notes.push(format!(
                        "column {:?} also holds geometry; it is imported as binary WKB (add it \
                         with --geometry-column to type it)",
                        f.name()
                    ));
                }
                crate::schema::data_type_from_arrow(f.data_type()).ok_or_else(|| {
                    Error::Unsupported {
                        what: format!(
                            "importing {location}: column {:?} of Arrow type {}",
                            f.name(),
                            f.data_type()
                        ),
                        fix: "geoberg tables hold every Iceberg type (boolean, int, long, float, \
                          double, decimal, string, uuid, binary, fixed, date, time, timestamps, \
                          structs, lists, maps), not this one; cast or drop the column first"
                            .into(),
                    }
                })?
            };
            let c = Column::new(f.name(), data_type);
            columns.push(if f.is_nullable() { c } else { c.required() });
        }
        let mut create = CreateTable::new(columns);
        for t in &typed {
            if let Some(crs) = &t.choice.source_crs {
                create = create.property(format!("{SOURCE_CRS_PROPERTY_PREFIX}{}", t.name), crs);
            }
            if let Some(names) = &t.bbox_columns {
                create = create.property(
                    format!("{BBOX_COLUMNS_PROPERTY_PREFIX}{}", t.name),
                    bbox_columns_property_value(names),
                );
            }
        }
        Ok(ImportSource {
            location,
            file,
            metadata,
            typed,
            create,
            rows_per_file: options.rows_per_file,
            notes,
        })
    }

    /// The file's location, normalised.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The columns imported as geometry or geography, with their type in a new table (an
    /// existing geography column taking plain WKB keeps its own type); empty for a file
    /// imported without geometry.
    pub fn geometry_columns(&self) -> Vec<(String, ColumnType)> {
        self.typed
            .iter()
            .map(|t| (t.name.clone(), t.choice.column_type.clone()))
            .collect()
    }

    /// Rows in the file.
    pub fn rows(&self) -> u64 {
        self.metadata.metadata().file_metadata().num_rows().max(0) as u64
    }

    /// The table a new import creates.
    pub fn create_table(&self) -> &CreateTable {
        &self.create
    }

    /// Decisions worth telling the user.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Imports into `ident` (created, with its namespace, when missing): writes every data
    /// file, then commits once.
    pub fn import(&self, catalog: Arc<dyn Catalog>, ident: &TableIdent) -> Result<ImportReport> {
        self.import_with_progress(catalog, ident, &|_| {})
    }

    /// [`ImportSource::import`], calling `progress` with the rows written so far.
    pub fn import_with_progress(
        &self,
        catalog: Arc<dyn Catalog>,
        ident: &TableIdent,
        progress: &dyn Fn(u64),
    ) -> Result<ImportReport> {
        let existing = catalog.metadata_location(ident)?.is_some();
        let mut notes = self.notes.clone();
        let table = if existing {
            let table = Table::load(catalog.clone(), ident)?;
            self.check_compatible(&table)?;
            for t in self.typed.iter().filter(|t| t.choice.source_crs.is_some()) {
                notes.push(format!(
                    "the existing table keeps its properties: the file's CRS of {:?} is not \
                     recorded (set {SOURCE_CRS_PROPERTY_PREFIX}{} yourself if it should be)",
                    t.name, t.name
                ));
            }
            table
        } else {
            let namespace = ident.namespace_str();
            if !catalog.namespace_exists(&namespace)? {
                catalog.create_namespace(&namespace)?;
            }
            self.create.clone().create(catalog.clone(), ident)?
        };
        let failed = |source: Error, state: String| Error::ImportFailed {
            location: self.location.clone(),
            table: ident.to_string(),
            state,
            source: Box::new(source),
        };
        let dropped = if existing {
            ""
        } else {
            " and the table it created was dropped"
        };
        let mut files = Vec::new();
        if let Err(e) = self.write_files(&table, progress, &mut files) {
            for f in &files {
                let _ = table.storage().delete(f.file_path());
            }
            if !existing {
                drop_new_table(&table);
            }
            return Err(failed(
                e,
                format!(
                    "Nothing was committed; the {} data files it wrote were removed{dropped}: \
                     running the import again is safe",
                    files.len()
                ),
            ));
        }
        let rows: u64 = files.iter().map(DataFile::record_count).sum();
        let bytes: u64 = files.iter().map(DataFile::file_size_in_bytes).sum();
        let data_files = files.len();
        let table = if files.is_empty() {
            notes.push("the file has no rows: nothing was committed".into());
            table
        } else {
            match table.commit_written_files(files) {
                Ok(t) => t,
                Err(CommitFailure::Definite(e)) => {
                    if !existing {
                        drop_new_table(&table);
                    }
                    return Err(failed(
                        e,
                        format!(
                            "Nothing was committed; the {data_files} data files it wrote were \
                             removed{dropped}: running the import again is safe"
                        ),
                    ));
                }
                Err(CommitFailure::Unknown(e)) => {
                    return Err(failed(
                        e,
                        format!(
                            "Whether its one commit happened is unknown, so its {data_files} \
                             data files were kept: reload the table; if its current snapshot \
                             is an append of {rows} rows, the import is done; otherwise remove \
                             orphan files and run it again (running it again without looking \
                             could import the rows twice)"
                        ),
                    ));
                }
            }
        };
        // An existing column's own type (plain WKB into a geography column is geography).
        let geometry_columns = self
            .typed
            .iter()
            .map(|t| {
                let column_type = table
                    .geo_column(&t.name)
                    .map(|g| g.column_type.clone())
                    .unwrap_or_else(|_| t.choice.column_type.clone());
                (t.name.clone(), column_type)
            })
            .collect();
        Ok(ImportReport {
            table,
            created: !existing,
            rows,
            data_files,
            bytes,
            geometry_columns,
            notes,
        })
    }

    /// An existing table's geometry columns must have the file's types, and a column the table
    /// types must not arrive as untyped binary.
    fn check_compatible(&self, table: &Table) -> Result<()> {
        for t in &self.typed {
            self.check_column(table, t)?;
        }
        let schema = self.metadata.schema();
        for g in table.geo_columns() {
            let untyped_binary = schema.field_with_name(&g.name).is_ok_and(is_binary)
                && !self.typed.iter().any(|t| t.name == g.name);
            if untyped_binary && g.column_type != ColumnType::GeometryWithoutCrs {
                let typed: Vec<&str> = self.typed.iter().map(|t| t.name.as_str()).collect();
                return Err(Error::Import {
                    location: self.location.clone(),
                    reason: format!(
                        "table {} stores {:?} as {}, but this import reads the file's {:?} as \
                         plain binary ({}); name it with --geometry-column {} \
                         (ImportOptions::geometry_column)",
                        table.ident(),
                        g.name,
                        DataType::Geo(g.column_type.clone()),
                        g.name,
                        if typed.is_empty() {
                            "it types no geometry column".to_string()
                        } else {
                            format!("it types only {}", typed.join(", "))
                        },
                        typed
                            .iter()
                            .copied()
                            .chain([g.name.as_str()])
                            .collect::<Vec<_>>()
                            .join(","),
                    ),
                });
            }
        }
        Ok(())
    }

    /// An existing table's column must have the type the file gives `column`.
    fn check_column(&self, table: &Table, column: &TypedColumn) -> Result<()> {
        let fail = |reason: String| Error::Import {
            location: self.location.clone(),
            reason,
        };
        let name = &column.name;
        let geo = table.geo_column(name).map_err(|e| {
            fail(format!(
                "table {} cannot take its geometry column {name:?}: {e}",
                table.ident(),
            ))
        })?;
        let file = &column.choice.column_type;
        let same = match (&geo.column_type, file) {
            (ColumnType::GeometryWithoutCrs, _) => true,
            (ColumnType::Geometry { crs: a }, ColumnType::Geometry { crs: b }) => a.is_same_as(b),
            (
                ColumnType::Geography { crs: a, edges: x },
                ColumnType::Geography { crs: b, edges: y },
            ) => a.is_same_as(b) && x == y,
            // Seed 004: a geography column takes values with no SRID under its CRS. Plain WKB
            // declares neither edges nor CRS, so it is read as the column's, unless --srid
            // names another CRS.
            (ColumnType::Geography { crs: a, .. }, ColumnType::Geometry { crs: b })
                if column.plain_wkb =>
            {
                a.is_same_as(b)
            }
            _ => false,
        };
        if !same
            && matches!(geo.column_type, ColumnType::Geography { .. })
            && matches!(file, ColumnType::Geometry { .. })
        {
            let (what, fix) = if column.plain_wkb {
                (
                    format!("--srid gives its plain WKB {}", DataType::Geo(file.clone())),
                    "drop --srid (plain WKB is read as the column's CRS), or reproject the \
                     values to longitude and latitude first",
                )
            } else {
                (
                    format!("the file declares planar {}", DataType::Geo(file.clone())),
                    "import the file into a geometry table and copy its rows over with \
                     ST_GeomToGeography(<column>), or write the file with a GEOGRAPHY logical \
                     type",
                )
            };
            return Err(fail(format!(
                "table {} stores {name:?} as {}, but {what}: a geometry does not become a \
                 geography by itself (its edges would change to great-circle arcs); {fix}",
                table.ident(),
                DataType::Geo(geo.column_type.clone()),
            )));
        }
        if !same {
            return Err(fail(format!(
                "table {} stores {name:?} as {}, but the file's values are {}: import into a \
                 new table, or reproject the file first",
                table.ident(),
                DataType::Geo(geo.column_type.clone()),
                DataType::Geo(file.clone()),
            )));
        }
        Ok(())
    }

    /// Writes the data files into `written`: whole source row groups, `rows_per_file` rows
    /// per file (a row group larger than that is split). On failure `written` holds the files
    /// written so far.
    fn write_files(
        &self,
        table: &Table,
        progress: &dyn Fn(u64),
        written: &mut Vec<DataFile>,
    ) -> Result<()> {
        let mut pending: Vec<RecordBatch> = Vec::new();
        let mut pending_rows = 0usize;
        let mut done = 0u64;
        let groups = self.metadata.metadata().num_row_groups();
        let schema = labelled(self.metadata.schema(), &self.typed);
        for g in 0..groups {
            let mut rest = self.read_row_group(g, &schema)?;
            while rest.num_rows() > 0 {
                let room = self.rows_per_file - pending_rows;
                // Keep the group whole in the next file unless it alone exceeds a file.
                if rest.num_rows() > room && pending_rows > 0 {
                    flush(table, &mut pending, &mut pending_rows, written)?;
                    continue;
                }
                let take = rest.num_rows().min(room);
                pending.push(rest.slice(0, take));
                pending_rows += take;
                rest = rest.slice(take, rest.num_rows() - take);
                if pending_rows == self.rows_per_file {
                    flush(table, &mut pending, &mut pending_rows, written)?;
                }
            }
            done += self.metadata.metadata().row_group(g).num_rows().max(0) as u64;
            progress(done);
        }
        flush(table, &mut pending, &mut pending_rows, written)
    }

    /// Row group `g` as one batch of `schema` (the file's, its geometry labelled).
    fn read_row_group(&self, g: usize, schema: &Arc<Schema>) -> Result<RecordBatch> {
        let rows = self.metadata.metadata().row_group(g).num_rows().max(0) as usize;
        let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(
            self.file.clone(),
            self.metadata.clone(),
        )
        .with_row_groups(vec![g])
        .with_batch_size(rows.clamp(1, 1 << 20))
        .build()?;
        let batches = reader.collect::<std::result::Result<Vec<_>, _>>()?;
        let batches = batches
            .iter()
            .map(|b| RecordBatch::try_new(schema.clone(), b.columns().to_vec()))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(arrow_select::concat::concat_batches(schema, &batches)?)
    }
}

impl FileDeclarations<'_> {
    /// Whether the file declares `column` as geometry (GeoParquet metadata or a logical type).
    fn declares(&self, column: &str) -> bool {
        self.parquet_geo.iter().any(|(n, _)| n == column)
            || self
                .geo
                .as_ref()
                .is_some_and(|g| g.columns.contains_key(column))
    }

    /// The columns to type as geometry (see [`ImportOptions::geometry_columns`]).
    fn columns_to_type(&self, options: &ImportOptions, notes: &mut Vec<String>) -> Vec<String> {
        if !options.geometry_columns.is_empty() {
            let mut names: Vec<String> = Vec::new();
            for c in &options.geometry_columns {
                if !names.contains(c) {
                    names.push(c.clone());
                }
            }
            return names;
        }
        // Declared: the primary column first, then the others in file order (a GeoParquet
        // column the file lacks last, for `type_column` to refuse).
        let mut declared: Vec<String> = Vec::new();
        let primary = self.geo.as_ref().and_then(|g| g.primary_column.clone());
        declared.extend(primary);
        for f in self.schema.fields() {
            if self.declares(f.name()) && !declared.contains(f.name()) {
                declared.push(f.name().clone());
            }
        }
        for c in self.geo.iter().flat_map(|g| g.columns.keys()) {
            if !declared.contains(c) {
                declared.push(c.clone());
            }
        }
        if !declared.is_empty() {
            return declared;
        }
        let conventional: Vec<&Field> = CONVENTIONAL_NAMES
            .iter()
            .filter_map(|n| self.schema.field_with_name(n).ok())
            .collect();
        if let Some(f) = conventional.iter().find(|f| is_binary(f)) {
            return vec![f.name().clone()];
        }
        let mut note = format!(
            "the file has no geometry column (no GeoParquet metadata, no GEOMETRY or GEOGRAPHY \
             column, no binary column named {})",
            CONVENTIONAL_NAMES.join(", ")
        );
        for f in conventional {
            note.push_str(&format!("; its {:?} is {}", f.name(), f.data_type()));
        }
        note.push_str(
            ": it is imported without geometry, every column keeping its type; to type a binary \
             WKB column, name it with --geometry-column (ImportOptions::geometry_column)",
        );
        notes.push(note);
        Vec::new()
    }

    /// Decides the type of geometry column `column` (`named`: by the user) under `srid`.
    fn type_column(
        &self,
        column: &str,
        named: bool,
        srid: Option<i32>,
        notes: &mut Vec<String>,
    ) -> Result<TypedColumn> {
        let location = self.location;
        let fail = |reason: String| Error::Import {
            location: location.to_string(),
            reason,
        };
        let schema = self.schema;
        let field = schema.field_with_name(column).map_err(|_| {
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            let names = names.join(", ");
            fail(if named {
                format!("it has no column {column:?}; its columns are {names}")
            } else {
                format!(
                    "its GeoParquet metadata names column {column:?}, which it lacks; its \
                     columns are {names}: name the geometry columns to import with \
                     --geometry-column (ImportOptions::geometry_column)"
                )
            })
        })?;
        let geo_column = self.geo.as_ref().and_then(|g| g.columns.get(column));
        if let Some(c) = geo_column
            && !c.encoding.eq_ignore_ascii_case("wkb")
        {
            return Err(Error::Unsupported {
                what: format!(
                    "importing {location}: its column {column:?} has GeoParquet encoding {:?} \
                     (GeoArrow native coordinates, not WKB)",
                    c.encoding
                ),
                fix: "geoberg imports WKB geometry; write the file with WKB encoding \
                      (GeoPandas: to_parquet(..., geometry_encoding='WKB'); GDAL: -lco \
                      GEOMETRY_ENCODING=WKB; geoarrow-data: the *_geo.parquet files), or name \
                      only its WKB columns with --geometry-column"
                    .into(),
            });
        }
        if !is_binary(field) {
            return Err(fail(format!(
                "its column {column:?} is {}, not binary WKB; name the WKB columns with \
                 --geometry-column (GeoArrow native encodings are not imported)",
                field.data_type()
            )));
        }
        let logical = self
            .parquet_geo
            .iter()
            .find(|(n, _)| n == column)
            .map(|(_, lt)| lt.clone());
        let (kind, parquet_crs) = match &logical {
            Some(LogicalType::Geography { crs, algorithm }) => {
                let edges = match algorithm {
                    None => EdgeAlgorithm::Spherical,
                    Some(a) => a.to_string().to_ascii_lowercase().parse().map_err(|_| {
                        fail(format!(
                            "column {column:?} has the edge algorithm {a}, which geoberg does not \
                             know"
                        ))
                    })?,
                };
                (GeoKind::Geography(edges), Some(crs.clone()))
            }
            Some(LogicalType::Geometry { crs }) => (GeoKind::Geometry, Some(crs.clone())),
            _ if geo_column.is_some_and(|c| c.spherical) => {
                (GeoKind::Geography(EdgeAlgorithm::Spherical), None)
            }
            _ => (GeoKind::Geometry, None),
        };
        let parquet_crs = parquet_crs
            .map(|c| SourceCrs::from_parquet(c.as_deref(), &self.kv))
            .transpose()
            .map_err(|e| fail(format!("column {column:?}: {e}")))?;
        let choice = Declarations {
            location,
            column,
            kind,
            parquet: parquet_crs,
            geoparquet: geo_column.map(|c| c.crs.clone()),
            srid,
        }
        .choose()?;
        let mut bbox_columns = None;
        if let Some(paths) = geo_column.and_then(|c| c.bbox_covering.clone()) {
            let names = paths.map(|p| p.join("."));
            match names.iter().find(|n| !arrow_path_exists(schema, n)) {
                None => {
                    let [min_x, min_y, max_x, max_y] = names;
                    bbox_columns = Some(BBoxColumnNames {
                        min_x,
                        min_y,
                        max_x,
                        max_y,
                    });
                }
                Some(n) => notes.push(format!(
                    "the GeoParquet covering of {column:?} names {n:?}, which the file lacks; \
                     it is ignored"
                )),
            }
        }
        Ok(TypedColumn {
            name: column.to_string(),
            choice,
            plain_wkb: logical.is_none() && geo_column.is_none(),
            bbox_columns,
        })
    }
}

/// Whether a field holds binary values (WKB, when it holds geometry).
fn is_binary(field: &Field) -> bool {
    matches!(
        field.data_type(),
        ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView
    )
}

/// Writes the pending batches as data files (each batch a row group).
fn flush(
    table: &Table,
    pending: &mut Vec<RecordBatch>,
    pending_rows: &mut usize,
    written: &mut Vec<DataFile>,
) -> Result<()> {
    if pending.is_empty() {
        return Ok(());
    }
    written.extend(write_data_files_keeping_row_groups(table, pending)?);
    pending.clear();
    *pending_rows = 0;
    Ok(())
}

/// `schema` with each typed column's SRID on its field, so that the append checks every value's
/// SRID (an EWKB SRID that contradicts it is refused). The file's own extension type goes: the
/// import has read it into the column's type already (and the Parquet reader writes a
/// GEOGRAPHY column without an explicit algorithm as it writes a GEOMETRY one).
fn labelled(schema: &Schema, typed: &[TypedColumn]) -> Arc<Schema> {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let f = f.as_ref().clone();
            match typed.iter().find(|t| t.name == *f.name()) {
                Some(t) => {
                    let mut meta = f.metadata().clone();
                    meta.remove("ARROW:extension:name");
                    meta.remove("ARROW:extension:metadata");
                    meta.insert(SRID_FIELD_METADATA.to_string(), t.choice.srid.to_string());
                    f.with_metadata(meta)
                }
                None => f,
            }
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// Top-level columns with the GEOMETRY or GEOGRAPHY logical type, with it.
fn parquet_geo_columns(metadata: &ArrowReaderMetadata) -> Vec<(String, LogicalType)> {
    metadata
        .metadata()
        .file_metadata()
        .schema_descr()
        .root_schema()
        .get_fields()
        .iter()
        .filter_map(|f| match f.get_basic_info().logical_type_ref() {
            Some(lt @ (LogicalType::Geometry { .. } | LogicalType::Geography { .. })) => {
                Some((f.name().to_string(), lt.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Whether a dotted path names a field through structs of `schema`.
fn arrow_path_exists(schema: &Schema, path: &str) -> bool {
    let mut parts = path.split('.');
    let Some(first) = parts.next() else {
        return false;
    };
    let Ok(mut field) = schema.field_with_name(first) else {
        return false;
    };
    for part in parts {
        let ArrowType::Struct(children) = field.data_type() else {
            return false;
        };
        match children.iter().find(|c| c.name() == part) {
            Some(c) => field = c,
            None => return false,
        }
    }
    true
}

/// Removes a table the failed import created: its catalog entry and its files
/// (`DROP TABLE ... PURGE`).
fn drop_new_table(table: &Table) {
    let _ = table.clone().drop_table(true);
}
