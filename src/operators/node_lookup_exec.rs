//! `NodeLookupExec`: maps each input row's node key to its ordinal and takes the node columns;
//! rows whose key is not a node are dropped (a null key is kept, with null columns, where the
//! keys are known to be nodes or null).

use crate::csr::{as_i64, NodeKeys, TableColumns};
use arrow::array::{Array, ArrayRef, RecordBatch, UInt32Array};
use arrow::datatypes::SchemaRef;
use datafusion::common::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use futures::StreamExt;
use std::fmt;
use std::sync::{Arc, OnceLock};

#[derive(Debug)]
pub struct LookupSpec {
    pub key_idx: usize,
    pub key_name: String,
    pub label: String,
    pub keys: Arc<NodeKeys>,
    pub columns: Arc<TableColumns>,
    /// Table columns output, after the input's.
    pub take: Vec<String>,
    pub take_out: Vec<String>,
    /// Rows with a null key are kept, with null columns (keys known to be nodes or null).
    pub keep_nulls: bool,
    /// `take`'s columns, read from `columns` at the first lookup: the queries that run this
    /// spec again (a cached plan) read them without taking the store's lock, which
    /// concurrent point lookups would otherwise all contend for.
    pub taken: OnceLock<Vec<ArrayRef>>,
}

#[derive(Debug)]
pub struct NodeLookupExec {
    input: Arc<dyn ExecutionPlan>,
    spec: Arc<LookupSpec>,
    schema: SchemaRef,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl NodeLookupExec {
    pub fn try_new(
        input: Arc<dyn ExecutionPlan>,
        spec: LookupSpec,
        schema: SchemaRef,
    ) -> Result<Self> {
        if spec.key_idx >= input.schema().fields().len() {
            return datafusion::common::internal_err!("NodeLookupExec: key column out of range");
        }
        let cache = super::streaming_properties(&schema, &input);
        Ok(Self {
            input,
            spec: Arc::new(spec),
            schema,
            cache,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }
}

impl LookupSpec {
    fn lookup(&self, batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
        let ext = datafusion::error::DataFusionError::from;
        let keys = as_i64(batch.column(self.key_idx).as_ref()).map_err(ext)?;
        let (mut rows, mut ords) = (Vec::new(), Vec::new());
        for i in 0..keys.len() {
            if keys.is_null(i) {
                if self.keep_nulls {
                    rows.push(i as u32);
                    ords.push(None);
                }
                continue;
            }
            if let Some(o) = self.keys.ordinal(keys.value(i)) {
                rows.push(i as u32);
                ords.push(Some(o));
            }
        }
        self.keys.intact().map_err(ext)?;
        let n = rows.len();
        let rows = UInt32Array::from(rows);
        let ords = UInt32Array::from(ords);
        let mut cols: Vec<ArrayRef> = batch
            .columns()
            .iter()
            .map(|a| arrow::compute::take(a.as_ref(), &rows, None))
            .collect::<std::result::Result<_, _>>()?;
        let taken = match self.taken.get() {
            Some(t) => t,
            None => {
                let t = (self.take.iter())
                    .map(|name| self.columns.get(name))
                    .collect::<crate::error::Result<Vec<_>>>()
                    .map_err(ext)?;
                self.taken.get_or_init(|| t)
            }
        };
        for a in taken {
            cols.push(arrow::compute::take(a.as_ref(), &ords, None)?);
        }
        Ok(RecordBatch::try_new_with_options(
            schema.clone(),
            cols,
            &arrow::array::RecordBatchOptions::new().with_row_count(Some(n)),
        )?)
    }
}

impl DisplayAs for NodeLookupExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        match t {
            DisplayFormatType::Default | DisplayFormatType::Verbose => write!(
                f,
                "NodeLookupExec: key={}, label={}, take=[{}]",
                self.spec.key_name,
                self.spec.label,
                self.spec.take_out.join(", ")
            ),
            DisplayFormatType::TreeRender => write!(f, "label={}", self.spec.label),
        }
    }
}

impl ExecutionPlan for NodeLookupExec {
    super::unary_exec!("NodeLookupExec");

    /// At most one row per input row (a key matches one node or none).
    fn partition_statistics(
        &self,
        partition: Option<usize>,
    ) -> Result<Arc<datafusion::common::Statistics>> {
        let rows = self.input.partition_statistics(partition)?.num_rows;
        Ok(Arc::new(datafusion::common::Statistics {
            num_rows: rows.to_inexact(),
            ..datafusion::common::Statistics::new_unknown(&self.schema)
        }))
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // Properties follow the new input (its partitioning may differ).
        let input = super::only_child("NodeLookupExec", children)?;
        let cache = super::streaming_properties_over(&self.cache, &self.schema, &input);
        Ok(Arc::new(Self {
            input,
            spec: self.spec.clone(),
            schema: self.schema.clone(),
            cache,
            metrics: ExecutionPlanMetricsSet::new(),
        }))
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let out_rows = MetricBuilder::new(&self.metrics).output_rows(partition);
        let elapsed = MetricBuilder::new(&self.metrics).elapsed_compute(partition);
        let spec = self.spec.clone();
        let schema = self.schema.clone();
        let out_schema = schema.clone();
        let stream = input.map(move |b| {
            b.and_then(|b| {
                let _timer = elapsed.timer();
                let r = spec.lookup(&b, &schema)?;
                out_rows.add(r.num_rows());
                Ok(r)
            })
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(out_schema, stream)))
    }
}
