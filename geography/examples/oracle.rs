//! The Rust side of `oracle/check.py`: reads `{"rows": [hex WKB], "queries": [hex WKB]}` on
//! stdin, runs every batch kernel of every query over the rows, and prints
//! `{"bbox": [[min_x, min_y, max_x, max_y] | null], "area": [...], "length": [...],
//! "perimeter": [...], "results": [{"intersects": [...], ...}]}` (measures per row).
//!
//! cargo run -p geoberg-geography --example oracle < cases.json

use std::io::Read;

use arrow_array::BinaryArray;
use geoberg_geography::{
    PreparedGeography, area, contains, covers, distance, intersects, length, perimeter, within,
};
use geoberg_geostats::geography_bbox_of_wkb;
use serde_json::{Value, json};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

fn bools(a: &arrow_array::BooleanArray) -> Value {
    (0..a.len()).map(|i| a.value(i)).collect()
}

fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("stdin");
    let cases: Value = serde_json::from_str(&input).expect("JSON input");
    let list = |k: &str| -> Vec<Vec<u8>> {
        cases[k]
            .as_array()
            .expect("list")
            .iter()
            .map(|v| unhex(v.as_str().expect("hex string")))
            .collect()
    };
    let (rows, queries) = (list("rows"), list("queries"));
    let bbox: Vec<Value> = rows
        .iter()
        .map(|r| match geography_bbox_of_wkb(r).expect("row WKB") {
            Some(b) => json!([b.min_x, b.min_y, b.max_x, b.max_y]),
            None => Value::Null,
        })
        .collect();
    let array = BinaryArray::from_iter_values(rows.iter());
    let results: Vec<Value> = queries
        .iter()
        .map(|q| {
            let q = PreparedGeography::from_wkb(q).expect("query WKB");
            let d = distance(&array, &q).expect("distance");
            json!({
                "intersects": bools(&intersects(&array, &q).expect("intersects")),
                "contains": bools(&contains(&array, &q).expect("contains")),
                "within": bools(&within(&array, &q).expect("within")),
                "covers": bools(&covers(&array, &q).expect("covers")),
                "distance": (0..d.len()).map(|i| {
                    let v = d.value(i);
                    if v.is_finite() { json!(v) } else { json!("inf") }
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    let floats = |a: arrow_array::Float64Array| -> Value { a.values().iter().copied().collect() };
    println!(
        "{}",
        json!({
            "bbox": bbox,
            "area": floats(area(&array).expect("area")),
            "length": floats(length(&array).expect("length")),
            "perimeter": floats(perimeter(&array).expect("perimeter")),
            "results": results,
        })
    );
}
