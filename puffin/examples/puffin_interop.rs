//! Puffin files for other tools to read, and a reader for theirs (`puffin/interop/run.sh`).
//!
//! - `interop write <dir>`: writes one Puffin file of deletion vectors per case into `<dir>`, and
//!   `<dir>/expected.json`: per file, per vector, the data file, the blob's offset and length (as
//!   a manifest entry would hold them) and the deleted positions.
//! - `interop read <file>`: prints the deletion vectors of a Puffin file as JSON, read through
//!   the footer, and again through each blob's (offset, length) alone.

use std::collections::BTreeSet;
use std::io::BufReader;
use std::path::Path;

use geoberg_puffin::{DeletionVector, PuffinReader, PuffinWriter, read_deletion_vector_at};
use serde_json::{Value, json};

type Failure = Box<dyn std::error::Error>;

/// xorshift64: deterministic cases without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Named position sets that cover every container kind and more than one 64-bit bucket.
fn cases() -> Vec<(&'static str, Vec<BTreeSet<u64>>)> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut sparse = BTreeSet::new();
    while sparse.len() < 5000 {
        sparse.insert(rng.next() % 10_000_000);
    }
    let bitmap_container: BTreeSet<u64> = (0..65536u64)
        .filter(|_| !rng.next().is_multiple_of(3))
        .map(|v| (3 << 16) + v)
        .collect();
    let mut buckets: BTreeSet<u64> = [5, (1 << 32) + 7, (1 << 40) + 1, (7 << 32) - 1].into();
    buckets.extend((3u64 << 32)..(3u64 << 32) + 1000);
    buckets.extend(((1u64 << 32) - 10)..((1u64 << 32) + 10));
    let first_delete: BTreeSet<u64> = (100..200).chain([5, 7, 9]).collect();
    let second_delete: BTreeSet<u64> = (150..300).chain([1, 1 << 33]).collect();
    let merged = first_delete.union(&second_delete).copied().collect();
    vec![
        ("small-alternating", vec![[1, 3, 5, 7, 9].into()]),
        ("dense-run", vec![(0..100_000).collect()]),
        ("sparse-random", vec![sparse]),
        ("bitmap-container", vec![bitmap_container]),
        ("several-buckets", vec![buckets]),
        ("merged-second-delete", vec![merged]),
        (
            "three-data-files",
            vec![
                (0..10).collect(),
                (1000..5000).step_by(3).collect(),
                [u64::from(u32::MAX), 1 << 32, (1 << 32) + 1].into(),
            ],
        ),
    ]
}

fn write(dir: &Path) -> Result<(), Failure> {
    let mut files = Vec::new();
    for (name, sets) in cases() {
        let path = dir.join(format!("{name}.puffin"));
        let mut writer = PuffinWriter::new(std::fs::File::create(&path)?)?;
        let mut vectors = Vec::new();
        for (i, set) in sets.iter().enumerate() {
            let data_file = format!("file:///warehouse/db/t/data/{name}-{i:05}.parquet");
            let dv = DeletionVector::from_positions(set.iter().copied())?;
            let entry = writer.add_deletion_vector(&data_file, &dv)?;
            vectors.push(json!({
                "referenced_data_file": entry.referenced_data_file,
                "content_offset": entry.content_offset,
                "content_size_in_bytes": entry.content_size_in_bytes,
                "cardinality": entry.cardinality,
                "positions": set.iter().collect::<Vec<_>>(),
            }));
        }
        let (_, summary) = writer.finish()?;
        files.push(json!({
            "file": path.file_name().and_then(|n| n.to_str()),
            "file_size_in_bytes": summary.file_size_in_bytes,
            "vectors": vectors,
        }));
    }
    std::fs::write(
        dir.join("expected.json"),
        serde_json::to_vec(&json!({ "files": files }))?,
    )?;
    Ok(())
}

fn read(path: &Path) -> Result<Value, Failure> {
    let location = path.display().to_string();
    let file = BufReader::new(std::fs::File::open(path)?);
    let mut reader = PuffinReader::open(file, location.clone())?;
    let blobs = reader.metadata().blobs.clone();
    let mut out = Vec::new();
    for (data_file, dv) in reader.deletion_vectors()? {
        out.push(json!({
            "referenced_data_file": data_file,
            "positions": dv.iter().collect::<Vec<_>>(),
        }));
    }
    // The manifest path: each blob by its range alone, no footer.
    let mut source = BufReader::new(std::fs::File::open(path)?);
    let mut by_range = Vec::new();
    for b in &blobs {
        let dv = read_deletion_vector_at(&mut source, b.offset, b.length)
            .map_err(|e| e.at(location.clone()))?;
        by_range.push(dv.iter().collect::<Vec<_>>());
    }
    Ok(json!({ "vectors": out, "by_range": by_range }))
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [cmd, dir] if cmd == "write" => write(Path::new(dir)),
        [cmd, file] if cmd == "read" => {
            println!("{}", read(Path::new(file))?);
            Ok(())
        }
        _ => Err("usage: interop write <dir> | interop read <file.puffin>".into()),
    }
}
