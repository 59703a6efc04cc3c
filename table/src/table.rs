//! A table handle: create, load, and the commit that makes a new snapshot visible.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use geoberg_crs::{ColumnType, FormatVersion as CrsVersion, validate_declaration};
use iceberg::spec::{
    FormatVersion, ManifestFile, ManifestList, NestedField, Operation, PrimitiveType, Schema,
    Snapshot, SnapshotReference, SnapshotRetention, SortOrder, Summary, TableMetadata,
    TableMetadataBuilder, Type, UnboundPartitionSpec,
};

use crate::bridge::{self, GeoFields};
use crate::catalog::{Catalog, default_table_location};
use crate::error::{Error, Result};
use crate::file_index::IndexCache;
use crate::ident::TableIdent;
use crate::location::{delete_quietly, file_uri, local_path, read_file, write_new_file};
use crate::metrics::METRICS_COLUMN_PREFIX;
use crate::schema::{Column, DataType, PartitionField};
use crate::storage::Storage;

/// Table property listing, by field id, the binary columns that hold no-CRS (legacy) geometry.
pub const LEGACY_GEOMETRY_PROPERTY: &str = "geoberg.legacy-geometry-field-ids";
/// Table property naming the geometry column whose bbox columns we materialise.
pub const BBOX_SOURCE_PROPERTY: &str = "geoberg.bbox-columns.source";
/// Names of the materialised bbox columns (seed 002 layout), placed before the geometry.
pub const BBOX_COLUMN_NAMES: [&str; 4] = ["bbox_min_x", "bbox_min_y", "bbox_max_x", "bbox_max_y"];
/// Table property recording a derived Hilbert-cell partition column, as JSON
/// `{"column": <geometry column>, "precision": <bits per axis>, "bounds": [minX, minY, maxX, maxY]}`.
pub const HILBERT_CELL_PROPERTY: &str = "geoberg.partition.hilbert-cell";
/// Suffix of the derived cell column: `<geometry column>_hilbert_cell`.
pub const HILBERT_CELL_SUFFIX: &str = "_hilbert_cell";

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

/// Options of a new table; build with [`CreateTable::new`], then [`CreateTable::create`].
#[derive(Debug, Clone)]
pub struct CreateTable {
    columns: Vec<Column>,
    partition: Vec<PartitionField>,
    properties: HashMap<String, String>,
    location: Option<String>,
    bbox_for: Option<String>,
    spatial_partition: Option<(String, u8)>,
    allow_undeclared_crs: bool,
}

impl CreateTable {
    /// A table with these columns, unpartitioned, format-version 3.
    pub fn new(columns: impl IntoIterator<Item = Column>) -> Self {
        Self {
            columns: columns.into_iter().collect(),
            partition: Vec::new(),
            properties: HashMap::new(),
            location: None,
            bbox_for: None,
            spatial_partition: None,
            allow_undeclared_crs: false,
        }
    }

    /// Adds a partition field (identity, bucket or truncate on an ordinary column).
    pub fn partition_by(mut self, field: PartitionField) -> Self {
        self.partition.push(field);
        self
    }

    /// Sets a table property (`format-version` is honoured as well).
    pub fn property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.properties.insert(key.into(), value.into());
        self
    }

    /// Chooses the format version (default 3; 2 for a table whose geometry declares no CRS).
    pub fn format_version(mut self, version: u8) -> Self {
        self.properties
            .insert("format-version".into(), version.to_string());
        self
    }

    /// Places the table at an explicit location instead of `<warehouse>/<ns>/<table>`.
    pub fn location(mut self, location: impl Into<String>) -> Self {
        self.location = Some(location.into());
        self
    }

    /// Materialises `bbox_min_x, bbox_min_y, bbox_max_x, bbox_max_y` (doubles, metrics `full`)
    /// right before `geometry_column`; appends fill them from the geometry. Engines that only
    /// prune on numbers (pyiceberg, Spark without geo support) then skip files too.
    pub fn with_bbox_columns(mut self, geometry_column: impl Into<String>) -> Self {
        self.bbox_for = Some(geometry_column.into());
        self
    }

    /// Partitions by spatial proximity: adds a `long` column `<geometry_column>_hilbert_cell`
    /// and an identity partition on it. Appends fill it with the Hilbert key (`precision` bits
    /// per axis, 1..=16) of each geometry's bbox centre over the column CRS's extent (WGS84 for
    /// a no-CRS column); null or empty geometry gets a null cell. Window scans still skip files
    /// on geometry bounds without any predicate on the cell column.
    pub fn spatial_partition(mut self, geometry_column: impl Into<String>, precision: u8) -> Self {
        self.spatial_partition = Some((geometry_column.into(), precision));
        self
    }

    /// Allows [`DataType::LegacyGeometry`] columns: what creating a table from a query result
    /// does. The table defaults to format-version 2, where file skipping still works.
    pub fn allow_undeclared_crs(mut self) -> Self {
        self.allow_undeclared_crs = true;
        self
    }

    /// Creates the table: writes its first metadata file, then registers it in the catalog.
    pub fn create(self, catalog: Arc<dyn Catalog>, ident: &TableIdent) -> Result<Table> {
        let ns = ident.namespace_str();
        if !catalog.namespace_exists(&ns)? {
            return Err(Error::NoSuchNamespace(ns));
        }
        if catalog.metadata_location(ident)?.is_some() {
            return Err(Error::TableAlreadyExists(ident.to_string()));
        }
        let mut properties = self.properties;
        let has_legacy = self
            .columns
            .iter()
            .any(|c| c.data_type == DataType::LegacyGeometry);
        let version = match properties.remove("format-version") {
            Some(v) => v.parse::<CrsVersion>()?,
            None if has_legacy && self.allow_undeclared_crs => CrsVersion::V2,
            None => CrsVersion::V3,
        };
        let format_version = match version {
            CrsVersion::V1 => FormatVersion::V1,
            CrsVersion::V2 => FormatVersion::V2,
            CrsVersion::V3 => FormatVersion::V3,
        };

        let mut columns = self.columns;
        for c in &columns {
            match c.data_type.column_type() {
                Some(ColumnType::GeometryWithoutCrs) if self.allow_undeclared_crs => {}
                Some(t) => validate_declaration(&c.name, &t, version)?,
                None => {}
            }
        }
        if let Some(geom) = &self.bbox_for {
            let pos = columns
                .iter()
                .position(|c| &c.name == geom && c.data_type.is_geo())
                .ok_or_else(|| {
                    Error::Schema(format!(
                        "with_bbox_columns({geom:?}): no geometry column of that name"
                    ))
                })?;
            for (i, name) in BBOX_COLUMN_NAMES.iter().enumerate() {
                columns.insert(pos + i, Column::new(*name, DataType::Double));
                properties.insert(format!("{METRICS_COLUMN_PREFIX}{name}"), "full".into());
            }
            properties.insert(BBOX_SOURCE_PROPERTY.into(), geom.clone());
        }
        let mut partition = self.partition;
        if let Some((geom, precision)) = &self.spatial_partition {
            let (cell, json) = hilbert_cell_column(&columns, geom, *precision)?;
            columns.push(Column::new(cell.clone(), DataType::Long));
            partition.push(PartitionField::identity(cell));
            properties.insert(HILBERT_CELL_PROPERTY.into(), json);
        }
        let mut seen = std::collections::HashSet::new();
        for c in &columns {
            if !seen.insert(c.name.to_ascii_lowercase()) {
                return Err(Error::Schema(format!(
                    "column {:?} is defined twice; column names must be unique",
                    c.name
                )));
            }
        }

        let fields = columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let ty = Type::Primitive(c.data_type.iceberg_type());
                Arc::new(if c.required {
                    NestedField::required(i as i32 + 1, &c.name, ty)
                } else {
                    NestedField::optional(i as i32 + 1, &c.name, ty)
                })
            })
            .collect::<Vec<_>>();
        let schema = Schema::builder().with_fields(fields).build()?;

        let mut spec = UnboundPartitionSpec::builder();
        for (i, p) in partition.iter().enumerate() {
            let (idx, col) = columns
                .iter()
                .enumerate()
                .find(|(_, c)| c.name == p.column)
                .ok_or_else(|| {
                    Error::Schema(format!("partition column {:?} does not exist", p.column))
                })?;
            if col.data_type.is_geo() {
                return Err(Error::Schema(format!(
                    "cannot partition by geo column {:?}: the Iceberg spec allows no transform \
                     on geometry or geography; partition by a derived long cell or Hilbert-key \
                     column instead (spatial skipping works without it)",
                    p.column
                )));
            }
            spec = spec.add_partition_field(idx as i32 + 1, p.field_name(), p.transform)?;
            let _ = i;
        }
        let spec = spec.build();

        let location = match &self.location {
            Some(l) => local_path(l)?,
            None => default_table_location(catalog.warehouse(), ident),
        };
        if !location.is_absolute() {
            return Err(Error::InvalidLocation {
                location: location.display().to_string(),
                reason: "a table location must be absolute".into(),
            });
        }
        if location
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(Error::InvalidLocation {
                location: location.display().to_string(),
                reason: "a table location must not contain '..'; give the resolved path".into(),
            });
        }

        let legacy_names: Vec<&str> = columns
            .iter()
            .filter(|c| c.data_type == DataType::LegacyGeometry)
            .map(|c| c.name.as_str())
            .collect();
        let metadata = TableMetadataBuilder::new(
            schema,
            spec,
            SortOrder::unsorted_order(),
            file_uri(&location),
            format_version,
            properties,
        )?
        .build()?
        .metadata;

        // Ids may be reassigned by the builder: map geo columns by name on the final schema.
        let final_schema = metadata.current_schema();
        let mut geo = GeoFields::new();
        let mut legacy_ids = Vec::new();
        for c in &columns {
            let Some(t) = c.data_type.column_type() else {
                continue;
            };
            let id = final_schema
                .field_by_name(&c.name)
                .map(|f| f.id)
                .ok_or_else(|| Error::Schema(format!("column {:?} vanished", c.name)))?;
            match t {
                ColumnType::GeometryWithoutCrs => legacy_ids.push(id.to_string()),
                t => {
                    geo.insert(id, t);
                }
            }
        }
        let metadata = if legacy_names.is_empty() {
            metadata
        } else {
            TableMetadataBuilder::new_from_metadata(metadata, None)
                .set_properties(HashMap::from([(
                    LEGACY_GEOMETRY_PROPERTY.to_string(),
                    legacy_ids.join(","),
                )]))?
                .build()?
                .metadata
        };

        let metadata_location = write_metadata(catalog.storage(), &metadata, &geo, 0)?;
        if let Err(e) = catalog.register_table(ident, &metadata_location) {
            delete_quietly(catalog.storage(), &metadata_location);
            return Err(e);
        }
        Table::from_parts(catalog, ident.clone(), metadata_location, metadata, geo)
    }
}

/// Validates a `spatial_partition` request; returns the cell column name and the property JSON.
fn hilbert_cell_column(columns: &[Column], geom: &str, precision: u8) -> Result<(String, String)> {
    if !(1..=16).contains(&precision) {
        return Err(Error::Schema(format!(
            "spatial_partition({geom:?}, {precision}): precision must be 1..=16 bits per axis \
             (4^precision cells); 4 to 8 suits most tables"
        )));
    }
    let col = columns
        .iter()
        .find(|c| c.name == geom && c.data_type.is_geo())
        .ok_or_else(|| {
            Error::Schema(format!(
                "spatial_partition({geom:?}): no geometry or geography column of that name"
            ))
        })?;
    let crs = match col.data_type.column_type() {
        Some(ColumnType::Geometry { crs }) | Some(ColumnType::Geography { crs, .. }) => Some(crs),
        _ => None,
    };
    let extent = match &crs {
        None => geoberg_crs::Extent::WGS84,
        Some(crs) => geoberg_crs::extent_of(crs).map_err(|_| {
            Error::Schema(format!(
                "spatial_partition({geom:?}): CRS {crs} has no known extent to lay a Hilbert \
                 curve over; declare the column geometry(4326) or geometry(3857), or add your \
                 own long cell column and partition_by(PartitionField::identity(..)) on it"
            ))
        })?,
    };
    let cell = format!("{geom}{HILBERT_CELL_SUFFIX}");
    if columns.iter().any(|c| c.name.eq_ignore_ascii_case(&cell)) {
        return Err(Error::Schema(format!(
            "spatial_partition({geom:?}): column {cell:?} already exists; rename it, or drop \
             spatial_partition and partition_by(PartitionField::identity({cell:?}))"
        )));
    }
    let json = serde_json::json!({
        "column": geom,
        "precision": precision,
        "bounds": [extent.min_x, extent.min_y, extent.max_x, extent.max_y],
    });
    Ok((cell, json.to_string()))
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
    indexes: IndexCache,
}

impl Table {
    /// Loads the current version of a table from the catalog.
    pub fn load(catalog: Arc<dyn Catalog>, ident: &TableIdent) -> Result<Table> {
        let location = catalog
            .metadata_location(ident)?
            .ok_or_else(|| Error::NoSuchTable(ident.to_string()))?;
        let bytes = read_file(&location)?;
        let (metadata, geo) = bridge::metadata_from_json(&bytes, &location)?;
        Table::from_parts(catalog, ident.clone(), location, metadata, geo)
    }

    /// Reloads the table (after a [`Error::CommitConflict`], say).
    pub fn refresh(&self) -> Result<Table> {
        Table::load(self.catalog.clone(), &self.ident)
    }

    fn from_parts(
        catalog: Arc<dyn Catalog>,
        ident: TableIdent,
        metadata_location: String,
        metadata: TableMetadata,
        geo_fields: GeoFields,
    ) -> Result<Table> {
        let schema = metadata.current_schema();
        let legacy: Vec<i32> = metadata
            .properties()
            .get(LEGACY_GEOMETRY_PROPERTY)
            .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
            .unwrap_or_default();
        let mut geo_columns = Vec::new();
        for field in schema.as_struct().fields() {
            let column_type = match geo_fields.get(&field.id) {
                Some(t) => t.clone(),
                None if legacy.contains(&field.id) => ColumnType::GeometryWithoutCrs,
                None => continue,
            };
            geo_columns.push(GeoColumn {
                field_id: field.id,
                name: field.name.clone(),
                column_type,
            });
        }
        Ok(Table {
            catalog,
            ident,
            metadata_location,
            metadata: Arc::new(metadata),
            geo_columns,
            geo_fields,
            indexes: IndexCache::default(),
        })
    }

    /// `namespace.table`.
    pub fn ident(&self) -> &TableIdent {
        &self.ident
    }

    /// The catalog this table lives in.
    pub fn catalog(&self) -> &Arc<dyn Catalog> {
        &self.catalog
    }

    /// Location of the metadata file this handle was loaded from.
    pub fn metadata_location(&self) -> &str {
        &self.metadata_location
    }

    /// Iceberg metadata, with geo columns seen as `binary` (see [`Table::geo_columns`]).
    pub fn metadata(&self) -> &TableMetadata {
        &self.metadata
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
            Some(f) => Err(Error::Schema(format!(
                "column {name:?} is {}, not a geometry column",
                f.field_type
            ))),
            None => Err(Error::Schema(format!(
                "no column {name:?} in table {}",
                self.ident
            ))),
        }
    }

    /// Whether the column's own `lower_bounds` / `upper_bounds` hold our point encoding: true for
    /// declared geo columns and for no-CRS columns this table marks as geometry. A plain `binary`
    /// column written by another engine holds Iceberg's binary bounds (byte-wise WKB prefixes),
    /// which decode as 16 bytes but are no box: trusting them would skip files that match.
    pub(crate) fn bounds_are_points(&self, field_id: i32) -> bool {
        self.geo_columns.iter().any(|c| c.field_id == field_id)
    }

    pub(crate) fn index_cache(&self) -> &IndexCache {
        &self.indexes
    }

    pub(crate) fn geo_fields(&self) -> &GeoFields {
        &self.geo_fields
    }

    /// Renders the table as `SHOW CREATE TABLE` does: `geom GEOMETRY(4326)`, legacy columns as
    /// bare `GEOMETRY`, partitioning and properties.
    pub fn show_create_table(&self, catalog_name: &str) -> String {
        let schema = self.metadata.current_schema();
        let mut out = format!("CREATE TABLE {catalog_name}.{} (\n", self.ident);
        let fields = schema.as_struct().fields();
        for (i, f) in fields.iter().enumerate() {
            let ty = match self.geo_columns.iter().find(|g| g.field_id == f.id) {
                Some(g) => render_geo_sql(&g.column_type),
                None => match f
                    .field_type
                    .as_primitive_type()
                    .and_then(DataType::from_iceberg)
                {
                    Some(t) => t.to_string(),
                    None => f.field_type.to_string().to_uppercase(),
                },
            };
            let not_null = if f.required { " NOT NULL" } else { "" };
            let sep = if i + 1 == fields.len() { ")" } else { ",\n" };
            let _ = write!(out, "{} {ty}{not_null}{sep}", f.name);
        }
        out.push_str("\nUSING iceberg");
        let spec = self.metadata.default_partition_spec();
        if !spec.fields().is_empty() {
            let parts: Vec<String> = spec
                .fields()
                .iter()
                .filter_map(|pf| {
                    let col = schema.field_by_id(pf.source_id)?.name.clone();
                    Some(
                        PartitionField {
                            column: col,
                            transform: pf.transform,
                        }
                        .render(),
                    )
                })
                .collect();
            let _ = write!(out, "\nPARTITIONED BY ({})", parts.join(", "));
        }
        let mut props: Vec<(&String, &String)> = self.metadata.properties().iter().collect();
        props.sort();
        let mut rendered = vec![format!(
            "  'format-version' = '{}'",
            self.metadata.format_version() as u8
        )];
        rendered.extend(props.into_iter().map(|(k, v)| format!("  '{k}' = '{v}'")));
        let _ = write!(out, "\nTBLPROPERTIES (\n{})\n", rendered.join(",\n"));
        out
    }

    /// Current snapshot's manifests (empty for a table without snapshots).
    pub(crate) fn manifests(&self) -> Result<Vec<ManifestFile>> {
        let Some(snapshot) = self.metadata.current_snapshot() else {
            return Ok(Vec::new());
        };
        let location = snapshot.manifest_list();
        let bytes = read_file(location).map_err(|e| self.conflict_if_moved(e))?;
        let list = ManifestList::parse_with_version(&bytes, self.metadata.format_version())
            .map_err(|e| Error::corrupt(location, e.to_string()))?;
        Ok(list.entries().to_vec())
    }

    /// A file of this version is gone: if the catalog has moved on since, another writer
    /// committed and expired the snapshot this handle is based on. Reloading is the fix, so it
    /// is the retryable [`Error::CommitConflict`]; otherwise `e` as it is.
    pub(crate) fn conflict_if_moved(&self, e: Error) -> Error {
        let Error::Io { source, .. } = &e else {
            return e;
        };
        if source.kind() != std::io::ErrorKind::NotFound {
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

    /// Stages a snapshot whose manifest list is already written: writes the next metadata
    /// file. Nothing is visible to readers until [`PendingCommit::commit`] swaps the pointer.
    pub(crate) fn stage_snapshot(&self, snapshot: Snapshot) -> Result<PendingCommit> {
        let snapshot_id = snapshot.snapshot_id();
        let metadata = TableMetadataBuilder::new_from_metadata(
            (*self.metadata).clone(),
            Some(self.metadata_location.clone()),
        )
        .add_snapshot(snapshot)?
        .set_ref(
            iceberg::spec::MAIN_BRANCH,
            SnapshotReference::new(snapshot_id, SnapshotRetention::branch(None, None, None)),
        )?
        .build()?
        .metadata;
        self.stage_metadata(metadata)
    }

    /// Writes `metadata` as the next metadata version, not yet visible.
    pub(crate) fn stage_metadata(&self, metadata: TableMetadata) -> Result<PendingCommit> {
        let version = metadata_version(&self.metadata_location).map_or(0, |v| v + 1);
        let location =
            write_metadata(self.catalog.storage(), &metadata, &self.geo_fields, version)?;
        Ok(PendingCommit {
            base: self.clone(),
            location,
            metadata,
        })
    }

    /// Summary of a fast append: Iceberg's `added-*` and `total-*` keys.
    pub(crate) fn append_summary(
        &self,
        added_files: u64,
        added_records: u64,
        added_bytes: u64,
    ) -> Summary {
        let prev = self
            .metadata
            .current_snapshot()
            .map(|s| s.summary().additional_properties.clone())
            .unwrap_or_default();
        let total = |key: &str, added: u64| -> String {
            let before = prev
                .get(key)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
            (before + added).to_string()
        };
        let mut p = HashMap::new();
        p.insert("added-data-files".into(), added_files.to_string());
        p.insert("added-records".into(), added_records.to_string());
        p.insert("added-files-size".into(), added_bytes.to_string());
        p.insert(
            "total-data-files".into(),
            total("total-data-files", added_files),
        );
        p.insert(
            "total-records".into(),
            total("total-records", added_records),
        );
        p.insert(
            "total-files-size".into(),
            total("total-files-size", added_bytes),
        );
        for k in [
            "total-delete-files",
            "total-position-deletes",
            "total-equality-deletes",
        ] {
            p.insert(k.into(), total(k, 0));
        }
        Summary {
            operation: Operation::Append,
            additional_properties: p,
        }
    }
}

fn render_geo_sql(t: &ColumnType) -> String {
    let srid_or_crs = |crs: &geoberg_crs::Crs| match crs.srid() {
        Some(s) => s.to_string(),
        None => format!("'{crs}'"),
    };
    match t {
        ColumnType::GeometryWithoutCrs => "GEOMETRY".into(),
        ColumnType::Geometry { crs } => format!("GEOMETRY({})", srid_or_crs(crs)),
        ColumnType::Geography { crs, edges } if *edges != geoberg_crs::EdgeAlgorithm::Spherical => {
            format!(
                "GEOGRAPHY({}, {})",
                srid_or_crs(crs),
                edges.name().to_uppercase()
            )
        }
        ColumnType::Geography { crs, .. } => format!("GEOGRAPHY({})", srid_or_crs(crs)),
    }
}

/// Writes `<table>/metadata/<version:05>-<uuid>.metadata.json` (the Java naming) and returns
/// its `file://` location.
fn write_metadata(
    storage: &dyn Storage,
    metadata: &TableMetadata,
    geo: &GeoFields,
    version: u64,
) -> Result<String> {
    let dir = local_path(metadata.location())?.join("metadata");
    let path = dir.join(format!(
        "{version:05}-{}.metadata.json",
        uuid::Uuid::new_v4()
    ));
    let bytes = bridge::metadata_to_json(metadata, geo)?;
    write_new_file(storage, &path, &bytes)?;
    Ok(file_uri(&path))
}

/// A new table version whose files are all written but which no reader can see yet.
///
/// Dropping it without [`PendingCommit::commit`] is what a crash before the catalog swap looks
/// like: the table stays at its previous snapshot and the written files become orphans.
#[derive(Debug)]
#[must_use = "nothing is visible until commit() swaps the catalog pointer"]
pub struct PendingCommit {
    base: Table,
    location: String,
    metadata: TableMetadata,
}

impl PendingCommit {
    /// Location of the staged metadata file.
    pub fn metadata_location(&self) -> &str {
        &self.location
    }

    /// Swaps the catalog pointer from the base version to the staged one, atomically.
    ///
    /// On [`Error::CommitConflict`] the staged metadata file is removed; reload the table and
    /// repeat the operation. On any other error the outcome of the swap is unknown, so the file
    /// is kept (if the swap did not happen it is an orphan that `remove_orphan_files` finds).
    pub fn commit(self) -> Result<Table> {
        let base = &self.base;
        if let Err(e) = base.catalog.swap_metadata_location(
            &base.ident,
            &base.metadata_location,
            &self.location,
        ) {
            if matches!(e, Error::CommitConflict { .. }) {
                delete_quietly(base.catalog.storage(), &self.location);
            }
            return Err(e);
        }
        Table::from_parts(
            base.catalog.clone(),
            base.ident.clone(),
            self.location,
            self.metadata,
            base.geo_fields.clone(),
        )
    }
}

fn metadata_version(location: &str) -> Option<u64> {
    let name = location.rsplit('/').next()?;
    name.split('-').next()?.parse().ok()
}
