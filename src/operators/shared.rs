//! `SharedSubplan`: one occurrence of a subplan that several parts of a query read. Made by
//! `optimizer::share_subplans` where evaluating a repeated subtree once pays, and by the
//! planner where the readers must see the same rows (an OPTIONAL MATCH's input, read by the
//! match and by the join back; the input of a branched MATCH that is not deterministic: a
//! LIMIT, `collect`'s order). Every occurrence holds the same [`SharedCell`]; the first to run
//! evaluates its input and keeps the batches, the others read them. Nothing above moves into
//! it (no column pruning, predicate or limit pushdown), so all occurrences keep computing the
//! same thing. A plan run again gets new cells ([`SharedSubplan::with_new_cells`]; a kept physical
//! plan: `params::bind_physical_plan`).

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

/// New cells for a plan run again: one per old cell, so that the occurrences of one subplan
/// still share theirs.
#[derive(Default)]
pub struct NewCells(Vec<(*const SharedCell, Arc<SharedCell>)>);

impl NewCells {
    /// The new cell standing for `old`.
    pub fn renew(&mut self, old: &Arc<SharedCell>) -> Arc<SharedCell> {
        let old = Arc::as_ptr(old);
        if let Some((_, c)) = self.0.iter().find(|(p, _)| *p == old) {
            return c.clone();
        }
        let c = Arc::new(SharedCell::default());
        self.0.push((old, c.clone()));
        c
    }
}

#[derive(Clone)]
pub struct SharedSubplan {
    pub input: LogicalPlan,
    pub id: usize,
    /// How many occurrences read it.
    pub consumers: usize,
    /// Estimated rows (what made sharing worth it), for EXPLAIN; `None`: shared because the
    /// readers must see the same rows.
    pub rows: Option<usize>,
    pub cell: Arc<SharedCell>,
    /// A filter DataFusion pushed into this occurrence (one naming no column: a constant, such
    /// as a branch's `false`), applied to what this occurrence reads, never to what the cell
    /// holds: the other readers must not see it.
    pub after: Option<datafusion::logical_expr::Expr>,
    /// Set only while `optimizer::prune_shared_subplans` asks DataFusion's projection pruning
    /// which output columns each reader needs: every occurrence records its readers' columns
    /// here (and still keeps all of them).
    pub probe: Option<Arc<std::sync::Mutex<Vec<Vec<usize>>>>>,
}

impl SharedSubplan {
    /// `input` evaluated once for its `consumers` readers, each holding a clone of the node.
    pub fn once(input: LogicalPlan, id: usize, consumers: usize) -> LogicalPlan {
        LogicalPlan::Extension(datafusion::logical_expr::Extension {
            node: Arc::new(Self {
                input,
                id,
                consumers,
                rows: None,
                cell: Arc::default(),
                after: None,
                probe: None,
            }),
        })
    }

    /// Whether every evaluation of `plan` gives the same rows (in some order, with the same
    /// values): no LIMIT or top-k (which rows it keeps may vary), no window (row numbers
    /// follow the order rows arrive in), no aggregate whose value depends on that order
    /// (`collect`, float sums), nothing volatile. Readers of a plan that is not must share
    /// one evaluation of it.
    pub fn deterministic(plan: &LogicalPlan) -> bool {
        use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
        use datafusion::logical_expr::expr::AggregateFunction;
        use datafusion::logical_expr::Expr;
        // count, min and max give the same value whatever order the rows come in (the
        // aggregate may sit inside the expression: `array_distinct(array_agg(x))`).
        let order_free = |e: &Expr| {
            !e.exists(|x| {
                Ok(
                    matches!(x, Expr::AggregateFunction(AggregateFunction { func, .. })
                    if !matches!(func.name(), "count" | "min" | "max")),
                )
            })
            .unwrap_or(true)
        };
        let mut ok = true;
        let _ = plan.apply_with_subqueries(|node| {
            ok &= match node {
                LogicalPlan::Limit(_) | LogicalPlan::Window(_) => false,
                LogicalPlan::Sort(s) => s.fetch.is_none(),
                LogicalPlan::Aggregate(a) => a.aggr_expr.iter().all(order_free),
                _ => true,
            } && !node.expressions().iter().any(|e| e.is_volatile());
            Ok(if ok {
                TreeNodeRecursion::Continue
            } else {
                TreeNodeRecursion::Stop
            })
        });
        ok
    }

    /// `plan` with each shared subplan's cell replaced by a new one (the occurrences of one
    /// subplan still share theirs): a plan kept for another execution must not read the rows
    /// a previous one left in its cells.
    pub fn with_new_cells(plan: LogicalPlan) -> Result<LogicalPlan> {
        use datafusion::common::tree_node::Transformed;
        let mut cells = NewCells::default();
        Ok(plan
            .transform_up_with_subqueries(|node| {
                let LogicalPlan::Extension(ext) = &node else {
                    return Ok(Transformed::no(node));
                };
                let Some(s) = ext.node.as_any().downcast_ref::<SharedSubplan>() else {
                    return Ok(Transformed::no(node));
                };
                let mut n = s.clone();
                n.cell = cells.renew(&s.cell);
                Ok(Transformed::yes(LogicalPlan::Extension(
                    datafusion::logical_expr::Extension { node: Arc::new(n) },
                )))
            })?
            .data)
    }
}

impl SharedSubplan {
    fn sig(&self) -> impl Hash + PartialOrd + '_ {
        (
            &self.input,
            self.id,
            self.consumers,
            Arc::as_ptr(&self.cell) as usize,
            &self.after,
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

    /// Every column stays: each occurrence must compute the same columns
    /// (`optimizer::prune_shared_subplans` narrows all occurrences at once).
    fn needed_input_columns(&self, output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        if let Some(probe) = &self.probe {
            probe
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(output_columns.to_vec());
        }
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
            "SharedSubplan: id={}, consumers={}",
            self.id, self.consumers
        )?;
        match self.rows {
            Some(rows) => write!(f, ", rows~{rows}")?,
            None => write!(f, ", same rows for every reader")?,
        }
        match &self.after {
            Some(p) => write!(f, ", then filter {p}"),
            None => Ok(()),
        }
    }

    fn with_input(&self, input: LogicalPlan) -> Result<Self> {
        let mut n = self.clone();
        // A filter pushed down to the input (no column stops one that names none) stays with
        // this occurrence: below, it would change the rows the cell holds for every reader.
        if let LogicalPlan::Filter(f) = &input {
            if f.input.as_ref() == &self.input && f.predicate.column_refs().is_empty() {
                n.after = Some(match n.after.take() {
                    Some(a) => a.and(f.predicate.clone()),
                    None => f.predicate.clone(),
                });
                return Ok(n);
            }
        }
        n.input = input;
        Ok(n)
    }
}

super::unary_node!(SharedSubplan);

super::explain_debug!(SharedSubplan);
