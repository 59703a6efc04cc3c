//! `geoberg import`: a Parquet or GeoParquet file with WKB geometry into a table.
//!
//! The geometry column and its CRS come from the GeoParquet `geo` metadata when present
//! (`primary_column`, `encoding: WKB`, PROJJSON `id` or the OGC:CRS84 default), else from
//! `--geometry-column` / `--srid`. A missing table is created from the file's schema; if the
//! import then fails, the new table is dropped again, so a failed import of a new table leaves
//! nothing behind. Each `--rows-per-file` rows are one commit.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::RecordBatch;
use arrow_schema::{DataType as ArrowType, Field, Schema, SchemaRef};
use geoberg_crs::{Crs, FormatVersion, validate_declaration};
use geoberg_table::{Column, CreateTable, DataType, SRID_FIELD_METADATA, Table, TableIdent};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{Value, json};

use crate::args::{GlobalArgs, ImportArgs};
use crate::context::{Access, Context};
use crate::error::{CliError, Result};

/// What the file says about its geometry.
#[derive(Debug, Default)]
struct GeoParquet {
    primary_column: Option<String>,
    /// `Some(None)`: the column's `crs` is explicitly null (unknown).
    srid: Option<Option<i32>>,
    encoding: Option<String>,
}

/// Runs the import.
pub fn run(global: &GlobalArgs, args: &ImportArgs) -> Result<()> {
    if args.rows_per_file == 0 {
        return Err(CliError::invalid(
            "--rows-per-file",
            0,
            "at least 1, e.g. 1000000",
        ));
    }
    let ident = TableIdent::parse(&args.table)?;
    let file = File::open(&args.file).map_err(|e| CliError::io(&args.file, e))?;
    let parquet_err = |source| CliError::Parquet {
        path: args.file.clone(),
        source,
    };
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(parquet_err)?;
    let total_rows = builder.metadata().file_metadata().num_rows().max(0) as u64;
    let geo = geoparquet(&builder, &args.file)?;
    let schema = builder.schema().clone();
    let column = geometry_column(&schema, &geo, args)?;
    let srid = srid(&geo, &column, args)?;

    // Checked before the catalog is created: a file that cannot become a table writes nothing.
    let planned = create_from_schema(&schema, &column, srid);
    let ctx = match Context::open(global, Access::Existing) {
        Err(CliError::NoCatalog { .. }) if planned.is_err() => return planned.map(|_| ()),
        Err(CliError::NoCatalog { .. }) => Context::open(global, Access::Create)?,
        other => other?,
    };
    let out = ctx.output;
    let existing = ctx.catalog.metadata_location(&ident)?.is_some();
    let table = if existing {
        Table::load(ctx.dyn_catalog(), &ident)?
    } else {
        let create = planned?;
        let namespace = ident.namespace_str();
        if !ctx.catalog.namespace_exists(&namespace)? {
            ctx.catalog.create_namespace(&namespace)?;
        }
        create.create(ctx.dyn_catalog(), &ident)?
    };

    let start = Instant::now();
    let bar = out.bar(total_rows, "importing", "rows");
    let reader = builder.build().map_err(parquet_err)?;
    let result = append_all(table, reader, &column, srid, args.rows_per_file, &bar);
    bar.finish_and_clear();
    let (table, rows, files) = match result {
        Ok(done) => done,
        Err(e) => {
            if !existing {
                drop_new_table(&ctx, &ident);
            }
            return Err(e);
        }
    };
    out.emit(
        format!(
            "imported {rows} rows from {} into {} ({files} files{}) in {:.1} s",
            args.file.display(),
            table.ident(),
            if existing { "" } else { ", table created" },
            start.elapsed().as_secs_f64()
        ),
        json!({
            "table": table.ident().to_string(),
            "rows": rows,
            "files": files,
            "created": !existing,
            "geometry_column": column,
            "srid": srid,
        }),
    );
    Ok(())
}

/// Reads the GeoParquet `geo` key-value metadata, if any.
fn geoparquet(builder: &ParquetRecordBatchReaderBuilder<File>, path: &Path) -> Result<GeoParquet> {
    let Some(text) = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|e| e.key == "geo"))
        .and_then(|e| e.value.clone())
    else {
        return Ok(GeoParquet::default());
    };
    let geo: Value = serde_json::from_str(&text).map_err(|e| {
        CliError::invalid(
            "GeoParquet metadata",
            path.display(),
            format!("the `geo` key is not JSON ({e}); rewrite the file's metadata"),
        )
    })?;
    let primary = geo
        .get("primary_column")
        .and_then(Value::as_str)
        .map(str::to_string);
    let meta = primary
        .as_deref()
        .and_then(|p| geo.get("columns").and_then(|c| c.get(p)));
    Ok(GeoParquet {
        primary_column: primary,
        srid: meta.map(|m| match m.get("crs") {
            // Absent: the GeoParquet default, OGC:CRS84 (lon/lat, 4326).
            None => Some(4326),
            Some(Value::Null) => None,
            Some(crs) => projjson_srid(crs),
        }),
        encoding: meta
            .and_then(|m| m.get("encoding"))
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// The EPSG code of a PROJJSON CRS (`id` or the first of `ids`), OGC CRS84 as 4326.
fn projjson_srid(crs: &Value) -> Option<i32> {
    if let Some(s) = crs.as_str() {
        return s.parse::<Crs>().ok().and_then(|c| c.srid());
    }
    let id = crs
        .get("id")
        .or_else(|| crs.get("ids").and_then(|ids| ids.get(0)))?;
    let authority = id.get("authority")?.as_str()?;
    let code = id.get("code")?;
    if authority.eq_ignore_ascii_case("EPSG") {
        let code = code
            .as_i64()
            .or_else(|| code.as_str().and_then(|s| s.parse().ok()))?;
        return i32::try_from(code).ok();
    }
    (authority.eq_ignore_ascii_case("OGC") && code.as_str() == Some("CRS84")).then_some(4326)
}

fn geometry_column(schema: &SchemaRef, geo: &GeoParquet, args: &ImportArgs) -> Result<String> {
    let name = match (&args.geometry_column, &geo.primary_column) {
        (Some(c), _) => c.clone(),
        (None, Some(c)) => c.clone(),
        (None, None) => ["geometry", "geom", "wkb_geometry"]
            .into_iter()
            .find(|n| schema.field_with_name(n).is_ok())
            .ok_or_else(|| {
                CliError::invalid(
                    "file",
                    args.file.display(),
                    "no GeoParquet metadata and no column named geometry or geom; pass \
                     --geometry-column <WKB column>",
                )
            })?
            .to_string(),
    };
    let field = schema.field_with_name(&name).map_err(|_| {
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        CliError::invalid(
            "--geometry-column",
            &name,
            format!(
                "the file has no such column; its columns are {}",
                names.join(", ")
            ),
        )
    })?;
    if !matches!(
        field.data_type(),
        ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView
    ) {
        return Err(CliError::invalid(
            "--geometry-column",
            &name,
            format!(
                "it is {}, not binary WKB; pass the WKB column (GeoArrow native encodings are \
                 not imported)",
                field.data_type()
            ),
        ));
    }
    if let (Some(enc), Some(primary)) = (&geo.encoding, &geo.primary_column)
        && primary == &name
        && !enc.eq_ignore_ascii_case("wkb")
    {
        return Err(CliError::Unsupported {
            what: format!("GeoParquet encoding {enc:?} of column {name}"),
            fix: "write the file with WKB encoding (GeoPandas: to_parquet(..., \
                  geometry_encoding='WKB'))"
                .into(),
        });
    }
    Ok(name)
}

/// `--srid`, else the file's CRS, else 4326; a file CRS and a different `--srid` conflict.
fn srid(geo: &GeoParquet, column: &str, args: &ImportArgs) -> Result<i32> {
    let from_file = (geo.primary_column.as_deref() == Some(column))
        .then_some(geo.srid)
        .flatten();
    match (args.srid, from_file) {
        (Some(s), Some(Some(f))) if s != f => Err(CliError::invalid(
            "--srid",
            s,
            format!(
                "the file declares EPSG:{f} for {column}; relabelling would misplace every \
                 value: drop --srid, or reproject the file to EPSG:{s} first"
            ),
        )),
        (Some(s), _) => Ok(s),
        (None, Some(Some(f))) => Ok(f),
        (None, Some(None)) => Err(CliError::invalid(
            "GeoParquet CRS",
            "unknown",
            format!(
                "the file's CRS for {column} is unknown or not an EPSG code; pass --srid \
                 (0, 3857 or 4326)"
            ),
        )),
        (None, None) => Ok(4326),
    }
}

/// The table the file's schema describes, with `column` as `geometry(srid)`; the CRS rules are
/// checked here, before anything is written.
fn create_from_schema(schema: &Schema, column: &str, srid: i32) -> Result<CreateTable> {
    let geometry = DataType::geometry(srid);
    if let Some(t) = geometry.column_type() {
        validate_declaration(column, &t, FormatVersion::V3).map_err(geoberg_table::Error::from)?;
    }
    let mut columns = Vec::with_capacity(schema.fields().len());
    for f in schema.fields() {
        let data_type = if f.name() == column {
            geometry.clone()
        } else {
            DataType::from_arrow(f.data_type()).ok_or_else(|| CliError::Unsupported {
                what: format!("column {} of Arrow type {}", f.name(), f.data_type()),
                fix: "geoberg tables hold boolean, integer, float, string, binary, date and \
                      timestamp columns; drop or cast the column before importing"
                    .into(),
            })?
        };
        let c = Column::new(f.name(), data_type);
        columns.push(if f.is_nullable() { c } else { c.required() });
    }
    Ok(CreateTable::new(columns))
}

/// Appends the file in commits of `rows_per_file` rows; returns the table, rows and files.
fn append_all(
    mut table: Table,
    reader: impl Iterator<Item = std::result::Result<RecordBatch, arrow_schema::ArrowError>>,
    column: &str,
    srid: i32,
    rows_per_file: usize,
    bar: &indicatif::ProgressBar,
) -> Result<(Table, u64, u64)> {
    let (mut rows, mut files) = (0u64, 0u64);
    let mut pending: Vec<RecordBatch> = Vec::new();
    let mut pending_rows = 0usize;
    let mut flush =
        |table: Table, pending: &mut Vec<RecordBatch>, n: &mut usize| -> Result<Table> {
            if pending.is_empty() {
                return Ok(table);
            }
            let (table, report) = table.append(pending)?;
            rows += report.rows;
            files += report.data_files as u64;
            bar.inc(*n as u64);
            pending.clear();
            *n = 0;
            Ok(table)
        };
    for batch in reader {
        let mut batch = label_srid(&batch?, column, srid)?;
        while batch.num_rows() > 0 {
            let take = (rows_per_file - pending_rows).min(batch.num_rows());
            pending.push(batch.slice(0, take));
            pending_rows += take;
            batch = batch.slice(take, batch.num_rows() - take);
            if pending_rows == rows_per_file {
                table = flush(table, &mut pending, &mut pending_rows)?;
            }
        }
    }
    table = flush(table, &mut pending, &mut pending_rows)?;
    Ok((table, rows, files))
}

/// Puts the SRID on the geometry field so that `append` checks every value against the column.
fn label_srid(batch: &RecordBatch, column: &str, srid: i32) -> Result<RecordBatch> {
    let schema = batch.schema();
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let f = f.as_ref().clone();
            if f.name() == column {
                let mut meta = f.metadata().clone();
                meta.insert(SRID_FIELD_METADATA.to_string(), srid.to_string());
                f.with_metadata(meta)
            } else {
                f
            }
        })
        .collect();
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        batch.columns().to_vec(),
    )?)
}

/// Undoes the creation of a table whose import failed: catalog row and folder.
fn drop_new_table(ctx: &Context, ident: &TableIdent) {
    if let Ok(table) = Table::load(ctx.dyn_catalog(), ident) {
        let _ = table.drop_table(true);
    }
}
