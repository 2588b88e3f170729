//! `PruneSharedSubplans`: a shared subplan computes only the columns its readers use.
//!
//! DataFusion's projection pruning cannot narrow a [`SharedSubplan`]: its occurrences share one
//! evaluation, so each must compute the same columns, while the pruning sees one occurrence at
//! a time. Columns nobody reads are then computed and copied for every row (`WITH
//! collect(f) AS fs UNWIND fs AS f MATCH (f)-->(m:Message)`: the unwound list `fs` was repeated
//! on each of the list's rows, inside the shared input of the MATCH's branches).
//!
//! The rule asks DataFusion's own pruning which columns each occurrence's readers need (the
//! occurrences record them and keep every column), then narrows every occurrence of a subplan
//! to the union of its readers' columns at once, prunes below that, and recomputes the schemas
//! above. A subplan keeps every column if one of its occurrences was not asked (inside an
//! expression's subquery), and the plan is left as it was if narrowing would leave a union's
//! inputs of different widths.
//!
//! ```text
//! before:  Projection: friend                   after:  Projection: friend
//!            SharedSubplan: id=0, consumers=2             SharedSubplan: id=0, consumers=2
//!              Unnest: lists[friend]                        Unnest: lists[friend]
//!                Projection: fs, fs AS friend                 Projection: fs AS friend
//! ```

use super::RuleCounters;
use crate::operators::node::GraphNode;
use crate::operators::shared::{SharedCell, SharedSubplan};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, Result};
use datafusion::logical_expr::{Expr, Extension, LogicalPlan, Projection};
use datafusion::optimizer::optimize_projections::OptimizeProjections;
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
pub struct PruneSharedSubplans {
    counters: Arc<RuleCounters>,
}

impl PruneSharedSubplans {
    pub fn with_counters(counters: Arc<RuleCounters>) -> Self {
        Self { counters }
    }
}

type Probe = Arc<Mutex<Vec<Vec<usize>>>>;

/// One shared subplan: its input, how many occurrences the plan holds, what their readers need.
struct Cell {
    input: LogicalPlan,
    occurrences: usize,
    probe: Probe,
}

/// `plan` if it is an occurrence of a shared subplan.
pub(super) fn shared_of(plan: &LogicalPlan) -> Option<&SharedSubplan> {
    match GraphNode::of_plan(plan) {
        Some(GraphNode::Shared(s)) => Some(s),
        _ => None,
    }
}

fn key(s: &SharedSubplan) -> *const SharedCell {
    Arc::as_ptr(&s.cell)
}

impl OptimizerRule for PruneSharedSubplans {
    fn name(&self) -> &str {
        "prune_shared_subplans"
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        // Each subplan's input as the plan holds it, and how often it occurs.
        let mut cells: HashMap<*const SharedCell, Cell> = HashMap::new();
        plan.apply_with_subqueries(|node| {
            if let Some(s) = shared_of(node) {
                cells
                    .entry(key(s))
                    .or_insert_with(|| Cell {
                        input: s.input.clone(),
                        occurrences: 0,
                        probe: Probe::default(),
                    })
                    .occurrences += 1;
            }
            Ok(TreeNodeRecursion::Continue)
        })?;
        // A copy whose occurrences record their readers' columns.
        let probed = plan
            .clone()
            .transform_up_with_subqueries(|node| {
                let Some(s) = shared_of(&node) else {
                    return Ok(Transformed::no(node));
                };
                let mut n = s.clone();
                n.probe = cells.get(&key(s)).map(|c| c.probe.clone());
                Ok(Transformed::yes(LogicalPlan::Extension(Extension {
                    node: Arc::new(n),
                })))
            })?
            .data;
        if cells.is_empty() {
            return Ok(Transformed::no(plan));
        }
        // Only the columns each occurrence's readers asked for are of interest; the pruned plan
        // itself is dropped.
        if OptimizeProjections::new().rewrite(probed, config).is_err() {
            return Ok(Transformed::no(plan));
        }

        let mut narrowed: HashMap<*const SharedCell, LogicalPlan> = HashMap::new();
        let mut dropped = 0;
        for (k, cell) in cells {
            let asked = cell.probe.lock().unwrap_or_else(|e| e.into_inner());
            // An occurrence not asked (inside a subquery expression) may need anything.
            if asked.len() != cell.occurrences {
                continue;
            }
            let schema = cell.input.schema();
            let mut keep: BTreeSet<usize> = asked.iter().flatten().copied().collect();
            let width = schema.fields().len();
            if keep.len() >= width || keep.iter().any(|i| *i >= width) {
                continue;
            }
            // Readers that need no column (a count) still need the rows.
            if keep.is_empty() {
                keep.insert(0);
            }
            dropped += width - keep.len();
            let exprs: Vec<Expr> = keep
                .into_iter()
                .map(|i| Expr::Column(Column::from(schema.qualified_field(i))))
                .collect();
            let input =
                LogicalPlan::Projection(Projection::try_new(exprs, Arc::new(cell.input.clone()))?);
            let input = OptimizeProjections::new().rewrite(input, config)?.data;
            narrowed.insert(k, input);
        }
        if narrowed.is_empty() {
            return Ok(Transformed::no(plan));
        }
        let Ok(rebuilt) = rebuild(plan.clone(), &narrowed) else {
            return Ok(Transformed::no(plan));
        };
        if !unions_aligned(&rebuilt.data) {
            return Ok(Transformed::no(plan));
        }
        RuleCounters::add(&self.counters.pruned_projections, narrowed.len());
        RuleCounters::add(&self.counters.dropped_columns, dropped);
        Ok(rebuilt)
    }
}

/// `plan` with the narrowed cells' occurrences reading their new input (itself rebuilt: it
/// may hold occurrences of other narrowed cells), and the schema of every node above one
/// recomputed.
fn rebuild(
    plan: LogicalPlan,
    narrowed: &HashMap<*const SharedCell, LogicalPlan>,
) -> Result<Transformed<LogicalPlan>> {
    if let Some(s) = shared_of(&plan) {
        if let Some(input) = narrowed.get(&key(s)) {
            let mut n = s.clone();
            n.input = rebuild(input.clone(), narrowed)?.data;
            return Ok(Transformed::yes(LogicalPlan::Extension(Extension {
                node: Arc::new(n),
            })));
        }
    }
    let t = plan
        .map_children(|c| rebuild(c, narrowed))?
        .transform_data(|p| p.map_subqueries(|c| rebuild(c, narrowed)))?;
    if t.transformed {
        Ok(Transformed::yes(t.data.recompute_schema()?))
    } else {
        Ok(t)
    }
}

/// Whether every union's inputs are as wide as the union (narrowing one branch's shared input
/// must not leave it narrower than the others).
fn unions_aligned(plan: &LogicalPlan) -> bool {
    let mut ok = true;
    let _ = plan.apply_with_subqueries(|node| {
        if let LogicalPlan::Union(u) = node {
            let width = u.schema.fields().len();
            ok &= u.inputs.iter().all(|i| i.schema().fields().len() == width);
        }
        Ok(if ok {
            TreeNodeRecursion::Continue
        } else {
            TreeNodeRecursion::Stop
        })
    });
    ok
}
