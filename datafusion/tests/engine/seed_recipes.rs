//! Seed 001's recipe ("Optimizing Spatial Joins with Iceberg Z-Ordering") run as its statements
//! on a partitioned table with bbox columns: register `write.sort-order` on the bbox columns,
//! compact daily with `strategy => 'sort'` and seed 001's options, expire old snapshots, and
//! assert that the seed's bbox-range query reads fewer files afterwards. The oracle for every
//! count is a brute-force filter over the points the test generated.

use geoberg_table::{CreateTable, PartitionField, TableIdent};

use crate::common::{
    Warehouse, append_files, arrivals, plan_text, points_columns, scalar_i64, scan_metric,
};

#[test]
fn seed_001_sort_order_compaction_prunes_the_bbox_range_query() {
    let w = Warehouse::new();
    w.catalog.create_namespace("prod").unwrap();
    let table = CreateTable::new(points_columns(4326))
        .with_bbox_columns("geom")
        .partition_by(PartitionField::identity("state"))
        .create(
            w.catalog.clone(),
            &TableIdent::new("prod", "spatial_assets").unwrap(),
        )
        .unwrap();
    let files = arrivals(0x2545_f491_4f6c_dd1d, 12, 400);
    let table = append_files(table, &files, 4326);
    let points: Vec<(f64, f64)> = files.iter().flatten().filter_map(|r| r.point).collect();
    let s = w.session();

    // Step 2: register the sort order; appends from now on sort each file by it.
    s.sql(
        "ALTER TABLE prod.spatial_assets SET TBLPROPERTIES ('write.sort-order' = \
         'bbox_min_x ASC, bbox_min_y ASC, bbox_max_x ASC, bbox_max_y ASC')",
    )
    .unwrap();
    let shown = s
        .sql("SHOW TBLPROPERTIES prod.spatial_assets ('write.sort-order')")
        .unwrap();
    let shown = geoberg_datafusion::pretty_format(&shown).unwrap();
    assert!(shown.contains("bbox_min_x ASC, bbox_min_y ASC"), "{shown}");

    // The seed's pruned query: a bbox range on the four columns, and the same window as a
    // spatial predicate.
    let (x0, x1, y0, y1) = (-100.0, -94.0, 30.0, 34.0);
    let by_bbox = format!(
        "SELECT count(*) FROM prod.spatial_assets WHERE bbox_min_x >= {x0} AND bbox_max_x <= {x1} \
         AND bbox_min_y >= {y0} AND bbox_max_y <= {y1}"
    );
    let by_geom = format!(
        "SELECT count(*) FROM prod.spatial_assets \
         WHERE ST_Intersects(geom, ST_MakeEnvelope({x0}, {y0}, {x1}, {y1}))"
    );
    let expected = points
        .iter()
        .filter(|(x, y)| (x0..=x1).contains(x) && (y0..=y1).contains(y))
        .count() as i64;
    assert!(expected > 0, "the window must hold points");
    let files_read = |sql: &str| {
        let plan = plan_text(&s.sql(&format!("EXPLAIN ANALYZE {sql}")).unwrap());
        (
            scan_metric(&plan, "files_read"),
            scan_metric(&plan, "files_total"),
        )
    };
    assert_eq!(scalar_i64(&s.sql(&by_bbox).unwrap()), expected);
    assert_eq!(scalar_i64(&s.sql(&by_geom).unwrap()), expected);
    let (before, total_before) = files_read(&by_bbox);
    assert_eq!(total_before, 24, "12 appends x 2 partitions");
    assert_eq!(before, 24, "arrival order: every file spans the extent");

    // The daily compaction, as the seed writes it (its sort order is the registered one, so
    // `sort_order` may be left out), with files small enough to give each partition several.
    let bytes: u64 = table
        .data_files()
        .unwrap()
        .iter()
        .map(|f| f.file_size_in_bytes())
        .sum();
    s.sql(&format!(
        "CALL geoberg.system.rewrite_data_files(table => 'prod.spatial_assets', strategy => 'sort', \
         options => map('min-input-files', '10', 'target-file-size-bytes', '{}'))",
        bytes / 16
    ))
    .unwrap();
    s.sql(
        "CALL geoberg.system.expire_snapshots(table => 'prod.spatial_assets', \
         older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)",
    )
    .unwrap();

    assert_eq!(scalar_i64(&s.sql(&by_bbox).unwrap()), expected);
    assert_eq!(scalar_i64(&s.sql(&by_geom).unwrap()), expected);
    assert_eq!(
        scalar_i64(&s.sql("SELECT count(*) FROM prod.spatial_assets").unwrap()),
        points.len() as i64,
        "no row lost"
    );
    let (after, total_after) = files_read(&by_bbox);
    let (after_geom, _) = files_read(&by_geom);
    assert!(total_after >= 8, "{total_after} files after the rewrite");
    // Sorted on bbox_min_x, each file is a slab of longitude: a 6°-wide window of the 60°
    // extent meets about a tenth of them (plus one at each edge) in each partition.
    assert!(
        after * 3 <= total_after,
        "pruning did not improve: {after} of {total_after} files read after the sort, {before} of \
         {total_before} before"
    );
    assert_eq!(
        after_geom, after,
        "the spatial predicate prunes as the bbox range does"
    );
}
