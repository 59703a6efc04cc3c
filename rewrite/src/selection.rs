//! Which files of each partition to rewrite: Iceberg's size rules, `rewrite-all`, and a
//! clustering metric so that healthy-size but overlapping files are re-clustered too.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Extent, InputFile, PartitionKey, RewriteOptions};

/// Why a partition's files were selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SelectionReason {
    /// `rewrite-all` was set: every file.
    RewriteAll,
    /// The files overlap each other: every file of the partition.
    Overlap,
    /// Too-small or too-large files (Iceberg's rules): only those.
    FileSizes,
}

/// Cells per axis per √(files): fine enough that a perfect tiling scores close to 1.
const CELLS_PER_SQRT_FILE: f64 = 4.0;
const MAX_CELLS_PER_AXIS: usize = 1024;

/// Mean number of files overlapping a grid cell, over the cells that hold any file.
///
/// A grid of about 4·√N cells per axis covers the union of the boxes. Files that tile space
/// score about (1 + 1/4)² ≈ 1.6; N files that each span the whole extent score N. Computed with a
/// 2-D difference array: O(N + cells), whatever the file sizes.
pub fn overlap_depth(boxes: &[Extent]) -> f64 {
    let Some(all) = Extent::union_all(boxes) else {
        return 0.0;
    };
    if boxes.len() < 2 {
        return boxes.len() as f64;
    }
    let g = ((boxes.len() as f64).sqrt() * CELLS_PER_SQRT_FILE).ceil() as usize;
    let g = g.clamp(1, MAX_CELLS_PER_AXIS);
    let cell = |v: f64, min: f64, span: f64| -> usize {
        if span > 0.0 && span.is_finite() {
            (((v - min) / span * g as f64).floor().max(0.0) as usize).min(g - 1)
        } else {
            0
        }
    };
    let (w, h) = (all.width(), all.height());
    let stride = g + 1;
    let mut diff = vec![0i64; stride * stride];
    for b in boxes {
        let (x0, x1) = (cell(b.min_x, all.min_x, w), cell(b.max_x, all.min_x, w));
        let (y0, y1) = (cell(b.min_y, all.min_y, h), cell(b.max_y, all.min_y, h));
        diff[y0 * stride + x0] += 1;
        diff[y0 * stride + x1 + 1] -= 1;
        diff[(y1 + 1) * stride + x0] -= 1;
        diff[(y1 + 1) * stride + x1 + 1] += 1;
    }
    // Prefix sums along rows, then columns.
    for y in 0..g {
        for x in 1..g {
            diff[y * stride + x] += diff[y * stride + x - 1];
        }
    }
    let (mut sum, mut occupied) = (0i64, 0i64);
    for x in 0..g {
        let mut acc = 0i64;
        for y in 0..g {
            acc += diff[y * stride + x];
            if acc > 0 {
                sum += acc;
                occupied += 1;
            }
        }
    }
    if occupied == 0 {
        0.0
    } else {
        sum as f64 / occupied as f64
    }
}

/// The selected files of one partition.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PartitionSelection {
    pub partition: PartitionKey,
    /// Indices into the caller's file list, in the caller's order.
    pub files: Vec<usize>,
    pub reason: SelectionReason,
    pub overlap_depth: f64,
}

/// Groups files by partition (in key order) and keeps the partitions worth rewriting.
pub(crate) fn select(files: &[InputFile], options: &RewriteOptions) -> Vec<PartitionSelection> {
    let mut by_partition: BTreeMap<&PartitionKey, Vec<usize>> = BTreeMap::new();
    for (i, f) in files.iter().enumerate() {
        by_partition.entry(&f.partition).or_default().push(i);
    }
    let mut out = Vec::new();
    for (partition, idx) in by_partition {
        let boxes: Vec<Extent> = idx.iter().filter_map(|&i| files[i].bbox).collect();
        let depth = overlap_depth(&boxes);
        let all = |reason| PartitionSelection {
            partition: partition.clone(),
            files: idx.clone(),
            reason,
            overlap_depth: depth,
        };
        if options.rewrite_all {
            out.push(all(SelectionReason::RewriteAll));
            continue;
        }
        if idx.len() > 1 && depth >= options.min_overlap_depth {
            out.push(all(SelectionReason::Overlap));
            continue;
        }
        let candidates: Vec<usize> = idx
            .iter()
            .copied()
            .filter(|&i| {
                let s = files[i].file_size_bytes;
                s < options.min_file_size_bytes || s > options.max_file_size_bytes
            })
            .collect();
        let bytes: u64 = candidates.iter().map(|&i| files[i].file_size_bytes).sum();
        let n = candidates.len();
        let enough_files = n >= options.min_input_files && n > 1;
        let enough_content = n > 1 && bytes > options.target_file_size_bytes;
        let too_much_content = bytes > options.max_file_size_bytes;
        if enough_files || enough_content || too_much_content {
            out.push(PartitionSelection {
                partition: partition.clone(),
                files: candidates,
                reason: SelectionReason::FileSizes,
                overlap_depth: depth,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiles(n: usize) -> Vec<Extent> {
        let mut v = Vec::new();
        for i in 0..n {
            for j in 0..n {
                v.push(Extent::new(
                    i as f64,
                    j as f64,
                    i as f64 + 0.999,
                    j as f64 + 0.999,
                ));
            }
        }
        v
    }

    #[test]
    fn tiling_scores_near_one_and_full_overlap_scores_n() {
        let t = overlap_depth(&tiles(10));
        assert!((1.0..1.7).contains(&t), "{t}");
        let same = vec![Extent::new(0.0, 0.0, 1.0, 1.0); 50];
        assert!((overlap_depth(&same) - 50.0).abs() < 1e-9);
        assert_eq!(overlap_depth(&[]), 0.0);
    }

    #[test]
    fn overlapping_healthy_files_are_selected_and_tidy_ones_are_not() {
        let o = RewriteOptions::parse([("target-file-size-bytes", "1000")], None).unwrap();
        let healthy = |i: usize, b: Extent| InputFile::new(format!("f{i}"), 1000, 10).with_bbox(b);
        let overlapping: Vec<InputFile> = (0..8)
            .map(|i| healthy(i, Extent::new(0.0, 0.0, 10.0, 10.0)))
            .collect();
        let s = select(&overlapping, &o);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].reason, SelectionReason::Overlap);
        let tidy: Vec<InputFile> = tiles(3)
            .into_iter()
            .enumerate()
            .map(|(i, b)| healthy(i, b))
            .collect();
        assert!(select(&tidy, &o).is_empty());
    }

    #[test]
    fn size_rules_follow_iceberg() {
        let o = RewriteOptions::parse([("target-file-size-bytes", "1000")], None).unwrap();
        let small = |i: usize, p: &str| InputFile::new(format!("s{i}"), 100, 1).with_partition(p);
        // Five small files in partition a: rewritten; four in b: not (and total < target).
        let mut files: Vec<InputFile> = (0..5).map(|i| small(i, "a")).collect();
        files.extend((0..4).map(|i| small(i, "b")));
        files.push(InputFile::new("ok", 1000, 1).with_partition("a"));
        let s = select(&files, &o);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].partition.0, "a");
        assert_eq!(s[0].files, vec![0, 1, 2, 3, 4]);
        // One huge file alone is rewritten (too much content).
        let s = select(&[InputFile::new("big", 5000, 1)], &o);
        assert_eq!(s.len(), 1);
        let all = RewriteOptions::parse([("rewrite-all", "true")], None).unwrap();
        assert_eq!(select(&files, &all).len(), 2);
    }
}
