//! The Arrow generator: determinism, valid WKB, derived columns, widths and errors.

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, TimestampMicrosecondType};
use geoberg_bench_data::{
    Crs, DatasetModel, Distribution, GenerateOptions, GeometryEncoding, RowFormat,
};
use geoberg_geostats::{bbox_of_wkb, wkb_info};
use proptest::prelude::*;

fn collect(model: &DatasetModel, options: GenerateOptions) -> Vec<RecordBatch> {
    model
        .batches(options)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

fn opts(rows: u64, batch_size: usize, format: RowFormat) -> GenerateOptions {
    GenerateOptions {
        start_row: 0,
        rows,
        batch_size,
        format,
    }
}

fn with_bbox() -> RowFormat {
    RowFormat {
        bbox_columns: true,
        row_width_bytes: 200,
        payload_columns: 2,
        ..RowFormat::default()
    }
}

fn all_models() -> Vec<DatasetModel> {
    [
        Distribution::Uniform,
        Distribution::CITIES,
        Distribution::ROADS,
        Distribution::PARCELS,
    ]
    .into_iter()
    .map(|d| {
        DatasetModel::builder(d)
            .seed(7)
            .oversized_fraction(0.05)
            .build()
            .unwrap()
    })
    .collect()
}

#[test]
fn same_seed_same_batches_and_other_seed_differs() {
    let m = DatasetModel::builder(Distribution::CITIES)
        .seed(1)
        .build()
        .unwrap();
    let a = collect(&m, opts(3000, 1000, with_bbox()));
    let b = collect(&m, opts(3000, 1000, with_bbox()));
    assert_eq!(a, b);
    let other = DatasetModel::builder(Distribution::CITIES)
        .seed(2)
        .build()
        .unwrap();
    assert_ne!(a, collect(&other, opts(3000, 1000, with_bbox())));
}

#[test]
fn shards_concatenate_to_the_single_stream() {
    let m = DatasetModel::builder(Distribution::ROADS).build().unwrap();
    let whole = rows_of(&collect(&m, opts(2500, 700, with_bbox())));
    let mut parts = Vec::new();
    for (start, rows) in [(0u64, 1000u64), (1000, 1500)] {
        let o = GenerateOptions {
            start_row: start,
            ..opts(rows, 333, with_bbox())
        };
        parts.extend(collect(&m, o));
    }
    assert_eq!(whole, rows_of(&parts));
}

/// Rows as (id, geometry, payload) for comparing differently batched streams.
fn rows_of(batches: &[RecordBatch]) -> Vec<(i64, Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for b in batches {
        let ids = b.column(0).as_primitive::<Int64Type>();
        let geom = b.column_by_name("geometry").unwrap().as_binary::<i32>();
        let pay = b.column_by_name("payload_1").unwrap().as_binary::<i32>();
        for i in 0..b.num_rows() {
            out.push((ids.value(i), geom.value(i).to_vec(), pay.value(i).to_vec()));
        }
    }
    out
}

#[test]
fn geometry_decodes_and_matches_bbox_columns_and_state() {
    for m in all_models() {
        let [x0, y0, x1, y1] = m.crs().extent();
        for b in collect(&m, opts(2000, 512, with_bbox())) {
            let geom = b.column_by_name("geometry").unwrap().as_binary::<i32>();
            let col = |n: &str| {
                b.column_by_name(n)
                    .unwrap()
                    .as_primitive::<Float64Type>()
                    .clone()
            };
            let (minx, miny, maxx, maxy) = (
                col("bbox_min_x"),
                col("bbox_min_y"),
                col("bbox_max_x"),
                col("bbox_max_y"),
            );
            let state = b.column_by_name("state").unwrap().as_string::<i32>();
            for i in 0..b.num_rows() {
                let bb = bbox_of_wkb(geom.value(i)).unwrap().unwrap();
                assert_eq!(
                    [bb.min_x, bb.min_y, bb.max_x, bb.max_y],
                    [minx.value(i), miny.value(i), maxx.value(i), maxy.value(i)]
                );
                assert!(bb.min_x >= x0 && bb.max_x <= x1 && bb.min_y >= y0 && bb.max_y <= y1);
                // state = 10 x 5 grid cell of the bbox centre
                let (cx, cy) = bb.center();
                let c = (((cx - x0) / (x1 - x0) * 10.0) as usize).min(9);
                let r = (((cy - y0) / (y1 - y0) * 5.0) as usize).min(4);
                assert_eq!(state.value(i), format!("S{:02}", r * 10 + c));
            }
        }
    }
}

#[test]
fn distributions_produce_their_shapes_and_oversized_rows() {
    for m in all_models() {
        let mut kinds = [0usize; 4];
        let mut big = 0;
        for b in collect(&m, opts(4000, 4000, RowFormat::default())) {
            let geom = b.column_by_name("geometry").unwrap().as_binary::<i32>();
            for v in geom.iter().flatten() {
                kinds[v[1] as usize] += 1;
                let bb = bbox_of_wkb(v).unwrap().unwrap();
                if bb.max_x - bb.min_x > 36.0 || bb.max_y - bb.min_y > 18.0 {
                    big += 1;
                }
            }
        }
        let want_points = !matches!(m.distribution(), Distribution::Parcels { .. });
        assert_eq!(kinds[1] > 3000, want_points, "{:?}", m.distribution());
        assert_eq!(kinds[3] > 3000, !want_points, "{:?}", m.distribution());
        assert!(kinds[2] > 0, "oversized long lines appear");
        // 5% oversized, of which boxes of side 0.2 always exceed a tenth of the extent.
        assert!((60..=400).contains(&big), "{big} big rows of 4000");
    }
}

#[test]
fn cities_are_skewed_and_uniform_is_not() {
    let occupancy = |d: Distribution| {
        let m = DatasetModel::builder(d).build().unwrap();
        let mut cells = vec![0u32; 100];
        for b in collect(&m, opts(20_000, 20_000, with_bbox())) {
            let x = b
                .column_by_name("bbox_min_x")
                .unwrap()
                .as_primitive::<Float64Type>();
            let y = b
                .column_by_name("bbox_min_y")
                .unwrap()
                .as_primitive::<Float64Type>();
            for i in 0..b.num_rows() {
                let c = (((x.value(i) + 180.0) / 36.0) as usize).min(9);
                let r = (((y.value(i) + 90.0) / 18.0) as usize).min(9);
                cells[r * 10 + c] += 1;
            }
        }
        *cells.iter().max().unwrap()
    };
    assert!(occupancy(Distribution::Uniform) < 300); // mean 200 a cell
    assert!(occupancy(Distribution::CITIES) > 1000);
}

#[test]
fn ids_and_arrival_are_monotone_and_rows_reach_the_width() {
    let m = DatasetModel::builder(Distribution::PARCELS)
        .build()
        .unwrap();
    let format = RowFormat {
        row_width_bytes: 300,
        payload_columns: 3,
        ..RowFormat::default()
    };
    let batches = collect(&m, opts(1000, 256, format));
    assert_eq!(batches.len(), 4);
    let mut last = (-1i64, i64::MIN);
    for b in &batches {
        let ids = b.column(0).as_primitive::<Int64Type>();
        let ts = b.column(1).as_primitive::<TimestampMicrosecondType>();
        for i in 0..b.num_rows() {
            assert_eq!(ids.value(i), last.0 + 1);
            assert!(ts.value(i) > last.1);
            last = (ids.value(i), ts.value(i));
            let width: usize = 8
                + 8
                + 3
                + b.column(3).as_binary::<i32>().value(i).len()
                + (0..3)
                    .map(|p| {
                        b.column_by_name(&format!("payload_{p}"))
                            .unwrap()
                            .as_binary::<i32>()
                            .value(i)
                            .len()
                    })
                    .sum::<usize>();
            assert_eq!(width, 300);
        }
    }
    assert_eq!(last.0, 999);
}

#[test]
fn ewkb_carries_the_srid_and_web_mercator_extent() {
    let m = DatasetModel::builder(Distribution::Uniform)
        .crs(Crs::WebMercator)
        .build()
        .unwrap();
    let format = RowFormat {
        encoding: GeometryEncoding::Ewkb,
        ..RowFormat::default()
    };
    let b = &collect(&m, opts(100, 100, format))[0];
    let field = b.schema().field_with_name("geometry").unwrap().clone();
    assert!(field.metadata()["ARROW:extension:metadata"].contains("EPSG:3857"));
    for v in b.column(3).as_binary::<i32>().iter().flatten() {
        let info = wkb_info(v).unwrap();
        assert_eq!(info.srid, Some(3857));
        assert!(info.bbox.unwrap().max_x.abs() <= 20_037_508.34);
    }
}

#[test]
fn bad_settings_are_typed_errors_naming_the_value() {
    let e = DatasetModel::builder(Distribution::Uniform)
        .oversized_fraction(1.5)
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("oversized_fraction = 1.5"), "{e}");
    let e = DatasetModel::builder(Distribution::Cities {
        cities: 0,
        background: 0.05,
    })
    .build()
    .unwrap_err();
    assert!(e.to_string().contains("cities = 0"), "{e}");
    let m = DatasetModel::builder(Distribution::Uniform)
        .build()
        .unwrap();
    let e = m.batches(opts(10, 0, RowFormat::default())).unwrap_err();
    assert!(e.to_string().contains("batch_size = 0"), "{e}");
    assert!(Distribution::from_name("zipf").is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Every row of every distribution is valid WKB inside the extent, for any seed.
    #[test]
    fn rows_are_valid_wkb_inside_the_extent(seed in any::<u64>(), d in 0usize..4, over in 0.0f64..0.5) {
        let dist = [Distribution::Uniform, Distribution::CITIES, Distribution::ROADS, Distribution::PARCELS][d];
        let m = DatasetModel::builder(dist).seed(seed).oversized_fraction(over).build().unwrap();
        for b in collect(&m, opts(300, 128, RowFormat::default())) {
            for v in b.column(3).as_binary::<i32>().iter().flatten() {
                let bb = bbox_of_wkb(v).unwrap().unwrap();
                prop_assert!(bb.min_x >= -180.0 && bb.max_x <= 180.0 && bb.min_y >= -90.0 && bb.max_y <= 90.0);
            }
        }
    }
}
