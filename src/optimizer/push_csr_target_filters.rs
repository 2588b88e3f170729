//! `PushCsrTargetFilters`: moves filter conjuncts on a hop's target node or relationship into
//! the `CsrExpand`, where they are evaluated on just their columns before anything else is taken.
//!
//! DataFusion pushes a filter below a join but treats an extension node as opaque; this rule
//! fills that gap. It splits a Filter above a `CsrExpand` (looking through projections that only
//! pass columns on) into conjuncts and moves:
//! - conjuncts reading only the target node's columns into the node's target filter,
//! - conjuncts reading only the relationship's own columns into its relationship filter;
//! - for a `VarLengthExpand` (not a shortest path), conjuncts reading only the end node's
//!   columns into its end filter (evaluated on the ends found, before anything is taken).
//!
//! Mixed conjuncts (reading the input too, or both target and relationship), volatile ones
//! (`rand()`), and column-free ones stay where they are.
//!
//! ```text
//! before:
//!   Filter: b__age > Int64(35) AND k__creationDate > Int64(5) AND a__age < b__age
//!     CsrExpand: key=a__id -> [k__#src, k__#dst], edges=7, take=b[b__id*, b__age, ...], edge=k[...]
//! after:
//!   Filter: a__age < b__age
//!     CsrExpand: key=a__id -> ..., filter=b__age > Int64(35), edge_filter=k__creationDate > Int64(5)
//! ```
//!
//! Eligibility (seed 003): a conjunct crosses projections that only pass columns on (total,
//! and no output name shadows another column) and sorts without a limit (sort commutation);
//! nothing else.
//!
//! Must not fire: a filter above a LIMIT (or a sort with one) above the expansion (the limit
//! is a barrier: filtering first would change which rows the limit keeps), above an
//! aggregation, above a projection that computes something (its evaluation on dropped rows
//! could raise an error the optimized query would not) or renames (shadowing), or a filter
//! under an OPTIONAL MATCH's left join that reads the target (it stays above the join:
//! filtering inside would turn "no match" into null-padded rows).

use super::RuleCounters;
use crate::operators::csr_expand::CsrExpand;
use crate::operators::var_length::VarLengthExpand;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::Result;
use datafusion::logical_expr::utils::{conjunction, split_conjunction};
use datafusion::logical_expr::{Expr, Extension, Filter, LogicalPlan, Projection};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use std::collections::HashSet;
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct PushCsrTargetFilters {
    counters: Arc<RuleCounters>,
}

impl PushCsrTargetFilters {
    pub fn with_counters(counters: Arc<RuleCounters>) -> Self {
        Self { counters }
    }
}

/// A projection that only passes columns on, unrenamed (`c` or `c AS c`): total, and every
/// output name is the identity reference of the same column.
fn is_column_only(p: &Projection) -> bool {
    p.expr.iter().all(|e| match e {
        Expr::Column(_) => true,
        Expr::Alias(a) => {
            matches!(a.expr.as_ref(), Expr::Column(c) if c.name == a.name && a.relation.is_none())
        }
        _ => false,
    })
}

fn csr_of(plan: &LogicalPlan) -> Option<&CsrExpand> {
    match plan {
        // A counting hop keeps its input's rows: not a hop of a chain of matches. A filter
        // above an optional hop drops its rows of nulls too: inside, a row whose matches
        // all fail would come out as nulls instead.
        LogicalPlan::Extension(Extension { node }) => node
            .as_any()
            .downcast_ref::<CsrExpand>()
            .filter(|n| n.count.is_none() && !n.optional),
        _ => None,
    }
}

/// Splits conjuncts into (to target, to edge, stay).
/// Splits conjuncts into (to target, to edge, stay): reading only `target` columns (when
/// `to_target`), only `edge` columns, or anything else.
fn classify(
    pred: &Expr,
    target: &HashSet<String>,
    edge: &HashSet<String>,
    to_target: bool,
) -> (Vec<Expr>, Vec<Expr>, Vec<Expr>) {
    let (mut t, mut e, mut stay) = (vec![], vec![], vec![]);
    for c in split_conjunction(pred) {
        let cols: Vec<String> = c
            .column_refs()
            .into_iter()
            .map(|c| c.name.clone())
            .collect();
        if cols.is_empty() || c.is_volatile() {
            stay.push(c.clone());
        } else if cols.iter().all(|x| target.contains(x)) && to_target {
            t.push(c.clone());
        } else if !edge.is_empty() && cols.iter().all(|x| edge.contains(x)) {
            e.push(c.clone());
        } else {
            stay.push(c.clone());
        }
    }
    (t, e, stay)
}

fn names(t: &crate::operators::csr_expand::TakeSpec) -> HashSet<String> {
    t.all.iter().map(|(_, o, _)| o.clone()).collect()
}

/// The hop `ext` with the conjuncts of `pred` it can evaluate moved in: (node, how many were
/// pushed, how many joined an existing filter, the rest). `None` when nothing moves.
fn take_conjuncts(
    ext: &LogicalPlan,
    pred: &Expr,
) -> Option<(LogicalPlan, usize, usize, Vec<Expr>)> {
    let node: Arc<dyn datafusion::logical_expr::UserDefinedLogicalNode>;
    let (pushed, fused, stay);
    if let Some(n) = csr_of(ext) {
        let (t, e, rest) = classify(pred, &names(&n.target), &names(&n.edge), n.close.is_none());
        if t.is_empty() && e.is_empty() {
            return None;
        }
        pushed = t.len() + e.len();
        fused = (n.target_filter.is_some() && !t.is_empty()) as usize
            + (n.edge_filter.is_some() && !e.is_empty()) as usize;
        let mut m = n.clone();
        m.target_filter = and_into(&n.target_filter, t);
        m.edge_filter = and_into(&n.edge_filter, e);
        node = Arc::new(m);
        stay = rest;
    } else {
        // A variable-length hop's end node (not a shortest path's: its filters are the
        // search's).
        let n = var_length_of(ext).filter(|n| n.shortest.is_none())?;
        let (t, _, rest) = classify(pred, &names(&n.target), &HashSet::new(), true);
        if t.is_empty() {
            return None;
        }
        pushed = t.len();
        fused = n.target_filter.is_some() as usize;
        let mut m = n.clone();
        m.target_filter = and_into(&n.target_filter, t);
        node = Arc::new(m);
        stay = rest;
    }
    Some((
        LogicalPlan::Extension(Extension { node }),
        pushed,
        fused,
        stay,
    ))
}

fn var_length_of(plan: &LogicalPlan) -> Option<&VarLengthExpand> {
    match plan {
        LogicalPlan::Extension(Extension { node }) => {
            node.as_any().downcast_ref::<VarLengthExpand>()
        }
        _ => None,
    }
}

fn and_into(existing: &Option<Expr>, more: Vec<Expr>) -> Option<Expr> {
    let mut all: Vec<Expr> = existing.iter().cloned().collect();
    all.extend(more);
    conjunction(all)
}

fn push(filter: &Filter, counters: &RuleCounters) -> Result<Option<LogicalPlan>> {
    // Down through nodes a predicate may cross (seed 003): projections that only pass
    // columns on (total, no shadowing) and sorts without a limit (sort commutation).
    let mut crossed: Vec<&LogicalPlan> = Vec::new();
    let mut ext = filter.input.as_ref();
    loop {
        match ext {
            LogicalPlan::Projection(p) if is_column_only(p) => {
                crossed.push(ext);
                ext = p.input.as_ref();
            }
            LogicalPlan::Sort(s) if s.fetch.is_none() => {
                crossed.push(ext);
                ext = s.input.as_ref();
            }
            _ => break,
        }
    }
    let Some((mut plan, pushed, fused, stay)) = take_conjuncts(ext, &filter.predicate) else {
        return Ok(None);
    };
    RuleCounters::add(&counters.pushed_filters, pushed);
    RuleCounters::add(&counters.fused_filters, fused);
    for node in crossed.into_iter().rev() {
        plan = node.with_new_exprs(node.expressions(), vec![plan])?;
    }
    match conjunction(stay) {
        Some(rest) => plan = LogicalPlan::Filter(Filter::try_new(rest, Arc::new(plan))?),
        None => RuleCounters::add(&counters.dropped_nodes, 1),
    }
    Ok(Some(plan))
}

impl OptimizerRule for PushCsrTargetFilters {
    fn name(&self) -> &str {
        "push_csr_target_filters"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        plan.transform_down(|node| match &node {
            LogicalPlan::Filter(f) => match push(f, &self.counters)? {
                Some(p) => Ok(Transformed::yes(p)),
                None => Ok(Transformed::no(node)),
            },
            _ => Ok(Transformed::no(node)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optimizer::test_util::{apply, lowered, optimized_without_our_rules};

    #[test]
    fn moves_target_and_edge_conjuncts_keeps_mixed_ones() {
        let plan = optimized_without_our_rules(
            "MATCH (a:Person {id: 1})-[k:KNOWS]->(b:Person) \
             WHERE k.creationDate > 5 AND b.age > 35 AND a.age < b.age RETURN b.firstName",
        );
        let (after, changed) = apply(PushCsrTargetFilters::default(), plan);
        assert!(changed);
        insta::assert_snapshot!("push_fires", after);
    }

    #[test]
    fn moves_end_node_conjuncts_into_a_variable_length_hop() {
        let plan = optimized_without_our_rules(
            "MATCH (a:Person {id: 1})-[:KNOWS*1..2]->(b:Person) WHERE b.age > 35 AND a.age < b.age RETURN b.firstName",
        );
        let (after, changed) = apply(PushCsrTargetFilters::default(), plan);
        assert!(changed);
        assert!(after.contains("filter=b__age > Int64(35)"), "{after}");
        assert!(after.contains("Filter: b__age > a__age"), "{after}");
        // A shortest path's end filter is not the search's: it stays above.
        let plan = optimized_without_our_rules(
            "MATCH p = shortestPath((a:Person {id: 1})-[:KNOWS*]->(b:Person)) WHERE b.age > 35 RETURN b.firstName",
        );
        let (after, _) = apply(PushCsrTargetFilters::default(), plan);
        assert!(!after.contains("filter=b__age"), "{after}");
    }

    #[test]
    fn does_not_cross_a_limit() {
        let plan = optimized_without_our_rules(
            "MATCH (a:Person {id: 1})-[k:KNOWS]->(b:Person) WITH b LIMIT 1 WHERE b.age > 35 RETURN b.firstName",
        );
        let (after, changed) = apply(PushCsrTargetFilters::default(), plan);
        assert!(!changed);
        insta::assert_snapshot!("push_not_across_limit", after);
    }

    #[test]
    fn volatile_conjuncts_stay() {
        use datafusion::functions::expr_fn::random;
        use datafusion::logical_expr::{col, lit};
        // The lowering never puts a volatile conjunct next to an expansion (see
        // `Lowerer::filter`); build one by hand to check the rule leaves it alone.
        let plan = optimized_without_our_rules(
            "MATCH (a:Person {id: 1})-[k:KNOWS]->(b:Person) RETURN b.age",
        );
        let mut csr = None;
        plan.apply(|p| {
            if csr_of(p).is_some() {
                csr = Some(p.clone());
            }
            Ok(datafusion::common::tree_node::TreeNodeRecursion::Continue)
        })
        .unwrap();
        let csr = csr.expect("plan has a CsrExpand");
        let pred = col("b__age")
            .gt(random() * lit(100.0))
            .and(col("b__age").gt(lit(35i64)));
        let plan = LogicalPlan::Filter(Filter::try_new(pred, Arc::new(csr)).unwrap());
        let (after, changed) = apply(PushCsrTargetFilters::default(), plan);
        assert!(changed);
        let first = after.lines().next().unwrap();
        assert!(
            first.starts_with("Filter: ") && first.contains("random()"),
            "{after}"
        );
        assert!(after.contains("filter=b__age > Int64(35)"), "{after}");
    }

    /// The first line of `plan` starting with `op` (trimmed).
    fn line<'a>(plan: &'a str, op: &str) -> &'a str {
        plan.lines()
            .map(str::trim)
            .find(|l| l.starts_with(op))
            .unwrap_or("")
    }

    // Eligibility contract (seed 003), on plans as lowered: every barrier still in place.

    #[test]
    fn crosses_a_sort_without_a_limit() {
        // Sort commutation: filtering a sorted input keeps the order of what is left.
        let plan = lowered(
            "MATCH (a:Person)-[:KNOWS]->(b:Person) WITH b ORDER BY b.age WHERE b.age > 35 RETURN b.firstName",
        );
        let (after, changed) = apply(PushCsrTargetFilters::default(), plan);
        assert!(changed, "{after}");
        assert!(
            line(&after, "CsrExpand:").contains("filter=b__age > Int64(35)"),
            "{after}"
        );
        assert!(after.contains("Sort: b__age"), "{after}");
    }

    #[test]
    fn does_not_cross_a_sort_with_a_limit() {
        let plan = lowered(
            "MATCH (a:Person {id: 1})-[:KNOWS]->(b:Person) WITH b ORDER BY b.age LIMIT 1 WHERE b.age > 35 RETURN b.firstName",
        );
        let (after, changed) = apply(PushCsrTargetFilters::default(), plan);
        assert!(!changed, "{after}");
    }

    #[test]
    fn does_not_cross_an_aggregation() {
        let plan = lowered(
            "MATCH (a:Person {id: 1})-[:KNOWS]->(b:Person) WITH b, count(*) AS c WHERE b.age > 35 RETURN b.firstName",
        );
        let (after, changed) = apply(PushCsrTargetFilters::default(), plan);
        assert!(!changed, "{after}");
    }

    #[test]
    fn does_not_cross_a_computed_projection() {
        // Totality: `10 / (b.age - 30)` can fail on a row the filter would drop first.
        let plan = lowered(
            "MATCH (a:Person {id: 1})-[:KNOWS]->(b:Person) WITH b, 10 / (b.age - 30) AS x WHERE b.age > 35 RETURN x",
        );
        let (after, changed) = apply(PushCsrTargetFilters::default(), plan);
        assert!(!changed, "{after}");
    }

    #[test]
    fn does_not_cross_a_renaming_projection() {
        // Shadowing: `age` names b.age only above the projection.
        let plan = lowered(
            "MATCH (a:Person {id: 1})-[:KNOWS]->(b:Person) WITH b.age AS age WHERE age > 35 RETURN age",
        );
        let (after, changed) = apply(PushCsrTargetFilters::default(), plan);
        assert!(!changed, "{after}");
    }
}
