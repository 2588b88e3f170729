//! `ConstRow`: one row of constant columns (literals or parameters), the keys a point lookup
//! starts from; over an input, those columns added to each of its rows (a key lookup after
//! other patterns, `MATCH (a {id: $a}), (b {id: $b})`). Unlike a `Values` row or a projection
//! it keeps a parameter a parameter through physical planning, so a cached plan of
//! `MATCH (p:Person {id: $id})` runs again with another id.

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

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ConstRow {
    /// Rows the columns are added to (`None`: one row of just them).
    pub input: Option<LogicalPlan>,
    /// Output column and its value.
    pub exprs: Vec<(String, Expr)>,
    pub schema: DFSchemaRef,
}

impl ConstRow {
    /// The constant columns added to every row of `input`.
    pub fn over(input: Option<LogicalPlan>, exprs: Vec<(String, Expr)>) -> Result<Self> {
        let empty = DFSchema::empty();
        let types = exprs
            .iter()
            .map(|(c, e)| Ok((c, e.get_type(&empty)?)))
            .collect::<Result<Vec<_>>>()?;
        let schema = match &input {
            Some(i) => super::extended_schema(i, types.iter().map(|(c, t)| (*c, t)))?,
            None => {
                let fields: Vec<Field> = types
                    .iter()
                    .map(|(c, t)| Field::new(*c, t.clone(), true))
                    .collect();
                Arc::new(DFSchema::try_from(Schema::new(fields))?)
            }
        };
        Ok(Self {
            input,
            exprs,
            schema,
        })
    }
}

impl PartialOrd for ConstRow {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        (&self.input, &self.exprs).partial_cmp(&(&other.input, &other.exprs))
    }
}

impl UserDefinedLogicalNodeCore for ConstRow {
    fn name(&self) -> &str {
        "ConstRow"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        self.input.iter().collect()
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

    fn with_exprs_and_inputs(&self, _exprs: Vec<Expr>, inputs: Vec<LogicalPlan>) -> Result<Self> {
        Self::over(inputs.into_iter().next(), self.exprs.clone())
    }

    fn necessary_children_exprs(&self, output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        let input = self.input.as_ref()?;
        super::input_columns_needed(input, output_columns, &[])
    }

    fn supports_limit_pushdown(&self) -> bool {
        false
    }
}

/// Produces the row; parameters are handed in before it runs (`with_new_state`).
#[derive(Debug)]
pub struct ConstRowExec {
    input: Option<Arc<dyn ExecutionPlan>>,
    exprs: Vec<Arc<dyn PhysicalExpr>>,
    params: Option<Arc<ParamValues>>,
    schema: SchemaRef,
    cache: Arc<PlanProperties>,
}

impl ConstRowExec {
    /// Compiles `node`'s values with `compile` (placeholders become parameters).
    pub fn try_new(
        node: &ConstRow,
        input: Option<Arc<dyn ExecutionPlan>>,
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
        let cache = match &input {
            Some(i) => super::streaming_properties(&schema, i),
            None => cache,
        };
        Ok(Self {
            input,
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
        // Just the constant columns (the last fields, after any input's).
        let fields = self.schema.fields();
        let own = Schema::new(fields[fields.len() - cols.len()..].to_vec());
        Ok(RecordBatch::try_new(Arc::new(own), cols)?)
    }

    /// `batch` with the constant columns (`row`) added.
    fn extended(schema: &SchemaRef, batch: &RecordBatch, row: &RecordBatch) -> Result<RecordBatch> {
        let n = batch.num_rows();
        let mut cols = batch.columns().to_vec();
        let zeros = arrow::array::UInt32Array::from(vec![0u32; n]);
        for c in row.columns() {
            cols.push(arrow::compute::take(c.as_ref(), &zeros, None)?);
        }
        Ok(RecordBatch::try_new_with_options(
            schema.clone(),
            cols,
            &RecordBatchOptions::new().with_row_count(Some(n)),
        )?)
    }
}

impl DisplayAs for ConstRowExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "ConstRowExec: ")?;
        let fields = self.schema.fields();
        let own = &fields[fields.len() - self.exprs.len()..];
        for (i, (e, c)) in self.exprs.iter().zip(own).enumerate() {
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
        self.input.iter().collect()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // Its input, when it has one; a leaf takes none.
        let input = match (children.len(), &self.input) {
            (0, None) => return Ok(self),
            (1, Some(_)) => super::only_child("ConstRowExec", children)?,
            (n, _) => {
                return datafusion::common::internal_err!(
                    "ConstRowExec takes {} inputs, got {n}",
                    self.input.iter().count()
                )
            }
        };
        Ok(Arc::new(Self {
            cache: super::streaming_properties_over(&self.cache, &self.schema, &input),
            input: Some(input),
            exprs: self.exprs.clone(),
            params: self.params.clone(),
            schema: self.schema.clone(),
        }))
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true; self.input.iter().count()]
    }

    /// One row: the operators above need no repartitioning.
    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        let mut s = Statistics::new_unknown(&self.schema);
        s.num_rows = match &self.input {
            Some(i) => i.partition_statistics(partition)?.num_rows,
            None => datafusion::common::stats::Precision::Exact(1),
        };
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
            input: self.input.clone(),
            exprs: self.exprs.clone(),
            params: Some(values),
            schema: self.schema.clone(),
            cache: self.cache.clone(),
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if let Some(input) = &self.input {
            use futures::StreamExt;
            let row = self.row()?;
            let schema = self.schema.clone();
            let stream = input
                .execute(partition, context)?
                .map(move |b| Self::extended(&schema, &b?, &row));
            return Ok(Box::pin(RecordBatchStreamAdapter::new(
                self.schema.clone(),
                stream,
            )));
        }
        let row = self.row();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::once(async move { row }),
        )))
    }
}

super::explain_debug!(ConstRow);
