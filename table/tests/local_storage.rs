//! Local files are read on the calling thread instead of through `object_store`'s blocking
//! pool: the same bytes, ranges, sizes and errors as through the store.

use geoberg_table::Storage;

#[test]
fn local_reads_return_the_stored_bytes_and_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::new();
    let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    // A percent-encoded name: the store and the direct read agree on the file it means.
    for name in ["data.bin", "with%20space.bin"] {
        let location = format!("file://{}/{name}", dir.path().display());
        storage.write_new(&location, bytes.clone()).unwrap();
        assert_eq!(storage.read(&location).unwrap(), bytes);
        assert_eq!(
            storage.read_range(&location, 100..4_100).unwrap(),
            bytes[100..4_100]
        );
        assert_eq!(storage.read_range(&location, 5..5).unwrap().len(), 0);
        assert_eq!(storage.head(&location).unwrap().size, 10_000);
        let e = storage.read_range(&location, 9_000..11_000).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
    }
    assert!(dir.path().join("with space.bin").exists());

    let missing = format!("file://{}/missing.bin", dir.path().display());
    let e = storage.read(&missing).unwrap_err();
    assert!(e.is_not_found(), "{e}");
    assert!(e.to_string().contains("missing.bin"), "{e}");
    assert!(
        storage
            .read_range(&missing, 0..10)
            .unwrap_err()
            .is_not_found()
    );
}
