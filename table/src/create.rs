//! Creating a table (spec: "Table Metadata", format versions, partition specs): columns with
//! their CRS rules, derived columns (bbox columns, a Hilbert-cell partition column), the first
//! metadata file, and the catalog registration.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use geoberg_crs::{ColumnType, Extent, FormatVersion as CrsVersion, HilbertSpec};
use geoberg_crs::{extent_of, validate_declaration};
use geoberg_sql::{CreateTableRequest, PartitionTransform};
use iceberg::spec::{
    FormatVersion, NestedField, Schema, SortOrder, TableMetadata, TableMetadataBuilder, Transform,
    UnboundPartitionSpec,
};

use crate::bridge::GeoFields;
use crate::catalog::{Catalog, default_table_location};
use crate::error::{Error, Result};
use crate::ident::TableIdent;
use crate::metrics::METRICS_COLUMN_PREFIX;
use crate::properties::{BBOX_SOURCE_PROPERTY, HILBERT_CELL_PROPERTY, LEGACY_GEOMETRY_PROPERTY};
use crate::schema::{BBOX_COLUMN_NAMES, Column, DataType, IcebergType, PartitionField};
use crate::spatial_index::{HilbertCell, MAX_CELL_PRECISION};
use crate::storage::{normalize_location, parse_location};
use crate::table::{Table, write_metadata};

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

    /// The table a parsed `CREATE TABLE` statement asks for, checked as far as possible before
    /// anything is written: column types, CRS declarations for the format version, partition
    /// sources.
    pub fn from_request(request: &CreateTableRequest) -> Result<CreateTable> {
        let version: CrsVersion = match request.properties.get("format-version") {
            Some(v) => v.parse()?,
            None => CrsVersion::V3,
        };
        let mut columns = Vec::with_capacity(request.columns.len());
        for c in &request.columns {
            if c.comment.is_some() {
                return Err(Error::Schema(format!(
                    "COMMENT on column {}: column comments are not stored yet; remove the \
                     COMMENT clause",
                    c.name
                )));
            }
            let data_type = crate::schema::declared_type(&c.name, &c.data_type)?;
            if let Some(t) = data_type.column_type() {
                validate_declaration(&c.name, &t, version)?;
            }
            let column = Column::new(&c.name, data_type);
            columns.push(if c.required {
                column.required()
            } else {
                column
            });
        }
        let mut create = CreateTable::new(columns);
        for p in &request.partitioning {
            let transform = match p.transform {
                PartitionTransform::Identity => Transform::Identity,
                PartitionTransform::Bucket(n) => Transform::Bucket(n),
                PartitionTransform::Truncate(w) => Transform::Truncate(w),
                PartitionTransform::Year => Transform::Year,
                PartitionTransform::Month => Transform::Month,
                PartitionTransform::Day => Transform::Day,
                PartitionTransform::Hour => Transform::Hour,
            };
            create = create.partition_by(PartitionField {
                column: p.column.clone(),
                transform,
            });
        }
        for (k, v) in &request.properties {
            create = create.property(k, v);
        }
        create.check_partition_sources()?;
        Ok(create)
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

    /// Places the table at an explicit location (a path or URI) instead of
    /// `<warehouse>/<ns>/<table>`.
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

    /// Allows [`DataType::LEGACY_GEOMETRY`] columns: what creating a table from a query result
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
        let location = match &self.location {
            Some(l) => normalize_location(l)?,
            None => default_table_location(catalog.warehouse(), ident),
        };
        parse_location(&location)?;
        let (metadata, geo) = self.metadata(location)?;
        let metadata_location = write_metadata(catalog.storage(), &metadata, &geo, 0)?;
        if let Err(e) = catalog.register_table(ident, &metadata_location) {
            let _ = catalog.storage().delete(&metadata_location);
            return Err(e);
        }
        Ok(Table::from_parts(
            catalog,
            ident.clone(),
            metadata_location,
            metadata,
            geo,
        ))
    }

    /// The table's first metadata at `location`, and its geo fields.
    fn metadata(self, location: String) -> Result<(TableMetadata, GeoFields)> {
        let mut properties = self.properties.clone();
        let has_legacy = self
            .columns
            .iter()
            .any(|c| c.data_type == DataType::LEGACY_GEOMETRY);
        let version = match properties.remove("format-version") {
            Some(v) => v.parse::<CrsVersion>()?,
            None if has_legacy && self.allow_undeclared_crs => CrsVersion::V2,
            None => CrsVersion::V3,
        };
        for c in &self.columns {
            match c.data_type.column_type() {
                Some(ColumnType::GeometryWithoutCrs) if self.allow_undeclared_crs => {}
                Some(t) => validate_declaration(&c.name, &t, version)?,
                None => {}
            }
        }
        let (columns, partition) = self.with_derived_columns(&mut properties)?;
        check_unique(&columns)?;
        if version != CrsVersion::V3
            && let Some(c) = columns.iter().find(|c| c.data_type.needs_v3())
        {
            return Err(Error::Schema(format!(
                "column {:?} is {}: nanosecond timestamps need table format-version 3; drop \
                 the 'format-version' property (new tables default to 3) or use microsecond \
                 timestamps",
                c.name, c.data_type
            )));
        }
        let schema = iceberg_schema(&columns)?;
        let sort_order = properties
            .get(crate::properties::SORT_ORDER_PROPERTY)
            .cloned();
        if let Some(value) = &sort_order {
            let invalid = |reason: String| Error::InvalidProperty {
                key: crate::properties::SORT_ORDER_PROPERTY.into(),
                value: value.clone(),
                reason,
            };
            let order = geoberg_sql::parse_sort_order(value).map_err(|e| {
                invalid(format!(
                    "{e}; write one of: {}",
                    geoberg_sql::SORT_ORDER_FORMS
                ))
            })?;
            let is_geo = |name: &str| {
                columns
                    .iter()
                    .any(|c| c.name == name && c.data_type.column_type().is_some())
            };
            crate::sort_order::check_columns(&schema, is_geo, "being created", &order)
                .map_err(|e| invalid(e.to_string()))?;
        }
        let spec = partition_spec(&columns, &partition)?;
        let format_version = match version {
            CrsVersion::V1 => FormatVersion::V1,
            CrsVersion::V2 => FormatVersion::V2,
            CrsVersion::V3 => FormatVersion::V3,
        };
        let metadata = TableMetadataBuilder::new(
            schema,
            spec,
            SortOrder::unsorted_order(),
            location,
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
        let metadata = match &sort_order {
            Some(order) if metadata.default_sort_order_id() == 0 => {
                let schema = metadata.current_schema().clone();
                crate::sort_order::with_default_sort_order(
                    TableMetadataBuilder::new_from_metadata(metadata, None),
                    &schema,
                    Some(order),
                )?
                .build()?
                .metadata
            }
            _ => metadata,
        };
        let metadata = if legacy_ids.is_empty() {
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
        Ok((metadata, geo))
    }

    /// The columns and partition fields with the bbox columns and the Hilbert-cell column
    /// added, and the properties that describe them.
    fn with_derived_columns(
        &self,
        properties: &mut HashMap<String, String>,
    ) -> Result<(Vec<Column>, Vec<PartitionField>)> {
        let mut columns = self.columns.clone();
        if let Some(geom) = &self.bbox_for {
            let pos = columns
                .iter()
                .position(|c| &c.name == geom && c.data_type.is_geo())
                .ok_or_else(|| no_geo_column("with_bbox_columns", geom, &columns))?;
            for (i, name) in BBOX_COLUMN_NAMES.iter().enumerate() {
                columns.insert(pos + i, Column::new(*name, DataType::Double));
                properties.insert(format!("{METRICS_COLUMN_PREFIX}{name}"), "full".into());
            }
            properties.insert(BBOX_SOURCE_PROPERTY.into(), geom.clone());
        }
        let mut partition = self.partition.clone();
        if let Some((geom, precision)) = &self.spatial_partition {
            let cell = hilbert_cell(&columns, geom, *precision)?;
            let name = cell.cell_column();
            columns.push(Column::new(name.clone(), DataType::Long));
            partition.push(PartitionField::identity(name));
            properties.insert(HILBERT_CELL_PROPERTY.into(), cell.property_value());
        }
        Ok((columns, partition))
    }

    /// Partition sources exist and are ordinary columns.
    fn check_partition_sources(&self) -> Result<()> {
        partition_spec(&self.columns, &self.partition).map(|_| ())
    }
}

fn no_geo_column(what: &str, name: &str, columns: &[Column]) -> Error {
    let geo: Vec<&str> = columns
        .iter()
        .filter(|c| c.data_type.is_geo())
        .map(|c| c.name.as_str())
        .collect();
    Error::Schema(format!(
        "{what}({name:?}): no geometry or geography column of that name (geo columns: {})",
        if geo.is_empty() {
            "none".to_string()
        } else {
            geo.join(", ")
        }
    ))
}

fn check_unique(columns: &[Column]) -> Result<()> {
    let mut seen = HashSet::new();
    for c in columns {
        if !seen.insert(c.name.to_ascii_lowercase()) {
            return Err(Error::Schema(format!(
                "column {:?} is defined twice; column names must be unique",
                c.name
            )));
        }
    }
    Ok(())
}

/// The Iceberg schema: top-level columns get ids 1..=n (partition specs refer to them so),
/// nested fields the ids after, as Iceberg Java's `AssignFreshIds` numbers them.
fn iceberg_schema(columns: &[Column]) -> Result<Schema> {
    let mut next_id = columns.len() as i32 + 1;
    let mut fields = Vec::with_capacity(columns.len());
    for (i, c) in columns.iter().enumerate() {
        let ty = c.data_type.iceberg_type(&c.name, &mut next_id)?;
        fields.push(Arc::new(NestedField::new(
            i as i32 + 1,
            &c.name,
            ty,
            c.required,
        )));
    }
    Ok(Schema::builder().with_fields(fields).build()?)
}

fn partition_spec(
    columns: &[Column],
    partition: &[PartitionField],
) -> Result<UnboundPartitionSpec> {
    let mut spec = UnboundPartitionSpec::builder();
    for p in partition {
        let (idx, col) = columns
            .iter()
            .enumerate()
            .find(|(_, c)| c.name == p.column)
            .ok_or_else(|| {
                Error::Schema(format!(
                    "partition column {:?} does not exist; partition by a column of the table",
                    p.column
                ))
            })?;
        if col.data_type.is_nested() {
            return Err(Error::Schema(format!(
                "cannot partition by {} column {:?}: partition by a primitive column",
                col.data_type, p.column
            )));
        }
        if col.data_type.is_geo() {
            return Err(Error::Schema(format!(
                "cannot partition by geo column {:?}: the Iceberg spec allows no transform \
                 on geometry or geography; partition by a derived long cell or Hilbert-key \
                 column instead (spatial skipping works without it)",
                p.column
            )));
        }
        spec = spec.add_partition_field(idx as i32 + 1, p.field_name(), p.transform)?;
    }
    Ok(spec.build())
}

/// Validates a `spatial_partition` request: the cell column's curve.
fn hilbert_cell(columns: &[Column], geom: &str, precision: u8) -> Result<HilbertCell> {
    if !(1..=MAX_CELL_PRECISION).contains(&precision) {
        return Err(Error::Schema(format!(
            "spatial_partition({geom:?}, {precision}): precision must be 1..={MAX_CELL_PRECISION} \
             bits per axis (4^precision cells); 4 to 8 suits most tables"
        )));
    }
    let col = columns
        .iter()
        .find(|c| c.name == geom && c.data_type.is_geo())
        .ok_or_else(|| no_geo_column("spatial_partition", geom, columns))?;
    let extent = match col
        .data_type
        .column_type()
        .as_ref()
        .and_then(ColumnType::crs)
    {
        None => Extent::WGS84,
        Some(crs) => extent_of(crs).map_err(|_| {
            Error::Schema(format!(
                "spatial_partition({geom:?}): CRS {crs} has no known extent to lay a Hilbert \
                 curve over; declare the column geometry(4326) or geometry(3857), or add your \
                 own long cell column and partition_by(PartitionField::identity(..)) on it"
            ))
        })?,
    };
    let cell = HilbertCell {
        column: geom.to_string(),
        spec: HilbertSpec::new(u32::from(precision), extent)?,
    };
    let name = cell.cell_column();
    if columns.iter().any(|c| c.name.eq_ignore_ascii_case(&name)) {
        return Err(Error::Schema(format!(
            "spatial_partition({geom:?}): column {name:?} already exists; rename it, or drop \
             spatial_partition and partition_by(PartitionField::identity({name:?}))"
        )));
    }
    Ok(cell)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(sql: &str) -> CreateTableRequest {
        match geoberg_sql::parse(sql).unwrap() {
            geoberg_sql::Statement::CreateTable(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn requests_map_types_and_check_declarations_before_writing() {
        let create =
            CreateTable::from_request(&request("CREATE TABLE db.t (id bigint, g geometry(4326))"))
                .unwrap();
        assert_eq!(create.columns[1].data_type, DataType::geometry(4326));
        let create =
            CreateTable::from_request(&request("CREATE TABLE db.t (g geography)")).unwrap();
        assert_eq!(create.columns[0].data_type, DataType::geography(4326));
        let err = CreateTable::from_request(&request("CREATE TABLE db.t (g geometry(4269))"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("4269"), "{err}");
        let err = CreateTable::from_request(&request(
            "CREATE TABLE db.t (id bigint, g geometry(4326)) PARTITIONED BY (g)",
        ))
        .unwrap_err();
        assert!(
            err.to_string().contains("cannot partition by geo column"),
            "{err}"
        );
        let create = CreateTable::from_request(&request(
            "CREATE TABLE db.t (d uuid, s struct<a: decimal(9, 2), b: array<string>>)",
        ))
        .unwrap();
        assert_eq!(create.columns[0].data_type, DataType::Uuid);
        assert_eq!(
            create.columns[1].data_type,
            DataType::struct_of([
                Column::new("a", DataType::decimal(9, 2)),
                Column::new("b", DataType::list(DataType::String)),
            ])
        );
        let err = CreateTable::from_request(&request(
            "CREATE TABLE db.t (s struct<a: int>) PARTITIONED BY (s)",
        ))
        .unwrap_err();
        assert!(
            err.to_string().contains("partition by a primitive"),
            "{err}"
        );
    }
}
