//! Planning one window from the persisted index: the root's manifest boxes skip whole
//! manifests, the sidecars of the others give their files' boxes, and any manifest the index
//! does not describe is decoded from its Avro. The result is the plan the manifests give
//! (checked by `tests/bounds_index.rs` against a brute-force filter).

use std::collections::HashMap;

use geoberg_geostats::BBox;
use geoberg_pruning::{BoxFilter, FileBounds, FileIndex, PrunePlan};
use iceberg::spec::ManifestFile;

use super::{ManifestBounds, Root, read_blob, sidecar};
use crate::box_rule::{BoxRule, FileBox};
use crate::error::Result;
use crate::file_index::{BoxTally, TableFileIndex};
use crate::manifest::{decode_manifest, fetch_and_decode};
use crate::table::Table;

/// A window planned from the index: the files to read and the totals of every live file.
#[derive(Debug)]
pub(crate) struct IndexedPlan {
    /// Files to read, in manifest order.
    pub(crate) files: Vec<FileBounds>,
    /// Live data files of the version.
    pub(crate) files_total: usize,
    /// Their bytes.
    pub(crate) bytes_total: u64,
    /// Their rows.
    pub(crate) records_total: u64,
    /// How the files were chosen, as the file index says it, and what the index read.
    pub(crate) reasons: Vec<String>,
    /// The pruning plan over the files of the manifests not skipped whole.
    pub(crate) pruning: PrunePlan,
}

/// One data manifest as the planner sees it: described by the index, or not.
enum Listed<'a> {
    Indexed(&'a ManifestBounds),
    Unindexed(&'a ManifestFile),
}

impl Table {
    /// Plans `filter` on `column` from the persisted file-bounds index of the current
    /// snapshot. `Ok(Err(why))` when the index cannot be used at all: the caller plans from
    /// the manifests and reports `why`. A window the column cannot take fails as it does on
    /// the manifests' path.
    pub(crate) fn plan_from_bounds_index(
        &self,
        column: &str,
        filter: &BoxFilter,
    ) -> Result<std::result::Result<IndexedPlan, String>> {
        let (location, root) = match Root::of_current(self) {
            Ok(Some(found)) => found,
            Ok(None) => {
                return Ok(Err(
                    "the current snapshot names no file-bounds index (another engine or an \
                     older geoberg committed it)"
                        .into(),
                ));
            }
            Err(why) => return Ok(Err(format!("the file-bounds index is unreadable: {why}"))),
        };
        let rule = BoxRule::of(self, column)?;
        let Some(c) = root
            .columns
            .iter()
            .position(|ic| ic.name == rule.column().name && ic.rule == rule.key())
        else {
            return Ok(Err(format!(
                "the file-bounds index {location} holds no boxes of {column:?} under the \
                 table's current bounds rule"
            )));
        };
        let by_path: HashMap<&str, &ManifestBounds> = root
            .manifests
            .iter()
            .map(|m| (m.path.as_str(), m))
            .collect();
        let manifests = self.data_manifests()?;
        let listed: Vec<Listed<'_>> = manifests
            .iter()
            .map(|m| match by_path.get(m.manifest_path.as_str()) {
                Some(e) if e.describes(m) => Listed::Indexed(e),
                _ => Listed::Unindexed(m),
            })
            .collect();

        // Whole manifests first: each indexed one as one entry with its union box.
        let pseudo: Vec<FileBounds> = listed
            .iter()
            .map(|l| match l {
                Listed::Indexed(e) => {
                    let mc = &e.columns[c];
                    let bbox = mc.bbox.map(|[a, b, cc, d]| BBox::new(a, b, cc, d));
                    FileBounds::new(e.path.clone(), e.records, e.bytes, bbox)
                        .with_all_null(mc.all_null)
                }
                Listed::Unindexed(m) => FileBounds::new(m.manifest_path.clone(), 1, 0, None),
            })
            .collect();
        let (index_type, index_version) = rule.index_rules();
        let manifest_index = FileIndex::build(pseudo, index_type, index_version)?;
        TableFileIndex::check_window(filter)?;
        let wanted: Vec<usize> = manifest_index.plan(filter)?.read_indices().collect();

        // Sidecars of the wanted indexed manifests, checked against the root; a failed check
        // sends the manifest to the Avro.
        let sidecars: Vec<(usize, &ManifestBounds)> = wanted
            .iter()
            .filter_map(|&i| match listed[i] {
                Listed::Indexed(e) => Some((i, e)),
                Listed::Unindexed(_) => None,
            })
            .collect();
        let locations: Vec<&str> = sidecars.iter().map(|(_, e)| e.sidecar.as_str()).collect();
        let fetched = fetch_and_decode(self.storage(), &locations, |k, location, bytes| {
            let e = sidecars[k].1;
            if bytes.len() as u64 != e.sidecar_length || crc32fast::hash(&bytes) != e.sidecar_crc {
                return Ok(Err(format!(
                    "{location} does not match its length or CRC-32"
                )));
            }
            let boxes = read_blob(&bytes, location, super::MANIFEST_BOUNDS_BLOB)
                .map_err(|e| e.to_string())
                .and_then(|data| sidecar::decode(&data, c));
            Ok(match boxes {
                Ok(b) if b.len() as u64 == e.files => Ok(b),
                Ok(b) => Err(format!(
                    "{location} lists {} files, not {}",
                    b.len(),
                    e.files
                )),
                Err(why) => Err(format!("{location}: {why}")),
            })
        });
        let fetched = match fetched {
            Ok(f) => f,
            Err(e) => return Ok(Err(format!("a file-bounds sidecar is unreadable: {e}"))),
        };
        let mut per_manifest: HashMap<usize, Vec<FileBox>> = HashMap::new();
        let mut to_decode: Vec<usize> = Vec::new();
        let mut problems = Vec::new();
        for ((i, _), got) in sidecars.iter().zip(fetched) {
            match got {
                Ok(boxes) => {
                    per_manifest.insert(*i, boxes);
                }
                Err(why) => {
                    problems.push(why);
                    to_decode.push(*i);
                }
            }
        }
        to_decode.extend(
            wanted
                .iter()
                .copied()
                .filter(|&i| matches!(listed[i], Listed::Unindexed(_))),
        );
        to_decode.sort_unstable();
        let avro: Vec<&str> = to_decode
            .iter()
            .map(|&i| manifests[i].manifest_path.as_str())
            .collect();
        let decoded = fetch_and_decode(self.storage(), &avro, |_, location, bytes| {
            Ok(decode_manifest(&bytes, location, rule.field_ids())?
                .into_iter()
                .filter(|e| e.is_live())
                .map(|e| rule.file(e.path, e.record_count, e.file_size, &e.stats))
                .collect::<Vec<_>>())
        })?;
        per_manifest.extend(to_decode.iter().copied().zip(decoded));

        // Totals over every live file; the tally of bounds problems over every manifest.
        let mut tally = BoxTally::default();
        let (mut files_total, mut bytes_total, mut records_total) = (0usize, 0u64, 0u64);
        let mut files = Vec::new();
        let unindexed = listed
            .iter()
            .filter(|l| matches!(l, Listed::Unindexed(_)))
            .count();
        for (i, l) in listed.iter().enumerate() {
            if let (Listed::Indexed(e), false) = (l, to_decode.contains(&i)) {
                let mc = &e.columns[c];
                files_total += e.files as usize;
                bytes_total += e.bytes;
                records_total += e.records;
                tally.undecodable += mc.undecodable as usize;
                tally.boundless += mc.boundless as usize;
                tally.total += e.files as usize;
                if tally.first_problem.is_none() {
                    tally.first_problem = mc.first_problem.clone();
                }
                if let Some(boxes) = per_manifest.remove(&i) {
                    files.extend(boxes.into_iter().map(|b| b.file));
                }
            } else if let Some(boxes) = per_manifest.remove(&i) {
                files_total += boxes.len();
                bytes_total += boxes.iter().map(|b| b.file.size_in_bytes).sum::<u64>();
                records_total += boxes.iter().map(|b| b.file.record_count).sum::<u64>();
                files.extend(boxes.into_iter().map(|b| tally.add(b)));
            } else if let Listed::Unindexed(m) = l {
                // Skipped whole (it has no rows): still counted.
                files_total += live_count(m);
            }
        }
        let mut reasons = rule.reasons().to_vec();
        reasons.extend(tally.reasons(&rule));
        let mut note = format!(
            "planned from the file-bounds index {location}: {} of {} manifests skipped on \
             their boxes",
            listed.len() - wanted.len(),
            listed.len()
        );
        if unindexed > 0 || !problems.is_empty() {
            note.push_str(&format!(
                "; {} manifests read from their Avro (not in the index, or its sidecar failed \
                 a check{})",
                to_decode.len(),
                problems
                    .first()
                    .map(|p| format!(": {p}"))
                    .unwrap_or_default()
            ));
        }
        let index = TableFileIndex::from_files(&rule, files, Vec::new())?;
        let pruning = index.plan(filter)?;
        let read: Vec<FileBounds> = pruning
            .read_indices()
            .map(|i| index.files().entries()[i].clone())
            .collect();
        let (r, s) = (pruning.read_summary(), pruning.skip_summary());
        if !r.is_empty() {
            reasons.push(format!("{column}: files read: {}", r.join(", ")));
        }
        if !s.is_empty() {
            reasons.push(format!("{column}: files skipped: {}", s.join(", ")));
        }
        reasons.push(note);
        Ok(Ok(IndexedPlan {
            files: read,
            files_total,
            bytes_total,
            records_total,
            reasons,
            pruning,
        }))
    }
}

/// Live entries of a manifest, from its list entry.
fn live_count(m: &ManifestFile) -> usize {
    (m.added_files_count.unwrap_or(0) + m.existing_files_count.unwrap_or(0)) as usize
}
