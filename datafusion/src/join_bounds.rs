//! Join pruning from the build side: once SedonaDB's spatial join has read its build side, the
//! boxes of the build side's geometries (expanded by an `ST_DWithin` distance) decide which
//! data files of a geoberg table on the probe side (by their Iceberg bounds), and which row
//! groups of the files kept (by their Parquet geo statistics), can hold a match at all; the
//! others are never read (`files_skipped_by_join`, `row_groups_skipped_by_join` and
//! `bytes_skipped_by_join` in `EXPLAIN ANALYZE`). It is a run-time filter, like DataFusion's
//! dynamic filters for hash joins and TopK, but for space: no plan-time constant exists to
//! prune with, since the zones of "trips in the zones of one municipality" are known only when
//! the zones have been read.
//!
//! This module holds what the build and probe sides share: [`BuildSideBounds`], recorded by the
//! build side and consulted by the scan when its stream is first polled (which the join does
//! only after its build side is complete), and the row-group pruning the scan applies with
//! it. A scan that finds the bounds incomplete (or unusable: a value whose box could not be
//! read) reads every planned file, as it would without pruning. So pruning never changes an
//! answer: a probe row whose box meets no build box (expanded by the distance) matches no build
//! row. `join_bounds_rule` puts the two sides in place.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

use datafusion::error::Result;
use datafusion::execution::cache::cache_manager::FileMetadataCache;
use geoberg_geostats::BBox;
use geoberg_pruning::FileBounds;
use geoberg_table::{root_column, row_group_bounds};
use object_store::ObjectStore;
use rstar::primitives::Rectangle;
use rstar::{AABB, Envelope, RTree};

use crate::scan_plan::{FileSlice, RowGroupSelection, read_footers};
/// Build-side boxes kept one by one at most; past this many only their union prunes (a build
/// side that large usually covers most of the probe side anyway).
const MAX_BUILD_BOXES: usize = 1 << 20;

/// The boxes of a join's build side, filled by [`BuildBoundsExec`] and read by the probe
/// side's [`GeobergScanExec`] once complete.
#[derive(Debug)]
pub struct BuildSideBounds {
    /// Partitions of the build side; the bounds are complete when each has ended.
    partitions: usize,
    /// Half-width added on every side of each build box (an `ST_DWithin` distance), so that a
    /// probe box meets an expanded box exactly when the pair can match.
    expand: f64,
    state: Mutex<Recording>,
    index: OnceLock<Option<Arc<BoundsIndex>>>,
}

#[derive(Debug, Default)]
struct Recording {
    finished: HashSet<usize>,
    /// `[min_x, min_y, max_x, max_y]`: a third of a [`BBox`]'s size.
    boxes: Vec<[f64; 4]>,
    union: Option<[f64; 4]>,
    /// More boxes than [`MAX_BUILD_BOXES`]: only the union is kept.
    overflow: bool,
    /// A value whose box could not be read: no pruning at all.
    unusable: bool,
}

impl BuildSideBounds {
    /// Bounds of a build side of `partitions` partitions, each box expanded by `expand`.
    pub fn new(partitions: usize, expand: f64) -> Self {
        BuildSideBounds {
            partitions,
            expand,
            state: Mutex::default(),
            index: OnceLock::new(),
        }
    }

    /// The distance build boxes are expanded by.
    pub fn expand(&self) -> f64 {
        self.expand
    }

    /// Build partitions the bounds wait for.
    pub(crate) fn partitions(&self) -> usize {
        self.partitions
    }

    /// The index if it was built already (`Some(None)`: the bounds could not be used).
    pub(crate) fn built(&self) -> Option<Option<Arc<BoundsIndex>>> {
        self.index.get().cloned()
    }

    /// Adds build-side boxes; `unusable`: a value's box could not be read (nothing prunes).
    pub(crate) fn record(&self, boxes: Vec<[f64; 4]>, unusable: bool) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.unusable |= unusable;
        for b in &boxes {
            s.union = Some(s.union.map_or(*b, |u| {
                [
                    u[0].min(b[0]),
                    u[1].min(b[1]),
                    u[2].max(b[2]),
                    u[3].max(b[3]),
                ]
            }));
        }
        if !s.overflow {
            if s.boxes.len() + boxes.len() > MAX_BUILD_BOXES {
                s.overflow = true;
                s.boxes = Vec::new();
            } else {
                s.boxes.extend(boxes);
            }
        }
    }

    /// Marks a build partition as ended.
    pub(crate) fn finish(&self, partition: usize) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.finished.insert(partition);
    }

    /// The build side's boxes as an index, once every build partition has ended and every
    /// box was read; `None` before that (the caller then prunes nothing).
    pub fn index(&self) -> Option<Arc<BoundsIndex>> {
        if let Some(done) = self.index.get() {
            return done.clone();
        }
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.finished.len() < self.partitions {
            return None;
        }
        let built = (!s.unusable).then(|| {
            let grow = |b: &[f64; 4]| expanded(b, self.expand);
            Arc::new(BoundsIndex {
                union: s.union.as_ref().map(grow),
                tree: (!s.overflow).then(|| {
                    RTree::bulk_load(
                        s.boxes
                            .iter()
                            .map(|b| Rectangle::from_aabb(grow(b)))
                            .collect(),
                    )
                }),
                boxes: s.boxes.len(),
            })
        });
        drop(s);
        self.index.get_or_init(|| built).clone()
    }
}

/// `b` (`[min_x, min_y, max_x, max_y]`) grown by `distance` on every side, plus a margin for
/// the rounding of distances computed at these coordinates (a pair at exactly the distance
/// must not be pruned).
pub(crate) fn expanded(b: &[f64; 4], distance: f64) -> AABB<[f64; 2]> {
    let magnitude = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let e = distance + (magnitude + distance) * 1e-12;
    AABB::from_corners([b[0] - e, b[1] - e], [b[2] + e, b[3] + e])
}

/// The expanded build boxes, for probe-side boxes to be tested against.
#[derive(Debug)]
pub struct BoundsIndex {
    /// `None`: the build side holds no geometry with a box (all NULL or empty): nothing
    /// matches.
    union: Option<AABB<[f64; 2]>>,
    /// `None`: too many boxes; the union alone decides.
    tree: Option<RTree<Rectangle<[f64; 2]>>>,
    boxes: usize,
}

impl BoundsIndex {
    /// Whether a probe-side geometry inside `bbox` can meet a build-side one.
    pub fn may_meet(&self, bbox: &BBox) -> bool {
        let probe = AABB::from_corners([bbox.min_x, bbox.min_y], [bbox.max_x, bbox.max_y]);
        let Some(union) = &self.union else {
            return false;
        };
        if !union.intersects(&probe) {
            return false;
        }
        match &self.tree {
            Some(tree) => tree.locate_in_envelope_intersecting(probe).next().is_some(),
            None => true,
        }
    }

    /// Build-side boxes indexed (0 past the cap, when only the union decides).
    pub fn boxes(&self) -> usize {
        self.boxes
    }
}

/// What the build side's boxes pruned of one probe partition.
#[derive(Debug, Default)]
pub(crate) struct JoinPruned {
    pub files: usize,
    pub row_groups: usize,
    pub bytes: u64,
}

/// The row groups of `slices` whose geo statistics on `column` meet a build box (footers from
/// the runtime's metadata cache, where planning left them); slices left with no row group are
/// dropped. A file without geo statistics for the column keeps every row group.
pub(crate) async fn prune_row_groups(
    slices: Vec<FileSlice>,
    column: &str,
    bounds: &BoundsIndex,
    store: &Arc<dyn ObjectStore>,
    cache: &Arc<dyn FileMetadataCache>,
    pruned: &mut JoinPruned,
) -> Result<Vec<FileSlice>> {
    let files: Vec<FileBounds> = slices
        .iter()
        .map(|s| FileBounds::new(s.location.clone(), 0, s.size, None))
        .collect();
    let footers = read_footers(store, cache, &files).await?;
    let mut kept = Vec::with_capacity(slices.len());
    for (mut slice, footer) in slices.into_iter().zip(footers) {
        let Some(root) = root_column(&footer, None, column) else {
            kept.push(slice);
            continue;
        };
        let bounds_of = row_group_bounds(&footer, root);
        let groups = footer.row_groups();
        let selection = slice
            .row_groups
            .clone()
            .unwrap_or_else(|| RowGroupSelection {
                count: groups.len(),
                read: (0..groups.len()).collect(),
                rows: groups.iter().map(|g| g.num_rows().max(0) as u64).collect(),
            });
        let may_meet = |i: usize| {
            bounds_of
                .get(i)
                .is_none_or(|g| !g.all_null && g.bbox.is_none_or(|b| bounds.may_meet(&b)))
        };
        let (read, skipped): (Vec<usize>, Vec<usize>) =
            selection.read.iter().copied().partition(|&i| may_meet(i));
        if skipped.is_empty() {
            kept.push(slice);
            continue;
        }
        pruned.row_groups += skipped.len();
        pruned.bytes += skipped
            .iter()
            .filter_map(|&i| groups.get(i))
            .map(|g| g.compressed_size().max(0) as u64)
            .sum::<u64>();
        if read.is_empty() {
            continue;
        }
        slice.rows = None;
        slice.row_groups = Some(RowGroupSelection { read, ..selection });
        kept.push(slice);
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bounds_of(partitions: usize, expand: f64, boxes: &[[f64; 4]]) -> BuildSideBounds {
        let bounds = BuildSideBounds::new(partitions, expand);
        bounds.record(boxes.to_vec(), false);
        bounds
    }

    #[test]
    fn bounds_are_used_only_once_every_build_partition_has_ended() {
        let bounds = bounds_of(2, 0.0, &[[0.0, 0.0, 1.0, 1.0]]);
        assert!(bounds.index().is_none());
        bounds.finish(0);
        assert!(bounds.index().is_none());
        bounds.finish(1);
        let index = bounds.index().unwrap();
        assert!(
            index.may_meet(&BBox::new(1.0, 1.0, 2.0, 2.0)),
            "touching boxes meet"
        );
        assert!(!index.may_meet(&BBox::new(1.5, 0.0, 2.0, 1.0)));
        assert_eq!(index.boxes(), 1);
    }

    #[test]
    fn boxes_grow_by_the_distance_and_a_rounding_margin() {
        let bounds = bounds_of(
            1,
            0.5,
            &[[10.0, 10.0, 11.0, 11.0], [20.0, 20.0, 21.0, 21.0]],
        );
        bounds.finish(0);
        let index = bounds.index().unwrap();
        assert!(
            index.may_meet(&BBox::point(11.5, 10.0)),
            "exactly the distance away"
        );
        assert!(!index.may_meet(&BBox::point(11.6, 10.0)));
        // Between the two boxes: inside their union, outside both.
        assert!(!index.may_meet(&BBox::point(15.0, 15.0)));
    }

    #[test]
    fn an_empty_build_side_meets_nothing_and_an_unreadable_one_prunes_nothing() {
        let empty = bounds_of(1, 0.0, &[]);
        empty.finish(0);
        assert!(
            !empty
                .index()
                .unwrap()
                .may_meet(&BBox::new(-1e9, -1e9, 1e9, 1e9))
        );

        let unreadable = bounds_of(1, 0.0, &[[0.0, 0.0, 1.0, 1.0]]);
        unreadable.record(Vec::new(), true);
        unreadable.finish(0);
        assert!(unreadable.index().is_none());
    }

    #[test]
    fn past_the_cap_the_union_alone_decides() {
        let bounds = BuildSideBounds::new(1, 0.0);
        bounds.record(vec![[0.0, 0.0, 1.0, 1.0]; MAX_BUILD_BOXES], false);
        bounds.record(vec![[5.0, 5.0, 6.0, 6.0]], false);
        bounds.finish(0);
        let index = bounds.index().unwrap();
        assert_eq!(index.boxes(), 0);
        assert!(index.may_meet(&BBox::point(3.0, 3.0)), "inside the union");
        assert!(!index.may_meet(&BBox::point(7.0, 7.0)));
    }
}
