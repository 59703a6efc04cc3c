//! CRS strings, type strings and format versions: accepted spellings and Display round trips.

use geoberg_crs::{ColumnType, Crs, EdgeAlgorithm, FormatVersion};
use proptest::prelude::*;

#[test]
fn accepted_spellings() {
    let cases: [(&str, Crs); 12] = [
        ("EPSG:4326", Crs::Epsg(4326)),
        ("epsg:3857", Crs::Epsg(3857)),
        (" Epsg : 32633 ", Crs::Epsg(32633)),
        ("SRID:0", Crs::Srid(0)),
        ("srid:4326", Crs::Srid(4326)),
        ("4326", Crs::Srid(4326)),
        ("0", Crs::Srid(0)),
        ("OGC:CRS84", Crs::OgcCrs84),
        ("ogc:crs84", Crs::OgcCrs84),
        ("projjson:MyCrs", Crs::Projjson("MyCrs".into())),
        ("PROJJSON:table.crs", Crs::Projjson("table.crs".into())),
        (
            "IGNF:ATI",
            Crs::Other {
                authority: "IGNF".into(),
                code: "ATI".into(),
            },
        ),
    ];
    for (text, expected) in cases {
        let parsed: Crs = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(parsed, expected, "{text}");
        assert_eq!(parsed.to_string().parse::<Crs>().unwrap(), parsed);
    }
    assert_eq!(Crs::OgcCrs84.srid(), Some(4326));
    assert!(Crs::OgcCrs84.is_same_as(&Crs::Epsg(4326)));
    assert!(!Crs::Srid(0).is_same_as(&Crs::Srid(4326)));
    assert_eq!(Crs::Projjson("a".into()).srid(), None);
}

#[test]
fn rejected_spellings_name_the_forms() {
    for text in [
        "",
        "   ",
        "EPSG",
        "EPSG:",
        ":4326",
        "EPSG:abc",
        "EPSG:-1",
        "SRID:99999999999",
        "-5",
        "4326.0",
        "projjson:",
        "EPSG:4326)",
        "a b:c",
        "OGC:CRS 84",
    ] {
        let err = text.parse::<Crs>().unwrap_err();
        assert_eq!(err.code(), "ST_INVALID_CRS", "{text}");
        let message = err.to_string();
        assert!(message.contains(&format!("'{text}'")), "{message}");
        for form in ["EPSG:<code>", "OGC:CRS84", "projjson:<table-property>"] {
            assert!(message.contains(form), "{message}");
        }
    }
}

#[test]
fn iceberg_type_strings_from_every_writer() {
    let geometry_4326 = ColumnType::geometry(Crs::Srid(4326));
    let cases = [
        ("geometry", ColumnType::geometry(Crs::OgcCrs84)),
        ("GEOMETRY", ColumnType::geometry(Crs::OgcCrs84)),
        ("geometry(srid:4326)", geometry_4326.clone()),
        ("geometry( srid:4326 )", geometry_4326.clone()),
        ("geometry('srid:4326')", geometry_4326),
        ("geometry(EPSG:3857)", ColumnType::geometry(Crs::Epsg(3857))),
        ("geometry(ogc:crs84)", ColumnType::geometry(Crs::OgcCrs84)),
        ("geography", ColumnType::geography(Crs::OgcCrs84)),
        ("geography(OGC:CRS84)", ColumnType::geography(Crs::OgcCrs84)),
        (
            "geography(srid:4326, spherical)",
            ColumnType::geography(Crs::Srid(4326)),
        ),
        (
            "geography(srid:4326,vincenty)",
            ColumnType::Geography {
                crs: Crs::Srid(4326),
                edges: EdgeAlgorithm::Vincenty,
            },
        ),
        (
            "geography('X:Y', 'KARNEY')",
            ColumnType::Geography {
                crs: Crs::Other {
                    authority: "X".into(),
                    code: "Y".into(),
                },
                edges: EdgeAlgorithm::Karney,
            },
        ),
    ];
    for (text, expected) in cases {
        let parsed = ColumnType::from_iceberg_type(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(parsed, expected, "{text}");
        let canonical = parsed.iceberg_type().unwrap();
        assert_eq!(ColumnType::from_iceberg_type(&canonical).unwrap(), parsed);
    }
    for bad in [
        "geometry()",
        "geometry(",
        "geometry(a:b, c:d)",
        "geography(OGC:CRS84, great_circle)",
        "geography(a:b, spherical, x)",
        "point(4326)",
    ] {
        let err = ColumnType::from_iceberg_type(bad).unwrap_err();
        assert!(
            matches!(err.code(), "ST_INVALID_TYPE" | "ST_INVALID_CRS"),
            "{bad}: {err}"
        );
    }
    assert_eq!(ColumnType::GeometryWithoutCrs.iceberg_type(), None);
}

#[test]
fn format_versions() {
    for (text, fv) in [
        ("1", FormatVersion::V1),
        (" 2 ", FormatVersion::V2),
        ("3", FormatVersion::V3),
    ] {
        assert_eq!(text.parse::<FormatVersion>().unwrap(), fv);
        assert_eq!(fv.to_string().parse::<FormatVersion>().unwrap(), fv);
    }
    for bad in ["0", "4", "v3", "", "-1"] {
        let err = bad.parse::<FormatVersion>().unwrap_err();
        assert_eq!(err.code(), "ST_INVALID_FORMAT_VERSION");
        assert!(err.to_string().contains("1, 2 and 3"));
    }
}

fn any_crs() -> impl Strategy<Value = Crs> {
    prop_oneof![
        Just(Crs::OgcCrs84),
        (0..=i32::MAX).prop_map(Crs::Epsg),
        (0..=i32::MAX).prop_map(Crs::Srid),
        "[A-Za-z0-9_.-]{1,20}".prop_map(Crs::Projjson),
        ("[A-Za-z][A-Za-z0-9_-]{0,8}", "[A-Za-z0-9_.-]{1,12}")
            .prop_filter(
                "the known authorities parse to their own variants",
                |(a, _)| {
                    !["epsg", "srid", "ogc", "projjson"].contains(&a.to_ascii_lowercase().as_str())
                }
            )
            .prop_map(|(authority, code)| Crs::Other { authority, code }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn crs_display_round_trips(crs in any_crs()) {
        prop_assert_eq!(crs.to_string().parse::<Crs>().unwrap(), crs.clone());
        prop_assert_eq!(crs.to_string().to_lowercase().parse::<Crs>().unwrap().srid(), crs.srid());
    }

    #[test]
    fn type_string_round_trips(crs in any_crs(), edges in 0usize..5, geography in any::<bool>()) {
        let t = if geography {
            ColumnType::Geography { crs, edges: EdgeAlgorithm::ALL[edges] }
        } else {
            ColumnType::geometry(crs)
        };
        let text = t.iceberg_type().unwrap();
        prop_assert_eq!(ColumnType::from_iceberg_type(&text).unwrap(), t);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,40}") {
        let _ = text.parse::<Crs>();
        let _ = ColumnType::from_iceberg_type(&text);
        let _ = text.parse::<FormatVersion>();
    }
}
