//! Seed 002's silent failure: on a table wider than `max-inferred-column-defaults` (100), a
//! bbox or sort-order column past the cap gets no bounds. `Table::metrics_position_warnings`
//! names it; the oracle is the data files themselves: a file appended afterwards has no bounds
//! for exactly the warned columns, and does once the named fix is applied.

mod common;

use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, Float64Array, Int64Array, RecordBatch};
use arrow_schema::{DataType as ArrowType, Field, Schema};
use common::*;
use geoberg_table::{
    Column, ColumnPosition, CreateTable, DataType, PruningRole, Table, TableIdent,
};

const WIDE: usize = 120;

/// `geom` first (inside the metrics window), then `c0` ... `c119`.
fn wide_table(catalog: Arc<dyn geoberg_table::Catalog>, name: &str) -> Table {
    wide_table_with_geometry_at(catalog, name, 0)
}

fn wide_table_with_geometry_at(
    catalog: Arc<dyn geoberg_table::Catalog>,
    name: &str,
    at: usize,
) -> Table {
    let mut columns: Vec<Column> = (0..WIDE)
        .map(|i| Column::new(format!("c{i}"), DataType::Long))
        .collect();
    columns.insert(at, Column::new("geom", DataType::geometry(4326)));
    CreateTable::new(columns)
        .create(catalog, &TableIdent::new("test_db", name).unwrap())
        .unwrap()
}

/// Two rows over the table's current columns: longs, doubles for the bbox columns, points.
fn batch(table: &Table) -> RecordBatch {
    let schema = table.metadata().current_schema();
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for f in schema.as_struct().fields() {
        match f.name.as_str() {
            "geom" => {
                fields.push(
                    Field::new("geom", ArrowType::Binary, true)
                        .with_metadata([("srid".to_string(), "4326".to_string())].into()),
                );
                columns.push(Arc::new(BinaryArray::from_iter_values([
                    wkb_point(1.0, 2.0),
                    wkb_point(3.0, 4.0),
                ])));
            }
            n if n.starts_with("bbox_") => {
                fields.push(Field::new(n, ArrowType::Float64, true));
                columns.push(Arc::new(Float64Array::from(vec![0.0, 1.0])));
            }
            n => {
                fields.push(Field::new(n, ArrowType::Int64, true));
                columns.push(Arc::new(Int64Array::from(vec![1, 2])));
            }
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

/// Appends [`batch`] and returns the table and the columns its new data file has a lower
/// bound for, by name.
fn append_and_bounded(table: &Table) -> (Table, Vec<String>) {
    let before: Vec<String> = table
        .data_files()
        .unwrap()
        .iter()
        .map(|f| f.file_path().to_string())
        .collect();
    let table = table.append(&[batch(table)]).unwrap().0;
    let files = table.data_files().unwrap();
    let newest = files
        .iter()
        .find(|f| !before.contains(&f.file_path().to_string()))
        .unwrap();
    let schema = table.metadata().current_schema();
    let mut out: Vec<String> = newest
        .lower_bounds()
        .keys()
        .filter_map(|id| schema.field_by_id(*id).map(|f| f.name.clone()))
        .collect();
    out.sort();
    (table, out)
}

fn warned(table: &Table) -> Vec<(String, PruningRole, usize)> {
    table
        .metrics_position_warnings()
        .unwrap()
        .into_iter()
        .map(|w| (w.column, w.role, w.position))
        .collect()
}

#[test]
fn bbox_columns_added_past_the_cap_are_named_and_really_lose_their_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = wide_table(Arc::clone(&catalog), "t");
    assert!(warned(&t).is_empty());
    // Seed 002: four bbox columns right before the geometry, at positions 121..=124.
    let mut update = t.update_schema();
    let mut after = format!("c{}", WIDE - 1);
    for name in ["bbox_min_x", "bbox_min_y", "bbox_max_x", "bbox_max_y"] {
        update = update.add_column(
            Column::new(name, DataType::Double),
            ColumnPosition::After(after.clone()),
        );
        after = name.to_string();
    }
    let t = update.commit().unwrap();
    let w = warned(&t);
    assert_eq!(w.len(), 4, "{w:?}");
    assert!(
        w.iter()
            .all(|(_, role, pos)| *role == PruningRole::BBoxColumn && *pos > 100)
    );
    let message = t.metrics_position_warnings().unwrap()[0].to_string();
    assert!(
        message.contains("write.metadata.metrics.max-inferred-column-defaults is 100")
            && message.contains("'write.metadata.metrics.column.bbox_")
            && message.contains("metrics column 12"),
        "{message}"
    );
    // The oracle: an appended file has no bounds for the warned columns.
    let (t, bounded) = append_and_bounded(&t);
    for (column, _, _) in &w {
        assert!(
            !bounded.contains(column),
            "{column} has bounds: {bounded:?}"
        );
    }
    assert!(bounded.contains(&"c0".to_string()), "{bounded:?}");

    // The named fix: an explicit mode per column; the warning goes and the bounds come.
    let t = t
        .set_properties(w.iter().map(|(c, _, _)| {
            (
                format!("write.metadata.metrics.column.{c}"),
                "full".to_string(),
            )
        }))
        .unwrap();
    assert!(warned(&t).is_empty());
    let (_, bounded) = append_and_bounded(&t);
    for (column, _, _) in &w {
        assert!(
            bounded.contains(column),
            "{column} has no bounds: {bounded:?}"
        );
    }
}

#[test]
fn a_column_added_first_counts_first_as_iceberg_counts() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = wide_table(Arc::clone(&catalog), "t");
    let t = t
        .update_schema()
        .add_column(
            Column::new("bbox_max_y", DataType::Double),
            ColumnPosition::First,
        )
        .add_column(
            Column::new("bbox_max_x", DataType::Double),
            ColumnPosition::First,
        )
        .add_column(
            Column::new("bbox_min_y", DataType::Double),
            ColumnPosition::First,
        )
        .add_column(
            Column::new("bbox_min_x", DataType::Double),
            ColumnPosition::First,
        )
        .commit()
        .unwrap();
    // Highest field ids, but first in schema order: within the cap.
    assert!(warned(&t).is_empty(), "{:?}", warned(&t));
    let (_, bounded) = append_and_bounded(&t);
    assert!(bounded.contains(&"bbox_min_x".to_string()), "{bounded:?}");
    // c96.. are pushed past the cap instead.
    assert!(!bounded.contains(&format!("c{}", WIDE - 1)), "{bounded:?}");
}

#[test]
fn sort_order_columns_and_the_default_mode() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    // A column sort order becomes the table's Iceberg sort order, whose columns keep metrics
    // past the cap (Iceberg Java's MetricsConfig raises them to truncate(16)): no warning, and
    // the appended file really has c110's bounds.
    let t = wide_table(Arc::clone(&catalog), "t")
        .set_properties([("write.sort-order", "c5 ASC, c110 DESC NULLS LAST")])
        .unwrap();
    assert!(warned(&t).is_empty(), "{:?}", warned(&t));
    let (_, bounded) = append_and_bounded(&t);
    assert!(bounded.contains(&"c110".to_string()), "{bounded:?}");
    // A z-order has no Iceberg transform, so it is not recorded as one: c110 past the cap
    // (position 112, after geom) loses its bounds, and the statement says so.
    let t = t
        .set_properties([("write.sort-order", "zorder(c5, c110)")])
        .unwrap();
    assert_eq!(
        warned(&t),
        [("c110".to_string(), PruningRole::SortOrder, 112)]
    );
    let t = t
        .set_properties([("write.metadata.metrics.max-inferred-column-defaults", "200")])
        .unwrap();
    assert!(warned(&t).is_empty());
    let t = t
        .unset_properties(
            ["write.metadata.metrics.max-inferred-column-defaults"],
            false,
        )
        .unwrap()
        .set_properties([("write.metadata.metrics.default", "counts")])
        .unwrap();
    // An explicit default lifts the cap (no column is dropped to none by position).
    assert!(warned(&t).is_empty());
}

#[test]
fn a_geometry_column_past_the_cap_is_named_and_really_loses_its_boxes() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = wide_table_with_geometry_at(Arc::clone(&catalog), "late_geom", WIDE);
    assert_eq!(
        warned(&t),
        vec![("geom".to_string(), PruningRole::GeoColumn, WIDE + 1)]
    );
    let (t, bounded) = append_and_bounded(&t);
    assert!(!bounded.contains(&"geom".to_string()), "{bounded:?}");
    // The named fix brings the boxes back.
    let t = t
        .set_properties([("write.metadata.metrics.column.geom", "full")])
        .unwrap();
    assert!(warned(&t).is_empty());
    let (_, bounded) = append_and_bounded(&t);
    assert!(bounded.contains(&"geom".to_string()), "{bounded:?}");
}

#[test]
fn seed_002s_none_on_a_geometry_column_is_named_and_really_drops_its_boxes() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = sqlite_catalog(dir.path());
    let t = points_table(Arc::clone(&catalog), "none_geom");
    assert!(t.metrics_mode_warnings().unwrap().is_empty());
    for (mode, name) in [("none", "None"), ("counts", "Counts")] {
        let t = t
            .set_properties([("write.metadata.metrics.column.geom", mode)])
            .unwrap();
        let w = t.metrics_mode_warnings().unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(
            (w[0].column.as_str(), &w[0].role, format!("{:?}", w[0].mode)),
            ("geom", &PruningRole::GeoColumn, name.to_string())
        );
        let message = w[0].to_string();
        assert!(
            message.contains(&format!("has metrics mode {mode}"))
                && message.contains("('write.metadata.metrics.column.geom' = 'full')"),
            "{message}"
        );
        // The oracle: the next file has no box for geom.
        let (appended, _) = t.append(&[points_batch(0..3, uniform(1))]).unwrap();
        let files = appended.data_files().unwrap();
        let geom_id = appended
            .metadata()
            .current_schema()
            .field_by_name("geom")
            .unwrap()
            .id;
        assert!(
            files
                .iter()
                .all(|f| !f.lower_bounds().contains_key(&geom_id))
        );
    }
    // A default without bounds names the default property; a column's own mode wins over it.
    let t = points_table(Arc::clone(&catalog), "default_counts")
        .set_properties([("write.metadata.metrics.default", "counts")])
        .unwrap();
    let w = t.metrics_mode_warnings().unwrap();
    assert!(
        w.iter()
            .any(|w| w.column == "geom" && w.property == "write.metadata.metrics.default"),
        "{w:?}"
    );
    let t = t
        .set_properties([("write.metadata.metrics.column.geom", "truncate(16)")])
        .unwrap();
    assert!(t.metrics_mode_warnings().unwrap().is_empty());
}
