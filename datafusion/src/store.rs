//! Where data files are read from: the one place that maps a manifest's file location to an
//! object store and a path in it.
//!
//! Today every geoberg table lives on the local filesystem and its manifests name data files
//! `file:///abs/path`, so scans read through DataFusion's `file://` store (a `LocalFileSystem`,
//! registered in every runtime). When tables carry their own object store, this module is what
//! changes.

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::object_store::ObjectStoreUrl;
use object_store::path::Path;

/// The store every data file of a local table is read through.
pub(crate) fn object_store_url() -> ObjectStoreUrl {
    ObjectStoreUrl::local_filesystem()
}

/// The path of a data file inside [`object_store_url`]'s store, from its manifest location
/// (`file:///abs/path`, `file:/abs/path` or a bare absolute path).
pub(crate) fn object_path(location: &str) -> Result<Path> {
    let raw = location
        .strip_prefix("file://")
        .or_else(|| location.strip_prefix("file:"))
        .unwrap_or(location);
    if raw.contains("://") {
        return Err(DataFusionError::Plan(format!(
            "data file {location:?} is not on the local filesystem; geoberg reads file:// \
             locations only for now"
        )));
    }
    Path::from_absolute_path(raw).map_err(|e| {
        DataFusionError::Plan(format!(
            "data file location {location:?} is not an absolute local path: {e}"
        ))
    })
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
        assert!(object_path("s3://bucket/x.parquet").is_err());
        assert!(object_path("relative/x.parquet").is_err());
    }
}
