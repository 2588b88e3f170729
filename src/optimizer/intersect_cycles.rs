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
//!
//! A closing hop left above a hop that neither of its nodes comes from (a clique's chord) is
//! moved below it when it fuses there: the chord's triangle is intersected first and the
//! last node's intersection sees only triangles.
//!
//! When only `count(*)` of the matches is wanted (grouped by columns of the rows below the
//! intersection, or not at all), the intersection counts them instead (`counted`): the
//! filters above it become its match filter, evaluated on the few columns they read, and the
//! aggregate adds up the per-row counts. No row of a match is built. Must not fire: another
//! aggregate (DISTINCT, a column's count, a value), a grouping by a column of the cycle's
//! new node or relationships, anything but filters and column-only projections in between.
//!
//! ```text
//! before:
//!   Aggregate: groupBy=[[]], aggr=[[count(Int64(1)) AS __agg0]]
//!     Filter: r4__#eid != r2__#eid
//!       CsrIntersect: [...] and [...]
//! after:
//!   Projection: coalesce(__agg0#n, Int64(0)) AS __agg0
//!     Aggregate: groupBy=[[]], aggr=[[sum(__agg0#matches) AS __agg0#n]]
//!       CsrIntersect: [...] and [...] counted where r4__#eid != r2__#eid -> __agg0#matches
//! ```

use crate::operators::csr_expand::CsrExpand;
use crate::operators::csr_intersect::CsrIntersect;
use crate::operators::UnaryNode;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, Result};
use datafusion::functions::expr_fn::coalesce;
use datafusion::functions_aggregate::expr_fn::sum;
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{lit, Aggregate, Expr, Extension, LogicalPlan, LogicalPlanBuilder};
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
        // A counting hop keeps its input's rows, an optional one its unmatched rows: not
        // hops of a chain of matches.
        LogicalPlan::Extension(Extension { node }) => node
            .as_any()
            .downcast_ref::<CsrExpand>()
            .filter(|n| n.count.is_none() && !n.optional),
        _ => None,
    }
}

/// The fused plan for a closing hop, or `None` when the rule does not apply.
fn fuse(close: &CsrExpand) -> Option<Result<LogicalPlan>> {
    let bound = close.close.as_deref()?;
    if close.target_filter.is_some() {
        return None;
    }
    let (filters, cur) = below_filters(&close.input);
    // The hop that reached the closing hop's near node, or an intersection that found it
    // (which then intersects one more list).
    let (input, open, mut closes) = match cur {
        LogicalPlan::Extension(Extension { node }) => {
            match node.as_any().downcast_ref::<CsrIntersect>() {
                Some(x) if x.count.is_none() => (&x.input, &x.open, x.closes.iter().collect()),
                _ => {
                    let open = csr(cur)?;
                    (&open.input, open, vec![])
                }
            }
        }
        _ => return None,
    };
    let reaches = open.target.key.map(|k| &open.target.all[k].1) == Some(&close.key);
    let ok = open.close.is_none()
        && reaches
        && input.schema().has_column_with_unqualified_name(bound)
        && Arc::ptr_eq(&open.data.far_keys, &close.data.near_keys);
    if !ok {
        return None;
    }
    closes.push(close);
    let fused = CsrIntersect::try_new(input.clone(), open, &closes).map(extension);
    Some(fused.and_then(|f| restore(f, filters, close)))
}

/// `plan` below column-only projections and filters, and the filters' predicates.
fn below_filters(mut plan: &LogicalPlan) -> (Vec<Expr>, &LogicalPlan) {
    let mut filters = Vec::new();
    loop {
        match plan {
            LogicalPlan::Projection(p) if p.expr.iter().all(|e| matches!(e, Expr::Column(_))) => {
                plan = p.input.as_ref()
            }
            LogicalPlan::Filter(f) => {
                filters.push(f.predicate.clone());
                plan = f.input.as_ref();
            }
            _ => return (filters, plan),
        }
    }
}

/// `plan` under `filters`, then projected onto the columns `close` had (in its order).
fn restore(plan: LogicalPlan, filters: Vec<Expr>, close: &CsrExpand) -> Result<LogicalPlan> {
    let columns = close
        .schema
        .fields()
        .iter()
        .map(|f| Expr::Column(Column::new_unqualified(f.name())));
    let mut b = LogicalPlanBuilder::from(plan);
    if let Some(p) = conjunction(filters) {
        b = b.filter(p)?;
    }
    b.project(columns)?.build()
}

/// A closing hop (a check between two bound nodes) placed above a hop that neither of its
/// nodes comes from, moved below that hop when there it fuses with the hop that reached its
/// near node: a clique's chord checked before its last node is intersected (`(a)-(b)`,
/// `(a)-(c)`, `(b)-(c)`, then `d` in the lists of `a`, `b` and `c`) cuts the rows the later
/// intersection sees to the triangles. The filters in between stay above; a projection
/// restores the columns' order.
fn sink(close: &CsrExpand) -> Option<Result<LogicalPlan>> {
    let bound = close.close.as_deref()?;
    let (filters, cur) = below_filters(&close.input);
    let LogicalPlan::Extension(Extension { node }) = cur else {
        return None;
    };
    // The hop to move it below, and its input.
    let (below, hop): (&LogicalPlan, &dyn Fn(LogicalPlan) -> Result<LogicalPlan>) =
        if let Some(x) = csr(cur) {
            (&x.input, &|i| Ok(extension(x.with_input(i)?)))
        } else if let Some(x) = node.as_any().downcast_ref::<CsrIntersect>() {
            (&x.input, &|i| Ok(extension(x.with_input(i)?)))
        } else {
            return None;
        };
    let schema = below.schema();
    let ends_below = schema.has_column_with_unqualified_name(&close.key)
        && schema.has_column_with_unqualified_name(bound);
    if !ends_below {
        return None;
    }
    let moved = match close.with_input(below.clone()) {
        Ok(m) => m,
        Err(e) => return Some(Err(e)),
    };
    let fused = fuse(&moved)?;
    Some(fused.and_then(hop).and_then(|p| restore(p, filters, close)))
}

fn extension<T: datafusion::logical_expr::UserDefinedLogicalNode + 'static>(n: T) -> LogicalPlan {
    LogicalPlan::Extension(Extension { node: Arc::new(n) })
}

/// `count(<non-null literal>)`, without DISTINCT or FILTER, aliased or not.
fn counts_rows(e: &Expr) -> bool {
    match e {
        Expr::Alias(a) => counts_rows(&a.expr),
        Expr::AggregateFunction(AggregateFunction { func, params }) => {
            func.name() == "count"
                && !params.distinct
                && params.filter.is_none()
                && matches!(params.args.as_slice(), [Expr::Literal(v, _)] if !v.is_null())
        }
        _ => false,
    }
}

/// An aggregate of only `count(*)` over the matches of a `CsrIntersect` (through filters and
/// column-only projections), grouped by columns of its input: the counting intersection.
fn count_matches(agg: &Aggregate) -> Option<Result<LogicalPlan>> {
    if agg.aggr_expr.is_empty() || !agg.aggr_expr.iter().all(counts_rows) {
        return None;
    }
    let (filters, cur) = below_filters(&agg.input);
    let LogicalPlan::Extension(Extension { node }) = cur else {
        return None;
    };
    let x = node.as_any().downcast_ref::<CsrIntersect>()?;
    let below = x.input.schema();
    let grouped_below = agg
        .group_expr
        .iter()
        .flat_map(|g| g.column_refs())
        .all(|c| below.has_column_with_unqualified_name(&c.name));
    if x.count.is_some() || !grouped_below {
        return None;
    }
    let fields = agg.schema.fields();
    let first = fields[agg.group_expr.len()].name();
    let (each, total) = (format!("{first}#matches"), format!("{first}#n"));
    let build = || -> Result<LogicalPlan> {
        let plan = extension(x.clone().counting(each.clone(), conjunction(filters))?);
        let col = |n: &str| Expr::Column(Column::new_unqualified(n));
        let mut out: Vec<Expr> = fields[..agg.group_expr.len()]
            .iter()
            .map(|f| col(f.name()))
            .collect();
        for f in &fields[agg.group_expr.len()..] {
            out.push(coalesce(vec![col(&total), lit(0i64)]).alias(f.name()));
        }
        LogicalPlanBuilder::from(plan)
            .aggregate(agg.group_expr.clone(), [sum(col(&each)).alias(&total)])?
            .project(out)?
            .build()
    };
    Some(build())
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
        // Bottom-up: an aggregate sees the intersections fused below it.
        plan.transform_up(|node| {
            let rewritten = match &node {
                LogicalPlan::Aggregate(a) => count_matches(a),
                _ => csr(&node).and_then(|c| fuse(c).or_else(|| sink(c))),
            };
            match rewritten {
                Some(p) => Ok(Transformed::yes(p?)),
                None => Ok(Transformed::no(node)),
            }
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
                  CsrIntersect: [CsrExpand: key=b__id -> [__anonr2__#src, __anonr2__#dst], edges=7, take=c[c__id*, c__firstName, c__lastName, c__gender, c__age, c__birthday, c__creationDate, c__browserUsed], edge=__anonr2[__anonr2__#src, __anonr2__#dst, __anonr2__#eid, __anonr2__creationDate]] and [CsrExpand: key=c__id -> [__anonr3__#src, __anonr3__#dst], edges=7, close=a__id, edge=__anonr3[__anonr3__#src, __anonr3__#dst, __anonr3__#eid, __anonr3__creationDate]]
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
    fn counted_cycles_are_counted_by_the_intersection() {
        let (p, changed) = fused(
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person)-[:KNOWS]->(a) RETURN a.id, count(*) AS n",
        );
        assert!(changed, "{p}");
        insta::assert_snapshot!(p, @r"
        Projection: __ret0 AS a.id, __agg0 AS n
          Projection: __ret0, coalesce(__agg0#n, Int64(0)) AS __agg0
            Aggregate: groupBy=[[a__id AS __ret0]], aggr=[[sum(__agg0#matches) AS __agg0#n]]
              CsrIntersect: [CsrExpand: key=c__id -> [__anonr3__#src, __anonr3__#dst], edges=7, take=d[], edge=__anonr3[__anonr3__#eid]] and [CsrExpand: key=d__id -> [__anonr4__#src, __anonr4__#dst], edges=7, close=a__id, edge=__anonr4[__anonr4__#eid]] counted where __anonr4__#eid != __anonr1__#eid AND __anonr4__#eid != __anonr2__#eid AND __anonr4__#eid != __anonr3__#eid AND __anonr3__#eid != __anonr1__#eid AND __anonr3__#eid != __anonr2__#eid -> __agg0#matches
                Filter: __anonr2__#eid != __anonr1__#eid
                  Projection: a__id, __anonr1__#eid, __anonr2__#eid, c__id
                    CsrExpand: key=b__id -> [__anonr2__#src, __anonr2__#dst], edges=7, take=c[c__id*, c__firstName, c__lastName, c__gender, c__age, c__birthday, c__creationDate, c__browserUsed], edge=__anonr2[__anonr2__#src, __anonr2__#dst, __anonr2__#eid, __anonr2__creationDate]
                      CsrExpand: key=a__id -> [__anonr1__#src, __anonr1__#dst], edges=7, take=b[b__id*, b__firstName, b__lastName, b__gender, b__age, b__birthday, b__creationDate, b__browserUsed], edge=__anonr1[__anonr1__#src, __anonr1__#dst, __anonr1__#eid, __anonr1__creationDate]
                        Projection: node_Person.id AS a__id
                          TableScan: node_Person projection=[id]
        ");
        // Must not fire: a column's count or DISTINCT, a value, grouped by the new node (the
        // planner roots a grouped node below when it can; grouped by all four, one is new).
        for q in [
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person)-[:KNOWS]->(a) RETURN count(DISTINCT c)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person)-[:KNOWS]->(a) RETURN count(*), max(d.age)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person)-[:KNOWS]->(a) WITH a, b, c, d, count(*) AS n RETURN a.id + b.id + c.id + d.id, n",
        ] {
            let (p, _) = fused(q);
            assert!(p.contains("CsrIntersect") && !p.contains("counted"), "{q}\n{p}");
        }
    }

    #[test]
    fn a_clique_s_last_node_intersects_three_lists() {
        let (p, changed) = fused(
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)<-[:KNOWS]-(a), (a)-[:KNOWS]->(d:Person)<-[:KNOWS]-(b), (c)-[:KNOWS]->(d) RETURN a.id, b.id, c.id, d.id",
        );
        let intersect = p.lines().find(|l| l.contains("CsrIntersect:"));
        let closes = intersect.map_or(0, |l| l.matches(", close=").count());
        assert!(changed && closes == 2, "{p}");
        // The chord b-c, lowered below that intersection, made c an intersection too: no
        // closing hop is left to check rows afterwards.
        let checks = p
            .lines()
            .filter(|l| l.trim_start().starts_with("CsrExpand:") && l.contains("close="));
        assert_eq!(checks.count(), 0, "{p}");
        assert_eq!(p.matches("CsrIntersect:").count(), 2, "{p}");
    }

    #[test]
    fn must_not_fire() {
        // No cycle.
        let q = "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN a.id, c.id";
        let (p, changed) = fused(q);
        assert!(!changed && !p.contains("CsrIntersect"), "{q}\n{p}");
    }

    #[test]
    fn two_relationships_between_two_nodes_are_intersected() {
        // The person is reached from the forum and its second relationship closed from the
        // person back to the forum: the members that moderate, by one intersection.
        let (p, changed) = fused(
            "MATCH (f:Forum)-[:HAS_MEMBER]->(p:Person), (f)-[:HAS_MODERATOR]->(p) RETURN f.id, p.id",
        );
        assert!(changed && p.contains("CsrIntersect"), "{p}");
    }
}
