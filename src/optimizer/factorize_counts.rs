//! `FactorizeCounts`: `count(*)` over a chain of CSR hops is computed from counts per node
//! pushed along the hops (`CountPaths`), linear in the edges touched instead of in the paths:
//! for a two-hop path it is the sum over middle nodes of (paths into it) x (edges out of it).
//!
//! ```text
//! before:
//!   Aggregate: groupBy=[[]], aggr=[[count(Int64(1)) AS __agg0]]
//!     Filter: r1__#eid != r2__#eid
//!       CsrExpand: key=b__id ..., filter=c__age > 30
//!         CsrExpand: key=a__id ...
//!           <rows of a>
//! after:
//!   CountPaths: key=a__id, hops=[KNOWS, KNOWS filter=c__age > 30] -> __agg0
//!     <rows of a>
//! ```
//!
//! Must not fire: any other aggregate or a GROUP BY, a filter left between the hops (it reads
//! the rows), a closing hop, a hop whose key is not the previous hop's target, or relationship
//! uniqueness that could exclude a path: only two hops of one table walked the same way over a
//! table without self-loops are accepted (a repeated edge then can't occur), or hops over
//! different tables.

use crate::operators::count_paths::{CountHop, CountPaths};
use crate::operators::csr_expand::CsrExpand;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::Result;
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan, Operator};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct FactorizeCounts;

impl FactorizeCounts {
    pub fn new() -> Self {
        Self
    }
}

/// `count(<non-null literal>)` without DISTINCT or FILTER, and its alias (`count(NULL)`,
/// say of a property no label has, counts nothing).
fn count_star(e: &Expr) -> Option<String> {
    let Expr::Alias(a) = e else { return None };
    match a.expr.as_ref() {
        Expr::AggregateFunction(AggregateFunction { func, params })
            if func.name() == "count"
                && !params.distinct
                && params.filter.is_none()
                && params.args.len() == 1
                && matches!(&params.args[0], Expr::Literal(v, _) if !v.is_null()) =>
        {
            Some(a.name.clone())
        }
        _ => None,
    }
}

/// `x != y` between two column references: (x, y).
fn column_inequality(e: &Expr) -> Option<(String, String)> {
    match e {
        Expr::BinaryExpr(b) if b.op == Operator::NotEq => match (b.left.as_ref(), b.right.as_ref())
        {
            (Expr::Column(x), Expr::Column(y)) => Some((x.name.clone(), y.name.clone())),
            _ => None,
        },
        _ => None,
    }
}

fn csr(plan: &LogicalPlan) -> Option<&CsrExpand> {
    match plan {
        LogicalPlan::Extension(Extension { node }) => node.as_any().downcast_ref::<CsrExpand>(),
        _ => None,
    }
}

fn edge_id_col(n: &CsrExpand) -> Option<&str> {
    n.edge.all.get(2).map(|c| c.1.as_str())
}

fn factorize(agg: &datafusion::logical_expr::Aggregate) -> Option<Result<LogicalPlan>> {
    if !agg.group_expr.is_empty() || agg.aggr_expr.len() != 1 {
        return None;
    }
    let out = count_star(&agg.aggr_expr[0])?;
    // Skip column-only projections; allow one uniqueness filter.
    let mut plan = agg.input.as_ref();
    let mut uniqueness: Vec<(String, String)> = Vec::new();
    loop {
        match plan {
            LogicalPlan::Projection(p) if p.expr.iter().all(|e| matches!(e, Expr::Column(_))) => {
                plan = p.input.as_ref()
            }
            LogicalPlan::Filter(f) if uniqueness.is_empty() => {
                for c in split_conjunction(&f.predicate) {
                    uniqueness.push(column_inequality(c)?);
                }
                plan = f.input.as_ref();
            }
            _ => break,
        }
    }
    // The chain, last hop first.
    let mut chain: Vec<&CsrExpand> = Vec::new();
    let mut cur = plan;
    while let Some(n) = csr(cur) {
        chain.push(n);
        cur = &n.input;
        // Column-only projections may sit between hops.
        while let LogicalPlan::Projection(p) = cur {
            if !p.expr.iter().all(|e| matches!(e, Expr::Column(_))) {
                break;
            }
            cur = p.input.as_ref();
        }
    }
    if chain.is_empty() {
        return None;
    }
    chain.reverse();
    if chain.iter().any(|n| n.close.is_some()) {
        return None;
    }
    // Arms: chains of hops out of the root (the first hop's key). A hop continues the arm whose
    // last hop ended at its key, or starts a new arm at the root.
    let root = chain[0].key.as_str();
    let target_key = |n: &CsrExpand| n.target.key.map(|k| n.target.all[k].1.clone());
    let mut arms: Vec<Vec<usize>> = Vec::new();
    for (i, n) in chain.iter().enumerate() {
        if n.key == root {
            arms.push(vec![i]);
            continue;
        }
        let arm = arms.iter_mut().find(|a| {
            target_key(chain[*a.last().expect("non-empty")]).as_deref() == Some(n.key.as_str())
        })?;
        arm.push(i);
    }
    // Where is each hop: (arm, position).
    let place = |i: usize| {
        arms.iter()
            .enumerate()
            .find_map(|(a, hops)| hops.iter().position(|&h| h == i).map(|p| (a, p)))
            .expect("every hop is in an arm")
    };
    // Relationship uniqueness between two hops of one table can only be ignored when no path
    // can use one edge for both (the table has no self-loops, each hop walks one way): two
    // consecutive hops of an arm walked the same way, or the first hops of two arms walked
    // opposite ways. Anything else: not factorized.
    let safe = |i: usize, j: usize| {
        let (a, b) = (chain[i], chain[j]);
        if a.rel != b.rel {
            return true;
        }
        if a.orientations.len() != 1 || b.orientations.len() != 1 || a.data.index.has_self_loops() {
            return false;
        }
        let ((ai, pi), (aj, pj)) = (place(i), place(j));
        (ai == aj && pi.abs_diff(pj) == 1 && a.orientations == b.orientations)
            || (ai != aj && pi == 0 && pj == 0 && a.orientations != b.orientations)
    };
    for (x, y) in &uniqueness {
        let find = |c: &str| chain.iter().position(|n| edge_id_col(n) == Some(c));
        let (Some(i), Some(j)) = (find(x), find(y)) else {
            return None;
        };
        if !safe(i, j) {
            return None;
        }
    }
    // Hops over one table must carry their uniqueness filter (else it was dropped elsewhere).
    for i in 0..chain.len() {
        for j in i + 1..chain.len() {
            if chain[i].rel == chain[j].rel {
                let (x, y) = (edge_id_col(chain[i])?, edge_id_col(chain[j])?);
                if !uniqueness
                    .iter()
                    .any(|(p, q)| (p == x && q == y) || (p == y && q == x))
                {
                    return None;
                }
            }
        }
    }
    let hop = |n: &CsrExpand| CountHop {
        rel_type: n.rel_type.clone(),
        orientations: n.orientations.clone(),
        data: n.data.clone(),
        edge: n.edge.clone(),
        target: n.target.clone(),
        target_filter: n.target_filter.clone(),
        edge_filter: n.edge_filter.clone(),
    };
    let arms: Vec<Vec<CountHop>> = arms
        .iter()
        .map(|a| a.iter().map(|&i| hop(chain[i])).collect())
        .collect();
    let first = chain[0];
    Some(
        CountPaths::try_new(first.input.clone(), first.key.clone(), arms, out)
            .map(|c| LogicalPlan::Extension(Extension { node: Arc::new(c) })),
    )
}

impl OptimizerRule for FactorizeCounts {
    fn name(&self) -> &str {
        "factorize_counts"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        plan.transform_down(|node| match &node {
            LogicalPlan::Aggregate(a) => match factorize(a) {
                Some(p) => Ok(Transformed::yes(p?)),
                None => Ok(Transformed::no(node)),
            },
            _ => Ok(Transformed::no(node)),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::session::Graph;
    use crate::Params;

    fn optimized(q: &str) -> String {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let g = Graph::sample().await.unwrap();
            let (plan, _) = g.plan(q, &Params::new()).unwrap();
            g.optimize(&plan).unwrap().display_indent().to_string()
        })
    }

    #[test]
    fn counts_a_two_hop_chain_per_node() {
        let p = optimized("MATCH (a:Person)-[:KNOWS]->(b:Person)-[:IS_LOCATED_IN]->(c:City) WHERE b.age > 30 RETURN count(*)");
        // Re-rooted at the filtered middle node: a star of two arms.
        insta::assert_snapshot!(p, @r"
        Projection: __agg0 AS count(*)
          CountPaths: key=b__id, arms=[[KNOWS (in)], [IS_LOCATED_IN]] -> __agg0
            Projection: node_Person.id AS b__id
              Filter: node_Person.age > Int64(30)
                TableScan: node_Person projection=[id, age]
        ");
        // One table twice, walked the same way, no self-loops: uniqueness can't bite.
        let p =
            optimized("MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN count(*)");
        assert!(p.contains("CountPaths"), "{p}");
    }

    #[test]
    fn must_not_fire() {
        for q in [
            // Not a plain count(*).
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN count(DISTINCT b)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, count(*)",
            // A filter that reads two hops' nodes stays between them.
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE a.age < c.age RETURN count(*)",
            // Undirected over one table: a path could walk an edge back.
            "MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person) RETURN count(*)",
            // Three hops of one table: a-b-a-b repeats an edge.
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person) RETURN count(*)",
            // A closing hop.
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(a) RETURN count(*)",
            // count(NULL) counts no row (a property the inferred label lacks).
            "MATCH (f:Forum)-[:HAS_MODERATOR]->(p) RETURN count(p.content)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN count(null)",
        ] {
            let p = optimized(q);
            assert!(!p.contains("CountPaths"), "{q}\n{p}");
        }
    }
}
