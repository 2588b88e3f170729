//! `IntersectCycles`: a hop that closes a cycle onto a bound node, over the hop that reached
//! its near node, becomes one `CsrIntersect`: the new node is found in the intersection of
//! the two bound nodes' sorted neighbour lists, so the rows of the open hop are never
//! materialized only to be dropped by the closing check. Triangles, 4-cycles, diamonds and
//! "friends of friends who are also friends" all end this way.
//!
//! ```text
//! before:
//!   CsrExpand: key=c__id -> ..., close=a__id, edge=r3[...]
//!     Filter: r2__#eid != r1__#eid
//!       CsrExpand: key=b__id -> ..., take=c[c__id*], edge=r2[...]
//!         <rows of a and b>
//! after:
//!   Filter: r2__#eid != r1__#eid
//!     CsrIntersect: [CsrExpand: key=b__id ..., take=c[c__id*] ...] and [CsrExpand: key=c__id
//!                    ..., close=a__id ...]
//!       <rows of a and b>
//! ```
//!
//! The filters and column-only projections between the two hops are kept above (they read
//! only columns the fused operator outputs), and a projection restores the closing hop's
//! columns. Must not fire: a closing hop with a filter on its (bound) far node, a hop below
//! that is not the one reaching the closing hop's near node, a bound node the lower hop
//! itself produces, or two hops whose shared node is not of one node table (the ordinals
//! of the two lists must be comparable). Counted cycles are `FactorizeCounts`' (it runs
//! first).

use crate::operators::csr_expand::CsrExpand;
use crate::operators::csr_intersect::CsrIntersect;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, Result};
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan, LogicalPlanBuilder};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct IntersectCycles;

impl IntersectCycles {
    pub fn new() -> Self {
        Self
    }
}

fn csr(plan: &LogicalPlan) -> Option<&CsrExpand> {
    match plan {
        LogicalPlan::Extension(Extension { node }) => node.as_any().downcast_ref::<CsrExpand>(),
        _ => None,
    }
}

/// The fused plan for a closing hop, or `None` when the rule does not apply.
fn fuse(close: &CsrExpand) -> Option<Result<LogicalPlan>> {
    let bound = close.close.as_deref()?;
    if close.target_filter.is_some() {
        return None;
    }
    // Down through column-only projections and filters to the hop below.
    let mut filters: Vec<Expr> = Vec::new();
    let mut cur = &close.input;
    loop {
        match cur {
            LogicalPlan::Projection(p) if p.expr.iter().all(|e| matches!(e, Expr::Column(_))) => {
                cur = p.input.as_ref()
            }
            LogicalPlan::Filter(f) => {
                filters.push(f.predicate.clone());
                cur = f.input.as_ref();
            }
            _ => break,
        }
    }
    let open = csr(cur)?;
    let reaches = open.target.key.map(|k| &open.target.all[k].1) == Some(&close.key);
    let ok = open.close.is_none()
        && reaches
        && open.input.schema().has_column_with_unqualified_name(bound)
        && Arc::ptr_eq(&open.data.far_keys, &close.data.near_keys);
    if !ok {
        return None;
    }
    let fused = match CsrIntersect::try_new(open.input.clone(), open, close) {
        Ok(n) => LogicalPlan::Extension(Extension { node: Arc::new(n) }),
        Err(e) => return Some(Err(e)),
    };
    let columns = close
        .schema
        .fields()
        .iter()
        .map(|f| Expr::Column(Column::new_unqualified(f.name())));
    let mut b = LogicalPlanBuilder::from(fused);
    if let Some(p) = conjunction(filters) {
        b = match b.filter(p) {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        };
    }
    Some(b.project(columns).and_then(|b| b.build()))
}

impl OptimizerRule for IntersectCycles {
    fn name(&self) -> &str {
        "intersect_cycles"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        plan.transform_up(|node| match csr(&node).and_then(fuse) {
            Some(p) => Ok(Transformed::yes(p?)),
            None => Ok(Transformed::no(node)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::IntersectCycles;
    use crate::optimizer::test_util::{apply, optimized_without_our_rules};

    fn fused(q: &str) -> (String, bool) {
        apply(IntersectCycles::new(), optimized_without_our_rules(q))
    }

    #[test]
    fn a_triangle_s_last_node_comes_from_an_intersection() {
        let (p, changed) = fused(
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(a) RETURN a.id, b.id, c.id",
        );
        assert!(changed, "{p}");
        insta::assert_snapshot!(p, @r"
        Projection: a__id AS a.id, b__id AS b.id, c__id AS c.id
          Filter: __anonr3__#eid != __anonr1__#eid AND __anonr3__#eid != __anonr2__#eid
            Projection: a__id, __anonr1__#eid, b__id, __anonr2__#eid, c__id, __anonr3__#eid
              Projection: a__id, __anonr1__#eid, b__id, __anonr2__#eid, c__id, __anonr3__#src, __anonr3__#dst, __anonr3__#eid, __anonr3__creationDate
                Filter: __anonr2__#eid != __anonr1__#eid
                  CsrIntersect: [CsrExpand: key=a__id -> [__anonr2__#src, __anonr2__#dst], edges=7, incoming, take=c[c__id*, c__firstName, c__lastName, c__gender, c__age, c__birthday, c__creationDate, c__browserUsed], edge=__anonr2[__anonr2__#src, __anonr2__#dst, __anonr2__#eid, __anonr2__creationDate]] and [CsrExpand: key=c__id -> [__anonr3__#src, __anonr3__#dst], edges=7, incoming, close=b__id, edge=__anonr3[__anonr3__#src, __anonr3__#dst, __anonr3__#eid, __anonr3__creationDate]]
                    CsrExpand: key=a__id -> [__anonr1__#src, __anonr1__#dst], edges=7, take=b[b__id*, b__firstName, b__lastName, b__gender, b__age, b__birthday, b__creationDate, b__browserUsed], edge=__anonr1[__anonr1__#src, __anonr1__#dst, __anonr1__#eid, __anonr1__creationDate]
                      Projection: node_Person.id AS a__id
                        TableScan: node_Person projection=[id]
        ");
    }

    #[test]
    fn four_cycles_and_diamonds_too() {
        for q in [
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person)-[:KNOWS]->(a) RETURN a.id, d.id",
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(d:Person), (a)-[:KNOWS]->(c:Person)-[:KNOWS]->(d) RETURN a.id, b.id, c.id, d.id",
            "MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:KNOWS]-(a) RETURN c.firstName",
        ] {
            let (p, changed) = fused(q);
            assert!(changed && p.contains("CsrIntersect"), "{q}\n{p}");
        }
    }

    #[test]
    fn must_not_fire() {
        for q in [
            // No cycle.
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN a.id, c.id",
            // A cycle closed by a relationship of another node table's hop: the closing
            // hop's near node (the forum) is not reached by the hop below it.
            "MATCH (f:Forum)-[:HAS_MEMBER]->(p:Person), (f)-[:HAS_MODERATOR]->(p) RETURN f.id, p.id",
        ] {
            let (p, changed) = fused(q);
            assert!(!changed && !p.contains("CsrIntersect"), "{q}\n{p}");
        }
    }
}
