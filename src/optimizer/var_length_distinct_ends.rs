//! `VarLengthDistinctEnds`: when a variable-length traversal is only consumed through
//! DISTINCT (a DISTINCT projection, or aggregates that ignore duplicates: `count(DISTINCT x)`,
//! `min`, `max`), it finds the distinct end nodes breadth-first with a visited bitmap instead of
//! enumerating every path.
//!
//! ```text
//! before:
//!   Aggregate: aggr=[count(DISTINCT f__id)]
//!     VarLengthExpand: key=p__id, type=KNOWS, length=1..3, ...
//! after:
//!   Aggregate: aggr=[count(DISTINCT f__id)]
//!     VarLengthExpand: key=p__id, type=KNOWS, length=1..3, ..., distinct ends (bfs)
//! ```
//!
//! It looks through projections, filters and the UNION ALL of a branched MATCH.
//!
//! Must not fire when anything reads the path's edge ids (`size(r)`, relationship uniqueness
//! against another relationship), when a non-distinct aggregate (`count(*)`, `sum`, `collect`)
//! counts paths, when the traversal is undirected, or when the minimum length is above 1 (a
//! breadth-first distance is then not the same as "some path of a length in range").

use crate::operators::var_length::VarLengthExpand;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::Result;
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::{Distinct, Expr, Extension, LogicalPlan};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct VarLengthDistinctEnds;

impl VarLengthDistinctEnds {
    pub fn new() -> Self {
        Self
    }
}

/// Aggregates whose result doesn't change when input rows repeat.
fn duplicate_insensitive(e: &Expr) -> bool {
    match e {
        Expr::Alias(a) => duplicate_insensitive(&a.expr),
        Expr::AggregateFunction(AggregateFunction { func, params }) => {
            params.distinct || matches!(func.name(), "min" | "max")
        }
        _ => false,
    }
}

fn reads(exprs: &[Expr], col: &str) -> bool {
    exprs
        .iter()
        .any(|e| e.column_refs().iter().any(|c| c.name == col))
}

/// Marks the traversal below `plan` (through projections and filters that don't read its edge
/// ids) as distinct-ends; `None` if there is none or it is not eligible.
fn mark(plan: &LogicalPlan, above: &[Expr]) -> Result<Option<LogicalPlan>> {
    match plan {
        LogicalPlan::Projection(_) | LogicalPlan::Filter(_) => {
            let mut exprs = above.to_vec();
            exprs.extend(plan.expressions());
            let child = plan.inputs()[0];
            match mark(child, &exprs)? {
                Some(new_child) => Ok(Some(
                    plan.clone()
                        .with_new_exprs(plan.expressions(), vec![new_child])?,
                )),
                None => Ok(None),
            }
        }
        // The branches of a branched MATCH: each may traverse breadth-first (what is above
        // ignores duplicates across the union as well as within a branch).
        LogicalPlan::Union(u) => {
            let mut any = false;
            let mut inputs = Vec::new();
            for i in &u.inputs {
                match mark(i, above)? {
                    Some(n) => {
                        any = true;
                        inputs.push(n);
                    }
                    None => inputs.push(i.as_ref().clone()),
                }
            }
            if !any {
                return Ok(None);
            }
            Ok(Some(plan.clone().with_new_exprs(vec![], inputs)?))
        }
        LogicalPlan::Extension(Extension { node }) => {
            let Some(n) = node.as_any().downcast_ref::<VarLengthExpand>() else {
                return Ok(None);
            };
            // Paths as values or shortest paths need the paths themselves.
            if n.distinct
                || n.elems.is_some()
                || n.shortest.is_some()
                || !n.directed()
                || n.min > 1
                || reads(above, &n.eids)
            {
                return Ok(None);
            }
            let mut m = n.clone();
            m.distinct = true;
            Ok(Some(LogicalPlan::Extension(Extension {
                node: Arc::new(m),
            })))
        }
        _ => Ok(None),
    }
}

impl OptimizerRule for VarLengthDistinctEnds {
    fn name(&self) -> &str {
        "var_length_distinct_ends"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        plan.transform_down(|node| {
            let marked = match &node {
                LogicalPlan::Aggregate(a) if a.aggr_expr.iter().all(duplicate_insensitive) => {
                    let mut exprs = a.group_expr.clone();
                    exprs.extend(a.aggr_expr.iter().cloned());
                    mark(&a.input, &exprs)?
                        .map(|input| node.clone().with_new_exprs(node.expressions(), vec![input]))
                }
                LogicalPlan::Distinct(Distinct::All(input)) => {
                    let cols: Vec<Expr> = input
                        .schema()
                        .fields()
                        .iter()
                        .map(|f| {
                            datafusion::logical_expr::col(
                                datafusion::common::Column::new_unqualified(f.name()),
                            )
                        })
                        .collect();
                    mark(input, &cols)?
                        .map(|i| Ok(LogicalPlan::Distinct(Distinct::All(Arc::new(i)))))
                }
                _ => None,
            };
            match marked {
                Some(p) => Ok(Transformed::yes(p?)),
                None => Ok(Transformed::no(node)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optimizer::test_util::{apply, optimized_without_our_rules};

    #[test]
    fn every_branch_of_a_branched_match_goes_breadth_first() {
        let q = "MATCH (a:Person {id: 1})-[:KNOWS|LIKES*1..2]->(x) RETURN count(DISTINCT x) AS n";
        let (after, changed) = apply(VarLengthDistinctEnds::new(), optimized_without_our_rules(q));
        assert!(changed, "{after}");
        let hops: Vec<&str> = after
            .lines()
            .filter(|l| l.contains("VarLengthExpand"))
            .collect();
        assert!(hops.len() >= 2, "{after}");
        assert!(
            hops.iter().all(|l| l.contains("distinct ends (bfs)")),
            "{after}"
        );
        // Counting paths needs them all.
        let q = "MATCH (a:Person {id: 1})-[:KNOWS|LIKES*1..2]->(x) RETURN count(*) AS n";
        let (after, changed) = apply(VarLengthDistinctEnds::new(), optimized_without_our_rules(q));
        assert!(!changed, "{after}");
    }

    #[test]
    fn distinct_ends_are_found_breadth_first() {
        let plan = optimized_without_our_rules(
            "MATCH (a:Person {id: 1})-[:KNOWS*1..3]->(b:Person) RETURN count(DISTINCT b) AS n",
        );
        let (after, changed) = apply(VarLengthDistinctEnds::new(), plan);
        assert!(changed);
        assert!(
            after.contains("length=1..3, edges=7, distinct ends (bfs)"),
            "{after}"
        );
        let plan = optimized_without_our_rules(
            "MATCH (a:Person {id: 1})-[:KNOWS*1..3]->(b:Person) RETURN DISTINCT b.firstName",
        );
        assert!(apply(VarLengthDistinctEnds::new(), plan).1);
    }

    #[test]
    fn must_not_fire_when_paths_count_or_are_read() {
        for q in [
            // count(*) counts paths.
            "MATCH (a:Person {id: 1})-[:KNOWS*1..3]->(b:Person) RETURN count(*)",
            // The path's length is read.
            "MATCH (a:Person {id: 1})-[r:KNOWS*1..3]->(b:Person) RETURN DISTINCT size(r)",
            // Undirected, or a minimum above 1.
            "MATCH (a:Person {id: 1})-[:KNOWS*1..3]-(b:Person) RETURN count(DISTINCT b)",
            "MATCH (a:Person {id: 1})-[:KNOWS*2..3]->(b:Person) RETURN count(DISTINCT b)",
        ] {
            let plan = optimized_without_our_rules(q);
            let (after, changed) = apply(VarLengthDistinctEnds::new(), plan);
            assert!(!changed && !after.contains("bfs"), "{q}\n{after}");
        }
    }
}
