//! Iceberg's metadata tables in SQL (`ns.t.files`, `ns.t.snapshots`, ...), checked against
//! what is outside the code under test: the data files in the table's directory and their
//! sizes, the metadata JSON parsed here, and the table's own rows.

use std::collections::BTreeSet;
use std::path::Path;

use arrow_array::{Array, RecordBatch, StringArray};
use arrow_schema::DataType as ArrowType;
use geoberg_table::{Table, TableIdent};

use crate::common::{Warehouse, scalar_i64};

/// Each row of a result as text, column by column (NULL for nulls).
fn text_rows(batches: &[RecordBatch]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for b in batches {
        let columns: Vec<StringArray> = b
            .columns()
            .iter()
            .map(|c| {
                let c = arrow::compute::cast(c, &ArrowType::Utf8).unwrap();
                c.as_any().downcast_ref::<StringArray>().unwrap().clone()
            })
            .collect();
        for i in 0..b.num_rows() {
            out.push(
                columns
                    .iter()
                    .map(|c| {
                        if c.is_null(i) {
                            "NULL".into()
                        } else {
                            c.value(i).to_string()
                        }
                    })
                    .collect(),
            );
        }
    }
    out
}

/// The Parquet files under `dir` with their sizes.
fn parquet_files(dir: &Path, out: &mut Vec<(String, u64)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            parquet_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "parquet") {
            let size = std::fs::metadata(&path).unwrap().len();
            out.push((path.to_string_lossy().into_owned(), size));
        }
    }
}

fn local_path(location: &str) -> &str {
    location.strip_prefix("file://").unwrap_or(location)
}

#[test]
fn metadata_tables_describe_the_files_and_snapshots_on_disk() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql(
        "CREATE TABLE db.trips (id bigint, region string, geom geometry(4326)) \
         USING iceberg PARTITIONED BY (region)",
    )
    .unwrap();
    for (first, regions) in [
        (0, ["north", "south"]),
        (100, ["north", "east"]),
        (200, ["west", "west"]),
    ] {
        let values: Vec<String> = (0..20)
            .map(|i| {
                let id = first + i;
                let region = regions[i as usize % 2];
                format!(
                    "({id}, '{region}', ST_SetSRID(ST_Point({}, {}), 4326))",
                    -120.0 + id as f64 * 0.5,
                    10.0 + (id % 7) as f64
                )
            })
            .collect();
        s.sql(&format!(
            "INSERT INTO db.trips VALUES {}",
            values.join(", ")
        ))
        .unwrap();
    }
    let table = Table::load(w.catalog.clone(), &TableIdent::new("db", "trips").unwrap()).unwrap();

    // files: exactly the Parquet files in the data directory, with their sizes on disk.
    let mut on_disk = Vec::new();
    parquet_files(
        Path::new(local_path(table.metadata().location())),
        &mut on_disk,
    );
    let on_disk: BTreeSet<(String, u64)> = on_disk.into_iter().collect();
    let listed: BTreeSet<(String, u64)> = text_rows(
        &s.sql("SELECT file_path, file_size_in_bytes FROM db.trips.files")
            .unwrap(),
    )
    .into_iter()
    .map(|r| (local_path(&r[0]).to_string(), r[1].parse().unwrap()))
    .collect();
    assert_eq!(listed, on_disk);
    assert_eq!(on_disk.len(), 5, "one file per region of each insert");
    assert_eq!(
        scalar_i64(
            &s.sql("SELECT sum(record_count) FROM db.trips.files")
                .unwrap()
        ),
        scalar_i64(&s.sql("SELECT count(*) FROM db.trips").unwrap())
    );
    assert_eq!(
        text_rows(
            &s.sql("SELECT DISTINCT content, file_format FROM db.trips.data_files")
                .unwrap()
        ),
        vec![vec!["0".to_string(), "PARQUET".to_string()]]
    );

    // readable_metrics: each file's bounds are its rows' extremes (ids, and the geometry's
    // corners as points), so the extremes over all files are the table's.
    assert_eq!(
        text_rows(
            &s.sql(
                "SELECT min(readable_metrics.id.lower_bound), max(readable_metrics.id.upper_bound), \
                 min(ST_X(readable_metrics.geom.lower_bound)), \
                 max(ST_Y(readable_metrics.geom.upper_bound)), \
                 sum(readable_metrics.id.value_count) FROM db.trips.files"
            )
            .unwrap()
        ),
        text_rows(
            &s.sql(
                "SELECT min(id), max(id), min(ST_X(geom)), max(ST_Y(geom)), count(id) \
                 FROM db.trips"
            )
            .unwrap()
        )
    );
    // Per file, the bounds hold the file's own rows: a file's id range is one insert's.
    for row in text_rows(
        &s.sql(
            "SELECT partition.region, readable_metrics.id.lower_bound, \
             readable_metrics.id.upper_bound, record_count FROM db.trips.files",
        )
        .unwrap(),
    ) {
        let (lo, hi): (i64, i64) = (row[1].parse().unwrap(), row[2].parse().unwrap());
        let n = scalar_i64(
            &s.sql(&format!(
                "SELECT count(*) FROM db.trips WHERE region = '{}' AND id BETWEEN {lo} AND {hi}",
                row[0]
            ))
            .unwrap(),
        );
        assert_eq!(n.to_string(), row[3], "{row:?}");
    }

    // partitions: the table's rows grouped by region.
    assert_eq!(
        text_rows(
            &s.sql("SELECT partition.region, record_count FROM db.trips.partitions ORDER BY 1")
                .unwrap()
        ),
        text_rows(
            &s.sql("SELECT region, count(*) FROM db.trips GROUP BY region ORDER BY 1")
                .unwrap()
        )
    );
    assert_eq!(
        scalar_i64(
            &s.sql("SELECT sum(file_count) FROM db.trips.partitions")
                .unwrap()
        ),
        5
    );

    // snapshots and history: what the metadata JSON holds.
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(local_path(table.metadata_location())).unwrap())
            .unwrap();
    let mut snapshot_ids: Vec<String> = json["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["snapshot-id"].to_string())
        .collect();
    snapshot_ids.sort();
    let mut listed: Vec<String> = text_rows(
        &s.sql("SELECT snapshot_id FROM db.trips.snapshots WHERE operation = 'append'")
            .unwrap(),
    )
    .into_iter()
    .map(|r| r[0].clone())
    .collect();
    listed.sort();
    assert_eq!(listed, snapshot_ids);
    assert_eq!(snapshot_ids.len(), 3);
    let log: Vec<String> = json["snapshot-log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["snapshot-id"].to_string())
        .collect();
    assert_eq!(
        text_rows(
            &s.sql("SELECT snapshot_id, is_current_ancestor FROM db.trips.history")
                .unwrap()
        ),
        log.iter()
            .map(|id| vec![id.clone(), "true".to_string()])
            .collect::<Vec<_>>()
    );
    // Each snapshot's parent is the one before it; the summary counts what it added.
    assert_eq!(
        text_rows(
            &s.sql(
                "SELECT count(*) FROM db.trips.snapshots s JOIN db.trips.snapshots p \
                 ON s.parent_id = p.snapshot_id AND p.committed_at <= s.committed_at"
            )
            .unwrap()
        ),
        vec![vec!["2".to_string()]]
    );
    assert_eq!(
        scalar_i64(
            &s.sql("SELECT sum(CAST(summary['added-records'] AS BIGINT)) FROM db.trips.snapshots")
                .unwrap()
        ),
        60
    );
    assert_eq!(
        text_rows(
            &s.sql("SELECT name, type, snapshot_id FROM db.trips.refs")
                .unwrap()
        ),
        vec![vec![
            "main".to_string(),
            "BRANCH".to_string(),
            json["current-snapshot-id"].to_string()
        ]]
    );

    // manifests: they hold every live data file.
    assert_eq!(
        scalar_i64(
            &s.sql(
                "SELECT sum(added_data_files_count + existing_data_files_count) \
                 FROM db.trips.manifests WHERE content = 0"
            )
            .unwrap()
        ),
        5
    );
    let regions = text_rows(
        &s.sql(
            "SELECT partition_summaries[1]['lower_bound'], partition_summaries[1]['upper_bound'] \
             FROM db.trips.manifests ORDER BY 1, 2",
        )
        .unwrap(),
    );
    // One manifest per insert, each summarising the regions that insert wrote.
    let expected: Vec<Vec<String>> = [["east", "north"], ["north", "south"], ["west", "west"]]
        .iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect();
    assert_eq!(regions, expected);

    // A merge-on-read DELETE adds a position delete file, listed in delete_files and counted
    // in partitions.
    s.sql("ALTER TABLE db.trips SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read')")
        .unwrap();
    s.sql("DELETE FROM db.trips WHERE id = 3").unwrap();
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM db.trips.data_files").unwrap()),
        5
    );
    let deletes = text_rows(
        &s.sql("SELECT content, record_count FROM db.trips.delete_files")
            .unwrap(),
    );
    assert!(!deletes.is_empty(), "a delete file");
    assert!(deletes.iter().all(|r| r[0] != "0"), "{deletes:?}");
    assert_eq!(
        scalar_i64(
            &s.sql(
                "SELECT sum(position_delete_record_count) + sum(equality_delete_record_count) \
                 FROM db.trips.partitions"
            )
            .unwrap()
        ),
        1
    );
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM db.trips.files").unwrap()),
        5 + deletes.len() as i64
    );
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM db.trips.snapshots").unwrap()),
        4
    );
}

#[test]
fn an_unpartitioned_table_has_one_partition_row_and_unknown_names_list_the_tables() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE db.points (id int, geom geometry(4326))")
        .unwrap();
    // A table without snapshots has no files, snapshots or partitions.
    for t in ["files", "snapshots", "history", "manifests", "partitions"] {
        assert_eq!(
            scalar_i64(
                &s.sql(&format!("SELECT count(*) FROM db.points.{t}"))
                    .unwrap()
            ),
            0,
            "{t}"
        );
    }
    s.sql("INSERT INTO db.points VALUES (1, ST_SetSRID(ST_Point(1, 2), 4326))")
        .unwrap();
    let rows = text_rows(
        &s.sql("SELECT record_count, file_count FROM db.points.partitions")
            .unwrap(),
    );
    assert_eq!(rows, vec![vec!["1".to_string(), "1".to_string()]]);
    let err = s
        .sql("SELECT partition FROM db.points.files")
        .unwrap_err()
        .to_string();
    assert!(err.contains("partition"), "{err}");

    let err = s
        .sql("SELECT * FROM db.points.nope")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no metadata table \"nope\"") && err.contains("snapshots, history"),
        "{err}"
    );
    // The table itself still resolves as before.
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM db.points").unwrap()),
        1
    );
}

#[test]
fn describe_extended_shows_what_the_manifests_know_of_each_column() {
    let w = Warehouse::new();
    let s = w.session();
    s.sql("CREATE TABLE db.assets (id bigint, name string, geom geometry(4326))")
        .unwrap();
    let insert = |first: i64| {
        let values: Vec<String> = (first..first + 10)
            .map(|i| {
                format!(
                    "({i}, 'n{i}', ST_SetSRID(ST_Point({}, {}), 4326))",
                    i as f64 * 1.5 - 20.0,
                    (i % 5) as f64 - 2.5
                )
            })
            .collect();
        s.sql(&format!(
            "INSERT INTO db.assets VALUES {}",
            values.join(", ")
        ))
        .unwrap();
    };
    insert(0);
    insert(10);
    let described = |s: &geoberg_datafusion::BlockingSession| {
        text_rows(&s.sql("DESCRIBE TABLE EXTENDED db.assets").unwrap())
    };
    let rows = described(&s);
    let row = |name: &str| rows.iter().find(|r| r[0] == name).unwrap().clone();
    // col_name, data_type, required, min, max, null_count, files_with_bounds, files
    let expected_id = text_rows(&s.sql("SELECT min(id), max(id) FROM db.assets").unwrap());
    assert_eq!(row("id")[3..5], expected_id[0][..]);
    assert_eq!(row("id")[5..], ["0", "2", "2"]);
    assert_eq!(row("name")[3..5], ["n0", "n9"]);
    // The corners of the rows' box, from the formula the rows were made with.
    let xs = (0..20).map(|i| i as f64 * 1.5 - 20.0);
    let ys = (0..20).map(|i| (i % 5) as f64 - 2.5);
    let corner = |x: f64, y: f64| format!("POINT ({x} {y})");
    let lower = corner(
        xs.clone().fold(f64::MAX, f64::min),
        ys.clone().fold(f64::MAX, f64::min),
    );
    let upper = corner(xs.fold(f64::MIN, f64::max), ys.fold(f64::MIN, f64::max));
    assert_eq!(row("geom")[1], "geometry(4326)");
    assert_eq!(row("geom")[3..5], [lower, upper]);

    // A column whose metrics mode stores no bounds shows it: the files written since have none.
    let out = s
        .execute(
            "ALTER TABLE db.assets SET TBLPROPERTIES \
             ('write.metadata.metrics.column.geom' = 'counts')",
        )
        .unwrap();
    assert!(
        out[0]
            .notices
            .iter()
            .any(|n| n.contains("geo column \"geom\" has metrics mode counts")),
        "{:?}",
        out[0].notices
    );
    insert(20);
    let rows = described(&s);
    let geom = rows.iter().find(|r| r[0] == "geom").unwrap();
    assert_eq!(geom[6..], ["2", "3"], "{geom:?}");
    // DESCRIBE without EXTENDED keeps its three columns.
    let plain = text_rows(&s.sql("DESCRIBE db.assets").unwrap());
    assert_eq!(plain[0].len(), 3);
}
