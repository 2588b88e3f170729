//! Re-rooting (`pattern_order`): each MATCH is rewritten to start at its best-scoring node and
//! walk outwards, hop by hop, turning a relationship around where it is walked from its target
//! (an outgoing edge walked from its target is incoming).
//!
//! Score: already bound by an earlier clause > equal to a value bound earlier (`WHERE v =
//! x`) > key equality > other property filter > the
//! node the next clause counts per (`RETURN a.id, count(*)`: counts per root row come from
//! the index, see `FactorizeCounts`) > smaller table > none. The patterns of a MATCH form a graph (a `petgraph` graph, nodes = node
//! variables, edges = relationship patterns); each connected component is walked from its best
//! node, the best component first: a tree depth-first (factorized counts take it arm by arm), a
//! component with a cycle node by node in the order whose prefixes cost least: their estimated
//! rows plus, per row, the shortest neighbour list each step walks (from table sizes, and per
//! relationship the share of node pairs it joins; weighed over every order by dynamic
//! programming over sets of nodes), each node reached by one relationship and its other
//! relationships to the nodes before it closed at once (intersections). Every relationship is matched exactly once,
//! with the same endpoints, labels, property maps and variables; the full WHERE still applies
//! above. Only the order of work changes.
//!
//! ```text
//! MATCH (f:Forum)-[:HAS_MEMBER]->(p:Person) WHERE p.id = 42 RETURN f.title
//!   becomes
//! MATCH (p:Person)<-[:HAS_MEMBER]-(f:Forum) WHERE p.id = 42 RETURN f.title
//! ```
//!
//! Variable-length relationships are turned around like fixed ones (the paths are the same,
//! walked from the other end; their relationship list is used only as a set, and for its
//! size). Must not fire: named paths (their relationship order is the path's).

use crate::binder::{Binder, QueryGraph};
use crate::error::Result;
use cypher::ast::{self, Direction, ExprKind};
use petgraph::graph::{NodeIndex, UnGraph};
use petgraph::visit::EdgeRef;
use std::collections::{BTreeMap, HashSet};

/// Why a node was chosen as the root, for EXPLAIN.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum RootReason {
    None,
    /// Smaller tables score higher: `usize::MAX - rows`.
    Table(usize),
    /// The next clause counts per this node.
    Grouped,
    PropertyFilter,
    KeyEquality,
    /// WHERE requires it to equal a value bound by an earlier clause (a node taken from a
    /// list and matched again): one node per earlier row, found by a join on identity.
    EqualsBound,
    Bound,
    /// As `EqualsBound`, where the node is looked up by the key the value names (key
    /// indexes): one lookup per earlier row, no table scanned, a better start than a node
    /// bound before (whose neighbours may be many).
    LookedUpFromBound,
}

impl std::fmt::Display for RootReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RootReason::None => write!(f, "no filter"),
            RootReason::Table(s) => write!(f, "smallest table ({} rows)", usize::MAX - s),
            RootReason::Grouped => write!(f, "counted per"),
            RootReason::PropertyFilter => write!(f, "property filter"),
            RootReason::KeyEquality => write!(f, "key equality"),
            RootReason::EqualsBound => write!(f, "equal to a bound value"),
            RootReason::Bound => write!(f, "bound by an earlier clause"),
            RootReason::LookedUpFromBound => write!(f, "looked up by a bound value's key"),
        }
    }
}

/// A node variable of the MATCH with everything the patterns say about it.
struct Var {
    name: String,
    labels: Vec<ast::Ident>,
    label_expr: Option<ast::LabelExpr>,
    props: Vec<(ast::Ident, ast::Expr)>,
    span: cypher::Span,
}

/// `v.k = <literal or parameter>` (either side): (v, k).
fn equality_on(e: &ast::Expr) -> Option<(&str, &str)> {
    let ExprKind::Binary(ast::BinaryOp::Eq, l, r) = &e.kind else {
        return None;
    };
    fn constant(x: &ast::Expr) -> bool {
        matches!(x.kind, ExprKind::Literal(_) | ExprKind::Param(_))
    }
    fn prop(x: &ast::Expr) -> Option<(&str, &str)> {
        match &x.kind {
            ExprKind::Property(t, k) => match &t.kind {
                ExprKind::Variable(v) => Some((v.as_str(), k.name.as_str())),
                _ => None,
            },
            _ => None,
        }
    }
    match (prop(l), prop(r)) {
        (Some(p), None) if constant(r) => Some(p),
        (None, Some(p)) if constant(l) => Some(p),
        _ => None,
    }
}

/// Variables a predicate reads properties of, when it reads exactly one variable.
fn single_var_filter(e: &ast::Expr) -> Option<String> {
    let mut vars = HashSet::new();
    let mut props = false;
    e.walk(&mut |x| {
        match &x.kind {
            ExprKind::Variable(v) => {
                vars.insert(v.clone());
            }
            ExprKind::Property(..) => props = true,
            _ => {}
        }
        true
    });
    (props && vars.len() == 1).then(|| vars.into_iter().next().expect("one variable"))
}

/// The rewritten MATCH, bound, and, per component, the root and why.
pub(crate) struct Reordered {
    pub graph: QueryGraph,
    pub roots: Vec<(String, RootReason)>,
    /// Per cyclic component, the order chosen and what it and the written order were
    /// estimated to cost (for EXPLAIN).
    pub orders: Vec<OrderEstimate>,
}

/// A cyclic component's node order and its estimates (see [`PatternGraph::cheapest_order`]):
/// the rows its prefixes make plus the neighbour list entries walked to make them.
#[derive(Debug, Clone)]
pub(crate) struct OrderEstimate {
    /// The component's nodes in the order they are reached, the root first.
    pub order: Vec<String>,
    /// The rows the whole component joins to.
    pub rows: f64,
    pub cost: f64,
    /// The cost of reaching the nodes in the order they are written (infinite where that
    /// order is no walk: a node before any of its neighbours).
    pub written: f64,
}

impl std::fmt::Display for OrderEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "order {}: ~{} rows, cost ~{}",
            self.order.join(", "),
            approx(self.rows),
            approx(self.cost)
        )?;
        if self.written.is_finite() {
            write!(f, " (as written ~{})", approx(self.written))?;
        }
        Ok(())
    }
}

/// A positive estimate in a few digits: `950`, `12.3k`, `4.8M`, `2.1e12`.
pub(crate) fn approx(x: f64) -> String {
    if !x.is_finite() {
        return "inf".into();
    }
    let x = x.max(0.0);
    if x >= 999.5e9 {
        return format!("{x:.1e}");
    }
    // Where a unit's rounding would show 1000, the next unit up.
    for (unit, scale) in [("G", 1e9), ("M", 1e6), ("k", 1e3)] {
        if x >= scale * 0.9995 {
            return format!("{:.1}{unit}", x / scale);
        }
    }
    format!("{}", x.round())
}

/// Re-roots a bound MATCH (`None`: left as written). `grouped`: the node variable the next
/// clause counts per. `lookups(v, table)`: node variable `v`, equal to a bound value, is
/// looked up by the key the value names in the table its labels pick (`None`: in whichever
/// table it resolves to). `fresh` names anonymous nodes
/// (internal names start with `__`).
pub(crate) fn reorder(
    qg: &QueryGraph,
    binder: &Binder<'_>,
    grouped: Option<&str>,
    lookups: &dyn Fn(&str, Option<&str>) -> bool,
    fresh: &mut dyn FnMut() -> String,
) -> Option<Result<Reordered>> {
    let m = &qg.clause;
    if m.patterns.iter().any(|p| p.name.is_some()) {
        return None;
    }
    let pg = PatternGraph::new(m, fresh)?;
    let where_conj: Vec<&ast::Expr> = m
        .where_
        .as_ref()
        .map(ast::Expr::conjuncts)
        .unwrap_or_default();
    let scores: Vec<RootReason> = pg
        .vars
        .iter()
        .map(|v| score(v, binder, &where_conj, grouped, lookups))
        .collect();
    let components = pg.components(&scores);
    let roots = components
        .iter()
        .map(|(root, _)| (pg.vars[*root].name.clone(), scores[*root].clone()))
        .collect();
    let estimates = Estimates::new(&pg, qg, binder.catalog, &scores);
    let walks: Vec<Walk> = (components.iter())
        .map(|(root, members)| pg.cheapest_order(*root, members, &estimates))
        .collect();
    let orders = (walks.iter())
        .filter_map(|w| {
            let (rows, cost, written) = w.estimate?;
            let order = std::iter::once(&w.root).chain(w.order.iter().flatten());
            Some(OrderEstimate {
                order: order.map(|v| pg.vars[*v].name.clone()).collect(),
                rows,
                cost,
                written,
            })
        })
        .collect();
    let clause = ast::Match {
        optional: m.optional,
        patterns: pg.walk(&walks, &estimates),
        where_: m.where_.clone(),
        unique_within: m.unique_within.clone(),
        span: m.span,
    };
    Some(binder.bind_match(&clause).map(|graph| Reordered {
        graph,
        roots,
        orders,
    }))
}

/// The patterns of a MATCH as a graph: nodes = node variables, edges = relationships.
struct PatternGraph {
    vars: Vec<Var>,
    /// The variable of each node occurrence, path by path (the binder's order).
    occurrences: Vec<usize>,
    /// (from var, rel, to var) with the relationship as written between them.
    rels: Vec<(usize, ast::RelPattern, usize)>,
    graph: UnGraph<usize, usize>,
    nodes: Vec<NodeIndex>,
}

impl PatternGraph {
    /// `None` when a node's property map is not a literal map.
    fn new(m: &ast::Match, fresh: &mut dyn FnMut() -> String) -> Option<Self> {
        // Node variables (anonymous ones named), in order of first appearance.
        let mut vars: Vec<Var> = Vec::new();
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        let mut var_of =
            |n: &ast::NodePattern, vars: &mut Vec<Var>, fresh: &mut dyn FnMut() -> String| {
                let name = n.var.as_ref().map(|v| v.name.clone()).unwrap_or_else(fresh);
                let i = *index.entry(name.clone()).or_insert_with(|| {
                    vars.push(Var {
                        name: name.clone(),
                        labels: vec![],
                        label_expr: None,
                        props: vec![],
                        span: n.span,
                    });
                    vars.len() - 1
                });
                let v = &mut vars[i];
                for l in &n.labels {
                    if !v.labels.iter().any(|x| x.name == l.name) {
                        v.labels.push(l.clone());
                    }
                }
                // Every occurrence's label expression holds.
                if let Some(e) = &n.label_expr {
                    v.label_expr = Some(match v.label_expr.take() {
                        None => e.clone(),
                        Some(prev) => ast::LabelExpr::And(vec![prev, e.clone()]),
                    });
                }
                if let Some(p) = &n.props {
                    match &p.kind {
                        ExprKind::Map(entries) => v.props.extend(entries.iter().cloned()),
                        _ => return None,
                    }
                }
                Some(i)
            };
        let mut graph: UnGraph<usize, usize> = UnGraph::new_undirected();
        let mut nodes: Vec<NodeIndex> = Vec::new();
        // (from var, rel, to var) with the relationship as written between them.
        let mut rels: Vec<(usize, ast::RelPattern, usize)> = Vec::new();
        let mut occurrences = Vec::new();
        for p in &m.patterns {
            let mut prev = var_of(&p.start, &mut vars, fresh)?;
            occurrences.push(prev);
            for (r, n) in &p.steps {
                let next = var_of(n, &mut vars, fresh)?;
                occurrences.push(next);
                rels.push((prev, r.clone(), next));
                prev = next;
            }
        }
        for i in 0..vars.len() {
            nodes.push(graph.add_node(i));
        }
        for (k, (a, _, b)) in rels.iter().enumerate() {
            graph.add_edge(nodes[*a], nodes[*b], k);
        }
        Some(PatternGraph {
            vars,
            occurrences,
            rels,
            graph,
            nodes,
        })
    }

    /// Connected components as (root, members), best root first; ties keep the written order.
    fn components(&self, scores: &[RootReason]) -> Vec<(usize, Vec<usize>)> {
        let (vars, graph, nodes) = (&self.vars, &self.graph, &self.nodes);
        // Components, best root first; ties keep the written order.
        let mut seen = vec![false; vars.len()];
        let mut components: Vec<(usize, Vec<usize>)> = Vec::new();
        for start in 0..vars.len() {
            if seen[start] {
                continue;
            }
            let mut members = vec![];
            let mut stack = vec![start];
            seen[start] = true;
            while let Some(x) = stack.pop() {
                members.push(x);
                for nb in graph.neighbors(nodes[x]) {
                    let j = graph[nb];
                    if !seen[j] {
                        seen[j] = true;
                        stack.push(j);
                    }
                }
            }
            members.sort_unstable();
            let root = *members
                .iter()
                .max_by(|a, b| scores[**a].cmp(&scores[**b]).then(b.cmp(a)))
                .expect("a component has a node");
            components.push((root, members));
        }
        components.sort_by(|a, b| scores[b.0].cmp(&scores[a.0]).then(a.0.cmp(&b.0)));
        components
    }

    /// How one component is walked: its root, then, for a cyclic component, the order in
    /// which its other nodes are reached (`None`: depth-first, as written).
    fn cheapest_order(&self, root: usize, members: &[usize], est: &Estimates) -> Walk {
        let inside = |k: &usize| members.contains(&self.rels[*k].0);
        let edges: Vec<usize> = (0..self.rels.len()).filter(inside).collect();
        // Trees are walked depth-first: factorized counts take them arm by arm.
        if edges.len() < members.len() || members.len() > MAX_ORDERED {
            return Walk {
                root,
                order: None,
                estimate: None,
            };
        }
        let bit = |v: usize| 1u32 << members.iter().position(|m| *m == v).expect("a member");
        let ends: Vec<(u32, u32, f64)> = (edges.iter())
            .map(|k| (bit(self.rels[*k].0), bit(self.rels[*k].2), est.sel[*k].ln()))
            .collect();
        let full = (1u32 << members.len()) - 1;
        // Per set of nodes, the rows of its nodes joined by every relationship among them.
        let rows: Vec<f64> = (0..=full)
            .map(|mask| {
                let nodes: f64 = (members.iter().enumerate())
                    .filter(|(i, _)| mask & (1 << i) != 0)
                    .map(|(_, v)| est.rows[*v].ln())
                    .sum();
                let rels: f64 = (ends.iter())
                    .filter(|(a, b, _)| mask & a != 0 && mask & b != 0)
                    .map(|(_, _, s)| s)
                    .sum();
                (nodes + rels).exp()
            })
            .collect();
        // The work of reaching member `i` from `mask`: per row, the shortest list of its
        // neighbours among the nodes reached (walked, the others probed or intersected);
        // infinite when it has none there.
        let reach = |mask: u32, i: usize| -> f64 {
            let b = 1u32 << i;
            (ends.iter())
                .filter(|(x, y, _)| (x & b != 0 && mask & y != 0) || (y & b != 0 && mask & x != 0))
                .map(|(_, _, s)| s.exp() * est.tables[members[i]])
                .fold(f64::INFINITY, f64::min)
        };
        // Cheapest sum of the rows of every prefix and the lists walked to make them, over
        // the orders that reach each set of nodes from the root one neighbour at a time.
        let mut best = vec![(f64::INFINITY, u32::MAX); full as usize + 1];
        best[bit(root) as usize] = (rows[bit(root) as usize], u32::MAX);
        for mask in 1..=full {
            let (cost, _) = best[mask as usize];
            if cost.is_infinite() {
                continue;
            }
            for i in (0..members.len()).filter(|i| mask & (1 << i) == 0) {
                let b = 1u32 << i;
                let walked = reach(mask, i);
                if walked.is_infinite() {
                    continue;
                }
                let next =
                    cost + rows[(mask | b) as usize] + rows[mask as usize] * (ROW_COST + walked);
                // Ties keep the written order: the lower member reached first.
                if next < best[(mask | b) as usize].0 * (1.0 - 1e-9) {
                    best[(mask | b) as usize] = (next, mask);
                }
            }
        }
        // The written order (members are in order of first appearance), weighed alike.
        let mut written = rows[1];
        for i in 1..members.len() {
            let mask = (1u32 << i) - 1;
            written +=
                rows[(mask | 1 << i) as usize] + rows[mask as usize] * (ROW_COST + reach(mask, i));
        }
        let estimate = Some((rows[full as usize], best[full as usize].0, written));
        let mut order = Vec::new();
        let mut mask = full;
        while best[mask as usize].1 != u32::MAX {
            let prev = best[mask as usize].1;
            let added = (mask & !prev).trailing_zeros() as usize;
            order.push(members[added]);
            mask = prev;
        }
        order.reverse();
        Walk {
            root,
            order: Some(order),
            estimate,
        }
    }

    /// One-hop patterns walked from each component's root, each relationship once, turned
    /// around where it is walked from its written target: depth-first, or node by node in a
    /// component's order (each node reached by its cheapest relationship from the nodes
    /// before it, then its relationships to them closed).
    fn walk(&self, walks: &[Walk], est: &Estimates) -> Vec<ast::PathPattern> {
        let (vars, rels, graph, nodes) = (&self.vars, &self.rels, &self.graph, &self.nodes);
        // Node pattern for a variable: all its labels and property entries on first emission.
        let mut emitted = vec![false; vars.len()];
        let node_pat = |i: usize, emitted: &mut Vec<bool>| -> ast::NodePattern {
            let v = &vars[i];
            let first = !emitted[i];
            emitted[i] = true;
            ast::NodePattern {
                var: Some(ast::Ident::new(v.name.clone(), v.span)),
                labels: if first { v.labels.clone() } else { vec![] },
                label_expr: if first { v.label_expr.clone() } else { None },
                props: (first && !v.props.is_empty())
                    .then(|| ast::Expr::new(ExprKind::Map(v.props.clone()), v.span)),
                span: v.span,
            }
        };
        // Relationship `k` walked from `x` to `y`.
        let hop = |k: usize, x: usize, y: usize, emitted: &mut Vec<bool>| {
            let (a, r, _) = &rels[k];
            let mut rel = r.clone();
            // Walked from its written target: turn it around.
            if *a != x {
                rel.direction = match rel.direction {
                    Direction::Outgoing => Direction::Incoming,
                    Direction::Incoming => Direction::Outgoing,
                    Direction::Both => Direction::Both,
                };
            }
            let from = node_pat(x, emitted);
            let to = node_pat(y, emitted);
            ast::PathPattern {
                shortest: None,
                name: None,
                span: rel.span,
                start: from,
                steps: vec![(rel, to)],
            }
        };
        let mut patterns = Vec::new();
        let mut used = vec![false; rels.len()];
        for w in walks {
            let root = w.root;
            let mut visited = vec![false; vars.len()];
            visited[root] = true;
            let mut emitted_any = false;
            if let Some(order) = &w.order {
                for &y in std::iter::once(&root).chain(order) {
                    // Its relationships to the nodes reached before it (and loops on it).
                    let mut to_visited: Vec<(usize, usize)> = (0..rels.len())
                        .filter(|k| !used[*k])
                        .filter_map(|k| {
                            let (a, _, b) = &rels[k];
                            match (*a == y, *b == y) {
                                (true, _) if visited[*b] || *b == y => Some((k, *b)),
                                (_, true) if visited[*a] => Some((k, *a)),
                                _ => None,
                            }
                        })
                        .collect();
                    // Reached by the relationship that joins the fewest pairs (the root
                    // is where the walk starts).
                    if y != root {
                        let first = (0..to_visited.len())
                            .filter(|i| to_visited[*i].1 != y)
                            .min_by(|i, j| {
                                let (ki, kj) = (to_visited[*i].0, to_visited[*j].0);
                                est.sel[ki].total_cmp(&est.sel[kj]).then(i.cmp(j))
                            })
                            .expect("an order reaches each node from one before it");
                        let (k, x) = to_visited.remove(first);
                        used[k] = true;
                        patterns.push(hop(k, x, y, &mut emitted));
                        visited[y] = true;
                    }
                    emitted_any |= !to_visited.is_empty() || y != root;
                    for (k, x) in to_visited {
                        used[k] = true;
                        patterns.push(hop(k, y, x, &mut emitted));
                    }
                }
            } else {
                // Depth-first from the root; each relationship once, walked from the visited
                // end.
                let mut stack = vec![root];
                while let Some(x) = stack.pop() {
                    let mut edges: Vec<(usize, usize)> = graph
                        .edges(nodes[x])
                        .map(|e| {
                            (
                                *e.weight(),
                                graph[if e.source() == nodes[x] {
                                    e.target()
                                } else {
                                    e.source()
                                }],
                            )
                        })
                        .collect();
                    edges.sort_unstable();
                    for (k, y) in edges {
                        if used[k] {
                            continue;
                        }
                        used[k] = true;
                        patterns.push(hop(k, x, y, &mut emitted));
                        emitted_any = true;
                        if !visited[y] {
                            visited[y] = true;
                            stack.push(y);
                        }
                    }
                }
            }
            if !emitted_any {
                let start = node_pat(root, &mut emitted);
                patterns.push(ast::PathPattern {
                    shortest: None,
                    name: None,
                    span: start.span,
                    start,
                    steps: vec![],
                });
            }
        }
        patterns
    }
}

/// The most nodes of a cyclic component ordered by cost (2^n sets are weighed).
const MAX_ORDERED: usize = 12;

/// What a row costs an operator beyond the neighbour lists it reads, in list entries (a
/// row's batch slot and column takes; measured on the intersections: about five entries).
const ROW_COST: f64 = 5.0;

/// How a component is walked (see [`PatternGraph::cheapest_order`]).
struct Walk {
    root: usize,
    order: Option<Vec<usize>>,
    /// For an ordered component: the rows it joins to, the order's cost and the written
    /// order's.
    estimate: Option<(f64, f64, f64)>,
}

/// What ordering a cyclic component weighs: rows per node variable (its tables' rows, less
/// what its filters keep out) and, per relationship, the share of node pairs it joins.
struct Estimates {
    rows: Vec<f64>,
    /// The rows of each node variable's tables (what a list of its neighbours is drawn from).
    tables: Vec<f64>,
    sel: Vec<f64>,
}

impl Estimates {
    fn new(
        pg: &PatternGraph,
        qg: &QueryGraph,
        catalog: &crate::catalog::Catalog,
        scores: &[RootReason],
    ) -> Self {
        // The rows of each variable's tables (its occurrences' candidates; the fewest).
        let mut table_rows = vec![f64::INFINITY; pg.vars.len()];
        for (occ, v) in pg.occurrences.iter().enumerate() {
            let n: usize = (qg.labels.get(occ).into_iter().flatten())
                .filter_map(|l| catalog.nodes.get(l))
                .map(|n| n.table.num_rows)
                .sum();
            table_rows[*v] = table_rows[*v].min(n.max(1) as f64);
        }
        let table_rows: Vec<f64> = (table_rows.into_iter())
            .map(|r| if r.is_finite() { r } else { 1.0 })
            .collect();
        let rows = (scores.iter().zip(table_rows.iter()))
            .map(|(score, n)| match score {
                RootReason::LookedUpFromBound
                | RootReason::Bound
                | RootReason::EqualsBound
                | RootReason::KeyEquality => 1.0,
                RootReason::PropertyFilter => (n / 10.0).max(1.0),
                _ => *n,
            })
            .collect();
        let sel = (pg.rels.iter().enumerate())
            .map(|(k, (a, r, b))| {
                let edges: usize = (qg.tables.get(k).into_iter().flatten())
                    .filter_map(|t| catalog.rels.get(*t))
                    .map(|t| t.table.num_rows)
                    .sum();
                let ways = if r.direction == Direction::Both {
                    2.0
                } else {
                    1.0
                };
                (ways * edges.max(1) as f64 / (table_rows[*a] * table_rows[*b])).min(1.0)
            })
            .collect::<Vec<f64>>();
        Estimates {
            rows,
            tables: table_rows,
            sel,
        }
    }
}

/// How good a root `v` is: looked up from a bound value > bound > equal to a bound value >
/// key equality > property filter > counted per > smaller table > none.
fn score(
    v: &Var,
    binder: &Binder<'_>,
    where_conj: &[&ast::Expr],
    grouped: Option<&str>,
    lookups: &dyn Fn(&str, Option<&str>) -> bool,
) -> RootReason {
    let catalog = binder.catalog;
    let is_bound = |v: &str| (binder.bound)(v).is_some();
    if is_bound(&v.name) {
        return RootReason::Bound;
    }
    let equals_bound = |c: &&ast::Expr| match &c.kind {
        ExprKind::Binary(ast::BinaryOp::Eq, l, r) => match (&l.kind, &r.kind) {
            (ExprKind::Variable(a), ExprKind::Variable(b)) => {
                (a == &v.name && is_bound(b)) || (b == &v.name && is_bound(a))
            }
            _ => false,
        },
        _ => false,
    };
    // The one table the variable's labels pick, if they pick one.
    let info = {
        let pattern = ast::NodePattern {
            var: None,
            labels: v.labels.clone(),
            label_expr: v.label_expr.clone(),
            props: None,
            span: v.span,
        };
        match catalog.tables_for(&pattern).as_slice() {
            [t] if pattern.has_label_test() => Some(*t),
            _ => None,
        }
    };
    if where_conj.iter().any(equals_bound) {
        let labelled = !v.labels.is_empty() || v.label_expr.is_some();
        return match info {
            Some(i) if lookups(&v.name, Some(&i.label)) => RootReason::LookedUpFromBound,
            None if !labelled && lookups(&v.name, None) => RootReason::LookedUpFromBound,
            _ => RootReason::EqualsBound,
        };
    }
    let key = info.map(|i| i.key.as_str());
    let key_eq = v.props.iter().any(|(k, e)| {
        Some(k.name.as_str()) == key && matches!(e.kind, ExprKind::Literal(_) | ExprKind::Param(_))
    }) || where_conj
        .iter()
        .any(|c| equality_on(c).is_some_and(|(var, k)| var == v.name && Some(k) == key));
    if key_eq {
        return RootReason::KeyEquality;
    }
    if !v.props.is_empty()
        || where_conj
            .iter()
            .any(|c| single_var_filter(c).as_deref() == Some(v.name.as_str()))
    {
        return RootReason::PropertyFilter;
    }
    if grouped == Some(v.name.as_str()) {
        return RootReason::Grouped;
    }
    match info {
        Some(i) => RootReason::Table(usize::MAX - i.table.num_rows),
        _ => RootReason::None,
    }
}

#[cfg(test)]
mod graph_tests {
    use super::*;
    use crate::rewrite::test_util::{bound_match, sample, text};

    /// `q`'s first MATCH re-rooted: the clause and the roots with why.
    fn reordered(q: &str, grouped: Option<&str>) -> Option<(String, Vec<String>)> {
        let g = sample();
        let qg = bound_match(g.catalog(), q);
        let none = |_: &str| None;
        let binder = Binder {
            catalog: g.catalog(),
            lenient: false,
            bound: &none,
        };
        let mut names = crate::rewrite::Names::default();
        let r = reorder(&qg, &binder, grouped, &|_, _| false, &mut || {
            names.fresh("anon")
        })?
        .unwrap();
        let roots = r
            .roots
            .iter()
            .map(|(v, why)| format!("{v} ({why})"))
            .collect();
        Some((text(&r.graph.clause), roots))
    }

    #[test]
    fn the_key_equality_is_the_root_and_the_walk_goes_out_from_it() {
        let (clause, roots) = reordered(
            "MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person {id: 3}) RETURN a",
            None,
        )
        .unwrap();
        assert_eq!(roots, ["c (key equality)"]);
        assert!(
            clause.starts_with("MATCH (c:Person {id: 3})<-[:KNOWS]-(b:Person)"),
            "{clause}"
        );
    }

    /// `q`'s first MATCH walked from `root` with hand-made estimates: rows per node
    /// variable by name, the share of pairs per relationship type.
    fn walked(q: &str, root: &str, rows: &[(&str, f64)], sel: &[(&str, f64)]) -> String {
        planned(q, root, rows, sel).0
    }

    /// As [`walked`], with the walk and its estimates.
    fn planned(q: &str, root: &str, rows: &[(&str, f64)], sel: &[(&str, f64)]) -> (String, Walk) {
        let m = crate::rewrite::test_util::nth_match(q, 0);
        let mut n = 0;
        let pg = PatternGraph::new(&m, &mut || {
            n += 1;
            format!("__anon{n}")
        })
        .unwrap();
        let find = |v: &str| pg.vars.iter().position(|x| x.name == v).unwrap();
        let mut est = Estimates {
            rows: vec![1.0; pg.vars.len()],
            tables: vec![1.0; pg.vars.len()],
            sel: vec![1.0; pg.rels.len()],
        };
        for (v, r) in rows {
            est.rows[find(v)] = *r;
            est.tables[find(v)] = *r;
        }
        for (k, (_, r, _)) in pg.rels.iter().enumerate() {
            let t = &r.types[0].name;
            est.sel[k] = sel.iter().find(|(x, _)| x == t).unwrap().1;
        }
        let members: Vec<usize> = (0..pg.vars.len()).collect();
        let w = pg.cheapest_order(find(root), &members, &est);
        let patterns = pg.walk(std::slice::from_ref(&w), &est);
        let clause = ast::Match {
            patterns,
            ..m.clone()
        };
        (text(&clause), w)
    }

    #[test]
    fn a_cycle_is_walked_in_the_order_of_fewest_rows() {
        // Three persons of one country who know each other (LSQB's q3), with the sizes of a
        // 10,000-person graph: not every triple of cities of a country first (as depth-first
        // from the country), nor every pair of a person and a city of the country (to
        // intersect the city's persons with the person's friends, lists of 50 and 24 per
        // row), but a person, a friend (a city of its own, checked to be in the country),
        // then the third.
        let q = "MATCH (n:Country)<-[:IS_PART_OF]-(c1:City)<-[:IS_LOCATED_IN]-(a:Person), \
                 (n)<-[:IS_PART_OF]-(c2:City)<-[:IS_LOCATED_IN]-(b:Person), \
                 (n)<-[:IS_PART_OF]-(c3:City)<-[:IS_LOCATED_IN]-(c:Person), \
                 (a)-[:KNOWS]-(b)-[:KNOWS]-(c)-[:KNOWS]-(a) RETURN count(*)";
        let rows = [
            ("n", 30.0),
            ("c1", 200.0),
            ("c2", 200.0),
            ("c3", 200.0),
            ("a", 1e4),
            ("b", 1e4),
            ("c", 1e4),
        ];
        let sel = [
            ("IS_PART_OF", 1.0 / 30.0),
            ("IS_LOCATED_IN", 1.0 / 200.0),
            ("KNOWS", 0.00244),
        ];
        assert_eq!(
            walked(q, "n", &rows, &sel),
            "MATCH (n:Country)<-[:IS_PART_OF]-(c1:City), (c1)<-[:IS_LOCATED_IN]-(a:Person), \
             (a)-[:KNOWS]-(b:Person), (b)-[:IS_LOCATED_IN]->(c2:City), (c2)-[:IS_PART_OF]->(n), \
             (b)-[:KNOWS]-(c:Person), (c)-[:KNOWS]-(a), (c)-[:IS_LOCATED_IN]->(c3:City), \
             (c3)-[:IS_PART_OF]->(n)"
        );
        // EXPLAIN's estimates: the rows of the whole cycle (30 countries x 200^3 cities x
        // 1e4^3 persons, each relationship keeping its share of the pairs: about 16), and
        // the order's cost below the written order's (n, c1, a, c2, b, c3, c: each city's
        // persons before a friend is looked at): 2.3M against 3.9M as written.
        let (_, w) = planned(q, "n", &rows, &sel);
        let (rows, cost, written) = w.estimate.unwrap();
        assert!((16.0..16.3).contains(&rows), "{rows}");
        assert!(cost * 1.5 < written, "{cost} {written}");
        // A tree is walked depth-first whatever the sizes.
        let tree = "MATCH (a:Person)-[:KNOWS]->(b:Person), (a)-[:IS_LOCATED_IN]->(c:City) RETURN a";
        assert_eq!(
            walked(
                tree,
                "c",
                &[("a", 1e4), ("b", 1e4), ("c", 2.0)],
                &[("KNOWS", 1e-3), ("IS_LOCATED_IN", 0.5)]
            ),
            "MATCH (c:City)<-[:IS_LOCATED_IN]-(a:Person), (a)-[:KNOWS]->(b:Person)"
        );
        let (_, w) = planned(
            tree,
            "c",
            &[("a", 1e4), ("b", 1e4), ("c", 2.0)],
            &[("KNOWS", 1e-3), ("IS_LOCATED_IN", 0.5)],
        );
        assert!(w.estimate.is_none(), "a tree is not weighed");
    }

    #[test]
    fn estimates_are_shown_in_a_few_digits() {
        let e = OrderEstimate {
            order: vec!["a".into(), "b".into(), "c".into()],
            rows: 16.14,
            cost: 4.83e6,
            written: 2.1e13,
        };
        assert_eq!(
            e.to_string(),
            "order a, b, c: ~16 rows, cost ~4.8M (as written ~2.1e13)"
        );
        let unwalkable = OrderEstimate {
            written: f64::INFINITY,
            ..e
        };
        assert_eq!(
            unwalkable.to_string(),
            "order a, b, c: ~16 rows, cost ~4.8M"
        );
        let shown: Vec<String> = [0.4, 999.0, 1234.0, 999_999.0, 3.2e9].map(approx).to_vec();
        assert_eq!(shown, ["0", "999", "1.2k", "1.0M", "3.2G"]);
    }

    #[test]
    fn named_paths_are_left_as_written() {
        assert!(reordered("MATCH p = (a:Person)-[:KNOWS]->(b) RETURN p", None).is_none());
    }

    #[test]
    fn the_node_counted_per_is_preferred_over_a_bigger_table() {
        let (_, roots) = reordered(
            "MATCH (a:Person)-[:LIKES]->(m:Post) RETURN m, count(*)",
            Some("m"),
        )
        .unwrap();
        assert_eq!(roots.len(), 1);
        assert!(roots[0].starts_with("m "), "{roots:?}");
    }
}

#[cfg(test)]
mod tests {

    use crate::optimizer::test_util::explain_sample as explain;

    fn order(q: &str) -> String {
        let e = explain(q);
        e.lines().nth(1).unwrap_or_default().to_string()
    }

    #[test]
    fn starts_at_the_key_equality_and_walks_backwards() {
        insta::assert_snapshot!(
            order("MATCH (f:Forum)-[:HAS_MEMBER]->(p:Person) WHERE p.id = 4 RETURN f.title"),
            // (The planner moved the key equality into the property map first.)
            @"MATCH (p:Person {id: 4})<-[:HAS_MEMBER]-(f:Forum)  -- root: p (key equality)"
        );
    }

    #[test]
    fn scores_key_over_filter_over_table_size() {
        // A property filter beats a plain node; a key beats a property filter.
        insta::assert_snapshot!(
            order("MATCH (c:City)<-[:IS_LOCATED_IN]-(p:Person)-[:KNOWS]->(q:Person {firstName: 'Ann'}) RETURN c.name"),
            @"MATCH (q:Person {firstName: 'Ann'})<-[:KNOWS]-(p:Person), (p)-[:IS_LOCATED_IN]->(c:City)  -- root: q (property filter)"
        );
        insta::assert_snapshot!(
            order("MATCH (c:City)<-[:IS_LOCATED_IN]-(p:Person {firstName: 'Ann'})-[:KNOWS]->(q:Person {id: 2}) RETURN c.name"),
            @"MATCH (q:Person {id: 2})<-[:KNOWS]-(p:Person {firstName: 'Ann'}), (p)-[:IS_LOCATED_IN]->(c:City)  -- root: q (key equality)"
        );
        // No filters: the smaller table (2 cities vs 6 persons).
        insta::assert_snapshot!(
            order("MATCH (p:Person)-[:IS_LOCATED_IN]->(c:City) RETURN count(*)"),
            @"MATCH (c:City)<-[:IS_LOCATED_IN]-(p:Person)  -- root: c (smallest table (2 rows))"
        );
    }

    #[test]
    fn a_variable_length_hop_is_walked_from_the_key_at_its_far_end() {
        insta::assert_snapshot!(
            order("MATCH (a:Person)-[:KNOWS*1..3]->(b:Person {id: 2}) RETURN count(*)"),
            @"MATCH (b:Person {id: 2})<-[:KNOWS*1..3]-(a:Person)  -- root: b (key equality)"
        );
        insta::assert_snapshot!(
            order("MATCH (a:Person)-[:KNOWS*1..2]-(b:Person) WHERE b.id = 2 RETURN count(*)"),
            @"MATCH (b:Person {id: 2})-[:KNOWS*1..2]-(a:Person)  -- root: b (key equality)"
        );
    }

    #[test]
    fn a_bound_variable_is_the_root_and_named_paths_are_left_alone() {
        insta::assert_snapshot!(
            order("MATCH (t:Tag {id: 300}) WITH t MATCH (p:Person)-[:HAS_INTEREST]->(t) RETURN p.id"),
            @"MATCH (t:Tag {id: 300})  -- root: t (key equality)"
        );
        let e = explain(
            "MATCH (t:Tag {id: 300}) WITH t MATCH (p:Person)-[:HAS_INTEREST]->(t) RETURN p.id",
        );
        assert!(
            e.contains(
                "MATCH (t)<-[:HAS_INTEREST]-(p:Person)  -- root: t (bound by an earlier clause)"
            ),
            "{e}"
        );
    }
}
