//! Generated data-file entries for the planning benches: tile `i` of a `side x side` grid over
//! lon/lat, with v3 geometry bounds, `id` bounds and counts, as a writer would record them. The
//! benches commit these with `stage_data_files`; only the Parquet files are absent (planning
//! never opens them).

use std::collections::HashMap;

use geoberg_geostats::encode_geospatial_bounds;
use geoberg_table::BBox;
use iceberg::spec::{DataContentType, DataFile, DataFileBuilder, DataFileFormat, Datum, Struct};

/// The entry of tile `i` of a `side x side` grid: `rows` rows (ids `i * rows ..`), at
/// `<data>/<file_name>`, `file_size` bytes.
pub fn tile_entry(
    data: &str,
    file_name: &str,
    side: usize,
    i: usize,
    rows: i64,
    file_size: u64,
) -> DataFile {
    let (w, h) = (360.0 / side as f64, 180.0 / side as f64);
    let (x, y) = (
        -180.0 + (i % side) as f64 * w,
        -90.0 + (i / side) as f64 * h,
    );
    let (lo, hi) = encode_geospatial_bounds(&BBox::new(x, y, x + w, y + h));
    DataFileBuilder::default()
        .content(DataContentType::Data)
        .file_path(format!("{data}/{file_name}"))
        .file_format(DataFileFormat::Parquet)
        .partition(Struct::empty())
        .record_count(rows as u64)
        .file_size_in_bytes(file_size)
        .value_counts(HashMap::from([(1, rows as u64), (2, rows as u64)]))
        .null_value_counts(HashMap::from([(1, 0), (2, 0)]))
        .column_sizes(HashMap::from([(1, 8 * rows as u64), (2, 40 * rows as u64)]))
        .lower_bounds(HashMap::from([
            (1, Datum::long(i as i64 * rows)),
            (2, Datum::binary(lo)),
        ]))
        .upper_bounds(HashMap::from([
            (1, Datum::long(i as i64 * rows + rows - 1)),
            (2, Datum::binary(hi)),
        ]))
        .build()
        .unwrap()
}
