//! Which output columns are written without a dictionary.
//!
//! Parquet writers build a dictionary for every column by default and fall back to plain pages
//! only once it outgrows its page limit (1 MiB in arrow-rs). For a column of mostly distinct
//! values (row ids, timestamps, measurements, WKB) that is wasted work: every value is hashed and
//! interned first, and a column that never reaches the limit (64 Ki int64 ids are 512 KiB) is
//! stored as a dictionary holding each value once plus an index per row. In a 2 M-point
//! `CREATE SPATIAL INDEX` (id + WKB point), interning the ids took about 7% of the CPU
//! (`parquet::util::interner::Interner::intern` and hash-table growth in `perf`).

use std::collections::HashSet;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use parquet::basic::Encoding;
use parquet::file::metadata::RowGroupMetaData;
use parquet::schema::types::ColumnPath;

/// Values looked at per column by [`distinct_columns`].
const SAMPLE: usize = 4096;

/// Leaf columns of `row_group` whose data pages are not all dictionary encoded (per the page
/// encoding statistics): their writer fell back to plain. Unknown when the writer recorded none.
pub(crate) fn plain_columns(row_group: Option<&RowGroupMetaData>) -> Vec<ColumnPath> {
    let Some(rg) = row_group else {
        return Vec::new();
    };
    rg.columns()
        .iter()
        .filter(|c| {
            c.page_encoding_stats_mask().is_some_and(|mask| {
                c.dictionary_page_offset().is_none()
                    || !(mask.is_only(Encoding::PLAIN_DICTIONARY)
                        || mask.is_only(Encoding::RLE_DICTIONARY))
            })
        })
        .map(|c| c.column_path().clone())
        .collect()
}

/// Top-level primitive, string and binary columns of `batch` whose values are mostly distinct:
/// more than half of an evenly spread sample of up to 4,096 non-null values differ. Every
/// geoberg Parquet writer (rewrites, and the table's appends) writes these without a
/// dictionary.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
///
/// let batch = RecordBatch::try_from_iter([
///     ("id", Arc::new(Int64Array::from_iter_values(0..1000)) as ArrayRef),
///     ("state", Arc::new(StringArray::from(vec!["CA"; 1000])) as ArrayRef),
/// ])
/// .unwrap();
/// let plain = geoberg_rewrite::distinct_columns(&batch);
/// assert_eq!(plain.iter().map(|c| c.string()).collect::<Vec<_>>(), ["id"]);
/// ```
pub fn distinct_columns(batch: &RecordBatch) -> Vec<ColumnPath> {
    batch
        .schema()
        .fields()
        .iter()
        .zip(batch.columns())
        .filter(|(_, column)| mostly_distinct(column.as_ref()))
        .map(|(field, _)| ColumnPath::new(vec![field.name().clone()]))
        .collect()
}

fn mostly_distinct(column: &dyn Array) -> bool {
    let rows = column.len();
    let sample = (0..rows)
        .step_by(rows.div_ceil(SAMPLE).max(1))
        .filter(|&i| column.is_valid(i));
    let data = column.to_data();
    let values: Vec<&[u8]> = match column.data_type() {
        DataType::Binary => {
            let a = column.as_binary::<i32>();
            sample.map(|i| a.value(i)).collect()
        }
        DataType::LargeBinary => {
            let a = column.as_binary::<i64>();
            sample.map(|i| a.value(i)).collect()
        }
        DataType::BinaryView => {
            let a = column.as_binary_view();
            sample.map(|i| a.value(i)).collect()
        }
        DataType::Utf8 => {
            let a = column.as_string::<i32>();
            sample.map(|i| a.value(i).as_bytes()).collect()
        }
        DataType::LargeUtf8 => {
            let a = column.as_string::<i64>();
            sample.map(|i| a.value(i).as_bytes()).collect()
        }
        DataType::Utf8View => {
            let a = column.as_string_view();
            sample.map(|i| a.value(i).as_bytes()).collect()
        }
        t if t.is_primitive() => {
            let (Some(width), Some(buffer)) = (t.primitive_width(), data.buffers().first()) else {
                return false;
            };
            let bytes = &buffer.as_slice()[data.offset() * width..];
            sample.map(|i| &bytes[i * width..(i + 1) * width]).collect()
        }
        _ => return false,
    };
    let distinct: HashSet<&[u8]> = values.iter().copied().collect();
    values.len() >= 64 && distinct.len() * 2 > values.len()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, BinaryArray, Float64Array, Int64Array, StringArray};

    use super::*;

    fn names(batch: &RecordBatch) -> Vec<String> {
        distinct_columns(batch).iter().map(|p| p.string()).collect()
    }

    #[test]
    fn unique_ids_and_geometries_go_plain_categories_keep_their_dictionary() {
        let n = 20_000i64;
        let columns: [(&str, ArrayRef); 5] = [
            (
                "id",
                Arc::new(Int64Array::from_iter_values((0..n).map(|i| i * 7919 % n))),
            ),
            (
                "category",
                Arc::new(StringArray::from_iter_values(
                    (0..n).map(|i| format!("c{}", i % 12)),
                )),
            ),
            (
                "geom",
                Arc::new(BinaryArray::from_iter_values(
                    (0..n).map(|i| (i as f64).to_le_bytes()),
                )),
            ),
            (
                "flag",
                Arc::new(Int64Array::from_iter_values((0..n).map(|i| i % 2))),
            ),
            (
                "value",
                Arc::new(Float64Array::from_iter_values(
                    (0..n).map(|i| i as f64 / 3.0),
                )),
            ),
        ];
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        assert_eq!(names(&batch), ["id", "geom", "value"]);
        // A slice reads its own values (the buffer offset is applied).
        assert_eq!(names(&batch.slice(5_000, 1_000)), ["id", "geom", "value"]);
    }

    #[test]
    fn too_few_values_or_all_null_keep_the_default() {
        let few: ArrayRef = Arc::new(Int64Array::from_iter_values(0..10));
        assert!(names(&RecordBatch::try_from_iter([("id", few)]).unwrap()).is_empty());
        let nulls: ArrayRef = Arc::new(Int64Array::new_null(10_000));
        assert!(names(&RecordBatch::try_from_iter([("id", nulls)]).unwrap()).is_empty());
    }
}
