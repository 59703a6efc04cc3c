//! Which data files of two geoberg tables a spatial join reads together: the pairs of build and
//! probe files whose boxes (the build box grown by an `ST_DWithin` distance) meet, found with
//! an R-tree join of the two sets of file boxes, and the build files cut into groups of at
//! most a byte budget, in Hilbert order of their boxes, each group joined on its own with the
//! probe files it meets. A file pair whose boxes do not meet is never read together, and a
//! file of one side that meets no file of the other is not read at all.
//!
//! Each row lives in one file, so joining every group's build files with its probe files finds
//! each matching pair of rows exactly once: in the group of its build file (no reference-point
//! duplicate removal, as spatially partitioned joins need, and no shuffle).

use std::collections::BTreeSet;

use geoberg_geostats::BBox;
use geoberg_hilbert::{Bounds, HilbertCurve};
use rstar::primitives::{GeomWithData, Rectangle};
use rstar::{AABB, RTree};

use crate::join_bounds::expanded;

/// A planned data file of one side of a join, with its box on the joined column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SideFile {
    /// The file's location, as planned.
    pub location: String,
    /// Bytes the scan reads of it.
    pub bytes: u64,
    /// The file's box on the joined column; `None`: unknown (it may meet anything), unless
    /// `all_null`.
    pub bbox: Option<BBox>,
    /// The column holds only NULL or empty geometries in this file: it matches nothing.
    pub all_null: bool,
}

/// Build files joined on their own with the probe files they meet (indices into the sides).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct FilePairGroup {
    pub build: Vec<usize>,
    pub probe: Vec<usize>,
}

/// The file pairs of a join and the groups they are joined in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FilePairPlan {
    pub groups: Vec<FilePairGroup>,
    /// Pairs of build and probe files that may hold a matching pair of rows.
    pub pairs: usize,
    /// Build files times probe files.
    pub total: usize,
}

impl FilePairPlan {
    /// The pairs of `build` and `probe` files whose boxes meet once the build boxes are grown
    /// by `distance`, grouped so that each group's build files add up to at most
    /// `group_bytes` (a single larger file forms its own group).
    pub fn new(build: &[SideFile], probe: &[SideFile], distance: f64, group_bytes: u64) -> Self {
        let partners = partners(build, probe, distance);
        let pairs = partners.iter().map(Vec::len).sum();
        let mut order: Vec<usize> = (0..build.len())
            .filter(|&b| !partners[b].is_empty())
            .collect();
        let keys = hilbert_keys(build);
        order.sort_by_key(|&b| keys[b]);
        let mut groups: Vec<FilePairGroup> = Vec::new();
        let mut bytes = 0u64;
        for b in order {
            let full = groups.last().is_none_or(|g| {
                !g.build.is_empty() && bytes.saturating_add(build[b].bytes) > group_bytes
            });
            if full {
                groups.push(FilePairGroup::default());
                bytes = 0;
            }
            let group = groups.last_mut().expect("pushed above");
            group.build.push(b);
            bytes = bytes.saturating_add(build[b].bytes);
        }
        for group in &mut groups {
            let probe: BTreeSet<usize> = group
                .build
                .iter()
                .flat_map(|&b| partners[b].iter().copied())
                .collect();
            group.probe = probe.into_iter().collect();
        }
        FilePairPlan {
            groups,
            pairs,
            total: build.len() * probe.len(),
        }
    }

    /// Probe-side bytes read by all groups together (a probe file is read once per group it
    /// is in), and the bytes of the distinct probe files read.
    pub fn probe_bytes(&self, probe: &[SideFile]) -> (u64, u64) {
        let read = self
            .groups
            .iter()
            .flat_map(|g| &g.probe)
            .map(|&p| probe[p].bytes)
            .sum();
        let distinct: BTreeSet<usize> = self.groups.iter().flat_map(|g| g.probe.clone()).collect();
        (read, distinct.iter().map(|&p| probe[p].bytes).sum())
    }
}

fn corners(b: &BBox) -> [f64; 4] {
    [b.min_x, b.min_y, b.max_x, b.max_y]
}

/// For each build file, the probe files (ascending) it may share a matching pair with.
fn partners(build: &[SideFile], probe: &[SideFile], distance: f64) -> Vec<Vec<usize>> {
    let unknown: Vec<usize> = (0..probe.len())
        .filter(|&p| probe[p].bbox.is_none() && !probe[p].all_null)
        .collect();
    let with_data: Vec<usize> = (0..probe.len()).filter(|&p| !probe[p].all_null).collect();
    let tree = RTree::bulk_load(
        probe
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let b = corners(f.bbox.as_ref()?);
                let aabb = AABB::from_corners([b[0], b[1]], [b[2], b[3]]);
                Some(GeomWithData::new(Rectangle::from_aabb(aabb), i))
            })
            .collect(),
    );
    build
        .iter()
        .map(|f| {
            if f.all_null {
                return Vec::new();
            }
            let Some(bbox) = &f.bbox else {
                return with_data.clone();
            };
            let mut found: Vec<usize> = tree
                .locate_in_envelope_intersecting(expanded(&corners(bbox), distance))
                .map(|r| r.data)
                .chain(unknown.iter().copied())
                .collect();
            found.sort_unstable();
            found.dedup();
            found
        })
        .collect()
}

/// The Hilbert key of each build file's box centre over the union of the build boxes (files
/// without a box last), so that a group gathers neighbouring files.
fn hilbert_keys(build: &[SideFile]) -> Vec<u64> {
    let boxes: Vec<[f64; 4]> = build
        .iter()
        .filter_map(|f| f.bbox.as_ref().map(corners))
        .collect();
    let union = boxes.iter().fold(None::<[f64; 4]>, |u, b| {
        Some(u.map_or(*b, |u| {
            [
                u[0].min(b[0]),
                u[1].min(b[1]),
                u[2].max(b[2]),
                u[3].max(b[3]),
            ]
        }))
    });
    // A degenerate or non-finite union orders the files as planned.
    let curve = union
        .and_then(|u| Bounds::new(u[0], u[1], u[2], u[3]).ok())
        .and_then(|b| HilbertCurve::new(16, b).ok());
    build
        .iter()
        .enumerate()
        .map(|(i, f)| match (&curve, &f.bbox) {
            (Some(curve), Some(b)) => {
                let (x, y) = b.center();
                curve.encode_clamped(x, y)
            }
            (None, Some(_)) => i as u64,
            (_, None) => u64::MAX,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, bytes: u64, b: Option<[f64; 4]>) -> SideFile {
        SideFile {
            location: name.to_string(),
            bytes,
            bbox: b.map(|b| BBox::new(b[0], b[1], b[2], b[3])),
            all_null: false,
        }
    }

    /// `n` files in vertical bands of width `w` starting at x = 0, each `bytes` long.
    fn bands(n: usize, w: f64, bytes: u64) -> Vec<SideFile> {
        (0..n)
            .map(|i| {
                let x = i as f64 * w;
                file(&format!("f{i}"), bytes, Some([x, 0.0, x + w * 0.99, 10.0]))
            })
            .collect()
    }

    #[test]
    fn bands_pair_with_the_bands_they_cover_only() {
        let build = bands(4, 20.0, 10);
        let probe = bands(8, 10.0, 10);
        let plan = FilePairPlan::new(&build, &probe, 0.0, 10);
        assert_eq!(plan.total, 32);
        assert_eq!(plan.pairs, 8, "{plan:?}");
        assert_eq!(plan.groups.len(), 4);
        for g in &plan.groups {
            let [b] = g.build[..] else { panic!("{g:?}") };
            assert_eq!(g.probe, vec![2 * b, 2 * b + 1]);
        }
        assert_eq!(plan.probe_bytes(&probe), (80, 80));
        // A budget of two files: neighbours together.
        let plan = FilePairPlan::new(&build, &probe, 0.0, 20);
        assert_eq!(plan.groups.len(), 2);
        for g in &plan.groups {
            let mut b = g.build.clone();
            b.sort_unstable();
            assert_eq!(b[1], b[0] + 1, "{plan:?}");
        }
    }

    #[test]
    fn the_distance_widens_the_pairs() {
        let build = bands(4, 20.0, 10);
        let probe = bands(8, 10.0, 10);
        // Grown by 1, band b reaches the probe bands either side of its two.
        let plan = FilePairPlan::new(&build, &probe, 1.0, 10);
        assert_eq!(plan.pairs, 8 + 6, "{plan:?}");
        let (read, distinct) = plan.probe_bytes(&probe);
        assert_eq!((read, distinct), (140, 80));
    }

    #[test]
    fn unknown_boxes_meet_everything_and_null_files_nothing() {
        let mut build = bands(2, 20.0, 10);
        build.push(file("unknown", 10, None));
        let mut null = file("null", 10, None);
        null.all_null = true;
        build.push(null.clone());
        let mut probe = bands(2, 10.0, 10);
        probe.push(file("far", 10, Some([100.0, 100.0, 101.0, 101.0])));
        probe.push(file("unknown", 10, None));
        probe.push(null);
        let plan = FilePairPlan::new(&build, &probe, 0.0, u64::MAX);
        let partners = partners(&build, &probe, 0.0);
        assert_eq!(partners[0], vec![0, 1, 3]);
        assert_eq!(partners[1], vec![3]);
        assert_eq!(partners[2], vec![0, 1, 2, 3]);
        assert!(partners[3].is_empty());
        assert_eq!(plan.pairs, 3 + 1 + 4);
        let [group] = &plan.groups[..] else {
            panic!("{plan:?}")
        };
        let mut b = group.build.clone();
        b.sort_unstable();
        assert_eq!(b, vec![0, 1, 2]);
        assert_eq!(group.probe, vec![0, 1, 2, 3]);
    }

    #[test]
    fn nothing_meets_nothing_is_read() {
        let build = bands(2, 1.0, 10);
        let probe = vec![file("far", 10, Some([50.0, 50.0, 60.0, 60.0]))];
        let plan = FilePairPlan::new(&build, &probe, 0.0, 1);
        assert_eq!(plan.pairs, 0);
        assert!(plan.groups.is_empty());
        let plan = FilePairPlan::new(&[], &probe, 0.0, 1);
        assert!(plan.groups.is_empty());
    }
}
