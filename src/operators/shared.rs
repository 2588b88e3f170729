//! `SharedSubplan`: one occurrence of a subplan that several parts of a query compute
//! identically (found by `optimizer::share_subplans`). Every occurrence holds the same
//! [`SharedCell`]; the first to run evaluates its input and keeps the batches, the others read
//! them. Nothing above moves into it (no column pruning, predicate or limit pushdown), so all
//! occurrences keep computing the same thing.

use arrow::array::RecordBatch;
use datafusion::common::{DFSchemaRef, Result};
use datafusion::execution::memory_pool::MemoryReservation;
use datafusion::logical_expr::LogicalPlan;
use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

/// The result of a shared subplan, computed once per query, with the memory its batches hold
/// reserved from the query's memory pool for as long as the cell keeps them.
#[derive(Debug, Default)]
pub struct SharedCell {
    pub batches: tokio::sync::OnceCell<(Vec<RecordBatch>, MemoryReservation)>,
}

#[derive(Debug, Clone)]
pub struct SharedSubplan {
    pub input: LogicalPlan,
    pub id: usize,
    /// How many occurrences read it.
    pub consumers: usize,
    /// Estimated rows (what made sharing worth it), for EXPLAIN.
    pub rows: usize,
    pub cell: Arc<SharedCell>,
}

impl SharedSubplan {
    fn sig(&self) -> impl Hash + PartialOrd + '_ {
        (
            &self.input,
            self.id,
            self.consumers,
            Arc::as_ptr(&self.cell) as usize,
        )
    }
}

super::node_identity!(SharedSubplan);

impl super::UnaryNode for SharedSubplan {
    const NAME: &'static str = "SharedSubplan";

    fn input(&self) -> &LogicalPlan {
        &self.input
    }

    fn output_schema(&self) -> &DFSchemaRef {
        self.input.schema()
    }

    /// Every column stays: each occurrence must compute the same columns.
    fn needed_input_columns(&self, _output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        None
    }

    /// Filters stay above: each occurrence must compute the same rows.
    fn barrier_columns(&self) -> HashSet<String> {
        self.input
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    fn explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "SharedSubplan: id={}, consumers={}, rows~{}",
            self.id, self.consumers, self.rows
        )
    }

    fn with_input(&self, input: LogicalPlan) -> Result<Self> {
        let mut n = self.clone();
        n.input = input;
        Ok(n)
    }
}

super::unary_node!(SharedSubplan);
