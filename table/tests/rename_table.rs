//! `Catalog::rename_table` (`ALTER TABLE t RENAME TO u`) on the memory and SQLite catalogs: the
//! table answers under its new name with the same metadata, the old name is gone, and a taken
//! name, a missing table or a missing namespace is refused with nothing changed.

mod common;

use std::sync::Arc;

use common::*;
use geoberg_table::{Catalog, Error, MemoryCatalog, Table, TableIdent};

fn ident(ns: &str, name: &str) -> TableIdent {
    TableIdent::new(ns, name).unwrap()
}

fn renames_atomically(catalog: Arc<dyn Catalog>) {
    let t = points_table(Arc::clone(&catalog), "t");
    let t = t.append(&[points_batch(0..4, uniform(1))]).unwrap().0;
    points_table(Arc::clone(&catalog), "taken");
    let location = t.metadata_location().to_string();

    let err = catalog
        .rename_table(&ident("test_db", "t"), &ident("test_db", "taken"))
        .unwrap_err();
    assert!(matches!(err, Error::TableAlreadyExists(_)), "{err}");
    let err = catalog
        .rename_table(&ident("test_db", "nope"), &ident("test_db", "u"))
        .unwrap_err();
    assert!(matches!(err, Error::NoSuchTable(_)), "{err}");
    let err = catalog
        .rename_table(&ident("test_db", "t"), &ident("other", "u"))
        .unwrap_err();
    assert!(matches!(err, Error::NoSuchNamespace(_)), "{err}");
    assert_eq!(
        catalog.metadata_location(&ident("test_db", "t")).unwrap(),
        Some(location.clone()),
        "a refused rename changes nothing"
    );

    catalog.create_namespace("other").unwrap();
    catalog
        .rename_table(&ident("test_db", "t"), &ident("other", "u"))
        .unwrap();
    assert_eq!(
        catalog.metadata_location(&ident("test_db", "t")).unwrap(),
        None
    );
    let u = Table::load(Arc::clone(&catalog), &ident("other", "u")).unwrap();
    assert_eq!(u.metadata_location(), location);
    assert_eq!(rows(&u), rows(&t));
    // The renamed table takes commits under its new name.
    let u = u.append(&[points_batch(4..6, uniform(2))]).unwrap().0;
    assert_eq!(
        ids_of(&u.scan().execute().unwrap().0),
        (0..6).collect::<Vec<_>>()
    );
    assert_eq!(catalog.list_tables("other").unwrap(), [ident("other", "u")]);
}

#[test]
fn sqlite_renames_atomically() {
    let dir = tempfile::tempdir().unwrap();
    renames_atomically(sqlite_catalog(dir.path()));
}

#[test]
fn memory_renames_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = MemoryCatalog::new("geoberg", dir.path().join("warehouse")).unwrap();
    catalog.create_namespace("test_db").unwrap();
    renames_atomically(Arc::new(catalog));
}
