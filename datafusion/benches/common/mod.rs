//! What the engine's benches share: a warehouse in a temporary directory, SedonaDB alone over
//! a table's data files, and the count a `SELECT count(*)` returns.

use std::sync::Arc;

use arrow_array::{Int64Array, RecordBatch};
use arrow_schema::DataType as ArrowType;
use geoberg_table::{Catalog, SqliteCatalog, Table};
use sedona::context::SedonaContext;
use sedona_geoparquet::provider::GeoParquetReadOptions;

/// A SQLite catalog `geoberg` over a warehouse in a new temporary directory, with namespace
/// `namespace`; the directory lives as long as the returned guard.
pub fn temp_catalog(namespace: &str) -> (tempfile::TempDir, Arc<dyn Catalog>) {
    let dir = tempfile::tempdir().unwrap();
    let catalog: Arc<dyn Catalog> = Arc::new(
        SqliteCatalog::open(
            dir.path().join("catalog.db"),
            "geoberg",
            dir.path().join("wh"),
        )
        .unwrap(),
    );
    catalog.create_namespace(namespace).unwrap();
    (dir, catalog)
}

/// The single integer of a `count(*)` result.
pub fn count(batches: &[RecordBatch]) -> i64 {
    let c = arrow::compute::cast(batches[0].column(0), &ArrowType::Int64).unwrap();
    c.as_any().downcast_ref::<Int64Array>().unwrap().value(0)
}

/// SedonaDB with nothing of geoberg's: a context of its own over the current data files of
/// each table, read as (Geo)Parquet and registered under the given name.
pub fn sedona_over(tables: &[(&str, &Table)]) -> (tokio::runtime::Runtime, SedonaContext) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let context = runtime.block_on(async {
        let context = SedonaContext::new_local_interactive().await.unwrap();
        for (name, table) in tables {
            let paths: Vec<String> = table
                .data_files()
                .unwrap()
                .iter()
                .map(|f| f.file_path().to_string())
                .collect();
            let frame = context
                .read_parquet(paths, GeoParquetReadOptions::default())
                .await
                .unwrap();
            context
                .ctx
                .register_table(*name, frame.into_view())
                .unwrap();
        }
        context
    });
    (runtime, context)
}
