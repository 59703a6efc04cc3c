//! The commit of a rewrite: one REPLACE snapshot that marks the replaced data files DELETED and
//! adds the new ones, validated against the snapshot the rewrite started from (Iceberg Java's
//! `BaseRewriteFiles` + `MergingSnapshotProducer`), with bounded retries over concurrent appends.

use std::collections::{BTreeSet, HashMap, HashSet};

use iceberg::io::FileIO;
use iceberg::spec::{
    DataContentType, DataFile, DataFileBuilder, FormatVersion, Manifest, ManifestContentType,
    ManifestEntryRef, ManifestFile, ManifestStatus, ManifestWriterBuilder, Operation,
    SnapshotReference, SnapshotRetention, Summary, TableMetadataBuilder,
};

use crate::append::block_on;
use crate::bridge;
use crate::error::{Error, Result};
use crate::lineage::inherited_first_row_ids;
use crate::location::{delete_quietly, file_uri, local_path, read_file, write_new_file};
use crate::snapshot_writer::{NewSnapshot, new_snapshot_id};
use crate::table::Table;

/// `commit.retry.num-retries`: how often a commit that lost the race to a concurrent writer is
/// re-applied on the newer metadata (Iceberg's default is 4).
pub const COMMIT_RETRIES_PROPERTY: &str = "commit.retry.num-retries";
const DEFAULT_COMMIT_RETRIES: usize = 4;

/// One REPLACE: the files a rewrite read and the files it wrote in their place.
#[derive(Debug, Clone)]
pub(crate) struct Replace {
    /// Snapshot the rewrite planned from; validation looks at what was committed after it.
    pub starting_snapshot_id: i64,
    /// Its sequence number: the data sequence number of the added files when
    /// `use_starting_sequence_number` is on, so that equality deletes committed meanwhile still
    /// apply to the rewritten rows.
    pub starting_sequence_number: i64,
    /// `use-starting-sequence-number`.
    pub use_starting_sequence_number: bool,
    /// Entries replaced (live in the starting snapshot).
    pub replaced: Vec<DataFile>,
    /// Entries added, with their partition spec id (which `DataFile` does not expose).
    pub added: Vec<(i32, DataFile)>,
    /// v3: the `first_row_id` (after inheritance) each replaced file's rows were rewritten with,
    /// by path; the added files hold those rows' ids in their `_row_id` column, so the replace
    /// is only valid while the replaced files still have these ids. Empty for v1/v2.
    pub replaced_first_row_ids: HashMap<String, Option<i64>>,
    /// Extra snapshot summary properties (the index definition).
    pub summary: HashMap<String, String>,
    /// Table properties set in the same commit.
    pub properties: HashMap<String, String>,
}

/// Why a commit did not happen, split by what the caller may clean up.
#[derive(Debug)]
pub(crate) enum CommitFailure {
    /// Nothing was committed: the added files may be deleted.
    Definite(Error),
    /// The catalog may or may not hold the new snapshot: the added files must stay.
    Unknown(Error),
}

impl CommitFailure {
    pub(crate) fn into_error(self) -> Error {
        match self {
            CommitFailure::Definite(e) | CommitFailure::Unknown(e) => e,
        }
    }
}

/// Validates and commits `replace` on `base`, re-applying it on newer metadata when another
/// writer committed first (appends are kept), up to `commit.retry.num-retries` times.
pub(crate) fn commit_replace(
    base: &Table,
    replace: &Replace,
) -> std::result::Result<Table, CommitFailure> {
    let retries = match base.metadata().properties().get(COMMIT_RETRIES_PROPERTY) {
        Some(v) => v.trim().parse::<usize>().map_err(|_| {
            CommitFailure::Definite(Error::InvalidProperty {
                key: COMMIT_RETRIES_PROPERTY.into(),
                value: v.clone(),
                reason: "expected a non-negative retry count".into(),
            })
        })?,
        None => DEFAULT_COMMIT_RETRIES,
    };
    let mut current = base.clone();
    for attempt in 0..=retries {
        if attempt > 0 {
            current = base.refresh().map_err(CommitFailure::Definite)?;
        }
        // A retryable error here is a base that moved on and whose snapshot was expired:
        // re-applying on the reloaded metadata is the fix, as for a lost swap.
        if let Err(e) = validate(&current, replace) {
            if e.is_retryable() && attempt < retries {
                continue;
            }
            return Err(CommitFailure::Definite(e));
        }
        let mut written = Vec::new();
        let staged = stage(&current, replace, &mut written);
        let pending = match staged {
            Ok(p) => p,
            Err(e) => {
                discard(&current, &written);
                if e.is_retryable() && attempt < retries {
                    continue;
                }
                return Err(CommitFailure::Definite(e));
            }
        };
        match pending.commit() {
            Ok(table) => return Ok(table),
            Err(e @ Error::CommitConflict { .. }) => {
                discard(&current, &written);
                if attempt == retries {
                    return Err(CommitFailure::Definite(e));
                }
            }
            // The swap may have happened: keep every file it could reference.
            Err(e) => return Err(CommitFailure::Unknown(e)),
        }
    }
    unreachable!("the last attempt returns")
}

fn discard(table: &Table, locations: &[String]) {
    for l in locations {
        delete_quietly(table.catalog().storage(), l);
    }
}

/// What changed since the starting snapshot must not invalidate the replace: every replaced
/// file still live, no new position deletes against one (equality deletes are fine when the new
/// files carry the starting sequence number: they still apply to them).
fn validate(current: &Table, replace: &Replace) -> Result<()> {
    let md = current.metadata();
    let conflict = |reason: String| Error::RewriteConflict {
        table: current.ident().to_string(),
        reason,
    };
    if md.current_snapshot_id() == Some(replace.starting_snapshot_id) {
        return Ok(());
    }
    // Snapshots committed since the start, found by walking back from the current one.
    let mut new_snapshots = HashSet::new();
    let mut cursor = md.current_snapshot();
    loop {
        let Some(s) = cursor else {
            return Err(conflict(format!(
                "the starting snapshot {} is no longer an ancestor of the current snapshot \
                 (the table was rolled back or its history rewritten)",
                replace.starting_snapshot_id
            )));
        };
        if s.snapshot_id() == replace.starting_snapshot_id {
            break;
        }
        new_snapshots.insert(s.snapshot_id());
        cursor = s.parent_snapshot_id().and_then(|p| md.snapshot_by_id(p));
    }

    let replaced: HashSet<&str> = replace.replaced.iter().map(|f| f.file_path()).collect();
    let mut live = HashSet::new();
    for m in current.manifests()? {
        let entries = read_manifest(&m)?;
        match m.content {
            ManifestContentType::Data => {
                let first_row_ids = inherited_first_row_ids(&m, &entries);
                for (e, now) in entries.iter().zip(first_row_ids) {
                    if !e.is_alive() {
                        continue;
                    }
                    let path = e.file_path();
                    // Row ids are fixed once assigned; they can only appear (a concurrent
                    // commit on a table upgraded to v3 assigns ids to files that had none).
                    if let Some(&then) = replace.replaced_first_row_ids.get(path)
                        && then != now
                    {
                        return Err(conflict(format!(
                            "the row ids of replaced file {path} changed since the rewrite read \
                             it (first_row_id {then:?} -> {now:?}, a concurrent commit assigned \
                             them); rerun the rewrite so that its rows keep their ids"
                        )));
                    }
                    live.insert(path.to_string());
                }
            }
            ManifestContentType::Deletes => {
                for e in entries
                    .iter()
                    .filter(|e| e.status() == ManifestStatus::Added)
                {
                    let added_by = e.snapshot_id().unwrap_or(m.added_snapshot_id);
                    if !new_snapshots.contains(&added_by) {
                        continue;
                    }
                    let file = e.data_file();
                    match file.content_type() {
                        DataContentType::PositionDeletes => {
                            let target = file.referenced_data_file();
                            if target.as_deref().is_none_or(|t| replaced.contains(t)) {
                                return Err(conflict(format!(
                                    "found new position delete file {} (snapshot {added_by}) for \
                                     {}",
                                    file.file_path(),
                                    target.map_or_else(
                                        || "data files that may include replaced ones".into(),
                                        |t| format!("replaced data file {t}")
                                    )
                                )));
                            }
                        }
                        DataContentType::EqualityDeletes
                            if !replace.use_starting_sequence_number =>
                        {
                            return Err(conflict(format!(
                                "found new equality delete file {} (snapshot {added_by}); with \
                                 use-starting-sequence-number=false it would not apply to the \
                                 rewritten rows",
                                file.file_path()
                            )));
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    let missing: BTreeSet<&str> = replaced
        .iter()
        .copied()
        .filter(|p| !live.contains(*p))
        .collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(5).copied().collect();
        return Err(conflict(format!(
            "missing required files to delete: {} of the rewrite's input files were removed by a \
             concurrent commit ({}{})",
            missing.len(),
            shown.join(", "),
            if missing.len() > shown.len() {
                ", ..."
            } else {
                ""
            }
        )));
    }
    Ok(())
}

/// Writes the manifests, the manifest list and the metadata file of the replace on `current`.
/// Every file written is pushed to `written` so that a failed attempt can remove it.
fn stage(
    current: &Table,
    replace: &Replace,
    written: &mut Vec<String>,
) -> Result<crate::table::PendingCommit> {
    let md = current.metadata();
    let version = md.format_version();
    let snapshot_id = new_snapshot_id(current);
    let seq = md.next_sequence_number();
    let commit_uuid = uuid::Uuid::new_v4();
    let meta_dir = local_path(md.location())?.join("metadata");
    let mem = FileIO::new_with_memory();
    let mut manifest_no = 0usize;
    let mut write_manifest =
        |spec_id: i32,
         fill: &mut dyn FnMut(&mut iceberg::spec::ManifestWriter) -> Result<()>|
         -> Result<ManifestFile> {
            let spec = md.partition_spec_by_id(spec_id).ok_or_else(|| {
                Error::corrupt(
                    current.metadata_location(),
                    format!("partition spec {spec_id} is not in the table metadata"),
                )
            })?;
            let name = format!("{commit_uuid}-m{manifest_no}.avro");
            manifest_no += 1;
            let staging = format!("memory:///{name}");
            let builder = ManifestWriterBuilder::new(
                mem.new_output(&staging)?,
                Some(snapshot_id),
                md.current_schema().clone(),
                spec.as_ref().clone(),
            );
            let mut writer = match version {
                FormatVersion::V3 => builder.build_v3_data(),
                FormatVersion::V2 => builder.build_v2_data(),
                FormatVersion::V1 => builder.build_v1(),
            };
            fill(&mut writer)?;
            let mut manifest = block_on(writer.write_manifest_file())?;
            let avro = block_on(mem.new_input(&staging)?.read())?;
            let avro = bridge::manifest_to_geo(&avro, current.geo_fields(), &staging)?;
            let path = meta_dir.join(name);
            write_new_file(current.catalog().storage(), &path, &avro)?;
            manifest.manifest_path = file_uri(&path);
            manifest.manifest_length = avro.len() as i64;
            written.push(manifest.manifest_path.clone());
            Ok(manifest)
        };

    // New files first (as Java orders them), one manifest per partition spec.
    let data_seq = if replace.use_starting_sequence_number && version != FormatVersion::V1 {
        replace.starting_sequence_number
    } else {
        -1 // inherit the new snapshot's sequence number
    };
    let mut by_spec: HashMap<i32, Vec<DataFile>> = HashMap::new();
    for (spec_id, f) in &replace.added {
        by_spec.entry(*spec_id).or_default().push(f.clone());
    }
    let mut specs: Vec<i32> = by_spec.keys().copied().collect();
    specs.sort_unstable();
    let mut manifests = Vec::new();
    for spec_id in specs {
        let files = by_spec.remove(&spec_id).unwrap_or_default();
        manifests.push(write_manifest(spec_id, &mut |w| {
            for f in &files {
                w.add_file(f.clone(), data_seq)?;
            }
            Ok(())
        })?);
    }

    // Manifests that list a replaced file are rewritten: those entries DELETED, the rest
    // EXISTING with their sequence numbers, snapshot ids and (v3) first row ids kept.
    let replaced: HashSet<&str> = replace.replaced.iter().map(|f| f.file_path()).collect();
    let mut found = 0usize;
    for m in current.manifests()? {
        if m.content == ManifestContentType::Deletes {
            manifests.push(m);
            continue;
        }
        let entries = read_manifest(&m)?;
        let hits = entries
            .iter()
            .filter(|e| e.is_alive() && replaced.contains(e.file_path()))
            .count();
        if hits == 0 {
            manifests.push(m);
            continue;
        }
        found += hits;
        let first_row_ids = inherited_first_row_ids(&m, &entries);
        let mut rewritten = write_manifest(m.partition_spec_id, &mut |w| {
            for (e, first_row_id) in entries.iter().zip(&first_row_ids) {
                let data_seq = e.sequence_number().unwrap_or(m.sequence_number);
                let file_seq = e.file_sequence_number.unwrap_or(m.sequence_number);
                let mut file = e.data_file().clone();
                if let (None, Some(id)) = (file.first_row_id(), first_row_id) {
                    file = with_first_row_id(&file, *id, m.partition_spec_id)?;
                }
                match e.status() {
                    // Old tombstones are dropped, as Java does when it rewrites a manifest.
                    ManifestStatus::Deleted => {}
                    _ if replaced.contains(e.file_path()) => {
                        w.add_delete_file(file, data_seq, Some(file_seq))?;
                    }
                    _ => w.add_existing_file(
                        file,
                        e.snapshot_id().unwrap_or(m.added_snapshot_id),
                        data_seq,
                        Some(file_seq),
                    )?,
                }
            }
            Ok(())
        })?;
        // Every live entry now carries an explicit first_row_id: the manifest keeps its
        // original one and consumes no new row ids.
        if version == FormatVersion::V3 {
            rewritten.first_row_id = m.first_row_id;
        }
        manifests.push(rewritten);
    }
    if found != replaced.len() {
        return Err(Error::RewriteConflict {
            table: current.ident().to_string(),
            reason: format!(
                "{} of {} input files are no longer live in the table",
                replaced.len() - found,
                replaced.len()
            ),
        });
    }

    let new = NewSnapshot {
        table: current,
        snapshot_id,
        sequence_number: seq,
        commit_uuid,
        meta_dir: &meta_dir,
    };
    let (snapshot, list_path) = new.write(&mem, manifests, replace_summary(current, replace))?;
    written.push(file_uri(&list_path));
    let mut metadata = TableMetadataBuilder::new_from_metadata(
        md.clone(),
        Some(current.metadata_location().to_string()),
    )
    .add_snapshot(snapshot)?
    .set_ref(
        iceberg::spec::MAIN_BRANCH,
        SnapshotReference::new(snapshot_id, SnapshotRetention::branch(None, None, None)),
    )?;
    if !replace.properties.is_empty() {
        metadata = metadata.set_properties(replace.properties.clone())?;
    }
    current.stage_metadata(metadata.build()?.metadata)
}

/// Iceberg's summary keys for a replace (`SnapshotSummary.Builder`), totals carried from the
/// parent, plus our extra properties.
fn replace_summary(current: &Table, replace: &Replace) -> Summary {
    let prev = current
        .metadata()
        .current_snapshot()
        .map(|s| s.summary().additional_properties.clone())
        .unwrap_or_default();
    let added: Vec<&DataFile> = replace.added.iter().map(|(_, f)| f).collect();
    let replaced: Vec<&DataFile> = replace.replaced.iter().collect();
    let sum =
        |files: &[&DataFile], f: fn(&DataFile) -> u64| files.iter().map(|d| f(d)).sum::<u64>();
    let added_files = added.len() as u64;
    let deleted_files = replaced.len() as u64;
    let added_records = sum(&added, DataFile::record_count);
    let deleted_records = sum(&replaced, DataFile::record_count);
    let added_bytes = sum(&added, DataFile::file_size_in_bytes);
    let removed_bytes = sum(&replaced, DataFile::file_size_in_bytes);
    let total = |key: &str, plus: u64, minus: u64| -> String {
        let before = prev
            .get(key)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        (before + plus).saturating_sub(minus).to_string()
    };
    let partitions: HashSet<String> = added
        .iter()
        .chain(&replaced)
        .map(|f| format!("{:?}", f.partition()))
        .collect();
    let mut p = replace.summary.clone();
    for (k, v) in [
        ("added-data-files", added_files.to_string()),
        ("deleted-data-files", deleted_files.to_string()),
        ("added-records", added_records.to_string()),
        ("deleted-records", deleted_records.to_string()),
        ("added-files-size", added_bytes.to_string()),
        ("removed-files-size", removed_bytes.to_string()),
        ("changed-partition-count", partitions.len().to_string()),
        (
            "total-data-files",
            total("total-data-files", added_files, deleted_files),
        ),
        (
            "total-records",
            total("total-records", added_records, deleted_records),
        ),
        (
            "total-files-size",
            total("total-files-size", added_bytes, removed_bytes),
        ),
        ("total-delete-files", total("total-delete-files", 0, 0)),
        (
            "total-position-deletes",
            total("total-position-deletes", 0, 0),
        ),
        (
            "total-equality-deletes",
            total("total-equality-deletes", 0, 0),
        ),
    ] {
        p.insert(k.to_string(), v);
    }
    Summary {
        operation: Operation::Replace,
        additional_properties: p,
    }
}

/// Entries of one manifest, as written (no inheritance applied).
pub(crate) fn read_manifest(m: &ManifestFile) -> Result<Vec<ManifestEntryRef>> {
    let bytes = read_file(&m.manifest_path)?;
    let bytes = bridge::manifest_to_binary(&bytes, &m.manifest_path)?;
    let manifest = Manifest::parse_avro(&bytes)
        .map_err(|e| Error::corrupt(&m.manifest_path, e.to_string()))?;
    Ok(manifest.into_parts().0)
}

/// The same entry with an explicit `first_row_id` (v3 row lineage of an EXISTING file).
fn with_first_row_id(file: &DataFile, first_row_id: i64, spec_id: i32) -> Result<DataFile> {
    let mut builder = DataFileBuilder::default();
    if let Some(id) = file.sort_order_id() {
        builder.sort_order_id(id);
    }
    builder
        .content(file.content_type())
        .file_path(file.file_path().to_string())
        .file_format(file.file_format())
        .partition(file.partition().clone())
        .partition_spec_id(spec_id)
        .record_count(file.record_count())
        .file_size_in_bytes(file.file_size_in_bytes())
        .column_sizes(file.column_sizes().clone())
        .value_counts(file.value_counts().clone())
        .null_value_counts(file.null_value_counts().clone())
        .nan_value_counts(file.nan_value_counts().clone())
        .lower_bounds(file.lower_bounds().clone())
        .upper_bounds(file.upper_bounds().clone())
        .key_metadata(file.key_metadata().map(<[u8]>::to_vec))
        .split_offsets(file.split_offsets().map(<[i64]>::to_vec))
        .equality_ids(file.equality_ids())
        .first_row_id(Some(first_row_id))
        .referenced_data_file(file.referenced_data_file())
        .content_offset(file.content_offset())
        .content_size_in_bytes(file.content_size_in_bytes())
        .build()
        .map_err(|e| Error::InvalidData(format!("data file entry {}: {e}", file.file_path())))
}
