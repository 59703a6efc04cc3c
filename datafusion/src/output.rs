//! Results for people and programs: a text table (Arrow's pretty printer, as DataFusion
//! prints) and JSON rows, geometry shown as WKT.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use datafusion::error::{DataFusionError, Result};
use sedona_schema::datatypes::SedonaType;

/// The batches as a text table, geometry and geography as WKT.
pub fn pretty_format(batches: &[RecordBatch]) -> Result<String> {
    let display = batches.iter().map(with_wkt).collect::<Result<Vec<_>>>()?;
    Ok(arrow::util::pretty::pretty_format_batches(&display)?.to_string())
}

/// The rows of the batches as JSON objects keyed by column name (geometry as WKT; NULLs are
/// JSON `null`).
pub fn json_rows(batches: &[RecordBatch]) -> Result<Vec<serde_json::Value>> {
    let display = batches.iter().map(with_wkt).collect::<Result<Vec<_>>>()?;
    let mut writer = arrow_json::ArrayWriter::new(Vec::new());
    for batch in &display {
        writer.write(batch)?;
    }
    writer.finish()?;
    let bytes = writer.into_inner();
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| DataFusionError::Execution(format!("JSON rows: {e}")))?;
    Ok(match value {
        serde_json::Value::Array(rows) => rows,
        other => vec![other],
    })
}

/// `batch` with each WKB geometry column replaced by its WKT text.
fn with_wkt(batch: &RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        let is_wkb = matches!(
            SedonaType::from_storage_field(field),
            Ok(SedonaType::Wkb(..) | SedonaType::WkbLarge(..) | SedonaType::WkbView(..))
        );
        if !is_wkb {
            fields.push(field.as_ref().clone());
            columns.push(Arc::clone(column));
            continue;
        }
        let binary: BinaryArray = match column.data_type() {
            DataType::Binary => column.as_binary::<i32>().clone(),
            _ => arrow::compute::cast(column, &DataType::Binary)?
                .as_binary::<i32>()
                .clone(),
        };
        let text: StringArray = binary.iter().map(|v| v.map(wkt_of)).collect();
        fields.push(Field::new(
            field.name(),
            DataType::Utf8,
            field.is_nullable(),
        ));
        columns.push(Arc::new(text));
    }
    let schema = Arc::new(Schema::new(fields));
    Ok(RecordBatch::try_new(schema, columns)?)
}

/// WKT of a WKB value; a value that does not decode is shown as such, not an error, so that
/// one bad row does not hide the others.
fn wkt_of(wkb: &[u8]) -> String {
    let Ok(geometry) = wkb::reader::read_wkb(wkb) else {
        return format!("<invalid WKB, {} bytes>", wkb.len());
    };
    let mut out = String::new();
    match wkt::to_wkt::write_geometry(&mut out, &geometry) {
        Ok(()) => out,
        Err(_) => format!("<WKB without WKT, {} bytes>", wkb.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_prints_as_wkt_in_tables_and_json() {
        let crs_field = crate::geo_schema::geo_field(
            "geom",
            &geoberg_crs::ColumnType::geometry(geoberg_crs::Crs::OgcCrs84),
            true,
            &Default::default(),
        )
        .unwrap();
        let point = [
            &[1u8, 1, 0, 0, 0][..],
            &1.5f64.to_le_bytes(),
            &2.0f64.to_le_bytes(),
        ]
        .concat();
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            crs_field,
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(arrow_array::Int64Array::from(vec![7, 8])),
                Arc::new(BinaryArray::from(vec![Some(point.as_slice()), None])),
            ],
        )
        .unwrap();
        let text = pretty_format(std::slice::from_ref(&batch)).unwrap();
        assert!(text.contains("POINT(1.5 2)"), "{text}");
        let rows = json_rows(&[batch]).unwrap();
        assert_eq!(rows[0]["id"], 7);
        assert_eq!(rows[0]["geom"], "POINT(1.5 2)");
        assert!(rows[1].get("geom").is_none_or(|v| v.is_null()), "{rows:?}");
    }
}
