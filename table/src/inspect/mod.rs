//! Iceberg's metadata tables (Iceberg's "Inspecting tables" in the Spark docs; pyiceberg's
//! `table.inspect`): the snapshots, history, refs, manifests, files and partitions of a table
//! as Arrow batches with Iceberg's column names, read from the current metadata and snapshot.
//! SQL reads them as `<namespace>.<table>.<metadata table>`.

mod files;
mod manifests;
mod partition_values;
mod partitions;
mod snapshots;
mod values;

use arrow_array::RecordBatch;

use crate::error::Result;
use crate::table::Table;
use files::FileKind;

/// One of a table's metadata tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetadataTable {
    /// Every snapshot the metadata keeps: when, its parent, the operation, the summary.
    Snapshots,
    /// The snapshot log: when each snapshot became current, and whether it still is an
    /// ancestor of the current one.
    History,
    /// Branches and tags.
    Refs,
    /// The manifests of the current snapshot, with file counts and partition summaries.
    Manifests,
    /// Every live file (data and deletes) of the current snapshot, with its metrics.
    Files,
    /// [`MetadataTable::Files`], data files only.
    DataFiles,
    /// [`MetadataTable::Files`], delete files only.
    DeleteFiles,
    /// The live files grouped by partition, with record, file and delete counts.
    Partitions,
}

impl MetadataTable {
    /// Every metadata table, in the order `SHOW`-like listings use.
    pub const ALL: [MetadataTable; 8] = [
        MetadataTable::Snapshots,
        MetadataTable::History,
        MetadataTable::Refs,
        MetadataTable::Manifests,
        MetadataTable::Files,
        MetadataTable::DataFiles,
        MetadataTable::DeleteFiles,
        MetadataTable::Partitions,
    ];

    /// Its name in SQL (`files`, `data_files`, ...).
    pub fn name(self) -> &'static str {
        match self {
            MetadataTable::Snapshots => "snapshots",
            MetadataTable::History => "history",
            MetadataTable::Refs => "refs",
            MetadataTable::Manifests => "manifests",
            MetadataTable::Files => "files",
            MetadataTable::DataFiles => "data_files",
            MetadataTable::DeleteFiles => "delete_files",
            MetadataTable::Partitions => "partitions",
        }
    }

    /// The metadata table called `name` (any case), if there is one.
    pub fn from_name(name: &str) -> Option<MetadataTable> {
        MetadataTable::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }
}

impl std::fmt::Display for MetadataTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Table {
    /// The rows of one of this table version's metadata tables.
    ///
    /// ```no_run
    /// # fn f(table: &geoberg_table::Table) -> geoberg_table::Result<()> {
    /// use geoberg_table::MetadataTable;
    /// let files = table.metadata_table(MetadataTable::Files)?;
    /// println!("{} live files", files.num_rows());
    /// # Ok(()) }
    /// ```
    pub fn metadata_table(&self, which: MetadataTable) -> Result<RecordBatch> {
        match which {
            MetadataTable::Snapshots => snapshots::snapshots(self.metadata()),
            MetadataTable::History => snapshots::history(self.metadata()),
            MetadataTable::Refs => snapshots::refs(self.metadata()),
            MetadataTable::Manifests => manifests::manifests(self),
            MetadataTable::Files => files::files(self, FileKind::All),
            MetadataTable::DataFiles => files::files(self, FileKind::Data),
            MetadataTable::DeleteFiles => files::files(self, FileKind::Deletes),
            MetadataTable::Partitions => partitions::partitions(self),
        }
    }
}
