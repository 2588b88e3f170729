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
//! Also `count(b)` of a node or relationship of the chain (never null on a path), and:
//!
//! - grouped by columns of the root's rows (`RETURN a.id, count(*)`): each root row with its
//!   count (`CountPaths ... per row`); rows of a node scan grouped by the node's key are each
//!   their own group, so no aggregate remains (a one-hop count without filters is the node's
//!   degree, read from the CSR offsets); other groupings sum the per-row counts. `count(DISTINCT
//!   b)` of the one hop to `b` per node too (distinct neighbours of sorted runs);
//! - a triangle (`(a)-[]->(b)-[]->(c)-[]->(a)`, any directions): the closing hop is kept as
//!   `closed by`, and the executor intersects sorted neighbour lists instead of expanding.
//!
//! ```text
//! before:
//!   Aggregate: groupBy=[[a__id]], aggr=[[count(Int64(1)) AS __agg0]]
//!     CsrExpand: key=a__id ...
//!       Projection: node_Person.id AS a__id
//!         TableScan: node_Person
//! after:
//!   Projection: a__id, __agg0
//!     CountPaths: key=a__id, arms=[[KNOWS]] per row -> __agg0
//!       Projection: node_Person.id AS a__id
//!         TableScan: node_Person
//! ```
//!
//! Must not fire: any other aggregate, a grouping by anything but the root's columns,
//! `count(DISTINCT)` without one row per node or over more than one hop, a filter left between
//! the hops (it reads the rows), a closing hop other than a triangle's, a hop whose key is not
//! the previous hop's target, or relationship uniqueness that could exclude a path: only two
//! hops of one table walked the same way over a table without self-loops are accepted (a
//! repeated edge then can't occur), or hops over different tables; in a triangle, no table two
//! hops share may have a self-loop.

use crate::operators::count_paths::{CountHop, CountPaths};
use crate::operators::csr_expand::CsrExpand;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::Column;
use datafusion::common::Result;
use datafusion::functions_aggregate::expr_fn::sum;
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{col, Expr, Extension, LogicalPlan, LogicalPlanBuilder, Operator};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct FactorizeCounts;

impl FactorizeCounts {
    pub fn new() -> Self {
        Self
    }
}

/// What an aggregate counts: its output name, the column it counts (`None`: rows, as
/// `count(*)` or `count(<non-null literal>)`), and whether DISTINCT.
struct Counted {
    out: String,
    arg: Option<String>,
    distinct: bool,
}

/// `count(<non-null literal>)` or `count(<column>)` (the column checked later), without
/// FILTER, and its alias (`count(NULL)`, say of a property no label has, counts nothing).
fn counted(e: &Expr) -> Option<Counted> {
    let Expr::Alias(a) = e else { return None };
    let Expr::AggregateFunction(AggregateFunction { func, params }) = a.expr.as_ref() else {
        return None;
    };
    if func.name() != "count" || params.filter.is_some() || params.args.len() != 1 {
        return None;
    }
    let arg = match &params.args[0] {
        Expr::Literal(v, _) if !v.is_null() && !params.distinct => None,
        Expr::Column(c) => Some(c.name.clone()),
        _ => return None,
    };
    Some(Counted {
        out: a.name.clone(),
        arg,
        distinct: params.distinct,
    })
}

/// Whether `plan` has one row per node of its table: a node table's scan under filters,
/// projections, sorts and limits only (node keys are unique).
fn one_row_per_node(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Projection(p) => one_row_per_node(&p.input),
        LogicalPlan::Filter(f) => one_row_per_node(&f.input),
        LogicalPlan::Sort(s) => one_row_per_node(&s.input),
        LogicalPlan::Limit(l) => one_row_per_node(&l.input),
        LogicalPlan::TableScan(t) => t.table_name.table().starts_with("node_"),
        _ => false,
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

/// The far node's key column of a hop.
fn target_key(n: &CsrExpand) -> Option<String> {
    n.target.key.map(|k| n.target.all[k].1.clone())
}

fn edge_id_col(n: &CsrExpand) -> Option<&str> {
    n.edge.all.get(2).map(|c| c.1.as_str())
}

/// `plan` below column-only projections and uniqueness filters (their inequalities added to
/// `uniqueness`); `None` at a filter of anything else.
fn skip<'p>(
    mut plan: &'p LogicalPlan,
    uniqueness: &mut Vec<(String, String)>,
) -> Option<&'p LogicalPlan> {
    loop {
        match plan {
            LogicalPlan::Projection(p) if p.expr.iter().all(|e| matches!(e, Expr::Column(_))) => {
                plan = p.input.as_ref()
            }
            LogicalPlan::Filter(f) => {
                for c in split_conjunction(&f.predicate) {
                    uniqueness.push(column_inequality(c)?);
                }
                plan = f.input.as_ref();
            }
            _ => return Some(plan),
        }
    }
}

/// The hops under an aggregate, first hop first, and the relationship-uniqueness
/// inequalities of the filters above and between them (column-only projections skipped).
fn hop_chain(input: &LogicalPlan) -> Option<(Vec<&CsrExpand>, Vec<(String, String)>)> {
    let mut uniqueness: Vec<(String, String)> = Vec::new();
    let mut chain: Vec<&CsrExpand> = Vec::new();
    let mut cur = skip(input, &mut uniqueness)?;
    while let Some(n) = csr(cur) {
        chain.push(n);
        cur = &n.input;
        if csr(cur).is_none() {
            // Below the first hop: the root's rows, whatever they are.
            let below = skip(cur, &mut uniqueness);
            match below.and_then(csr) {
                Some(_) => cur = below.expect("a hop"),
                None => break,
            }
        }
    }
    chain.reverse();
    (!chain.is_empty()).then_some((chain, uniqueness))
}

/// Arms: chains of hops (indexes into `chain`) out of the root (the first hop's key). A hop
/// continues the arm whose last hop ended at its key, or starts a new arm at the root.
fn arms_of(chain: &[&CsrExpand]) -> Option<Vec<Vec<usize>>> {
    let root = chain[0].key.as_str();
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
    Some(arms)
}

/// Relationship uniqueness between two hops of one table can only be ignored when no path
/// can use one edge for both (the table has no self-loops, each hop walks one way): two
/// consecutive hops of an arm walked the same way, or the first hops of two arms walked
/// opposite ways. Hops over one table must carry their uniqueness filter (else it was
/// dropped elsewhere).
fn uniqueness_implied(
    chain: &[&CsrExpand],
    arms: &[Vec<usize>],
    uniqueness: &[(String, String)],
) -> bool {
    let place = |i: usize| {
        arms.iter()
            .enumerate()
            .find_map(|(a, hops)| hops.iter().position(|&h| h == i).map(|p| (a, p)))
            .expect("every hop is in an arm")
    };
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
    let find = |c: &str| chain.iter().position(|n| edge_id_col(n) == Some(c));
    let all_safe = uniqueness.iter().all(|(x, y)| match (find(x), find(y)) {
        (Some(i), Some(j)) => safe(i, j),
        _ => false,
    });
    all_safe && carries_uniqueness(chain, uniqueness)
}

/// Every two hops over one table have their inequality among `uniqueness`.
fn carries_uniqueness(chain: &[&CsrExpand], uniqueness: &[(String, String)]) -> bool {
    for i in 0..chain.len() {
        for j in i + 1..chain.len() {
            if chain[i].rel != chain[j].rel {
                continue;
            }
            let (Some(x), Some(y)) = (edge_id_col(chain[i]), edge_id_col(chain[j])) else {
                return false;
            };
            if !uniqueness
                .iter()
                .any(|(p, q)| (p == x && q == y) || (p == y && q == x))
            {
                return false;
            }
        }
    }
    true
}

/// A triangle: the last of three hops closes it, onto the root after a two-hop arm, or onto
/// the end of one of two one-hop arms from the end of the other. The hops in the order
/// `CountPathsExec` expects (the closing hop last, from the second arm's end to the first's).
/// Its three nodes are distinct unless some edge is a self-loop, so with no self-loop in a
/// table two hops share, no two of its edges can be one and uniqueness is implied.
fn triangle<'a>(
    chain: &[&'a CsrExpand],
    uniqueness: &[(String, String)],
) -> Option<Vec<&'a CsrExpand>> {
    let [h1, h2, h3] = *chain else { return None };
    let (t1, t2) = (target_key(h1)?, target_key(h2)?);
    let closes = |n: &CsrExpand, from: &str, to: &str| {
        n.key == from && n.close.as_deref() == Some(to) && n.target_filter.is_none()
    };
    // One arm closed onto the root, or two arms closed from the second's end to the first's.
    let one_arm = h2.key == t1 && closes(h3, &t2, &h1.key);
    let ordered = if one_arm || (h1.key == h2.key && closes(h3, &t2, &t1)) {
        vec![h1, h2, h3]
    } else if h1.key == h2.key && closes(h3, &t1, &t2) {
        vec![h2, h1, h3]
    } else {
        return None;
    };
    let shared_loops = [(h1, h2), (h1, h3), (h2, h3)]
        .iter()
        .any(|(a, b)| a.rel == b.rel && a.data.index.has_self_loops());
    let on_hops = |c: &str| chain.iter().any(|n| edge_id_col(n) == Some(c));
    let ok = h1.close.is_none()
        && h2.close.is_none()
        && !shared_loops
        && uniqueness.iter().all(|(x, y)| on_hops(x) && on_hops(y))
        && carries_uniqueness(chain, uniqueness);
    ok.then_some(ordered)
}

fn count_hop(n: &CsrExpand) -> CountHop {
    CountHop {
        rel_type: n.rel_type.clone(),
        orientations: n.orientations.clone(),
        data: n.data.clone(),
        edge: n.edge.clone(),
        target: n.target.clone(),
        target_filter: n.target_filter.clone(),
        edge_filter: n.edge_filter.clone(),
    }
}

fn factorize(agg: &datafusion::logical_expr::Aggregate) -> Option<Result<LogicalPlan>> {
    if agg.aggr_expr.len() != 1 {
        return None;
    }
    let counted = counted(&agg.aggr_expr[0])?;
    let (mut chain, uniqueness) = hop_chain(&agg.input)?;
    // A counted column is never null on a path: the root's key, an edge id, a far node's key.
    if let Some(c) = &counted.arg {
        let on_path = *c == chain[0].key
            || chain
                .iter()
                .any(|n| edge_id_col(n) == Some(c) || target_key(n).as_deref() == Some(c));
        if !on_path {
            return None;
        }
    }
    let mut close = None;
    if chain.iter().any(|n| n.close.is_some()) {
        chain = triangle(&chain, &uniqueness)?;
        close = chain.pop().map(count_hop);
    }
    let arms = arms_of(&chain)?;
    if close.is_none() && !uniqueness_implied(&chain, &arms, &uniqueness) {
        return None;
    }
    let arms: Vec<Vec<CountHop>> = arms
        .iter()
        .map(|a| a.iter().map(|&i| count_hop(chain[i])).collect())
        .collect();
    let first = chain[0];
    if agg.group_expr.is_empty() {
        if counted.distinct {
            return None;
        }
        let (input, key) = (first.input.clone(), first.key.clone());
        return Some(CountPaths::try_new(input, key, arms, counted.out).map(|c| {
            let c = match close {
                Some(h) => c.with_close(h),
                None => c,
            };
            LogicalPlan::Extension(Extension { node: Arc::new(c) })
        }));
    }
    grouped(agg, first, arms, close, counted, target_key(first))
}

/// A count grouped by columns of the root's rows: each root row with its count. When the
/// rows are one per node and grouped by its key, each is its own group (no aggregate);
/// otherwise the counts are summed per group. `count(DISTINCT b)` only for one hop to `b`
/// from one row per node.
fn grouped(
    agg: &datafusion::logical_expr::Aggregate,
    first: &CsrExpand,
    arms: Vec<Vec<CountHop>>,
    close: Option<CountHop>,
    counted: Counted,
    far_key: Option<String>,
) -> Option<Result<LogicalPlan>> {
    let root = first.input.schema();
    // Grouping columns of the root's rows, each with the name the aggregate gave it.
    let mut groups: Vec<(Column, Expr)> = Vec::new();
    for g in &agg.group_expr {
        let c = match g {
            Expr::Column(c) => c,
            Expr::Alias(a) => match a.expr.as_ref() {
                Expr::Column(c) => c,
                _ => return None,
            },
            _ => return None,
        };
        if !root.has_column(c) {
            return None;
        }
        groups.push((c.clone(), g.clone()));
    }
    let per_node =
        one_row_per_node(&first.input) && groups.iter().any(|(c, _)| c.name == first.key);
    let one_hop = arms.len() == 1 && arms[0].len() == 1;
    if counted.distinct && !(per_node && one_hop && counted.arg == far_key) {
        return None;
    }
    let (input, key, out) = (first.input.clone(), first.key.clone(), counted.out);
    if counted.distinct && close.is_some() {
        return None;
    }
    let node = CountPaths::try_new_per_row(input, key, arms, out.clone(), counted.distinct);
    let plan = match node {
        Ok(n) => {
            let n = match close {
                Some(h) => n.with_close(h),
                None => n,
            };
            LogicalPlan::Extension(Extension { node: Arc::new(n) })
        }
        Err(e) => return Some(Err(e)),
    };
    let exprs = groups.into_iter().map(|(_, g)| g);
    let builder = LogicalPlanBuilder::from(plan);
    Some(
        if per_node {
            builder.project(exprs.chain([col(&out)]))
        } else {
            builder.aggregate(exprs, [sum(col(&out)).alias(&out)])
        }
        .and_then(|b| b.build()),
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
    fn counts_per_node_without_an_aggregate() {
        let p = optimized("MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, count(b) AS c ORDER BY c DESC LIMIT 3");
        insta::assert_snapshot!(p, @r"
        Projection: __ret0 AS a.id, __ret1 AS c
          Sort: __ret1 DESC NULLS FIRST, fetch=3
            Projection: a__id AS __ret0, __agg0 AS __ret1
              CountPaths: key=a__id, arms=[[KNOWS]] per row -> __agg0
                Projection: node_Person.id AS a__id
                  TableScan: node_Person projection=[id]
        ");
        // Re-rooted at the node counted per; distinct neighbours of each.
        let p = optimized("MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN b.id, count(DISTINCT a)");
        assert!(
            p.contains("CountPaths: key=b__id, arms=[[KNOWS (in)]] per row, distinct"),
            "{p}"
        );
        assert!(!p.contains("Aggregate"), "{p}");
    }

    #[test]
    fn sums_per_row_counts_for_other_groupings() {
        let p = optimized("MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE a.age > 30 RETURN a.firstName, count(*)");
        insta::assert_snapshot!(p, @r"
        Projection: __ret0 AS a.firstName, __agg0 AS count(*)
          Aggregate: groupBy=[[a__firstName AS __ret0]], aggr=[[sum(__agg0) AS __agg0]]
            Projection: a__firstName, __agg0
              CountPaths: key=a__id, arms=[[KNOWS, KNOWS]] per row -> __agg0
                Projection: node_Person.id AS a__id, node_Person.firstName AS a__firstName
                  Filter: node_Person.age > Int64(30)
                    TableScan: node_Person projection=[id, firstName, age]
        ");
    }

    #[test]
    fn counts_triangles_by_intersection() {
        let p = optimized("MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(a) RETURN count(*)");
        insta::assert_snapshot!(p, @r"
        Projection: __agg0 AS count(*)
          CountPaths: key=a__id, arms=[[KNOWS] closed by [KNOWS (in)], [KNOWS (in)]] -> __agg0
            Projection: node_Person.id AS a__id
              TableScan: node_Person projection=[id]
        ");
        let p = optimized("MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:KNOWS]-(a) RETURN a.id, count(*)");
        assert!(
            p.contains("closed by [KNOWS (both)]") && p.contains("per row"),
            "{p}"
        );
    }

    #[test]
    fn must_not_fire() {
        for q in [
            // Not a plain count(*).
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN count(DISTINCT b)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, sum(b.age)",
            // DISTINCT needs one row per node and one hop.
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.firstName, count(DISTINCT b)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN a.id, count(DISTINCT c)",
            // Grouped by a node that is not the root (the filtered node is).
            "MATCH (a:Person)-[:KNOWS]->(b:Person) WHERE b.age > 30 RETURN a.id, count(*)",
            // Grouped by a computed value.
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.age > 30 AS old, count(*)",
            // Rows that are not one per node (an UNWIND before): counts are summed, not
            // DISTINCT-counted.
            "UNWIND [1, 2] AS x MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, count(DISTINCT b)",
            // A 4-cycle: uniqueness could exclude a path (a-b-a-b).
            "MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:KNOWS]-(d:Person)-[:KNOWS]-(a) RETURN count(*)",
            // A filter that reads two hops' nodes stays between them.
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE a.age < c.age RETURN count(*)",
            // Undirected over one table: a path could walk an edge back.
            "MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person) RETURN count(*)",
            // Three hops of one table: a-b-a-b repeats an edge.
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person) RETURN count(*)",
            // A closing hop that is not a triangle's.
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
