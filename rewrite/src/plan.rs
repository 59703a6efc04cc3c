//! The serializable rewrite plan: which files, which key ranges, which output files.

use serde::{Deserialize, Serialize};

use geoberg_hilbert::{Bounds, HilbertCurve};

use crate::{
    Extent, HilbertSpec, InputFile, PartitionKey, RewriteError, RewriteOptions, RowClass, RowOrder,
    SelectionReason,
};

/// The curve a [`HilbertSpec`] describes.
pub(crate) fn hilbert_curve(spec: &HilbertSpec) -> Result<HilbertCurve, RewriteError> {
    let b = spec.bounds;
    let bounds = Bounds::new(b.min_x, b.min_y, b.max_x, b.max_y)?;
    Ok(HilbertCurve::new(spec.precision, bounds)?)
}

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

    /// Checks indices and ranges: a plan may come from JSON written elsewhere.
    pub fn validate(&self) -> Result<(), RewriteError> {
        let bad = |m: String| Err(RewriteError::InvalidPlan(m));
        HilbertSpec::new(u32::from(self.curve.precision), self.curve.bounds)?;
        hilbert_curve(&self.curve)?;
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
