//! The manifest list and snapshot entry of a new commit, shared by fast appends and REPLACE
//! commits: the one place that knows how each format version numbers rows and sequences.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use iceberg::io::FileIO;
use iceberg::spec::{FormatVersion, ManifestFile, ManifestListWriter, Snapshot, Summary};

use crate::append::block_on;
use crate::error::Result;
use crate::location::{file_uri, write_new_file};
use crate::table::Table;

/// Identity of the snapshot being written.
pub(crate) struct NewSnapshot<'a> {
    /// The table the snapshot is committed to (its current metadata is the parent).
    pub table: &'a Table,
    /// Fresh snapshot id.
    pub snapshot_id: i64,
    /// Data sequence number of the snapshot.
    pub sequence_number: i64,
    /// Names the commit's files.
    pub commit_uuid: uuid::Uuid,
    /// The table's `metadata/` folder.
    pub meta_dir: &'a Path,
}

impl NewSnapshot<'_> {
    /// Writes the manifest list of `manifests` (through the in-memory `mem`, then into the
    /// metadata folder) and returns the snapshot that points at it, with the v3 row range of the
    /// rows this list assigns ids to, and the list's path.
    pub(crate) fn write(
        &self,
        mem: &FileIO,
        manifests: Vec<ManifestFile>,
        summary: Summary,
    ) -> Result<(Snapshot, PathBuf)> {
        let md = self.table.metadata();
        let (id, seq) = (self.snapshot_id, self.sequence_number);
        let parent = md.current_snapshot_id();
        let list_name = format!("snap-{id}-1-{}.avro", self.commit_uuid);
        let staging = format!("memory:///{list_name}");
        let out = block_on(mem.new_output(&staging)?.writer())?;
        let first_row_id = md.next_row_id();
        let mut list = match md.format_version() {
            FormatVersion::V3 => ManifestListWriter::v3(out, id, parent, seq, Some(first_row_id)),
            FormatVersion::V2 => ManifestListWriter::v2(out, id, parent, seq),
            FormatVersion::V1 => ManifestListWriter::v1(out, id, parent),
        };
        list.add_manifests(manifests.into_iter())?;
        let next_row_id = list.next_row_id();
        block_on(list.close())?;
        let bytes = block_on(mem.new_input(&staging)?.read())?;
        let list_path = self.meta_dir.join(list_name);
        write_new_file(self.table.catalog().storage(), &list_path, &bytes)?;

        let builder = Snapshot::builder()
            .with_snapshot_id(id)
            .with_parent_snapshot_id(parent)
            .with_sequence_number(seq)
            .with_timestamp_ms(now_ms())
            .with_manifest_list(file_uri(&list_path))
            .with_summary(summary)
            .with_schema_id(md.current_schema_id());
        let snapshot = match next_row_id {
            Some(next) => builder
                .with_row_range(first_row_id, next - first_row_id)
                .build(),
            None => builder.build(),
        };
        Ok((snapshot, list_path))
    }
}

/// A random positive snapshot id not yet used by the table (Java's scheme: UUID bits).
pub(crate) fn new_snapshot_id(table: &Table) -> i64 {
    loop {
        let (a, b) = uuid::Uuid::new_v4().as_u64_pair();
        let id = ((a ^ b) & (i64::MAX as u64)) as i64;
        if id != 0 && table.metadata().snapshot_by_id(id).is_none() {
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
