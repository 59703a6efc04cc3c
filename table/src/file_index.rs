//! The spatial file index of one snapshot: manifest entries decoded in parallel, each file's box
//! chosen from its bounds, and `pruning`'s R-tree over them; built once per table version and
//! column, then shared by every scan of that version.

use std::sync::Arc;

use geoberg_crs::{ColumnType, FormatVersion, can_skip_files};
use geoberg_geostats::{BBox, GeoKind, decode_geospatial_bounds};
use geoberg_pruning::{BoundSources, BoxFilter, FileBounds, FileIndex, PrunePlan};
use iceberg::spec::{DataFile, Datum, ManifestContentType, ManifestFile, PrimitiveLiteral};

use crate::bbox_columns::{BBOX_COLUMNS_PROPERTY_PREFIX, BBoxColumns, covers_every_geometry};
use crate::error::Result;
use crate::manifest::{Entry, read_entries, read_entries_map};
use crate::schema::BBOX_COLUMN_NAMES;
use crate::table::{GeoColumn, Table};

/// Where a file's box comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The column's own point bounds (v3 geo bounds, or the legacy no-CRS ones), falling back to
    /// the bbox columns when a file's point bounds do not decode.
    Column,
    /// Only the `double` bounds of the materialised bbox columns.
    BBoxColumns,
    /// None: the column's bounds cannot be used and there are no bbox columns.
    None,
}

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
        Ok(self.index.plan(filter)?)
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
        let geo = self.geo_column(column)?;
        let version = self.format_version();
        let decision = can_skip_files(version, &geo.column_type);
        let bbox = self.bbox_columns(&geo.name)?;
        let bbox_ids = bbox.as_ref().map(|b| b.ids);
        let bbox_names =
            |b: &BBoxColumns| format!("{} (found by {})", b.names.join(", "), b.found_by);
        let declared = geo.column_type != ColumnType::GeometryWithoutCrs;
        let mut reasons = Vec::new();
        let source = match (decision.can_skip, &bbox) {
            (false, Some(b)) => {
                reasons.push(format!(
                    "{}; using the double bounds of the bbox columns {} instead",
                    decision.reason,
                    bbox_names(b)
                ));
                Source::BBoxColumns
            }
            (false, None) => {
                reasons.push(format!(
                    "no declared CRS on a v3 table: every file is read ({})",
                    decision.reason
                ));
                Source::None
            }
            (true, Some(b)) if !declared => {
                reasons.push(format!(
                    "files skipped on the double bounds of the bbox columns {} ({})",
                    bbox_names(b),
                    decision.reason
                ));
                Source::BBoxColumns
            }
            (true, None) if !self.bounds_are_points(geo.field_id) => {
                reasons.push(format!(
                    "every file is read: {:?} is a plain binary column written by another \
                     engine, whose bounds are WKB byte prefixes, not boxes; add bbox columns \
                     ({}, or bbox_xmin..., minx..., a bbox struct) or name yours with the table \
                     property {BBOX_COLUMNS_PROPERTY_PREFIX}{} to skip files",
                    geo.name,
                    BBOX_COLUMN_NAMES.join(", "),
                    geo.name,
                ));
                Source::None
            }
            (true, _) => {
                reasons.push(format!(
                    "files skipped on the bounds of {:?}: {}",
                    geo.name, decision.reason
                ));
                Source::Column
            }
        };
        let mut wanted = vec![geo.field_id];
        wanted.extend(bbox_ids.iter().flatten());
        let decoded = read_entries_map(self.storage(), &self.data_manifests()?, &wanted, |e| {
            if !e.is_live() {
                return None;
            }
            let own = &e.stats[0];
            let point = match (&own.lower, &own.upper) {
                (Some(lo), Some(hi)) => Some((lo.as_slice(), hi.as_slice())),
                _ => None,
            };
            let count = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
            let bbox_columns = match &e.stats[1..] {
                [a, b, c, d]
                    if covers_every_geometry(
                        count(own.null_count),
                        [a, b, c, d].map(|s| count(s.null_count)),
                    ) =>
                {
                    match (&a.lower, &b.lower, &c.upper, &d.upper) {
                        (Some(a), Some(b), Some(c), Some(d)) => {
                            Some([a, b, c, d].map(|v| widen_float_bound(v)))
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            let bbox_columns = bbox_columns
                .as_ref()
                .map(|[a, b, c, d]| [&a[..], &b[..], &c[..], &d[..]]);
            let sources = match source {
                Source::Column if declared => BoundSources {
                    geospatial: point,
                    bbox_columns,
                    ..BoundSources::default()
                },
                Source::Column => BoundSources {
                    legacy: point,
                    bbox_columns,
                    ..BoundSources::default()
                },
                Source::BBoxColumns => BoundSources {
                    bbox_columns,
                    ..BoundSources::default()
                },
                Source::None => BoundSources::default(),
            };
            let best = sources.best(&geo.column_type);
            let problem = best.rejected.first().map(|(_, p)| p.to_string());
            let all_null = matches!(
                (own.value_count, own.null_count),
                (Some(v), Some(n)) if v == n
            );
            let boundless = point.is_none() && bbox_columns.is_none() && !all_null;
            let file = FileBounds::new(e.path, e.record_count, e.file_size, best.bbox)
                .with_all_null(all_null);
            Some((file, problem, boundless))
        })?;
        let mut undecodable = 0usize;
        let mut boundless = 0usize;
        let mut first_problem = None;
        let total = decoded.len();
        let files: Vec<FileBounds> = decoded
            .into_iter()
            .map(|(file, problem, no_bounds)| {
                if let Some(p) = problem {
                    undecodable += 1;
                    first_problem.get_or_insert(p);
                }
                boundless += usize::from(no_bounds);
                file
            })
            .collect();
        if let Some(problem) = first_problem {
            reasons.push(format!(
                "{undecodable} files carry bounds for {:?} that do not decode (first: {problem}); \
                 they are pruned on a looser source if one decodes, else read",
                geo.name
            ));
        }
        if source != Source::None && boundless > 0 {
            reasons.push(no_bounds_reason(&geo.name, boundless, total, bbox.as_ref()));
        }
        // The format-version rule governs the column's own bounds; bbox-column bounds are
        // ordinary doubles, usable in every version.
        let (index_type, index_version) = match source {
            Source::BBoxColumns => (ColumnType::GeometryWithoutCrs, FormatVersion::V2),
            _ => (geo.column_type.clone(), version),
        };
        let index = FileIndex::build(files, &index_type, index_version)?;
        Ok(TableFileIndex {
            column: geo,
            index,
            reasons,
        })
    }
}

/// A bbox column's bound as 8 little-endian double bytes (a `float` column's 4 bytes widen
/// exactly).
fn widen_float_bound(bound: &[u8]) -> Vec<u8> {
    match <[u8; 4]>::try_from(bound) {
        Ok(f) => f64::from(f32::from_le_bytes(f)).to_le_bytes().to_vec(),
        Err(_) => bound.to_vec(),
    }
}

/// Why `boundless` of `total` files are read whatever the window: no bounds for the column
/// (what Iceberg Java writes for geometry) and no usable bbox columns.
fn no_bounds_reason(
    column: &str,
    boundless: usize,
    total: usize,
    bbox: Option<&BBoxColumns>,
) -> String {
    let bbox_note = match bbox {
        Some(b) => format!(
            " and no bounds of the bbox columns {} that cover every row",
            b.names.join(", ")
        ),
        None => String::new(),
    };
    format!(
        "{boundless} of {total} files carry no bounds for {column:?}{bbox_note} (Iceberg Java \
         writes none for geometry columns): they are read whatever the window; CREATE SPATIAL \
         INDEX (or any rewrite by geoberg) writes bounds for the files it rewrites"
    )
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
