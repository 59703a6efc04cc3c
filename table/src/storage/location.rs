//! Locations: the URIs Iceberg metadata stores for files (`file:///abs/path`, `s3://bucket/key`,
//! `gs://`, `az://`, `abfss://`, `memory:///`), and how they map onto an object store and a path
//! inside it.

use object_store::path::Path as ObjectPath;
use url::Url;

use crate::error::{Error, Result};

/// A file location parsed once: the store it lives in and its path there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParsedLocation {
    /// `scheme://authority`: which store (`file://`, `s3://bucket`, ...).
    pub store_key: String,
    /// The URL of the store's root, as `object_store` builders take it.
    pub store_url: Url,
    /// The object's path inside the store.
    pub path: ObjectPath,
}

/// The canonical form of a location: a URI. A bare absolute path becomes `file://<path>` (what
/// Java, pyiceberg and DuckDB write); `file:/path` (Java's short form) stays readable.
pub fn normalize_location(location: &str) -> Result<String> {
    let location = location.trim();
    if location.starts_with('/') {
        return Ok(format!("file://{location}"));
    }
    if let Some(rest) = location.strip_prefix("file:")
        && !rest.starts_with("//")
    {
        return Ok(format!("file://{rest}"));
    }
    if location.contains("://") {
        return Ok(location.to_string());
    }
    Err(Error::InvalidLocation {
        location: location.to_string(),
        reason: "expected an absolute path or a URI such as file:///data/warehouse or \
                 s3://bucket/prefix"
            .into(),
    })
}

/// The store a location lives in (its root URL, `s3://bucket/`, `file:///`) and the object's
/// path inside it: how an engine that reads the files itself (DataFusion) addresses them.
pub fn split_location(location: &str) -> Result<(Url, ObjectPath)> {
    let parsed = parse_location(location)?;
    Ok((parsed.store_url, parsed.path))
}

/// `base` + `/` + `name`, with exactly one slash between them.
pub(crate) fn join(base: &str, name: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        name.trim_start_matches('/')
    )
}

/// Parses a location into its store and path.
pub(crate) fn parse_location(location: &str) -> Result<ParsedLocation> {
    let normalized = normalize_location(location)?;
    let bad = |reason: String| Error::InvalidLocation {
        location: location.to_string(),
        reason,
    };
    // Checked on the text: URL parsing resolves `..` (and `%2e%2e`) silently.
    let lowered = normalized.to_ascii_lowercase().replace("%2e", ".");
    if lowered.split('/').any(|s| s == ".." || s == ".") {
        return Err(bad(
            "a location must not contain '..' or '.'; give the resolved path".into(),
        ));
    }
    let url = Url::parse(&normalized).map_err(|e| bad(format!("not a URI: {e}")))?;
    if url.path().split('/').any(|s| s == "..") {
        return Err(bad(
            "a location must not contain '..'; give the resolved path".into(),
        ));
    }
    let scheme = url.scheme().to_ascii_lowercase();
    let (store_key, path) = match scheme.as_str() {
        "file" => {
            if url
                .host_str()
                .is_some_and(|h| !h.is_empty() && h != "localhost")
            {
                return Err(bad(format!(
                    "file:// locations name no host (found {:?}); use file:///absolute/path",
                    url.host_str().unwrap_or_default()
                )));
            }
            ("file://".to_string(), url.path().to_string())
        }
        "memory" => ("memory://".to_string(), url.path().to_string()),
        "s3" | "s3a" | "gs" | "az" | "adl" | "azure" | "abfs" | "abfss" => {
            let host = url
                .host_str()
                .filter(|h| !h.is_empty())
                .ok_or_else(|| bad(format!("{scheme}:// needs a bucket or container name")))?;
            let key = match url.username() {
                // abfss://container@account.dfs.core.windows.net/
                "" => format!("{scheme}://{host}"),
                user => format!("{scheme}://{user}@{host}"),
            };
            (key, url.path().to_string())
        }
        other => {
            return Err(bad(format!(
                "unsupported scheme {other:?}; use file://, s3://, gs://, az:// or abfss://"
            )));
        }
    };
    let path = ObjectPath::from_url_path(&path)
        .map_err(|e| bad(format!("not a valid object path: {e}")))?;
    let store_url = Url::parse(&format!("{store_key}/"))
        .map_err(|e| bad(format!("not a valid store URI: {e}")))?;
    Ok(ParsedLocation {
        store_key,
        store_url,
        path,
    })
}

/// The location of `path` inside the store `store_key` (the inverse of [`parse_location`]).
pub(crate) fn location_of(store_key: &str, path: &ObjectPath) -> String {
    format!("{store_key}/{path}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_normalize_to_uris() {
        assert_eq!(normalize_location("/a/b").unwrap(), "file:///a/b");
        assert_eq!(normalize_location("file:/a/b").unwrap(), "file:///a/b");
        assert_eq!(normalize_location("file:///a/b").unwrap(), "file:///a/b");
        assert_eq!(normalize_location("s3://b/k").unwrap(), "s3://b/k");
        assert!(normalize_location("relative/dir").is_err());
    }

    #[test]
    fn locations_split_into_store_and_path() {
        let p = parse_location("file:///tmp/wh/a b/x.parquet").unwrap();
        assert_eq!(p.store_key, "file://");
        assert_eq!(p.path.as_ref(), "tmp/wh/a b/x.parquet");
        assert_eq!(
            location_of(&p.store_key, &p.path),
            "file:///tmp/wh/a b/x.parquet"
        );
        let p = parse_location("s3://bucket/wh/t/x.parquet").unwrap();
        assert_eq!(p.store_key, "s3://bucket");
        assert_eq!(p.path.as_ref(), "wh/t/x.parquet");
        assert_eq!(
            location_of(&p.store_key, &p.path),
            "s3://bucket/wh/t/x.parquet"
        );
        assert!(parse_location("s3:///no-bucket").is_err());
        assert!(parse_location("ftp://host/x").is_err());
        assert!(parse_location("file:///a/../b").is_err());
        assert!(parse_location("file://otherhost/a").is_err());
    }

    #[test]
    fn join_puts_one_slash() {
        assert_eq!(join("s3://b/t/", "/data/x"), "s3://b/t/data/x");
        assert_eq!(join("file:///t", "metadata"), "file:///t/metadata");
    }
}
