//! Row-level deletes (spec: "Row-level Deletes", "Deletion Vectors", "Position Delete Files"):
//! which deletes apply to which data file in a table version, and the deleted row positions of
//! one data file. v3 deletion vectors (Puffin `deletion-vector-v1` blobs) and v2 position delete
//! files (Parquet `file_path`, `pos`) are applied; equality deletes are refused with an error
//! that says how to get rid of them.

mod write;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use futures::TryStreamExt;
use geoberg_puffin::DeletionVector;
use iceberg::spec::{DataContentType, DataFileFormat, ManifestContentType};
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use parquet::arrow::async_reader::ParquetObjectReader;

pub(crate) use write::{DeleteFileWriter, FileDeletes};

use crate::error::{Error, Result};
use crate::manifest::{read_entries, read_manifest};
use crate::storage::{Storage, block_on};
use crate::table::Table;

/// `file_path` of a position delete file (spec: reserved field id 2147483546).
pub const DELETE_FILE_PATH_FIELD_ID: i32 = 2_147_483_546;
/// `pos` of a position delete file (spec: reserved field id 2147483545).
pub const DELETE_POS_FIELD_ID: i32 = 2_147_483_545;

/// One live delete file of the snapshot.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DeleteFile {
    /// Its location (a Puffin file for a deletion vector).
    pub location: String,
    /// Its data sequence number: it applies to data files whose sequence number is at most this.
    pub sequence_number: i64,
    /// A deletion vector's blob: `content_offset`, `content_size_in_bytes`.
    pub blob: Option<(i64, i64)>,
    /// The data file it deletes from, when it names one (always, for a deletion vector).
    pub referenced_data_file: Option<String>,
    /// Rows it deletes (the vector's cardinality).
    pub record_count: u64,
    /// Its size in bytes.
    pub size: u64,
}

/// The deletes of one table version, by the data file they apply to.
#[derive(Debug, Default)]
pub(crate) struct DeleteIndex {
    by_file: HashMap<String, Vec<DeleteFile>>,
    /// Position delete files that name no data file: they may hold rows of any.
    global: Vec<DeleteFile>,
    /// The data sequence number of each live data file.
    data_sequence: HashMap<String, i64>,
    /// Decoded position delete files, by location: data file → positions.
    decoded: Mutex<HashMap<String, Arc<HashMap<String, DeletionVector>>>>,
}

impl DeleteIndex {
    /// The deletes of `table`'s current snapshot (cached per version).
    pub(crate) fn of(table: &Table) -> Result<Arc<DeleteIndex>> {
        const KEY: &str = "deletes";
        if let Some(hit) = table.derived().get::<DeleteIndex>(KEY) {
            return Ok(hit);
        }
        let built = Arc::new(DeleteIndex::build(table)?);
        Ok(table.derived().insert(KEY, built))
    }

    fn build(table: &Table) -> Result<DeleteIndex> {
        let manifests = table.manifests()?;
        let (deletes, data): (Vec<_>, Vec<_>) = manifests
            .into_iter()
            .partition(|m| m.content == ManifestContentType::Deletes);
        let mut index = DeleteIndex::default();
        if deletes.is_empty() {
            return Ok(index);
        }
        for e in read_entries(table.storage(), &data, &[])? {
            if e.is_live() {
                index
                    .data_sequence
                    .insert(e.path, e.sequence_number.unwrap_or(0));
            }
        }
        for m in &deletes {
            for e in read_manifest(table.storage(), m)? {
                if !e.is_alive() {
                    continue;
                }
                let f = e.data_file();
                match f.content_type() {
                    DataContentType::EqualityDeletes => {
                        return Err(Error::Unsupported {
                            what: format!(
                                "equality delete file {} in table {}",
                                f.file_path(),
                                table.ident()
                            ),
                            fix: "compact the table with the engine that wrote it \
                                  (rewrite_data_files with delete-file-threshold=1), which \
                                  applies the deletes to the data files"
                                .into(),
                        });
                    }
                    DataContentType::Data => continue,
                    DataContentType::PositionDeletes => {}
                }
                let blob = (f.file_format() == DataFileFormat::Puffin)
                    .then(|| f.content_offset().zip(f.content_size_in_bytes()))
                    .flatten();
                if f.file_format() == DataFileFormat::Puffin && blob.is_none() {
                    return Err(Error::corrupt(
                        &m.manifest_path,
                        format!(
                            "deletion vector {} has no content_offset / content_size_in_bytes",
                            f.file_path()
                        ),
                    ));
                }
                let delete = DeleteFile {
                    location: f.file_path().to_string(),
                    sequence_number: e.sequence_number().unwrap_or(m.sequence_number),
                    blob,
                    referenced_data_file: f.referenced_data_file(),
                    record_count: f.record_count(),
                    size: f.file_size_in_bytes(),
                };
                match &delete.referenced_data_file {
                    Some(target) => index
                        .by_file
                        .entry(target.clone())
                        .or_default()
                        .push(delete),
                    None => index.global.push(delete),
                }
            }
        }
        Ok(index)
    }

    /// The delete files that apply to the data file `path` (sequence numbers checked).
    pub(crate) fn for_file(&self, path: &str) -> Vec<&DeleteFile> {
        let seq = self.data_sequence.get(path).copied().unwrap_or(i64::MIN);
        self.by_file
            .get(path)
            .into_iter()
            .flatten()
            .chain(&self.global)
            .filter(|d| d.sequence_number >= seq)
            .collect()
    }

    /// The deletion vectors (not position delete files) that name the data file `path`.
    pub(crate) fn vectors_of(&self, path: &str) -> Vec<&DeleteFile> {
        self.by_file
            .get(path)
            .into_iter()
            .flatten()
            .filter(|d| d.blob.is_some())
            .collect()
    }

    /// The deleted row positions of the data file `path`; `None` when nothing is deleted.
    pub(crate) fn deleted_positions(
        &self,
        storage: &Storage,
        path: &str,
    ) -> Result<Option<DeletionVector>> {
        let mut out: Option<DeletionVector> = None;
        for d in self.for_file(path) {
            let positions = match d.blob {
                Some((offset, length)) => read_vector(storage, &d.location, offset, length)?,
                None => match self.position_file(storage, &d.location)?.get(path) {
                    Some(v) => v.clone(),
                    None => continue,
                },
            };
            match &mut out {
                Some(acc) => acc.union_with(&positions),
                None => out = Some(positions),
            }
        }
        Ok(out)
    }

    /// A position delete file, decoded once per version.
    fn position_file(
        &self,
        storage: &Storage,
        location: &str,
    ) -> Result<Arc<HashMap<String, DeletionVector>>> {
        if let Some(hit) = self
            .decoded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(location)
        {
            return Ok(hit.clone());
        }
        let decoded = Arc::new(read_position_file(storage, location)?);
        self.decoded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(location.to_string(), decoded.clone());
        Ok(decoded)
    }
}

impl Table {
    /// Live delete files of the current snapshot (deletion vectors and position delete files),
    /// as their manifest entries; a deletion vector's `referenced_data_file` names its data file.
    pub fn delete_files(&self) -> Result<Vec<iceberg::spec::DataFile>> {
        let mut out = Vec::new();
        for m in self.manifests()? {
            if m.content != ManifestContentType::Deletes {
                continue;
            }
            out.extend(
                read_manifest(self.storage(), &m)?
                    .iter()
                    .filter(|e| e.is_alive())
                    .map(|e| e.data_file().clone()),
            );
        }
        Ok(out)
    }
}

/// One deletion vector, by a ranged read of its blob.
pub(crate) fn read_vector(
    storage: &Storage,
    location: &str,
    offset: i64,
    length: i64,
) -> Result<DeletionVector> {
    let (Ok(start), Ok(len)) = (u64::try_from(offset), u64::try_from(length)) else {
        return Err(Error::corrupt(
            location,
            format!("deletion vector at offset {offset} of length {length}"),
        ));
    };
    let blob = storage.read_range(location, start..start + len)?;
    DeletionVector::from_blob(&blob).map_err(|e| Error::corrupt(location, e.to_string()))
}

/// A v2 position delete file: its `(file_path, pos)` rows, grouped by data file.
fn read_position_file(
    storage: &Storage,
    location: &str,
) -> Result<HashMap<String, DeletionVector>> {
    let (store, path) = storage.object_store(location)?;
    let batches: Vec<arrow_array::RecordBatch> = block_on(async move {
        ParquetRecordBatchStreamBuilder::new(ParquetObjectReader::new(store, path))
            .await?
            .build()?
            .try_collect()
            .await
    })?;
    let mut out: HashMap<String, DeletionVector> = HashMap::new();
    for b in &batches {
        let column = |name: &str| {
            b.column_by_name(name).ok_or_else(|| {
                Error::corrupt(
                    location,
                    format!("position delete file has no {name} column"),
                )
            })
        };
        let (files, positions) = (column("file_path")?, column("pos")?);
        let files = arrow_cast::cast(files, &arrow_schema::DataType::Utf8)?;
        let files = files.as_string::<i32>();
        let positions = positions
            .as_primitive_opt::<Int64Type>()
            .ok_or_else(|| Error::corrupt(location, "position delete pos is not a long"))?;
        for (f, p) in files.iter().zip(positions.iter()) {
            let (Some(f), Some(p)) = (f, p) else {
                return Err(Error::corrupt(location, "null file_path or pos"));
            };
            let p = u64::try_from(p)
                .map_err(|_| Error::corrupt(location, format!("negative position {p}")))?;
            out.entry(f.to_string())
                .or_default()
                .insert(p)
                .map_err(|e| Error::corrupt(location, e.to_string()))?;
        }
    }
    Ok(out)
}
