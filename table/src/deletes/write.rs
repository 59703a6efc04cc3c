//! Writing deletes: v3 deletion vectors (one Puffin file per commit, a blob per data file) and v2
//! position delete files (Parquet, one per partition, rows sorted by `file_path`, `pos`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema as ArrowSchema};
use geoberg_puffin::{DeletionVector, PuffinWriter};
use iceberg::spec::{DataContentType, DataFile, DataFileBuilder, DataFileFormat, Datum, Struct};
use parquet::arrow::{ArrowWriter, PARQUET_FIELD_ID_META_KEY};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

use super::{DELETE_FILE_PATH_FIELD_ID, DELETE_POS_FIELD_ID};
use crate::error::{Error, Result};
use crate::storage::join;
use crate::table::Table;

/// The Arrow schema of a position delete file: `file_path` and `pos` with their reserved ids.
pub(crate) fn position_delete_schema() -> Arc<ArrowSchema> {
    let field = |name: &str, ty: ArrowType, id: i32| {
        Field::new(name, ty, false).with_metadata(HashMap::from([(
            PARQUET_FIELD_ID_META_KEY.to_string(),
            id.to_string(),
        )]))
    };
    Arc::new(ArrowSchema::new(vec![
        field("file_path", ArrowType::Utf8, DELETE_FILE_PATH_FIELD_ID),
        field("pos", ArrowType::Int64, DELETE_POS_FIELD_ID),
    ]))
}

/// Writes the delete files of one commit; every file written is recorded for cleanup.
pub(crate) struct DeleteFileWriter<'a> {
    table: &'a Table,
    /// Files written so far (removed by the caller if the commit does not happen).
    pub written: Vec<String>,
}

/// The deleted positions of one data file, with the partition the delete file must carry.
pub(crate) struct FileDeletes<'a> {
    /// The data file's entry (its path, partition and spec).
    pub data_file: &'a DataFile,
    /// Its spec id (which `DataFile` does not expose).
    pub spec_id: i32,
    /// Every position deleted from it (merged with the vector it had, for a deletion vector).
    pub positions: DeletionVector,
}

impl<'a> DeleteFileWriter<'a> {
    pub(crate) fn new(table: &'a Table) -> Self {
        DeleteFileWriter {
            table,
            written: Vec::new(),
        }
    }

    /// One Puffin file holding a deletion vector per data file; their manifest entries.
    pub(crate) fn deletion_vectors(
        &mut self,
        files: &[FileDeletes<'_>],
    ) -> Result<Vec<(i32, DataFile)>> {
        if files.is_empty() {
            return Ok(Vec::new());
        }
        let location = join(
            &self.table.data_dir(),
            &format!("{}-deletes.puffin", uuid::Uuid::now_v7()),
        );
        let puffin = |e: geoberg_puffin::Error| Error::corrupt(&location, e.to_string());
        let mut writer = PuffinWriter::new(Vec::new()).map_err(puffin)?;
        let mut entries = Vec::with_capacity(files.len());
        for f in files {
            let entry = writer
                .add_deletion_vector(f.data_file.file_path(), &f.positions)
                .map_err(puffin)?;
            entries.push((f, entry));
        }
        let (bytes, summary) = writer.finish().map_err(puffin)?;
        self.written.push(location.clone());
        self.table.storage().write_new(&location, bytes)?;
        entries
            .into_iter()
            .map(|(f, e)| {
                let file = DataFileBuilder::default()
                    .content(DataContentType::PositionDeletes)
                    .file_path(location.clone())
                    .file_format(DataFileFormat::Puffin)
                    .partition(f.data_file.partition().clone())
                    .partition_spec_id(f.spec_id)
                    .record_count(e.cardinality)
                    .file_size_in_bytes(summary.file_size_in_bytes)
                    .referenced_data_file(Some(f.data_file.file_path().to_string()))
                    .content_offset(Some(e.content_offset))
                    .content_size_in_bytes(Some(e.content_size_in_bytes))
                    .build()
                    .map_err(|err| Error::corrupt(&location, format!("delete entry: {err}")))?;
                Ok((f.spec_id, file))
            })
            .collect()
    }

    /// v2 position delete files, one per partition; their manifest entries.
    pub(crate) fn position_files(
        &mut self,
        files: &[FileDeletes<'_>],
    ) -> Result<Vec<(i32, DataFile)>> {
        // Partition tuple (as text) → (spec, partition, data file → positions).
        type Group<'g> = (i32, Struct, BTreeMap<&'g str, &'g DeletionVector>);
        let mut groups: BTreeMap<String, Group<'_>> = BTreeMap::new();
        for f in files {
            let key = format!("{}/{:?}", f.spec_id, f.data_file.partition());
            groups
                .entry(key)
                .or_insert_with(|| (f.spec_id, f.data_file.partition().clone(), BTreeMap::new()))
                .2
                .insert(f.data_file.file_path(), &f.positions);
        }
        let mut out = Vec::with_capacity(groups.len());
        for (_, (spec_id, partition, by_file)) in groups {
            let (mut paths, mut positions) = (Vec::new(), Vec::new());
            for (path, dv) in &by_file {
                for p in dv.iter() {
                    paths.push(*path);
                    positions.push(p as i64);
                }
            }
            let rows = positions.len() as u64;
            let batch = RecordBatch::try_new(
                position_delete_schema(),
                vec![
                    Arc::new(StringArray::from(paths.clone())),
                    Arc::new(Int64Array::from(positions.clone())),
                ],
            )?;
            let props = WriterProperties::builder()
                .set_compression(Compression::ZSTD(ZstdLevel::default()))
                .build();
            let mut buf = Vec::new();
            let mut w = ArrowWriter::try_new(&mut buf, position_delete_schema(), Some(props))?;
            w.write(&batch)?;
            w.close()?;
            let location = join(
                &self.table.data_dir(),
                &format!("{}-deletes.parquet", uuid::Uuid::now_v7()),
            );
            let size = buf.len() as u64;
            self.written.push(location.clone());
            self.table.storage().write_new(&location, buf)?;
            let referenced = (by_file.len() == 1).then(|| paths[0].to_string());
            let (first, last) = (paths[0], paths[paths.len() - 1]);
            let file = DataFileBuilder::default()
                .content(DataContentType::PositionDeletes)
                .file_path(location.clone())
                .file_format(DataFileFormat::Parquet)
                .partition(partition)
                .partition_spec_id(spec_id)
                .record_count(rows)
                .file_size_in_bytes(size)
                .lower_bounds(HashMap::from([
                    (DELETE_FILE_PATH_FIELD_ID, Datum::string(first)),
                    (
                        DELETE_POS_FIELD_ID,
                        Datum::long(*positions.iter().min().unwrap_or(&0)),
                    ),
                ]))
                .upper_bounds(HashMap::from([
                    (DELETE_FILE_PATH_FIELD_ID, Datum::string(last)),
                    (
                        DELETE_POS_FIELD_ID,
                        Datum::long(*positions.iter().max().unwrap_or(&0)),
                    ),
                ]))
                .referenced_data_file(referenced)
                .build()
                .map_err(|err| Error::corrupt(&location, format!("delete entry: {err}")))?;
            out.push((spec_id, file));
        }
        Ok(out)
    }
}
