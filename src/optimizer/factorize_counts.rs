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
//!   `closed by`, and the executor intersects sorted neighbour lists instead of expanding;
//!   likewise a longer cycle (one arm closed back onto the root, or two arms closed end to
//!   end) whose relationship uniqueness holds hop by hop (its nodes need not be distinct);
//! - any other pattern with cycles (several closing hops: LSQB's q3, three persons of one
//!   country who know each other) as the steps of a join (`arms=[joined ...]`: a hop to a new
//!   node from one bound before, and the closing hops checked when their later node is
//!   bound), when its relationship uniqueness is implied by the nodes its edges join;
//! - conditions that exclude paths, subtracted instead of filtering rows: `a <> c` two hops
//!   apart, relationship uniqueness between consecutive hops, `NOT (a)-[:R]-(c)` (folds on
//!   the hop pair); `a <> d` between the ends of a path of three hops (one arm from the
//!   root, or an arm of one hop and one of two), in a total: the paths less the triangles
//!   they make when `a = d` (`Cross Join` of the two counts). An inequality an absent edge implies (`NOT
//!   (c)-[:R]->(a)` with `(c)-[:R]->(d)`: `d = a` would be such an edge) is dropped, and
//!   relationship uniqueness a node inequality implies (one edge for both would make the two
//!   nodes one end of it) is not asked for;
//! - the hop of an OPTIONAL MATCH (one hop from a bound node), alone in its arm or hanging
//!   from a node as a branch: a node without a match counts once (`max(1, matches)`), as its
//!   one row of nulls does; `count(l)` of its node or relationship alone counts the paths
//!   where it matched (in a total the hop counted as a plain one; grouped, a group whose rows
//!   all lack a match keeps its row of 0);
//! - a variable-length hop `*min..max` with max <= 2 over one table from a label to itself,
//!   walked one way, over a table without self-loops: its paths are exactly its walks (two
//!   edges one way can only be one edge if it is a self-loop), so counts are pushed back over
//!   it once per length and added up (`arms=[[KNOWS*1..2]]`);
//! - `sum`, `min`, `max`, `avg` and `count` of an integer property of an arm's last node,
//!   pushed back along the arm like the counts (sums add up over edges, the least value takes
//!   the minimum) and scaled by the other arms' counts; `avg` is the sum over the count of
//!   non-null values. Per group, per-row sums and counts are added up and the least and
//!   greatest values folded.
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
//! ```text
//! before:
//!   Aggregate: groupBy=[[a__id AS __ret0]], aggr=[[max(b__age) AS __agg0]]
//!     CsrExpand: key=a__id ..., take=b[b__age]
//!       <one row per node of a>
//! after:
//!   Projection: a__id AS __ret0, __agg0
//!     CountPaths: key=a__id, arms=[[KNOWS]] per row -> __paths, Max(arm 0: age) -> __agg0
//!       <one row per node of a>
//! ```
//!
//! Must not fire: any other aggregate (DISTINCT values, `collect`, a value that is not an
//! integer property of an arm's last node: a float sum's rounding depends on its order, so
//! it stays row by row), a grouping by anything but the root's columns,
//! `count(DISTINCT)` without one row per node or over more than one hop, a filter left between
//! the hops (it reads the rows), a closing hop other than a cycle's, a hop whose key is not
//! the previous hop's target, or relationship uniqueness that could exclude a path: only two
//! hops of one table walked one after the other the same way or out of one node opposite ways
//! over a table without self-loops are accepted (a repeated edge then can't occur), hops over
//! different tables, or two hops a node inequality keeps apart; in a triangle, no table two
//! hops share may have a self-loop; an inequality three hops apart but between the ends of a
//! path of three hops (no branches, no other arm) of one table, counted per group, with
//! values, beside other folds, with a filter on the end the third hop reaches or over root
//! rows that may differ between two runs. An optional hop that a hop hangs from, that an
//! inequality, a value or a distinct count reads, or that is the only kind of arm over root
//! rows that are not a node table's (a null key has one row). A column renamed between the
//! hops (hops are matched by column name). A variable-length hop that is
//! undirected, longer than two, unbounded, of several types or tables, over a table with a
//! self-loop, with distinct ends, or whose path or relationships are read.

use crate::operators::count_paths::{CountHop, CountPaths, Fold, JoinStep, PathValue, ValueKind};
use crate::operators::csr_expand::{CsrData, CsrExpand, TakeSpec};
use crate::operators::node::GraphNode;
use crate::operators::var_length::VarLengthExpand;
use arrow::datatypes::DataType;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::Result;
use datafusion::functions_aggregate::expr_fn::{max, min, sum};
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::utils::split_conjunction;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan, LogicalPlanBuilder, Operator};
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

/// The aggregate call of an aggregate expression, aliased or not.
fn call(e: &Expr) -> Option<&AggregateFunction> {
    match e {
        Expr::Alias(a) => call(&a.expr),
        Expr::AggregateFunction(f) => Some(f),
        _ => None,
    }
}

/// `count(<non-null literal>)` or `count(<column>)` (the column checked later), without
/// FILTER, output as `out` (`count(NULL)`, say of a property no label has, counts nothing).
fn counted(e: &Expr, out: &str) -> Option<Counted> {
    let AggregateFunction { func, params } = call(e)?;
    if func.name() != "count" || params.filter.is_some() || params.args.len() != 1 {
        return None;
    }
    let arg = match &params.args[0] {
        Expr::Literal(v, _) if !v.is_null() && !params.distinct => None,
        Expr::Column(c) => Some(c.name.clone()),
        _ => return None,
    };
    Some(Counted {
        out: out.to_string(),
        arg,
        distinct: params.distinct,
    })
}

/// An aggregate the rule computes: a count, or `sum` / `min` / `max` (or `count`) of an
/// integer property of an arm's last node (`col`, checked later), and its output name. (The
/// planner writes an integer `avg` as the sum over the count.)
enum Wanted {
    Count(Counted),
    Value {
        kind: ValueKind,
        col: String,
        out: String,
    },
}

/// `count(..)`, or `sum(CAST(x AS Decimal128(38, 0)))` (the planner's integer sum),
/// `min(x)`, `max(x)` of a column `x`, without DISTINCT or FILTER,
/// output as `out`; the output type as the aggregate computes it (checked against its
/// schema).
fn wanted(e: &Expr, out: &str) -> Option<(Wanted, DataType)> {
    if let Some(c) = counted(e, out) {
        return Some((Wanted::Count(c), DataType::Int64));
    }
    let AggregateFunction { func, params } = call(e)?;
    if params.distinct || params.filter.is_some() || params.args.len() != 1 {
        return None;
    }
    let (arg, cast_to) = match &params.args[0] {
        Expr::Column(c) => (c.name.clone(), None),
        Expr::Cast(c) => match c.expr.as_ref() {
            Expr::Column(x) => (x.name.clone(), Some(c.field.data_type().clone())),
            _ => return None,
        },
        _ => return None,
    };
    let (col, out) = (arg, out.to_string());
    let value = |kind| Wanted::Value {
        kind,
        col: col.clone(),
        out: out.clone(),
    };
    Some(match (func.name(), cast_to.as_ref()) {
        ("sum", Some(DataType::Decimal128(38, 0))) => {
            (value(ValueKind::Sum), DataType::Decimal128(38, 0))
        }
        ("min", None) => (value(ValueKind::Min), DataType::Int64),
        ("max", None) => (value(ValueKind::Max), DataType::Int64),
        _ => return None,
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

/// `x = y` between two column references: (x, y).
fn column_equality(e: &Expr) -> Option<(String, String)> {
    match e {
        Expr::BinaryExpr(b) if b.op == Operator::Eq => match (b.left.as_ref(), b.right.as_ref()) {
            (Expr::Column(x), Expr::Column(y)) => Some((x.name.clone(), y.name.clone())),
            _ => None,
        },
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
    // A counting hop keeps its input's rows: not a hop of a chain of matches. (An optional
    // one keeps its unmatched rows once: `chain_shape` checks it stands alone.)
    match GraphNode::of_plan(plan) {
        Some(GraphNode::Expand(n)) if n.count.is_none() => Some(n),
        _ => None,
    }
}

/// The far node's key column of a hop.
fn target_key(n: &CsrExpand) -> Option<String> {
    key_column(&n.target).map(str::to_string)
}

fn edge_id_col(n: &CsrExpand) -> Option<&str> {
    id_column(&n.edge)
}

/// The key column of a hop's far node, as its columns name it.
fn key_column(t: &TakeSpec) -> Option<&str> {
    t.key.map(|k| t.all[k].1.as_str())
}

/// The relationship id column of a hop's edge columns (source, target, id, properties).
fn id_column(e: &TakeSpec) -> Option<&str> {
    e.all.get(2).map(|c| c.1.as_str())
}

/// The hop of `chain` whose edge id column is `col`.
fn hop_of_edge(chain: &[&CsrExpand], col: &str) -> Option<usize> {
    chain.iter().position(|n| edge_id_col(n) == Some(col))
}

/// What the filters above and between the hops require: inequalities between columns
/// (relationship uniqueness between edge ids, `a <> c` between node keys), counts required
/// to be zero, and the counting hops closing onto a bound node those counts come from
/// (`NOT (a)-[:R]-(c)`).
#[derive(Default)]
struct Conditions<'a> {
    unequal: Vec<(String, String)>,
    zero: Vec<String>,
    closing: Vec<&'a CsrExpand>,
}

impl<'a> Conditions<'a> {
    /// The counting hops whose count must be zero: edges that must be absent.
    fn absent(&self) -> Option<Vec<&'a CsrExpand>> {
        // A zero required of any other column is a filter the count would drop.
        let counted = |z: &String| self.closing.iter().any(|n| n.count.as_ref() == Some(z));
        if !self.zero.iter().all(counted) {
            return None;
        }
        let mut out = Vec::new();
        for n in &self.closing {
            let count = n.count.as_ref()?;
            // A count read otherwise (its filter `> 0`, say) stops `skip` before it gets here.
            if !self.zero.contains(count) || n.target_filter.is_some() {
                return None;
            }
            out.push(*n);
        }
        Some(out)
    }
}

/// `c <= 0`, `c = 0` or `c < 1` of a column: the column.
fn zero_column(e: &Expr) -> Option<String> {
    let Expr::BinaryExpr(b) = e else { return None };
    let (Expr::Column(c), Expr::Literal(v, _)) = (b.left.as_ref(), b.right.as_ref()) else {
        return None;
    };
    let v = match v {
        datafusion::scalar::ScalarValue::Int64(Some(v)) => *v,
        _ => return None,
    };
    matches!(
        (b.op, v),
        (Operator::LtEq, 0) | (Operator::Eq, 0) | (Operator::Lt, 1)
    )
    .then(|| c.name.clone())
}

/// `plan` below column-only projections, filters of inequalities and zero counts, and
/// counting hops closing onto a bound node (all added to `cond`); `None` at a filter of
/// anything else.
fn skip<'p>(mut plan: &'p LogicalPlan, cond: &mut Conditions<'p>) -> Option<&'p LogicalPlan> {
    loop {
        match plan {
            LogicalPlan::Projection(p)
                if p.expr
                    .iter()
                    .all(|e| keeps_rows_as_they_are(e, p.input.schema())) =>
            {
                plan = p.input.as_ref()
            }
            LogicalPlan::Filter(f) => {
                for c in split_conjunction(&f.predicate) {
                    match (column_inequality(c), zero_column(c)) {
                        (Some(pair), _) => cond.unequal.push(pair),
                        (None, Some(z)) => cond.zero.push(z),
                        (None, None) => return None,
                    }
                }
                plan = f.input.as_ref();
            }
            LogicalPlan::Extension(Extension { node }) => {
                match node.as_any().downcast_ref::<CsrExpand>() {
                    Some(n) if n.count.is_some() && n.close.is_some() => {
                        cond.closing.push(n);
                        plan = &n.input;
                    }
                    _ => return Some(plan),
                }
            }
            _ => return Some(plan),
        }
    }
}

/// A projection's expression that neither renames nor computes anything the count reads: a
/// column under its own name, or a constant under a name its input does not have (a
/// branch's label). (A renamed column could give a later hop's key the name of another
/// node: hops are matched by column name.)
fn keeps_rows_as_they_are(e: &Expr, input: &datafusion::common::DFSchema) -> bool {
    match e {
        Expr::Column(_) => true,
        Expr::Alias(a) => match a.expr.as_ref() {
            Expr::Column(c) => c.name == a.name,
            Expr::Literal(..) => !input.has_column_with_unqualified_name(&a.name),
            _ => false,
        },
        _ => false,
    }
}

/// The hops under an aggregate, first hop first, and the conditions of the filters above
/// and between them (column-only projections skipped).
fn hop_chain(input: &LogicalPlan) -> Option<(Vec<&CsrExpand>, Conditions<'_>)> {
    let mut cond = Conditions::default();
    let mut chain: Vec<&CsrExpand> = Vec::new();
    let mut cur = skip(input, &mut cond)?;
    while let Some(n) = csr(cur) {
        chain.push(n);
        cur = &n.input;
        if csr(cur).is_none() {
            // Below the first hop: the root's rows, whatever they are.
            let below = skip(cur, &mut cond);
            match below.and_then(csr) {
                Some(_) => cur = below.expect("a hop"),
                None => break,
            }
        }
    }
    chain.reverse();
    (!chain.is_empty()).then_some((chain, cond))
}

/// Arms: chains of hops (indexes into `chain`) out of the root (the first hop's key), and
/// the branches of a tree-shaped pattern: arms hanging from the far node of a hop (by the
/// hop's index). A hop continues the arm or branch whose last hop ended at its key, starts a
/// new arm at the root, or starts a branch at the hop that reached its key.
#[allow(clippy::type_complexity)]
fn arms_of(chain: &[&CsrExpand]) -> Option<(Vec<Vec<usize>>, Vec<(usize, Vec<usize>)>)> {
    let root = chain[0].key.as_str();
    let mut arms: Vec<Vec<usize>> = Vec::new();
    let mut branches: Vec<(usize, Vec<usize>)> = Vec::new();
    let ends_at = |i: usize, key: &str| target_key(chain[i]).as_deref() == Some(key);
    for (i, n) in chain.iter().enumerate() {
        let key = n.key.as_str();
        if key == root {
            arms.push(vec![i]);
            continue;
        }
        let last = |a: &Vec<usize>| *a.last().expect("non-empty");
        // An OPTIONAL MATCH's hop continues no arm: it hangs from the node as a branch.
        let continues = |a: &Vec<usize>| !n.optional && ends_at(last(a), key);
        if let Some(arm) = arms.iter_mut().find(|a| continues(a)) {
            arm.push(i);
        } else if let Some((_, b)) = branches.iter_mut().find(|(_, b)| continues(b)) {
            b.push(i);
        } else {
            let at = (0..i).find(|&j| ends_at(j, key))?;
            branches.push((at, vec![i]));
        }
    }
    Some((arms, branches))
}

/// The `CountHop`s of the hops `idx`, each with the branches hanging from it.
fn hops_with_branches(
    chain: &[&CsrExpand],
    idx: &[usize],
    branches: &[(usize, Vec<usize>)],
) -> Vec<CountHop> {
    idx.iter()
        .map(|&i| {
            let mut h = count_hop(chain[i]);
            h.branches = (branches.iter())
                .filter(|(at, _)| *at == i)
                .map(|(_, b)| hops_with_branches(chain, b, branches))
                .collect();
            h
        })
        .collect()
}

/// Relationship uniqueness between two hops of one table can only be ignored when no path
/// can use one edge for both (the table has no self-loops, each hop walks one way): two hops
/// one after the other walked the same way, or two hops out of one node walked opposite
/// ways. Pairs in `folded` are handled otherwise: subtracted, or implied by a node
/// inequality. Hops over one table must carry their uniqueness filter (else it was dropped
/// elsewhere).
fn uniqueness_implied(
    chain: &[&CsrExpand],
    uniqueness: &[(String, String)],
    folded: &[(String, String)],
) -> bool {
    let safe = |i: usize, j: usize| {
        let (a, b) = (chain[i], chain[j]);
        if a.rel != b.rel {
            return true;
        }
        if a.orientations.len() != 1 || b.orientations.len() != 1 || a.data.index.has_self_loops() {
            return false;
        }
        // One after the other the same way, or out of one node opposite ways.
        let follows = |x: &CsrExpand, y: &CsrExpand| target_key(x).as_deref() == Some(&y.key);
        ((follows(a, b) || follows(b, a)) && a.orientations == b.orientations)
            || (a.key == b.key && a.orientations != b.orientations)
    };
    let find = |c: &str| hop_of_edge(chain, c);
    let all_safe = uniqueness.iter().all(|(x, y)| {
        let pair = (x.clone(), y.clone());
        folded.contains(&pair)
            || match (find(x), find(y)) {
                (Some(i), Some(j)) => safe(i, j),
                _ => false,
            }
    });
    all_safe && carries_uniqueness(chain, uniqueness)
}

/// Every two hops over one table have their inequality among `uniqueness` (but an OPTIONAL
/// MATCH's hop, which is its whole clause).
fn carries_uniqueness(chain: &[&CsrExpand], uniqueness: &[(String, String)]) -> bool {
    for i in 0..chain.len() {
        for j in i + 1..chain.len() {
            if chain[i].rel != chain[j].rel || chain[i].optional || chain[j].optional {
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
    let on_hops = |c: &str| hop_of_edge(chain, c).is_some();
    let ok = h1.close.is_none()
        && h2.close.is_none()
        && !shared_loops
        && uniqueness.iter().all(|(x, y)| on_hops(x) && on_hops(y))
        && carries_uniqueness(chain, uniqueness);
    ok.then_some(ordered)
}

/// A cycle of four hops or more: one arm out of the root closed back onto it, or two arms
/// closed from the end of one onto the end of the other. The hops in the order
/// `CountPathsExec` expects (the arm closed onto first, the closing hop last). Its nodes need
/// not be distinct (`a -> b -> a -> b -> a` walks a cycle of four), so unlike a triangle's,
/// relationship uniqueness must hold hop by hop ([`uniqueness_implied`]); inequalities
/// between nodes are left to the rows.
fn long_cycle<'a>(
    chain: &[&'a CsrExpand],
    uniqueness: &[(String, String)],
) -> Option<Vec<&'a CsrExpand>> {
    let (last, rest) = chain.split_last()?;
    let plain = rest.iter().all(|n| n.close.is_none()) && last.target_filter.is_none();
    if rest.len() < 3 || !plain {
        return None;
    }
    let (arms, branches) = arms_of(rest)?;
    let end = |arm: &[usize]| arm.last().and_then(|&i| target_key(rest[i]));
    let from_end = |arm: &[usize]| end(arm).as_deref() == Some(&last.key);
    let onto_end = |arm: &[usize]| end(arm).as_deref() == last.close.as_deref();
    let order = match arms.as_slice() {
        [arm] if from_end(arm) && last.close.as_deref() == Some(&rest[0].key) => arm.clone(),
        [a, b] if onto_end(a) && from_end(b) => [a.as_slice(), b].concat(),
        [a, b] if onto_end(b) && from_end(a) => [b.as_slice(), a].concat(),
        _ => return None,
    };
    let on_hops = |c: &str| hop_of_edge(chain, c).is_some();
    let ok = branches.is_empty()
        && uniqueness.iter().all(|(x, y)| on_hops(x) && on_hops(y))
        && uniqueness_implied(chain, uniqueness, &[]);
    let mut ordered: Vec<_> = order.into_iter().map(|i| rest[i]).collect();
    ordered.push(last);
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
        lengths: (1, 1),
        fold: None,
        branches: vec![],
        optional: n.optional,
        matched_only: false,
    }
}

/// What is counted: the root's rows and key, the arms of hops out of it, a closing hop (a
/// triangle), and the columns that are never null on a path.
struct Shape<'a> {
    input: &'a LogicalPlan,
    key: String,
    arms: Vec<Vec<CountHop>>,
    close: Option<CountHop>,
    /// Steps of a join, one per arm (a pattern with several cycles).
    joins: Vec<JoinStep>,
    /// Triangles whose count is subtracted: the paths where the ends of a path of three hops
    /// that must differ are one node (arms and the closing hop, see [`triangle_correction`]).
    minus: Option<(Vec<Vec<CountHop>>, CountHop)>,
    never_null: Vec<String>,
}

/// The shape of a chain of `CsrExpand`s, if the conditions on it can be counted: relationship
/// uniqueness implied (by the walks, or by a node inequality) or excluded, inequalities
/// between nodes and absent edges excluded by [`folds`], an inequality an absent edge implies
/// dropped, and one between the ends of a path of three hops left to [`triangle_correction`].
fn chain_shape<'a>(mut chain: Vec<&'a CsrExpand>, cond: Conditions<'a>) -> Option<Shape<'a>> {
    // The root's rows: under the first hop planned (a cycle's hops are reordered below).
    let input = &chain[0].input;
    let mut never_null = vec![chain[0].key.clone()];
    // (An optional hop's are null where it found no match.)
    for n in chain.iter().filter(|n| !n.optional) {
        never_null.extend(edge_id_col(n).map(str::to_string));
        never_null.extend(target_key(n));
    }
    let absent = cond.absent()?;
    let optional = chain.iter().any(|n| n.optional);
    if optional && (!absent.is_empty() || chain.iter().any(|n| n.close.is_some())) {
        return None;
    }
    let mut close = None;
    if chain.iter().any(|n| n.close.is_some()) {
        if !absent.is_empty() {
            return None;
        }
        let cycle = match chain.len() {
            3 => triangle(&chain, &cond.unequal),
            _ => long_cycle(&chain, &cond.unequal),
        };
        let Some(cycle) = cycle else {
            let (arms, joins) = joined(&chain, &cond.unequal)?;
            return Some(Shape {
                input,
                key: chain[0].key.clone(),
                arms,
                close: None,
                joins,
                minus: None,
                never_null,
            });
        };
        chain = cycle;
        close = chain.pop().map(count_hop);
    }
    let (arm_idx, branches) = arms_of(&chain)?;
    if close.is_some() && !branches.is_empty() {
        return None;
    }
    if optional && !optional_hops_stand_alone(&chain, &arm_idx, &branches, &cond.unequal) {
        return None;
    }
    let mut arms: Vec<Vec<CountHop>> = arm_idx
        .iter()
        .map(|a| hops_with_branches(&chain, a, &branches))
        .collect();
    let mut minus = None;
    if close.is_none() {
        let is_edge = |c: &str| hop_of_edge(&chain, c).is_some();
        let nodes: Vec<(String, String)> = (cond.unequal.iter())
            .filter(|(x, z)| !is_edge(x) && !is_edge(z))
            .cloned()
            .collect();
        let mut unequal = cond.unequal.clone();
        // `x <> z` that an absent edge implies, or that the triangles counted apart exclude.
        unequal.retain(|(x, z)| is_edge(x) || !implied_by_absent(&chain, &absent, x, z));
        if let Some(at) = (unequal.iter())
            .position(|(x, z)| !is_edge(x) && fold_at(&chain, &arm_idx, x, z).is_none())
        {
            let (x, z) = unequal.remove(at);
            minus = Some(triangle_correction(&chain, &arm_idx, &branches, &x, &z)?);
        }
        let (uniqueness, mut handled) = folds(&chain, &arm_idx, &unequal, &absent, &mut arms)?;
        handled.extend(
            (uniqueness.iter())
                .filter(|pair| implied_by_unequal_nodes(&chain, &nodes, pair))
                .cloned(),
        );
        if !uniqueness_implied(&chain, &uniqueness, &handled) {
            return None;
        }
        if minus.is_some() && (optional || arms.iter().flatten().any(|h| h.fold.is_some())) {
            return None;
        }
    }
    Some(Shape {
        input,
        key: chain[0].key.clone(),
        arms,
        close,
        joins: vec![],
        minus,
        never_null,
    })
}

/// Any other pattern with cycles, as the steps of a join (`CountPaths::joins`): each hop that
/// reaches a new node a step, each closing hop checked at the step that binds the later of
/// its two nodes. Relationship uniqueness must be implied: two hops over one table could only
/// share an edge if its source and target could be the same two nodes for both (as each
/// walks it: out, in or either way), and two nodes are known to differ when a hop over a
/// table without self-loops joins them, or they are of different tables. Node inequalities
/// and absent edges are left to the rows.
fn joined(
    chain: &[&CsrExpand],
    unequal: &[(String, String)],
) -> Option<(Vec<Vec<CountHop>>, Vec<JoinStep>)> {
    let mut bound: Vec<String> = vec![chain[0].key.clone()];
    let mut steps: Vec<(Vec<CountHop>, JoinStep)> = Vec::new();
    let mut ends: Vec<(String, String)> = Vec::new();
    for n in chain {
        let at = |v: &str| bound.iter().position(|b| *b == v);
        let a = at(&n.key)?;
        match n.close.as_deref() {
            None => {
                let far = target_key(n)?;
                if at(&far).is_some() {
                    return None;
                }
                let step = JoinStep {
                    from: a,
                    closes: vec![],
                };
                steps.push((vec![count_hop(n)], step));
                ends.push((n.key.clone(), far.clone()));
                bound.push(far);
            }
            Some(onto) => {
                let b = at(onto)?;
                if a == b || n.target_filter.is_some() {
                    return None;
                }
                // Checked where the later node is bound, from the earlier one.
                let (new, earlier, back) = if a > b { (a, b, true) } else { (b, a, false) };
                let (hops, step) = &mut steps[new - 1];
                hops.push(count_hop(n));
                step.closes.push((earlier, back));
                ends.push((n.key.clone(), onto.to_string()));
            }
        }
    }
    // The node table of each node, from any hop at it.
    let table = |v: &str| {
        chain
            .iter()
            .zip(&ends)
            .find_map(|(n, (k, o))| match (k == v, o == v) {
                (true, _) => Some(&n.data.near_keys),
                (_, true) => Some(&n.data.far_keys),
                _ => None,
            })
    };
    let differ = |u: &str, w: &str| {
        let joined_without_loops = chain.iter().zip(&ends).any(|(n, (k, o))| {
            ((k == u && o == w) || (k == w && o == u)) && !n.data.index.has_self_loops()
        });
        let tables = match (table(u), table(w)) {
            (Some(x), Some(y)) => !Arc::ptr_eq(x, y),
            _ => false,
        };
        u != w && (joined_without_loops || tables)
    };
    let could_be = |u: &str, w: &str| !differ(u, w);
    let find = |c: &str| hop_of_edge(chain, c);
    // The (source, target) a hop's edge could have: walked from its key, out, in or both.
    let walks = |i: usize| {
        let (k, o) = (ends[i].0.as_str(), ends[i].1.as_str());
        (chain[i].orientations.iter()).map(move |&rev| if rev { (o, k) } else { (k, o) })
    };
    let implied = unequal.iter().all(|(x, y)| match (find(x), find(y)) {
        (Some(i), Some(j)) => {
            !walks(i).any(|(s, t)| walks(j).any(|(u, v)| could_be(s, u) && could_be(t, v)))
        }
        _ => false,
    });
    // (Hops of one table without a uniqueness filter are of different MATCH clauses, merged
    // into one pattern: their edges may be one.)
    implied.then(|| steps.into_iter().unzip())
}

/// Whether every OPTIONAL MATCH's hop of `chain` is an arm or branch of its own, with nothing
/// hanging from its far node and no inequality reading its relationship or far node: its
/// count per node is then its matches, or one where there are none.
fn optional_hops_stand_alone(
    chain: &[&CsrExpand],
    arms: &[Vec<usize>],
    branches: &[(usize, Vec<usize>)],
    unequal: &[(String, String)],
) -> bool {
    (0..chain.len()).filter(|&i| chain[i].optional).all(|i| {
        let own = |hops: &Vec<usize>| hops.as_slice() == [i];
        let alone = arms.iter().any(own) || branches.iter().any(|(_, b)| own(b));
        let holds = branches.iter().any(|(at, _)| *at == i);
        let cols: Vec<String> = (edge_id_col(chain[i]).map(str::to_string))
            .into_iter()
            .chain(target_key(chain[i]))
            .collect();
        let read = (unequal.iter()).any(|(x, z)| cols.contains(x) || cols.contains(z));
        alone && !holds && !read
    })
}

/// Whether any hop of `arms`, or of the branches hanging from them, is optional.
fn any_optional(arms: &[Vec<CountHop>]) -> bool {
    arms.iter()
        .flatten()
        .any(|h| h.optional || any_optional(&h.branches))
}

/// Whether `plan` gives the same rows whenever it runs: scans, values, and projections and
/// filters of expressions without a volatile function (no limit, which may take any rows).
fn same_rows_each_time(plan: &LogicalPlan) -> bool {
    let steady = |es: &[Expr]| es.iter().all(|e| !e.is_volatile());
    match plan {
        LogicalPlan::Projection(p) => steady(&p.expr) && same_rows_each_time(&p.input),
        LogicalPlan::Filter(f) => !f.predicate.is_volatile() && same_rows_each_time(&f.input),
        LogicalPlan::SubqueryAlias(a) => same_rows_each_time(&a.input),
        LogicalPlan::TableScan(t) => t.fetch.is_none() && steady(&t.filters),
        LogicalPlan::Values(_) => true,
        _ => false,
    }
}

/// Whether node column `col` is the source of the edge that hop `n`, walked one way, walks
/// (`None` when `n` is undirected or `col` is not one of its ends).
fn is_source(n: &CsrExpand, col: &str) -> Option<bool> {
    let [rev] = n.orientations.as_slice() else {
        return None;
    };
    match (n.key == col, target_key(n).as_deref() == Some(col)) {
        (true, _) => Some(!rev),
        (_, true) => Some(*rev),
        _ => None,
    }
}

/// Relationship uniqueness between two hops of one table that a node inequality `x <> z`
/// implies: one edge for both would make `x` and `z` the same end of it.
fn implied_by_unequal_nodes(
    chain: &[&CsrExpand],
    nodes: &[(String, String)],
    (e, f): &(String, String),
) -> bool {
    let (Some(a), Some(b)) = (hop_of_edge(chain, e), hop_of_edge(chain, f)) else {
        return false;
    };
    let (a, b) = (chain[a], chain[b]);
    a.rel == b.rel
        && nodes.iter().any(|(x, z)| {
            [(x, z), (z, x)].iter().any(
                |(x, z)| matches!((is_source(a, x), is_source(b, z)), (Some(p), Some(q)) if p == q),
            )
        })
}

/// `x <> z` implied by an absent edge `NOT (u)-[:R]-(x)`: a hop from `u` to `z` walks R
/// (the same index, a way the absent edge walks too) and the absent edge has no
/// relationship filter, so `z = x` would be an edge it forbids.
fn implied_by_absent(chain: &[&CsrExpand], absent: &[&CsrExpand], x: &str, z: &str) -> bool {
    let flipped = |o: &[bool]| o.iter().map(|r| !r).collect::<Vec<_>>();
    absent.iter().any(|n| {
        let Some(to) = n.close.as_deref() else {
            return false;
        };
        [(x, z), (z, x)].iter().any(|&(x, z)| {
            // The absent edge's ways walked from `u`, its end other than `x`.
            let (u, ways) = match (to == x, n.key == x) {
                (true, _) => (n.key.as_str(), n.orientations.clone()),
                (_, true) => (to, flipped(&n.orientations)),
                _ => return false,
            };
            chain.iter().any(|h| {
                let from_u = match (h.key == u, target_key(h).as_deref()) {
                    (true, Some(t)) if t == z => h.orientations.clone(),
                    (false, Some(t)) if t == u && h.key == z => flipped(&h.orientations),
                    _ => return false,
                };
                Arc::ptr_eq(&h.data.index, &n.data.index)
                    && n.edge_filter.is_none()
                    && from_u.iter().all(|w| ways.contains(w))
            })
        })
    })
}

/// `x <> z` between the two ends of a path of three hops, both nodes of one table and no filter
/// on the end the third hop reaches: the paths where they are one node are triangles, counted
/// apart and subtracted. From the root along one arm, the first two hops are closed onto the
/// root by the third; from the middle of the path (an arm of one hop to `y`, one of two hops
/// through `c` to `w`), the two arms' first hops are closed by `c -> w` onto `y`.
fn triangle_correction(
    chain: &[&CsrExpand],
    arm_idx: &[Vec<usize>],
    branches: &[(usize, Vec<usize>)],
    x: &str,
    z: &str,
) -> Option<(Vec<Vec<CountHop>>, CountHop)> {
    if !branches.is_empty() {
        return None;
    }
    let ends = |a: &str, b: &str| (x == a && z == b) || (z == a && x == b);
    // The hop that closes the triangle: its far node is the end merged into the other.
    let closes = |n: &CsrExpand, other: &Arc<crate::csr::NodeKeys>| {
        Arc::ptr_eq(&n.data.far_keys, other) && n.target_filter.is_none()
    };
    match arm_idx {
        [arm] => {
            let &[i, j, k] = arm.as_slice() else {
                return None;
            };
            let ok = ends(&chain[i].key, &target_key(chain[k])?)
                && closes(chain[k], &chain[i].data.near_keys);
            ok.then(|| {
                let arm = vec![count_hop(chain[i]), count_hop(chain[j])];
                (vec![arm], count_hop(chain[k]))
            })
        }
        [p, q] => {
            let (one, c, w) = match (p.as_slice(), q.as_slice()) {
                (&[a], &[c, w]) | (&[c, w], &[a]) => (a, c, w),
                _ => return None,
            };
            let ok = ends(&target_key(chain[one])?, &target_key(chain[w])?)
                && closes(chain[w], &chain[one].data.far_keys);
            ok.then(|| {
                let arms = vec![vec![count_hop(chain[one])], vec![count_hop(chain[c])]];
                (arms, count_hop(chain[w]))
            })
        }
        _ => None,
    }
}

/// The node of `arms[a]` at position `p` (0: the root; `p`: the far node of its hop `p - 1`)
/// whose key column is `col`, for every arm holding it.
fn places(chain: &[&CsrExpand], arms: &[Vec<usize>], col: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (a, hops) in arms.iter().enumerate() {
        if chain[hops[0]].key == col {
            out.push((a, 0));
        }
        for (p, &i) in hops.iter().enumerate() {
            if target_key(chain[i]).as_deref() == Some(col) {
                out.push((a, p + 1));
            }
        }
    }
    out
}

/// The hop of an arm whose near node is `x` and after which the next hop reaches `z`: (arm,
/// position of the hop, whether `x` and `z` were given the other way round).
fn fold_at(
    chain: &[&CsrExpand],
    arms: &[Vec<usize>],
    x: &str,
    z: &str,
) -> Option<(usize, usize, bool)> {
    let (xs, zs) = (places(chain, arms, x), places(chain, arms, z));
    xs.iter().find_map(|&(a, p)| {
        zs.iter().find_map(|&(b, q)| match a == b {
            true if q == p + 2 => Some((a, p, false)),
            true if p == q + 2 => Some((a, q, true)),
            _ => None,
        })
    })
}

/// The conditions that exclude paths, as folds on the arms' hops: `x <> z` between the ends
/// of two consecutive hops, relationship uniqueness between two consecutive hops over one
/// table (unless implied), `NOT (x)-[:R]-(z)` between the ends of two consecutive hops.
/// The uniqueness pairs left to [`uniqueness_implied`] and those the folds handle; `None`
/// for a condition that fits no fold, and for folds on consecutive hops (their exclusions
/// would overlap).
#[allow(clippy::type_complexity)]
fn folds(
    chain: &[&CsrExpand],
    arm_idx: &[Vec<usize>],
    unequal: &[(String, String)],
    absent: &[&CsrExpand],
    arms: &mut [Vec<CountHop>],
) -> Option<(Vec<(String, String)>, Vec<(String, String)>)> {
    fn fold(arms: &mut [Vec<CountHop>], a: usize, p: usize) -> &mut Fold {
        arms[a][p].fold.get_or_insert_with(Fold::default)
    }
    let is_edge = |c: &str| hop_of_edge(chain, c).is_some();
    let mut uniqueness = Vec::new();
    let mut handled = Vec::new();
    for (x, z) in unequal {
        match (is_edge(x), is_edge(z)) {
            (true, true) => {
                uniqueness.push((x.clone(), z.clone()));
                let (i, j) = (hop_of_edge(chain, x)?, hop_of_edge(chain, z)?);
                let consecutive = arm_idx.iter().enumerate().find_map(|(a, hops)| {
                    let (pi, pj) = (
                        hops.iter().position(|&h| h == i)?,
                        hops.iter().position(|&h| h == j)?,
                    );
                    (pi.abs_diff(pj) == 1).then(|| (a, pi.min(pj)))
                });
                let implied = uniqueness_implied(chain, &[(x.clone(), z.clone())], &[]);
                if let (Some((a, p)), false) = (consecutive, implied) {
                    fold(arms, a, p).distinct_edges = true;
                    handled.push((x.clone(), z.clone()));
                }
            }
            (false, false) => {
                let (a, p, _) = fold_at(chain, arm_idx, x, z)?;
                fold(arms, a, p).distinct_ends = true;
            }
            _ => return None,
        }
    }
    for n in absent {
        let (a, p, flipped) = fold_at(chain, arm_idx, &n.key, n.close.as_deref()?)?;
        let f = fold(arms, a, p);
        if f.absent.is_some() {
            return None;
        }
        let mut hop = count_hop(n);
        if flipped {
            hop.orientations = hop.orientations.iter().map(|r| !r).collect();
            std::mem::swap(&mut hop.data.near_keys, &mut hop.data.far_keys);
        }
        f.absent = Some(Box::new(hop));
    }
    let overlapping = arms.iter().any(|a| {
        a.windows(2)
            .any(|w| w[0].fold.is_some() && w[1].fold.is_some())
    });
    let last_folded = arms
        .iter()
        .any(|a| a.last().is_some_and(|h| h.fold.is_some()));
    let computable = arms
        .iter()
        .all(|a| a.windows(2).all(|w| fold_computable(&w[0], &w[1])));
    (!overlapping && !last_folded && computable).then_some((uniqueness, handled))
}

/// Whether the exclusions of hop `h` (followed by `next`) can be counted: both hops and the
/// absent one taken once without self-loops, `z = x` between nodes of one table,
/// the absent hop from the first node's table to the last's (as `CountPathsExec` checks).
fn fold_computable(h: &CountHop, next: &CountHop) -> bool {
    let Some(f) = &h.fold else { return true };
    let same = Arc::ptr_eq;
    let plain = |h: &CountHop| h.lengths == (1, 1) && !h.data.self_loops();
    // The node between the two hops weighs one path: no branches hang from it.
    if !h.branches.is_empty() {
        return false;
    }
    let ends =
        !(f.distinct_ends || f.distinct_edges) || same(&h.data.near_keys, &next.data.far_keys);
    let absent = f.absent.as_deref().is_none_or(|a| {
        plain(a)
            && same(&a.data.near_keys, &h.data.near_keys)
            && same(&a.data.far_keys, &next.data.far_keys)
    });
    plain(h) && plain(next) && ends && absent
}

/// A variable-length hop `*min..max` (max <= 2) over one table from a label to itself, walked
/// one way, as a hop taken `min..=max` times. Its paths are exactly its walks when the table
/// has no self-loops: a walk of at most two edges one way repeats an edge only by taking a
/// self-loop twice. Under column-only projections, no filter.
fn var_length_shape(input: &LogicalPlan) -> Option<Shape<'_>> {
    let mut cond = Conditions::default();
    let plan = skip(input, &mut cond)?;
    let filters_none = cond.unequal.is_empty() && cond.zero.is_empty() && cond.closing.is_empty();
    let LogicalPlan::Extension(Extension { node }) = plan else {
        return None;
    };
    let v = node.as_any().downcast_ref::<VarLengthExpand>()?;
    let [h] = v.hops.as_slice() else { return None };
    let max = v.max?;
    let ok = filters_none
        && v.min <= max
        && (1..=2).contains(&max)
        && h.from == h.to
        && v.start == h.from
        && v.end == h.to
        && !h.index.has_self_loops()
        && !v.distinct
        && v.elems.is_none()
        && v.shortest.is_none();
    if !ok {
        return None;
    }
    let hop = CountHop {
        rel_type: h.rel_type.clone(),
        orientations: vec![h.reverse],
        data: CsrData {
            index: h.index.clone(),
            near_keys: v.near_keys.clone(),
            far_keys: v.near_keys.clone(),
            edges: h.edges.clone(),
            target: v.target_cols.clone(),
        },
        edge: TakeSpec {
            var: v.eids.clone(),
            all: vec![],
            take: vec![],
            key: None,
        },
        target: v.target.clone(),
        target_filter: v.target_filter.clone(),
        edge_filter: None,
        lengths: (v.min, max),
        fold: None,
        branches: vec![],
        optional: false,
        matched_only: false,
    };
    let mut never_null = vec![v.key.clone(), v.eids.clone()];
    never_null.extend(v.target.key.map(|k| v.target.all[k].1.clone()));
    Some(Shape {
        input: &v.input,
        key: v.key.clone(),
        arms: vec![vec![hop]],
        close: None,
        joins: vec![],
        minus: None,
        never_null,
    })
}

fn factorize(agg: &datafusion::logical_expr::Aggregate) -> Option<Result<LogicalPlan>> {
    // No aggregate at all: a DISTINCT.
    if agg.aggr_expr.is_empty() {
        return None;
    }
    let (mut wants, distinct) = all_wanted(agg)?;
    let shape = match hop_chain(&agg.input) {
        Some((chain, cond)) => chain_shape(chain, cond)?,
        None => var_length_shape(&agg.input)?,
    };
    let Shape {
        input: root_rows,
        key,
        mut arms,
        close,
        joins,
        minus,
        never_null,
    } = shape;
    counts_of_an_optional_match(&mut wants, &mut arms, !agg.group_expr.is_empty());
    count_values_not_paths(&mut wants, &never_null);
    // A join counts paths only.
    let values_wanted = wants.iter().any(|w| matches!(w, Wanted::Value { .. }));
    if !joins.is_empty() && (values_wanted || distinct) {
        return None;
    }
    // Some hop excludes paths: counts only.
    let folded = arms.iter().flatten().any(|h| h.fold.is_some());
    let values = path_values(&arms, &wants)?;
    if !values.is_empty() && (close.is_some() || folded) {
        return None;
    }
    // Values and distinct far nodes are not counted over optional hops (a node without a
    // match has one row, and no value there).
    if any_optional(&arms) && (!values.is_empty() || distinct) {
        return None;
    }
    // A root row whose key is null or of no node of the table is counted with no paths;
    // optional hops alone give it one row: the root rows must then be a node table's.
    if arms.iter().all(|a| a[0].optional) && !one_row_per_node(root_rows) {
        return None;
    }
    let count_out = wants
        .iter()
        .find_map(|w| match w {
            Wanted::Count(c) => Some(c.out.clone()),
            _ => None,
        })
        .unwrap_or_else(|| "__paths".to_string());
    let grouping = !agg.group_expr.is_empty();
    if !grouping && distinct {
        return None;
    }
    if let Some((triangles, closing)) = minus {
        // Both counts read the root's rows: they must be the same rows each time.
        if grouping || !values.is_empty() || !same_rows_each_time(root_rows) {
            return None;
        }
        let all = CountPaths::try_new(root_rows.clone(), key.clone(), arms, count_out.clone());
        let plan = all.and_then(|all| {
            let same = "__same_ends".to_string();
            let tri = CountPaths::try_new(root_rows.clone(), key, triangles, same.clone())?
                .with_close(closing);
            let node = |n: CountPaths| LogicalPlan::Extension(Extension { node: Arc::new(n) });
            LogicalPlanBuilder::from(node(all))
                .cross_join(node(tri))?
                .project(vec![(ucol(&count_out) - ucol(&same)).alias(&count_out)])?
                .build()
        });
        return Some(plan.and_then(|p| finish(agg, p, false, &wants, &count_out)));
    }
    let per_node = match grouping {
        true => grouped_per_node(agg, root_rows, &key)?,
        false => false,
    };
    let input = root_rows.clone();
    let node = if grouping {
        let one_hop = matches!(arms.as_slice(), [arm] if arm.len() == 1 && arm[0].lengths == (1, 1) && arm[0].branches.is_empty());
        let far_key = arms[0][0]
            .target
            .key
            .map(|k| arms[0][0].target.all[k].1.clone());
        let distinct_arg = match &wants[0] {
            Wanted::Count(c) => c.arg.clone(),
            _ => None,
        };
        if distinct && (!(per_node && one_hop && distinct_arg == far_key) || close.is_some()) {
            return None;
        }
        CountPaths::try_new_per_row(input, key, arms, count_out.clone(), distinct)
    } else {
        CountPaths::try_new(input, key, arms, count_out.clone())
    };
    let node = node.and_then(|n| {
        let n = match close {
            Some(h) => n.with_close(h),
            None => n,
        };
        n.with_joins(joins).with_values(values)
    });
    let plan = match node {
        Ok(n) => LogicalPlan::Extension(Extension { node: Arc::new(n) }),
        Err(e) => return Some(Err(e)),
    };
    Some(finish(agg, plan, per_node, &wants, &count_out))
}

/// A total over a UNION ALL of branches (a union label, branched per table): each branch
/// counted alone (every one must be factorizable), the counts and sums added up, the least
/// and greatest values folded.
fn factorize_union(agg: &datafusion::logical_expr::Aggregate) -> Option<Result<LogicalPlan>> {
    // Filters, column-only projections and closing counting hops above the union apply to
    // each branch alike: they are moved into the branches.
    let mut above: Vec<&LogicalPlan> = Vec::new();
    let mut cur = agg.input.as_ref();
    let u = loop {
        match cur {
            LogicalPlan::Union(u) => break u,
            LogicalPlan::Projection(p) if p.expr.iter().all(|e| matches!(e, Expr::Column(_))) => {}
            LogicalPlan::Filter(_) => {}
            LogicalPlan::Extension(Extension { node })
                if node
                    .as_any()
                    .downcast_ref::<CsrExpand>()
                    .is_some_and(|n| n.count.is_some() && n.close.is_some()) => {}
            _ => return None,
        }
        above.push(cur);
        cur = cur.inputs().first()?;
    };
    if !agg.group_expr.is_empty() || agg.aggr_expr.is_empty() {
        return None;
    }
    let (wants, distinct) = all_wanted(agg)?;
    if distinct {
        return None;
    }
    let mut parts = Vec::with_capacity(u.inputs.len());
    for input in &u.inputs {
        // The pruned projection of a branch whose columns no aggregate reads.
        let mut branch = match input.as_ref() {
            LogicalPlan::Projection(p) if p.expr.is_empty() => p.input.clone(),
            other => Arc::new(other.clone()),
        };
        for node in above.iter().rev() {
            match node.with_new_exprs(node.expressions(), vec![branch.as_ref().clone()]) {
                Ok(p) => branch = Arc::new(p),
                Err(_) => return None,
            }
        }
        let one =
            datafusion::logical_expr::Aggregate::try_new(branch, vec![], agg.aggr_expr.clone())
                .ok()?;
        match factorize(&one)? {
            Ok(p) => parts.push(p),
            Err(e) => return Some(Err(e)),
        }
    }
    let combine = || -> Result<LogicalPlan> {
        let mut parts = parts.into_iter();
        let mut b = LogicalPlanBuilder::from(parts.next().expect("a union has inputs"));
        for p in parts {
            b = b.union(p)?;
        }
        let totals = wants.iter().zip(agg.schema.fields()).map(|(w, f)| {
            let kind = match w {
                Wanted::Value { kind, .. } => *kind,
                Wanted::Count(_) => ValueKind::Sum,
            };
            rollup(kind, f.name())
        });
        b.aggregate(Vec::<Expr>::new(), totals.collect::<Vec<_>>())?
            .build()
    };
    Some(combine())
}

/// Per-part values of column `out` of kind `kind` rolled up into one: sums (of counts too),
/// least or greatest.
fn rollup(kind: ValueKind, out: &str) -> Expr {
    match kind {
        ValueKind::Sum | ValueKind::NonNull => sum(ucol(out)),
        ValueKind::Min => min(ucol(out)),
        ValueKind::Max => max(ucol(out)),
    }
    .alias(out)
}

/// What each of `agg`'s aggregates wants, its output type checked; and whether it is the one
/// `count(DISTINCT x)` (a distinct count among others is not factorized).
fn all_wanted(agg: &datafusion::logical_expr::Aggregate) -> Option<(Vec<Wanted>, bool)> {
    let mut wants = Vec::new();
    for (e, f) in agg
        .aggr_expr
        .iter()
        .zip(agg.schema.fields().iter().skip(agg.group_expr.len()))
    {
        let (w, t) = wanted(e, f.name())?;
        if *f.data_type() != t {
            return None;
        }
        wants.push(w);
    }
    let distinct = matches!(wants.as_slice(), [Wanted::Count(c)] if c.distinct);
    let other_distinct = (wants.iter()).any(|w| matches!(w, Wanted::Count(c) if c.distinct));
    (distinct || !other_distinct).then_some((wants, distinct))
}

/// A counted column is never null on a path when it is the root's key, an edge id or a far
/// node's key (`never_null`); else it is a property of an arm's end: its non-null values are
/// counted instead.
fn count_values_not_paths(wants: &mut [Wanted], never_null: &[String]) {
    for w in wants {
        let Wanted::Count(Counted {
            arg: Some(c),
            out,
            distinct: false,
        }) = w
        else {
            continue;
        };
        if !never_null.contains(c) {
            let (col, out) = (c.clone(), out.clone());
            *w = Wanted::Value {
                kind: ValueKind::NonNull,
                col,
                out,
            };
        }
    }
}

/// `count(l)` (or `count(r)`) of the node (relationship) of an OPTIONAL MATCH's hop, and no
/// other aggregate: the paths where the hop matched, and the aggregates counts of paths. (A
/// row without a match has `l` null, which `count(l)` skips.) In a total the hop is counted
/// as a plain one (no match: no path); `grouped`, it is counted where it matched, and a
/// group whose rows all lack a match keeps its row, with 0.
fn counts_of_an_optional_match(wants: &mut [Wanted], arms: &mut [Vec<CountHop>], grouped: bool) {
    let arg = |w: &Wanted| match w {
        Wanted::Count(Counted {
            arg: Some(c),
            distinct: false,
            ..
        }) => Some(c.clone()),
        _ => None,
    };
    let Some(Some(col)) = wants.first().map(arg) else {
        return;
    };
    if !wants.iter().all(|w| arg(w).as_ref() == Some(&col)) {
        return;
    }
    let Some(h) = optional_hop_mut(arms, &col) else {
        return;
    };
    match grouped {
        true => h.matched_only = true,
        false => h.optional = false,
    }
    for w in wants.iter_mut() {
        if let Wanted::Count(c) = w {
            c.arg = None;
        }
    }
}

/// The optional hop of `arms` (or of their branches) whose far node's key or relationship's
/// id is `col`.
fn optional_hop_mut<'a>(arms: &'a mut [Vec<CountHop>], col: &str) -> Option<&'a mut CountHop> {
    for h in arms.iter_mut().flatten() {
        let ends_at = key_column(&h.target) == Some(col) || id_column(&h.edge) == Some(col);
        if h.optional && ends_at {
            return Some(h);
        }
        if let Some(found) = optional_hop_mut(&mut h.branches, col) {
            return Some(found);
        }
    }
    None
}

/// The `PathValue`s the wanted values need: each column a property of the last node of an
/// arm, of an integer type.
fn path_values(arms: &[Vec<CountHop>], wants: &[Wanted]) -> Option<Vec<PathValue>> {
    let mut values = Vec::new();
    let mut add = |kind, c: &str, output: String| -> Option<()> {
        let (arm, column) = arms.iter().enumerate().find_map(|(a, hops)| {
            let last = hops.last()?;
            let (table, _, t) = last.target.all.iter().find(|(_, o, _)| o == c)?;
            t.is_integer().then(|| (a, table.clone()))
        })?;
        values.push(PathValue {
            kind,
            arm,
            column,
            output,
        });
        Some(())
    };
    for w in wants {
        match w {
            Wanted::Count(_) => {}
            Wanted::Value { kind, col, out } => add(*kind, col, out.clone())?,
        }
    }
    Some(values)
}

/// Whether an aggregate grouped by columns of the root's rows has a group per row (rows one
/// per node, grouped by the node's key); `None` when it groups by anything else.
fn grouped_per_node(
    agg: &datafusion::logical_expr::Aggregate,
    root_rows: &LogicalPlan,
    key: &str,
) -> Option<bool> {
    let root = root_rows.schema();
    let mut by_key = false;
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
        by_key |= c.name == key;
    }
    Some(by_key && one_row_per_node(root_rows))
}

/// A column by its name (which may hold dots and parentheses).
fn ucol(name: impl Into<String>) -> Expr {
    Expr::Column(datafusion::common::Column::new_unqualified(name))
}

/// The aggregate's output over the `CountPaths` in `plan`: its groups and each wanted value.
/// A group per row (or the total) is a projection; other groupings add up the per-row counts
/// and sums, and take the least of the least values, the greatest of the greatest.
fn finish(
    agg: &datafusion::logical_expr::Aggregate,
    plan: LogicalPlan,
    per_node: bool,
    wants: &[Wanted],
    count_out: &str,
) -> Result<LogicalPlan> {
    let groups = agg.group_expr.clone();
    let mut builder = LogicalPlanBuilder::from(plan);
    let summed = !groups.is_empty() && !per_node;
    if summed {
        let mut parts = vec![sum(ucol(count_out)).alias(count_out)];
        for w in wants {
            match w {
                Wanted::Count(_) => {}
                Wanted::Value { kind, out, .. } => parts.push(rollup(*kind, out)),
            }
        }
        builder = builder.aggregate(groups.clone(), parts)?;
    }
    // The groups (as the aggregate named them), then each aggregate's value.
    let mut exprs: Vec<Expr> = match summed {
        true => agg
            .schema
            .fields()
            .iter()
            .take(groups.len())
            .map(|f| ucol(f.name()))
            .collect(),
        false => groups,
    };
    for w in wants {
        exprs.push(match w {
            Wanted::Count(c) => ucol(count_out).alias(&c.out),
            Wanted::Value { out, .. } => ucol(out),
        });
    }
    builder.project(exprs)?.build()
}

/// `count(*)` of shortest paths (`allShortestPaths`, `shortestPath`, `ANY` / `ALL SHORTEST`)
/// grouped by columns of the rows they start from: each row's paths are counted through the
/// search's predecessors (`VarLengthExpand ... counted`) and the counts added up per group,
/// without building a path (a dense graph has billions of shortest paths between two nodes).
///
/// ```text
/// before:
///   Aggregate: groupBy=[[]], aggr=[[count(Int64(1)) AS __agg0]]
///     VarLengthExpand: key=a__id, ..., shortest=all to b__id, take=...
/// after:
///   Projection: coalesce(__paths, 0) AS __agg0
///     Aggregate: groupBy=[[]], aggr=[[sum(__paths) AS __paths]]
///       VarLengthExpand: key=a__id, ..., shortest=all to b__id, counted -> __paths
/// ```
///
/// Must not fire: any other aggregate, a grouping by a column the paths produce, a filter
/// between (it reads the paths), `SHORTEST k`.
fn factorize_shortest(agg: &datafusion::logical_expr::Aggregate) -> Option<Result<LogicalPlan>> {
    let mut wanted = Vec::new();
    for (e, f) in agg
        .aggr_expr
        .iter()
        .zip(agg.schema.fields().iter().skip(agg.group_expr.len()))
    {
        let c = counted(e, f.name())?;
        if c.arg.is_some() {
            return None;
        }
        wanted.push(c);
    }
    // Below column-only projections and the check that a path ends at the bound end node
    // (`b__id = __vlend`: true of every path a search between two nodes finds).
    let mut input = agg.input.as_ref();
    let mut end_checks = Vec::new();
    loop {
        match input {
            LogicalPlan::Projection(p) if p.expr.iter().all(|e| matches!(e, Expr::Column(_))) => {
                input = p.input.as_ref()
            }
            LogicalPlan::Filter(f) => {
                end_checks.push(column_equality(&f.predicate)?);
                input = f.input.as_ref();
            }
            _ => break,
        }
    }
    let LogicalPlan::Extension(Extension { node }) = input else {
        return None;
    };
    let v = node.as_any().downcast_ref::<VarLengthExpand>()?;
    let sh = v.shortest.as_ref()?;
    let end_key = v.target.key.map(|k| v.target.all[k].1.clone());
    for (x, y) in &end_checks {
        let pair = [Some(x.clone()), Some(y.clone())];
        if !(pair.contains(&sh.target) && pair.contains(&end_key)) {
            return None;
        }
    }
    if matches!(sh.mode, cypher::ast::Shortest::K(_)) || v.count.is_some() || wanted.is_empty() {
        return None;
    }
    let root = v.input.schema();
    for g in &agg.group_expr {
        if !g.column_refs().iter().all(|c| root.has_column(c)) {
            return None;
        }
    }
    const PATHS: &str = "__paths";
    Some((|| {
        let mut counted = v.clone();
        counted.count = Some(PATHS.to_string());
        counted.schema = counted.compute_schema()?;
        let plan = LogicalPlan::Extension(Extension {
            node: Arc::new(counted),
        });
        let groups = agg.group_expr.clone();
        let builder = LogicalPlanBuilder::from(plan)
            .aggregate(groups.clone(), vec![sum(ucol(PATHS)).alias(PATHS)])?;
        let mut exprs: Vec<Expr> = agg
            .schema
            .fields()
            .iter()
            .take(groups.len())
            .map(|f| ucol(f.name()))
            .collect();
        for c in &wanted {
            exprs.push(
                datafusion::functions::expr_fn::coalesce(vec![
                    ucol(PATHS),
                    datafusion::logical_expr::lit(0i64),
                ])
                .alias(&c.out),
            );
        }
        builder.project(exprs)?.build()
    })())
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
            LogicalPlan::Aggregate(a) => match factorize(a)
                .or_else(|| factorize_union(a))
                .or_else(|| factorize_shortest(a))
            {
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
    fn pushes_sums_and_extremes_of_the_last_node_along_the_hops() {
        // A group per node: the values are the aggregate's outputs, avg from sum and count.
        let p = optimized("MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, sum(b.age) AS s, max(b.age) AS hi, avg(b.age) AS m");
        insta::assert_snapshot!(p, @r"
        Projection: __ret0 AS a.id, CASE WHEN __common_expr_1 IS NOT NULL THEN __common_expr_1 ELSE Int64(0) END AS s, max(b__age) AS hi, CASE WHEN count(b__age) = Int64(0) THEN Float64(NULL) ELSE CAST(sum(b__age) AS Float64) / CAST(count(b__age) AS Float64) END AS m
          Projection: cypher_to_int64(sum(b__age)) AS __common_expr_1, a__id AS __ret0, sum(b__age), max(b__age), count(b__age)
            CountPaths: key=a__id, arms=[[KNOWS]] per row -> __paths, Sum(arm 0: age) -> sum(b__age), Max(arm 0: age) -> max(b__age), NonNull(arm 0: age) -> count(b__age)
              Projection: node_Person.id AS a__id
                TableScan: node_Person projection=[id]
        ");
        // Other groupings: per-row values added up (sums, counts) or folded (least, greatest).
        let p = optimized("MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN a.firstName, min(c.age), avg(c.age), count(c.age)");
        insta::assert_snapshot!(p, @r"
        Projection: __ret0 AS a.firstName, min(c__age) AS min(c.age), CASE WHEN count(c__age) = Int64(0) THEN Float64(NULL) ELSE CAST(sum(c__age) AS Float64) / CAST(count(c__age) AS Float64) END AS avg(c.age), count(c__age) AS count(c.age)
          Aggregate: groupBy=[[a__firstName AS __ret0]], aggr=[[min(min(c__age)) AS min(c__age), sum(count(c__age)) AS count(c__age), sum(sum(c__age)) AS sum(c__age)]]
            Projection: a__firstName, min(c__age), count(c__age), sum(c__age)
              CountPaths: key=a__id, arms=[[KNOWS, KNOWS]] per row -> __paths, Min(arm 0: age) -> min(c__age), NonNull(arm 0: age) -> count(c__age), Sum(arm 0: age) -> sum(c__age)
                Projection: node_Person.id AS a__id, node_Person.firstName AS a__firstName
                  TableScan: node_Person projection=[id, firstName]
        ");
    }

    #[test]
    fn counts_triangles_by_intersection() {
        let p = optimized("MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(a) RETURN count(*)");
        insta::assert_snapshot!(p, @r"
        Projection: __agg0 AS count(*)
          CountPaths: key=a__id, arms=[[KNOWS, KNOWS] closed by [KNOWS]] -> __agg0
            Projection: node_Person.id AS a__id
              TableScan: node_Person projection=[id]
        ");
        let p = optimized("MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:KNOWS]-(a) RETURN a.id, count(*)");
        assert!(
            p.contains("closed by [KNOWS (both)]") && p.contains("per row"),
            "{p}"
        );
    }

    /// A cycle of four hops over four tables (no two of its edges can be one), written as
    /// two patterns: rooted at the comment, two arms closed end to end.
    #[test]
    fn counts_longer_cycles_by_intersection() {
        let p = optimized("MATCH (p1:Person)-[:KNOWS]-(p2:Person), (p1)<-[:HAS_CREATOR]-(c:Comment)-[:REPLY_OF]->(m:Post)-[:HAS_CREATOR]->(p2) RETURN count(*)");
        insta::assert_snapshot!(p, @r"
        Projection: __agg0 AS count(*)
          CountPaths: key=c__id, arms=[[HAS_CREATOR] closed by [KNOWS (both)], [REPLY_OF, HAS_CREATOR]] -> __agg0
            Projection: node_Comment:Message.id AS c__id
              TableScan: node_Comment:Message projection=[id]
        ");
        // Grouped by the root: per row.
        let p = optimized("MATCH (p1:Person)-[:KNOWS]-(p2:Person), (p1)<-[:HAS_CREATOR]-(c:Comment)-[:REPLY_OF]->(m:Post)-[:HAS_CREATOR]->(p2) RETURN c.id, count(*)");
        assert!(
            p.contains("closed by [KNOWS (both)]") && p.contains("per row"),
            "{p}"
        );
    }

    #[test]
    fn counts_patterns_of_several_cycles_by_joining() {
        // Two triangles sharing an edge; three persons of one city who know each other; a
        // cycle of two hops.
        for q in [
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(a) RETURN count(*)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)<-[:KNOWS]-(a), (b)-[:KNOWS]->(d:Person)<-[:KNOWS]-(c) RETURN count(*)",
            "MATCH (c:City)<-[:IS_LOCATED_IN]-(a:Person)-[:KNOWS]-(b:Person)-[:IS_LOCATED_IN]->(c), (b)-[:KNOWS]-(d:Person)-[:KNOWS]-(a), (d)-[:IS_LOCATED_IN]->(c) RETURN count(*)",
        ] {
            let p = optimized(q);
            assert!(p.contains("arms=[joined "), "{q}\n{p}");
        }
        insta::assert_snapshot!(optimized("MATCH (c:City)<-[:IS_LOCATED_IN]-(a:Person)-[:KNOWS]-(b:Person)-[:IS_LOCATED_IN]->(c), (b)-[:KNOWS]-(d:Person)-[:KNOWS]-(a), (d)-[:IS_LOCATED_IN]->(c) RETURN count(*)"), @r"
        Projection: __agg0 AS count(*)
          CountPaths: key=c__id, arms=[joined [IS_LOCATED_IN (in)] from 0 onto [], [KNOWS (both), IS_LOCATED_IN] from 1 onto [0], [KNOWS (both), KNOWS (both), IS_LOCATED_IN] from 2 onto [1, 0]] -> __agg0
            Projection: node_City:Place.id AS c__id
              TableScan: node_City:Place projection=[id]
        ");
        // Grouped by the root: per row.
        let p = optimized("MATCH (c:City)<-[:IS_LOCATED_IN]-(a:Person)-[:KNOWS]-(b:Person)-[:IS_LOCATED_IN]->(c), (b)-[:KNOWS]-(d:Person)-[:KNOWS]-(a) RETURN c.id, count(*)");
        assert!(p.contains("joined") && p.contains("per row"), "{p}");
    }

    #[test]
    fn counts_a_variable_length_hop_as_walks() {
        let p = optimized(
            "MATCH (a:Person)-[:KNOWS*1..2]->(b:Person) RETURN a.id, count(*) AS c, max(b.age)",
        );
        insta::assert_snapshot!(p, @r"
        Projection: a__id AS a.id, __agg0 AS c, __agg1 AS max(b.age)
          CountPaths: key=a__id, arms=[[KNOWS*1..2]] per row -> __agg0, Max(arm 0: age) -> __agg1
            Projection: node_Person.id AS a__id
              TableScan: node_Person projection=[id]
        ");
        // Length 0 too: the node itself.
        let p = optimized("MATCH (a:Person)<-[:KNOWS*0..2]-(b:Person) RETURN count(b)");
        assert!(p.contains("arms=[[KNOWS*0..2 (in)]] ->"), "{p}");
    }

    /// Conditions between nodes two hops apart are subtracted (`then [...]` on the first hop);
    /// hops out of an inner node hang from it (`with [...]`).
    #[test]
    fn exclusions_and_branches() {
        for (q, shown) in [
            // Undirected over one table: a path could walk an edge back.
            (
                "MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person) RETURN count(*)",
                "KNOWS (both) then [edges differ], KNOWS (both)",
            ),
            (
                "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE a <> c RETURN count(*)",
                "KNOWS then [ends differ], KNOWS",
            ),
            (
                "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE NOT (a)-[:KNOWS]-(c) RETURN count(*)",
                "KNOWS then [no KNOWS (both)], KNOWS",
            ),
            (
                "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person), (b)-[:LIKES]->(m) RETURN count(*)",
                "LIKES (in) with [KNOWS], KNOWS (in)",
            ),
        ] {
            let p = optimized(q);
            assert!(p.contains(shown), "{q}\n{p}");
        }
    }

    #[test]
    fn must_not_fire() {
        for q in [
            // Not a plain count(*).
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN count(DISTINCT b)",
            // DISTINCT values, values of a node inside the chain or of the root, values that
            // are not integers (a float sum's rounding depends on its order), collect.
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, sum(DISTINCT b.age)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN a.id, sum(b.age)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN b.id, sum(b.age)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, sum(b.age * 1.5)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, max(b.firstName)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, collect(b.age)",
            // No aggregate: DISTINCT rows.
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN DISTINCT a.id",
            // Values of a triangle's nodes.
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(a) RETURN sum(c.age)",
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
            // Two triangles sharing the edge b -> c whose edges a -> c and d -> c could be one
            // (where a = d, with b -> a).
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)<-[:KNOWS]-(a), (b)-[:KNOWS]->(d:Person)-[:KNOWS]->(c) RETURN count(*)",
            // Two triangles sharing an edge, with values of a node, or an inequality between
            // nodes (left to the rows).
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)<-[:KNOWS]-(a), (b)-[:KNOWS]->(d:Person)<-[:KNOWS]-(c) RETURN sum(d.age)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)<-[:KNOWS]-(a), (b)-[:KNOWS]->(d:Person)<-[:KNOWS]-(c) WHERE a <> d RETURN count(*)",
            // Two 4-cycles over one table sharing an edge: two of their edges could be one.
            "MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:KNOWS]-(d:Person)-[:KNOWS]-(a), (b)-[:KNOWS]-(e:Person)-[:KNOWS]-(c) RETURN count(*)",
            // A 4-cycle: uniqueness could exclude a path (a-b-a-b).
            "MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:KNOWS]-(d:Person)-[:KNOWS]-(a) RETURN count(*)",
            // A directed 4-cycle of one table: its first and third hops could be one edge.
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person)-[:KNOWS]->(a) RETURN count(*)",
            // A longer cycle with an inequality between its nodes.
            "MATCH (p1:Person)-[:KNOWS]-(p2:Person), (p1)<-[:HAS_CREATOR]-(c:Comment)-[:REPLY_OF]->(m:Post)-[:HAS_CREATOR]->(p2) WHERE p1 <> p2 RETURN count(*)",
            // A filter that reads two hops' nodes stays between them.
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE a.age < c.age RETURN count(*)",
            // Three hops of one table: a-b-a-b repeats an edge.
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person) RETURN count(*)",
            // count(NULL) counts no row (a property the inferred label lacks).
            "MATCH (f:Forum)-[:HAS_MODERATOR]->(p) RETURN count(p.content)",
            "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN count(null)",
            // Variable length: three hops could repeat an edge (a-b-a-b), so could an
            // undirected walk of two (a-b-a); no bound; several types; distinct ends; a path
            // or its relationships read.
            "MATCH (a:Person)-[:KNOWS*1..3]->(b:Person) RETURN count(*)",
            "MATCH (a:Person)-[:KNOWS*1..2]-(b:Person) RETURN count(*)",
            "MATCH (a:Person)-[:KNOWS*]->(b:Person) RETURN count(*)",
            "MATCH (a:Person)-[:KNOWS|LIKES*1..2]->(b) RETURN count(*)",
            "MATCH (a:Person)-[:KNOWS*1..2]->(b:Person) RETURN a.id, count(DISTINCT b)",
            "MATCH p = (a:Person)-[:KNOWS*1..2]->(b:Person) RETURN count(p), sum(length(p))",
            "MATCH (a:Person)-[r:KNOWS*1..2]->(b:Person) RETURN sum(size(r))",
        ] {
            let p = optimized(q);
            assert!(!p.contains("CountPaths"), "{q}\n{p}");
        }
    }
}
