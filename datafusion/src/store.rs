//! Where data files are read from: the one place that maps a manifest's file location to an
//! object store and a path in it, and that puts the table's store into DataFusion's registry.
//!
//! A table's files live in the store of its location (`file:///` for a local warehouse,
//! `s3://bucket/` for S3); the table crate's [`Storage`](geoberg_table::Storage) holds the
//! configured client (endpoint, credentials, retries), and the scan reads through that same
//! client, registered under the store's URL.

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::runtime_env::RuntimeEnv;
use geoberg_table::{Table, split_location};
use object_store::path::Path;

/// The store URL of a location (`s3://bucket/`, `file:///`).
pub(crate) fn object_store_url(location: &str) -> Result<ObjectStoreUrl> {
    let (url, _) = split_location(location).map_err(plan_error)?;
    ObjectStoreUrl::parse(url.as_str())
}

/// The path of a data file inside its store, from its manifest location (`file:///abs/path`,
/// `file:/abs/path`, a bare absolute path, `s3://bucket/key`).
pub(crate) fn object_path(location: &str) -> Result<Path> {
    Ok(split_location(location).map_err(plan_error)?.1)
}

/// Registers the store holding `table`'s files in `runtime` (the table's own client, so that
/// its endpoint and credentials apply) and returns its URL.
pub(crate) fn register_table_store(table: &Table, runtime: &RuntimeEnv) -> Result<ObjectStoreUrl> {
    let location = table.metadata().location();
    let (store, _) = table
        .storage()
        .object_store(location)
        .map_err(crate::error::table_error)?;
    let url = object_store_url(location)?;
    runtime.register_object_store(url.as_ref(), store);
    Ok(url)
}

fn plan_error(e: geoberg_table::Error) -> DataFusionError {
    DataFusionError::Plan(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_locations_become_store_paths() {
        let p = object_path("file:///tmp/wh/db/t/data/00000-a b.parquet").unwrap();
        assert_eq!(p.as_ref(), "tmp/wh/db/t/data/00000-a b.parquet");
        assert_eq!(
            object_path("/tmp/x.parquet").unwrap().as_ref(),
            "tmp/x.parquet"
        );
        assert_eq!(
            object_path("s3://bucket/wh/x.parquet").unwrap().as_ref(),
            "wh/x.parquet"
        );
        assert_eq!(
            object_store_url("s3://bucket/wh/x.parquet")
                .unwrap()
                .as_str(),
            "s3://bucket/"
        );
        assert_eq!(
            object_store_url("/tmp/x.parquet").unwrap().as_str(),
            "file:///"
        );
        assert!(object_path("relative/x.parquet").is_err());
        assert!(object_path("s3://bucket/../x.parquet").is_err());
    }
}
