//! The snapshot producer (spec: "Snapshots", "Manifest Lists", "Row Lineage"): every operation
//! commits through it. An operation says which files it adds and which it removes; the producer
//! writes the new manifests, rewrites the manifests that list a removed file, builds the
//! summary, assigns v3 row ids through the manifest list, writes the next metadata file and
//! hands back a [`PendingCommit`]. [`commit_with_retry`] is the one commit driver: it takes a
//! snapshot operation or a metadata-only change (properties, schema, expired snapshots: a
//! [`MetadataChange`]) to a committed version: validation against what others committed
//! meanwhile, the catalog swap, and Iceberg's jittered backoff (`commit.retry.*`) when another
//! writer won the race.
//!
//! The shape is iceberg-rust's `transaction/snapshot.rs` (`SnapshotProducer`,
//! `SnapshotProduceOperation`), which an external crate cannot extend (its actions are
//! crate-private), over the same `iceberg` spec types.

mod commit;
mod summary;
mod validation;

use std::collections::{HashMap, HashSet};
use std::time::{SystemTime, UNIX_EPOCH};

use iceberg::io::FileIO;
use iceberg::spec::{
    DataFile, DataFileBuilder, FormatVersion, ManifestContentType, ManifestFile,
    ManifestListWriter, ManifestStatus, ManifestWriter, ManifestWriterBuilder, Operation, Snapshot,
    SnapshotReference, SnapshotRetention, StatisticsFile, TableMetadata, TableMetadataBuilder,
};

pub use commit::PendingCommit;
pub(crate) use commit::{
    CommitFailure, MetadataChange, SnapshotOperation, commit_metadata, commit_with_retry,
};
use summary::SummaryBuilder;
pub(crate) use validation::{ReadSet, validate_since};

use crate::bounds_index::{self, FILE_BOUNDS_INDEX_SUMMARY_KEY};
use crate::bridge;
use crate::error::{Error, Result};
use crate::lineage::inherited_first_row_ids;
use crate::manifest::{decode_manifest, fetch_and_decode, read_manifest};
use crate::storage::join;
use crate::table::Table;

/// One commit being assembled on one version of the table.
pub(crate) struct SnapshotProducer<'a> {
    table: &'a Table,
    operation: Operation,
    snapshot_id: i64,
    commit_uuid: uuid::Uuid,
    added_data: Vec<(i32, DataFile)>,
    added_deletes: Vec<(i32, DataFile)>,
    /// Entries leaving the snapshot, by path and, for a deletion vector (many share one Puffin
    /// file), its `content_offset`.
    removed: HashSet<(String, Option<i64>)>,
    data_sequence_number: Option<i64>,
    summary: HashMap<String, String>,
    properties: HashMap<String, String>,
    /// Every file this attempt wrote, so that a failed attempt can remove them.
    written: Vec<String>,
    manifests_written: usize,
    /// Manifests a `rewrite_manifests` commit replaces, and the ones it writes instead.
    manifest_rewrite: Option<ManifestRewrite>,
    /// A statistics file of the new snapshot (already written).
    statistics: Option<StatisticsFile>,
    /// The bytes of the data manifests this attempt wrote, by location: the file-bounds index
    /// of the new snapshot is built from them without reading them back.
    fresh_manifests: HashMap<String, bytes::Bytes>,
}

/// Live entries carried, unchanged, from replaced manifests into new ones (a
/// `rewrite_manifests` commit): the producer writes each group as one manifest of EXISTING
/// entries and drops the replaced manifests from the new snapshot's list.
#[derive(Debug, Default)]
pub(crate) struct ManifestRewrite {
    /// Paths of the current snapshot's manifests that leave the manifest list.
    pub(crate) replaced: HashSet<String>,
    /// The manifests written instead, in manifest-list order.
    pub(crate) groups: Vec<ManifestGroup>,
}

/// The entries of one manifest a `rewrite_manifests` commit writes.
#[derive(Debug)]
pub(crate) struct ManifestGroup {
    /// Partition spec of every entry.
    pub(crate) spec_id: i32,
    /// Data or delete manifest.
    pub(crate) content: ManifestContentType,
    /// The entries, each keeping its snapshot id, sequence numbers and (v3) first row id.
    pub(crate) entries: Vec<ExistingEntry>,
}

/// A live entry as an EXISTING entry of a new manifest.
#[derive(Debug, Clone)]
pub(crate) struct ExistingEntry {
    /// The file, with its inherited `first_row_id` made explicit (v3 data files).
    pub(crate) file: DataFile,
    /// The snapshot that added the file.
    pub(crate) snapshot_id: i64,
    /// Data sequence number after inheritance.
    pub(crate) data_sequence_number: i64,
    /// File sequence number after inheritance.
    pub(crate) file_sequence_number: i64,
}

impl<'a> SnapshotProducer<'a> {
    /// A commit of `operation` on `table`'s current metadata.
    pub(crate) fn new(table: &'a Table, operation: Operation) -> Self {
        SnapshotProducer {
            table,
            operation,
            snapshot_id: new_snapshot_id(table.metadata()),
            commit_uuid: uuid::Uuid::new_v4(),
            added_data: Vec::new(),
            added_deletes: Vec::new(),
            removed: HashSet::new(),
            data_sequence_number: None,
            summary: HashMap::new(),
            properties: HashMap::new(),
            written: Vec::new(),
            manifests_written: 0,
            manifest_rewrite: None,
            statistics: None,
            fresh_manifests: HashMap::new(),
        }
    }

    /// The version of the table this commit is assembled on.
    pub(crate) fn table(&self) -> &'a Table {
        self.table
    }

    /// Replaces manifests of the current snapshot by new ones holding the same live entries
    /// (`rewrite_manifests`: no file is added or removed).
    pub(crate) fn rewrite_manifests(&mut self, rewrite: ManifestRewrite) {
        self.manifest_rewrite = Some(rewrite);
    }

    /// Data files to add, each with its partition spec id.
    pub(crate) fn add_data_files(&mut self, files: impl IntoIterator<Item = (i32, DataFile)>) {
        self.added_data.extend(files);
    }

    /// Delete files (position deletes, deletion vectors) to add, each with its spec id.
    pub(crate) fn add_delete_files(&mut self, files: impl IntoIterator<Item = (i32, DataFile)>) {
        self.added_deletes.extend(files);
    }

    /// Files (data files, whole delete files) that leave the snapshot: their entries become
    /// DELETED.
    pub(crate) fn remove_files(&mut self, paths: impl IntoIterator<Item = String>) {
        self.removed.extend(paths.into_iter().map(|p| (p, None)));
    }

    /// Deletion vectors that leave the snapshot, by Puffin file and `content_offset`.
    pub(crate) fn remove_deletion_vectors(
        &mut self,
        keys: impl IntoIterator<Item = (String, i64)>,
    ) {
        self.removed
            .extend(keys.into_iter().map(|(p, offset)| (p, Some(offset))));
    }

    /// The data sequence number of the added data files (a rewrite's
    /// `use-starting-sequence-number`); by default they inherit the new snapshot's.
    pub(crate) fn data_sequence_number(&mut self, seq: i64) {
        self.data_sequence_number = Some(seq);
    }

    /// An extra snapshot summary property.
    pub(crate) fn summary_property(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.summary.insert(key.into(), value.into());
    }

    /// Table properties set by the same commit.
    pub(crate) fn set_properties(&mut self, properties: HashMap<String, String>) {
        self.properties.extend(properties);
    }

    /// Where to write a statistics file of the new snapshot
    /// (`metadata/<snapshot id>-<uuid>.stats`); it is removed with the attempt's other files
    /// if the attempt fails, even when the write's reply was lost.
    pub(crate) fn statistics_location(&mut self) -> String {
        let location = join(
            &self.table.metadata_dir(),
            &format!("{}-{}.stats", self.snapshot_id, uuid::Uuid::new_v4()),
        );
        self.written.push(location.clone());
        location
    }

    /// The statistics file of the new snapshot, written at [`Self::statistics_location`] for
    /// [`Self::snapshot_id`] and [`Self::sequence_number`].
    pub(crate) fn set_statistics(&mut self, statistics: StatisticsFile) {
        self.statistics = Some(statistics);
    }

    /// The sequence number the new snapshot gets.
    pub(crate) fn sequence_number(&self) -> i64 {
        self.table.metadata().next_sequence_number()
    }

    /// The snapshot id this attempt commits as.
    pub(crate) fn snapshot_id(&self) -> i64 {
        self.snapshot_id
    }

    /// Writes the manifests, the manifest list and the next metadata file; nothing is visible
    /// until the returned commit swaps the catalog pointer. On error, and when the commit does
    /// not happen, [`SnapshotProducer::written`] lists the files to remove.
    pub(crate) fn stage(&mut self) -> Result<PendingCommit> {
        let table = self.table;
        let md = table.metadata();
        let version = md.format_version();
        if version == FormatVersion::V1 && !self.added_deletes.is_empty() {
            return Err(Error::InvalidData(format!(
                "table {} is format version 1, which has no delete files; upgrade it to \
                 format-version 2 or 3, or use copy-on-write (write.delete.mode)",
                table.ident()
            )));
        }
        let mem = FileIO::new_with_memory();
        let mut summary = SummaryBuilder::new(md.current_schema().clone());
        let mut manifests = Vec::new();

        // New data files first (as Java orders them), one manifest per partition spec.
        let data_seq = match (self.data_sequence_number, version) {
            (Some(seq), FormatVersion::V2 | FormatVersion::V3) => seq,
            _ => -1, // inherit the new snapshot's sequence number
        };
        for (spec_id, files) in by_spec(&self.added_data) {
            let spec = partition_spec(table, spec_id)?;
            for f in &files {
                summary.added(f, &spec);
            }
            let m = self.write_manifest(&mem, spec_id, ManifestContentType::Data, |w| {
                for f in files {
                    w.add_file(f, data_seq)?;
                }
                Ok(())
            })?;
            manifests.push(m);
        }
        for (spec_id, files) in by_spec(&self.added_deletes) {
            let spec = partition_spec(table, spec_id)?;
            for f in &files {
                summary.added(f, &spec);
            }
            // ADDED entries of a delete manifest; their sequence number is the snapshot's.
            let m = self.write_manifest(&mem, spec_id, ManifestContentType::Deletes, |w| {
                for f in files {
                    w.add_file(f, -1)?;
                }
                Ok(())
            })?;
            manifests.push(m);
        }

        // A manifest rewrite: the replaced manifests leave the list, their live entries go
        // into the new manifests as EXISTING (Java's `BaseRewriteManifests`).
        let mut current = table.manifests()?;
        if let Some(rewrite) = self.manifest_rewrite.take() {
            let listed: HashSet<&str> = current.iter().map(|m| m.manifest_path.as_str()).collect();
            if let Some(gone) = rewrite
                .replaced
                .iter()
                .find(|p| !listed.contains(p.as_str()))
            {
                return Err(Error::RewriteConflict {
                    table: table.ident().to_string(),
                    reason: format!(
                        "manifest {gone} to replace is no longer in the current snapshot; a \
                         concurrent commit rewrote it"
                    ),
                });
            }
            current.retain(|m| !rewrite.replaced.contains(&m.manifest_path));
            for group in rewrite.groups {
                let m = self.write_manifest(&mem, group.spec_id, group.content, |w| {
                    for e in group.entries {
                        w.add_existing_file(
                            e.file,
                            e.snapshot_id,
                            e.data_sequence_number,
                            Some(e.file_sequence_number),
                        )?;
                    }
                    Ok(())
                })?;
                manifests.push(m);
            }
        }

        // Manifests that list a removed file are rewritten: those entries DELETED, the others
        // EXISTING with their sequence numbers, snapshot ids and (v3) first row ids kept.
        let removed = self.removed.clone();
        let removed_paths: HashSet<&String> = removed.iter().map(|(p, _)| p).collect();
        // Per manifest, the removed files it lists as live (paths and status only: cheap).
        let listed: Vec<Vec<String>> = if removed.is_empty() {
            vec![Vec::new(); current.len()]
        } else {
            let locations: Vec<&str> = current.iter().map(|m| m.manifest_path.as_str()).collect();
            fetch_and_decode(table.storage(), &locations, |_, location, bytes| {
                Ok(decode_manifest(&bytes, location, &[])?
                    .into_iter()
                    .filter(|e| e.is_live() && removed_paths.contains(&e.path))
                    .map(|e| e.path)
                    .collect())
            })?
        };
        let hits: HashSet<&String> = listed.iter().flatten().collect();
        let missing: Vec<&String> = removed_paths
            .iter()
            .copied()
            .filter(|p| !hits.contains(*p))
            .collect();
        if !missing.is_empty() {
            return Err(Error::RewriteConflict {
                table: table.ident().to_string(),
                reason: format!(
                    "missing required files to delete: {} of the {} files this commit removes \
                     are no longer live in the table (first: {}); a concurrent commit removed \
                     them",
                    missing.len(),
                    removed.len(),
                    missing[0]
                ),
            });
        }
        let mut found = 0usize;
        for (m, listed) in current.into_iter().zip(listed) {
            if listed.is_empty() {
                manifests.push(m);
                continue;
            }
            let entries = read_manifest(table.storage(), &m)?;
            let first_row_ids = if m.content == ManifestContentType::Data {
                inherited_first_row_ids(&m, &entries)
            } else {
                vec![None; entries.len()]
            };
            let spec = partition_spec(table, m.partition_spec_id)?;
            let mut removed_here = Vec::new();
            let mut rewritten = self.write_manifest(&mem, m.partition_spec_id, m.content, |w| {
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
                        // `add_delete_file` writes a DELETED entry (of a data or a delete file).
                        _ if removed.contains(&(e.file_path().to_string(), None))
                            || removed
                                .contains(&(e.file_path().to_string(), file.content_offset())) =>
                        {
                            removed_here.push(file.clone());
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
            found += removed_here.len();
            for f in &removed_here {
                summary.removed(f, &spec);
            }
            // Every live entry now carries an explicit first_row_id: the manifest keeps its
            // original one and consumes no new row ids.
            if version == FormatVersion::V3 {
                rewritten.first_row_id = m.first_row_id;
            }
            manifests.push(rewritten);
        }
        if found != self.removed.len() {
            return Err(Error::RewriteConflict {
                table: table.ident().to_string(),
                reason: format!(
                    "{} of {} removed files (or deletion vectors) are no longer live in the \
                     table; a concurrent commit replaced them",
                    self.removed.len().saturating_sub(found),
                    self.removed.len()
                ),
            });
        }

        let mut extra = self.summary.clone();
        if let Some(root) = bounds_index::write_for_commit(
            table,
            self.snapshot_id,
            md.next_sequence_number(),
            &manifests,
            &self.fresh_manifests,
            &mut self.written,
        )? {
            extra.insert(FILE_BOUNDS_INDEX_SUMMARY_KEY.to_string(), root);
        }
        let parent = md.current_snapshot().map(|s| s.summary());
        let summary = summary.build(self.operation.clone(), parent, &extra);
        let snapshot = self.write_manifest_list(&mem, manifests, summary)?;
        let mut builder = TableMetadataBuilder::new_from_metadata(
            md.clone(),
            Some(table.metadata_location().to_string()),
        )
        .add_snapshot(snapshot)?
        .set_ref(
            iceberg::spec::MAIN_BRANCH,
            SnapshotReference::new(
                self.snapshot_id,
                SnapshotRetention::branch(None, None, None),
            ),
        )?;
        if !self.properties.is_empty() {
            builder = builder.set_properties(self.properties.clone())?;
        }
        if let Some(statistics) = &self.statistics {
            builder = builder.set_statistics(statistics.clone());
        }
        let metadata = builder.build()?.metadata;
        let location = commit::next_metadata_location(table, &metadata);
        self.written.push(location.clone());
        PendingCommit::stage_at(table, metadata, location)
    }

    /// Files this attempt wrote (manifests, manifest list, metadata).
    pub(crate) fn written(&self) -> &[String] {
        &self.written
    }

    /// Writes one manifest through `iceberg`'s writer (into memory), restores the geo types in
    /// its header and stores it under the table's `metadata/` folder.
    fn write_manifest(
        &mut self,
        mem: &FileIO,
        spec_id: i32,
        content: ManifestContentType,
        fill: impl FnOnce(&mut ManifestWriter) -> Result<()>,
    ) -> Result<ManifestFile> {
        let table = self.table;
        let md = table.metadata();
        let spec = partition_spec(table, spec_id)?;
        let name = format!("{}-m{}.avro", self.commit_uuid, self.manifests_written);
        self.manifests_written += 1;
        let staging = format!("memory:///{name}");
        let builder = ManifestWriterBuilder::new(
            mem.new_output(&staging)?,
            Some(self.snapshot_id),
            md.current_schema().clone(),
            spec.as_ref().clone(),
        );
        let mut writer = match (md.format_version(), content) {
            (FormatVersion::V3, ManifestContentType::Data) => builder.build_v3_data(),
            (FormatVersion::V3, ManifestContentType::Deletes) => builder.build_v3_deletes(),
            (FormatVersion::V2, ManifestContentType::Data) => builder.build_v2_data(),
            (FormatVersion::V2, ManifestContentType::Deletes) => builder.build_v2_deletes(),
            (FormatVersion::V1, _) => builder.build_v1(),
        };
        fill(&mut writer)?;
        let mut manifest = in_memory(writer.write_manifest_file())?;
        let avro = in_memory(mem.new_input(&staging)?.read())?;
        let avro = bridge::manifest_to_geo(&avro, table.geo_fields(), &staging)?;
        let location = join(&table.metadata_dir(), &name);
        // Recorded first: a write whose reply was lost leaves the file behind.
        self.written.push(location.clone());
        let avro = bytes::Bytes::from(avro);
        table.storage().write_new(&location, avro.clone())?;
        if content == ManifestContentType::Data {
            self.fresh_manifests.insert(location.clone(), avro.clone());
        }
        manifest.manifest_path = location;
        manifest.manifest_length = avro.len() as i64;
        Ok(manifest)
    }

    /// Writes the manifest list of `manifests` and returns the snapshot that points at it, with
    /// the v3 row range of the rows this list assigns ids to.
    fn write_manifest_list(
        &mut self,
        mem: &FileIO,
        manifests: Vec<ManifestFile>,
        summary: iceberg::spec::Summary,
    ) -> Result<Snapshot> {
        let table = self.table;
        let md = table.metadata();
        let id = self.snapshot_id;
        let seq = md.next_sequence_number();
        let parent = md.current_snapshot_id();
        let name = format!("snap-{id}-1-{}.avro", self.commit_uuid);
        let staging = format!("memory:///{name}");
        let out = in_memory(mem.new_output(&staging)?.writer())?;
        let first_row_id = md.next_row_id();
        let mut list = match md.format_version() {
            FormatVersion::V3 => ManifestListWriter::v3(out, id, parent, seq, Some(first_row_id)),
            FormatVersion::V2 => ManifestListWriter::v2(out, id, parent, seq),
            FormatVersion::V1 => ManifestListWriter::v1(out, id, parent),
        };
        list.add_manifests(manifests.into_iter())?;
        let next_row_id = list.next_row_id();
        in_memory(list.close())?;
        let bytes = in_memory(mem.new_input(&staging)?.read())?;
        let location = join(&table.metadata_dir(), &name);
        self.written.push(location.clone());
        table.storage().write_new(&location, bytes)?;

        let builder = Snapshot::builder()
            .with_snapshot_id(id)
            .with_parent_snapshot_id(parent)
            .with_sequence_number(seq)
            .with_timestamp_ms(now_ms())
            .with_manifest_list(location)
            .with_summary(summary)
            .with_schema_id(md.current_schema_id());
        Ok(match next_row_id {
            Some(next) => builder
                .with_row_range(first_row_id, next - first_row_id)
                .build(),
            None => builder.build(),
        })
    }
}

/// Files grouped by partition spec id, specs in ascending order.
fn by_spec(files: &[(i32, DataFile)]) -> Vec<(i32, Vec<DataFile>)> {
    let mut groups: Vec<(i32, Vec<DataFile>)> = Vec::new();
    for (spec, f) in files {
        match groups.iter_mut().find(|(s, _)| s == spec) {
            Some((_, g)) => g.push(f.clone()),
            None => groups.push((*spec, vec![f.clone()])),
        }
    }
    groups.sort_by_key(|(s, _)| *s);
    groups
}

fn partition_spec(table: &Table, spec_id: i32) -> Result<iceberg::spec::PartitionSpecRef> {
    table
        .metadata()
        .partition_spec_by_id(spec_id)
        .cloned()
        .ok_or_else(|| {
            Error::corrupt(
                table.metadata_location(),
                format!("partition spec {spec_id} is not in the table metadata"),
            )
        })
}

/// Drives `iceberg`'s async writers, which here only touch in-memory storage.
fn in_memory<F: std::future::Future>(f: F) -> F::Output {
    futures::executor::block_on(f)
}

/// A random positive snapshot id not yet used by the table (Java's scheme: UUID bits).
pub(crate) fn new_snapshot_id(metadata: &TableMetadata) -> i64 {
    loop {
        let (a, b) = uuid::Uuid::new_v4().as_u64_pair();
        let id = ((a ^ b) & (i64::MAX as u64)) as i64;
        if id != 0 && metadata.snapshot_by_id(id).is_none() {
            return id;
        }
    }
}

/// Milliseconds since the Unix epoch, as snapshot timestamps are stored.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The same entry with an explicit `first_row_id` (v3 row lineage of an EXISTING file).
pub(crate) fn with_first_row_id(
    file: &DataFile,
    first_row_id: i64,
    spec_id: i32,
) -> Result<DataFile> {
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
        .map_err(|e| Error::corrupt(file.file_path(), format!("data file entry: {e}")))
}
