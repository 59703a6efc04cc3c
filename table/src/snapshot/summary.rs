//! Snapshot summaries (spec: "Snapshots", `summary`; Java's `SnapshotSummary.Builder`): the
//! `added-*` / `deleted-*` counts of the files a commit adds and removes, collected by
//! `iceberg`'s [`SnapshotSummaryCollector`], and the `total-*` keys carried from the parent.

use std::collections::HashMap;

use iceberg::spec::{
    DataFile, Operation, PartitionSpecRef, SchemaRef, SnapshotSummaryCollector, Summary,
};

/// Summary keys whose totals follow from an added and a removed count.
const TOTALS: [(&str, &str, &str); 6] = [
    ("total-data-files", "added-data-files", "deleted-data-files"),
    (
        "total-delete-files",
        "added-delete-files",
        "removed-delete-files",
    ),
    ("total-records", "added-records", "deleted-records"),
    ("total-files-size", "added-files-size", "removed-files-size"),
    (
        "total-position-deletes",
        "added-position-deletes",
        "removed-position-deletes",
    ),
    (
        "total-equality-deletes",
        "added-equality-deletes",
        "removed-equality-deletes",
    ),
];

/// Collects what one commit adds and removes.
pub(crate) struct SummaryBuilder {
    collector: SnapshotSummaryCollector,
    schema: SchemaRef,
}

impl SummaryBuilder {
    pub(crate) fn new(schema: SchemaRef) -> Self {
        let mut collector = SnapshotSummaryCollector::default();
        // Per-partition summaries only for small commits, as Java's default (0) keeps none.
        collector.set_partition_summary_limit(0);
        SummaryBuilder { collector, schema }
    }

    pub(crate) fn added(&mut self, file: &DataFile, spec: &PartitionSpecRef) {
        self.collector
            .add_file(file, self.schema.clone(), spec.clone());
    }

    pub(crate) fn removed(&mut self, file: &DataFile, spec: &PartitionSpecRef) {
        self.collector
            .remove_file(file, self.schema.clone(), spec.clone());
    }

    /// The summary: the collected counts, `extra` (an operation's own keys), and every total
    /// carried from `parent`.
    pub(crate) fn build(
        &self,
        operation: Operation,
        parent: Option<&Summary>,
        extra: &HashMap<String, String>,
    ) -> Summary {
        let mut p = self.collector.build();
        let get = |m: &HashMap<String, String>, k: &str| {
            m.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        };
        let prev = parent.map(|s| &s.additional_properties);
        for (total, added, removed) in TOTALS {
            let before = prev.map_or(0, |m| get(m, total));
            let value = (before + get(&p, added)).saturating_sub(get(&p, removed));
            p.insert(total.to_string(), value.to_string());
        }
        p.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        Summary {
            operation,
            additional_properties: p,
        }
    }
}
