//! Our operators in distributed plans. The scheduler plans the graph nodes as usual and keeps,
//! with each operator, the message of the logical node it came from ([`PlannedExec`]); an
//! executor decodes that node and plans it again over its own copy of the graph (the indexes
//! and columns an operator reads are this process's, never sent), with the LIMIT absorbed.
//! Empty relations with columns travel as [`EmptyRows`] (DataFusion's serialization drops
//! their columns).

use super::block_on;
use super::codec::{state_of, GraphLogicalCodec};
use super::messages::df_schema_bytes as df_schema_msg;
use crate::operators::planner::GraphExtensionPlanner;
use async_trait::async_trait;
use datafusion::common::{DFSchemaRef, DataFusionError, Result, Statistics};
use datafusion::execution::context::{QueryPlanner, SessionState};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{
    EmptyRelation, Expr, Extension, LogicalPlan, UserDefinedLogicalNode, UserDefinedLogicalNodeCore,
};
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::execution_plan::CardinalityEffect;
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, PlanProperties,
    SendableRecordBatchStream,
};
use datafusion::physical_planner::{DefaultPhysicalPlanner, ExtensionPlanner, PhysicalPlanner};
use std::fmt;
use std::sync::Arc;

/// A graph operator with the logical node it was planned from (as its codec message).
#[derive(Debug)]
pub struct PlannedExec {
    pub inner: Arc<dyn ExecutionPlan>,
    /// The logical node's message (`GraphLogicalCodec::encode_node`).
    pub node: Vec<u8>,
    /// The logical inputs' schemas (datafusion-proto `DfSchema`s).
    pub inputs: Vec<Vec<u8>>,
}

impl PlannedExec {
    fn over(&self, inner: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
        Arc::new(Self {
            inner,
            node: self.node.clone(),
            inputs: self.inputs.clone(),
        })
    }
}

impl DisplayAs for PlannedExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        self.inner.fmt_as(t, f)
    }
}

impl ExecutionPlan for PlannedExec {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.inner.properties()
    }

    fn required_input_distribution(&self) -> Vec<Distribution> {
        self.inner.required_input_distribution()
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        self.inner.maintains_input_order()
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        self.inner.benefits_from_input_partitioning()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        self.inner.children()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self.over(self.inner.clone().with_new_children(children)?))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        self.inner.execute(partition, context)
    }

    fn metrics(&self) -> Option<MetricsSet> {
        self.inner.metrics()
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        self.inner.partition_statistics(partition)
    }

    fn supports_limit_pushdown(&self) -> bool {
        self.inner.supports_limit_pushdown()
    }

    fn with_fetch(&self, limit: Option<usize>) -> Option<Arc<dyn ExecutionPlan>> {
        self.inner.with_fetch(limit).map(|i| self.over(i))
    }

    fn fetch(&self) -> Option<usize> {
        self.inner.fetch()
    }

    fn cardinality_effect(&self) -> CardinalityEffect {
        self.inner.cardinality_effect()
    }
}

/// No rows, of a schema: an empty relation with columns as it travels to a scheduler.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EmptyRows {
    pub schema: DFSchemaRef,
}

impl PartialOrd for EmptyRows {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        (self == other).then_some(std::cmp::Ordering::Equal)
    }
}

impl UserDefinedLogicalNodeCore for EmptyRows {
    fn name(&self) -> &str {
        "EmptyRows"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    fn expressions(&self) -> Vec<Expr> {
        vec![]
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "EmptyRows")
    }

    fn with_exprs_and_inputs(&self, _exprs: Vec<Expr>, _inputs: Vec<LogicalPlan>) -> Result<Self> {
        Ok(self.clone())
    }
}

/// `plan` with its empty relations that have columns as [`EmptyRows`].
pub fn with_empty_rows(plan: LogicalPlan) -> Result<LogicalPlan> {
    use datafusion::common::tree_node::{Transformed, TreeNode};
    Ok(plan
        .transform_up(|p| match p {
            LogicalPlan::EmptyRelation(e)
                if !e.produce_one_row && !e.schema.fields().is_empty() =>
            {
                let node = Arc::new(EmptyRows { schema: e.schema });
                Ok(Transformed::yes(LogicalPlan::Extension(Extension { node })))
            }
            p => Ok(Transformed::no(p)),
        })?
        .data)
}

/// The query planner of clients: Ballista's, given plans with [`EmptyRows`].
#[derive(Debug)]
pub struct ClientPlanner {
    pub inner: Arc<dyn QueryPlanner + Send + Sync>,
}

#[async_trait]
impl QueryPlanner for ClientPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session_state: &SessionState,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = with_empty_rows(logical_plan.clone())?;
        self.inner.create_physical_plan(&plan, session_state).await
    }
}

/// Plans the graph nodes (`GraphExtensionPlanner`) and keeps their messages.
#[derive(Debug)]
struct RecordingPlanner {
    codec: Arc<GraphLogicalCodec>,
}

#[async_trait]
impl ExtensionPlanner for RecordingPlanner {
    async fn plan_extension(
        &self,
        planner: &dyn PhysicalPlanner,
        node: &dyn UserDefinedLogicalNode,
        logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        state: &SessionState,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        if let Some(e) = node.as_any().downcast_ref::<EmptyRows>() {
            let schema = Arc::new(e.schema.as_arrow().clone());
            return Ok(Some(Arc::new(EmptyExec::new(schema))));
        }
        let planned = GraphExtensionPlanner
            .plan_extension(planner, node, logical_inputs, physical_inputs, state)
            .await?;
        let (Some(inner), Some(msg)) = (planned, self.codec.encode_node(node)?) else {
            return Ok(None);
        };
        let inputs = logical_inputs
            .iter()
            .map(|i| df_schema_msg(i.schema()))
            .collect::<Result<_>>()?;
        Ok(Some(Arc::new(PlannedExec {
            inner,
            node: msg,
            inputs,
        })))
    }
}

/// The query planner of schedulers: DataFusion's, our operators kept with their messages.
#[derive(Debug)]
pub struct DistributedQueryPlanner {
    codec: Arc<GraphLogicalCodec>,
}

impl Default for DistributedQueryPlanner {
    fn default() -> Self {
        Self {
            codec: Arc::new(GraphLogicalCodec::new()),
        }
    }
}

#[async_trait]
impl QueryPlanner for DistributedQueryPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session_state: &SessionState,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let recorder = RecordingPlanner {
            codec: self.codec.clone(),
        };
        DefaultPhysicalPlanner::with_extension_planners(vec![Arc::new(recorder)])
            .create_physical_plan(logical_plan, session_state)
            .await
    }
}

/// A graph operator from its message, over decoded `inputs` (an executor's side).
pub fn replan(
    codec: &Arc<GraphLogicalCodec>,
    node: Vec<u8>,
    schemas: &[DFSchemaRef],
    inputs: &[Arc<dyn ExecutionPlan>],
    fetch: Option<usize>,
    ctx: &TaskContext,
) -> Result<Arc<dyn ExecutionPlan>> {
    let logical: Vec<LogicalPlan> = schemas
        .iter()
        .map(|s| {
            LogicalPlan::EmptyRelation(EmptyRelation {
                produce_one_row: false,
                schema: s.clone(),
            })
        })
        .collect();
    let decoded = codec
        .decode_node(&node, &logical, ctx)?
        .ok_or_else(|| DataFusionError::Internal("not a graph operator's message".into()))?;
    let state = state_of(ctx);
    let inputs_owned = inputs.to_vec();
    let planned = block_on(|| async {
        let refs: Vec<&LogicalPlan> = logical.iter().collect();
        GraphExtensionPlanner
            .plan_extension(
                &DefaultPhysicalPlanner::default(),
                decoded.as_ref(),
                &refs,
                &inputs_owned,
                &state,
            )
            .await
    })?
    .ok_or_else(|| DataFusionError::Internal("a graph node no planner plans".into()))?;
    let planned = match fetch {
        Some(n) => planned.with_fetch(Some(n)).unwrap_or(planned),
        None => planned,
    };
    Ok(Arc::new(PlannedExec {
        inner: planned,
        node,
        inputs: schemas
            .iter()
            .map(|s| df_schema_msg(s))
            .collect::<Result<_>>()?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion::datasource::memory::MemorySourceConfig;
    use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;

    /// `PlannedExec` is its operator in every way a plan sees, and keeps the logical node it
    /// carries for the cluster through new children and a limit.
    #[tokio::test]
    async fn a_planned_exec_is_its_operator_and_keeps_its_node() {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from(vec![1, 2, 3]))],
        )
        .unwrap();
        let source = MemorySourceConfig::try_new_exec(&[vec![batch]], schema, None).unwrap();
        let inner: Arc<dyn ExecutionPlan> = Arc::new(CoalescePartitionsExec::new(source.clone()));
        let planned: Arc<dyn ExecutionPlan> = Arc::new(PlannedExec {
            inner: inner.clone(),
            node: vec![7, 8],
            inputs: vec![vec![9]],
        });
        assert_eq!(planned.name(), inner.name());
        let shown = |p: &Arc<dyn ExecutionPlan>| {
            datafusion::physical_plan::displayable(p.as_ref())
                .indent(false)
                .to_string()
        };
        assert_eq!(shown(&planned), shown(&inner));
        let ctx = Arc::new(TaskContext::default());
        let rows = |p: Arc<dyn ExecutionPlan>| {
            let ctx = ctx.clone();
            async move {
                let b = datafusion::physical_plan::collect(p, ctx).await.unwrap();
                b.iter().map(|b| b.num_rows()).sum::<usize>()
            }
        };
        assert_eq!(rows(planned.clone()).await, 3);
        let kept = |p: &Arc<dyn ExecutionPlan>| {
            let p = p.downcast_ref::<PlannedExec>().expect("still planned");
            (p.node.clone(), p.inputs.clone())
        };
        let renewed = planned.clone().with_new_children(vec![source]).unwrap();
        assert_eq!(kept(&renewed), (vec![7, 8], vec![vec![9]]));
        assert_eq!(rows(renewed).await, 3);
        let limited = planned
            .with_fetch(Some(1))
            .expect("its operator takes a limit");
        assert_eq!(kept(&limited), (vec![7, 8], vec![vec![9]]));
        assert_eq!(rows(limited).await, 1);
    }
}
