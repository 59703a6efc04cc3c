//! Rewrites of geography columns: keyed on the sphere, and every geography column of every
//! output file bounded on the sphere (wrapping the antimeridian where that is narrower).

use std::fs::File;
use std::sync::Arc;

use arrow_array::{Array, BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use geoberg_geostats::{BBox, geography_bbox_of_wkb, geography_box_contains};
use geoberg_rewrite::{
    DirectoryStorage, Extent, GeoColumns, HilbertSpec, InputFile, LocalFiles, RewriteOptions,
    RewritePlan, execute, plan_rewrite,
};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn line(coords: &[(f64, f64)]) -> Vec<u8> {
    let mut w = vec![1u8, 2, 0, 0, 0];
    w.extend((coords.len() as u32).to_le_bytes());
    for (x, y) in coords {
        w.extend(x.to_le_bytes());
        w.extend(y.to_le_bytes());
    }
    w
}

fn point(x: f64, y: f64) -> Vec<u8> {
    [&[1u8, 1, 0, 0, 0][..], &x.to_le_bytes(), &y.to_le_bytes()].concat()
}

fn bbox(e: &Extent) -> BBox {
    BBox::new(e.min_x, e.min_y, e.max_x, e.max_y)
}

#[test]
fn every_geography_column_is_bounded_on_the_sphere() {
    let dir = tempfile::tempdir().unwrap();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("geog", DataType::Binary, true),
        Field::new("route", DataType::Binary, true),
    ]));
    // Points either side of the antimeridian; routes across it (and one over the pole).
    let n = 400i64;
    let geog: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let x = 170.0 + (i % 20) as f64;
            point(
                if x > 180.0 { x - 360.0 } else { x },
                (i / 20) as f64 - 10.0,
            )
        })
        .collect();
    let route: Vec<Vec<u8>> = (0..n)
        .map(|i| match i % 3 {
            0 => line(&[
                (175.0, i as f64 / 10.0 - 20.0),
                (-175.0, i as f64 / 10.0 - 20.0),
            ]),
            1 => line(&[(-90.0, 60.0), (90.0, 60.0)]),
            _ => point(179.9, 0.0),
        })
        .collect();
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(0..n)),
            Arc::new(BinaryArray::from_iter_values(geog.iter())),
            Arc::new(BinaryArray::from_iter_values(route.iter())),
        ],
    )
    .unwrap();
    let input = dir.path().join("in.parquet");
    let mut w = ArrowWriter::try_new(File::create(&input).unwrap(), schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let size = std::fs::metadata(&input).unwrap().len();

    let options =
        RewriteOptions::parse([("rewrite-all", "true"), ("target-file-count", "4")], None).unwrap();
    let columns = GeoColumns::new("geog").with_geography(["geog", "route"]);
    let plan = plan_rewrite(
        &[InputFile::new(input.display().to_string(), size, n as u64)],
        columns,
        &HilbertSpec::wgs84(8).unwrap(),
        &options,
        &LocalFiles,
    )
    .unwrap();
    assert!(plan.keys_geography());
    // The plan says so in JSON, for workers elsewhere.
    let back = RewritePlan::from_json(&plan.to_json().unwrap()).unwrap();
    assert_eq!(back.geography_columns, ["geog", "route"]);

    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let outcome = execute(
        &plan,
        &DirectoryStorage {
            dir: out,
            prefix: "g".into(),
        },
    )
    .unwrap();
    assert!(outcome.added.len() > 1, "{:?}", outcome.added.len());
    let mut rows = 0;
    for f in &outcome.added {
        let geog_box = bbox(&f.bbox.expect("geog has values"));
        let route_box = bbox(&f.geography_bboxes["route"].expect("route has values"));
        let read = ParquetRecordBatchReaderBuilder::try_new(File::open(&f.location).unwrap())
            .unwrap()
            .build()
            .unwrap();
        for b in read {
            let b = b.unwrap();
            rows += b.num_rows();
            for (column, file_box) in [("geog", geog_box), ("route", route_box)] {
                let values = b
                    .column_by_name(column)
                    .unwrap()
                    .as_any()
                    .downcast_ref::<BinaryArray>()
                    .unwrap();
                for v in values.iter().flatten() {
                    let value_box = geography_bbox_of_wkb(v).unwrap().unwrap();
                    assert!(
                        geography_box_contains(&file_box, &value_box),
                        "{column}: file box {file_box:?} misses a value boxed {value_box:?}"
                    );
                }
            }
        }
        // Points at 170..180 and -180..-171 are one narrow range across the antimeridian, not
        // 351 degrees: the box wraps, as the rows' own boxes do where they straddle it.
        if geog_box.min_x > geog_box.max_x {
            assert!(
                geog_box.max_x + 360.0 - geog_box.min_x <= 20.0,
                "{geog_box:?}"
            );
        }
    }
    assert_eq!(rows, n as usize);
    assert!(
        outcome
            .added
            .iter()
            .any(|f| f.bbox.is_some_and(|b| b.min_x > b.max_x)),
        "some file holds points on both sides of ±180"
    );
}
