//! The clustered layout a Hilbert rewrite leaves behind: per partition, the Hilbert key range of
//! every regular file it wrote. It is kept in a Puffin file (blob type [`CLUSTERED_LAYOUT_BLOB`])
//! listed as the statistics file of the rewrite's snapshot, so that every engine's
//! `expire_snapshots` and orphan-file removal treat it as the snapshot's own and readers read
//! past it, and so that later appends cut their rows at the same ranges (cluster on write)
//! without reading a data file.
//!
//! The layout is a hint for where rows go, never for what a scan reads: scans plan from the
//! manifests. It is found on the nearest ancestor of the current snapshot that has one, unless a
//! rewrite that recorded none replaced data files in between (a bin-pack or a column sort: the
//! ranges no longer describe the files).

use std::collections::{BTreeMap, HashSet};

use geoberg_crs::{Extent, HilbertSpec};
use geoberg_puffin::{Blob, PuffinReader, PuffinWriter};
use geoberg_rewrite::{KeyRange, OutputFile, OversizeRule, RewritePlan, RowClass};
use iceberg::spec::{Operation, StatisticsFile};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::spatial_index::SpatialIndex;
use crate::table::Table;

/// The Puffin blob type of a [`ClusteredLayout`] (JSON, uncompressed).
pub const CLUSTERED_LAYOUT_BLOB: &str = "geoberg-clustered-layout-v1";

/// How to get past an unreadable layout: it only guides appends.
const LAYOUT_FIX: &str = "the clustered layout only guides where appended rows go: run CREATE \
                          SPATIAL INDEX again to write a new one, or set \
                          'geoberg.write.cluster-on-write' = 'false' to append without it";

/// The key ranges of the files a Hilbert rewrite wrote, by partition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusteredLayout {
    /// The geometry column the rows are keyed by.
    pub column: String,
    /// Precision of the curve.
    pub precision: u8,
    /// Bounds of the curve: `[min_x, min_y, max_x, max_y]`.
    pub bounds: [f64; 4],
    /// The partitions the rewrites clustered.
    pub partitions: Vec<PartitionLayout>,
}

/// The clustered files of one partition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionLayout {
    /// The partition, as the rewrite names it (its partition tuple).
    pub partition: String,
    /// Rows whose bbox is larger than this went to the rewrite's oversized files.
    pub oversize: Option<OversizeRule>,
    /// The regular files, by first key; their ranges are disjoint.
    pub files: Vec<RangeFile>,
    /// New rows an incremental run merged without re-clustering their ranges (which had not
    /// grown enough): files of neighbouring keys, still new to the next run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deltas: Vec<RangeFile>,
}

/// One clustered file and the keys of its rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RangeFile {
    /// The data file.
    pub path: String,
    /// Smallest key of its rows.
    pub first: u64,
    /// Largest key of its rows.
    pub last: u64,
    /// Its rows when written.
    pub rows: u64,
    /// For a delta: the generation of deltas it belongs to (the incremental runs of a partition
    /// count up from 1); 0 for clustered files, and for deltas recorded before generations were.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub generation: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ClusteredLayout {
    /// The spatial index the keys are on.
    pub fn index(&self) -> Result<SpatialIndex> {
        let [min_x, min_y, max_x, max_y] = self.bounds;
        let spec = HilbertSpec::new(
            u32::from(self.precision),
            Extent::new(min_x, min_y, max_x, max_y),
        )
        .map_err(|e| Error::InvalidData(format!("clustered layout: {e}")))?;
        Ok(SpatialIndex {
            column: self.column.clone(),
            spec,
        })
    }

    /// The layout after a Hilbert rewrite: `previous` (when on the same index) without the
    /// files the rewrite `replaced`, plus the files it wrote.
    pub(crate) fn after_rewrite(
        previous: Option<ClusteredLayout>,
        rewritten: &RewrittenRanges,
        replaced: &HashSet<String>,
    ) -> ClusteredLayout {
        let index = &rewritten.index;
        let b = index.spec.bounds;
        let same_index = |p: &ClusteredLayout| p.index().ok().as_ref() == Some(index);
        let mut partitions: BTreeMap<String, PartitionLayout> = previous
            .filter(same_index)
            .map(|p| p.partitions)
            .unwrap_or_default()
            .into_iter()
            .map(|p| (p.partition.clone(), p))
            .collect();
        for p in partitions.values_mut() {
            p.files.retain(|f| !replaced.contains(&f.path));
            p.deltas.retain(|f| !replaced.contains(&f.path));
        }
        for new in &rewritten.partitions {
            let p = partitions
                .entry(new.partition.clone())
                .or_insert_with(|| PartitionLayout {
                    partition: new.partition.clone(),
                    oversize: None,
                    files: Vec::new(),
                    deltas: Vec::new(),
                });
            p.oversize = new.oversize;
            p.files.extend(new.files.iter().cloned());
            p.deltas.extend(new.deltas.iter().cloned());
        }
        ClusteredLayout {
            column: index.column.clone(),
            precision: index.spec.precision,
            bounds: [b.min_x, b.min_y, b.max_x, b.max_y],
            partitions: partitions
                .into_values()
                .filter(|p| !p.files.is_empty())
                .map(|mut p| {
                    p.files.sort_by_key(|f| (f.first, f.last));
                    p.deltas.sort_by_key(|f| (f.first, f.last));
                    p
                })
                .collect(),
        }
    }

    /// Writes the layout at `location` as the Puffin statistics file of snapshot
    /// `snapshot_id` (sequence number `sequence_number`).
    pub(crate) fn write(
        &self,
        table: &Table,
        location: String,
        snapshot_id: i64,
        sequence_number: i64,
    ) -> Result<StatisticsFile> {
        let puffin = |e: geoberg_puffin::Error| Error::corrupt(&location, e.to_string());
        let data =
            serde_json::to_vec(self).map_err(|e| Error::corrupt(&location, e.to_string()))?;
        // A plain binary column of WKB counts too (tables other engines wrote).
        let field = table.geo_column(&self.column)?.field_id;
        let properties = BTreeMap::from([("column".to_string(), self.column.clone())]);
        let mut writer = PuffinWriter::new(Vec::new()).map_err(puffin)?;
        writer
            .add_blob(Blob {
                blob_type: CLUSTERED_LAYOUT_BLOB.to_string(),
                fields: vec![field],
                snapshot_id,
                sequence_number,
                properties,
                data,
            })
            .map_err(puffin)?;
        let (bytes, summary) = writer.finish().map_err(puffin)?;
        table.storage().write_new(&location, bytes)?;
        Ok(StatisticsFile {
            snapshot_id,
            statistics_path: location,
            file_size_in_bytes: summary.file_size_in_bytes as i64,
            file_footer_size_in_bytes: summary.footer_size_in_bytes as i64,
            key_metadata: None,
            // The table metadata lists no blob: pyiceberg 0.12 refuses a statistics file whose
            // blob types are not the spec's two (theta sketches, deletion vectors). The Puffin
            // footer names the blob; engines looking for sketches find none here.
            blob_metadata: Vec::new(),
        })
    }

    /// The layout the table's current rows were clustered into, if any: from the nearest
    /// ancestor snapshot that recorded one, unless a rewrite that recorded none replaced data
    /// files since, or the column's spatial index changed.
    pub fn current(table: &Table) -> Result<Option<ClusteredLayout>> {
        let md = table.metadata();
        let mut next = md.current_snapshot_id();
        while let Some(id) = next {
            let Some(snapshot) = md.snapshot_by_id(id) else {
                break;
            };
            // Statistics another engine wrote for a snapshot hold no layout: look further back.
            if let Some(stats) = md.statistics_for_snapshot(id)
                && let Some(layout) = ClusteredLayout::read(table, &stats.statistics_path)?
            {
                let indexes = table.properties()?.spatial_indexes;
                let index = layout.index()?;
                return Ok(indexes.contains(&index).then_some(layout));
            }
            let summary = snapshot.summary();
            let replaced_files = summary
                .additional_properties
                .get("deleted-data-files")
                .is_some_and(|n| n != "0");
            if summary.operation == Operation::Replace && replaced_files {
                return Ok(None);
            }
            next = snapshot.parent_snapshot_id();
        }
        Ok(None)
    }

    /// Reads the layout blob of the Puffin file at `location`; `None` when the file holds none
    /// (statistics another engine wrote).
    fn read(table: &Table, location: &str) -> Result<Option<ClusteredLayout>> {
        let bytes = table.storage().read(location)?;
        let puffin =
            |e: geoberg_puffin::Error| Error::corrupt(location, format!("{e}; {LAYOUT_FIX}"));
        let mut reader =
            PuffinReader::open(std::io::Cursor::new(bytes), location).map_err(puffin)?;
        let Some(blob) = reader
            .metadata()
            .blobs
            .iter()
            .find(|b| b.blob_type == CLUSTERED_LAYOUT_BLOB)
            .cloned()
        else {
            return Ok(None);
        };
        let data = reader.read_blob(&blob).map_err(puffin)?;
        serde_json::from_slice(&data).map(Some).map_err(|e| {
            Error::corrupt(
                location,
                format!("clustered layout is not valid JSON ({e}); {LAYOUT_FIX}"),
            )
        })
    }
}

/// The regular files one Hilbert rewrite wrote, by partition: what it adds to the layout.
#[derive(Debug, Clone)]
pub(crate) struct RewrittenRanges {
    /// The index the rewrite clustered by.
    pub(crate) index: SpatialIndex,
    /// Its new files (each partition with the oversize rule it used).
    pub(crate) partitions: Vec<PartitionLayout>,
}

impl RewrittenRanges {
    /// The regular files of `added`, written by `plan` on `index`.
    pub(crate) fn new(index: SpatialIndex, plan: &RewritePlan, added: &[OutputFile]) -> Self {
        let mut partitions: BTreeMap<&str, PartitionLayout> = BTreeMap::new();
        for f in added.iter().filter(|f| f.class == RowClass::Regular) {
            let key = f.partition.0.as_str();
            let p = partitions.entry(key).or_insert_with(|| PartitionLayout {
                partition: key.to_string(),
                oversize: plan
                    .partitions
                    .iter()
                    .find(|p| p.partition == f.partition)
                    .and_then(|p| p.oversize),
                files: Vec::new(),
                deltas: Vec::new(),
            });
            p.files.push(RangeFile {
                path: f.location.clone(),
                first: f.key_range.first,
                last: f.key_range.last,
                rows: f.record_count,
                generation: 0,
            });
        }
        RewrittenRanges {
            index,
            partitions: partitions.into_values().collect(),
        }
    }

    /// Moves the files for which `is_range(partition, key range)` does not hold to the deltas,
    /// of generation `generation(partition)`.
    pub(crate) fn split_deltas(
        &mut self,
        is_range: impl Fn(&str, KeyRange) -> bool,
        generation: impl Fn(&str) -> u64,
    ) {
        for p in &mut self.partitions {
            let (files, mut deltas): (Vec<RangeFile>, Vec<RangeFile>) =
                std::mem::take(&mut p.files).into_iter().partition(|f| {
                    let range = KeyRange {
                        first: f.first,
                        last: f.last,
                    };
                    is_range(&p.partition, range)
                });
            for d in &mut deltas {
                d.generation = generation(&p.partition);
            }
            (p.files, p.deltas) = (files, deltas);
        }
    }
}
