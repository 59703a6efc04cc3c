//! The column type an imported geometry column gets, from what the file declares (its Parquet
//! logical type, its GeoParquet metadata) and the `srid` the user may give:
//!
//! - an omitted CRS is OGC:CRS84 → `geometry(4326)` / `geography(4326)`; EPSG:3857 →
//!   `geometry(3857)`; geography stays geography, with its edge algorithm;
//! - a CRS no column can declare (EPSG:5070, UTM, a custom projection) is refused with the
//!   declaration rule's three ways out, or, with `srid` 0, imported into `geometry(0)` with the
//!   file's CRS recorded in `geoberg.source-crs.<column>`;
//! - GeoParquet's `"crs": null` (unknown) becomes `geometry(0)`, which records no CRS;
//! - a Parquet CRS and a GeoParquet CRS that disagree stop the import, unless `srid` settles it;
//! - an `srid` that contradicts the file's CRS is refused: relabelling misplaces every value;
//!   plain WKB (no logical type, no GeoParquet metadata) declares none, so an `srid` labels it.

use geoberg_crs::{ColumnType, Crs, EdgeAlgorithm, FormatVersion, validate_declaration};

use super::source_crs::SourceCrs;
use crate::error::{Error, Result};

/// Geometry or geography, as the file has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GeoKind {
    /// Planar edges.
    Geometry,
    /// Edges on the sphere or ellipsoid.
    Geography(EdgeAlgorithm),
}

/// What the file and the user say about one geometry column.
#[derive(Debug, Clone)]
pub(crate) struct Declarations<'a> {
    /// The file, for messages.
    pub location: &'a str,
    /// The column.
    pub column: &'a str,
    /// Geometry or geography.
    pub kind: GeoKind,
    /// The CRS of the Parquet GEOMETRY/GEOGRAPHY logical type, if the column has one.
    pub parquet: Option<SourceCrs>,
    /// The CRS of the GeoParquet metadata, if the file has it for this column.
    pub geoparquet: Option<SourceCrs>,
    /// The user's SRID.
    pub srid: Option<i32>,
}

/// The decision.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ColumnChoice {
    /// The column's type.
    pub column_type: ColumnType,
    /// The SRID every value is labelled with.
    pub srid: i32,
    /// The file's CRS, to record in `geoberg.source-crs.<column>` (imports into geometry(0)).
    pub source_crs: Option<String>,
    /// Decisions worth telling the user.
    pub notes: Vec<String>,
}

fn column_type(kind: GeoKind, srid: i32) -> ColumnType {
    match kind {
        GeoKind::Geometry => ColumnType::geometry(Crs::for_srid(srid)),
        GeoKind::Geography(edges) => ColumnType::Geography {
            crs: Crs::for_srid(srid),
            edges,
        },
    }
}

impl Declarations<'_> {
    /// Decides the column type (see the module docs).
    pub(crate) fn choose(&self) -> Result<ColumnChoice> {
        let mut notes = Vec::new();
        let known = |c: &Option<SourceCrs>| c.clone().filter(SourceCrs::is_known);
        let (parquet, geoparquet) = (known(&self.parquet), known(&self.geoparquet));
        if let (Some(p), Some(g)) = (&parquet, &geoparquet)
            && !p.agrees_with(g)
        {
            let settled = match self.srid {
                Some(0) => true,
                Some(s) => p.srid() == Some(s) && g.srid() == Some(s),
                None => false,
            };
            if !settled {
                return Err(Error::ImportCrsConflict {
                    location: self.location.to_string(),
                    column: self.column.to_string(),
                    parquet: p.describe(),
                    geoparquet: g.describe(),
                });
            }
            notes.push(format!(
                "column {:?}: its Parquet CRS ({}) and GeoParquet CRS ({}) disagree; --srid {} \
                 settles it",
                self.column,
                p.describe(),
                g.describe(),
                self.srid.unwrap_or_default()
            ));
        }
        if let (Some(p), Some(SourceCrs::Unknown)) = (&parquet, &self.geoparquet) {
            notes.push(format!(
                "column {:?}: the GeoParquet metadata calls its CRS unknown; the Parquet logical \
                 type's {} is used",
                self.column,
                p.describe()
            ));
        }
        let unknown = self.parquet.is_none() && matches!(self.geoparquet, Some(SourceCrs::Unknown));
        let declared = parquet.clone().or(geoparquet.clone());
        let effective = match (&declared, unknown) {
            (Some(c), _) => c.clone(),
            (None, true) => SourceCrs::Unknown,
            (None, false) => {
                if self.parquet.is_none() && self.geoparquet.is_none() && self.srid.is_none() {
                    notes.push(format!(
                        "column {:?}: the file declares no CRS (no GEOMETRY logical type, no \
                         GeoParquet metadata); taken as OGC:CRS84, the default of both \
                         specs: pass --srid, or --geometry-column {}:<SRID>, if it is not",
                        self.column, self.column
                    ));
                }
                SourceCrs::Omitted
            }
        };
        let srid = match self.srid {
            Some(0) => {
                if matches!(self.kind, GeoKind::Geography(_)) {
                    // geography(0) is not declarable: let the rule say so.
                    self.validate(column_type(self.kind, 0))?;
                }
                let source_crs = effective
                    .property_value()
                    .filter(|_| effective.srid() != Some(0));
                if source_crs.is_some() {
                    notes.push(format!(
                        "column {:?} imported into geometry(0); the file's CRS {} is recorded in \
                         table property geoberg.source-crs.{}",
                        self.column,
                        effective.describe(),
                        self.column
                    ));
                }
                return Ok(ColumnChoice {
                    column_type: column_type(GeoKind::Geometry, 0),
                    srid: 0,
                    source_crs,
                    notes,
                });
            }
            Some(s) => {
                // Plain WKB declares nothing: the SRID labels it (OGC:CRS84 is only the
                // default).
                let declares = self.parquet.is_some() || self.geoparquet.is_some();
                let contradicts = declares && effective.is_known() && effective.srid() != Some(s);
                let settled_conflict =
                    parquet
                        .as_ref()
                        .zip(geoparquet.as_ref())
                        .is_some_and(|(p, g)| {
                            !p.agrees_with(g) && p.srid() == Some(s) && g.srid() == Some(s)
                        });
                if contradicts && !settled_conflict {
                    return Err(Error::Import {
                        location: self.location.to_string(),
                        reason: format!(
                            "--srid {s} contradicts the file, which declares {} for column \
                             {:?}: relabelling would misplace every value. Drop --srid, \
                             reproject the file to EPSG:{s} first, or pass --srid 0 to keep the \
                             coordinates in geometry(0)",
                            effective.describe(),
                            self.column
                        ),
                    });
                }
                s
            }
            None => match effective.srid() {
                _ if !effective.is_known() => {
                    if let GeoKind::Geography(_) = self.kind {
                        return Err(Error::Import {
                            location: self.location.to_string(),
                            reason: format!(
                                "the CRS of geography column {:?} is unknown (GeoParquet \"crs\": \
                                 null); pass --srid 4326 if its coordinates are longitude and \
                                 latitude",
                                self.column
                            ),
                        });
                    }
                    notes.push(format!(
                        "column {:?}: the file says its CRS is unknown (GeoParquet \"crs\": \
                         null); imported into geometry(0), which records no CRS: pass --srid \
                         4326 or 3857 if you know it",
                        self.column
                    ));
                    0
                }
                Some(s) => {
                    let t = column_type(self.kind, s);
                    if validate_declaration(self.column, &t, FormatVersion::V3).is_err() {
                        return Err(self.not_declarable(&effective));
                    }
                    s
                }
                None => return Err(self.not_declarable(&effective)),
            },
        };
        let t = column_type(self.kind, srid);
        self.validate(t.clone())?;
        Ok(ColumnChoice {
            column_type: t,
            srid,
            source_crs: None,
            notes,
        })
    }

    fn validate(&self, t: ColumnType) -> Result<()> {
        validate_declaration(self.column, &t, FormatVersion::V3).map_err(Error::from)
    }

    /// The declaration rule's error for a CRS no column can declare, with the import's own way
    /// out.
    fn not_declarable(&self, crs: &SourceCrs) -> Error {
        let t = match self.kind {
            GeoKind::Geometry => ColumnType::geometry(crs.as_crs()),
            GeoKind::Geography(edges) => ColumnType::Geography {
                crs: crs.as_crs(),
                edges,
            },
        };
        match validate_declaration(self.column, &t, FormatVersion::V3) {
            Err(source) => Error::ImportCrs {
                location: self.location.to_string(),
                column: self.column.to_string(),
                file_crs: crs.describe(),
                source: Box::new(source),
            },
            Ok(()) => Error::Import {
                location: self.location.to_string(),
                reason: format!("column {:?} is in {}", self.column, crs.describe()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn decl(
        parquet: Option<&str>,
        geoparquet: Option<SourceCrs>,
        srid: Option<i32>,
    ) -> Result<ColumnChoice> {
        Declarations {
            location: "f.parquet",
            column: "geom",
            kind: GeoKind::Geometry,
            parquet: parquet.map(|p| SourceCrs::from_parquet(Some(p), &HashMap::new()).unwrap()),
            geoparquet,
            srid,
        }
        .choose()
    }

    #[test]
    fn the_file_decides_the_type() {
        assert_eq!(decl(Some(""), None, None).unwrap().srid, 4326);
        assert_eq!(decl(Some("EPSG:3857"), None, None).unwrap().srid, 3857);
        assert_eq!(
            decl(None, Some(SourceCrs::Omitted), None).unwrap().srid,
            4326
        );
        let unknown = decl(None, Some(SourceCrs::Unknown), None).unwrap();
        assert_eq!(unknown.srid, 0);
        assert!(unknown.notes[0].contains("unknown"));
        // A Parquet CRS is not contradicted by GeoParquet's "unknown".
        assert_eq!(
            decl(Some(""), Some(SourceCrs::Unknown), None).unwrap().srid,
            4326
        );
    }

    #[test]
    fn undeclarable_crs_is_refused_with_the_ways_out_or_kept_in_srid_0() {
        let e = decl(Some("srid:5070"), None, None).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::ImportCrs { .. }));
        for part in [
            "EPSG:5070",
            "geometry(0)",
            "format-version 2",
            "--srid 0",
            "geoberg.source-crs.geom",
        ] {
            assert!(msg.contains(part), "{part}: {msg}");
        }
        let kept = decl(Some("srid:5070"), None, Some(0)).unwrap();
        assert_eq!(kept.srid, 0);
        assert_eq!(kept.source_crs.as_deref(), Some("srid:5070"));
        let e = decl(Some("EPSG:3857"), None, Some(4326))
            .unwrap_err()
            .to_string();
        assert!(e.contains("misplace"), "{e}");
    }

    #[test]
    fn an_srid_labels_plain_wkb_and_contradicts_a_declared_default() {
        // Plain WKB says nothing, so --srid 3857 labels it.
        let plain = decl(None, None, Some(3857)).unwrap();
        assert_eq!(plain.column_type, column_type(GeoKind::Geometry, 3857));
        assert!(plain.notes.is_empty());
        // A GEOMETRY logical type or GeoParquet metadata without a CRS declares OGC:CRS84.
        assert!(decl(Some(""), None, Some(3857)).is_err());
        assert!(decl(None, Some(SourceCrs::Omitted), Some(3857)).is_err());
    }

    #[test]
    fn disagreeing_declarations_stop_unless_the_srid_settles_them() {
        let epsg4326 = SourceCrs::from_projjson(serde_json::json!({
            "type": "GeographicCRS", "name": "WGS 84", "id": {"authority": "EPSG", "code": 4326}
        }));
        let e = decl(Some(""), Some(epsg4326.clone()), None).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::ImportCrsConflict { .. }));
        assert!(
            msg.contains("OGC:CRS84") && msg.contains("EPSG:4326 (WGS 84)"),
            "{msg}"
        );
        assert_eq!(
            decl(Some(""), Some(epsg4326.clone()), Some(4326))
                .unwrap()
                .srid,
            4326
        );
        assert!(decl(Some(""), Some(epsg4326), Some(3857)).is_err());
    }
}
