//! Writing a snapshot's file-bounds index as part of its commit: a sidecar for each data
//! manifest the commit wrote (decoded from the bytes in hand), the parent's entries for the
//! manifests it keeps, and a rebuilt sidecar for a kept manifest the parent's index lacks or
//! misdescribes. A 1-row append thus reads one small root and writes two small files.

use std::collections::HashMap;

use bytes::Bytes;
use geoberg_crs::ColumnType;
use iceberg::spec::{ManifestContentType, ManifestFile};

use super::{
    IndexedColumn, MANIFEST_BOUNDS_BLOB, ManifestBounds, ManifestColumn, Root, puffin_file, sidecar,
};
use crate::box_rule::{BoxRule, FileBox};
use crate::error::Result;
use crate::manifest::{decode_manifest, fetch_and_decode};
use crate::storage::join;
use crate::table::Table;

/// Writes the index of the snapshot `snapshot_id` (sequence number `sequence_number`) whose
/// manifest list is `manifests`, on `table` (its parent version). `fresh` holds the bytes of
/// the data manifests this commit wrote. Every location is pushed to `written` before its
/// write, so that a failed attempt removes it. Returns the root's location, or `None` when the
/// table has no geometry column to index.
pub(crate) fn write_for_commit(
    table: &Table,
    snapshot_id: i64,
    sequence_number: i64,
    manifests: &[ManifestFile],
    fresh: &HashMap<String, Bytes>,
    written: &mut Vec<String>,
) -> Result<Option<String>> {
    // A column whose rule cannot be decided (an invalid bbox-column property) is left out:
    // scans of it plan from the manifests, as they would anyway.
    let rules: Vec<BoxRule> = table
        .geo_columns()
        .iter()
        .filter_map(|c| BoxRule::of(table, &c.name).ok())
        .collect();
    if rules.is_empty() {
        return Ok(None);
    }
    let columns: Vec<IndexedColumn> = rules
        .iter()
        .map(|r| IndexedColumn {
            name: r.column().name.clone(),
            rule: r.key(),
        })
        .collect();
    // The parent's entries, when its index covers the same columns under the same rules; an
    // unreadable parent index is rebuilt, never an error.
    let parent: HashMap<String, ManifestBounds> = match super::Root::of_current(table) {
        Ok(Some((_, root))) if root.columns == columns => root
            .manifests
            .into_iter()
            .map(|m| (m.path.clone(), m))
            .collect(),
        _ => HashMap::new(),
    };
    let data: Vec<&ManifestFile> = manifests
        .iter()
        .filter(|m| {
            m.content == ManifestContentType::Data
                && (m.has_added_files() || m.has_existing_files())
        })
        .collect();
    let mut entries: Vec<Option<ManifestBounds>> = Vec::with_capacity(data.len());
    let mut to_build: Vec<(usize, Bytes)> = Vec::new();
    let mut to_fetch: Vec<usize> = Vec::new();
    for (i, m) in data.iter().enumerate() {
        match (fresh.get(&m.manifest_path), parent.get(&m.manifest_path)) {
            (Some(bytes), _) => to_build.push((i, bytes.clone())),
            (None, Some(e)) if e.describes(m) => {}
            (None, _) => to_fetch.push(i),
        }
        entries.push(
            parent
                .get(&m.manifest_path)
                .filter(|e| e.describes(m) && !fresh.contains_key(&m.manifest_path))
                .cloned(),
        );
    }
    let field_ids: Vec<i32> = rules
        .iter()
        .flat_map(|r| r.field_ids().iter().copied())
        .collect();
    let boxes_of = |location: &str, bytes: &[u8]| -> Option<Vec<Vec<FileBox>>> {
        // A manifest that does not decode stays out of the index: planning reads it (and
        // reports its error) from the Avro.
        let decoded = decode_manifest(bytes, location, &field_ids).ok()?;
        let live: Vec<_> = decoded.into_iter().filter(|e| e.is_live()).collect();
        let mut offset = 0;
        Some(
            rules
                .iter()
                .map(|r| {
                    let n = r.field_ids().len();
                    let column = live
                        .iter()
                        .map(|e| {
                            let stats = e.stats.get(offset..offset + n).unwrap_or(&[]);
                            r.file(e.path.clone(), e.record_count, e.file_size, stats)
                        })
                        .collect();
                    offset += n;
                    column
                })
                .collect(),
        )
    };
    let mut built: Vec<(usize, Vec<Vec<FileBox>>)> = to_build
        .iter()
        .filter_map(|(i, bytes)| Some((*i, boxes_of(&data[*i].manifest_path, bytes)?)))
        .collect();
    if !to_fetch.is_empty() {
        let locations: Vec<&str> = to_fetch
            .iter()
            .map(|i| data[*i].manifest_path.as_str())
            .collect();
        // A kept manifest that cannot be read fails the commit as it would fail any scan.
        let fetched = fetch_and_decode(table.storage(), &locations, |k, location, bytes| {
            Ok(boxes_of(location, &bytes).map(|b| (to_fetch[k], b)))
        })?;
        built.extend(fetched.into_iter().flatten());
    }
    let dir = table.metadata_dir();
    for (i, columns) in built {
        let m = data[i];
        let name = m
            .manifest_path
            .rsplit('/')
            .next()
            .unwrap_or("manifest")
            .trim_end_matches(".avro");
        let location = join(
            &dir,
            &format!("{name}-bounds-{}.puffin", uuid::Uuid::new_v4()),
        );
        let bytes = puffin_file(
            &location,
            MANIFEST_BOUNDS_BLOB,
            snapshot_id,
            sequence_number,
            sidecar::encode(&columns),
        )?;
        let files = columns.first().map_or(&[][..], |c| c.as_slice());
        let entry = ManifestBounds {
            path: m.manifest_path.clone(),
            length: m.manifest_length,
            added_snapshot_id: m.added_snapshot_id,
            counts: [
                m.added_files_count,
                m.existing_files_count,
                m.deleted_files_count,
            ],
            sidecar: location.clone(),
            sidecar_length: bytes.len() as u64,
            sidecar_crc: crc32fast::hash(&bytes),
            files: files.len() as u64,
            records: files.iter().map(|f| f.file.record_count).sum(),
            bytes: files.iter().map(|f| f.file.size_in_bytes).sum(),
            columns: columns
                .iter()
                .zip(&rules)
                .map(|(c, r)| {
                    let planar = !matches!(r.column().column_type, ColumnType::Geography { .. });
                    manifest_column(c, planar)
                })
                .collect(),
        };
        written.push(location.clone());
        table.storage().write_new(&location, bytes)?;
        entries[i] = Some(entry);
    }
    let root = Root {
        snapshot_id,
        columns,
        manifests: entries.into_iter().flatten().collect(),
    };
    let location = join(
        &dir,
        &format!("snap-{snapshot_id}-bounds-{}.puffin", uuid::Uuid::new_v4()),
    );
    written.push(location.clone());
    root.write(table.storage(), &location, sequence_number)?;
    Ok(Some(location))
}

/// One manifest's files on one column, summed up for skipping the manifest. Only a `planar`
/// column gets a union box: on the sphere a box's meaning depends on more than its corners.
fn manifest_column(files: &[FileBox], planar: bool) -> ManifestColumn {
    let mut bbox: Option<[f64; 4]> = None;
    let mut unbounded = false;
    for f in files {
        if f.file.record_count == 0 || f.file.all_null {
            continue;
        }
        match f.file.bbox {
            // A wrapping box (geography across the antimeridian) has no planar union.
            Some(b) if b.min_x <= b.max_x && b.min_y <= b.max_y => {
                let u = bbox.get_or_insert([b.min_x, b.min_y, b.max_x, b.max_y]);
                *u = [
                    u[0].min(b.min_x),
                    u[1].min(b.min_y),
                    u[2].max(b.max_x),
                    u[3].max(b.max_y),
                ];
            }
            _ => unbounded = true,
        }
    }
    let live: Vec<&FileBox> = files.iter().filter(|f| f.file.record_count > 0).collect();
    ManifestColumn {
        bbox: if unbounded || !planar { None } else { bbox },
        all_null: !live.is_empty() && live.iter().all(|f| f.file.all_null),
        undecodable: files.iter().filter(|f| f.problem.is_some()).count() as u64,
        first_problem: files.iter().find_map(|f| f.problem.clone()),
        boundless: files.iter().filter(|f| f.boundless).count() as u64,
    }
}
