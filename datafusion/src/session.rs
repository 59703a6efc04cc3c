//! Sessions: a SedonaDB context with a geoberg catalog registered, and the one entry point
//! that runs any statement (geoberg's table operations and engine SQL alike).

use std::sync::Arc;

use arrow_array::RecordBatch;
use datafusion::error::DataFusionError;
use datafusion::execution::FunctionRegistry;
use datafusion::execution::session_state::{SessionState, SessionStateBuilder};
use datafusion::logical_expr::{LogicalPlan, ScalarUDF};
use datafusion::physical_plan::{ExecutionPlan, collect};
use datafusion::sql::parser::DFParser;
use geoberg_sql::Statement;
use geoberg_table::{Catalog, RewriteRunner};
use sedona::context::SedonaContext;
use sedona_expr::scalar_udf::ScalarKernelRef;

use crate::catalog::GeobergCatalogProvider;
use crate::constructor_forms::constructor_kernels;
use crate::crs_literal::{ConstantGeometryCrs, CrsDeferredPredicate, SPATIAL_PREDICATES};
use crate::error::{Error, Result};
use crate::file_pair_join::FilePairJoins;
use crate::function_aliases::register_function_aliases;
use crate::geography_kernels::{GEOGRAPHY_FUNCTIONS, GeographyKernel};
use crate::geography_measures::{GEOGRAPHY_MEASURES, GeographyMeasureKernel};
use crate::join_bounds_rule::JoinBoundsPruning;
use crate::merge_star::expand_merge_stars;
use crate::metadata_tables::MetadataTablesCatalogList;
use crate::options::GeobergOptions;
use crate::proj::configure_proj;
use crate::rectangle_kernel::{RECTANGLE_FUNCTIONS, RectanglePredicate};
use crate::route::{Route, route, split_statements};
use crate::s2_cell_ids::s2_cell_ids_udf;
use crate::scan_exec::GeobergScanExec;
use crate::scan_plan::PruningSummary;
use crate::session_view::as_session_view;
use crate::subdivide::subdivide_udf;
use crate::type_planner::GeobergTypePlanner;
use crate::values_type::ValuesGeometryType;

/// A SedonaDB context whose catalog `catalog_name` is the geoberg `catalog`, made the default
/// catalog (so `SELECT * FROM ns.t` and `SELECT * FROM <catalog_name>.ns.t` both work), with
/// `geometry(<srid>)` / `geography(<srid>)` column types for `CREATE TABLE`, seed 004's rule
/// for constant geometries without CRS in spatial predicates ([`ConstantGeometryCrs`]), and a
/// fast path for points against a constant rectangle in `ST_Intersects` and its kin (same
/// results as SedonaDB's kernels, which serve every other case), and spherical kernels for
/// `ST_Intersects`, `ST_Contains`, `ST_Within`, `ST_Covers`, `ST_CoveredBy`, `ST_DWithin`
/// (metres), `ST_Distance` (metres), `ST_Area` (square metres), `ST_Length` and
/// `ST_Perimeter` (metres) on geography arguments (`geoberg-geography`'s), seed 004's
/// `ST_GeomToGeography` / `ST_GeogToGeometry` (SedonaDB's `ST_ToGeography` / `ST_ToGeometry`),
/// and the rest of the seeds' functions SedonaDB lacks: `ST_S2CellIds(geom, level)`,
/// `ST_SubDivide(geom, max_vertices)`, `ST_Envelope_Aggr` / `ST_Union_Aggr` /
/// `ST_Intersection_Aggr`, `ST_Point` over text and `ST_GeomFromWKB` of a geometry.
pub async fn sedona_context(
    catalog: Arc<dyn Catalog>,
    catalog_name: &str,
) -> Result<(SedonaContext, GeobergCatalogProvider)> {
    let context = engine_context().await?;
    // Quoted paths and external tables in the warehouse's object store (`SELECT * FROM
    // 's3://bucket/f.parquet'`) read through the catalog's own client (endpoint, credentials).
    let warehouse = catalog.warehouse();
    if let Ok((store, _)) = catalog.storage().object_store(warehouse) {
        let url = crate::store::object_store_url(warehouse)?;
        context
            .ctx
            .runtime_env()
            .register_object_store(url.as_ref(), store);
    }
    let provider = GeobergCatalogProvider::new(catalog);
    context
        .ctx
        .register_catalog(catalog_name, Arc::new(provider.clone()));
    context
        .ctx
        .state_ref()
        .write()
        .config_mut()
        .options_mut()
        .catalog
        .default_catalog = catalog_name.to_string();
    {
        let state = context.ctx.state_ref();
        let mut state = state.write();
        let catalogs =
            MetadataTablesCatalogList::new(Arc::clone(state.catalog_list()), provider.clone());
        *state = SessionStateBuilder::new_from_existing(state.clone())
            .with_catalog_list(Arc::new(catalogs))
            .build();
    }
    Ok((context, provider))
}

/// [`sedona_context`] without a catalog: SedonaDB's functions with geoberg's kernels, types,
/// rules and options, for a process that executes plans other processes planned (a remote
/// executor).
pub async fn engine_context() -> Result<SedonaContext> {
    configure_proj();
    // geoberg's row-group geo statistics for every Parquet file this process writes, whichever
    // path writes it (sound geography boxes, parquet's own for geometry with a fast path for
    // points): parquet keeps the first factory installed, and SedonaDB's context installs its
    // own unless one is there already.
    geoberg_geostats::install_parquet_geo_stats();
    let context = SedonaContext::new_local_interactive().await?;
    for (name, relation, rectangle_arg) in RECTANGLE_FUNCTIONS {
        let Some(existing) = context.scalar_udf(name)? else {
            continue;
        };
        let kernel: ScalarKernelRef = Arc::new(RectanglePredicate::new(
            relation,
            rectangle_arg,
            existing.kernels().to_vec(),
        ));
        context.append_sedona_scalar_kernels(name, kernel)?;
    }
    for (name, function) in GEOGRAPHY_FUNCTIONS {
        let kernel: ScalarKernelRef = Arc::new(GeographyKernel::new(function));
        context.append_sedona_scalar_kernels(name, kernel)?;
    }
    for (name, measure) in GEOGRAPHY_MEASURES {
        let kernel: ScalarKernelRef = Arc::new(GeographyMeasureKernel::new(measure));
        context.append_sedona_scalar_kernels(name, kernel)?;
    }
    for (name, kernel) in constructor_kernels() {
        context.append_sedona_scalar_kernels(name, kernel)?;
    }
    context.ctx.register_udf(s2_cell_ids_udf());
    context.ctx.register_udf(subdivide_udf());
    register_function_aliases(&context.ctx)?;
    // Last, over the final functions (kernels appended above re-register them).
    for name in SPATIAL_PREDICATES {
        if let Ok(inner) = context.ctx.udf(name) {
            let deferred = ScalarUDF::new_from_impl(CrsDeferredPredicate::new(inner));
            context.ctx.register_udf(deferred);
        }
    }
    let set_crs = context.ctx.udf("st_setcrs")?;
    {
        let state = context.ctx.state_ref();
        let mut state = state.write();
        let rebuilt = SessionStateBuilder::new_from_existing(state.clone())
            .with_type_planner(Arc::new(GeobergTypePlanner))
            // Last, over SedonaDB's spatial joins as finally planned.
            .with_physical_optimizer_rule(Arc::new(JoinBoundsPruning))
            .with_physical_optimizer_rule(Arc::new(FilePairJoins))
            .build();
        *state = rebuilt;
        state
            .config_mut()
            .options_mut()
            .extensions
            .insert(GeobergOptions::default());
        state.register_function_rewrite(Arc::new(ConstantGeometryCrs::new(set_crs)))?;
        state.add_analyzer_rule(Arc::new(ValuesGeometryType));
    }
    Ok(context)
}

/// What one statement returned.
#[derive(Debug, Clone)]
pub struct StatementOutput {
    /// The statement, as split from the input.
    pub statement: String,
    /// Its result rows (none for DDL).
    pub batches: Vec<RecordBatch>,
    /// Messages for the user: what a DDL statement did, a geometry column created without a
    /// declared CRS, ...
    pub notices: Vec<String>,
    /// What each geoberg table scan of the statement read and skipped (files, row groups,
    /// bytes, and why), in plan order; empty for statements that scan no geoberg table.
    pub scans: Vec<ScanReport>,
    /// Wall time from the statement's start to its last result row (parsing the whole input
    /// beforehand not included).
    pub elapsed: std::time::Duration,
}

/// What one scan of a geoberg table planned to read and to skip.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanReport {
    /// `namespace.table`.
    pub table: String,
    /// Files, row groups and bytes read and skipped, with the reasons.
    pub summary: PruningSummary,
}

/// Runs SQL over a geoberg catalog: geoberg's table operations through the table crate,
/// everything else through SedonaDB / DataFusion (see [`route`]). Names without a namespace
/// are the session's own views and external tables; a quoted path (`SELECT * FROM
/// 'f.parquet'`, or `'s3://bucket/f.parquet'` in the warehouse's object store, read with the
/// catalog's client) reads that file, as in SedonaDB and DataFusion's CLI, so SQL from untrusted
/// users reads what this process (and its credentials) can read.
///
/// ```no_run
/// # async fn f(catalog: std::sync::Arc<dyn geoberg_table::Catalog>) -> geoberg_datafusion::Result<()> {
/// let session = geoberg_datafusion::Session::new(catalog, "geoberg").await?;
/// let batches = session.sql("SELECT count(*) FROM geo.points").await?;
/// println!("{}", geoberg_datafusion::pretty_format(&batches)?);
/// # Ok(()) }
/// ```
pub struct Session {
    context: SedonaContext,
    provider: GeobergCatalogProvider,
    catalog_name: String,
    rewrite_runner: Option<Arc<dyn RewriteRunner>>,
    /// Said of every write this session runs itself (a cluster session's coordinator).
    write_notice: Option<String>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("catalog_name", &self.catalog_name)
            .field("catalog", self.provider.catalog())
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session over `catalog`, known in SQL as `catalog_name`.
    pub async fn new(catalog: Arc<dyn Catalog>, catalog_name: &str) -> Result<Session> {
        Session::with_state(catalog, catalog_name, Ok).await
    }

    /// A session whose engine state `customize` rebuilds after geoberg's set-up: another query
    /// planner (a distributed one), other settings. Statements run as in [`Session::new`].
    pub async fn with_state(
        catalog: Arc<dyn Catalog>,
        catalog_name: &str,
        customize: impl FnOnce(SessionState) -> Result<SessionState>,
    ) -> Result<Session> {
        let (context, provider) = sedona_context(catalog, catalog_name).await?;
        {
            let state = context.ctx.state_ref();
            let mut state = state.write();
            *state = customize(state.clone())?;
        }
        Ok(Session {
            context,
            provider,
            catalog_name: catalog_name.to_string(),
            rewrite_runner: None,
            write_notice: None,
        })
    }

    /// The same session running the tasks of `CREATE SPATIAL INDEX` and `rewrite_data_files`
    /// through `runner` (a cluster's executors); planning and the commit stay here.
    pub fn with_rewrite_runner(mut self, runner: Arc<dyn RewriteRunner>) -> Session {
        self.rewrite_runner = Some(runner);
        self
    }

    /// The same session adding `notice` to the notices of every write it runs itself (INSERT,
    /// UPDATE, DELETE, MERGE, CREATE TABLE AS): a cluster session says that these ran on the
    /// coordinator.
    pub fn with_write_notice(mut self, notice: impl Into<String>) -> Session {
        self.write_notice = Some(notice.into());
        self
    }

    /// The write notice, when there is one.
    fn write_notices(&self) -> Vec<String> {
        self.write_notice.iter().cloned().collect()
    }

    /// The SedonaDB context (for DataFrames, registering more tables, settings).
    pub fn context(&self) -> &SedonaContext {
        &self.context
    }

    /// The catalog's name in SQL.
    pub fn catalog_name(&self) -> &str {
        &self.catalog_name
    }

    /// Runs every statement of `text` in order and returns the rows of the last one.
    pub async fn sql(&self, text: &str) -> Result<Vec<RecordBatch>> {
        Ok(self
            .execute(text)
            .await?
            .pop()
            .map(|o| o.batches)
            .unwrap_or_default())
    }

    /// Runs every statement of `text` (split at top-level `;`) in order, stopping at the first
    /// error. Every statement is parsed first, so a syntax error anywhere runs nothing.
    pub async fn execute(&self, text: &str) -> Result<Vec<StatementOutput>> {
        let statements = split_statements(text);
        if statements.is_empty() {
            return Err(Error::Invalid {
                what: "SQL",
                value: text.trim().to_string(),
                fix: "give a statement, e.g. SELECT count(*) FROM db.t".into(),
            });
        }
        let mut routed = Vec::with_capacity(statements.len());
        for s in statements {
            let r = route(&s)?;
            match &r {
                Route::Engine => check_syntax(&s, &expand_merge_stars(&s))?,
                Route::Geoberg(parsed) => {
                    if let Statement::CreateTableAsSelect(request) = &**parsed {
                        check_syntax(&s, &request.query)?;
                    }
                }
            }
            routed.push((s, r));
        }
        let mut out = Vec::with_capacity(routed.len());
        for (statement, r) in routed {
            let start = std::time::Instant::now();
            let result = self.run(&statement, r).await;
            let elapsed = start.elapsed();
            let mut notices = self.provider.take_notices();
            let (batches, more, scans) = result?;
            notices.extend(more);
            out.push(StatementOutput {
                statement,
                batches,
                notices,
                scans,
                elapsed,
            });
        }
        Ok(out)
    }

    async fn run(
        &self,
        statement: &str,
        r: Route,
    ) -> Result<(Vec<RecordBatch>, Vec<String>, Vec<ScanReport>)> {
        match r {
            Route::Engine => {
                let expanded = expand_merge_stars(statement);
                let mut statement = expanded.as_ref();
                let session_view = match single_statement(statement) {
                    Some(parsed) => as_session_view(&parsed)?,
                    None => None,
                };
                if let Some(view) = &session_view {
                    statement = view;
                }
                if let Some(parsed) = single_statement(statement)
                    && let Some(batches) = crate::static_overwrite::run(
                        &self.context.ctx,
                        self.provider.catalog(),
                        &self.catalog_name,
                        &parsed,
                    )
                    .await?
                {
                    return Ok((batches, self.write_notices(), Vec::new()));
                }
                if let Some(parsed) = single_statement(statement)
                    && let Some((batches, notices)) = crate::row_change::run(
                        &self.context.ctx,
                        self.provider.catalog(),
                        &self.catalog_name,
                        &parsed,
                    )
                    .await?
                {
                    let mut notices = notices;
                    notices.extend(self.write_notices());
                    return Ok((batches, notices, Vec::new()));
                }
                let frame = self.context.sql(statement).await?;
                let notices = match frame.logical_plan() {
                    LogicalPlan::Dml(_) => self.write_notices(),
                    _ => Vec::new(),
                };
                let task = Arc::new(frame.task_ctx());
                let plan = frame.create_physical_plan().await?;
                let batches = collect(Arc::clone(&plan), task).await?;
                Ok((batches, notices, scan_reports(&plan)))
            }
            Route::Geoberg(parsed) => {
                if let Statement::CreateTableAsSelect(request) = &*parsed {
                    let notices = crate::create::create_table_as_select(
                        &self.context.ctx,
                        self.provider.catalog(),
                        &self.catalog_name,
                        request,
                    )
                    .await?;
                    let mut notices = notices;
                    notices.extend(self.write_notices());
                    return Ok((Vec::new(), notices, Vec::new()));
                }
                let catalog = Arc::clone(self.provider.catalog());
                let name = self.catalog_name.clone();
                let runner = self.rewrite_runner.clone();
                tokio::task::spawn_blocking(move || {
                    let mut notices = Vec::new();
                    let batches = crate::statements::run(
                        &catalog,
                        &name,
                        &parsed,
                        runner.as_deref(),
                        &mut notices,
                    )?;
                    Ok((batches, notices, Vec::new()))
                })
                .await
                .map_err(|e| Error::Unsupported {
                    what: "the statement".into(),
                    fix: format!("it stopped unexpectedly ({e}); run it again"),
                })?
            }
        }
    }
}

/// A [`Session`] for code that is not async: it owns a multi-threaded Tokio runtime and
/// waits for each statement. Use it from `main` or a CLI, never from inside async code (its
/// methods refuse to run there, with [`Error::InsideAsyncRuntime`]).
#[derive(Debug)]
pub struct BlockingSession {
    session: Session,
    runtime: Option<tokio::runtime::Runtime>,
}

impl BlockingSession {
    /// A session over `catalog`, known in SQL as `catalog_name`.
    pub fn new(catalog: Arc<dyn Catalog>, catalog_name: &str) -> Result<BlockingSession> {
        BlockingSession::from_async(|| Session::new(catalog, catalog_name))
    }

    /// A blocking session around the [`Session`] that `make` builds inside the session's own
    /// runtime (a session on a cluster, say).
    pub fn from_async<F, E>(make: impl FnOnce() -> F) -> std::result::Result<BlockingSession, E>
    where
        F: std::future::Future<Output = std::result::Result<Session, E>>,
        E: From<Error>,
    {
        ensure_blocking_allowed("from_async")?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        let session = runtime.block_on(make())?;
        Ok(BlockingSession {
            session,
            runtime: Some(runtime),
        })
    }

    /// The async session inside.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// [`Session::sql`], waiting for it.
    pub fn sql(&self, text: &str) -> Result<Vec<RecordBatch>> {
        ensure_blocking_allowed("sql")?;
        self.runtime()?.block_on(self.session.sql(text))
    }

    /// [`Session::execute`], waiting for it.
    pub fn execute(&self, text: &str) -> Result<Vec<StatementOutput>> {
        ensure_blocking_allowed("execute")?;
        self.runtime()?.block_on(self.session.execute(text))
    }

    fn runtime(&self) -> Result<&tokio::runtime::Runtime> {
        // Present from `new` until `drop`.
        self.runtime
            .as_ref()
            .ok_or(Error::InsideAsyncRuntime { method: "drop" })
    }
}

impl Drop for BlockingSession {
    fn drop(&mut self) {
        // Shutting down without waiting is allowed anywhere, even inside another runtime.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

fn ensure_blocking_allowed(method: &'static str) -> Result<()> {
    match tokio::runtime::Handle::try_current() {
        Ok(_) => Err(Error::InsideAsyncRuntime { method }),
        Err(_) => Ok(()),
    }
}

/// The geoberg scans of an executed plan, in plan order.
fn scan_reports(plan: &Arc<dyn ExecutionPlan>) -> Vec<ScanReport> {
    let mut out = Vec::new();
    let mut stack = vec![Arc::clone(plan)];
    while let Some(node) = stack.pop() {
        if let Some(scan) = node.downcast_ref::<GeobergScanExec>() {
            out.push(ScanReport {
                table: scan.spec().table.clone(),
                summary: scan.spec().summary.clone(),
            });
        }
        stack.extend(node.children().into_iter().rev().cloned());
    }
    out
}

/// Fails with the engine parser's message, naming `statement`, when `sql` (the statement, or
/// the part of it the engine runs) does not parse; nothing has run yet.
fn check_syntax(statement: &str, sql: &str) -> Result<()> {
    match DFParser::parse_sql(sql) {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::Syntax {
            statement: statement.trim().to_string(),
            message: match e {
                DataFusionError::SQL(e, _) => e.to_string(),
                other => other.to_string(),
            },
        }),
    }
}

/// The one SQL statement of `text` (DataFusion's own statements, such as `CREATE EXTERNAL
/// TABLE`, are not SQL statements: `None`).
fn single_statement(text: &str) -> Option<datafusion::sql::sqlparser::ast::Statement> {
    let mut parsed = DFParser::parse_sql(text).ok()?;
    match (parsed.pop_front(), parsed.is_empty()) {
        (Some(datafusion::sql::parser::Statement::Statement(s)), true) => Some(*s),
        _ => None,
    }
}
