//! Where a rewrite of a table reads its inputs and writes its output files, in this process or
//! in a worker given a [`crate::ops::rewrite_job::RewriteJob`].

use std::io;
use std::sync::Arc;

use geoberg_rewrite::{
    InputStorage, OutputStream, PartitionKey, RandomAccess, RewriteStorage, TargetSchema,
};

use crate::error::Result;
use crate::storage::{Storage, StorageFile, join};
use crate::table::Table;
use crate::write::RewriteTarget;

/// The rewrite's files through the table's storage: inputs by ranged reads, outputs as
/// `<table>/data/<run id>-<task>-<seq>.parquet` multipart uploads.
/// On a table whose schema changed, every output file gets the current columns
/// ([`RewriteTarget`]).
pub(crate) struct TableRewriteStorage {
    storage: Storage,
    pub(crate) data_dir: String,
    pub(crate) run: String,
    target: Option<RewriteTarget>,
}

impl TableRewriteStorage {
    pub(crate) fn new(table: &Table) -> Result<Self> {
        Ok(TableRewriteStorage {
            storage: table.storage().clone(),
            data_dir: table.data_dir(),
            run: uuid::Uuid::now_v7().to_string(),
            target: RewriteTarget::of(table)?,
        })
    }

    /// The same storage naming its files after `run`.
    pub(crate) fn with_run(mut self, run: String) -> Self {
        self.run = run;
        self
    }
}

impl InputStorage for TableRewriteStorage {
    fn open(&self, location: &str) -> io::Result<Arc<dyn RandomAccess>> {
        StorageFile::open(&self.storage, location)
            .map(|f| Arc::new(f) as Arc<dyn RandomAccess>)
            .map_err(io::Error::other)
    }

    fn target_schema(&self) -> Option<&dyn TargetSchema> {
        self.target.as_ref().map(|t| t as &dyn TargetSchema)
    }
}

impl RewriteStorage for TableRewriteStorage {
    fn locate(&self, _partition: &PartitionKey, task: usize, seq: usize) -> String {
        join(
            &self.data_dir,
            &format!("{}-{task:05}-{seq:03}.parquet", self.run),
        )
    }

    fn create(&self, location: &str) -> io::Result<Box<dyn OutputStream>> {
        let writer = self.storage.create(location).map_err(io::Error::other)?;
        Ok(Box::new(writer))
    }

    fn remove(&self, location: &str) -> io::Result<()> {
        self.storage.delete(location).map_err(io::Error::other)
    }
}
