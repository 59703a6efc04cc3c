//! Iceberg v3 row lineage of the current snapshot's data files: each file's `first_row_id` and
//! data sequence number after inheritance (spec: "First Row ID Inheritance", "Sequence Number
//! Inheritance"), what a rewrite needs to carry its rows' `_row_id` and
//! `_last_updated_sequence_number` into new files, and what a scan needs to read them.

use std::collections::HashMap;

use geoberg_rewrite::RowLineage;
use iceberg::spec::{
    FormatVersion, ManifestContentType, ManifestEntryRef, ManifestFile, ManifestStatus,
};

use crate::error::Result;
use crate::manifest::read_manifest;
use crate::table::Table;

/// The `first_row_id` of each entry of a data manifest after inheritance: an explicit value is
/// kept; a null one becomes the manifest's `first_row_id` plus the record counts of the
/// preceding live entries that were null too (Java's `ManifestReader` skips DELETED entries,
/// whose inherited value the spec requires to be written explicitly). `None` where the manifest
/// has no `first_row_id` (written before an upgrade to v3) and the entry none either.
pub(crate) fn inherited_first_row_ids(
    manifest: &ManifestFile,
    entries: &[ManifestEntryRef],
) -> Vec<Option<i64>> {
    let mut next = manifest.first_row_id.map(|f| f as i64);
    entries
        .iter()
        .map(|e| {
            let file = e.data_file();
            match (file.first_row_id(), next.as_mut()) {
                (Some(id), _) => Some(id),
                (None, Some(n)) if e.status() != ManifestStatus::Deleted => {
                    let id = *n;
                    *n += file.record_count() as i64;
                    Some(id)
                }
                _ => None,
            }
        })
        .collect()
}

/// Row lineage of every live data file of the current snapshot, by file path; empty for v1/v2
/// tables (which have none).
pub(crate) fn live_file_lineage(table: &Table) -> Result<HashMap<String, RowLineage>> {
    let mut out = HashMap::new();
    if table.metadata().format_version() < FormatVersion::V3 {
        return Ok(out);
    }
    for m in table.manifests()? {
        if m.content != ManifestContentType::Data {
            continue;
        }
        let entries = read_manifest(table.storage(), &m)?;
        let ids = inherited_first_row_ids(&m, &entries);
        for (e, first_row_id) in entries.iter().zip(ids) {
            if !e.is_alive() {
                continue;
            }
            out.insert(
                e.file_path().to_string(),
                RowLineage {
                    first_row_id,
                    data_sequence_number: e.sequence_number().unwrap_or(m.sequence_number),
                },
            );
        }
    }
    Ok(out)
}
