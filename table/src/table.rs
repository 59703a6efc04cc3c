//! The table handle: one version of a table (its metadata), where it lives, and the facts every
//! operation asks of it.

use std::sync::Arc;

use geoberg_crs::{ColumnType, FormatVersion as CrsVersion};
use iceberg::spec::{
    FormatVersion, ManifestEntryRef, ManifestFile, ManifestStatus, PrimitiveType, TableMetadata,
    Type,
};

use crate::bridge::{self, GeoFields};
use crate::cache::VersionCache;
use crate::catalog::{Catalog, MemoryCatalog};
use crate::error::{Error, Result};
use crate::ident::TableIdent;
use crate::manifest::{read_manifest_list, read_manifests};
use crate::metrics::MetricsConfig;
use crate::properties::TableProperties;
use crate::storage::{Storage, join};

/// A geometry or geography column of a loaded table.
#[derive(Debug, Clone, PartialEq)]
pub struct GeoColumn {
    /// Iceberg field id.
    pub field_id: i32,
    /// Column name.
    pub name: String,
    /// Declared type and CRS (or the legacy no-CRS kind).
    pub column_type: ColumnType,
}

/// An Iceberg table at one metadata version; operations that change it return the new version.
#[derive(Debug, Clone)]
pub struct Table {
    catalog: Arc<dyn Catalog>,
    ident: TableIdent,
    metadata_location: String,
    metadata: Arc<TableMetadata>,
    geo_columns: Vec<GeoColumn>,
    geo_fields: GeoFields,
    derived: VersionCache,
}

impl Table {
    /// Loads the current version of a table from the catalog.
    pub fn load(catalog: Arc<dyn Catalog>, ident: &TableIdent) -> Result<Table> {
        let location = catalog
            .metadata_location(ident)?
            .ok_or_else(|| Error::NoSuchTable(ident.to_string()))?;
        let bytes = catalog.storage().read(&location)?;
        let (metadata, geo) = bridge::metadata_from_json(&bytes, &location)?;
        Ok(Table::from_parts(
            catalog,
            ident.clone(),
            location,
            metadata,
            geo,
        ))
    }

    /// The table version of one metadata file, read through `storage` without a catalog (a
    /// worker given a rewrite job reads this version; it never commits).
    pub(crate) fn at_metadata_file(
        storage: Storage,
        ident: TableIdent,
        metadata_location: &str,
    ) -> Result<Table> {
        let bytes = storage.read(metadata_location)?;
        let (metadata, geo) = bridge::metadata_from_json(&bytes, metadata_location)?;
        let catalog = MemoryCatalog::new("rewrite-job", metadata.location())?.with_storage(storage);
        Ok(Table::from_parts(
            Arc::new(catalog),
            ident,
            metadata_location.to_string(),
            metadata,
            geo,
        ))
    }

    /// Reloads the table (after a [`Error::CommitConflict`], say).
    pub fn refresh(&self) -> Result<Table> {
        Table::load(self.catalog.clone(), &self.ident)
    }

    pub(crate) fn from_parts(
        catalog: Arc<dyn Catalog>,
        ident: TableIdent,
        metadata_location: String,
        metadata: TableMetadata,
        geo_fields: GeoFields,
    ) -> Table {
        let schema = metadata.current_schema();
        // Lenient here: a malformed property must not make the table unloadable; operations
        // that depend on it report it through `properties()`.
        let legacy = TableProperties::parse(metadata.properties())
            .map(|p| p.legacy_geometry_field_ids)
            .unwrap_or_default();
        let geo_columns = schema
            .as_struct()
            .fields()
            .iter()
            .filter_map(|field| {
                let column_type = match geo_fields.get(&field.id) {
                    Some(t) => t.clone(),
                    None if legacy.contains(&field.id) => ColumnType::GeometryWithoutCrs,
                    None => return None,
                };
                Some(GeoColumn {
                    field_id: field.id,
                    name: field.name.clone(),
                    column_type,
                })
            })
            .collect();
        Table {
            catalog,
            ident,
            metadata_location,
            metadata: Arc::new(metadata),
            geo_columns,
            geo_fields,
            derived: VersionCache::default(),
        }
    }

    /// The version a commit of `metadata` at `location` makes of this table.
    /// (`geo_fields`: the geo fields of that metadata's schemas; a schema change adds some).
    pub(crate) fn next_version_with_geo(
        &self,
        location: String,
        metadata: TableMetadata,
        geo_fields: GeoFields,
    ) -> Table {
        Table::from_parts(
            self.catalog.clone(),
            self.ident.clone(),
            location,
            metadata,
            geo_fields,
        )
    }

    /// `namespace.table`.
    pub fn ident(&self) -> &TableIdent {
        &self.ident
    }

    /// The catalog this table lives in.
    pub fn catalog(&self) -> &Arc<dyn Catalog> {
        &self.catalog
    }

    /// Where the table's files are read and written (the catalog's storage).
    pub fn storage(&self) -> &Storage {
        self.catalog.storage()
    }

    /// Location of the metadata file this handle was loaded from.
    pub fn metadata_location(&self) -> &str {
        &self.metadata_location
    }

    /// Iceberg metadata, with geo columns seen as `binary` (see [`Table::geo_columns`]).
    pub fn metadata(&self) -> &TableMetadata {
        &self.metadata
    }

    /// The table's properties, parsed and typed.
    pub fn properties(&self) -> Result<TableProperties> {
        TableProperties::parse(self.metadata.properties())
    }

    /// Metrics modes of the current schema's columns (`write.metadata.metrics.*`).
    pub fn metrics_config(&self) -> Result<MetricsConfig> {
        self.metrics_config_with(self.metadata.properties())
    }

    /// The metrics modes the current schema's columns would have under `properties`.
    pub(crate) fn metrics_config_with(
        &self,
        properties: &std::collections::HashMap<String, String>,
    ) -> Result<MetricsConfig> {
        let md = &self.metadata;
        // Every primitive field, nested ones included, in the order Iceberg Java counts them
        // against the column cap (schema order, not field-id order: a column added FIRST
        // after creation counts first).
        let columns = crate::metrics::inferred_metrics_order(md.current_schema().as_struct());
        let sort_ids: Vec<i32> = md
            .default_sort_order()
            .fields
            .iter()
            .map(|f| f.source_id)
            .collect();
        MetricsConfig::new(properties, &columns, &sort_ids)
    }

    /// Format version as the `crs` rules see it.
    pub fn format_version(&self) -> CrsVersion {
        match self.metadata.format_version() {
            FormatVersion::V1 => CrsVersion::V1,
            FormatVersion::V2 => CrsVersion::V2,
            FormatVersion::V3 => CrsVersion::V3,
        }
    }

    /// The geometry and geography columns, in schema order.
    pub fn geo_columns(&self) -> &[GeoColumn] {
        &self.geo_columns
    }

    /// A geo column by name; a plain `binary` column counts as no-CRS geometry, so that tables
    /// written by other engines (WKB in a binary column) can be filtered spatially.
    pub fn geo_column(&self, name: &str) -> Result<GeoColumn> {
        if let Some(c) = self.geo_columns.iter().find(|c| c.name == name) {
            return Ok(c.clone());
        }
        match self.metadata.current_schema().field_by_name(name) {
            Some(f) if *f.field_type == Type::Primitive(PrimitiveType::Binary) => Ok(GeoColumn {
                field_id: f.id,
                name: name.to_string(),
                column_type: ColumnType::GeometryWithoutCrs,
            }),
            Some(f) => Err(Error::WrongColumnType {
                column: name.to_string(),
                found: f.field_type.to_string(),
                expected: "a geometry or geography column".into(),
            }),
            None => Err(self.no_such_column(name)),
        }
    }

    /// The error for a column name the table does not have.
    pub(crate) fn no_such_column(&self, name: &str) -> Error {
        let available: Vec<String> = self
            .metadata
            .current_schema()
            .as_struct()
            .fields()
            .iter()
            .map(|f| f.name.clone())
            .collect();
        Error::NoSuchColumn {
            table: self.ident.to_string(),
            column: name.to_string(),
            available: available.join(", "),
        }
    }

    /// Whether the column's own `lower_bounds` / `upper_bounds` hold our point encoding: true for
    /// declared geo columns and for no-CRS columns this table marks as geometry. A plain `binary`
    /// column written by another engine holds Iceberg's binary bounds (byte-wise WKB prefixes),
    /// which decode as 16 bytes but are no box: trusting them would skip files that match.
    pub(crate) fn bounds_are_points(&self, field_id: i32) -> bool {
        self.geo_columns.iter().any(|c| c.field_id == field_id)
    }

    /// Values derived from this version, shared by its clones.
    pub(crate) fn derived(&self) -> &VersionCache {
        &self.derived
    }

    pub(crate) fn geo_fields(&self) -> &GeoFields {
        &self.geo_fields
    }

    /// `<table location>/metadata`.
    pub(crate) fn metadata_dir(&self) -> String {
        join(self.metadata.location(), "metadata")
    }

    /// `<table location>/data`.
    pub(crate) fn data_dir(&self) -> String {
        join(self.metadata.location(), "data")
    }

    /// Current snapshot's manifests (empty for a table without snapshots).
    pub(crate) fn manifests(&self) -> Result<Vec<ManifestFile>> {
        let Some(snapshot) = self.metadata.current_snapshot() else {
            return Ok(Vec::new());
        };
        read_manifest_list(
            self.storage(),
            snapshot.manifest_list(),
            self.metadata.format_version(),
        )
        .map_err(|e| self.conflict_if_moved(e))
    }

    /// The live entries (data and delete files) of the current snapshot, fully decoded, each
    /// with its partition spec id.
    pub(crate) fn live_entries(&self) -> Result<Vec<(i32, ManifestEntryRef)>> {
        let manifests = self.manifests()?;
        let per_manifest =
            read_manifests(self.storage(), &manifests).map_err(|e| self.conflict_if_moved(e))?;
        let mut out = Vec::new();
        for (m, entries) in manifests.iter().zip(per_manifest) {
            out.extend(
                entries
                    .into_iter()
                    .filter(|e| e.status() != ManifestStatus::Deleted)
                    .map(|e| (m.partition_spec_id, e)),
            );
        }
        Ok(out)
    }

    /// A file of this version is gone: if the catalog has moved on since, another writer
    /// committed and expired the snapshot this handle is based on. Reloading is the fix, so it
    /// is the retryable [`Error::CommitConflict`]; otherwise `e` as it is.
    pub(crate) fn conflict_if_moved(&self, e: Error) -> Error {
        if !e.is_not_found() {
            return e;
        }
        match self.catalog.metadata_location(&self.ident) {
            Ok(found) if found.as_deref() != Some(self.metadata_location.as_str()) => {
                Error::CommitConflict {
                    table: self.ident.to_string(),
                    expected: self.metadata_location.clone(),
                    found: found.unwrap_or_else(|| "<none>".into()),
                }
            }
            _ => e,
        }
    }
}

pub(crate) fn metadata_location(metadata: &TableMetadata, version: u64) -> String {
    join(
        &join(metadata.location(), "metadata"),
        &format!("{version:05}-{}.metadata.json", uuid::Uuid::new_v4()),
    )
}

/// Writes the first version of a new table's metadata and returns its location.
pub(crate) fn write_metadata(
    storage: &Storage,
    metadata: &TableMetadata,
    geo: &GeoFields,
    version: u64,
) -> Result<String> {
    let location = metadata_location(metadata, version);
    let bytes = bridge::metadata_to_json(metadata, geo)?;
    if let Err(e) = storage.write_new(&location, bytes) {
        // The write may have happened with its reply lost: nothing references it.
        let _ = storage.delete(&location);
        return Err(e);
    }
    Ok(location)
}

pub(crate) fn metadata_version(location: &str) -> Option<u64> {
    let name = location.rsplit('/').next()?;
    name.split('-').next()?.parse().ok()
}
