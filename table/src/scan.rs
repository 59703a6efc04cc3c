//! Scan: spatial window → file pruning on the manifest bounds (`pruning`'s file index) →
//! row-group pruning on Parquet geo statistics → Arrow batches, optionally refined row by row.

use std::fmt;

use arrow_array::{Array, BooleanArray, RecordBatch};
use geoberg_crs::ColumnType;
use geoberg_geostats::{BBox, bbox_columns};
use geoberg_pruning::{FileBounds, PrunePlan, RowGroupBounds, SpatialFilter, prune_row_groups};
use iceberg::spec::{DataFile, Manifest, ManifestStatus};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::bridge;
use crate::error::{Error, Result};
use crate::location::{local_path, read_file};
use crate::table::Table;

/// What a scan read and skipped, and why; the answer to "did my filter prune anything?".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanExplain {
    /// Live data files in the snapshot.
    pub files_total: usize,
    /// Files skipped on their bounds.
    pub files_skipped: usize,
    /// Files opened.
    pub files_read: usize,
    /// Bytes of all live data files.
    pub bytes_total: u64,
    /// Bytes of the files opened.
    pub bytes_read: u64,
    /// Rows in all live data files (their `record_count`).
    pub records_total: u64,
    /// Rows in the files opened.
    pub records_read: u64,
    /// Row groups in the opened files.
    pub row_groups_total: usize,
    /// Row groups skipped on their Parquet geo statistics.
    pub row_groups_skipped: usize,
    /// Rows returned.
    pub rows_returned: usize,
    /// How the decisions were made (the bounds used, or why every file is read).
    pub reasons: Vec<String>,
}

impl fmt::Display for ScanExplain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "files: {} total, {} skipped, {} read ({} of {} bytes)",
            self.files_total,
            self.files_skipped,
            self.files_read,
            self.bytes_read,
            self.bytes_total
        )?;
        writeln!(
            f,
            "records: {} of {} in the files read",
            self.records_read, self.records_total
        )?;
        writeln!(
            f,
            "row groups: {} in files read, {} skipped",
            self.row_groups_total, self.row_groups_skipped
        )?;
        writeln!(f, "rows returned: {}", self.rows_returned)?;
        for r in &self.reasons {
            writeln!(f, "- {r}")?;
        }
        Ok(())
    }
}

/// A scan being configured; see [`Table::scan`].
#[derive(Debug, Clone)]
pub struct Scan<'a> {
    table: &'a Table,
    filter: Option<(String, BBox)>,
    exact: bool,
    columns: Option<Vec<String>>,
}

/// The files a scan opens, with the explain counters so far.
#[derive(Debug, Clone)]
pub struct ScanPlan {
    /// Data files to read, in manifest order, with the box they were kept on.
    pub files: Vec<FileBounds>,
    /// Counters and reasons.
    pub explain: ScanExplain,
    /// The file-pruning plan, when the scan has a spatial filter.
    pub pruning: Option<PrunePlan>,
}

impl Table {
    /// Starts a scan of the current snapshot (all rows, all columns).
    pub fn scan(&self) -> Scan<'_> {
        Scan {
            table: self,
            filter: None,
            exact: false,
            columns: None,
        }
    }

    /// Live data files of the current snapshot, fully decoded by `iceberg` (every metric of
    /// every column); planning uses [`Table::file_index`], which reads only what it needs.
    pub fn data_files(&self) -> Result<Vec<DataFile>> {
        let mut out = Vec::new();
        for m in self.data_manifests()? {
            let bytes = read_file(&m.manifest_path)?;
            let bytes = bridge::manifest_to_binary(&bytes, &m.manifest_path)?;
            let manifest = Manifest::parse_avro(&bytes)
                .map_err(|e| Error::corrupt(&m.manifest_path, e.to_string()))?;
            let (entries, _) = manifest.into_parts();
            out.extend(
                entries
                    .iter()
                    .filter(|e| e.status() != ManifestStatus::Deleted)
                    .map(|e| e.data_file().clone()),
            );
        }
        Ok(out)
    }
}

impl<'a> Scan<'a> {
    /// Keeps rows whose `column` (geometry) bounding box intersects `window`.
    pub fn with_window(mut self, column: impl Into<String>, window: BBox) -> Self {
        self.filter = Some((column.into(), window));
        self
    }

    /// Refines rows exactly: a row is kept only if its geometry intersects the window, not
    /// just its bounding box.
    pub fn exact(mut self, exact: bool) -> Self {
        self.exact = exact;
        self
    }

    /// Reads only these columns.
    pub fn select(mut self, columns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.columns = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    /// Decides which files to read from the manifests alone (through the cached
    /// [`Table::file_index`] when there is a spatial filter).
    pub fn plan(&self) -> Result<ScanPlan> {
        let Some((column, window)) = &self.filter else {
            let files = self.table.live_files()?;
            let mut explain = ScanExplain {
                files_total: files.len(),
                files_read: files.len(),
                ..ScanExplain::default()
            };
            for f in &files {
                explain.bytes_total += f.size_in_bytes;
                explain.records_total += f.record_count;
            }
            explain.bytes_read = explain.bytes_total;
            explain.records_read = explain.records_total;
            explain
                .reasons
                .push("no spatial filter: every file is read".into());
            return Ok(ScanPlan {
                files,
                explain,
                pruning: None,
            });
        };
        let index = self.table.file_index(column)?;
        let pruning = index.plan(&SpatialFilter::intersects(*window))?;
        let (total, read, skipped) = (pruning.total(), pruning.read(), pruning.skipped());
        let mut explain = ScanExplain {
            files_total: total.files as usize,
            files_skipped: skipped.files as usize,
            files_read: read.files as usize,
            bytes_total: total.bytes,
            bytes_read: read.bytes,
            records_total: total.records,
            records_read: read.records,
            reasons: index.reasons().to_vec(),
            ..ScanExplain::default()
        };
        explain.reasons.extend(decision_counts(&pruning));
        let entries = index.files().entries();
        let files = pruning.read_indices().map(|i| entries[i].clone()).collect();
        Ok(ScanPlan {
            files,
            explain,
            pruning: Some(pruning),
        })
    }

    /// Plans, then reads the surviving files and row groups.
    pub fn execute(&self) -> Result<(Vec<RecordBatch>, ScanExplain)> {
        let ScanPlan {
            files, mut explain, ..
        } = self.plan()?;
        let column_type = match &self.filter {
            Some((column, _)) => Some(self.table.geo_column(column)?.column_type),
            None => None,
        };
        if matches!(column_type, Some(ColumnType::Geography { .. })) {
            explain.reasons.push(
                "row groups of a geography column are not pruned: Parquet geo statistics do not \
                 cover geodesic edges"
                    .into(),
            );
        }
        let mut out = Vec::new();
        for file in &files {
            self.read_file(file, column_type.as_ref(), &mut out, &mut explain)?;
        }
        explain.rows_returned = out.iter().map(RecordBatch::num_rows).sum();
        Ok((out, explain))
    }

    /// Runs the scan and reports what it read and skipped (the batches are discarded).
    pub fn explain(&self) -> Result<ScanExplain> {
        Ok(self.execute()?.1)
    }

    fn read_file(
        &self,
        file: &FileBounds,
        column_type: Option<&ColumnType>,
        out: &mut Vec<RecordBatch>,
        explain: &mut ScanExplain,
    ) -> Result<()> {
        let path = local_path(&file.path)?;
        let handle = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(handle)?;
        let arrow_schema = builder.schema().clone();
        let metadata = builder.metadata().clone();
        let parquet_schema = metadata.file_metadata().schema_descr();
        let row_groups = metadata.row_groups();
        explain.row_groups_total += row_groups.len();

        let filter_col = match &self.filter {
            Some((column, window)) => {
                let idx = arrow_schema.index_of(column).map_err(|_| {
                    Error::corrupt(&file.path, format!("no column {column:?} in data file"))
                })?;
                Some((idx, window))
            }
            None => None,
        };
        let keep_groups: Vec<usize> = match (filter_col, column_type) {
            (Some((idx, window)), Some(ct)) if !matches!(ct, ColumnType::Geography { .. }) => {
                let groups: Vec<RowGroupBounds> = row_groups
                    .iter()
                    .map(|rg| {
                        let bbox = rg
                            .columns()
                            .get(idx)
                            .and_then(|c| c.geo_statistics())
                            .and_then(|g| g.bounding_box())
                            .map(|b| {
                                BBox::new(b.get_xmin(), b.get_ymin(), b.get_xmax(), b.get_ymax())
                            });
                        RowGroupBounds::new(
                            rg.num_rows().max(0) as u64,
                            rg.compressed_size().max(0) as u64,
                            bbox,
                        )
                    })
                    .collect();
                let plan = prune_row_groups(ct, &SpatialFilter::intersects(*window), &groups)?;
                plan.read_indices().collect()
            }
            _ => (0..row_groups.len()).collect(),
        };
        explain.row_groups_skipped += row_groups.len() - keep_groups.len();
        if keep_groups.is_empty() {
            return Ok(());
        }
        let mut selected: Option<Vec<usize>> = match &self.columns {
            None => None,
            Some(cols) => Some(
                cols.iter()
                    .map(|c| {
                        arrow_schema.index_of(c).map_err(|_| {
                            Error::Schema(format!(
                                "no column {c:?} in table {}",
                                self.table.ident()
                            ))
                        })
                    })
                    .collect::<Result<_>>()?,
            ),
        };
        // The filter column is read for refinement; the final projection drops it if unselected.
        if let (Some(sel), Some((idx, _))) = (&mut selected, filter_col)
            && !sel.contains(&idx)
        {
            sel.push(idx);
        }
        let mut builder = builder.with_row_groups(keep_groups);
        if let Some(sel) = &selected {
            let mut roots = sel.clone();
            roots.sort_unstable();
            builder = builder.with_projection(ProjectionMask::roots(parquet_schema, roots));
        }
        let reader = builder.build()?;
        for batch in reader {
            let batch = batch?;
            let batch = match (&self.filter, filter_col) {
                (Some((column, window)), Some(_)) => {
                    let col = batch.column(batch.schema().index_of(column)?).clone();
                    let mask = self.row_mask(col.as_ref(), window)?;
                    arrow_select::filter::filter_record_batch(&batch, &mask)?
                }
                _ => batch,
            };
            if batch.num_rows() == 0 {
                continue;
            }
            let batch = match &self.columns {
                Some(cols) => {
                    let idx: Vec<usize> = cols
                        .iter()
                        .map(|c| batch.schema().index_of(c))
                        .collect::<std::result::Result<_, _>>()?;
                    batch.project(&idx)?
                }
                None => batch,
            };
            out.push(batch);
        }
        Ok(())
    }

    /// Rows whose bbox intersects the window; with `exact`, whose geometry does.
    fn row_mask(&self, geometry: &dyn Array, window: &BBox) -> Result<BooleanArray> {
        let b = bbox_columns(geometry)?;
        let mut keep = Vec::with_capacity(geometry.len());
        for row in 0..geometry.len() {
            let hit = b.min_x.is_valid(row)
                && b.min_x.value(row) <= window.max_x
                && b.max_x.value(row) >= window.min_x
                && b.min_y.value(row) <= window.max_y
                && b.max_y.value(row) >= window.min_y;
            let hit = hit && (!self.exact || crate::refine::intersects(geometry, row, window)?);
            keep.push(hit);
        }
        Ok(BooleanArray::from(keep))
    }
}

/// "files read: 3 overlap the window, 1 has no bounds", and the same for skipped files.
fn decision_counts(plan: &PrunePlan) -> Vec<String> {
    let (reads, skips) = (plan.read_summary(), plan.skip_summary());
    let mut out = Vec::new();
    if !reads.is_empty() {
        out.push(format!("files read: {}", reads.join(", ")));
    }
    if !skips.is_empty() {
        out.push(format!("files skipped: {}", skips.join(", ")));
    }
    out
}
