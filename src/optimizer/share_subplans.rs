//! `ShareSubplans` (seed 002): structurally identical, deterministic subtrees (typically the
//! re-rooted anchor repeated in every UNION ALL branch of a branched MATCH) are evaluated once
//! per query: each occurrence is wrapped in a [`SharedSubplan`] holding one shared cell, and the
//! first occurrence to run fills it.
//!
//! Subtrees are found by a Merkle fingerprint: a hash of the node's own rendering and its
//! children's fingerprints; plans with equal fingerprints are then compared for equality (a
//! collision never merges different subtrees). A subtree is shared when it pays: it reads data
//! (a scan or a graph operator), is deterministic (nothing volatile such as `rand()`), its row
//! estimate (table sizes, average degrees, filter selectivity) is at most [`MAX_SHARED_ROWS`]
//! (the batches are kept for the query), and the work the other occurrences would repeat (rows
//! read or produced) is at least the rule's minimum ([`DEFAULT_MIN_SAVED_WORK`]: evaluating a
//! cheap subtree again, in parallel, beats making the other branches wait for one
//! evaluation). The largest such subtrees win; a shared subtree's parts are not shared again.
//!
//! ```text
//! before:  Union
//!            CsrExpand: key=p__id ..., edges=6          CsrExpand: key=p__id ..., edges=2
//!              NodeLookup: key=__lookup1, label=Person    NodeLookup: key=__lookup1, label=Person
//!                ConstRow: Int64(1) AS __lookup1             ConstRow: Int64(1) AS __lookup1
//! after:   Union
//!            CsrExpand: ..., edges=6                    CsrExpand: ..., edges=2
//!              SharedSubplan: id=0, consumers=2, rows~1   SharedSubplan: id=0, consumers=2, rows~1
//!                NodeLookup: ...                             NodeLookup: ...
//! ```
//!
//! Must not fire: a subtree seen once; one with a volatile expression; one whose estimate is
//! unknown (a join) or too large; one too cheap to be worth it; a lone scan or VALUES.

use super::estimates::{estimate_rows, estimate_work};
use super::prune_shared_subplans::shared_of;
use super::RuleCounters;
use crate::operators::shared::{SharedCell, SharedSubplan};
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::Result;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

/// Largest row estimate shared.
pub const MAX_SHARED_ROWS: f64 = 1_000_000.0;

/// Default least work (rows read or produced) that sharing must save: below it, evaluating a
/// subplan again in parallel costs less than evaluating it once and making the others wait.
pub const DEFAULT_MIN_SAVED_WORK: usize = 2_000_000;

#[derive(Debug)]
pub struct ShareSubplans {
    counters: Arc<RuleCounters>,
    min_saved_work: f64,
}

impl Default for ShareSubplans {
    fn default() -> Self {
        Self::new(Default::default(), DEFAULT_MIN_SAVED_WORK)
    }
}

impl ShareSubplans {
    pub fn new(counters: Arc<RuleCounters>, min_saved_work: usize) -> Self {
        Self {
            counters,
            min_saved_work: min_saved_work as f64,
        }
    }
}

/// Merkle fingerprints of every subtree, in pre-order, with the subtree (not descending into
/// subtrees already shared).
fn fingerprints<'a>(plan: &'a LogicalPlan, out: &mut Vec<(u64, &'a LogicalPlan)>) -> u64 {
    let children: Vec<u64> = if shared_of(plan).is_some() {
        vec![]
    } else {
        plan.inputs()
            .into_iter()
            .map(|c| fingerprints(c, out))
            .collect()
    };
    let mut h = DefaultHasher::new();
    plan.display().to_string().hash(&mut h);
    children.hash(&mut h);
    let fp = h.finish();
    out.push((fp, plan));
    fp
}

/// Reads data, so that evaluating it again costs something.
fn reads_data(plan: &LogicalPlan) -> bool {
    let mut reads = false;
    let _ = plan.apply(|n| {
        reads |= matches!(n, LogicalPlan::TableScan(_) | LogicalPlan::Extension(_));
        Ok(if reads {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    });
    reads
}

fn volatile(plan: &LogicalPlan) -> bool {
    let mut v = false;
    let _ = plan.apply(|n| {
        v |= n.expressions().iter().any(|e| e.is_volatile());
        Ok(TreeNodeRecursion::Continue)
    });
    v
}

impl OptimizerRule for ShareSubplans {
    fn name(&self) -> &str {
        "share_subplans"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        // Groups of equal subtrees: by fingerprint, then by equality.
        let mut all = Vec::new();
        fingerprints(&plan, &mut all);
        let mut groups: HashMap<u64, Vec<(LogicalPlan, usize)>> = HashMap::new();
        for (fp, p) in &all {
            let g = groups.entry(*fp).or_default();
            match g.iter_mut().find(|(q, _)| q == *p) {
                Some((_, n)) => *n += 1,
                None => g.push(((*p).clone(), 1)),
            }
        }
        let candidates: Vec<(LogicalPlan, usize, usize)> = groups
            .into_values()
            .flatten()
            .filter(|(p, n)| {
                *n > 1
                    && shared_of(p).is_none()
                    && !p.inputs().is_empty()
                    && reads_data(p)
                    && !volatile(p)
            })
            .filter_map(|(p, n)| {
                let rows = estimate_rows(&p)?;
                let saved = estimate_work(&p)? * (n - 1) as f64;
                (rows <= MAX_SHARED_ROWS && saved >= self.min_saved_work).then_some((
                    p,
                    n,
                    rows.ceil() as usize,
                ))
            })
            .collect();
        if candidates.is_empty() {
            return Ok(Transformed::no(plan));
        }
        // Top-down: the first (largest) repeated subtree met is shared, not its parts. Ids
        // follow those of the subplans shared already (by the planner or an earlier pass).
        let first_id = all
            .iter()
            .filter_map(|(_, p)| shared_of(p).map(|s| s.id + 1))
            .max()
            .unwrap_or(0);
        let mut cells: Vec<(LogicalPlan, Arc<SharedCell>, usize)> = Vec::new();
        let counters = &self.counters;
        plan.transform_down(|node| {
            if shared_of(&node).is_some() {
                return Ok(Transformed::new(node, false, TreeNodeRecursion::Jump));
            }
            let Some((_, n, rows)) = candidates.iter().find(|(p, _, _)| *p == node) else {
                return Ok(Transformed::no(node));
            };
            let i = match cells.iter().position(|(p, _, _)| *p == node) {
                Some(i) => i,
                None => {
                    RuleCounters::add(&counters.shared_subplans, n - 1);
                    cells.push((node.clone(), Arc::new(SharedCell::default()), *n));
                    cells.len() - 1
                }
            };
            let shared = SharedSubplan {
                input: node,
                id: first_id + i,
                consumers: *n,
                rows: Some(*rows),
                cell: cells[i].1.clone(),
                after: None,
                probe: None,
            };
            Ok(Transformed::new(
                LogicalPlan::Extension(Extension {
                    node: Arc::new(shared),
                }),
                true,
                TreeNodeRecursion::Jump,
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optimizer::test_util::optimized_without_our_rules;
    use datafusion::optimizer::OptimizerContext;

    fn share(q: &str) -> (String, usize) {
        let plan = optimized_without_our_rules(q);
        let counters = Arc::new(RuleCounters::default());
        // The sample graph is tiny: no minimum of saved work.
        let out = ShareSubplans::new(counters.clone(), 0)
            .rewrite(plan, &OptimizerContext::new())
            .unwrap();
        let n = counters
            .shared_subplans
            .load(std::sync::atomic::Ordering::Relaxed);
        let text = out.data.display_indent().to_string();
        (text, n)
    }

    #[test]
    fn shares_the_anchor_of_every_branch() {
        let (plan, n) = share("MATCH (t:Tag {id: 300})<-[:HAS_TAG]-(x) RETURN x.id");
        assert_eq!(n, 2, "{plan}");
        insta::assert_snapshot!("share_fires", plan);
    }

    #[test]
    fn does_not_share_what_is_seen_once_or_volatile() {
        let (plan, n) = share("MATCH (t:Tag {id: 300})<-[:HAS_TAG]-(x:Post) RETURN x.id");
        assert_eq!(n, 0, "{plan}");
        let (plan, n) =
            share("MATCH (t:Tag) WHERE rand() < 2 MATCH (t)<-[:HAS_TAG]-(x) RETURN x.id");
        assert_eq!(n, 0, "{plan}");
        // The branches read one evaluation of the volatile input, shared by the planner (the
        // same rows for every reader), not by the rule (which would estimate its rows).
        assert!(plan.contains("same rows for every reader"), "{plan}");
        assert!(!plan.contains("rows~"), "{plan}");
    }

    #[test]
    fn does_not_share_what_is_cheap_to_repeat() {
        let plan =
            optimized_without_our_rules("MATCH (t:Tag {id: 300})<-[:HAS_TAG]-(x) RETURN x.id");
        let out = ShareSubplans::default()
            .rewrite(plan, &OptimizerContext::new())
            .unwrap();
        assert!(!out.transformed);
    }
}
