//! Estimates over logical plans, from what the tables and indexes already hold (row counts,
//! edges per node of each CSR direction): the rows a subtree makes, the work evaluating it
//! again would repeat (`share_subplans` weighs both), and, for EXPLAIN, every node's rows and
//! the neighbour-list entries our operators read instead of the rows a join would build.
//!
//! Guesses where nothing is known: a filter keeps a quarter (DataFusion's default), an
//! equi-join makes as many rows as its larger side (a key joined to its references).

use crate::operators::count_paths::{CountHop, CountPaths};
use crate::operators::csr_expand::CsrData;
use crate::operators::node::GraphNode;
use crate::rewrite::pattern_order::approx;
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::{Extension, JoinType, LogicalPlan};
use std::fmt::Write;

/// What a filter is guessed to keep.
const FILTER_KEEPS: f64 = 0.25;

/// Rows a subtree reads from storage or produces in graph operators: the work evaluating it
/// again would repeat. `None` where we cannot tell.
pub fn estimate_work(plan: &LogicalPlan) -> Option<f64> {
    let own = match plan {
        LogicalPlan::TableScan(s) => {
            let stats = source_as_provider(&s.source).ok()?.statistics()?;
            *stats.num_rows.get_value()? as f64
        }
        LogicalPlan::Extension(Extension { node }) => match GraphNode::of(node.as_ref()) {
            Some(GraphNode::Expand(_) | GraphNode::Lookup(_)) => estimate_rows(plan)?,
            // Not weighed: their work is not estimated (or, shared, done once).
            Some(
                GraphNode::Intersect(_)
                | GraphNode::VarLength(_)
                | GraphNode::CountPaths(_)
                | GraphNode::Shared(_)
                | GraphNode::ConstRow(_),
            )
            | None => 0.0,
        },
        _ => 0.0,
    };
    let mut total = own;
    for c in plan.inputs() {
        total += estimate_work(c)?;
    }
    Some(total)
}

/// Rows a subtree is expected to produce; `None` where we cannot tell (joins, and our
/// operators whose output the rules do not weigh).
pub fn estimate_rows(plan: &LogicalPlan) -> Option<f64> {
    if let Some(rows) = fixed_rows(plan) {
        return Some(rows);
    }
    let inputs = (plan.inputs().into_iter())
        .map(estimate_rows)
        .collect::<Option<Vec<f64>>>()?;
    rows_from(plan, &inputs)
}

/// The rows of the nodes whose rows do not depend on their inputs'.
fn fixed_rows(plan: &LogicalPlan) -> Option<f64> {
    match plan {
        LogicalPlan::Values(v) => Some(v.values.len() as f64),
        LogicalPlan::EmptyRelation(e) => Some(e.produce_one_row as u8 as f64),
        LogicalPlan::TableScan(s) => {
            let stats = source_as_provider(&s.source).ok()?.statistics()?;
            let rows = *stats.num_rows.get_value()? as f64;
            let mut r = rows * FILTER_KEEPS.powi(s.filters.len() as i32);
            if let Some(f) = s.fetch {
                r = r.min(f as f64);
            }
            Some(r)
        }
        LogicalPlan::Aggregate(a) if a.group_expr.is_empty() => Some(1.0),
        LogicalPlan::Extension(Extension { node }) => match GraphNode::of(node.as_ref())? {
            GraphNode::ConstRow(c) if c.input.is_none() => Some(1.0),
            GraphNode::Shared(s) => s.rows.map(|r| r as f64),
            _ => None,
        },
        _ => None,
    }
}

/// The rows `plan` makes from its inputs' rows.
fn rows_from(plan: &LogicalPlan, inputs: &[f64]) -> Option<f64> {
    if let Some(rows) = fixed_rows(plan) {
        return Some(rows);
    }
    let input = |i: usize| inputs.get(i).copied();
    match plan {
        LogicalPlan::Filter(_) => Some(input(0)? * FILTER_KEEPS),
        LogicalPlan::Limit(l) => {
            let fetch = match l.get_fetch_type().ok()? {
                datafusion::logical_expr::FetchType::Literal(Some(n)) => n as f64,
                _ => f64::INFINITY,
            };
            Some(input(0)?.min(fetch))
        }
        LogicalPlan::Projection(_)
        | LogicalPlan::Sort(_)
        | LogicalPlan::SubqueryAlias(_)
        | LogicalPlan::Aggregate(_)
        | LogicalPlan::Distinct(_)
        | LogicalPlan::Window(_) => input(0),
        LogicalPlan::Union(_) => Some(inputs.iter().sum()),
        LogicalPlan::Extension(Extension { node }) => match GraphNode::of(node.as_ref())? {
            // With an input: one row for each of its rows.
            GraphNode::ConstRow(_) => input(0),
            GraphNode::Lookup(_) => input(0),
            GraphNode::Expand(n) if n.count.is_some() => input(0),
            GraphNode::Expand(n) => {
                let d = degree(&n.data, &n.orientations);
                // A close keeps the rows whose bound far node is among the neighbours.
                let per_row = match n.close {
                    Some(_) => (d / far_nodes(&n.data)).min(1.0),
                    None => d,
                };
                let filtered = if n.target_filter.is_some() || n.edge_filter.is_some() {
                    FILTER_KEEPS
                } else {
                    1.0
                };
                Some(input(0)? * per_row * filtered)
            }
            GraphNode::Shared(_) => input(0),
            GraphNode::Intersect(_) | GraphNode::VarLength(_) | GraphNode::CountPaths(_) => None,
        },
        _ => None,
    }
}

/// EXPLAIN's estimates: a line per node of `plan`'s tree of inputs (subqueries inside
/// expressions are not shown), with the rows it makes; for our graph operators, the
/// neighbour-list entries they read, and for a count, the paths it counts without building
/// them (the rows a join would have made).
pub fn annotate(plan: &LogicalPlan) -> String {
    let mut out = String::new();
    annotated(plan, 0, &mut out);
    out
}

/// Writes `plan`'s lines at `depth` into `out`; its estimated rows.
fn annotated(plan: &LogicalPlan, depth: usize, out: &mut String) -> Option<f64> {
    // Children first (their estimates feed this node's), written after this node's line.
    let mut below = String::new();
    let inputs: Vec<Option<f64>> = (plan.inputs().into_iter())
        .map(|c| annotated(c, depth + 1, &mut below))
        .collect();
    let known: Option<Vec<f64>> = inputs.iter().copied().collect();
    let read = known.as_deref().and_then(|ins| graph_reads(plan, ins));
    let rows = match (fixed_rows(plan), &known, &read) {
        (Some(r), _, _) => Some(r),
        (None, _, Some(g)) => Some(g.rows),
        (None, Some(ins), None) => rows_from(plan, ins).or_else(|| wider_rows(plan, ins)),
        (None, None, None) => None,
    };
    let (reads, counted) = match read {
        Some(g) => (Some(g.reads), g.counted),
        None => (None, None),
    };
    let mut line = String::new();
    let _ = write!(line, "{:depth$}{}", "", plan.display(), depth = depth * 2);
    const WIDTH: usize = 110;
    if line.chars().count() > WIDTH {
        line = line.chars().take(WIDTH - 3).collect::<String>() + "...";
    }
    let rows_text = rows.map_or("?".to_string(), approx);
    let _ = write!(out, "rows ~{rows_text:<7}");
    match reads {
        Some(e) => {
            let _ = write!(out, " reads ~{:<7}", approx(e));
        }
        None => out.push_str(&" ".repeat(15)),
    }
    let _ = write!(out, " {line}");
    if let Some(paths) = counted {
        let _ = write!(out, "  -- ~{} paths counted, none built", approx(paths));
    }
    out.push('\n');
    out.push_str(&below);
    rows
}

/// Rows of the nodes [`rows_from`] leaves unknown, where EXPLAIN can still say something.
fn wider_rows(plan: &LogicalPlan, inputs: &[f64]) -> Option<f64> {
    match plan {
        LogicalPlan::Join(j) => {
            let (l, r) = (*inputs.first()?, *inputs.get(1)?);
            let matched = if j.on.is_empty() { l * r } else { l.max(r) };
            Some(match j.join_type {
                JoinType::Inner => matched,
                JoinType::Left => matched.max(l),
                JoinType::Right => matched.max(r),
                JoinType::Full => matched.max(l + r),
                JoinType::LeftSemi | JoinType::LeftAnti | JoinType::LeftMark => l,
                JoinType::RightSemi | JoinType::RightAnti | JoinType::RightMark => r,
            })
        }
        LogicalPlan::Subquery(_) | LogicalPlan::Unnest(_) => inputs.first().copied(),
        _ => None,
    }
}

/// What one of our operators that read neighbour lists makes and reads.
struct Reads {
    rows: f64,
    /// Neighbour-list entries read.
    reads: f64,
    /// A count's paths (counted, not built).
    counted: Option<f64>,
}

fn graph_reads(plan: &LogicalPlan, inputs: &[f64]) -> Option<Reads> {
    let LogicalPlan::Extension(Extension { node }) = plan else {
        return None;
    };
    let input = *inputs.first()?;
    match GraphNode::of(node.as_ref())? {
        GraphNode::Expand(n) => {
            let rows = rows_from(plan, inputs)?;
            // A count per row reads the lists; a close probes one list per row.
            let reads = match n.close {
                Some(_) => input,
                None => input * degree(&n.data, &n.orientations),
            };
            Some(Reads {
                rows,
                reads,
                counted: None,
            })
        }
        GraphNode::Intersect(n) => {
            let open = degree(&n.open.data, &n.open.orientations);
            // Each opened row is kept when every closing list holds it.
            let kept: f64 = (n.closes.iter())
                .map(|c| (degree(&c.data, &c.orientations) / far_nodes(&c.data)).min(1.0))
                .product();
            let closes: f64 = (n.closes.iter())
                .map(|c| degree(&c.data, &c.orientations))
                .sum();
            let rows = if n.count.is_some() {
                input
            } else {
                input * open * kept
            };
            Some(Reads {
                rows,
                reads: input * (open + closes),
                counted: None,
            })
        }
        GraphNode::VarLength(n) => {
            let d: f64 = (n.hops.iter())
                .map(|h| {
                    let csr = h.index.direction(h.reverse);
                    csr.num_edges() as f64 / csr.num_nodes().max(1) as f64
                })
                .sum();
            let paths = walks(d, (n.min, n.max.unwrap_or(u64::MAX)));
            let rows = if n.count.is_some() {
                input
            } else {
                input * paths
            };
            Some(Reads {
                rows,
                reads: input * paths,
                counted: None,
            })
        }
        GraphNode::CountPaths(n) => {
            let (paths, reads) = count_estimate(n, input);
            let rows = if n.per_row { input.min(paths) } else { 1.0 };
            Some(Reads {
                rows,
                reads,
                counted: Some(paths),
            })
        }
        GraphNode::Lookup(_) | GraphNode::Shared(_) | GraphNode::ConstRow(_) => None,
    }
}

/// Walks of `min..=max` steps per start, `d` ways each step (at most 8 steps weighed; zero
/// steps: the start itself).
fn walks(d: f64, (min, max): (u64, u64)) -> f64 {
    let min = min.min(64);
    let max = max.min(min.max(8)) as i32;
    (min as i32..=max).map(|k| d.powi(k)).sum()
}

/// A count's paths and the list entries it reads from `roots` rows: each hop of a tree reads
/// the lists of the distinct nodes it walks from (at most its table), once per step (a
/// branch from every node it hangs from); a cycle's closing hop is probed per path. Filters
/// keep a share of the paths after the lists are read.
fn count_estimate(n: &CountPaths, roots: f64) -> (f64, f64) {
    // The paths of an arm from `from` start rows.
    fn arm(hops: &[CountHop], from: f64, reads: &mut f64) -> f64 {
        let mut paths = from;
        for h in hops {
            let d = degree(&h.data, &h.orientations);
            let steps = walks(d, h.lengths);
            let walked = paths.min(h.data.near_keys.len().max(1) as f64);
            // Each step reads the lists of the nodes it walks from.
            *reads += walked * (steps / d.max(1.0)).max(1.0) * d;
            paths *= steps * kept(h);
            let ends = paths.min(h.data.far_keys.len().max(1) as f64);
            for b in &h.branches {
                let per_end = arm(b, ends, reads) / ends.max(1.0);
                paths *= per_end;
            }
        }
        paths
    }
    let mut reads = 0.0;
    let mut paths = roots;
    if !n.joins.is_empty() {
        // Joined: each arm is a step, its open hop then the hops closing onto earlier nodes.
        for hops in &n.arms {
            let Some((open, closes)) = hops.split_first() else {
                continue;
            };
            let d = degree(&open.data, &open.orientations);
            reads += paths * d;
            paths *= d * kept(open);
            for c in closes {
                reads += paths;
                paths *= (degree(&c.data, &c.orientations) / far_nodes(&c.data)).min(1.0);
            }
        }
        return (paths, reads);
    }
    // Arms multiply per root.
    for hops in &n.arms {
        let per_root = match roots > 0.0 {
            true => arm(hops, roots, &mut reads) / roots,
            false => 0.0,
        };
        paths *= per_root;
    }
    if let Some(c) = &n.close {
        reads += paths * degree(&c.data, &c.orientations).min(far_nodes(&c.data));
        paths *= (degree(&c.data, &c.orientations) / far_nodes(&c.data)).min(1.0);
    }
    (paths, reads)
}

/// What a hop's filters keep.
fn kept(h: &CountHop) -> f64 {
    let filters = h.target_filter.is_some() as i32 + h.edge_filter.is_some() as i32;
    FILTER_KEEPS.powi(filters)
}

/// Entries per node of the lists a hop walks (every orientation).
fn degree(data: &CsrData, orientations: &[bool]) -> f64 {
    (orientations.iter())
        .map(|r| {
            let csr = data.index.direction(*r);
            csr.num_edges() as f64 / csr.num_nodes().max(1) as f64
        })
        .sum()
}

fn far_nodes(data: &CsrData) -> f64 {
    data.far_keys.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optimizer::test_util::optimized_without_our_rules;

    #[test]
    fn estimates_follow_tables_degrees_and_filters() {
        let plan = optimized_without_our_rules("MATCH (p:Person)-[:KNOWS]->(f:Person) RETURN f.id");
        // 6 persons, 7 KNOWS edges: about 7 rows.
        let rows = estimate_rows(&plan).unwrap();
        assert!((6.0..=8.0).contains(&rows), "{rows}\n{plan}");
    }

    #[test]
    fn a_total_is_one_row_and_walks_sum_their_lengths() {
        let plan = optimized_without_our_rules("MATCH (p:Person)-[:KNOWS]->(f) RETURN count(*)");
        assert_eq!(estimate_rows(&plan), Some(1.0), "{plan}");
        assert_eq!(walks(2.0, (1, 1)), 2.0);
        // Zero steps is the start itself; unbounded walks are weighed up to 8 steps; a
        // range past 8 at its first length.
        assert_eq!(walks(2.0, (0, 2)), 7.0);
        assert_eq!(walks(2.0, (1, u64::MAX)), 510.0);
        assert_eq!(walks(2.0, (10, 12)), 1024.0);
        assert_eq!(walks(2.0, (u64::MAX, u64::MAX)), 2f64.powi(64));
    }

    /// EXPLAIN's section: a line per node, rows for each, and what a count reads.
    #[test]
    fn explain_estimates_every_node_and_what_a_count_reads() {
        let e = crate::optimizer::test_util::explain_sample(
            "MATCH (p:Person)-[:KNOWS]->(f:Person)-[:KNOWS]->(g:Person) RETURN count(*)",
        );
        let section: Vec<&str> = (e.lines())
            .skip_while(|l| !l.starts_with("== estimates"))
            .skip(1)
            .take_while(|l| !l.is_empty())
            .collect();
        assert!(section.iter().all(|l| l.starts_with("rows ~")), "{e}");
        let plan: Vec<&str> = (e.lines())
            .skip_while(|l| *l != "== optimized logical plan ==")
            .skip(1)
            .take_while(|l| !l.is_empty())
            .collect();
        assert_eq!(section.len(), plan.len(), "{e}");
        // 6 persons, 7 KNOWS: each hop reads the lists of the 6 persons once (7 entries).
        let count = section
            .iter()
            .find(|l| l.contains("CountPaths"))
            .expect("a count");
        assert!(
            count.starts_with("rows ~1 ") && count.contains("reads ~14 "),
            "{count}"
        );
        let scan = section
            .iter()
            .find(|l| l.contains("TableScan"))
            .expect("a scan");
        assert!(scan.starts_with("rows ~6 "), "{scan}");
    }
}
