//! `CALL <catalog>.system.upgrade_geometry(table => 'db.t', column => 'geom', srid => 4326
//! [, target => 'db.t_v3'])` (seed 004, "Upgrade Existing Geometry Tables"): copy a table
//! whose geometry column declares no CRS (WKB in a binary column, what tables written before
//! `geometry(<srid>)` existed hold, usually format-version 1 or 2) into a new format-version 3
//! table whose column is `geometry(<srid>)`.
//!
//! Every value's SRID is checked before anything is written: an EWKB value carries its own
//! SRID, a plain (ISO) WKB value is labelled with the given one. Values whose SRID differs are
//! counted by SRID and the copy is refused with the seed's fix (`ST_SetSRID` to label,
//! `ST_Transform` to reproject); a value that is not WKB is an error naming its data file and
//! position. The copy is one append commit on the new table (all or nothing: on failure the
//! new table is dropped with its files); its row count must equal the source's. The source
//! table is never written: the caller swaps names afterwards (`ALTER TABLE ... RENAME TO`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{Field, Schema};
use geoberg_crs::ColumnType;
use iceberg::spec::DataFile;

use crate::create::CreateTable;
use crate::error::{Error, Result};
use crate::ident::TableIdent;
use crate::metadata_columns::{POS_COLUMN, is_position_column};
use crate::properties::LEGACY_GEOMETRY_PROPERTY;
use crate::schema::{Column, DataType, PartitionField};
use crate::table::Table;
use crate::write::SRID_FIELD_METADATA;

/// The suffix of the default target name: `db.t` is copied to `db.t_v3`.
pub const UPGRADE_TARGET_SUFFIX: &str = "_v3";

/// What [`Table::upgrade_geometry`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradeReport {
    /// Rows of the source table (deleted rows excluded).
    pub source_rows: u64,
    /// Rows the new table holds.
    pub copied_rows: u64,
    /// The new table, `ns.name`.
    pub target: String,
    /// The SRID the new column declares.
    pub srid: i32,
    /// Values that were plain WKB, labelled with `srid`.
    pub labelled_values: u64,
    /// EWKB values whose own SRID was already `srid`.
    pub ewkb_values: u64,
    /// Null geometries (copied as null).
    pub null_values: u64,
}

/// The SRID census of a column, from reading every value.
#[derive(Debug, Default)]
struct Census {
    rows: u64,
    labelled: u64,
    ewkb: u64,
    nulls: u64,
    /// Values with another SRID, by that SRID.
    mismatched: BTreeMap<i32, u64>,
}

impl Table {
    /// Copies this table into a new format-version 3 table (`target`, default
    /// `<name>`[`UPGRADE_TARGET_SUFFIX`] in the same namespace) whose `column` is
    /// `geometry(srid)`. See the module docs of `ops/upgrade_geometry.rs` for the rules;
    /// refused without writing anything when a value's SRID differs from `srid`. Both the
    /// check and the copy read this handle's snapshot, so a write to the source meanwhile is
    /// not copied (reload and upgrade again, or append it to the new table).
    ///
    /// ```no_run
    /// # fn f(table: geoberg_table::Table) -> geoberg_table::Result<()> {
    /// let (upgraded, report) = table.upgrade_geometry("geom", 4326, None)?;
    /// assert_eq!(report.copied_rows, report.source_rows);
    /// println!("{} -> {}", table.ident(), upgraded.ident());
    /// # Ok(()) }
    /// ```
    pub fn upgrade_geometry(
        &self,
        column: &str,
        srid: i32,
        target: Option<&TableIdent>,
    ) -> Result<(Table, UpgradeReport)> {
        let geo = self.geo_column(column)?;
        if geo.column_type != ColumnType::GeometryWithoutCrs {
            return Err(Error::WrongColumnType {
                column: column.to_string(),
                found: geo.column_type.to_string(),
                expected: "a geometry column without a declared CRS (it already declares one; \
                           nothing to upgrade)"
                    .into(),
            });
        }
        let target = match target {
            Some(t) => t.clone(),
            None => TableIdent::new(
                &self.ident().namespace_str(),
                &format!("{}{UPGRADE_TARGET_SUFFIX}", self.ident().name()),
            )?,
        };
        if target == *self.ident() {
            return Err(Error::InvalidData(format!(
                "the target of upgrade_geometry is the source table {target}; name a new \
                 table (target => '{}')",
                default_target_hint(self)
            )));
        }
        if self.catalog().metadata_location(&target)?.is_some() {
            return Err(Error::TableAlreadyExists(format!(
                "{target} (upgrade_geometry writes a new table; drop it or pass another target)"
            )));
        }
        // The new table's definition first: an SRID it cannot declare fails before any read.
        let create = self.upgraded_definition(column, srid)?;

        let census = self.srid_census(column, srid)?;
        if !census.mismatched.is_empty() {
            let mismatched: u64 = census.mismatched.values().sum();
            return Err(Error::UpgradeSridMismatch {
                table: self.ident().to_string(),
                column: column.to_string(),
                srid,
                values: census.rows - census.nulls,
                mismatched,
                by_srid: census
                    .mismatched
                    .iter()
                    .map(|(s, n)| format!("{n} with SRID {s}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }

        let new = create.create(Arc::clone(self.catalog()), &target)?;
        match self.copy_into(&new, column, srid) {
            Ok((table, copied)) if copied == census.rows => Ok((
                table,
                UpgradeReport {
                    source_rows: census.rows,
                    copied_rows: copied,
                    target: target.to_string(),
                    srid,
                    labelled_values: census.labelled,
                    ewkb_values: census.ewkb,
                    null_values: census.nulls,
                },
            )),
            Ok((table, copied)) => {
                let _ = table.drop_table(true);
                Err(Error::InvalidData(format!(
                    "upgrade_geometry copied {copied} rows of {} but read {} from the same \
                     snapshot; the new table {target} was dropped and nothing else changed. \
                     This is a bug in geoberg: please report it with the table's metadata file \
                     {}",
                    self.ident(),
                    census.rows,
                    self.metadata_location()
                )))
            }
            Err(e) => {
                let _ = new.drop_table(true);
                Err(e)
            }
        }
    }

    /// `CreateTable` for the upgraded copy: the same columns, partitioning and properties,
    /// `column` as `geometry(srid)`, format-version 3.
    fn upgraded_definition(&self, column: &str, srid: i32) -> Result<CreateTable> {
        let md = self.metadata();
        let schema = md.current_schema();
        let mut other_legacy = false;
        let columns: Vec<Column> = schema
            .as_struct()
            .fields()
            .iter()
            .map(|f| {
                let data_type = if f.name == column {
                    DataType::geometry(srid)
                } else {
                    match self.geo_columns().iter().find(|g| g.field_id == f.id) {
                        Some(g) => {
                            other_legacy |= g.column_type == ColumnType::GeometryWithoutCrs;
                            DataType::Geo(g.column_type.clone())
                        }
                        None => crate::schema::data_type_from_iceberg(&f.field_type),
                    }
                };
                let c = Column::new(f.name.clone(), data_type);
                if f.required { c.required() } else { c }
            })
            .collect();
        let mut create = CreateTable::new(columns).format_version(3);
        if other_legacy {
            create = create.allow_undeclared_crs();
        }
        for pf in md.default_partition_spec().fields() {
            let source = schema.field_by_id(pf.source_id).ok_or_else(|| {
                Error::corrupt(
                    self.metadata_location(),
                    format!("partition field {} has no source column", pf.name),
                )
            })?;
            create = create.partition_by(PartitionField {
                column: source.name.clone(),
                transform: pf.transform,
            });
        }
        for (k, v) in md.properties() {
            // Recomputed by the new table from its own columns.
            if k != LEGACY_GEOMETRY_PROPERTY && k != "format-version" {
                create = create.property(k.clone(), v.clone());
            }
        }
        // Fails here for an SRID a geometry column cannot declare (seed 004: 0, 3857, 4326).
        if let Some(declared) = DataType::geometry(srid).column_type() {
            geoberg_crs::validate_declaration(column, &declared, geoberg_crs::FormatVersion::V3)?;
        }
        Ok(create)
    }

    /// Reads every value of `column` (and where it lives) and counts SRIDs against `srid`.
    fn srid_census(&self, column: &str, srid: i32) -> Result<Census> {
        let mut census = Census::default();
        // Planned once; read one file at a time.
        let scan = self.scan().select([column]).with_file_position(true);
        for task in scan.plan_tasks()?.0 {
            for b in &scan.read_task(&task)? {
                census.rows += b.num_rows() as u64;
                let values = b
                    .column_by_name(column)
                    .ok_or_else(|| self.no_column(column))?;
                let values =
                    values
                        .as_binary_opt::<i32>()
                        .ok_or_else(|| Error::WrongColumnType {
                            column: column.to_string(),
                            found: values.data_type().to_string(),
                            expected: "WKB in a binary column".into(),
                        })?;
                let positions = b
                    .column_by_name(POS_COLUMN)
                    .and_then(|c| c.as_primitive_opt::<arrow_array::types::Int64Type>());
                for row in 0..values.len() {
                    if values.is_null(row) {
                        census.nulls += 1;
                        continue;
                    }
                    let info = geoberg_geostats::wkb_info(values.value(row)).map_err(|e| {
                        Error::MalformedGeometry {
                            table: self.ident().to_string(),
                            column: column.to_string(),
                            file: task.path().to_string(),
                            position: positions.map_or(row as i64, |p| p.value(row)),
                            reason: e.to_string(),
                        }
                    })?;
                    match info.srid {
                        None => census.labelled += 1,
                        Some(s) if s == srid => census.ewkb += 1,
                        Some(s) => *census.mismatched.entry(s).or_default() += 1,
                    }
                }
            }
        }
        Ok(census)
    }

    /// Writes every row into `new` (plain WKB labelled `srid`) and commits once; the rows
    /// committed.
    fn copy_into(&self, new: &Table, column: &str, srid: i32) -> Result<(Table, u64)> {
        let mut written: Vec<DataFile> = Vec::new();
        let result = (|| {
            let scan = self.scan();
            for task in scan.plan_tasks()?.0 {
                let batches = scan.read_task(&task)?;
                let labelled: Vec<RecordBatch> = batches
                    .iter()
                    .filter(|b| b.num_rows() > 0)
                    .map(|b| label(b, column, srid))
                    .collect::<Result<_>>()?;
                if !labelled.is_empty() {
                    written.extend(new.write_batches(&labelled)?);
                }
            }
            Ok::<_, Error>(())
        })();
        if let Err(e) = result {
            for f in &written {
                let _ = new.storage().delete(f.file_path());
            }
            return Err(e);
        }
        let copied: u64 = written.iter().map(|f| f.record_count()).sum();
        if written.is_empty() {
            return Ok((new.clone(), 0));
        }
        Ok((new.commit_data_files(written)?, copied))
    }

    fn no_column(&self, column: &str) -> Error {
        Error::InvalidData(format!(
            "the scan of {} returned no column {column:?}",
            self.ident()
        ))
    }
}

/// `db.t_v3` for `db.t`: the default target, for messages.
fn default_target_hint(table: &Table) -> String {
    format!("{}{UPGRADE_TARGET_SUFFIX}", table.ident())
}

/// The batch without the scan's metadata columns, `column` labelled `srid` for the writer
/// (an EWKB value's own SRID still wins, and was checked equal).
fn label(batch: &RecordBatch, column: &str, srid: i32) -> Result<RecordBatch> {
    let schema = batch.schema();
    let mut fields = Vec::new();
    let mut arrays = Vec::new();
    for (f, a) in schema.fields().iter().zip(batch.columns()) {
        if is_position_column(f.name()) {
            continue;
        }
        let field: Field = if f.name() == column {
            let mut metadata: HashMap<String, String> = f.metadata().clone();
            metadata.insert(SRID_FIELD_METADATA.to_string(), srid.to_string());
            f.as_ref().clone().with_metadata(metadata)
        } else {
            f.as_ref().clone()
        };
        fields.push(field);
        arrays.push(Arc::clone(a));
    }
    Ok(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?)
}
