//! `SELECT` and `EXPLAIN SELECT` through the table scan: the spatial filter prunes files on their
//! bounds, then every row read is checked exactly against every spatial filter.

use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::{Array, BooleanArray, RecordBatch};
use arrow_schema::DataType as ArrowType;
use geo::{Contains, Distance, Euclidean, Intersects, Within};
use geo_traits::to_geo::ToGeoGeometry;
use geo_types::Geometry;
use geoberg_geostats::BBox;
use geoberg_sql::{Projection, SelectRequest, SpatialFilter, SpatialRelation};
use geoberg_table::{ScanExplain, Table};

use crate::error::{CliError, Result};

/// The result of one query.
#[derive(Debug)]
pub struct QueryRun {
    /// Files and bytes read and skipped, as the scan reports them.
    pub explain: ScanExplain,
    /// Rows that pass every filter exactly.
    pub matched_rows: u64,
    /// The matching rows, for `SELECT *` / columns (empty for `count(*)` and `EXPLAIN`).
    pub batches: Vec<RecordBatch>,
    /// The box files were pruned with.
    pub window: Option<BBox>,
    /// Wall time of planning and reading.
    pub elapsed: Duration,
}

/// Runs `request` against `table`; with `plan_only` (EXPLAIN) nothing but manifests is read.
pub fn run(table: &Table, request: &SelectRequest, plan_only: bool) -> Result<QueryRun> {
    let start = Instant::now();
    let filters: Vec<&SpatialFilter> = match &request.filter {
        None => Vec::new(),
        Some(p) => {
            if let Some(rest) = p.non_spatial() {
                return Err(CliError::Unsupported {
                    what: format!("the condition `{rest}`"),
                    fix: "geoberg filters rows by spatial predicates (ST_Intersects, \
                          ST_Contains, ST_Within, ST_DWithin) joined by AND; drop the other \
                          conditions"
                        .into(),
                });
            }
            p.spatial_filters()
        }
    };
    for f in &filters {
        check_window_crs(table, f)?;
    }
    let window = filters.first().map(|f| {
        let b = f.pruning_bbox();
        BBox::new(b.min_x, b.min_y, b.max_x, b.max_y)
    });
    let mut scan = table.scan();
    if let (Some(f), Some(w)) = (filters.first(), window) {
        scan = scan.with_window(&f.column, w);
    }
    let projected: Vec<String> = match &request.projection {
        Projection::CountStar => Vec::new(),
        Projection::All => Vec::new(),
        Projection::Columns(c) => c.clone(),
    };
    if !projected.is_empty() || request.projection == Projection::CountStar {
        let mut cols: Vec<String> = Vec::new();
        for c in projected.iter().chain(filters.iter().map(|f| &f.column)) {
            if !cols.contains(c) {
                cols.push(c.clone());
            }
        }
        if cols.is_empty() {
            // count(*) without a filter: any one column gives the row count.
            if let Some(first) = table
                .metadata()
                .current_schema()
                .as_struct()
                .fields()
                .first()
            {
                cols.push(first.name.clone());
            }
        }
        scan = scan.select(cols);
    }
    if plan_only {
        let plan = scan.plan()?;
        return Ok(QueryRun {
            explain: plan.explain,
            matched_rows: 0,
            batches: Vec::new(),
            window,
            elapsed: start.elapsed(),
        });
    }
    let (batches, explain) = scan.execute()?;
    let mut matched_rows = 0u64;
    let mut kept = Vec::new();
    let mut budget = request.limit.unwrap_or(u64::MAX);
    for batch in batches {
        let batch = refine(&batch, &filters)?;
        let batch = if (batch.num_rows() as u64) > budget {
            batch.slice(0, budget as usize)
        } else {
            batch
        };
        budget -= batch.num_rows() as u64;
        matched_rows += batch.num_rows() as u64;
        if request.projection != Projection::CountStar && batch.num_rows() > 0 {
            let batch = match &request.projection {
                Projection::Columns(c) => {
                    let idx = c
                        .iter()
                        .map(|n| batch.schema().index_of(n))
                        .collect::<std::result::Result<Vec<_>, _>>()?;
                    batch.project(&idx)?
                }
                _ => batch,
            };
            kept.push(batch);
        }
        if budget == 0 {
            break;
        }
    }
    Ok(QueryRun {
        explain,
        matched_rows,
        batches: kept,
        window,
        elapsed: start.elapsed(),
    })
}

/// A window in another CRS than the column would compare numbers of different meaning.
fn check_window_crs(table: &Table, f: &SpatialFilter) -> Result<()> {
    let column = table.geo_column(&f.column)?;
    let column_srid = column.column_type.crs().and_then(|c| c.srid());
    if let (Some(window), Some(col)) = (f.window.srid(), column_srid)
        && window != col
    {
        return Err(geoberg_pruning::PruneError::CrsMismatch {
            window_crs: format!("EPSG:{window}"),
            column_crs: format!("EPSG:{col}"),
        }
        .into());
    }
    Ok(())
}

/// Keeps the rows whose geometry passes every filter exactly (the scan kept bbox hits).
fn refine(batch: &RecordBatch, filters: &[&SpatialFilter]) -> Result<RecordBatch> {
    if filters.is_empty() {
        return Ok(batch.clone());
    }
    let mut keep = vec![true; batch.num_rows()];
    for f in filters {
        let column = batch.column(batch.schema().index_of(&f.column)?).clone();
        for (row, k) in keep.iter_mut().enumerate() {
            if *k {
                *k = matches(column.as_ref(), row, f)?;
            }
        }
    }
    arrow_select_filter(batch, keep)
}

fn arrow_select_filter(batch: &RecordBatch, keep: Vec<bool>) -> Result<RecordBatch> {
    if keep.iter().all(|k| *k) {
        return Ok(batch.clone());
    }
    Ok(arrow_select::filter::filter_record_batch(
        batch,
        &BooleanArray::from(keep),
    )?)
}

/// Whether the row's geometry relates to the window as the filter asks (planar).
fn matches(column: &dyn Array, row: usize, f: &SpatialFilter) -> Result<bool> {
    let Some(geometry) = geometry_at(column, row)? else {
        return Ok(false);
    };
    let window = f.window.geometry();
    Ok(match f.relation {
        SpatialRelation::Intersects => geometry.intersects(window),
        SpatialRelation::Contains => geometry.contains(window),
        SpatialRelation::Within => geometry.is_within(window),
        SpatialRelation::DWithin(d) => Euclidean.distance(&geometry, window) <= d,
    })
}

/// The geometry of one row; `None` for null and empty values, which match no filter.
pub fn geometry_at(column: &dyn Array, row: usize) -> Result<Option<Geometry<f64>>> {
    if column.is_null(row) {
        return Ok(None);
    }
    let bytes = match column.data_type() {
        ArrowType::Binary => column.as_binary::<i32>().value(row),
        ArrowType::LargeBinary => column.as_binary::<i64>().value(row),
        ArrowType::BinaryView => column.as_binary_view().value(row),
        other => {
            return Err(CliError::invalid(
                "geometry column type",
                other,
                "a geometry column holds WKB in a binary column",
            ));
        }
    };
    let wkb = wkb::reader::read_wkb(bytes).map_err(|e| {
        CliError::invalid(
            "geometry",
            format!("row {row}"),
            format!("not valid WKB ({e})"),
        )
    })?;
    Ok(wkb.try_to_geometry())
}
