//! Synthetic input for the rewrite benchmark: uniform points over lon [-180, 180) × lat
//! [-85, 85) with eight columns (id, x, y, WKB point, bbox struct, name, value, category),
//! written unclustered to several Parquet files.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, Float64Array, Int64Array, RecordBatch, StringArray, StructArray,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use geoberg_rewrite::{Extent, InputFile};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Writes `rows` points into `files` files in `dir`; returns their manifest facts.
pub fn write_points(dir: &Path, rows: usize, files: usize, seed: u64) -> Vec<InputFile> {
    let bbox_fields = Fields::from(vec![
        Field::new("xmin", DataType::Float64, false),
        Field::new("ymin", DataType::Float64, false),
        Field::new("xmax", DataType::Float64, false),
        Field::new("ymax", DataType::Float64, false),
    ]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("x", DataType::Float64, false),
        Field::new("y", DataType::Float64, false),
        Field::new("geom", DataType::Binary, true),
        Field::new("bbox", DataType::Struct(bbox_fields.clone()), true),
        Field::new("name", DataType::Utf8, true),
        Field::new("value", DataType::Float64, true),
        Field::new("category", DataType::Utf8, true),
    ]));
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).unwrap()))
        .build();
    let mut rng = Rng(seed);
    let per_file = rows.div_ceil(files);
    let mut out = Vec::new();
    for f in 0..files {
        let path = dir.join(format!("points-{seed}-{f:04}.parquet"));
        let mut w = ArrowWriter::try_new(
            File::create(&path).unwrap(),
            schema.clone(),
            Some(props.clone()),
        )
        .unwrap();
        let n_file = per_file.min(rows - f * per_file);
        let mut extent: Option<Extent> = None;
        let mut done = 0;
        while done < n_file {
            let n = (n_file - done).min(65_536);
            let first = (f * per_file + done) as i64;
            let xs: Vec<f64> = (0..n).map(|_| rng.unit() * 360.0 - 180.0).collect();
            let ys: Vec<f64> = (0..n).map(|_| rng.unit() * 170.0 - 85.0).collect();
            let wkb: Vec<[u8; 21]> = xs
                .iter()
                .zip(&ys)
                .map(|(x, y)| {
                    let mut b = [0u8; 21];
                    b[0] = 1;
                    b[1] = 1;
                    b[5..13].copy_from_slice(&x.to_le_bytes());
                    b[13..21].copy_from_slice(&y.to_le_bytes());
                    b
                })
                .collect();
            for (x, y) in xs.iter().zip(&ys) {
                let e = Extent::new(*x, *y, *x, *y);
                extent = Some(extent.map_or(e, |a| a.union(&e)));
            }
            let x_arr: ArrayRef = Arc::new(Float64Array::from(xs.clone()));
            let y_arr: ArrayRef = Arc::new(Float64Array::from(ys.clone()));
            let bbox = StructArray::new(
                bbox_fields.clone(),
                vec![x_arr.clone(), y_arr.clone(), x_arr.clone(), y_arr.clone()],
                None,
            );
            let names: Vec<String> = (0..n)
                .map(|i| format!("place-{}", (first as usize + i) % 100_003))
                .collect();
            let categories: Vec<&str> = (0..n)
                .map(|_| {
                    [
                        "road", "building", "water", "park", "shop", "school", "rail", "farm",
                    ][(rng.next() % 8) as usize]
                })
                .collect();
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(Int64Array::from_iter_values(first..first + n as i64)),
                    x_arr,
                    y_arr,
                    Arc::new(BinaryArray::from_iter_values(wkb.iter())),
                    Arc::new(bbox),
                    Arc::new(StringArray::from(names)),
                    Arc::new(Float64Array::from_iter_values(
                        (0..n).map(|_| rng.unit() * 1000.0),
                    )),
                    Arc::new(StringArray::from(categories)),
                ],
            )
            .unwrap();
            w.write(&batch).unwrap();
            done += n;
        }
        w.close().unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        let mut file = InputFile::new(path.display().to_string(), size, n_file as u64);
        file.bbox = extent;
        out.push(file);
    }
    out
}
