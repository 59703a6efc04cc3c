//! `CREATE SPATIAL INDEX` and `rewrite_data_files` on a cluster: the coordinator plans and
//! commits, the executors run the key-range tasks.
//!
//! [`ClusterRewriteRunner`] splits a [`RewriteJob`]'s tasks into parts (at most
//! `max-concurrent-file-group-rewrites` of them, Iceberg's bound on file groups rewritten at
//! once) and sends the scheduler a query over a [`RewriteTasksTable`]: one partition per part.
//! The scheduler plans it as a [`RewriteTasksExec`], which Ballista runs as one stage of tasks on
//! the executors (retrying a task whose executor is lost). Each task reads its inputs from the
//! object store, writes its files and returns one row: its [`RewriteJobOutcome`] as JSON. The
//! coordinator checks that the parts ran every task once and commits once
//! ([`geoberg_table::Rewrite::runner`]).

use std::fmt;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use async_trait::async_trait;
use datafusion::catalog::Session as EngineSession;
use datafusion::common::{DataFusionError, exec_err};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::Result;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
};
use datafusion::prelude::SessionContext;
use geoberg_table::{RewriteJob, RewriteJobOutcome, RewriteRunner, Storage};
use serde::{Deserialize, Serialize};

/// The column of a [`RewriteTasksExec`]'s rows: a part's outcome as JSON.
const OUTCOME_COLUMN: &str = "rewrite_outcome";

/// A rewrite job and how its tasks are split into parts: what the codecs carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewriteTasks {
    /// The job (plan, table version, run id).
    pub job: RewriteJob,
    /// Task ids per part; part `i` is partition `i`.
    pub parts: Vec<Vec<usize>>,
}

impl RewriteTasks {
    /// The encoded form (JSON).
    pub fn encode(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(self)
            .map_err(|e| DataFusionError::Plan(format!("cannot encode a rewrite job: {e}")))
    }

    /// What [`RewriteTasks::encode`] wrote.
    pub fn decode(bytes: &[u8]) -> Result<RewriteTasks> {
        serde_json::from_slice(bytes)
            .map_err(|e| DataFusionError::Plan(format!("encoded rewrite job: {e}")))
    }

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![Field::new(
            OUTCOME_COLUMN,
            DataType::Utf8,
            false,
        )]))
    }
}

/// The table a coordinator sends to the scheduler: scanning it runs the job's parts.
#[derive(Debug, Clone)]
pub struct RewriteTasksTable {
    tasks: Arc<RewriteTasks>,
}

impl RewriteTasksTable {
    /// The table of `tasks`.
    pub fn new(tasks: RewriteTasks) -> Self {
        RewriteTasksTable {
            tasks: Arc::new(tasks),
        }
    }

    /// The job and its parts.
    pub fn tasks(&self) -> &RewriteTasks {
        &self.tasks
    }
}

#[async_trait]
impl TableProvider for RewriteTasksTable {
    fn schema(&self) -> SchemaRef {
        RewriteTasks::schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Temporary
    }

    async fn scan(
        &self,
        _state: &dyn EngineSession,
        _projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(RewriteTasksExec::new(Arc::clone(&self.tasks))))
    }
}

/// Runs part `i` of a rewrite job as partition `i`: one row, the part's outcome.
#[derive(Debug)]
pub struct RewriteTasksExec {
    tasks: Arc<RewriteTasks>,
    properties: Arc<PlanProperties>,
}

impl RewriteTasksExec {
    /// The node running `tasks`' parts.
    pub fn new(tasks: Arc<RewriteTasks>) -> Self {
        let properties = PlanProperties::new(
            EquivalenceProperties::new(RewriteTasks::schema()),
            Partitioning::UnknownPartitioning(tasks.parts.len().max(1)),
            EmissionType::Final,
            Boundedness::Bounded,
        );
        RewriteTasksExec {
            tasks,
            properties: Arc::new(properties),
        }
    }

    /// The job and its parts.
    pub fn tasks(&self) -> &RewriteTasks {
        &self.tasks
    }
}

impl DisplayAs for RewriteTasksExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RewriteTasksExec: table={}, tasks={}, parts={}",
            self.tasks.job.table,
            self.tasks.job.tasks.len(),
            self.tasks.parts.len()
        )
    }
}

impl ExecutionPlan for RewriteTasksExec {
    fn name(&self) -> &str {
        "RewriteTasksExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !children.is_empty() {
            return exec_err!("RewriteTasksExec has no children");
        }
        Ok(self)
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let Some(part) = self.tasks.parts.get(partition).cloned() else {
            return exec_err!(
                "RewriteTasksExec has {} parts, not {}",
                self.tasks.parts.len(),
                partition + 1
            );
        };
        let tasks = Arc::clone(&self.tasks);
        let schema = RewriteTasks::schema();
        let out_schema = Arc::clone(&schema);
        let run = futures::stream::once(async move {
            // The executor's storage: the object store of the warehouse, credentials from its
            // environment (as `run_executor` opens it).
            let outcome = tokio::task::spawn_blocking(move || {
                let mut outcome = tasks.job.run_tasks(&Storage::new(), &part)?;
                outcome.worker = format!("executor {}", outcome.worker);
                Ok::<_, geoberg_table::Error>(outcome)
            })
            .await
            .map_err(|e| DataFusionError::External(Box::new(e)))?
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
            let json = serde_json::to_string(&outcome)
                .map_err(|e| DataFusionError::Execution(format!("rewrite outcome: {e}")))?;
            Ok(RecordBatch::try_new(
                out_schema,
                vec![Arc::new(StringArray::from(vec![json]))],
            )?)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, run)))
    }
}

/// Runs a rewrite's tasks on the cluster a session's context sends queries to.
pub struct ClusterRewriteRunner {
    context: SessionContext,
    scheduler: String,
    runtime: tokio::runtime::Handle,
}

impl fmt::Debug for ClusterRewriteRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterRewriteRunner")
            .field("scheduler", &self.scheduler)
            .finish_non_exhaustive()
    }
}

impl ClusterRewriteRunner {
    /// A runner sending its queries through `context` (a cluster session's) to `scheduler`
    /// (`host:port`, for messages), waiting on `runtime`.
    pub fn new(
        context: SessionContext,
        scheduler: String,
        runtime: tokio::runtime::Handle,
    ) -> Self {
        ClusterRewriteRunner {
            context,
            scheduler,
            runtime,
        }
    }

    async fn run_parts(&self, tasks: RewriteTasks) -> Result<Vec<RecordBatch>> {
        let table = RewriteTasksTable::new(tasks);
        self.context.read_table(Arc::new(table))?.collect().await
    }
}

impl RewriteRunner for ClusterRewriteRunner {
    fn run(&self, job: &RewriteJob) -> geoberg_table::Result<Vec<RewriteJobOutcome>> {
        let failed = |reason: String| geoberg_table::Error::RewriteRunner {
            runner: format!("the cluster of the scheduler at {}", self.scheduler),
            reason,
            fix: "check that every executor reaches the warehouse (the same storage credentials \
                  as the scheduler) and runs this geoberg version, then run the statement again"
                .into(),
        };
        let parts = job.split(job.plan.options.max_concurrent_file_group_rewrites);
        let tasks = RewriteTasks {
            job: job.clone(),
            parts,
        };
        // Called from a blocking thread of the session's runtime (statements run there).
        let batches = self
            .runtime
            .block_on(self.run_parts(tasks))
            .map_err(|e| failed(e.to_string()))?;
        let mut outcomes = Vec::new();
        for batch in &batches {
            let Some(column) = batch.column(0).as_any().downcast_ref::<StringArray>() else {
                return Err(failed("the executors returned no outcome column".into()));
            };
            for i in 0..column.len() {
                let outcome = serde_json::from_str(column.value(i))
                    .map_err(|e| failed(format!("an executor's outcome does not parse: {e}")))?;
                outcomes.push(outcome);
            }
        }
        Ok(outcomes)
    }
}
