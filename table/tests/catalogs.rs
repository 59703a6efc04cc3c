//! Catalog behaviour shared by the SQLite and in-memory catalogs.

use std::sync::Arc;

use geoberg_table::{Catalog, Error, MemoryCatalog, SqliteCatalog, TableIdent};

fn exercise(cat: Arc<dyn Catalog>) {
    let t = TableIdent::new("a.b", "t").unwrap();
    assert!(matches!(
        cat.register_table(&t, "file:///x/0.json"),
        Err(Error::NoSuchNamespace(_))
    ));
    cat.create_namespace("a.b").unwrap();
    cat.create_namespace("a.b").unwrap(); // idempotent
    assert!(cat.namespace_exists("a.b").unwrap());
    assert!(!cat.namespace_exists("a").unwrap());
    cat.register_table(&t, "file:///x/0.json").unwrap();
    assert!(matches!(
        cat.register_table(&t, "file:///x/1.json"),
        Err(Error::TableAlreadyExists(_))
    ));
    assert_eq!(cat.list_tables("a.b").unwrap(), vec![t.clone()]);
    cat.swap_metadata_location(&t, "file:///x/0.json", "file:///x/1.json")
        .unwrap();
    let err = cat
        .swap_metadata_location(&t, "file:///x/0.json", "file:///x/2.json")
        .unwrap_err();
    assert!(err.is_retryable(), "{err}");
    assert_eq!(
        cat.metadata_location(&t).unwrap().as_deref(),
        Some("file:///x/1.json")
    );
    assert!(cat.drop_table(&t).unwrap());
    assert_eq!(cat.metadata_location(&t).unwrap(), None);
    assert!(matches!(
        cat.swap_metadata_location(&t, "file:///x/1.json", "y"),
        Err(Error::CommitConflict { .. })
    ));
}

#[test]
fn memory_catalog() {
    exercise(Arc::new(MemoryCatalog::new("m", "/tmp/warehouse").unwrap()));
}

#[test]
fn sqlite_catalog_layout_is_the_jdbc_v1_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    exercise(Arc::new(
        SqliteCatalog::open(&db, "cat", dir.path()).unwrap(),
    ));
    let conn = rusqlite::Connection::open(&db).unwrap();
    let cols: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('iceberg_tables')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        cols,
        [
            "catalog_name",
            "table_namespace",
            "table_name",
            "metadata_location",
            "previous_metadata_location",
            "iceberg_type"
        ]
    );
    let exists: String = conn
        .query_row(
            "SELECT property_value FROM iceberg_namespace_properties WHERE namespace = 'a.b' AND property_key = 'exists'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(exists, "true");
}

#[test]
fn warehouse_must_be_absolute_and_clean() {
    assert!(MemoryCatalog::new("m", "relative/path").is_err());
    assert!(MemoryCatalog::new("m", "/tmp/../etc").is_err());
    assert!(MemoryCatalog::new("m", "ftp://host/wh").is_err());
    assert!(MemoryCatalog::new("m", "s3:///no-bucket").is_err());
    // Object stores are warehouses too; credentials are only needed when a file is touched.
    assert!(MemoryCatalog::new("m", "s3://bucket/wh").is_ok());
    assert!(MemoryCatalog::new("m", "file:///tmp/wh").is_ok());
}
