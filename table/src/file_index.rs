//! The spatial file index of one snapshot: manifest entries decoded in parallel, each file's box
//! chosen from its bounds, and `pruning`'s R-tree over them; built once per table version and
//! column, then shared by every scan of that version.

use std::sync::Arc;

use geoberg_crs::ColumnType;
use geoberg_geostats::{BBox, GeoKind, decode_geospatial_bounds};
use geoberg_pruning::{BoxFilter, FileBounds, FileIndex, PrunePlan};
use iceberg::spec::{DataFile, Datum, ManifestContentType, ManifestFile, PrimitiveLiteral};

use crate::box_rule::{BoxRule, FileBox};
use crate::error::Result;
use crate::manifest::{Entry, read_entries, read_entries_map};
use crate::table::{GeoColumn, Table};

/// The live data files of one table version with an R-tree over one geometry column's bounds.
///
/// Get it with [`Table::file_index`], which builds it once per table version and column; plan
/// any number of filters against it.
#[derive(Debug)]
pub struct TableFileIndex {
    column: GeoColumn,
    index: FileIndex<FileBounds>,
    reasons: Vec<String>,
}

impl TableFileIndex {
    /// The indexed geometry column.
    pub fn column(&self) -> &GeoColumn {
        &self.column
    }

    /// The index; its entries are the live data files, in manifest order.
    pub fn files(&self) -> &FileIndex<FileBounds> {
        &self.index
    }

    /// How file boxes were chosen (which bounds, files whose bounds did not decode).
    pub fn reasons(&self) -> &[String] {
        &self.reasons
    }

    /// The files `filter` must read. Fails on a window that is not finite, is invalid for the
    /// column or is in another CRS.
    pub fn plan(&self, filter: &BoxFilter) -> Result<PrunePlan> {
        TableFileIndex::check_window(filter)?;
        Ok(self.index.plan(filter)?)
    }

    /// Fails on a window with a coordinate that is not finite.
    pub(crate) fn check_window(filter: &BoxFilter) -> Result<()> {
        if let Some(w) = filter.window() {
            let coords = [w.min_x, w.min_y, w.max_x, w.max_y];
            if coords.iter().any(|v| !v.is_finite()) {
                return Err(geoberg_pruning::PruneError::InvalidWindow {
                    window: format!("x [{}, {}] y [{}, {}]", w.min_x, w.max_x, w.min_y, w.max_y),
                    problem: "a coordinate is NaN or infinite; give every bound a finite number \
                              (the extent of the column's CRS for an open side)",
                }
                .into());
            }
        }
        Ok(())
    }
}

impl Table {
    /// The file index of `column` for this table version, built on first use and cached: later
    /// scans of the same version (and clones of this handle) plan without reading manifests.
    pub fn file_index(&self, column: &str) -> Result<Arc<TableFileIndex>> {
        let key = format!("file-index/{column}");
        if let Some(hit) = self.derived().get::<TableFileIndex>(&key) {
            return Ok(hit);
        }
        let built = Arc::new(self.build_file_index(column)?);
        Ok(self.derived().insert(&key, built))
    }

    /// Data manifests of the current snapshot that list live files (delete manifests are read
    /// by the delete index). A manifest whose list entry counts no added and no existing files
    /// holds only DELETED entries (what a rewrite or a copy-on-write change leaves of the
    /// manifests it emptied, until the next commit drops them) and is not fetched: after a
    /// `CREATE SPATIAL INDEX` of 64 appends, planning reads 1 manifest instead of 65.
    pub(crate) fn data_manifests(&self) -> Result<Vec<ManifestFile>> {
        let mut manifests = self.manifests()?;
        manifests.retain(|m| {
            m.content == ManifestContentType::Data
                && (m.has_added_files() || m.has_existing_files())
        });
        Ok(manifests)
    }

    /// Live data files of the current snapshot without bounds (a scan with no spatial filter).
    pub(crate) fn live_files(&self) -> Result<Vec<FileBounds>> {
        Ok(read_entries(self.storage(), &self.data_manifests()?, &[])?
            .into_iter()
            .filter(Entry::is_live)
            .map(|e| FileBounds::new(e.path, e.record_count, e.file_size, None))
            .collect())
    }

    fn build_file_index(&self, column: &str) -> Result<TableFileIndex> {
        let rule = BoxRule::of(self, column)?;
        let decoded = read_entries_map(
            self.storage(),
            &self.data_manifests()?,
            rule.field_ids(),
            |e| {
                e.is_live()
                    .then(|| rule.file(e.path, e.record_count, e.file_size, &e.stats))
            },
        )?;
        TableFileIndex::from_boxes(&rule, decoded, Vec::new())
    }
}

impl TableFileIndex {
    /// The index of the files `boxes` chose under `rule`, with `notes` after the rule's own
    /// reasons and those the files give.
    pub(crate) fn from_boxes(
        rule: &BoxRule,
        boxes: Vec<FileBox>,
        notes: Vec<String>,
    ) -> Result<TableFileIndex> {
        let mut tally = BoxTally::default();
        let files: Vec<FileBounds> = boxes.into_iter().map(|b| tally.add(b)).collect();
        let mut reasons = rule.reasons().to_vec();
        reasons.extend(tally.reasons(rule));
        reasons.extend(notes);
        TableFileIndex::from_files(rule, files, reasons)
    }

    /// The index of `files`, whose boxes `rule` chose, explained by `reasons`.
    pub(crate) fn from_files(
        rule: &BoxRule,
        files: Vec<FileBounds>,
        reasons: Vec<String>,
    ) -> Result<TableFileIndex> {
        let (index_type, index_version) = rule.index_rules();
        let index = FileIndex::build(files, index_type, index_version)?;
        Ok(TableFileIndex {
            column: rule.column().clone(),
            index,
            reasons,
        })
    }
}

/// What a set of chosen boxes says about their bounds: how many did not decode (and the first
/// problem), how many had none, of how many files.
#[derive(Debug, Default)]
pub(crate) struct BoxTally {
    pub(crate) undecodable: usize,
    pub(crate) first_problem: Option<String>,
    pub(crate) boundless: usize,
    pub(crate) total: usize,
}

impl BoxTally {
    /// Counts one file; its bounds.
    pub(crate) fn add(&mut self, b: FileBox) -> FileBounds {
        self.total += 1;
        if let Some(p) = b.problem {
            self.undecodable += 1;
            self.first_problem.get_or_insert(p);
        }
        self.boundless += usize::from(b.boundless);
        b.file
    }

    /// The reasons the counts give under `rule`.
    pub(crate) fn reasons(&self, rule: &BoxRule) -> Vec<String> {
        rule.file_reasons(
            self.undecodable,
            self.first_problem.as_deref(),
            self.boundless,
            self.total,
        )
    }
}

/// The geometry column's bounding box in a file's manifest entry: the v3 point bounds of the
/// column, else the double bounds of its bbox columns (under any of the names
/// `bbox_columns` knows).
pub(crate) fn file_geometry_bbox(
    table: &Table,
    file: &DataFile,
    field_id: i32,
    column_type: &ColumnType,
) -> Option<BBox> {
    let kind = match column_type {
        ColumnType::Geography { .. } => GeoKind::Geography,
        _ => GeoKind::Geometry,
    };
    let binary = |d: Option<&Datum>| match d?.literal() {
        PrimitiveLiteral::Binary(b) => Some(b.clone()),
        _ => None,
    };
    if table.bounds_are_points(field_id)
        && let (Some(lo), Some(hi)) = (
            binary(file.lower_bounds().get(&field_id)),
            binary(file.upper_bounds().get(&field_id)),
        )
    {
        return decode_geospatial_bounds(kind, &lo, &hi).ok();
    }
    crate::bbox_columns::file_bbox_from_columns(table, file, field_id)
}

#[cfg(test)]
mod tests {
    //! A v3 table whose geometry column has no bounds at all, as Iceberg Java writes it: made
    //! with geoberg's writer, then committed with the geometry bounds stripped from the entries.

    use std::collections::HashMap;
    use std::sync::Arc;

    use arrow_array::{BinaryArray, Int64Array, RecordBatch};
    use arrow_schema::{DataType as ArrowType, Field, Schema};
    use iceberg::spec::{DataFile, DataFileBuilder};

    use crate::{BBox, Catalog, Column, CreateTable, DataType, SqliteCatalog, Table, TableIdent};

    fn point(x: f64, y: f64) -> Vec<u8> {
        [&[1u8, 1, 0, 0, 0][..], &x.to_le_bytes(), &y.to_le_bytes()].concat()
    }

    /// 4 bands of 10° longitude, 25 points each.
    fn band(b: i64) -> (RecordBatch, Vec<(i64, f64, f64)>) {
        let points: Vec<(i64, f64, f64)> = (0..25)
            .map(|i| (b * 100 + i, (b * 10 + i % 5) as f64, (i / 5) as f64))
            .collect();
        let srid = HashMap::from([("srid".to_string(), "4326".to_string())]);
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", ArrowType::Int64, false),
                Field::new("geom", ArrowType::Binary, true).with_metadata(srid),
            ])),
            vec![
                Arc::new(Int64Array::from_iter_values(points.iter().map(|p| p.0))),
                Arc::new(BinaryArray::from_iter_values(
                    points.iter().map(|p| point(p.1, p.2)),
                )),
            ],
        )
        .unwrap();
        (batch, points)
    }

    /// `f` without lower and upper bounds for field `id`.
    fn without_bounds(f: &DataFile, id: i32) -> DataFile {
        let strip = |m: &HashMap<i32, iceberg::spec::Datum>| {
            m.iter()
                .filter(|(k, _)| **k != id)
                .map(|(k, v)| (*k, v.clone()))
                .collect::<HashMap<_, _>>()
        };
        DataFileBuilder::default()
            .content(f.content_type())
            .file_path(f.file_path().to_string())
            .file_format(f.file_format())
            .partition(f.partition().clone())
            .partition_spec_id(0)
            .record_count(f.record_count())
            .file_size_in_bytes(f.file_size_in_bytes())
            .column_sizes(f.column_sizes().clone())
            .value_counts(f.value_counts().clone())
            .null_value_counts(f.null_value_counts().clone())
            .nan_value_counts(f.nan_value_counts().clone())
            .lower_bounds(strip(f.lower_bounds()))
            .upper_bounds(strip(f.upper_bounds()))
            .split_offsets(f.split_offsets().map(<[i64]>::to_vec))
            .build()
            .unwrap()
    }

    fn ids(table: &Table, window: BBox) -> (Vec<i64>, crate::ScanExplain) {
        let (batches, explain) = table.scan().with_window("geom", window).execute().unwrap();
        let mut ids: Vec<i64> = batches
            .iter()
            .flat_map(|b| {
                b.column_by_name("id")
                    .unwrap()
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .values()
                    .to_vec()
            })
            .collect();
        ids.sort_unstable();
        (ids, explain)
    }

    #[test]
    fn files_without_geometry_bounds_are_read_explained_and_indexed() {
        let dir = tempfile::tempdir().unwrap();
        let catalog: Arc<dyn Catalog> = Arc::new(
            SqliteCatalog::open(dir.path().join("c.db"), "geoberg", dir.path().join("wh")).unwrap(),
        );
        catalog.create_namespace("db").unwrap();
        let mut table = CreateTable::new([
            Column::new("id", DataType::Long).required(),
            Column::new("geom", DataType::geometry(4326)),
        ])
        .create(catalog, &TableIdent::new("db", "java").unwrap())
        .unwrap();
        let geom = table.geo_column("geom").unwrap().field_id;
        let mut all = Vec::new();
        for b in 0..4 {
            let (batch, points) = band(b);
            all.extend(points);
            let written = crate::write::write_data_files(&table, &[batch]).unwrap();
            assert!(written.iter().all(|f| f.lower_bounds().contains_key(&geom)));
            let stripped = written.iter().map(|f| without_bounds(f, geom)).collect();
            table = table.append_data_files(stripped).unwrap();
        }
        assert!(
            table
                .data_files()
                .unwrap()
                .iter()
                .all(|f| !f.lower_bounds().contains_key(&geom)
                    && f.value_counts().contains_key(&geom))
        );
        let window = BBox::new(21.0, 1.0, 23.0, 3.0);
        let want: Vec<i64> = all
            .iter()
            .filter(|p| (21.0..=23.0).contains(&p.1) && (1.0..=3.0).contains(&p.2))
            .map(|p| p.0)
            .collect();
        let (got, explain) = ids(&table, window);
        assert_eq!(got, want);
        assert_eq!(
            (explain.files_total, explain.files_read),
            (4, 4),
            "{explain}"
        );
        let reasons = explain.reasons.join("\n");
        assert!(
            reasons.contains("4 of 4 files carry no bounds for \"geom\"")
                && reasons.contains("Iceberg Java")
                && reasons.contains("CREATE SPATIAL INDEX"),
            "{reasons}"
        );

        // CREATE SPATIAL INDEX writes bounds; then the window skips files.
        let (table, _) = table
            .rewrite()
            .hilbert("geom", 10)
            .option("target-file-count", "4")
            .execute()
            .unwrap();
        assert!(
            table
                .data_files()
                .unwrap()
                .iter()
                .all(|f| f.lower_bounds().contains_key(&geom))
        );
        let (got, explain) = ids(&table, window);
        assert_eq!(got, want);
        assert!(explain.files_skipped > 0, "{explain}");
        assert!(
            !explain.reasons.join("\n").contains("carry no bounds"),
            "{explain}"
        );
    }
}
