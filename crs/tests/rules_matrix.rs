//! Rules 1-4 over every combination of SRID {0, 3857, 4326, 4269, 32633, unset} x column type x
//! format version 1..=3, with each error's message checked for the values and the fix words.

use geoberg_crs::{
    ColumnType, Crs, CrsError, EdgeAlgorithm, Extent, FormatVersion, ValueSrid, can_skip_files,
    check_value_srid, default_hilbert_bounds, validate_declaration,
};

const SRIDS: [Option<i32>; 6] = [
    Some(0),
    Some(3857),
    Some(4326),
    Some(4269),
    Some(32633),
    None,
];

/// What the reference allows, written out as a table rather than recomputed.
fn geometry_may_declare(srid: i32) -> bool {
    match srid {
        0 | 3857 | 4326 => true,
        4269 | 32633 => false,
        other => panic!("SRID {other} is not in the matrix"),
    }
}

fn geography_may_declare(srid: i32) -> bool {
    srid == 4326
}

/// Every column type the matrix covers for a declared SRID (or none).
fn column_types(srid: Option<i32>) -> Vec<ColumnType> {
    match srid {
        None => vec![ColumnType::GeometryWithoutCrs],
        Some(s) => {
            let mut types = vec![
                ColumnType::geometry(Crs::Srid(s)),
                ColumnType::geometry(Crs::Epsg(s)),
            ];
            types.extend(
                EdgeAlgorithm::ALL
                    .into_iter()
                    .map(|edges| ColumnType::Geography {
                        crs: Crs::Epsg(s),
                        edges,
                    }),
            );
            if s == 4326 {
                types.push(ColumnType::geometry(Crs::OgcCrs84));
                types.push(ColumnType::geography(Crs::OgcCrs84));
            }
            types
        }
    }
}

fn assert_mentions(err: &CrsError, words: &[&str]) {
    let message = err.to_string();
    for word in words {
        assert!(
            message.contains(word),
            "{} message lacks {word:?}: {message}",
            err.code()
        );
    }
}

#[test]
fn rule_1_declarations_over_the_whole_matrix() {
    let mut checked = 0;
    for fv in FormatVersion::ALL {
        for srid in SRIDS {
            for column_type in column_types(srid) {
                checked += 1;
                let result = validate_declaration("geom", &column_type, fv);
                let allowed = match (&column_type, srid) {
                    (ColumnType::GeometryWithoutCrs, _) => None,
                    (ColumnType::Geometry { .. }, Some(s)) => Some(geometry_may_declare(s)),
                    (ColumnType::Geography { .. }, Some(s)) => Some(geography_may_declare(s)),
                    other => panic!("unexpected combination {other:?}"),
                };
                match (allowed, fv) {
                    (None, _) => {
                        let err = result.unwrap_err();
                        assert_eq!(err.code(), "ST_CRS_NOT_DECLARED");
                        assert_mentions(&err, &["'geom'", "Declare", "geometry(4326)"]);
                    }
                    (Some(false), _) => {
                        let err = result.unwrap_err();
                        assert_eq!(err.code(), "ST_INVALID_SRID_VALUE", "{column_type} v{fv}");
                        let srid = srid.unwrap().to_string();
                        let allowed_list = if column_type.kind() == "geography" {
                            "SRID 4326"
                        } else {
                            "SRID 0, 3857 or 4326"
                        };
                        assert_mentions(
                            &err,
                            &[
                                "'geom'",
                                &srid,
                                allowed_list,
                                "reproject",
                                "geometry(4326)",
                                "geometry(3857)",
                                "geometry(0)",
                                "keep track of the real CRS yourself",
                                "no declared CRS",
                                "format-version 2",
                            ],
                        );
                    }
                    (Some(true), FormatVersion::V3) => {
                        result.unwrap_or_else(|e| panic!("{column_type} on v3: {e}"));
                    }
                    (Some(true), old) => {
                        let err = result.unwrap_err();
                        assert_eq!(err.code(), "ST_CRS_NEEDS_FORMAT_V3");
                        assert_mentions(
                            &err,
                            &[
                                "'geom'",
                                "format-version 3",
                                &format!("format-version {old}"),
                                "Drop the 'format-version' property",
                            ],
                        );
                    }
                }
            }
        }
    }
    assert_eq!(checked, 3 * (5 * 7 + 2 + 1));
}

#[test]
fn rule_1_other_crs_forms_are_not_declarable() {
    for crs in ["projjson:my_crs", "IGNF:ATI", "EPSG:4269"] {
        let crs: Crs = crs.parse().unwrap();
        let err = validate_declaration("g", &ColumnType::geometry(crs.clone()), FormatVersion::V3)
            .unwrap_err();
        assert_eq!(err.code(), "ST_INVALID_SRID_VALUE");
        assert_mentions(&err, &[&crs.to_string()]);
    }
}

/// Which value SRIDs each column accepts, written out.
fn accepts(column_type: &ColumnType, value: ValueSrid) -> bool {
    match (column_type, value) {
        (ColumnType::GeometryWithoutCrs, _) => true,
        (ColumnType::Geography { .. }, ValueSrid::Unset) => true,
        (ColumnType::Geometry { .. }, ValueSrid::Unset) => false,
        (column, ValueSrid::Srid(v)) => column.crs().unwrap().srid() == Some(v),
    }
}

#[test]
fn rule_2_value_srids_over_the_whole_matrix() {
    let mut checked = 0;
    for fv in FormatVersion::ALL {
        for declared in SRIDS {
            for column_type in column_types(declared) {
                // Only columns that can exist in a table of this version receive values: a
                // declared CRS needs v3; a column without a CRS exists at every version.
                let exists = match &column_type {
                    ColumnType::GeometryWithoutCrs => true,
                    _ => validate_declaration("geom", &column_type, fv).is_ok(),
                };
                if !exists {
                    continue;
                }
                for value in SRIDS.map(ValueSrid::from) {
                    checked += 1;
                    let result = check_value_srid("geom", &column_type, value);
                    if accepts(&column_type, value) {
                        result.unwrap_or_else(|e| panic!("{column_type} {value}: {e}"));
                        continue;
                    }
                    let err = result.unwrap_err();
                    assert_eq!(err.code(), "ST_SRID_MISMATCH");
                    let column_crs = column_type.crs().unwrap().to_string();
                    let value_text = match value {
                        ValueSrid::Srid(v) => format!("SRID {v}"),
                        ValueSrid::Unset => "no SRID".to_owned(),
                    };
                    assert_mentions(
                        &err,
                        &[
                            "'geom'",
                            &value_text,
                            &column_crs,
                            "relabel",
                            "coordinates stay unchanged",
                            "reproject",
                            "metre coordinates as degrees",
                            "wrong place",
                        ],
                    );
                }
            }
        }
    }
    // v1, v2: the legacy column; v3: legacy + geometry(0|3857|4326) x 2 spellings + CRS84 +
    // geography(4326) x 5 algorithms + CRS84 geography; each x 6 value SRIDs.
    assert_eq!(checked, 6 * (1 + 1 + (1 + 3 * 2 + 1 + 5 + 1)));
}

#[test]
fn rule_2_srid_zero_is_not_unset() {
    let zero = ColumnType::geometry(Crs::Srid(0));
    check_value_srid("g", &zero, ValueSrid::Srid(0)).unwrap();
    assert!(check_value_srid("g", &zero, ValueSrid::Unset).is_err());
    let wgs84 = ColumnType::geometry(Crs::OgcCrs84);
    let err = check_value_srid("g", &wgs84, ValueSrid::Srid(0)).unwrap_err();
    assert_mentions(&err, &["SRID 0", "OGC:CRS84", "set its SRID to 4326"]);
}

#[test]
fn rule_3_file_skipping_over_the_matrix() {
    for fv in FormatVersion::ALL {
        for srid in SRIDS {
            for column_type in column_types(srid) {
                let decision = can_skip_files(fv, &column_type);
                let expected = column_type.crs().is_some() || fv != FormatVersion::V3;
                assert_eq!(decision.can_skip, expected, "{column_type} v{fv}");
                assert!(!decision.reason.is_empty());
                if !decision.can_skip {
                    for word in ["every data file", "format-version 3", "geometry(4326)"] {
                        assert!(decision.reason.contains(word), "{decision}");
                    }
                }
            }
        }
    }
}

#[test]
fn rule_4_default_hilbert_bounds_over_the_matrix() {
    for srid in SRIDS {
        for column_type in column_types(srid) {
            let result = default_hilbert_bounds("geom", &column_type);
            match srid {
                None | Some(4326) => assert_eq!(result.unwrap(), Extent::WGS84),
                Some(_) => {
                    let err = result.unwrap_err();
                    assert_eq!(err.code(), "ST_DEFAULT_BOUNDS_NOT_WGS84");
                    let crs = column_type.crs().unwrap().to_string();
                    assert_mentions(
                        &err,
                        &[
                            "'geom'",
                            &crs,
                            "hilbert(geom, precision, minX, minY, maxX, maxY)",
                            "reproject",
                            "WGS84",
                        ],
                    );
                }
            }
        }
    }
    let err = default_hilbert_bounds("geom", &ColumnType::geometry(Crs::Epsg(3857))).unwrap_err();
    assert_mentions(
        &err,
        &["-20037508.342789244, -20037508.342789244, 20037508.342789244, 20037508.342789244"],
    );
}
