//! The serializable rewrite plan: which files, which key ranges, which output files.

use serde::{Deserialize, Serialize};

use crate::{
    Extent, HilbertSpec, InputFile, PartitionKey, RewriteError, RewriteOptions, RowClass, RowOrder,
    SelectionReason,
};

/// An inclusive range of Hilbert keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRange {
    /// Smallest key in the range.
    pub first: u64,
    /// Largest key in the range.
    pub last: u64,
}

impl KeyRange {
    /// Whether `key` falls in the range.
    pub fn contains(&self, key: u64) -> bool {
        self.first <= key && key <= self.last
    }
}

/// Rows whose bbox is wider or taller than this go to the oversized files of their partition.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OversizeRule {
    /// Largest regular bbox width (the expected width of one output file).
    pub max_width: f64,
    /// Largest regular bbox height.
    pub max_height: f64,
}

impl OversizeRule {
    /// Whether a bbox of this size is oversized.
    #[inline]
    pub fn is_oversized(&self, width: f64, height: f64) -> bool {
        width > self.max_width || height > self.max_height
    }
}

/// One partition of the rewrite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionPlan {
    /// The partition.
    pub partition: PartitionKey,
    /// Its selected files: indices into [`RewritePlan::inputs`].
    pub inputs: Vec<usize>,
    /// Why they were selected.
    pub reason: SelectionReason,
    /// Mean files per grid cell before the rewrite (from the manifests' bounds).
    pub overlap_depth: f64,
    /// Sum of the inputs' sizes.
    pub input_bytes: u64,
    /// Sum of the inputs' record counts.
    pub record_count: u64,
    /// Output size aimed at.
    pub target_file_size_bytes: u64,
    /// Output files expected over all classes.
    pub expected_output_files: usize,
    /// The oversized-row rule, when the partition has more than one output file.
    pub oversize: Option<OversizeRule>,
    /// Union of the sampled bboxes (for a geography column on the sphere: X may wrap).
    pub data_extent: Option<Extent>,
    /// Partitions with the same group are committed together (partial progress).
    pub commit_group: usize,
}

/// A unit of work: read the partition's inputs, keep the rows of `class` whose key is in
/// `key_range`, sort them and write output files. Runnable anywhere; only the commit is central.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewriteTask {
    /// Position in [`RewritePlan::tasks`].
    pub id: usize,
    /// Index into [`RewritePlan::partitions`].
    pub partition: usize,
    /// The rows this task owns.
    pub class: RowClass,
    /// Keys of this task. Ranges of one class and partition are disjoint, ordered and cover all
    /// keys, so the output files of a partition have disjoint ordered key ranges.
    pub key_range: KeyRange,
    /// First keys of the sort chunks, ascending, starting at `key_range.first`: each chunk is
    /// sorted in memory on its own, so its size is bounded by the memory budget.
    pub chunk_starts: Vec<u64>,
    /// Estimated output bytes.
    pub expected_bytes: u64,
}

/// A complete, serializable rewrite plan (`serde_json` round-trips it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewritePlan {
    /// Geometry column whose bbox centres are keyed.
    pub geometry_column: String,
    /// Columns of the inputs that hold geography (the keyed one included when it does): keyed by
    /// the centre of their boxes on the sphere, bounded on the sphere in the output files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub geography_columns: Vec<String>,
    /// The curve (of [`RowOrder::Hilbert`]; other orders do not read it).
    pub curve: HilbertSpec,
    /// The order rows are written in; Hilbert unless a sort order or bin-pack said otherwise.
    #[serde(default, skip_serializing_if = "RowOrder::is_hilbert")]
    pub order: RowOrder,
    /// Options in force.
    pub options: RewriteOptions,
    /// Selected input files.
    pub inputs: Vec<InputFile>,
    /// Partitions to rewrite.
    pub partitions: Vec<PartitionPlan>,
    /// Tasks, grouped by partition, then class, then key.
    pub tasks: Vec<RewriteTask>,
}

impl RewritePlan {
    /// Whether the keyed column holds geography.
    pub fn keys_geography(&self) -> bool {
        self.geography_columns.contains(&self.geometry_column)
    }

    /// Whether there is nothing to rewrite.
    pub fn is_empty(&self) -> bool {
        self.partitions.is_empty()
    }

    /// The plan as JSON, to ship tasks to other workers.
    pub fn to_json(&self) -> Result<String, RewriteError> {
        serde_json::to_string(self).map_err(|e| RewriteError::InvalidPlan(e.to_string()))
    }

    /// A plan from JSON, checked for internal consistency.
    pub fn from_json(json: &str) -> Result<RewritePlan, RewriteError> {
        let plan: RewritePlan =
            serde_json::from_str(json).map_err(|e| RewriteError::InvalidPlan(e.to_string()))?;
        plan.validate()?;
        Ok(plan)
    }

    /// Total bytes of the selected inputs.
    pub fn input_bytes(&self) -> u64 {
        self.inputs.iter().map(|f| f.file_size_bytes).sum()
    }

    /// Cuts the regular tasks of partition `partition` at `cuts` (keys that start a new key
    /// range), so that no output file holds keys from both sides of a cut: incremental
    /// clustering keeps each re-clustered range inside the range it had. Task ids are renumbered;
    /// each piece keeps the chunk starts inside it (its first key starting its first chunk) and
    /// an equal share of the expected bytes.
    pub fn cut_tasks(&mut self, partition: usize, cuts: &[u64]) {
        let mut tasks = Vec::with_capacity(self.tasks.len());
        for task in std::mem::take(&mut self.tasks) {
            let KeyRange { first, last } = task.key_range;
            let inside: Vec<u64> = cuts
                .iter()
                .copied()
                .filter(|&c| first < c && c <= last)
                .collect();
            if task.partition != partition || task.class != RowClass::Regular || inside.is_empty() {
                tasks.push(task);
                continue;
            }
            let mut starts: Vec<u64> = std::iter::once(first).chain(inside).collect();
            starts.sort_unstable();
            starts.dedup();
            let share = task.expected_bytes / starts.len() as u64;
            for (i, &start) in starts.iter().enumerate() {
                let end = starts.get(i + 1).map_or(last, |&next| next - 1);
                let chunk_starts = std::iter::once(start)
                    .chain(
                        task.chunk_starts
                            .iter()
                            .copied()
                            .filter(|&c| start < c && c <= end),
                    )
                    .collect();
                tasks.push(RewriteTask {
                    key_range: KeyRange {
                        first: start,
                        last: end,
                    },
                    chunk_starts,
                    expected_bytes: share,
                    ..task.clone()
                });
            }
        }
        for (id, t) in tasks.iter_mut().enumerate() {
            t.id = id;
        }
        self.tasks = tasks;
    }

    /// Checks indices and ranges: a plan may come from JSON written elsewhere.
    pub fn validate(&self) -> Result<(), RewriteError> {
        let bad = |m: String| Err(RewriteError::InvalidPlan(m));
        HilbertSpec::new(u32::from(self.curve.precision), self.curve.bounds)?;
        crate::keys::hilbert_curve(&self.curve)?;
        self.order.validate()?;
        for (i, p) in self.partitions.iter().enumerate() {
            if let Some(&f) = p.inputs.iter().find(|&&f| f >= self.inputs.len()) {
                return bad(format!(
                    "partition {i} lists input {f}, but there are {}",
                    self.inputs.len()
                ));
            }
        }
        for (i, t) in self.tasks.iter().enumerate() {
            if t.id != i || t.partition >= self.partitions.len() {
                return bad(format!(
                    "task {i} has id {} and partition {}",
                    t.id, t.partition
                ));
            }
            let ordered = t.chunk_starts.first() == Some(&t.key_range.first)
                && t.chunk_starts.windows(2).all(|w| w[0] < w[1])
                && t.chunk_starts
                    .last()
                    .is_some_and(|&k| k <= t.key_range.last);
            if !ordered {
                return bad(format!(
                    "task {i}: chunk starts {:?} do not start its key range {:?} in order",
                    t.chunk_starts, t.key_range
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(
        id: usize,
        partition: usize,
        class: RowClass,
        range: (u64, u64),
        chunks: &[u64],
    ) -> RewriteTask {
        RewriteTask {
            id,
            partition,
            class,
            key_range: KeyRange {
                first: range.0,
                last: range.1,
            },
            chunk_starts: chunks.to_vec(),
            expected_bytes: 90,
        }
    }

    #[test]
    fn tasks_are_cut_at_range_starts_and_stay_valid() {
        let partition = |name: &str| PartitionPlan {
            partition: PartitionKey(name.into()),
            inputs: Vec::new(),
            reason: SelectionReason::RewriteAll,
            overlap_depth: 1.0,
            input_bytes: 0,
            record_count: 0,
            target_file_size_bytes: 1,
            expected_output_files: 1,
            oversize: None,
            data_extent: None,
            commit_group: 0,
        };
        let mut plan = RewritePlan {
            geometry_column: "geom".into(),
            geography_columns: Vec::new(),
            curve: HilbertSpec::wgs84(16).unwrap(),
            order: RowOrder::Hilbert,
            options: RewriteOptions::default(),
            inputs: Vec::new(),
            partitions: vec![partition("a"), partition("b")],
            tasks: vec![
                task(0, 0, RowClass::Regular, (0, 99), &[0, 40, 70]),
                task(1, 0, RowClass::Regular, (100, u64::MAX), &[100]),
                task(2, 0, RowClass::Oversized, (0, u64::MAX), &[0]),
                task(3, 1, RowClass::Regular, (0, u64::MAX), &[0]),
            ],
        };
        plan.cut_tasks(0, &[0, 50, 70, 100, 200]);
        plan.validate().unwrap();
        let ranges: Vec<(usize, RowClass, u64, u64, Vec<u64>)> = plan
            .tasks
            .iter()
            .map(|t| {
                (
                    t.partition,
                    t.class,
                    t.key_range.first,
                    t.key_range.last,
                    t.chunk_starts.clone(),
                )
            })
            .collect();
        assert_eq!(
            ranges,
            [
                (0, RowClass::Regular, 0, 49, vec![0, 40]),
                (0, RowClass::Regular, 50, 69, vec![50]),
                (0, RowClass::Regular, 70, 99, vec![70]),
                (0, RowClass::Regular, 100, 199, vec![100]),
                (0, RowClass::Regular, 200, u64::MAX, vec![200]),
                (0, RowClass::Oversized, 0, u64::MAX, vec![0]),
                (1, RowClass::Regular, 0, u64::MAX, vec![0]),
            ]
        );
        assert_eq!(plan.tasks[0].expected_bytes, 30);
    }
}
