//! Properties: no input makes the parsers panic, and every request and every condition survives
//! `to_sql` → `parse` / `parse_condition`.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use geoberg_sql::{
    AddBBoxColumnsRequest, Column, CompareOp, CreateTableRequest, Crs, DataType, EdgeAlgorithm,
    ExpireSnapshotsRequest, HilbertIndex, Literal, NullOrder, OlderThan, PartitionField,
    PartitionTransform, Predicate, RemoveOrphanFilesRequest, RewriteRequest, RewriteStrategy,
    SortField, SortOrder, SpatialFilter, SpatialRelation, Statement, TableName, Window, parse,
    parse_condition, parse_sort_order,
};
use proptest::prelude::*;

const VALID: &[&str] = &[
    "CREATE SPATIAL INDEX FOR wherobots.db.test_table USING hilbert(geom, 10, -180, -90, 180, 90) WHERE state = 'CA' OPTIONS map('target-file-size-bytes', '10485760')",
    "CALL wherobots.system.rewrite_data_files(table => 'db.test_table', strategy => 'sort', sort_order => 'hilbert(geom, 10)', where => \"a IN (1, 2) AND b IS NOT NULL\", options => map('rewrite-all', 'true'))",
    "CREATE TABLE IF NOT EXISTS c.db.t (id bigint NOT NULL COMMENT 'k', g geography('OGC:CRS84', spherical), geom geometry(4326), d decimal(10, 2), ts timestamp) USING iceberg PARTITIONED BY (bucket(4, id), days(ts)) TBLPROPERTIES ('format-version' = '3')",
    "SHOW TBLPROPERTIES db.t ('format-version')",
    "ALTER TABLE c.db.t SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'n' = 8)",
    "ALTER TABLE db.t UNSET TBLPROPERTIES IF EXISTS ('a', 'b')",
    "CALL c.system.expire_snapshots(table => 'db.t', older_than => TIMESTAMP '2026-01-01 00:00:00.5', retain_last => 3)",
    "CALL c.system.expire_snapshots('db.t', TIMESTAMPADD(DAY, -30, CURRENT_TIMESTAMP))",
    "CALL c.system.remove_orphan_files(table => 'db.t', older_than => '2026-01-01', dry_run => true)",
    "CALL c.system.add_bbox_columns(table => 'db.t', column => 'geom', names => array('x0', 'y0', 'x1', 'y1'), where => \"day = '2026-01-01'\", window => array(170, -1.5e1, -170, 15), backfill => true)",
];

/// Valid conditions, the bases of the condition mutations.
const VALID_CONDITIONS: &[&str] = &[
    "ST_Intersects(geom, ST_GeomFromText('POLYGON ((0 0, 0 2, 2 2, 2 0, 0 0))', 4326)) AND NOT (x BETWEEN 1 AND 2)",
    "ST_DWithin(ST_MakeEnvelope(-1.5, -2, 3e2, 4, 3857), geom, 10) OR y <> 'a''b'",
    "a IN (1, -2.5e3, 'x', true) AND b NOT IN ('y') AND (c IS NULL OR d >= 9223372036854775807)",
];

/// Tokens that steer the parser into its deeper paths when spliced into a statement.
const SPLICE: &[&str] = &[
    "(",
    ")",
    ",",
    "'",
    "\"",
    "`",
    "=>",
    "NOT ",
    " AND ",
    " OR ",
    "-",
    "1e999",
    "9999999999999999999999",
    "ST_GeomFromText('",
    "ST_MakeEnvelope(",
    "map(",
    "hilbert(",
    "TIMESTAMP '",
    "TIMESTAMPADD(",
    "CURRENT_TIMESTAMP",
    " => ",
    "IF EXISTS ",
    "2026-02-30 25:61:61",
    "GEOMETRYCOLLECTION(",
    "EMPTY",
    ";",
    "\\",
    "NULL",
    "*",
    ".",
    "\u{0}",
    "é",
    "\n",
];

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, usize),
    Duplicate(usize, usize),
    Truncate(usize),
}

fn mutate(sql: &str, mutations: &[Mutation]) -> String {
    let mut chars: Vec<char> = sql.chars().collect();
    for m in mutations {
        let n = chars.len().max(1);
        match *m {
            Mutation::Delete(at, len) => {
                let at = at % n;
                let end = (at + len % 8).min(chars.len());
                if at < end {
                    chars.drain(at..end);
                }
            }
            Mutation::Insert(at, token) => {
                let at = (at % n).min(chars.len());
                let token: Vec<char> = SPLICE[token % SPLICE.len()].chars().collect();
                chars.splice(at..at, token);
            }
            Mutation::Duplicate(at, len) => {
                let at = at % n;
                let end = (at + len % 16).min(chars.len());
                if at < end {
                    let copy: Vec<char> = chars[at..end].to_vec();
                    chars.splice(at..at, copy);
                }
            }
            Mutation::Truncate(at) => chars.truncate(at % n),
        }
    }
    chars.into_iter().collect()
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Delete(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Insert(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::Duplicate(a, b)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn ident() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z_][a-z0-9_]{0,6}",
        1 => prop::sample::select(vec![
            "select", "from", "where", "date", "timestamp", "table", "and", "not", "null", "true",
            "interval", "case", "map", "comment", "limit", "using", "options", "count", "id", "data",
        ])
        .prop_map(String::from),
        1 => "[^\u{0}]{1,5}",
    ]
}

fn table_name() -> impl Strategy<Value = TableName> {
    prop::collection::vec(ident(), 1..=3).prop_map(|parts| TableName::new(parts).unwrap())
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        any::<bool>().prop_map(Literal::Boolean),
        any::<i64>().prop_map(Literal::Integer),
        (prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL | prop::num::f64::ZERO)
            .prop_map(Literal::Float),
        ".{0,8}".prop_map(Literal::String),
    ]
}

fn coordinate() -> impl Strategy<Value = f64> {
    prop_oneof![-1e7..1e7f64, (-1000i32..1000).prop_map(f64::from)]
}

fn window() -> impl Strategy<Value = Window> {
    let srid = prop::option::of(0i32..100_000);
    prop_oneof![
        (
            coordinate(),
            coordinate(),
            0.0..1e3f64,
            0.0..1e3f64,
            srid.clone()
        )
            .prop_map(|(x, y, w, h, srid)| {
                let bbox = geoberg_crs::Extent::new(x, y, x + w, y + h);
                Window::from_envelope(bbox, srid).unwrap()
            }),
        // Envelopes across the antimeridian (minX > maxX), for geography columns.
        (
            0.0..=180.0f64,
            -180.0..0.0f64,
            -90.0..90.0f64,
            0.0..90.0f64,
            srid.clone()
        )
            .prop_map(|(x0, x1, y, h, srid)| {
                let bbox = geoberg_crs::Extent::new(x0, y, x1, (y + h).min(90.0));
                let w = Window::from_envelope(bbox, srid).unwrap();
                assert!(w.wraps());
                w
            }),
        (coordinate(), coordinate(), srid.clone()).prop_map(|(x, y, srid)| Window::from_wkt(
            &format!("POINT ({x:?} {y:?})"),
            srid
        )
        .unwrap()),
        (
            prop::collection::vec((coordinate(), coordinate()), 2..6),
            srid
        )
            .prop_map(|(pts, srid)| {
                let pts: Vec<String> = pts.iter().map(|(x, y)| format!("{x:?} {y:?}")).collect();
                Window::from_wkt(&format!("LINESTRING ({})", pts.join(", ")), srid).unwrap()
            }),
    ]
}

fn leaf() -> impl Strategy<Value = Predicate> {
    let op = prop::sample::select(vec![
        CompareOp::Eq,
        CompareOp::NotEq,
        CompareOp::Lt,
        CompareOp::LtEq,
        CompareOp::Gt,
        CompareOp::GtEq,
    ]);
    let relation = prop_oneof![
        Just(SpatialRelation::Intersects),
        Just(SpatialRelation::Contains),
        Just(SpatialRelation::Within),
        (0.0..1e4f64).prop_map(SpatialRelation::DWithin),
    ];
    prop_oneof![
        (ident(), op, literal()).prop_map(|(column, op, value)| Predicate::Compare {
            column,
            op,
            value
        }),
        (
            ident(),
            prop::collection::vec(literal(), 1..4),
            any::<bool>()
        )
            .prop_map(|(column, values, negated)| Predicate::In {
                column,
                values,
                negated
            }),
        (ident(), literal(), literal(), any::<bool>()).prop_map(|(column, low, high, negated)| {
            Predicate::Between {
                column,
                low,
                high,
                negated,
            }
        }),
        (ident(), any::<bool>())
            .prop_map(|(column, negated)| Predicate::IsNull { column, negated }),
        (ident(), relation, window()).prop_map(|(column, relation, window)| {
            Predicate::Spatial(SpatialFilter {
                column,
                relation,
                window,
            })
        }),
    ]
}

fn predicate() -> impl Strategy<Value = Predicate> {
    leaf().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| Predicate::and(v).unwrap()),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| Predicate::or(v).unwrap()),
            inner.prop_map(|p| Predicate::Not(Box::new(p))),
        ]
    })
}

fn string_map() -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map(
        prop_oneof![Just("rewrite-all".to_string()), ".{0,6}"],
        prop_oneof![Just("true".to_string()), ".{0,6}"],
        0..3,
    )
}

fn rewrite() -> impl Strategy<Value = RewriteRequest> {
    let bounds = prop::option::of(
        (coordinate(), coordinate(), 1e-3..1e7f64, 1e-3..1e7f64)
            .prop_map(|(x, y, w, h)| geoberg_crs::Extent::new(x, y, x + w, y + h)),
    );
    let field = (ident(), any::<bool>(), any::<bool>()).prop_map(|(c, desc, nulls_first)| {
        let f = if desc {
            SortField::desc(c)
        } else {
            SortField::asc(c)
        };
        f.nulls(if nulls_first {
            NullOrder::First
        } else {
            NullOrder::Last
        })
    });
    let distinct = |v: &Vec<String>| {
        let mut s = v.clone();
        s.sort();
        s.dedup();
        s.len() == v.len()
    };
    let strategy = prop_oneof![
        Just(RewriteStrategy::BinPack),
        Just(RewriteStrategy::TableSortOrder),
        prop::collection::vec(field, 1..4)
            .prop_filter("distinct columns", move |f| distinct(
                &f.iter().map(|f| f.column.clone()).collect()
            ))
            .prop_map(|f| RewriteStrategy::Sort(SortOrder::Columns(f))),
        prop::collection::vec(ident(), 1..4)
            .prop_filter("distinct columns", distinct)
            .prop_map(|c| RewriteStrategy::Sort(SortOrder::ZOrder(c))),
        (ident(), 1u8..=32, bounds).prop_map(|(column, precision, bounds)| {
            RewriteStrategy::Hilbert(HilbertIndex {
                column,
                precision,
                bounds,
            })
        }),
    ];
    (
        table_name(),
        strategy,
        prop::option::of(predicate()),
        string_map(),
    )
        .prop_map(|(table, strategy, filter, options)| RewriteRequest {
            table,
            strategy,
            filter,
            options,
        })
}

fn leaf_type() -> impl Strategy<Value = DataType> {
    let crs = prop_oneof![
        (0i32..100_000).prop_map(Crs::Srid),
        (1i32..100_000).prop_map(Crs::Epsg),
        Just(Crs::OgcCrs84),
        "[a-z_]{1,8}".prop_map(Crs::Projjson),
        ("[A-Z][A-Z0-9_-]{0,5}", "[A-Za-z0-9_.]{1,6}").prop_filter_map(
            "a named authority",
            |(authority, code)| {
                let crs = format!("{authority}:{code}").parse::<Crs>().ok()?;
                matches!(crs, Crs::Other { .. }).then_some(crs)
            }
        ),
    ];
    let algorithm = prop::sample::select(vec![
        EdgeAlgorithm::Spherical,
        EdgeAlgorithm::Vincenty,
        EdgeAlgorithm::Thomas,
        EdgeAlgorithm::Andoyer,
        EdgeAlgorithm::Karney,
    ]);
    prop_oneof![
        prop::sample::select(vec![
            DataType::Boolean,
            DataType::Int,
            DataType::Long,
            DataType::Float,
            DataType::Double,
            DataType::Date,
            DataType::Timestamptz,
            DataType::Timestamp,
            DataType::String,
            DataType::Binary,
            DataType::Uuid,
            DataType::Time,
            DataType::TimestamptzNs,
            DataType::TimestampNs,
        ]),
        (1u64..=64).prop_map(DataType::Fixed),
        (1u32..=38)
            .prop_flat_map(|p| (Just(p), 0..=p))
            .prop_map(|(precision, scale)| DataType::Decimal { precision, scale }),
        prop::option::of(crs.clone()).prop_map(|crs| DataType::Geo(match crs {
            None => geoberg_crs::ColumnType::GeometryWithoutCrs,
            Some(crs) => geoberg_crs::ColumnType::Geometry { crs },
        })),
        (crs, algorithm).prop_map(|(crs, edges)| DataType::Geo(
            geoberg_crs::ColumnType::Geography { crs, edges }
        )),
    ]
}

/// Any column type: leaves, and structs, arrays and maps of them up to three levels deep.
fn column_type() -> impl Strategy<Value = DataType> {
    leaf_type().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec((ident(), inner.clone(), any::<bool>()), 1..4).prop_map(
                |fields| {
                    let mut seen = std::collections::HashSet::new();
                    DataType::Struct(
                        fields
                            .into_iter()
                            .filter(|(n, _, _)| seen.insert(n.to_ascii_lowercase()))
                            .map(|(name, data_type, required)| Column {
                                name,
                                data_type,
                                required,
                                comment: None,
                            })
                            .collect(),
                    )
                }
            ),
            (inner.clone(), any::<bool>()).prop_map(|(e, r)| DataType::List {
                element: Box::new(e),
                element_required: r,
            }),
            (inner.clone(), inner, any::<bool>()).prop_map(|(k, v, r)| DataType::Map {
                key: Box::new(k),
                value: Box::new(v),
                value_required: r,
            }),
        ]
    })
}

fn create_table() -> impl Strategy<Value = CreateTableRequest> {
    let column = (
        ident(),
        column_type(),
        any::<bool>(),
        prop::option::of(".{0,6}"),
    )
        .prop_map(|(name, data_type, required, comment)| Column {
            name,
            data_type,
            required,
            comment,
        });
    let transform = prop_oneof![
        Just(PartitionTransform::Identity),
        (1u32..1000).prop_map(PartitionTransform::Bucket),
        (1u32..1000).prop_map(PartitionTransform::Truncate),
        Just(PartitionTransform::Year),
        Just(PartitionTransform::Month),
        Just(PartitionTransform::Day),
        Just(PartitionTransform::Hour),
    ];
    (
        table_name(),
        any::<bool>(),
        prop::collection::vec(column, 1..5),
        prop::collection::vec((any::<prop::sample::Index>(), transform), 0..3),
        string_map(),
    )
        .prop_map(|(table, if_not_exists, mut columns, parts, properties)| {
            let mut seen = std::collections::HashSet::new();
            columns.retain(|c| seen.insert(c.name.to_lowercase()));
            let partitioning = parts
                .into_iter()
                .map(|(i, transform)| PartitionField {
                    column: i.get(&columns).name.clone(),
                    transform,
                })
                .collect();
            CreateTableRequest {
                table,
                if_not_exists,
                columns,
                partitioning,
                properties,
            }
        })
}

/// Any instant from 1970 to 9999, to the nanosecond, or a whole number of seconds before now.
fn older_than() -> impl Strategy<Value = OlderThan> {
    prop_oneof![
        (0u64..253_402_300_800, 0u32..1_000_000_000)
            .prop_map(|(s, n)| OlderThan::At(SystemTime::UNIX_EPOCH + Duration::new(s, n))),
        (0u64..400_000_000).prop_map(|s| OlderThan::BeforeNow(Duration::from_secs(s))),
    ]
}

fn maintenance() -> impl Strategy<Value = Statement> {
    prop_oneof![
        (
            table_name(),
            prop::option::of(older_than()),
            prop::option::of(1u32..)
        )
            .prop_map(
                |(table, older_than, retain_last)| Statement::ExpireSnapshots(
                    ExpireSnapshotsRequest {
                        table,
                        older_than,
                        retain_last
                    }
                )
            ),
        (
            table_name(),
            prop::option::of(older_than()),
            prop::option::of(any::<bool>())
        )
            .prop_map(|(table, older_than, dry_run)| Statement::RemoveOrphanFiles(
                RemoveOrphanFilesRequest {
                    table,
                    older_than,
                    dry_run
                }
            )),
    ]
}

fn alter_table() -> impl Strategy<Value = Statement> {
    prop_oneof![
        (
            table_name(),
            string_map().prop_filter("at least one", |m| !m.is_empty())
        )
            .prop_map(|(table, properties)| Statement::SetTblProperties { table, properties }),
        (
            table_name(),
            prop::collection::btree_set(".{0,6}", 1..4),
            any::<bool>()
        )
            .prop_map(|(table, keys, if_exists)| Statement::UnsetTblProperties {
                table,
                keys: keys.into_iter().rev().collect(),
                if_exists
            }),
    ]
}

/// Any valid `add_bbox_columns` call: four distinct names other than the column, any finite
/// window with `min_y <= max_y` (`min_x` may exceed `max_x`), `where`/`window` only with the
/// backfill.
fn add_bbox_columns() -> impl Strategy<Value = AddBBoxColumnsRequest> {
    let named = || ident().prop_filter("not blank", |s| !s.trim().is_empty());
    let window = (coordinate(), coordinate(), coordinate(), coordinate())
        .prop_map(|(x0, y0, x1, y1)| [x0, y0.min(y1), x1, y0.max(y1)]);
    (
        table_name(),
        named(),
        prop::option::of(prop::collection::vec(named(), 4)),
        prop::option::of(predicate()),
        prop::option::of(window),
        any::<bool>(),
    )
        .prop_filter("distinct names", |(_, column, names, ..)| {
            names.as_ref().is_none_or(|n| {
                let mut all = n.clone();
                all.push(column.clone());
                all.sort();
                all.dedup();
                all.len() == 5
            })
        })
        .prop_map(|(table, column, names, filter, window, backfill)| {
            let (filter, window) = match backfill {
                true => (filter, window),
                false => (None, None),
            };
            AddBBoxColumnsRequest {
                table,
                column,
                names: names.map(|n| n.try_into().unwrap()),
                filter,
                window,
                backfill,
            }
        })
}

fn statement() -> impl Strategy<Value = Statement> {
    prop_oneof![
        add_bbox_columns().prop_map(Statement::AddBBoxColumns),
        maintenance(),
        alter_table(),
        rewrite().prop_map(Statement::Rewrite),
        create_table().prop_map(Statement::CreateTable),
        table_name().prop_map(Statement::ShowCreateTable),
        (table_name(), any::<bool>())
            .prop_map(|(table, extended)| Statement::Describe { table, extended }),
        (table_name(), prop::option::of(".{0,6}"))
            .prop_map(|(table, key)| Statement::ShowTblProperties { table, key }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(sql in "\\PC{0,200}") {
        let _ = parse(&sql);
        let _ = parse_condition(&sql);
        let _ = parse_sort_order(&sql);
    }

    #[test]
    fn mutated_statements_never_panic(
        base in prop::sample::select(VALID),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let _ = parse(&mutate(base, &mutations));
    }

    #[test]
    fn mutated_conditions_never_panic(
        base in prop::sample::select(VALID_CONDITIONS),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let _ = parse_condition(&mutate(base, &mutations));
    }

    #[test]
    fn to_sql_parses_back_to_the_same_request(statement in statement()) {
        let sql = statement.to_sql();
        let parsed = parse(&sql);
        prop_assert_eq!(parsed.as_ref().ok(), Some(&statement), "{} -> {:?}", sql, parsed.as_ref().err());
    }

    #[test]
    fn condition_to_sql_parses_back_to_the_same_predicate(predicate in predicate()) {
        let sql = predicate.to_sql();
        let parsed = parse_condition(&sql);
        prop_assert_eq!(parsed.as_ref().ok(), Some(&predicate), "{} -> {:?}", sql, parsed.as_ref().err());
    }
}

#[test]
fn the_valid_seeds_parse() {
    for sql in VALID {
        parse(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    for sql in VALID_CONDITIONS {
        parse_condition(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}
