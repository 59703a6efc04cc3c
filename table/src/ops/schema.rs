//! Schema evolution (`ALTER TABLE ... ADD / DROP / RENAME COLUMN`): a new current schema in a
//! new metadata version, no new snapshot, no data file rewritten.
//!
//! The rules are Iceberg Java's `SchemaUpdate` (core/src/main/java/org/apache/iceberg/
//! SchemaUpdate.java) and the spec's "Schema Evolution" section: a new column gets a fresh field
//! id after `last-column-id` (a nested type's fields the ids after it, as `AssignFreshIds`
//! numbers them) and must be optional ("Incompatible change: cannot add required column"),
//! since rows already written have no value for it; names must not clash; a rename keeps the
//! field id, so files written before read under the new name; a drop removes the field from
//! the new schema while old schemas and files keep it. Readers match columns by field id, so
//! old files read with nulls for an added column ([`crate::Table::scan`]).
//!
//! Like Java's `applyChangesToMetricsConfig`, a rename moves and a drop removes the column's
//! `write.metadata.metrics.column.<c>` key; geoberg's own column-keyed properties
//! (`geoberg.spatial-index.<c>`, `geoberg.source-crs.<c>`, the bbox source) follow a rename too.
//! Changes that would leave such a property pointing nowhere are refused with the fix.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use geoberg_crs::validate_declaration;
use iceberg::spec::{NestedField, NestedFieldRef, Schema, TableMetadata, TableMetadataBuilder};

use crate::bbox_columns::BBOX_COLUMNS_PROPERTY_PREFIX;
use crate::bridge::GeoFields;
use crate::error::{Error, Result};
use crate::metrics::METRICS_COLUMN_PREFIX;
use crate::properties::{
    BBOX_SOURCE_PROPERTY, HILBERT_CELL_PROPERTY, SORT_ORDER_PROPERTY, SOURCE_CRS_PROPERTY_PREFIX,
    SPATIAL_INDEX_PROPERTY_PREFIX, TableProperties,
};
use crate::schema::{Column, DataType, IcebergType};
use crate::snapshot::{MetadataChange, commit_metadata};
use crate::table::Table;

/// Where [`UpdateSchema::add_column`] places a new top-level column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnPosition {
    /// After the last column (the default of `ADD COLUMN`).
    Last,
    /// Before the first column (`ADD COLUMN c t FIRST`).
    First,
    /// Right after the named column (`ADD COLUMN c t AFTER x`).
    After(String),
}

/// One change of an [`UpdateSchema`], applied in the order given.
#[derive(Debug, Clone)]
enum SchemaChange {
    Add {
        column: Column,
        position: ColumnPosition,
    },
    Drop(String),
    Rename {
        from: String,
        to: String,
    },
}

impl SchemaChange {
    /// `add column "c"`, as error messages name the change.
    fn describe(&self) -> String {
        match self {
            SchemaChange::Add { column, .. } => format!("add column {:?}", column.name),
            SchemaChange::Drop(name) => format!("drop column {name:?}"),
            SchemaChange::Rename { from, to } => format!("rename column {from:?} to {to:?}"),
        }
    }
}

/// A schema change being built; see [`Table::update_schema`]. Nothing is written until
/// [`UpdateSchema::commit`].
#[derive(Debug, Clone)]
#[must_use = "nothing changes until commit()"]
pub struct UpdateSchema<'a> {
    table: &'a Table,
    changes: Vec<SchemaChange>,
}

impl Table {
    /// Starts a schema change: add, drop and rename top-level columns, then
    /// [`UpdateSchema::commit`] writes one new metadata version with the new current schema
    /// (no snapshot, no data file touched).
    ///
    /// ```
    /// # use geoberg_table::{Catalog, Column, ColumnPosition, CreateTable, DataType, MemoryCatalog, TableIdent};
    /// let dir = std::env::temp_dir().join(format!("geoberg-schema-doc-{}", std::process::id()));
    /// let catalog = std::sync::Arc::new(MemoryCatalog::new("demo", &dir)?);
    /// catalog.create_namespace("db")?;
    /// let ident = TableIdent::new("db", "t")?;
    /// let table = CreateTable::new([Column::new("id", DataType::Long)])
    ///     .create(catalog, &ident)?;
    /// let table = table
    ///     .update_schema()
    ///     .add_column(Column::new("name", DataType::String), ColumnPosition::Last)
    ///     .rename_column("id", "key")
    ///     .commit()?;
    /// let names: Vec<&str> = table.metadata().current_schema().as_struct().fields()
    ///     .iter().map(|f| f.name.as_str()).collect();
    /// assert_eq!(names, ["key", "name"]);
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), geoberg_table::Error>(())
    /// ```
    pub fn update_schema(&self) -> UpdateSchema<'_> {
        UpdateSchema {
            table: self,
            changes: Vec::new(),
        }
    }
}

impl<'a> UpdateSchema<'a> {
    /// Adds a nullable top-level column at `position`. A `NOT NULL` column is refused (rows
    /// already written have no value for it); geometry and geography columns follow the
    /// `CREATE TABLE` rules for the table's format version and CRS.
    pub fn add_column(mut self, column: Column, position: ColumnPosition) -> Self {
        self.changes.push(SchemaChange::Add { column, position });
        self
    }

    /// Drops a top-level column from the current schema (its values stay in the data files
    /// and in older schemas, so time travel still reads them).
    pub fn drop_column(mut self, name: impl Into<String>) -> Self {
        self.changes.push(SchemaChange::Drop(name.into()));
        self
    }

    /// Renames a top-level column; its field id stays, so every file reads under the new name.
    pub fn rename_column(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.changes.push(SchemaChange::Rename {
            from: from.into(),
            to: to.into(),
        });
        self
    }

    /// Validates the changes on the table's latest metadata and commits the new schema,
    /// returning the table at the new version. A change Iceberg's rules refuse is
    /// [`Error::SchemaChange`] naming the fix, and nothing is written. When another writer
    /// committed first, the change is re-applied on the newer metadata (under
    /// `commit.retry.*`) if that writer left the schema as it was; a concurrent schema change
    /// is [`Error::CommitConflict`] (the changes were decided on the old schema: re-run them).
    /// No changes commit nothing.
    pub fn commit(self) -> Result<Table> {
        if self.changes.is_empty() {
            return Ok(self.table.clone());
        }
        let change = SchemaCommit {
            changes: &self.changes,
            base_schema: self.table.metadata().current_schema_id(),
        };
        commit_metadata(self.table, &change)
    }
}

/// The changes as the commit driver applies them: on the latest metadata, as long as its
/// schema is still the one they were decided on.
struct SchemaCommit<'c> {
    changes: &'c [SchemaChange],
    base_schema: i32,
}

impl MetadataChange for SchemaCommit<'_> {
    fn reapplies_on(&self, current: &Table) -> bool {
        current.metadata().current_schema_id() == self.base_schema
    }

    fn apply(&self, current: &Table) -> Result<Option<(TableMetadata, GeoFields)>> {
        let evolved = Evolution::apply(current, self.changes)?;
        let mut builder = TableMetadataBuilder::new_from_metadata(
            current.metadata().clone(),
            Some(current.metadata_location().to_owned()),
        )
        .add_current_schema(evolved.schema)?;
        if !evolved.removed.is_empty() {
            builder = builder.remove_properties(&evolved.removed)?;
        }
        if !evolved.set.is_empty() {
            builder = builder.set_properties(evolved.set)?;
        }
        Ok(Some((builder.build()?.metadata, evolved.geo)))
    }
}

/// The new schema and what else changes with it.
struct Evolution {
    schema: Schema,
    geo: GeoFields,
    set: HashMap<String, String>,
    removed: Vec<String>,
}

/// The working state while the changes are applied one by one.
struct Working<'t> {
    table: &'t Table,
    properties: TableProperties,
    fields: Vec<NestedFieldRef>,
    next_id: i32,
    geo: GeoFields,
    props: HashMap<String, String>,
}

impl Evolution {
    fn apply(table: &Table, changes: &[SchemaChange]) -> Result<Evolution> {
        let md = table.metadata();
        let schema = md.current_schema();
        let mut w = Working {
            table,
            properties: table.properties()?,
            fields: schema.as_struct().fields().to_vec(),
            next_id: md.last_column_id() + 1,
            geo: table.geo_fields().clone(),
            props: md.properties().clone(),
        };
        for change in changes {
            let refuse = |reason: String| Error::SchemaChange {
                table: table.ident().to_string(),
                change: change.describe(),
                reason,
            };
            match change {
                SchemaChange::Add { column, position } => w.add(column, position, &refuse)?,
                SchemaChange::Drop(name) => w.drop(name, &refuse)?,
                SchemaChange::Rename { from, to } => w.rename(from, to, &refuse)?,
            }
        }
        let kept: HashSet<i32> = w.fields.iter().map(|f| f.id).collect();
        let identifier: Vec<i32> = schema
            .identifier_field_ids()
            .filter(|id| kept.contains(id))
            .collect();
        let new_schema = Schema::builder()
            .with_schema_id(md.schemas_iter().map(|s| s.schema_id()).max().unwrap_or(0) + 1)
            .with_fields(w.fields)
            .with_identifier_field_ids(identifier)
            .build()?;
        let before = md.properties();
        let removed: Vec<String> = before
            .keys()
            .filter(|k| !w.props.contains_key(*k))
            .cloned()
            .collect();
        let set: HashMap<String, String> = w
            .props
            .into_iter()
            .filter(|(k, v)| before.get(k) != Some(v))
            .collect();
        Ok(Evolution {
            schema: new_schema,
            geo: w.geo,
            set,
            removed,
        })
    }
}

impl Working<'_> {
    fn position(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    fn names(&self) -> String {
        let names: Vec<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
        if names.is_empty() {
            "<none>".into()
        } else {
            names.join(", ")
        }
    }

    /// Names compare case-insensitively for clashes, as `CREATE TABLE` checks them (engines
    /// such as Spark resolve names case-insensitively by default).
    fn clash(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
            .map(|f| f.name.as_str())
    }

    fn missing(&self, name: &str) -> String {
        format!(
            "there is no top-level column {name:?}; the columns are: {}",
            self.names()
        )
    }

    fn add(
        &mut self,
        column: &Column,
        position: &ColumnPosition,
        refuse: &dyn Fn(String) -> Error,
    ) -> Result<()> {
        let name = &column.name;
        if name.is_empty() || name.contains('.') {
            return Err(refuse(
                "a top-level column name must be non-empty and hold no '.' (dots separate \
                 nested fields); choose another name"
                    .into(),
            ));
        }
        if column.required {
            return Err(refuse(
                "Iceberg refuses adding a required (NOT NULL) column: rows already written have \
                 no value for it; add it as a nullable column (leave out NOT NULL)"
                    .into(),
            ));
        }
        if let Some(existing) = self.clash(name) {
            return Err(refuse(format!(
                "a column {existing:?} already exists (names compare case-insensitively); \
                 choose another name, or drop or rename {existing:?} first"
            )));
        }
        let version = self.table.format_version();
        if let Some(t) = column.data_type.column_type() {
            validate_declaration(name, &t, version)?;
        }
        if version != geoberg_crs::FormatVersion::V3 && column.data_type.needs_v3() {
            return Err(refuse(format!(
                "{} needs table format-version 3 and the table is at {version}; use microsecond \
                 timestamps",
                column.data_type
            )));
        }
        let at = match position {
            ColumnPosition::Last => self.fields.len(),
            ColumnPosition::First => 0,
            ColumnPosition::After(other) => match self.position(other) {
                Some(i) => i + 1,
                None => {
                    return Err(refuse(format!(
                        "AFTER {other:?}: {}; name one of them, or use FIRST",
                        self.missing(other)
                    )));
                }
            },
        };
        // Iceberg Java's addColumn: the column's id first, then its nested fields'.
        let id = self.next_id;
        let mut next = id + 1;
        let ty = column.data_type.iceberg_type(name, &mut next)?;
        self.next_id = next;
        self.fields
            .insert(at, Arc::new(NestedField::optional(id, name, ty)));
        if let DataType::Geo(t) = &column.data_type {
            self.geo.insert(id, t.clone());
        }
        Ok(())
    }

    fn drop(&mut self, name: &str, refuse: &dyn Fn(String) -> Error) -> Result<()> {
        let Some(at) = self.position(name) else {
            return Err(refuse(self.missing(name)));
        };
        let id = self.fields[at].id;
        let md = self.table.metadata();
        let ident = self.table.ident();
        if md
            .default_partition_spec()
            .fields()
            .iter()
            .any(|p| p.source_id == id)
        {
            return Err(refuse(format!(
                "the table is partitioned by it (a partition source must stay in the schema); \
                 change the partitioning of {ident} first, or keep the column"
            )));
        }
        if md
            .default_sort_order()
            .fields
            .iter()
            .any(|s| s.source_id == id)
        {
            return Err(refuse(
                "the table's sort order sorts by it; replace the sort order first".into(),
            ));
        }
        if md.current_schema().identifier_field_ids().any(|i| i == id) {
            return Err(refuse(
                "it is an identifier field of the schema (Iceberg refuses dropping one); \
                 remove it from the identifier fields first"
                    .into(),
            ));
        }
        let index_key = format!("{SPATIAL_INDEX_PROPERTY_PREFIX}{name}");
        if self.props.contains_key(&index_key) {
            return Err(refuse(format!(
                "a spatial index is recorded on it ({index_key}), which later compactions would \
                 reuse; run ALTER TABLE {ident} UNSET TBLPROPERTIES ('{index_key}') first"
            )));
        }
        if let Some(cell) = &self.properties.hilbert_cell
            && (cell.column == name || cell.cell_column() == name)
        {
            return Err(refuse(format!(
                "the Hilbert-cell partition column {:?} derives from {:?} ({HILBERT_CELL_PROPERTY}); \
                 keep the column",
                cell.cell_column(),
                cell.column
            )));
        }
        if let Some(bbox) = self.bbox_columns_of(name)? {
            return Err(refuse(format!(
                "its bbox columns {} are filled from it on every append; drop them first \
                 (ALTER TABLE {ident} DROP COLUMN {}, ...), then the geometry",
                bbox.join(", "),
                bbox[0]
            )));
        }
        self.fields.remove(at);
        // Java's applyChangesToMetricsConfig drops the dropped column's metrics keys.
        // geoberg's column-keyed properties go with it.
        self.props
            .retain(|k, _| k == BBOX_SOURCE_PROPERTY || renamed_key(k, name, name).is_none());
        if self.props.get(BBOX_SOURCE_PROPERTY).map(String::as_str) == Some(name) {
            self.props.remove(BBOX_SOURCE_PROPERTY);
        }
        Ok(())
    }

    /// The bbox columns still in the working schema that are filled from geometry `name`.
    fn bbox_columns_of(&self, name: &str) -> Result<Option<Vec<String>>> {
        let Some(found) = self.table.bbox_columns(name)? else {
            return Ok(None);
        };
        let present: Vec<String> = found
            .ids
            .iter()
            .filter_map(|id| {
                self.fields
                    .iter()
                    .find(|f| f.id == *id)
                    .map(|f| f.name.clone())
            })
            .collect();
        Ok((!present.is_empty()).then_some(present))
    }

    fn rename(&mut self, from: &str, to: &str, refuse: &dyn Fn(String) -> Error) -> Result<()> {
        let Some(at) = self.position(from) else {
            return Err(refuse(self.missing(from)));
        };
        if from == to {
            return Ok(());
        }
        if to.is_empty() || to.contains('.') {
            return Err(refuse(
                "a top-level column name must be non-empty and hold no '.'; choose another name"
                    .into(),
            ));
        }
        if let Some(existing) = self.clash(to).filter(|e| *e != from) {
            return Err(refuse(format!(
                "a column {existing:?} already exists (names compare case-insensitively); \
                 choose another name, or drop or rename {existing:?} first"
            )));
        }
        let ident = self.table.ident();
        if let Some(cell) = &self.properties.hilbert_cell
            && (cell.column == from || cell.cell_column() == from)
        {
            return Err(refuse(format!(
                "the Hilbert-cell partition column {:?} is named after geometry column {:?} \
                 ({HILBERT_CELL_PROPERTY}); keep both names",
                cell.cell_column(),
                cell.column
            )));
        }
        let id = self.fields[at].id;
        if self.is_bbox_column(id)? {
            return Err(refuse(format!(
                "it is a bbox column, found by its name and filled on every append; keep the \
                 name, or drop the bbox columns of {ident} and add them again"
            )));
        }
        let mut renamed = (*self.fields[at]).clone();
        renamed.name = to.to_string();
        self.fields[at] = Arc::new(renamed);
        // Column-keyed properties follow the column (Java's applyChangesToMetricsConfig for
        // the metrics keys).
        let moved: Vec<(String, String)> = self
            .props
            .keys()
            .filter_map(|k| renamed_key(k, from, to).map(|n| (k.clone(), n)))
            .collect();
        for (old, new) in moved {
            if let Some(v) = self.props.remove(&old) {
                self.props.insert(new, v);
            }
        }
        if let Some(v) = self.props.get_mut(BBOX_SOURCE_PROPERTY)
            && v == from
        {
            *v = to.to_string();
        }
        // `write.sort-order` names its columns: it follows too (a value that does not parse
        // is left for `SET TBLPROPERTIES` to fix).
        if let Some(v) = self.props.get_mut(SORT_ORDER_PROPERTY)
            && let Ok(order) = v.parse::<geoberg_sql::SortOrder>()
        {
            let renamed = order.rename_column(from, to);
            if renamed != order {
                *v = renamed.to_string();
            }
        }
        Ok(())
    }

    /// Whether field `id` is one of the table's bbox columns (of any geometry column).
    fn is_bbox_column(&self, id: i32) -> Result<bool> {
        for g in self.table.geo_columns() {
            if let Some(b) = self.table.bbox_columns(&g.name)?
                && b.ids.contains(&id)
            {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The key a column-keyed property `key` gets when column `from` becomes `to`; `None` when the
/// key is not about `from`.
fn renamed_key(key: &str, from: &str, to: &str) -> Option<String> {
    if let Some(column) = key.strip_prefix(METRICS_COLUMN_PREFIX) {
        if column == from {
            return Some(format!("{METRICS_COLUMN_PREFIX}{to}"));
        }
        let nested = column.strip_prefix(from)?.strip_prefix('.')?;
        return Some(format!("{METRICS_COLUMN_PREFIX}{to}.{nested}"));
    }
    for prefix in [SPATIAL_INDEX_PROPERTY_PREFIX, SOURCE_CRS_PROPERTY_PREFIX] {
        if key.strip_prefix(prefix) == Some(from) {
            return Some(format!("{prefix}{to}"));
        }
    }
    if key != BBOX_SOURCE_PROPERTY && key.strip_prefix(BBOX_COLUMNS_PROPERTY_PREFIX) == Some(from) {
        return Some(format!("{BBOX_COLUMNS_PROPERTY_PREFIX}{to}"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::renamed_key;

    #[test]
    fn column_keyed_properties_follow_a_rename() {
        let m = "write.metadata.metrics.column.";
        assert_eq!(
            renamed_key(&format!("{m}geom"), "geom", "g").as_deref(),
            Some("write.metadata.metrics.column.g")
        );
        assert_eq!(
            renamed_key(&format!("{m}s.a"), "s", "t").as_deref(),
            Some("write.metadata.metrics.column.t.a")
        );
        assert_eq!(renamed_key(&format!("{m}so"), "s", "t"), None);
        assert_eq!(
            renamed_key("geoberg.spatial-index.geom", "geom", "g").as_deref(),
            Some("geoberg.spatial-index.g")
        );
        assert_eq!(
            renamed_key("geoberg.bbox-columns.source", "source", "x"),
            None
        );
        assert_eq!(
            renamed_key("write.target-file-size-bytes", "geom", "g"),
            None
        );
    }
}
