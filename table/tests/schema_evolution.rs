//! Schema evolution through `Table::update_schema`: columns added, renamed and dropped in a new
//! metadata version without a snapshot or a rewritten file; files written before read by field
//! id (nulls for a column added since, values under a new name, a dropped column gone, a
//! re-added name never resurrecting old values); Iceberg's refusals with their fixes.
//!
//! The oracle for values is what each test wrote; that no data file is rewritten is checked on
//! the data directory and the manifests, and the field ids of new files on their Parquet
//! footers, read with `parquet` directly rather than through the scan.

mod common;

use std::sync::Arc;

use arrow_array::{Array, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::*;
use geoberg_table::{
    BBox, Column, ColumnPosition, CreateTable, DataType, Error, Table, TableIdent,
};

/// Values of column `name` by id, over all rows of a scan.
fn column_by_id<T>(
    table: &Table,
    name: &str,
    value: impl Fn(&dyn Array, usize) -> T,
) -> Vec<(i64, Option<T>)> {
    let (batches, _) = table.scan().execute().unwrap();
    let mut out = Vec::new();
    for b in &batches {
        let ids = b.column(b.schema().index_of("id").unwrap());
        let ids = ids.as_any().downcast_ref::<Int64Array>().unwrap();
        let col = b.column(b.schema().index_of(name).unwrap());
        for r in 0..b.num_rows() {
            out.push((
                ids.value(r),
                col.is_valid(r).then(|| value(col.as_ref(), r)),
            ));
        }
    }
    out.sort_by_key(|(id, _)| *id);
    out
}

fn strings(a: &dyn Array, r: usize) -> String {
    a.as_any()
        .downcast_ref::<StringArray>()
        .unwrap()
        .value(r)
        .to_string()
}

fn doubles(a: &dyn Array, r: usize) -> f64 {
    a.as_any().downcast_ref::<Float64Array>().unwrap().value(r)
}

/// Field ids of the top-level columns of a data file's Parquet schema, read from its footer.
fn file_field_ids(path: &str) -> Vec<(String, i32)> {
    let local = path.trim_start_matches("file://");
    let file = std::fs::File::open(local).unwrap();
    let reader = parquet::file::serialized_reader::SerializedFileReader::new(file).unwrap();
    use parquet::file::reader::FileReader;
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    schema
        .root_schema()
        .get_fields()
        .iter()
        .map(|f| (f.name().to_string(), f.get_basic_info().id()))
        .collect()
}

/// A batch of `points_batch` columns plus a `score double` column.
fn with_score(ids: std::ops::Range<i64>) -> RecordBatch {
    let base = points_batch(ids.clone(), uniform(3));
    let mut fields: Vec<Field> = base
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields.push(Field::new("score", ArrowType::Float64, true));
    let mut columns = base.columns().to_vec();
    columns.push(Arc::new(Float64Array::from_iter_values(
        ids.map(|i| i as f64 * 0.5),
    )));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

#[test]
fn an_added_column_reads_null_in_old_files_and_written_in_new_ones() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = points_table(Arc::clone(&catalog), "t");
    let t = t.append(&[points_batch(0..10, uniform(1))]).unwrap().0;
    let files_before = data_dir_files(&t);
    let snapshot = t.metadata().current_snapshot_id();
    let last_id = t.metadata().last_column_id();

    let t = t
        .update_schema()
        .add_column(
            Column::new("score", DataType::Double),
            ColumnPosition::After("id".into()),
        )
        .commit()
        .unwrap();
    assert_eq!(column_names(&t), ["id", "score", "data", "geom"]);
    assert_eq!(
        t.metadata().current_snapshot_id(),
        snapshot,
        "no new snapshot"
    );
    assert_eq!(data_dir_files(&t), files_before, "no data file written");
    let score = t
        .metadata()
        .current_schema()
        .field_by_name("score")
        .unwrap();
    assert_eq!(score.id, last_id + 1);
    assert!(!score.required);
    assert_eq!(t.metadata().last_column_id(), last_id + 1);

    // The catalog serves the new schema.
    let reloaded = Table::load(
        Arc::clone(&catalog),
        &TableIdent::new("test_db", "t").unwrap(),
    )
    .unwrap();
    assert_eq!(column_names(&reloaded), ["id", "score", "data", "geom"]);
    let (batches, _) = reloaded.scan().execute().unwrap();
    let got: Vec<String> = batches[0]
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(
        got,
        ["id", "score", "data", "geom"],
        "scan shows the current order"
    );

    let t = reloaded.append(&[with_score(10..15)]).unwrap().0;
    let scores = column_by_id(&t, "score", doubles);
    let expected: Vec<(i64, Option<f64>)> = (0..15)
        .map(|i| (i, (i >= 10).then_some(i as f64 * 0.5)))
        .collect();
    assert_eq!(scores, expected);
    // Selecting only the new column works on files that lack it.
    let (batches, _) = t.scan().select(["score"]).execute().unwrap();
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    let nulls: usize = batches.iter().map(|b| b.column(0).null_count()).sum();
    assert_eq!((rows, nulls), (15, 10));
    // The new file records the new field id; the old one is untouched.
    let new_files: Vec<String> = t
        .data_files()
        .unwrap()
        .iter()
        .map(|f| f.file_path().to_string())
        .filter(|p| !files_before.iter().any(|old| p.ends_with(old.as_str())))
        .collect();
    assert_eq!(new_files.len(), 1);
    let ids = file_field_ids(&new_files[0]);
    assert!(ids.contains(&("score".to_string(), last_id + 1)), "{ids:?}");
}

#[test]
fn a_renamed_column_reads_under_its_new_name_in_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = points_table(Arc::clone(&catalog), "t")
        .set_properties([
            ("write.metadata.metrics.column.data", "full"),
            ("write.sort-order", "data DESC, id"),
        ])
        .unwrap();
    let t = t.append(&[points_batch(0..5, uniform(1))]).unwrap().0;
    let files_before = data_dir_files(&t);
    let id_before = t
        .metadata()
        .current_schema()
        .field_by_name("data")
        .unwrap()
        .id;

    let t = t
        .update_schema()
        .rename_column("data", "label")
        .commit()
        .unwrap();
    assert_eq!(column_names(&t), ["id", "label", "geom"]);
    assert_eq!(
        t.metadata()
            .current_schema()
            .field_by_name("label")
            .unwrap()
            .id,
        id_before
    );
    assert_eq!(data_dir_files(&t), files_before);
    // Java's applyChangesToMetricsConfig: the metrics key follows the column.
    let props = t.metadata().properties();
    assert_eq!(
        props
            .get("write.metadata.metrics.column.label")
            .map(String::as_str),
        Some("full")
    );
    assert!(!props.contains_key("write.metadata.metrics.column.data"));
    // So does the sort order appends use.
    assert_eq!(
        props.get("write.sort-order").map(String::as_str),
        Some("label DESC NULLS LAST, id ASC NULLS FIRST")
    );

    // Appends name the column by its new name.
    let batch = points_batch(5..8, uniform(2));
    let schema = Schema::new(vec![
        batch.schema().field(0).clone(),
        batch.schema().field(1).clone().with_name("label"),
        batch.schema().field(2).clone(),
    ]);
    let batch = RecordBatch::try_new(Arc::new(schema), batch.columns().to_vec()).unwrap();
    let t = t.append(&[batch]).unwrap().0;
    let labels = column_by_id(&t, "label", strings);
    let expected: Vec<(i64, Option<String>)> =
        (0..8).map(|i| (i, Some(format!("row{i}")))).collect();
    assert_eq!(labels, expected);
    let err = t.scan().select(["data"]).execute().unwrap_err();
    assert!(matches!(err, Error::NoSuchColumn { .. }), "{err}");
}

#[test]
fn a_dropped_column_disappears_and_its_name_added_again_is_a_new_column() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = points_table(Arc::clone(&catalog), "t");
    let t = t.append(&[points_batch(0..6, uniform(1))]).unwrap().0;
    let files_before = data_dir_files(&t);
    let old_id = t
        .metadata()
        .current_schema()
        .field_by_name("data")
        .unwrap()
        .id;

    let t = t.update_schema().drop_column("data").commit().unwrap();
    assert_eq!(column_names(&t), ["id", "geom"]);
    assert_eq!(data_dir_files(&t), files_before);
    let (batches, _) = t.scan().execute().unwrap();
    assert_eq!(batches[0].num_columns(), 2);
    assert_eq!(ids_of(&batches), (0..6).collect::<Vec<_>>());

    // Same name, new field id: the old file's values stay with the dropped field.
    let t = t
        .update_schema()
        .add_column(Column::new("data", DataType::String), ColumnPosition::Last)
        .commit()
        .unwrap();
    let new_id = t
        .metadata()
        .current_schema()
        .field_by_name("data")
        .unwrap()
        .id;
    assert_ne!(new_id, old_id);
    let values = column_by_id(&t, "data", strings);
    assert_eq!(values, (0..6).map(|i| (i, None)).collect::<Vec<_>>());
    // The old schema still has the dropped field: history keeps it.
    assert!(
        t.metadata()
            .schemas_iter()
            .any(|s| s.field_by_id(old_id).is_some_and(|f| f.name == "data"))
    );
}

#[test]
fn nested_and_geo_columns_get_fresh_ids_and_keep_their_types() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = points_table(Arc::clone(&catalog), "t");
    let t = t.append(&[points_batch(0..4, uniform(1))]).unwrap().0;
    let last = t.metadata().last_column_id();
    let t = t
        .update_schema()
        .add_column(
            Column::new(
                "tags",
                DataType::struct_of([
                    Column::new("a", DataType::Int),
                    Column::new("b", DataType::list(DataType::String)),
                ]),
            ),
            ColumnPosition::First,
        )
        .add_column(
            Column::new("area", DataType::geometry(4326)),
            ColumnPosition::Last,
        )
        .commit()
        .unwrap();
    assert_eq!(column_names(&t), ["tags", "id", "data", "geom", "area"]);
    let schema = t.metadata().current_schema();
    let tags = schema.field_by_name("tags").unwrap();
    assert_eq!(tags.id, last + 1);
    // tags, then its fields a and b, then b's element; then area.
    assert_eq!(schema.field_by_name("tags.a").unwrap().id, last + 2);
    assert_eq!(schema.field_by_name("tags.b").unwrap().id, last + 3);
    assert_eq!(schema.field_by_name("area").unwrap().id, last + 5);
    assert_eq!(t.metadata().last_column_id(), last + 5);

    let reloaded = t.refresh().unwrap();
    let geo: Vec<&str> = reloaded
        .geo_columns()
        .iter()
        .map(|g| g.name.as_str())
        .collect();
    assert_eq!(geo, ["geom", "area"]);
    assert!(
        reloaded
            .show_create_table("c")
            .contains("area GEOMETRY(4326)")
    );
    // A window on the new geo column: the old file holds only nulls there and is skipped.
    let (batches, explain) = reloaded
        .scan()
        .with_window("area", BBox::new(-180.0, -90.0, 180.0, 90.0))
        .execute()
        .unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 0);
    assert_eq!(explain.rows_returned, 0);
    // The old file reads with a null struct.
    let (batches, _) = reloaded.scan().select(["id", "tags"]).execute().unwrap();
    assert_eq!(batches[0].column(1).null_count(), 4);
}

#[test]
fn changes_iceberg_refuses_name_the_fix_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = partitioned_points_table(Arc::clone(&catalog), "t", &[]);
    let before = t.metadata_location().to_string();
    let refused = |change: geoberg_table::UpdateSchema<'_>, needle: &str| {
        let err = change.commit().unwrap_err();
        assert!(matches!(err, Error::SchemaChange { .. }), "{err}");
        assert!(err.to_string().contains(needle), "{needle:?} not in: {err}");
    };
    refused(
        t.update_schema().add_column(
            Column::new("n", DataType::Long).required(),
            ColumnPosition::Last,
        ),
        "leave out NOT NULL",
    );
    refused(
        t.update_schema()
            .add_column(Column::new("ID", DataType::Long), ColumnPosition::Last),
        "\"id\" already exists",
    );
    refused(
        t.update_schema().add_column(
            Column::new("n", DataType::Long),
            ColumnPosition::After("nope".into()),
        ),
        "the columns are: id, data, geom",
    );
    refused(t.update_schema().drop_column("data"), "partitioned by it");
    refused(
        t.update_schema().drop_column("nope"),
        "no top-level column \"nope\"",
    );
    refused(
        t.update_schema().rename_column("id", "geom"),
        "\"geom\" already exists",
    );
    let err = t
        .update_schema()
        .add_column(
            Column::new("g", DataType::geometry(4269)),
            ColumnPosition::Last,
        )
        .commit()
        .unwrap_err();
    assert!(err.to_string().contains("4269"), "{err}");
    assert_eq!(t.refresh().unwrap().metadata_location(), before);

    // CRS rules follow the format version, as CREATE TABLE's do.
    let v2 = CreateTable::new([Column::new("id", DataType::Long)])
        .format_version(2)
        .create(
            Arc::clone(&catalog),
            &TableIdent::new("test_db", "v2").unwrap(),
        )
        .unwrap();
    let err = v2
        .update_schema()
        .add_column(
            Column::new("g", DataType::geometry(4326)),
            ColumnPosition::Last,
        )
        .commit()
        .unwrap_err();
    assert!(err.to_string().to_lowercase().contains("format"), "{err}");
}

#[test]
fn geoberg_managed_columns_cannot_be_dropped_from_under_their_properties() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = CreateTable::new([
        Column::new("id", DataType::Long),
        Column::new("geom", DataType::geometry(4326)),
    ])
    .with_bbox_columns("geom")
    .create(
        Arc::clone(&catalog),
        &TableIdent::new("test_db", "b").unwrap(),
    )
    .unwrap();
    let err = t.update_schema().drop_column("geom").commit().unwrap_err();
    assert!(err.to_string().contains("drop them first"), "{err}");
    let err = t
        .update_schema()
        .rename_column("bbox_min_x", "xmin")
        .commit()
        .unwrap_err();
    assert!(err.to_string().contains("bbox column"), "{err}");
    // Dropping the bbox columns, then the geometry, works and clears the bbox source.
    let t = t
        .update_schema()
        .drop_column("bbox_min_x")
        .drop_column("bbox_min_y")
        .drop_column("bbox_max_x")
        .drop_column("bbox_max_y")
        .drop_column("geom")
        .commit()
        .unwrap();
    assert_eq!(column_names(&t), ["id"]);
    let props = t.metadata().properties();
    assert!(
        !props.contains_key("geoberg.bbox-columns.source"),
        "{props:?}"
    );
    assert!(
        !props
            .keys()
            .any(|k| k.starts_with("write.metadata.metrics.column.bbox")),
        "{props:?}"
    );
    // Appends still work on what is left.
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new("id", ArrowType::Int64, true)])),
        vec![Arc::new(Int64Array::from(vec![1, 2]))],
    )
    .unwrap();
    t.append(&[batch]).unwrap();

    // A recorded spatial index.
    let t = points_table(Arc::clone(&catalog), "s");
    let t = t.append(&[points_batch(0..50, uniform(1))]).unwrap().0;
    let t = t.rewrite().hilbert("geom", 8).execute().unwrap().0;
    assert!(
        t.metadata()
            .properties()
            .contains_key("geoberg.spatial-index.geom")
    );
    let err = t.update_schema().drop_column("geom").commit().unwrap_err();
    assert!(
        err.to_string()
            .contains("UNSET TBLPROPERTIES ('geoberg.spatial-index.geom')"),
        "{err}"
    );
    // Renaming it moves the recorded index along.
    let t = t
        .update_schema()
        .rename_column("geom", "shape")
        .commit()
        .unwrap();
    assert!(
        t.metadata()
            .properties()
            .contains_key("geoberg.spatial-index.shape")
    );
    assert_eq!(t.geo_columns()[0].name, "shape");
}

#[test]
fn a_lost_race_with_an_append_is_reapplied() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let stale = points_table(Arc::clone(&catalog), "t");
    // Another writer appends after `stale` was loaded.
    let fresh = stale.append(&[points_batch(0..3, uniform(1))]).unwrap().0;
    let t = stale
        .update_schema()
        .add_column(Column::new("score", DataType::Double), ColumnPosition::Last)
        .commit()
        .unwrap();
    assert_eq!(
        t.metadata().current_snapshot_id(),
        fresh.metadata().current_snapshot_id(),
        "the append stays"
    );
    assert_eq!(column_names(&t), ["id", "data", "geom", "score"]);
    assert_eq!(
        column_by_id(&t, "score", doubles),
        vec![(0, None), (1, None), (2, None)]
    );
    // A concurrent schema change is a conflict: the changes were decided on the old schema.
    let other = t.update_schema().drop_column("score").commit().unwrap();
    assert_eq!(column_names(&other), ["id", "data", "geom"]);
    let err = t
        .update_schema()
        .rename_column("score", "s")
        .commit()
        .unwrap_err();
    assert!(matches!(err, Error::CommitConflict { .. }), "{err}");
}

#[test]
fn a_rewrite_over_files_from_before_and_after_changes_writes_the_current_columns() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = points_table(Arc::clone(&catalog), "t");
    let t = t.append(&[points_batch(0..10, uniform(1))]).unwrap().0;
    let t = t
        .update_schema()
        .add_column(
            Column::new("score", DataType::Double),
            ColumnPosition::After("id".into()),
        )
        .commit()
        .unwrap();
    let t = t.append(&[with_score(10..15)]).unwrap().0;
    let t = t
        .update_schema()
        .rename_column("data", "label")
        .commit()
        .unwrap();
    let before = (
        column_by_id(&t, "score", doubles),
        column_by_id(&t, "label", strings),
    );
    // Before a target schema, the rewrite refused mixed files ("different schemas").
    let mut t = t;
    for order in ["hilbert(geom, 12)", "label DESC, id", "zorder(score, id)"] {
        let report;
        (t, report) = t
            .rewrite()
            .sort_order(order.parse().unwrap())
            .option("rewrite-all", "true")
            .execute()
            .unwrap();
        assert!(report.rewritten_data_files_count >= 1, "{order}: {report}");
        assert_eq!(
            (
                column_by_id(&t, "score", doubles),
                column_by_id(&t, "label", strings)
            ),
            before,
            "{order}: every value kept under the current names"
        );
        for f in t.data_files().unwrap() {
            let names: Vec<String> = file_field_ids(f.file_path())
                .into_iter()
                .map(|(n, _)| n)
                .filter(|n| !n.starts_with('_'))
                .collect();
            assert_eq!(names, ["id", "score", "label", "geom"], "{order}");
        }
    }
}

#[test]
fn a_rewrite_after_the_geometry_column_was_renamed_reads_the_old_files_by_field_id() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = points_table(Arc::clone(&catalog), "t");
    let t = t.append(&[points_batch(0..20, uniform(4))]).unwrap().0;
    let t = t
        .update_schema()
        .rename_column("geom", "location")
        .commit()
        .unwrap();
    let (t, report) = t
        .rewrite()
        .hilbert("location", 10)
        .option("rewrite-all", "true")
        .execute()
        .unwrap();
    assert_eq!(report.rewritten_records_count, 20, "{report}");
    let (batches, _) = t
        .scan()
        .with_window("location", BBox::new(-180.0, -90.0, 180.0, 90.0))
        .execute()
        .unwrap();
    assert_eq!(ids_of(&batches), (0..20).collect::<Vec<_>>());
}
