//! The file index: an R-tree over entries with usable boxes plus a list of the rest.

use rstar::{AABB, RTree, RTreeObject};

use geoberg_crs::{ColumnType, FormatVersion};
use geoberg_geostats::BBox;

use crate::bounded::{Bounded, Bounds};
use crate::column::ColumnRules;
use crate::error::PruneError;
use crate::filter::BoxFilter;
use crate::plan::{PlannedRead, PrunePlan, ReadReason, SkipReason, Tally};
use crate::window::{QueryBox, Surface, in_geography_range, reaches_pole};

/// What the planner does with one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Read(ReadReason),
    Skip(SkipReason),
}

/// The one rule every path (R-tree, linear scan, row groups) applies to an entry.
///
/// `query` is `None` when the window is an empty geometry, which matches no row.
pub(crate) fn decide(
    query: Option<&QueryBox>,
    cannot_skip: bool,
    bounds: Bounds,
    records: u64,
) -> Decision {
    if records == 0 {
        return Decision::Skip(SkipReason::NoRows);
    }
    match bounds {
        Bounds::AllNull => Decision::Skip(SkipReason::AllNull),
        _ if cannot_skip => Decision::Read(ReadReason::ColumnCannotSkip),
        _ if query.is_none() => Decision::Skip(SkipReason::OutsideWindow),
        Bounds::Unknown => Decision::Read(ReadReason::NoBounds),
        Bounds::Box(b) => match query.map(|q| q.test(&b)) {
            Some(crate::window::Verdict::Disjoint) | None => {
                Decision::Skip(SkipReason::OutsideWindow)
            }
            Some(crate::window::Verdict::Overlaps) => Decision::Read(ReadReason::Overlaps),
            Some(crate::window::Verdict::Invalid) => Decision::Read(ReadReason::InvalidBounds),
        },
    }
}

/// Applies [`decide`] to every entry: the reference the R-tree path must equal.
pub(crate) fn plan_by_scan<T: Bounded>(
    entries: &[T],
    rules: &ColumnRules,
    filter: &BoxFilter,
) -> Result<PrunePlan, PruneError> {
    let query = rules.query(filter)?;
    let mut plan = rules.empty_plan(filter);
    if query.is_none() && plan.note.is_none() {
        plan.note = Some("the window is an empty geometry, which matches no row".to_owned());
    }
    for (index, e) in entries.iter().enumerate() {
        let records = e.record_count();
        let bytes = e.size_in_bytes();
        plan.total.add(records, bytes);
        match decide(query.as_ref(), rules.cannot_skip(), e.bounds(), records) {
            Decision::Read(reason) => {
                plan.read.add(records, bytes);
                plan.reads.push(PlannedRead { index, reason });
            }
            Decision::Skip(SkipReason::AllNull) => plan.all_null += 1,
            Decision::Skip(SkipReason::NoRows) => plan.no_rows += 1,
            Decision::Skip(SkipReason::OutsideWindow) => {}
        }
    }
    Ok(plan)
}

/// An R-tree leaf: an `f32` box rounded outwards (so it contains the `f64` box) and the entry's
/// position. 20 bytes instead of the 80 of a `BBox`; candidates are re-tested exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Leaf {
    envelope: AABB<[f32; 2]>,
    entry: u32,
}

impl RTreeObject for Leaf {
    type Envelope = AABB<[f32; 2]>;
    fn envelope(&self) -> Self::Envelope {
        self.envelope
    }
}

/// Largest `f32` not above `v`.
fn down(v: f64) -> f32 {
    let f = v as f32;
    if f64::from(f) > v { f.next_down() } else { f }
}

/// Smallest `f32` not below `v`.
fn up(v: f64) -> f32 {
    let f = v as f32;
    if f64::from(f) < v { f.next_up() } else { f }
}

fn envelope(x: (f64, f64), y: (f64, f64)) -> AABB<[f32; 2]> {
    AABB::from_corners([down(x.0), down(y.0)], [up(x.1), up(y.1)])
}

/// The R-tree pieces of an entry's box, or `None` when the box must be tested one by one
/// (invalid for the column, outside the geography range, or not finite: the bulk loader sorts by
/// box centres).
fn tree_pieces(b: &BBox, surface: Surface) -> Option<[Option<AABB<[f32; 2]>>; 2]> {
    let finite = [b.min_x, b.max_x, b.min_y, b.max_y]
        .iter()
        .all(|v| v.is_finite());
    if !finite || b.min_y > b.max_y || surface == Surface::Sphere && !in_geography_range(b) {
        return None;
    }
    let y = (b.min_y, b.max_y);
    if surface == Surface::Sphere && reaches_pole(b) {
        Some([Some(envelope((-180.0, 180.0), y)), None])
    } else if b.min_x <= b.max_x {
        Some([Some(envelope((b.min_x, b.max_x), y)), None])
    } else if surface == Surface::Sphere {
        Some([
            Some(envelope((b.min_x, b.min_x.max(180.0)), y)),
            Some(envelope((b.max_x.min(-180.0), b.max_x), y)),
        ])
    } else {
        None
    }
}

/// Spatial index over the data files (or any [`Bounded`] entries) of one geometry column.
///
/// Entries with usable boxes go into a bulk-loaded R-tree (`rstar`) of compact `f32` boxes;
/// entries without bounds, with invalid bounds or with infinite coordinates are kept in a list
/// and tested one by one. Every candidate is re-tested exactly, so [`FileIndex::plan`] returns
/// the same plan as [`FileIndex::plan_linear`], in less time for large tables.
///
/// ```
/// use geoberg_crs::{ColumnType, Crs, FormatVersion};
/// use geoberg_geostats::BBox;
/// use geoberg_pruning::{FileBounds, FileIndex, BoxFilter};
///
/// let files = vec![
///     FileBounds::new("a.parquet", 100, 1_000, Some(BBox::new(0.0, 0.0, 1.0, 1.0))),
///     FileBounds::new("b.parquet", 100, 1_000, Some(BBox::new(5.0, 5.0, 6.0, 6.0))),
///     FileBounds::new("c.parquet", 100, 1_000, None),
/// ];
/// let index = FileIndex::build(files, &ColumnType::geometry(Crs::Epsg(4326)), FormatVersion::V3)?;
/// let plan = index.plan(&BoxFilter::intersects(BBox::new(0.5, 0.5, 2.0, 2.0)))?;
/// let paths: Vec<&str> = plan.read_indices().map(|i| index.entries()[i].path.as_str()).collect();
/// assert_eq!(paths, ["a.parquet", "c.parquet"]); // c has no bounds: unknown, read
/// assert_eq!(plan.skipped().files, 1);
/// # Ok::<(), geoberg_pruning::PruneError>(())
/// ```
#[derive(Debug)]
pub struct FileIndex<T> {
    entries: Vec<T>,
    tree: RTree<Leaf>,
    /// Entries tested one by one on every plan.
    linear: Vec<u32>,
    total: Tally,
    all_null: u64,
    no_rows: u64,
    rules: ColumnRules,
}

impl<T: Bounded> FileIndex<T> {
    /// Indexes `entries`, which hold bounds of a column of type `column` in a table of
    /// `format_version`.
    pub fn build(
        entries: Vec<T>,
        column: &ColumnType,
        format_version: FormatVersion,
    ) -> Result<Self, PruneError> {
        let limit = u32::MAX as usize;
        if entries.len() > limit {
            return Err(PruneError::TooManyEntries {
                count: entries.len(),
                limit,
            });
        }
        let rules = ColumnRules::for_files(column, format_version);
        let surface = rules.surface();
        let mut leaves = Vec::with_capacity(entries.len());
        let mut linear = Vec::new();
        let (mut total, mut all_null, mut no_rows) = (Tally::default(), 0, 0);
        for (i, e) in entries.iter().enumerate() {
            let entry = i as u32;
            let records = e.record_count();
            total.add(records, e.size_in_bytes());
            if records == 0 {
                no_rows += 1;
                continue;
            }
            match e.bounds() {
                Bounds::AllNull => all_null += 1,
                Bounds::Unknown => linear.push(entry),
                Bounds::Box(b) => match tree_pieces(&b, surface) {
                    Some(pieces) => leaves.extend(
                        pieces
                            .into_iter()
                            .flatten()
                            .map(|envelope| Leaf { envelope, entry }),
                    ),
                    None => linear.push(entry),
                },
            }
        }
        Ok(FileIndex {
            entries,
            tree: RTree::bulk_load(leaves),
            linear,
            total,
            all_null,
            no_rows,
            rules,
        })
    }

    /// The indexed entries, in the order given; [`PlannedRead::index`] points into this slice.
    pub fn entries(&self) -> &[T] {
        &self.entries
    }

    /// Gives the entries back.
    pub fn into_entries(self) -> Vec<T> {
        self.entries
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries `filter` must read, found through the R-tree.
    ///
    /// Fails when the window is invalid for the column or in another CRS.
    pub fn plan(&self, filter: &BoxFilter) -> Result<PrunePlan, PruneError> {
        let query = match self.rules.query(filter)? {
            Some(q) if !self.rules.cannot_skip() => q,
            // Nothing to search for: every entry is read, or none is.
            _ => return self.plan_linear(filter),
        };
        let mut candidates: Vec<u32> = Vec::new();
        for x in query.x.pieces(self.rules.surface()) {
            let env = envelope((x.min, x.max), (query.y.min, query.y.max));
            candidates.extend(
                self.tree
                    .locate_in_envelope_intersecting(env)
                    .map(|leaf| leaf.entry),
            );
        }
        candidates.extend_from_slice(&self.linear);
        candidates.sort_unstable();
        candidates.dedup();

        let mut plan = self.rules.empty_plan(filter);
        plan.total = self.total;
        plan.all_null = self.all_null;
        plan.no_rows = self.no_rows;
        for entry in candidates {
            let index = entry as usize;
            let e = &self.entries[index];
            if let Decision::Read(reason) =
                decide(Some(&query), false, e.bounds(), e.record_count())
            {
                plan.read.add(e.record_count(), e.size_in_bytes());
                plan.reads.push(PlannedRead { index, reason });
            }
        }
        Ok(plan)
    }

    /// The same plan as [`FileIndex::plan`], by testing every entry: the reference, and the
    /// faster choice for a handful of entries.
    pub fn plan_linear(&self, filter: &BoxFilter) -> Result<PrunePlan, PruneError> {
        plan_by_scan(&self.entries, &self.rules, filter)
    }

    /// Bytes the index holds besides the entries themselves: the struct, every R-tree node's
    /// child array (rstar allocates them at their final length when bulk loading) and the list
    /// of entries tested one by one.
    pub fn index_bytes(&self) -> usize {
        fn node_bytes(node: &rstar::ParentNode<Leaf>) -> usize {
            let own = size_of_val(node.children());
            own + node
                .children()
                .iter()
                .map(|c| match c {
                    rstar::RTreeNode::Parent(p) => node_bytes(p),
                    rstar::RTreeNode::Leaf(_) => 0,
                })
                .sum::<usize>()
        }
        size_of::<Self>() + node_bytes(self.tree.root()) + self.linear.capacity() * size_of::<u32>()
    }
}
