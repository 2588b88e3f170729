//! `ConstRow`: one row of constant columns (literals or parameters), the keys a point lookup
//! starts from. Unlike a `Values` row it keeps a parameter a parameter through physical
//! planning, so a cached plan of `MATCH (p:Person {id: $id})` runs again with another id.

use super::params::{bind_physical, compile_marked, has_param_expr, ParamValues};
use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::common::{DFSchema, DFSchemaRef, Result, Statistics};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Expr, ExprSchemable, LogicalPlan, UserDefinedLogicalNodeCore};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType, SchedulingType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use std::fmt;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConstRow {
    /// Output column and its value.
    pub exprs: Vec<(String, Expr)>,
    pub schema: DFSchemaRef,
}

impl ConstRow {
    pub fn try_new(exprs: Vec<(String, Expr)>) -> Result<Self> {
        let empty = DFSchema::empty();
        let fields = exprs
            .iter()
            .map(|(c, e)| Ok(Field::new(c, e.get_type(&empty)?, true)))
            .collect::<Result<Vec<_>>>()?;
        let schema = Arc::new(DFSchema::try_from(Schema::new(fields))?);
        Ok(Self { exprs, schema })
    }
}

impl PartialOrd for ConstRow {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        self.exprs.partial_cmp(&other.exprs)
    }
}

impl UserDefinedLogicalNodeCore for ConstRow {
    fn name(&self) -> &str {
        "ConstRow"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![]
    }

    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }

    /// None for DataFusion to rewrite: the values are final when lowered.
    fn expressions(&self) -> Vec<Expr> {
        vec![]
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "ConstRow: ")?;
        for (i, (c, e)) in self.exprs.iter().enumerate() {
            let sep = if i > 0 { ", " } else { "" };
            write!(f, "{sep}{e} AS {c}")?;
        }
        Ok(())
    }

    fn with_exprs_and_inputs(&self, _exprs: Vec<Expr>, _inputs: Vec<LogicalPlan>) -> Result<Self> {
        Ok(self.clone())
    }

    fn supports_limit_pushdown(&self) -> bool {
        false
    }
}

/// Produces the row; parameters are handed in before it runs (`with_new_state`).
#[derive(Debug)]
pub struct ConstRowExec {
    exprs: Vec<Arc<dyn PhysicalExpr>>,
    params: Option<Arc<ParamValues>>,
    schema: SchemaRef,
    cache: Arc<PlanProperties>,
}

impl ConstRowExec {
    /// Compiles `node`'s values with `compile` (placeholders become parameters).
    pub fn try_new(
        node: &ConstRow,
        compile: impl Fn(Expr) -> Result<Arc<dyn PhysicalExpr>>,
    ) -> Result<Self> {
        let exprs = node
            .exprs
            .iter()
            .map(|(_, e)| compile_marked(e.clone(), &compile))
            .collect::<Result<Vec<_>>>()?;
        let schema: SchemaRef = Arc::new(node.schema.as_arrow().clone());
        let cache = Arc::new(
            PlanProperties::new(
                EquivalenceProperties::new(schema.clone()),
                Partitioning::UnknownPartitioning(1),
                EmissionType::Incremental,
                Boundedness::Bounded,
            )
            // One row, then the end: it never keeps a task from yielding.
            .with_scheduling_type(SchedulingType::Cooperative),
        );
        Ok(Self {
            exprs,
            params: None,
            schema,
            cache,
        })
    }

    fn row(&self) -> Result<RecordBatch> {
        let one = RecordBatch::try_new_with_options(
            Arc::new(Schema::empty()),
            vec![],
            &RecordBatchOptions::new().with_row_count(Some(1)),
        )?;
        let cols = self
            .exprs
            .iter()
            .map(|e| {
                let e = match &self.params {
                    Some(v) => bind_physical(e, v)?,
                    None => e.clone(),
                };
                e.evaluate(&one)?.into_array(1)
            })
            .collect::<Result<Vec<ArrayRef>>>()?;
        Ok(RecordBatch::try_new(self.schema.clone(), cols)?)
    }
}

impl DisplayAs for ConstRowExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "ConstRowExec: ")?;
        for (i, (e, c)) in self.exprs.iter().zip(self.schema.fields()).enumerate() {
            let sep = if i > 0 { ", " } else { "" };
            write!(f, "{sep}{e} AS {}", c.name())?;
        }
        Ok(())
    }
}

impl ExecutionPlan for ConstRowExec {
    fn name(&self) -> &str {
        "ConstRowExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.cache
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    /// One row: the operators above need no repartitioning.
    fn partition_statistics(&self, _partition: Option<usize>) -> Result<Arc<Statistics>> {
        let mut s = Statistics::new_unknown(&self.schema);
        s.num_rows = datafusion::common::stats::Precision::Exact(1);
        Ok(Arc::new(s))
    }

    fn with_new_state(
        &self,
        state: Arc<dyn std::any::Any + Send + Sync>,
    ) -> Option<Arc<dyn ExecutionPlan>> {
        let values = state.downcast::<ParamValues>().ok()?;
        if !self.exprs.iter().any(has_param_expr) {
            return None;
        }
        Some(Arc::new(Self {
            exprs: self.exprs.clone(),
            params: Some(values),
            schema: self.schema.clone(),
            cache: self.cache.clone(),
        }))
    }

    fn execute(
        &self,
        _partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let row = self.row();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::once(async move { row }),
        )))
    }
}
