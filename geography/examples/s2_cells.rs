//! The Rust side of `oracle/s2_cells_check.py`: reads `{"cases": [{"wkb": hex WKB, "level": n}]}`
//! on stdin and prints `{"cells": [[id, ...], ...]}`: each case's S2 cell ids (decimal strings,
//! as they pass 2^53) from `Geography::s2_cell_ids`.
//!
//! cargo run -p geoberg-geography --example s2_cells < cases.json

use std::io::Read;

use geoberg_geography::Geography;
use serde_json::{Value, json};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("stdin");
    let cases: Value = serde_json::from_str(&input).expect("JSON input");
    let cells: Vec<Value> = cases["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|case| {
            let wkb = unhex(case["wkb"].as_str().expect("hex WKB"));
            let level = case["level"].as_i64().expect("level");
            let ids = Geography::from_wkb(&wkb)
                .expect("WKB")
                .s2_cell_ids(level, 1_000_000)
                .expect("cells");
            ids.iter().map(|id| json!(id.to_string())).collect()
        })
        .collect();
    println!("{}", json!({ "cells": cells }));
}
