//! Skewed demo points shared by the examples: clusters around 40 "cities" plus a uniform
//! background, in random arrival order, as `id bigint, geom binary` batches labelled 4326.
#![allow(dead_code)]

use std::sync::Arc;

use arrow_array::{BinaryArray, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};

/// SplitMix64: deterministic data without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub fn wkb_point(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1u8, 1, 0, 0, 0];
    v.extend_from_slice(&x.to_le_bytes());
    v.extend_from_slice(&y.to_le_bytes());
    v
}

/// Skewed points: 80% near one of 40 cities (spread ~1°), 20% uniform.
pub fn points(rows: usize) -> Vec<(f64, f64)> {
    let mut rng = Rng(20);
    let cities: Vec<(f64, f64)> = (0..40)
        .map(|_| (rng.unit() * 340.0 - 170.0, rng.unit() * 140.0 - 70.0))
        .collect();
    (0..rows)
        .map(|_| {
            if rng.unit() < 0.8 {
                let (cx, cy) = cities[(rng.next() % 40) as usize];
                let spread = 0.2 + 2.0 * rng.unit();
                (
                    (cx + (rng.unit() - 0.5) * spread).clamp(-180.0, 180.0),
                    (cy + (rng.unit() - 0.5) * spread).clamp(-85.0, 85.0),
                )
            } else {
                (rng.unit() * 360.0 - 180.0, rng.unit() * 170.0 - 85.0)
            }
        })
        .collect()
}

pub fn batch(ids: std::ops::Range<usize>, xy: &[(f64, f64)]) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("id", ArrowType::Int64, false),
        Field::new("geom", ArrowType::Binary, true).with_metadata(
            [("srid".to_string(), "4326".to_string())]
                .into_iter()
                .collect(),
        ),
    ]);
    let wkb: Vec<Vec<u8>> = ids.clone().map(|i| wkb_point(xy[i].0, xy[i].1)).collect();
    RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from_iter_values(ids.map(|i| i as i64))),
            Arc::new(BinaryArray::from_iter_values(wkb.iter())),
        ],
    )
    .unwrap()
}
