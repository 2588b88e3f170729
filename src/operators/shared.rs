//! `SharedSubplan`: one occurrence of a subplan that several parts of a query compute
//! identically (found by `optimizer::share_subplans`). Every occurrence holds the same
//! [`SharedCell`]; the first to run evaluates its input and keeps the batches, the others read
//! them. Nothing above moves into it (no column pruning, predicate or limit pushdown), so all
//! occurrences keep computing the same thing.

use arrow::array::RecordBatch;
use datafusion::common::{DFSchemaRef, Result};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};
use std::collections::HashSet;
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

/// The result of a shared subplan, computed once per query.
#[derive(Debug, Default)]
pub struct SharedCell {
    pub batches: tokio::sync::OnceCell<Vec<RecordBatch>>,
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

impl UserDefinedLogicalNodeCore for SharedSubplan {
    fn name(&self) -> &str {
        "SharedSubplan"
    }

    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }

    fn schema(&self) -> &DFSchemaRef {
        self.input.schema()
    }

    fn expressions(&self) -> Vec<Expr> {
        vec![]
    }

    /// Every column stays: each occurrence must compute the same columns.
    fn necessary_children_exprs(&self, _output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        None
    }

    /// Filters stay above: each occurrence must compute the same rows.
    fn prevent_predicate_push_down_columns(&self) -> HashSet<String> {
        self.input
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "SharedSubplan: id={}, consumers={}, rows~{}",
            self.id, self.consumers, self.rows
        )
    }

    fn with_exprs_and_inputs(
        &self,
        _exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> Result<Self> {
        let mut n = self.clone();
        n.input = inputs.swap_remove(0);
        Ok(n)
    }

    fn supports_limit_pushdown(&self) -> bool {
        false
    }
}
