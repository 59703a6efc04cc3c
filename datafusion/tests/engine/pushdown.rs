//! Push-down never changes a result: over random tables (several files, small row groups,
//! NULLs and NaN), random windows and random predicates, the rows the engine returns with
//! push-down equal the rows without it (the same provider, filters refused) and the rows a
//! brute-force evaluation of the predicate over every row picks.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::common::{Row, Warehouse, append_files, create_points, ids};
use arrow_schema::SchemaRef;
use async_trait::async_trait;
use datafusion::catalog::Session as EngineSession;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::Result as DfResult;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use geoberg_datafusion::{BlockingSession, GeobergTableProvider};
use proptest::prelude::*;

/// The same table with every filter refused: DataFusion filters all rows itself.
#[derive(Debug)]
struct NoPushdown(Arc<dyn TableProvider>);

#[async_trait]
impl TableProvider for NoPushdown {
    fn schema(&self) -> SchemaRef {
        self.0.schema()
    }
    fn table_type(&self) -> TableType {
        TableType::Base
    }
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        Ok(vec![
            TableProviderFilterPushDown::Unsupported;
            filters.len()
        ])
    }
    async fn scan(
        &self,
        state: &dyn EngineSession,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        self.0.scan(state, projection, &[], limit).await
    }
}

struct Fixture {
    warehouse: Warehouse,
    session: BlockingSession,
    tables: AtomicUsize,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let warehouse = Warehouse::new();
        let session = warehouse.session();
        Fixture {
            warehouse,
            session,
            tables: AtomicUsize::new(0),
        }
    })
}

/// A predicate the test can both write as SQL and evaluate itself.
#[derive(Debug, Clone)]
enum Pred {
    /// `ST_Intersects(geom, <envelope>)`, spelled several ways.
    Intersects([i32; 4], Spelling),
    /// `ST_Contains(<envelope>, geom)`.
    Contains([i32; 4]),
    /// `ST_Within(geom, <envelope>)`.
    Within([i32; 4]),
    /// `ST_DWithin(geom, ST_Point(x, y), d)`.
    DWithin(i32, i32, i32),
    /// `ST_Distance(geom, ST_Point(x, y)) <= d`.
    Distance(i32, i32, i32),
    /// `n <op> k`.
    N(&'static str, i32),
    /// `id BETWEEN a AND b`.
    IdBetween(i64, i64),
    /// `state IN (...)`.
    StateIn(Vec<&'static str>),
    /// `state IS NULL`.
    StateIsNull,
    /// `x >= v`.
    XAtLeast(f64),
    And(Box<Pred>, Box<Pred>),
    Or(Box<Pred>, Box<Pred>),
    Not(Box<Pred>),
}

#[derive(Debug, Clone, Copy)]
enum Spelling {
    Envelope,
    EnvelopeWithSrid,
    WktFlipped,
}

impl Pred {
    fn sql(&self) -> String {
        let env = |b: &[i32; 4]| format!("ST_MakeEnvelope({}, {}, {}, {})", b[0], b[1], b[2], b[3]);
        match self {
            Pred::Intersects(b, Spelling::Envelope) => format!("ST_Intersects(geom, {})", env(b)),
            Pred::Intersects(b, Spelling::EnvelopeWithSrid) => format!(
                "ST_Intersects(geom, ST_MakeEnvelope({}, {}, {}, {}, 4326))",
                b[0], b[1], b[2], b[3]
            ),
            Pred::Intersects(b, Spelling::WktFlipped) => format!(
                "ST_Intersects(ST_GeomFromText('POLYGON (({a} {b}, {c} {b}, {c} {d}, {a} {d}, {a} {b}))'), geom)",
                a = b[0],
                b = b[1],
                c = b[2],
                d = b[3]
            ),
            Pred::Contains(b) => format!("ST_Contains({}, geom)", env(b)),
            Pred::Within(b) => format!("ST_Within(geom, {})", env(b)),
            Pred::DWithin(x, y, d) => format!("ST_DWithin(geom, ST_Point({x}, {y}), {d})"),
            Pred::Distance(x, y, d) => format!("ST_Distance(geom, ST_Point({x}, {y})) <= {d}"),
            Pred::N(op, k) => format!("n {op} {k}"),
            Pred::IdBetween(a, b) => format!("id BETWEEN {a} AND {b}"),
            Pred::StateIn(v) => format!(
                "state IN ({})",
                v.iter()
                    .map(|s| format!("'{s}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Pred::StateIsNull => "state IS NULL".into(),
            Pred::XAtLeast(v) => format!("x >= {v:?}"),
            Pred::And(a, b) => format!("({} AND {})", a.sql(), b.sql()),
            Pred::Or(a, b) => format!("({} OR {})", a.sql(), b.sql()),
            Pred::Not(a) => format!("(NOT {})", a.sql()),
        }
    }

    /// Whether a NOT sits above `state IN (..) AND state IN (..)` with disjoint lists.
    /// DataFusion 54's simplifier rewrites that conjunction to `false`, which is wrong for a
    /// NULL `state` (it is NULL, and NOT keeps it NULL): apache/datafusion#24258 fixes it
    /// upstream. The engine plans what DataFusion simplified, so such cases are skipped.
    fn hits_datafusion_24258(&self) -> bool {
        match self {
            Pred::Not(p) => p.has_disjoint_in_lists() || p.hits_datafusion_24258(),
            Pred::And(a, b) | Pred::Or(a, b) => {
                a.hits_datafusion_24258() || b.hits_datafusion_24258()
            }
            _ => false,
        }
    }

    /// Whether some AND chain below holds two `state IN` lists with no value in common.
    fn has_disjoint_in_lists(&self) -> bool {
        fn conjuncts<'a>(p: &'a Pred, out: &mut Vec<&'a Pred>) {
            match p {
                Pred::And(a, b) => {
                    conjuncts(a, out);
                    conjuncts(b, out);
                }
                other => out.push(other),
            }
        }
        let mut chain = Vec::new();
        conjuncts(self, &mut chain);
        let lists: Vec<&Vec<&str>> = chain
            .iter()
            .filter_map(|p| match p {
                Pred::StateIn(v) => Some(v),
                _ => None,
            })
            .collect();
        let disjoint = lists.iter().enumerate().any(|(i, a)| {
            lists[i + 1..]
                .iter()
                .any(|b| a.iter().all(|v| !b.contains(v)))
        });
        disjoint
            || match self {
                Pred::And(a, b) | Pred::Or(a, b) => {
                    a.has_disjoint_in_lists() || b.has_disjoint_in_lists()
                }
                Pred::Not(p) => p.has_disjoint_in_lists(),
                _ => false,
            }
    }

    /// SQL's three-valued result for one row, computed without the engine.
    fn eval(&self, r: &Row) -> Option<bool> {
        let inside = |b: &[i32; 4], strict: bool| {
            r.point.map(|(x, y)| {
                let (a, bb, c, d) = (b[0] as f64, b[1] as f64, b[2] as f64, b[3] as f64);
                match strict {
                    false => a <= x && x <= c && bb <= y && y <= d,
                    true => a < x && x < c && bb < y && y < d,
                }
            })
        };
        let near = |px: i32, py: i32, d: i32| {
            r.point.map(|(x, y)| {
                let (dx, dy) = (x - px as f64, y - py as f64);
                dx * dx + dy * dy <= (d * d) as f64
            })
        };
        match self {
            Pred::Intersects(b, _) => inside(b, false),
            Pred::Contains(b) | Pred::Within(b) => inside(b, true),
            Pred::DWithin(x, y, d) | Pred::Distance(x, y, d) => near(*x, *y, *d),
            Pred::N(op, k) => Some(match *op {
                "<" => r.n < *k,
                "<=" => r.n <= *k,
                "=" => r.n == *k,
                "<>" => r.n != *k,
                ">" => r.n > *k,
                _ => r.n >= *k,
            }),
            Pred::IdBetween(a, b) => Some(*a <= r.id && r.id <= *b),
            Pred::StateIn(v) => r.state.as_ref().map(|s| v.contains(&s.as_str())),
            Pred::StateIsNull => Some(r.state.is_none()),
            // DataFusion orders floats totally: NaN is above every number.
            Pred::XAtLeast(v) => Some(r.x.total_cmp(v) != std::cmp::Ordering::Less),
            Pred::And(a, b) => match (a.eval(r), b.eval(r)) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            Pred::Or(a, b) => match (a.eval(r), b.eval(r)) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            Pred::Not(a) => a.eval(r).map(|v| !v),
        }
    }
}

fn envelope() -> impl Strategy<Value = [i32; 4]> {
    (-2..22i32, -2..22i32, 1..12i32, 1..12i32).prop_map(|(x, y, w, h)| [x, y, x + w, y + h])
}

fn leaf() -> impl Strategy<Value = Pred> {
    let spelling = prop_oneof![
        Just(Spelling::Envelope),
        Just(Spelling::EnvelopeWithSrid),
        Just(Spelling::WktFlipped)
    ];
    prop_oneof![
        3 => (envelope(), spelling).prop_map(|(b, s)| Pred::Intersects(b, s)),
        1 => envelope().prop_map(Pred::Contains),
        1 => envelope().prop_map(Pred::Within),
        1 => (0..20i32, 0..20i32, 0..6i32).prop_map(|(x, y, d)| Pred::DWithin(x, y, d)),
        1 => (0..20i32, 0..20i32, 0..6i32).prop_map(|(x, y, d)| Pred::Distance(x, y, d)),
        1 => (prop::sample::select(vec!["<", "<=", "=", "<>", ">", ">="]), -1..11i32)
            .prop_map(|(op, k)| Pred::N(op, k)),
        1 => (0..120i64, 0..60i64).prop_map(|(a, w)| Pred::IdBetween(a, a + w)),
        1 => prop::sample::subsequence(vec!["a", "b", "c"], 1..3).prop_map(Pred::StateIn),
        1 => Just(Pred::StateIsNull),
        1 => (-2..12i32).prop_map(|v| Pred::XAtLeast(v as f64 / 2.0)),
    ]
}

fn predicate() -> impl Strategy<Value = Pred> {
    leaf().prop_recursive(2, 8, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Pred::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Pred::Or(Box::new(a), Box::new(b))),
            inner.prop_map(|a| Pred::Not(Box::new(a))),
        ]
    })
}

fn row() -> impl Strategy<Value = (i32, f64, Option<&'static str>, Option<(f64, f64)>)> {
    (
        0..10i32,
        prop_oneof![9 => (0..20i32).prop_map(|v| v as f64 / 2.0), 1 => Just(f64::NAN)],
        prop_oneof![
            3 => prop::sample::select(vec!["a", "b", "c"]).prop_map(Some),
            1 => Just(None)
        ],
        prop_oneof![
            // Clustered by file below; an occasional NULL geometry.
            9 => (0..20i32, 0..20i32).prop_map(|(x, y)| Some((x as f64, y as f64))),
            1 => Just(None)
        ],
    )
}

/// Files of rows, each file's points pulled into one corner so that file and row-group boxes
/// differ and pruning has something to skip.
fn files() -> impl Strategy<Value = Vec<Vec<Row>>> {
    prop::collection::vec((prop::collection::vec(row(), 0..30), 0..4u8), 1..6).prop_map(|files| {
        let mut id = 0;
        files
            .into_iter()
            .map(|(rows, corner)| {
                rows.into_iter()
                    .map(|(n, x, state, point)| {
                        id += 1;
                        let shift = |v: f64, high: bool| match high {
                            true => 10.0 + (v / 2.0).floor(),
                            false => (v / 2.0).floor(),
                        };
                        Row {
                            id,
                            n,
                            x,
                            state: state.map(str::to_string),
                            point: point.map(|(x, y)| {
                                (shift(x, corner & 1 == 1), shift(y, corner & 2 == 2))
                            }),
                        }
                    })
                    .collect()
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn pushdown_on_equals_pushdown_off_equals_brute_force(
        files in files(),
        row_group_rows in 2..12usize,
        predicates in prop::collection::vec(predicate(), 1..4),
    ) {
        let f = fixture();
        let name = format!("t{}", f.tables.fetch_add(1, Ordering::Relaxed));
        let table = create_points(&f.warehouse, &name, 4326, row_group_rows);
        let table = append_files(table, &files, 4326);
        let off = Arc::new(NoPushdown(Arc::new(GeobergTableProvider::try_new(table).unwrap())));
        f.session
            .session()
            .context()
            .ctx
            .register_table(format!("datafusion.public.{name}"), off)
            .unwrap();
        let rows: Vec<&Row> = files.iter().flatten().collect();
        for p in predicates.iter().filter(|p| !p.hits_datafusion_24258()) {
            let sql = p.sql();
            let on = ids(&f.session.sql(&format!("SELECT id FROM geo.{name} WHERE {sql}")).unwrap());
            let off = ids(
                &f.session
                    .sql(&format!("SELECT id FROM datafusion.public.{name} WHERE {sql}"))
                    .unwrap(),
            );
            let mut brute: Vec<i64> =
                rows.iter().filter(|r| p.eval(r) == Some(true)).map(|r| r.id).collect();
            brute.sort_unstable();
            prop_assert_eq!(&on, &off, "push-down changed the result of {}", sql);
            prop_assert_eq!(&on, &brute, "engine disagrees with brute force on {}", sql);
        }
    }
}
