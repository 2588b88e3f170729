//! `SharedSubplanExec`: runs a [`SharedSubplan`](super::shared::SharedSubplan) occurrence.
//! The first occurrence to execute evaluates its input (every partition) into the shared cell;
//! each occurrence then streams the cell's batches as one partition.

use super::shared::SharedCell;
use datafusion::common::Result;
use datafusion::execution::memory_pool::MemoryConsumer;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, Partitioning};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    collect, DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use futures::{StreamExt, TryStreamExt};
use std::fmt;
use std::sync::Arc;

#[derive(Debug)]
pub struct SharedSubplanExec {
    inner: Arc<dyn ExecutionPlan>,
    id: usize,
    consumers: usize,
    cell: Arc<SharedCell>,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl SharedSubplanExec {
    pub fn new(
        inner: Arc<dyn ExecutionPlan>,
        id: usize,
        consumers: usize,
        cell: Arc<SharedCell>,
    ) -> Self {
        let cache = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(inner.schema()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        ));
        Self {
            inner,
            id,
            consumers,
            cell,
            cache,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// This occurrence reading `cell` instead (a kept plan's new run: see
    /// `operators::params::bind_physical_plan`).
    pub fn with_cell(&self, cell: Arc<SharedCell>) -> Self {
        Self {
            cell,
            metrics: ExecutionPlanMetricsSet::new(),
            inner: self.inner.clone(),
            cache: self.cache.clone(),
            ..*self
        }
    }

    pub fn cell(&self) -> &Arc<SharedCell> {
        &self.cell
    }
}

impl DisplayAs for SharedSubplanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "SharedSubplanExec: id={}, consumers={}",
            self.id, self.consumers
        )
    }
}

impl ExecutionPlan for SharedSubplanExec {
    fn name(&self) -> &str {
        "SharedSubplanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.cache
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.inner]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // One partition of the input's schema, whatever the input: the properties stay.
        Ok(Arc::new(Self {
            inner: super::only_child("SharedSubplanExec", children)?,
            id: self.id,
            consumers: self.consumers,
            cell: self.cell.clone(),
            cache: self.cache.clone(),
            metrics: ExecutionPlanMetricsSet::new(),
        }))
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return datafusion::common::internal_err!("SharedSubplanExec has one partition");
        }
        // `evaluations` counts the runs of the subplan (1 per query however many read it).
        let evaluations = MetricBuilder::new(&self.metrics).counter("evaluations", partition);
        let cell = self.cell.clone();
        let inner = self.inner.clone();
        let schema = self.inner.schema();
        let batches = futures::stream::once(async move {
            let batches = cell
                .batches
                .get_or_try_init(|| async {
                    evaluations.add(1);
                    let pool = context.memory_pool().clone();
                    let batches = collect(inner, context).await?;
                    let reservation = MemoryConsumer::new("SharedSubplan").register(&pool);
                    reservation
                        .try_grow(batches.iter().map(|b| b.get_array_memory_size()).sum())?;
                    Ok::<_, datafusion::error::DataFusionError>((batches, reservation))
                })
                .await?;
            Ok::<_, datafusion::error::DataFusionError>(batches.0.clone())
        })
        .map_ok(|bs| futures::stream::iter(bs.into_iter().map(Ok)))
        .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            schema,
            batches.boxed(),
        )))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
}
